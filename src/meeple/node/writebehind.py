"""``meeple serve``'s journal for the one-process node: its backplane's file may fail and
the games go on (issue 32.2; docs/durability.md, Faults).

The one-process node (:func:`meeple.node.node.serve_config`) keeps its room logs, leases,
names and tokens in one SQLite file (:class:`~meeple.cluster.local.LocalBackplane`),
written once per turn of the event loop. When that file stops taking writes for a reason
that may pass (a full disk, an I/O error: :class:`sqlite3.OperationalError`), the
:class:`WriteBehind` holds the turn's writes in memory, in order, and tells their writers
they are done, as ``meeple serve``'s journal tells a room its write is *deferred*: the
process's memory is the truth (one process per file), and the file catches up, in one
transaction and in order, once it takes writes again (tried after 0.05 s, doubling up to
2 s). A crash meanwhile loses what was held, as with the journal.

What is held: every log message (a game update: named in the log if a stop drops it) and
each bucket key's latest write (a lease renewed a thousand times while the disk is full is
one row). Past ``max_backlog`` held game updates the write-behind *overflows*: the
callbacks in ``on_overflow`` are told the rooms whose updates it holds (the node stops
them in their protocols' words and stores them when the file is back). Its health and
:meth:`WriteBehind.trouble` (the pages' banner) use the journal's words
(:class:`~meeple.server.store.journal.Health`), and so does a stop that waits for it
(:meth:`meeple.node.node.Node.wait_for_store`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from meeple.bus.subjects import Namespace
from meeple.server.config import ClusterConfig
from meeple.server.store.journal import Health, report_dropped, trouble_words

if TYPE_CHECKING:
    from meeple.cluster.local import LocalBackplane
    from meeple.server.clock import Clock, Timer

__all__ = ["WriteBehind"]

logger = logging.getLogger(__name__)

_TIMING = ClusterConfig()

Statement = tuple[str, tuple[object, ...]]

_MESSAGES = """
CREATE TABLE messages (
    stream TEXT NOT NULL, seq INTEGER NOT NULL, subject TEXT NOT NULL,
    headers TEXT NOT NULL, data BLOB NOT NULL, msg_id TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (stream, seq));
"""


class WriteBehind:
    """Holds ``plane``'s writes while its file fails; see the module doc. Made on a
    running event loop: it replaces ``plane.write``."""

    def __init__(
        self,
        plane: LocalBackplane,
        ns: Namespace,
        *,
        max_backlog: int,
        timing: ClusterConfig = _TIMING,
    ) -> None:
        self._transaction = plane.transaction
        self._clock: Clock = plane.clock
        self.ns = ns
        self.max_backlog = max_backlog
        self.health = Health.OK
        self.last_error = ""
        self.on_health: list[Callable[[Health], None]] = []
        self.on_overflow: list[Callable[[set[str]], None]] = []
        self._messages: list[Statement] = []  # the log's messages held, in order
        self._keys: dict[tuple[object, object], Statement] = {}  # each key's latest write
        self._counters: dict[str, int] = {}
        self._retry: Timer | None = None
        self._first_retry = timing.file_retry
        self._last_retry = timing.file_retry_max
        self._pause = self._first_retry
        self._drained: list[asyncio.Future[None]] = []
        self._stopping: float | None = None  # a stop waits this long (0: no bound)
        self._closed = False
        # The held messages as the file's table, for the stream's reads meanwhile.
        self._read_file = plane.read_file
        self._memory = sqlite3.connect(":memory:", check_same_thread=False)
        self._memory.executescript(_MESSAGES)
        plane.write = self.write
        plane.read = self.read

    # --- the backplane's side ----------------------------------------------------------

    def write(self, statements: list[Statement], counters: Mapping[str, int]) -> None:
        """One turn's writes: to the file if it takes them and nothing is held before
        them, else held (in order, behind what is held already). Once closed: to the
        file or the writer's error."""
        if self._closed:
            self._transaction(statements, counters)
            return
        if not self.held:
            try:
                self._transaction(statements, counters)
                return
            except sqlite3.OperationalError as e:
                self._failing(e)
        self._hold(statements, counters)

    def read(self, sql: str, args: tuple[object, ...]) -> list[tuple[int, str, bytes]]:
        """A query of the stream's messages (seq, headers, data, in order of seq): the
        file's, and those held (after them: they were written after)."""
        rows = self._read_file(sql, args)
        if not self._messages:
            return rows
        held = list(self._memory.execute(sql, args).fetchall())
        merged = sorted([*rows, *held], key=lambda row: int(row[0]))
        return merged[:1] if "LIMIT 1" in sql.upper() else merged

    @property
    def held(self) -> bool:
        return bool(self._messages or self._keys or self._counters)

    @property
    def backlog(self) -> int:
        """The game updates (log messages) held and not in the file yet."""
        return len(self._messages)

    def _hold(self, statements: list[Statement], counters: Mapping[str, int]) -> None:
        for sql, args in statements:
            if sql.lstrip().upper().startswith("INSERT INTO MESSAGES"):
                self._messages.append((sql, args))
                self._memory.execute(sql, args)
            else:
                # A bucket's write (a put or a drop of one key): its latest one counts.
                self._keys.pop((args[0], args[1]), None)
                self._keys[(args[0], args[1])] = (sql, args)
        self._counters.update(counters)
        self._schedule()
        if self.backlog > self.max_backlog and self.health is not Health.OK:
            # Told once as a change of health; the callbacks run for every turn past the
            # bound, so a game that began writing since is stopped too.
            self._set_health(Health.OVERFLOWING, self.last_error)
            uids = self._rooms()
            for callback in self.on_overflow:
                try:
                    callback(uids)
                except Exception:
                    logger.exception("journal: an overflow callback failed")

    def _failing(self, error: Exception) -> None:
        self.last_error = f"{type(error).__name__}: {error}"
        if self.health is Health.OK:
            logger.warning(
                "journal: the store is not taking writes (%s); games go on from memory and"
                " are written when it is back",
                self.last_error,
            )
            self._set_health(Health.RETRYING, self.last_error)

    def _schedule(self) -> None:
        if self._retry is None:
            self._retry = self._clock.call_later(self._pause, self._try_again)

    def _cancel(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def _try_again(self) -> None:
        self._retry = None
        if not self.held:
            return
        messages, keys = self._messages, list(self._keys.values())
        try:
            self._transaction([*messages, *keys], self._counters)
        except sqlite3.OperationalError as e:
            self.last_error = f"{type(e).__name__}: {e}"
            self._pause = min(2 * self._pause, self._last_retry)
            self._schedule()
            return
        count = len(messages)
        self._messages, self._keys, self._counters = [], {}, {}
        self._memory.execute("DELETE FROM messages")
        self._pause = self._first_retry
        logger.warning(
            "journal: the store takes writes again (%d held game updates written)", count
        )
        self._set_health(Health.OK, "")
        drained, self._drained = self._drained, []
        for future in drained:
            if not future.done():
                future.set_result(None)

    def _set_health(self, health: Health, error: str) -> None:
        if health is self.health:
            return
        self.health = health
        self.last_error = error
        for callback in self.on_health:
            try:
                callback(health)
            except Exception:
                logger.exception("journal: a health callback failed")

    # --- the node's side -----------------------------------------------------------------

    def _rooms(self) -> set[str]:
        """The rooms whose game updates are held."""
        prefix = self.ns.log("x")[:-1]
        return {
            str(args[2]).removeprefix(prefix)
            for _, args in self._messages
            if str(args[2]).startswith(prefix)
        }

    def trouble(self) -> str | None:
        """What every page's banner says while writes are held; None: all is written
        (the journal's words)."""
        return trouble_words(
            self.health,
            stopping=self._stopping,
            waiting=bool(self.held),
            backlog=self.backlog,
            kept=self.backlog,
        )

    def stopping(self, bound: float) -> None:
        """The node stops and waits up to ``bound`` seconds (0: no bound) for the file."""
        self._stopping = bound

    async def drain(self) -> None:
        """Return once nothing is held."""
        if not self.held:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._drained.append(future)
        await future

    def unwritten(self) -> list[str]:
        """The held game updates, in order, as the journal names its writes
        (``open g-1``, ``append g-1#4``, ``append g-1#5-7``, ``finish g-1``)."""
        prefix = self.ns.log("x")[:-1]
        names = []
        for _, args in self._messages:
            uid = str(args[2]).removeprefix(prefix)
            headers = json.loads(str(args[3]))
            kind, seq = headers.get("Meeple-Kind"), headers.get("Meeple-Seq", "?")
            if kind == "genesis":
                names.append(f"open {uid}")
            elif kind == "entry":
                names.append(f"append {uid}#{seq}")
            elif kind == "entries":
                names.append(f"append {uid}#{headers.get('Meeple-First', '?')}-{seq}")
            elif kind == "end":
                names.append(f"finish {uid}")
            else:
                names.append(f"{kind} {uid}")
        return names

    def close(self) -> list[str]:
        """Stop retrying; the game updates still held, named in the log, and returned."""
        self._closed = True
        self._cancel()
        if self.held:
            self._try_again()  # one last try
            self._cancel()
        dropped = self.unwritten()
        if dropped:
            report_dropped(dropped, self.last_error)
        self._set_health(Health.CLOSED, "")
        self._messages, self._keys, self._counters = [], {}, {}
        self._memory.close()
        return dropped

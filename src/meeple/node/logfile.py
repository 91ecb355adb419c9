"""The room logs of ``meeple serve``'s database, whichever runtime wrote them (issue 32.2).

``meeple serve --runtime server`` keeps a room's log in the store (table ``room_logs``);
the one-process node (``--runtime node``, the default) keeps it in its local backplane's
file beside the database (:func:`meeple.node.node.backplane_file`), as JetStream keeps it
on a cluster (:mod:`meeple.cluster.log`). :func:`room_logs` reads both, from another
process or thread, while the server runs or after it died: the durability tests, an
operator's look at a game that is still open.

Reading the backplane's file does not open it as a backplane (that would start its TTLs,
and a lapse would be a write behind the running node's back): it reads the file's log
stream through a read-only SQLite connection and rebuilds each log with the same code as
the node (:meth:`meeple.cluster.log.JetStreamLog.action_log`). Writing (``append_log``)
takes the file's claim first (:class:`~meeple.server.store.database.DatabaseClaim`): only
while no server runs on it (:class:`~meeple.server.store.database.DatabaseInUse`
otherwise), then appends as the node would, fenced.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import Stored
from meeple.cluster.log import JetStreamLog, Streams
from meeple.server.store.database import (
    ActionLog,
    DatabaseClaim,
    LogConflict,
    Store,
    open_store,
)

__all__ = ["RoomLogs", "import_store_logs", "room_logs", "upgraded_genesis"]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)


class _FileStream:
    """The log stream of a local backplane's file, read only (``LogStream``'s reads)."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self._db = db
        self.name = name

    def _rows(self, sql: str, args: tuple[object, ...]) -> list[tuple[int, str, bytes]]:
        return list(self._db.execute(sql, args).fetchall())

    async def append(
        self, subject: str, data: bytes, headers: Mapping[str, str], *, msg_id: str, expect: int
    ) -> int:
        raise PermissionError("a read-only view of the log stream")

    async def last(self, subject: str) -> Stored | None:
        rows = self._rows(
            "SELECT seq, headers, data FROM messages WHERE stream = ? AND subject = ?"
            " ORDER BY seq DESC LIMIT 1",
            (self.name, subject),
        )
        return None if not rows else _stored(subject, rows[0])

    async def next(self, subject: str, seq: int) -> Stored | None:
        rows = self._rows(
            "SELECT seq, headers, data FROM messages WHERE stream = ? AND subject = ?"
            " AND seq >= ? ORDER BY seq LIMIT 1",
            (self.name, subject, seq),
        )
        return None if not rows else _stored(subject, rows[0])

    async def read(self, subject: str) -> list[Stored]:
        rows = self._rows(
            "SELECT seq, headers, data FROM messages WHERE stream = ? AND subject = ? ORDER BY seq",
            (self.name, subject),
        )
        return [_stored(subject, row) for row in rows]

    async def subjects(self) -> list[str]:
        found = self._db.execute(
            "SELECT DISTINCT subject FROM messages WHERE stream = ?", (self.name,)
        ).fetchall()
        return [str(subject) for (subject,) in found]


def _stored(subject: str, row: tuple[int, str, bytes]) -> Stored:
    seq, headers, data = row
    return Stored(int(seq), subject, json.loads(headers), bytes(data))


class _FilePlane:
    """Just enough of a backplane for :class:`JetStreamLog`'s reads: the stream."""

    def __init__(self, stream: _FileStream) -> None:
        self._stream = stream

    def stream(self, name: str) -> _FileStream:
        return self._stream


# What the node resumes (meeple.node.rooms.ROOM_GAMES less the CMPN402 referee's logs,
# which its own listener hosted in the earlier runtime: they stay in the store, named).
_IMPORTED_GAMES = frozenset({"scrabble", "santorini", "spectrangle"})


def upgraded_genesis(genesis: Mapping[str, Any], edge: str) -> dict[str, Any]:
    """An earlier runtime's genesis as the node's: each seat that is no server bot gets
    a route on an earlier start of edge ``edge`` (``<edge>-upgrade_<index>``), so the
    takeover judges it a seat whose connection died with the last process (held for
    its rejoin token, or gone by its protocol's rule), as a restart of either runtime
    does. The same genesis gives the same result (the import's retries rely on it)."""
    infos = genesis.get("seats")
    if not isinstance(infos, list) or not all(isinstance(i, Mapping) for i in infos):
        raise ValueError("the genesis has no seats")
    seats = [
        dict(info)
        if info.get("bot") or info.get("route")
        else {**info, "route": f"{edge}-upgrade_{index}"}
        for index, info in enumerate(infos)
    ]
    return {**genesis, "seats": seats}


async def import_store_logs(store: Store, plane: Streams, ns: Namespace, *, edge: str) -> list[str]:
    """The upgrade from ``meeple serve --runtime server`` (docs/server.md, "Upgrading"):
    copy each game it left open (the store's ``room_logs``) into the node's log stream on
    ``plane``, then drop it from the store, one room at a time; the uids copied. The
    node's takeover then resumes them as its own.

    Crash-safe and idempotent: a room's copy is written before its store copy goes, each
    write durable before the next (``plane`` is the backplane file itself, no
    write-behind), and each write is the log's own fenced, retried append, so a start
    after a crash halfway finds what was copied and writes only the rest; a room already
    dropped from the store is not seen again. A log that does not fit (another log under
    its uid) stays in the store, named."""
    moved: list[str] = []
    for uid in await asyncio.to_thread(store.open_logs):
        old = await asyncio.to_thread(store.action_log, uid)
        if old is None or old.finished:
            continue
        table = old.genesis.get("table")
        if old.game not in _IMPORTED_GAMES or (isinstance(table, Mapping) and "referee" in table):
            continue
        log = JetStreamLog(plane, ns, store, wall_clock=functools.partial(float, old.created_at))
        try:
            await log.open_log(uid, old.game, upgraded_genesis(old.genesis, edge))
            copied = await log.action_log(uid)
            done = 0 if copied is None else len(copied.entries)
            for entry in old.entries[done:]:
                await log.append_log(uid, entry.seq, entry.entry, at=entry.at)
        except (LogConflict, ValueError) as e:
            # Another log under its uid, or no room's genesis: for a look, or the
            # earlier runtime (named at the start: meeple.node.node).
            logger.error("room %s: not taken from the store (%s); left there", uid, e)
            continue
        await asyncio.to_thread(store.hand_over_log, uid)
        moved.append(uid)
    return moved


class RoomLogs:
    """The room logs of ``meeple serve`` on ``database`` (a URL or a SQLite path): those
    of the store and those of the node's backplane file ``plane`` (see the module doc).
    Blocking; :meth:`close` when done."""

    def __init__(self, database: str | Path, plane: str | Path, ns: Namespace) -> None:
        self.store: Store = open_store(str(database))
        self.plane = Path(plane)
        self.ns = ns

    def _node_log(self, call: Callable[[JetStreamLog], Coroutine[Any, Any, _T]], empty: _T) -> _T:
        """``call`` on the backplane file's logs, read only (``empty``: no file)."""
        if not self.plane.exists():
            return empty
        uri = f"{self.plane.resolve().as_uri()}?mode=ro"

        async def read() -> _T:
            # Opened on the thread that reads it (the store's lookups run on others).
            db = sqlite3.connect(uri, uri=True)
            try:
                plane = _FilePlane(_FileStream(db, self.ns.log_stream))
                return await call(JetStreamLog(plane, self.ns, self.store))
            finally:
                db.close()

        return _run(read())

    def open_logs(self, game: str | None = None) -> list[str]:
        """The uids of the rooms whose logs are open, the store's then the node's."""
        none: list[str] = []
        return self.store.open_logs(game) + self._node_log(lambda log: log.open_logs(game), none)

    def action_log(self, uid: str) -> ActionLog | None:
        """Room ``uid``'s whole log (genesis, entries, how it ended), wherever it is."""
        found = self.store.action_log(uid)
        if found is not None:
            return found
        return self._node_log(lambda log: log.action_log(uid), None)

    def append_log(self, uid: str, seq: int, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` as number ``seq`` of room ``uid``'s open log, as its room
        would (fenced: LogConflict if ``seq`` does not follow). Only while no server runs
        on the database (DatabaseInUse otherwise)."""
        if self.store.action_log(uid) is not None:
            self.store.append_log(uid, seq, entry)
            return
        claim = DatabaseClaim(self.plane)
        try:
            _run(self._append(uid, seq, entry))
        finally:
            claim.close()

    async def _append(self, uid: str, seq: int, entry: Mapping[str, Any]) -> None:
        from meeple.cluster.local import LocalBackplane

        plane = await LocalBackplane.open(self.plane, self.ns)
        try:
            await JetStreamLog(plane, self.ns, self.store).append_log(uid, seq, entry)
        finally:
            await plane.close()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> RoomLogs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run(coro: Coroutine[Any, Any, _T]) -> _T:
    """``coro`` on an event loop of its own, in a thread (callers may be on a loop)."""
    result: list[_T] = []
    error: list[BaseException] = []

    def go() -> None:
        try:
            result.append(asyncio.run(coro))
        except BaseException as e:  # handed to the caller
            error.append(e)

    thread = threading.Thread(target=go, name="meeple-room-logs")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


def room_logs(database: str | Path, *, namespace: str = "meeple") -> RoomLogs:
    """The room logs of ``meeple serve --database database`` (either runtime's)."""
    from meeple.node.node import backplane_file

    return RoomLogs(database, backplane_file(str(database)), Namespace(namespace))

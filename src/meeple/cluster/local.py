"""The in-process backplane: a node's bus, buckets and log stream in one process, kept in
one SQLite file (issue 32.2; the seam is :mod:`meeple.cluster.backplane`).

- The bus is :class:`~meeple.bus.local.LocalBus`.
- Each bucket's keys are a dict in memory, written through to the table ``kv`` (one row
  per key: its latest entry, history 1, as the cluster's buckets). Revisions come from
  one counter per bucket (table ``counters``) that only grows, across restarts too: a
  lease's epoch stays greater than every earlier one's, which is what fences an old
  owner out of a room's log.
- The log stream is the table ``messages`` (one row per message, never removed), with
  the last message of each subject in memory (the fence) and the message ids of the
  duplicate window (``ClusterConfig.duplicate_window``).
- TTLs run on the injectable clock (:mod:`meeple.server.clock`): a key whose TTL passes
  is removed, or, in the leases bucket, replaced by a lapse marker that a watcher hears
  and that is itself removed ``ClusterConfig.lapse_marker`` seconds later, as NATS does
  (:func:`meeple.cluster.jetstream.ensure_namespace`). The file keeps each deadline as a
  wall-clock time, so after a restart a lease held by the process that died lapses when
  its TTL would have, and the rooms role takes its room over.

The file is SQLite in WAL mode with ``synchronous=NORMAL``, as the store
(:mod:`meeple.server.store.database`): a write is durable once its call returns, against
a crash of the process (not of the machine's power: WAL pages are synced at checkpoints,
not at each commit). **Group commit**: the writes made in one turn of the event loop (a
turn's log appends, lease renewals and token writes of every room) are staged and
committed together, in one transaction, at the end of that turn (a callback queued by the
first of them). Nobody is told of a staged write before its transaction commits: the
writer's call returns then, a watcher hears of it then, and :meth:`_Bucket.get`,
:meth:`_Stream.last`, :meth:`_Stream.next` and :meth:`_Stream.read` show only committed
state. A staged write does count for the compare-and-set of the next one (two writers
with the same expected revision: the second is refused), and a writer refused by a
staged write, or retrying a staged message id, is answered once that write has committed
(a crash meanwhile loses both, and neither was told). One process opens a file at a time.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path

from meeple.bus.base import Bus, BusClosed
from meeple.bus.local import LocalBus
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import MSG_ID, Fenced, KvEntry, Op, Stored
from meeple.server.clock import Clock, SystemClock, Timer
from meeple.server.config import ClusterConfig

__all__ = ["LocalBackplane"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    bucket TEXT NOT NULL, key TEXT NOT NULL, revision INTEGER NOT NULL, op TEXT NOT NULL,
    value BLOB NOT NULL, deadline REAL, PRIMARY KEY (bucket, key));
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    stream TEXT NOT NULL, seq INTEGER NOT NULL, subject TEXT NOT NULL,
    headers TEXT NOT NULL, data BLOB NOT NULL, msg_id TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (stream, seq));
CREATE INDEX IF NOT EXISTS messages_subject ON messages (stream, subject, seq);
"""
# A value, a header or a message body larger than this is refused (a bucket's value and
# a log entry are small; NATS's default max_payload is 1 MiB).
MAX_PAYLOAD = 1 << 20

_DEFAULT = ClusterConfig()
# Turns of the event loop a passed TTL waits before the key lapses (_Bucket._due): a
# sleeping task woken by a timer runs two turns later (its future's callback, then its
# step).
_LAPSE_TURNS = 2


@dataclass(slots=True)
class _Key:
    entry: KvEntry
    deadline: float | None  # on the clock
    wall: float | None  # the same deadline as a wall-clock time (the file's)
    timer: Timer | None


def _checked(what: str, size: int) -> None:
    if size > MAX_PAYLOAD:
        raise ValueError(f"{what}: {size} bytes, more than {MAX_PAYLOAD}")


@dataclass(eq=False, slots=True)
class _Staged:
    """A key's staged write (``entry`` None: the key is to be removed), compared by
    identity: the write that staged it is the one that unstages it."""

    entry: KvEntry | None


_PUT_KEY = (
    "INSERT OR REPLACE INTO kv (bucket, key, revision, op, value, deadline)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_DROP_KEY = "DELETE FROM kv WHERE bucket = ? AND key = ?"
# A message's headers as stored (one encoder: ``json.dumps`` with options builds one a call).
_HEADERS = json.JSONEncoder(separators=(",", ":")).encode
_PUT_COUNTER = "INSERT OR REPLACE INTO counters (name, last) VALUES (?, ?)"
_PUT_MESSAGE = (
    "INSERT INTO messages (stream, seq, subject, headers, data, msg_id, at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class _Bucket:
    """One bucket of :class:`LocalBackplane` (:class:`~meeple.cluster.backplane.KeyValue`)."""

    def __init__(self, plane: LocalBackplane, name: str, marker: float | None) -> None:
        self._plane = plane
        self.name = name
        self._marker = marker  # how long a lapse marker stays (None: no marker)
        self.keys: dict[str, _Key] = {}  # committed: what anyone may be told
        self.revision = 0  # the committed counter
        # Staged and not committed yet (module doc, group commit): each key's latest
        # staged write, and the counter with them.
        self.staged: dict[str, _Staged] = {}
        self.top = 0
        self._watchers: list[tuple[str, asyncio.Queue[KvEntry]]] = []

    # --- the KeyValue protocol ---------------------------------------------------------------

    async def get(self, key: str) -> KvEntry | None:
        self._plane.check_open()
        found = self.keys.get(key)
        return None if found is None else found.entry

    async def put(self, key: str, value: bytes, *, expect: int, ttl: int | None = None) -> int:
        _checked(f"{self.name} {key}", len(value))
        if ttl is not None and (int(ttl) != ttl or ttl < 1):
            raise ValueError(f"a TTL is whole seconds, at least 1: {ttl!r}")
        return await self._write(key, bytes(value), "put", expect=expect, ttl=ttl)

    async def delete(self, key: str, *, expect: int) -> int:
        return await self._write(key, b"", "del", expect=expect, ttl=None)

    async def watch(self, prefix: str) -> AsyncIterator[KvEntry]:
        self._plane.check_open()
        queue: asyncio.Queue[KvEntry] = asyncio.Queue()
        watcher = (prefix, queue)
        # Registered and read in one step (no await between): no change is missed nor
        # told twice.
        self._watchers.append(watcher)
        current = sorted(
            (k.entry for name, k in self.keys.items() if name.startswith(prefix)),
            key=lambda e: e.revision,
        )
        try:
            for entry in current:
                yield entry
            while True:
                yield await queue.get()
        finally:
            self._watchers.remove(watcher)

    # --- inside ------------------------------------------------------------------------------

    def _latest(self, key: str) -> int:
        """The revision a write of ``key`` must expect now: its staged write's, else its
        committed entry's (0: none)."""
        staged = self.staged.get(key)
        if staged is not None:
            return 0 if staged.entry is None else staged.entry.revision
        found = self.keys.get(key)
        return 0 if found is None else found.entry.revision

    async def _write(self, key: str, value: bytes, op: Op, *, expect: int, ttl: int | None) -> int:
        plane = self._plane
        while True:
            plane.check_open()
            have = self._latest(key)
            if have == expect:
                break
            if key not in self.staged:
                raise Fenced(f"{self.name} {key}: at revision {have}, not {expect}")
            # Refused by a staged write: told once that write is durable (or, if its
            # transaction failed, judged again against what is).
            await plane.settled()
        self.top += 1
        entry = KvEntry(key, value, self.top, op)
        wall = deadline = None
        if ttl is not None:
            wall = plane.wall() + ttl
            deadline = plane.clock.now() + ttl
        await plane.committed(self._stage(entry, deadline, wall))  # durable before it is told
        return entry.revision

    def _stage(self, entry: KvEntry, deadline: float | None, wall: float | None) -> _Batch:
        staged = self.staged[entry.key] = _Staged(entry)
        row = (self.name, entry.key, entry.revision, entry.op, entry.value, wall)

        def apply() -> None:
            if self.staged.get(entry.key) is staged:
                del self.staged[entry.key]
            self.revision = max(self.revision, entry.revision)
            found = self.keys.get(entry.key)
            if found is not None and found.timer is not None:
                found.timer.cancel()
            timer = None
            if deadline is not None:
                timer = self._timer(entry.key, entry.revision, deadline - self._plane.clock.now())
            self.keys[entry.key] = _Key(entry, deadline, wall, timer)
            self._tell(entry)

        return self._plane.stage(
            [(_PUT_KEY, row)], apply, counter=(f"kv:{self.name}", entry.revision)
        )

    def unstage(self) -> None:
        """A batch's transaction failed: what was staged is forgotten."""
        self.staged.clear()
        self.top = self.revision

    def _timer(self, key: str, revision: int, after: float) -> Timer:
        return self._plane.clock.call_later(max(0.0, after), lambda: self._due(key, revision))

    def _due(self, key: str, revision: int, turns: int = _LAPSE_TURNS) -> None:
        """The TTL passed: the lapse is applied once the callbacks already due have run.
        On a cluster the leases' keeper of time is another process: a node stalled past
        a TTL loses its leases, rightly (it may be gone; another node takes its rooms).
        Here the holder and the keeper of time stall together (a loaded machine), so a
        stall says nothing of the holder: its renewal, due before the TTL and woken in
        the same turn of the loop as this timer but queued behind it, must win. A holder
        that is gone (a crashed process, a stopped keeper) renews nothing: it lapses."""
        if turns <= 0:
            self._lapse(key, revision)
            return
        asyncio.get_running_loop().call_soon(self._due, key, revision, turns - 1)

    def _lapse(self, key: str, revision: int) -> None:
        """The TTL of ``key``'s entry at ``revision`` passed: a marker where the bucket
        leaves one (for a value), else the key is gone, as NATS does. Staged like a
        write; a write of the key already staged decides (a renewal that came in time):
        the lapse is judged again once it has committed or failed."""
        plane = self._plane
        if plane.closed:
            return
        found = self.keys.get(key)
        if found is None or found.entry.revision != revision:
            return  # written again since
        if key in self.staged:
            plane.after(lambda: self._lapse(key, revision))
            return
        if self._marker is None or found.entry.op != "put":
            staged = self.staged[key] = _Staged(None)

            def drop() -> None:
                if self.staged.get(key) is staged:
                    del self.staged[key]
                self.keys.pop(key, None)

            plane.stage([(_DROP_KEY, (self.name, key))], drop)
            return
        self.top += 1
        entry = KvEntry(key, b"", self.top, "lapsed")
        self._stage(entry, plane.clock.now() + self._marker, plane.wall() + self._marker)

    def _tell(self, entry: KvEntry) -> None:
        for prefix, queue in self._watchers:
            if entry.key.startswith(prefix):
                queue.put_nowait(entry)

    def restore(self, entry: KvEntry, wall: float | None) -> None:
        """A key as the file has it, its TTL running on from what is left of it."""
        deadline = timer = None
        if wall is not None:
            left = wall - self._plane.wall()
            deadline = self._plane.clock.now() + left
            timer = self._timer(entry.key, entry.revision, left)
        self.keys[entry.key] = _Key(entry, deadline, wall, timer)

    def stop(self) -> None:
        for found in self.keys.values():
            if found.timer is not None:
                found.timer.cancel()


class _Stream:
    """The log stream of :class:`LocalBackplane`
    (:class:`~meeple.cluster.backplane.LogStream`)."""

    def __init__(self, plane: LocalBackplane, name: str, window: float) -> None:
        self._plane = plane
        self.name = name
        self._window = window
        self.seq = 0  # the committed last sequence
        self.tails: dict[str, Stored] = {}  # each subject's last committed message
        # Message id -> (stream sequence, when on the clock), oldest first.
        self.ids: OrderedDict[str, tuple[int, float]] = OrderedDict()
        # Staged and not committed yet (module doc, group commit).
        self.top = 0
        self.staged_tails: dict[str, Stored] = {}
        self.staged_ids: dict[str, int] = {}

    async def append(
        self, subject: str, data: bytes, headers: Mapping[str, str], *, msg_id: str, expect: int
    ) -> int:
        plane = self._plane
        plane.check_open()
        _checked(subject, len(data) + sum(len(k) + len(v) for k, v in headers.items()))
        while True:
            plane.check_open()
            now = plane.clock.now()
            while self.ids:
                oldest = next(iter(self.ids.values()))
                if oldest[1] > now - self._window:
                    break
                self.ids.popitem(last=False)
            # The fence first, then the duplicate window: JetStream's order.
            last = self.staged_tails.get(subject) or self.tails.get(subject)
            have = 0 if last is None else last.seq
            if have != expect:
                if subject not in self.staged_tails:
                    raise Fenced(f"{subject}: the last message is {have}, not {expect}")
            else:
                seen = self.ids.get(msg_id)
                if seen is not None:
                    return seen[0]  # a retry within the window: JetStream's duplicate
                if msg_id not in self.staged_ids:
                    break
            # Refused by, or a retry of, a staged append: answered once it is durable.
            await plane.settled()
        self.top += 1
        stored = Stored(self.top, subject, {**headers, MSG_ID: msg_id}, bytes(data))
        self.staged_tails[subject] = stored
        self.staged_ids[msg_id] = stored.seq
        row = (
            self.name,
            stored.seq,
            subject,
            _HEADERS(stored.headers),
            stored.data,
            msg_id,
            plane.wall(),
        )

        def apply() -> None:
            if self.staged_tails.get(subject) is stored:
                del self.staged_tails[subject]
            if self.staged_ids.get(msg_id) == stored.seq:
                del self.staged_ids[msg_id]
            self.seq = max(self.seq, stored.seq)
            self.tails[subject] = stored
            self.ids[msg_id] = (stored.seq, now)

        await plane.committed(plane.stage([(_PUT_MESSAGE, row)], apply))  # durable, then told
        return stored.seq

    def unstage(self) -> None:
        """A batch's transaction failed: what was staged is forgotten."""
        self.staged_tails.clear()
        self.staged_ids.clear()
        self.top = self.seq

    async def last(self, subject: str) -> Stored | None:
        self._plane.check_open()
        return self.tails.get(subject)

    async def next(self, subject: str, seq: int) -> Stored | None:
        rows = self._plane.messages(
            "SELECT seq, headers, data FROM messages WHERE stream = ? AND subject = ?"
            " AND seq >= ? ORDER BY seq LIMIT 1",
            (self.name, subject, seq),
        )
        return None if not rows else _stored(subject, rows[0])

    async def read(self, subject: str) -> list[Stored]:
        rows = self._plane.messages(
            "SELECT seq, headers, data FROM messages WHERE stream = ? AND subject = ? ORDER BY seq",
            (self.name, subject),
        )
        return [_stored(subject, row) for row in rows]

    async def subjects(self) -> list[str]:
        self._plane.check_open()
        return list(self.tails)


def _stored(subject: str, row: tuple[int, str, bytes]) -> Stored:
    seq, headers, data = row
    return Stored(int(seq), subject, json.loads(headers), bytes(data))


@dataclass(eq=False)
class _Batch:
    """The writes staged in one turn of the event loop, committed together."""

    statements: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)  # each bucket's last revision
    applies: list[Callable[[], None]] = field(default_factory=list)  # once committed
    done: bool = False
    error: Exception | None = None  # why its transaction failed
    after: list[Callable[[], None]] = field(default_factory=list)  # committed or failed


class LocalBackplane:
    """The in-process :class:`~meeple.cluster.backplane.Backplane`; see the module doc.
    Make it with :meth:`open` (on the event loop: TTLs start running), end it with
    :meth:`close`."""

    def __init__(
        self,
        path: str | Path,
        ns: Namespace,
        *,
        clock: Clock,
        wall: Callable[[], float] = time.time,
        timing: ClusterConfig = _DEFAULT,
    ) -> None:
        """Prefer :meth:`open`. ``path``: the SQLite file (":memory:" keeps nothing);
        ``clock``: the TTLs' and the duplicate window's; ``wall``: the deadlines the file
        keeps; ``timing``: the lapse markers' lifetime and the duplicate window."""
        self.path = str(path)
        self.ns = ns
        self.clock = clock
        self.wall = wall
        self.timing = timing
        self.closed = False
        self._bus = LocalBus()
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._buckets: dict[str, _Bucket] = {}
        self._streams: dict[str, _Stream] = {}
        self._batch: _Batch | None = None
        self.commits = 0  # transactions committed (group commit: one per turn of writes)
        # How a turn's writes reach the file: :meth:`transaction`, unless a write-behind
        # holds them while the file fails (meeple serve: meeple.node.writebehind).
        self.write: Callable[[list[tuple[str, tuple[object, ...]]], Mapping[str, int]], None] = (
            self.transaction
        )
        self.read: Callable[[str, tuple[object, ...]], list[tuple[int, str, bytes]]] = (
            self.read_file
        )  # and the messages it holds
        for name in ns.buckets:
            self._bucket(name)
        self._stream(ns.log_stream)
        self._load()

    @classmethod
    async def open(
        cls,
        path: str | Path,
        ns: Namespace,
        *,
        clock: Clock | None = None,
        wall: Callable[[], float] = time.time,
        timing: ClusterConfig = _DEFAULT,
    ) -> LocalBackplane:
        """The backplane kept in ``path`` (made if new), its buckets and stream as a
        restart finds them; ``clock`` the event loop's unless told."""
        return cls(path, ns, clock=clock or SystemClock(), wall=wall, timing=timing)

    # --- the Backplane protocol --------------------------------------------------------------

    @property
    def bus(self) -> Bus:
        return self._bus

    @property
    def connected(self) -> bool:
        return not self.closed

    def bucket(self, name: str) -> _Bucket:
        return self._bucket(name)

    def stream(self, name: str) -> _Stream:
        return self._stream(name)

    async def close(self) -> None:
        if self.closed:
            return
        self._commit()  # what is staged is kept: its writers are waiting to be told
        self.closed = True
        for bucket in self._buckets.values():
            bucket.stop()
        await self._bus.close()
        self._db.close()

    # --- the file ----------------------------------------------------------------------------

    def check_open(self) -> None:
        if self.closed:
            raise BusClosed("the backplane is closed")

    def _bucket(self, name: str) -> _Bucket:
        found = self._buckets.get(name)
        if found is None:
            # As ensure_namespace: only the leases bucket leaves a marker at a lapse.
            marker = self.timing.lapse_marker if name == self.ns.leases_bucket else None
            found = self._buckets[name] = _Bucket(self, name, marker)
        return found

    def _stream(self, name: str) -> _Stream:
        found = self._streams.get(name)
        if found is None:
            found = self._streams[name] = _Stream(self, name, self.timing.duplicate_window)
        return found

    def _load(self) -> None:
        db = self._db
        for name, last in db.execute("SELECT name, last FROM counters"):
            kind, _, which = str(name).partition(":")
            if kind == "kv":
                self._bucket(which).revision = int(last)
        rows = db.execute("SELECT bucket, key, revision, op, value, deadline FROM kv")
        for bucket, key, revision, op, value, deadline in rows.fetchall():
            entry = KvEntry(str(key), bytes(value), int(revision), op)
            self._bucket(str(bucket)).restore(entry, deadline)
        for (stream,) in db.execute("SELECT DISTINCT stream FROM messages").fetchall():
            s = self._stream(str(stream))
            s.seq = int(
                db.execute("SELECT max(seq) FROM messages WHERE stream = ?", (stream,)).fetchone()[
                    0
                ]
            )
            lasts = db.execute(
                "SELECT m.seq, m.subject, m.headers, m.data FROM messages m JOIN"
                " (SELECT subject, max(seq) AS seq FROM messages WHERE stream = ?"
                " GROUP BY subject) t ON m.subject = t.subject AND m.seq = t.seq"
                " WHERE m.stream = ?",
                (stream, stream),
            )
            for seq, subject, headers, data in lasts.fetchall():
                s.tails[str(subject)] = _stored(str(subject), (seq, headers, data))
            # The duplicate window goes on across a restart (its ages by the wall clock).
            since = self.wall() - s._window
            recent = db.execute(
                "SELECT msg_id, seq, at FROM messages WHERE stream = ? AND at > ? ORDER BY seq",
                (stream, since),
            )
            now, wall = self.clock.now(), self.wall()
            for msg_id, seq, at in recent.fetchall():
                s.ids[str(msg_id)] = (int(seq), now - (wall - float(at)))
        for bucket in self._buckets.values():
            bucket.top = bucket.revision
        for s in self._streams.values():
            s.top = s.seq

    def stage(
        self,
        statements: list[tuple[str, tuple[object, ...]]],
        apply: Callable[[], None],
        *,
        counter: tuple[str, int] | None = None,
    ) -> _Batch:
        """Stage a write (module doc, group commit): ``statements`` run in this turn's
        transaction, ``counter`` (a counter's name and value) is written with it, and
        ``apply`` makes the write visible once it has committed; the batch it is in
        (its writer awaits :meth:`committed`)."""
        self.check_open()
        batch = self._batch
        if batch is None:
            batch = self._batch = _Batch()
            asyncio.get_running_loop().call_soon(self._commit)
        batch.statements.extend(statements)
        if counter is not None:
            batch.counters[counter[0]] = counter[1]
        batch.applies.append(apply)
        return batch

    async def committed(self, batch: _Batch) -> None:
        """Return once ``batch`` has committed; its error if it failed. The commit was
        queued on the loop when the batch opened, before the caller's step that staged
        into it: one turn of the loop later it is done (a writer waits one turn, not
        two: no future's wake-up between)."""
        await asyncio.sleep(0)
        if not batch.done:  # not reached with a FIFO loop; safe all the same
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            batch.after.append(lambda: None if done.done() else done.set_result(None))
            await done
        if batch.error is not None:
            raise batch.error

    async def settled(self) -> None:
        """Return once the writes staged now have committed (or failed)."""
        batch = self._batch
        if batch is not None:
            await asyncio.sleep(0)  # its commit is queued before this step (committed)
            if not batch.done:
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                batch.after.append(lambda: None if done.done() else done.set_result(None))
                await done

    def after(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the writes staged now have committed or failed."""
        if self._batch is None:
            asyncio.get_running_loop().call_soon(callback)
        else:
            self._batch.after.append(callback)

    def _commit(self) -> None:
        """Commit the staged writes in one transaction, then tell of them (they become
        visible, watchers hear; their writers go on at their next step). If it fails,
        none of them happened: each writer gets the error, the staged state is
        forgotten."""
        batch, self._batch = self._batch, None
        if batch is None or self.closed:
            return
        try:
            self.write(batch.statements, batch.counters)
        except Exception as e:
            logger.exception(
                "local backplane: a transaction of %d writes failed", len(batch.applies)
            )
            batch.error = e
            for bucket in self._buckets.values():
                bucket.unstage()
            for stream in self._streams.values():
                stream.unstage()
        else:
            self.commits += 1
            for apply in batch.applies:
                apply()
        batch.done = True
        for callback in batch.after:
            callback()

    def transaction(
        self, statements: list[tuple[str, tuple[object, ...]]], counters: Mapping[str, int]
    ) -> None:
        """Run ``statements`` and write ``counters`` in one transaction (all or none)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            # Runs of one statement (a turn's log entries, its lease renewals) go to
            # SQLite as one executemany each, in their order.
            for sql, rows in groupby(statements, key=itemgetter(0)):
                db.executemany(sql, [args for _, args in rows])
            if counters:
                db.executemany(_PUT_COUNTER, counters.items())
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite rolls back itself on some errors (a full disk)
                db.execute("ROLLBACK")
            raise

    def messages(self, sql: str, args: tuple[object, ...]) -> list[tuple[int, str, bytes]]:
        self.check_open()
        return self.read(sql, args)

    def read_file(self, sql: str, args: tuple[object, ...]) -> list[tuple[int, str, bytes]]:
        """A query of the file's messages (rows of seq, headers, data)."""
        return list(self._db.execute(sql, args).fetchall())

"""Room logs in JetStream: the durable-rooms log format (docs/durability.md) as one subject
per room in the namespace's log stream, with the store's operations and guarantees.

:class:`RoomLog` is those operations (``open_log``, ``append_log``, ``finish_log``,
``action_log``, ``open_logs``): :class:`meeple.server.store.database.Store` (SQLite and
PostgreSQL) has them, and so has :class:`BlockingJetStreamLog`, the JetStream log for
callers in a thread (the journal). :class:`JetStreamLog` is the same on the event loop,
plus :meth:`~JetStreamLog.claim`, with which a new owner fences the old one out.

**The messages** of room ``uid``, on subject ``<ns>.log.<uid>``, in order:

=========  ==================================  =============  ============================
kind       body (JSON)                         Meeple-Seq     Nats-Msg-Id
=========  ==================================  =============  ============================
genesis    the genesis                         0              ``<uid>.0.<digest>``
entry      one entry (``action``, ``clocks``)  1, 2, …        ``<uid>.<seq>.<digest>``
entries    a list of entries (one write)       the last one   ``<uid>.<first>-<last>.<dig>``
owner      ``{"owner", "epoch"}``              last entry's   ``<uid>.owner.<epoch>``
end        ``{"end_reason", "game"}``          last entry's   ``<uid>.end.<digest>``
=========  ==================================  =============  ============================

Headers ``Meeple-Kind``, ``Meeple-Seq`` and ``Meeple-At`` (the wall-clock time, as the
store's ``at``) say which is which (``entries`` also has ``Meeple-First``: entries that
belong together, ``append_logs``, are one message, so all of them or none are written);
``digest`` is the first 16 hex digits of the body's SHA-256, so the same entry retried
has the same id and another entry at the same sequence has another.

**Fenced appends.** Every publish carries ``Nats-Expected-Last-Subject-Sequence``: the
stream sequence of the last message of the room as this writer knows it. JetStream
refuses it when anything else was written to the room since, so two writers cannot
interleave, and a retried append is recognised (by JetStream's duplicate window, or by
finding the same message id in the log after the fence refused it) and not applied
twice. A refusal that is no retry is :class:`~meeple.server.store.database.LogConflict`.

**Owners.** A node that takes a room over (its lease, :mod:`meeple.cluster.lease`)
calls :meth:`JetStreamLog.claim` before anything else: it writes an ``owner`` message
fenced on the log's current end, so every append the old owner prepared against the log
it knew is refused, whenever it arrives. After a refusal a claimed writer stays refused
until it claims again (it must not adopt the new end: that is the new owner's log). A
writer that never claimed a room (``meeple serve``, tests) reads the log's end when it
does not know it, and so behaves as the SQL stores do.

**The end.** :meth:`JetStreamLog.finish_log` writes the ``end`` message (fenced: it
closes the log for every writer), then stores the finished game in ``records`` (a
:class:`~meeple.server.store.database.Store`: PostgreSQL in the cluster) once per room uid, found
again by :meth:`~meeple.server.store.database.Store.game_by_uid` on a retry. The ``end`` message
carries the game too, so the finished game is in the log even if the process dies
between the two writes (the retry, or recovery, stores it).

Reading a room's log is one batched direct get (NATS >= 2.11) per 1,000 messages; a
claim reads the log once and replays what it read. Listing the open rooms takes one
stream-info request and two direct gets per room (fine at start-up and for hundreds of
rooms; an index of open rooms would do better for many thousands).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from meeple.bus.base import BusError
from meeple.bus.codec import decode_json
from meeple.bus.schema import LogEnd, LogOwner, decode, encode
from meeple.bus.subjects import Namespace, check_token
from meeple.cluster.backplane import MSG_ID, Fenced, LogStream, Stored
from meeple.server.config import ClusterConfig
from meeple.server.store.database import ActionLog, GameRecord, LogConflict, LogEntry, Store

__all__ = ["BlockingJetStreamLog", "GameRecords", "JetStreamLog", "LogEnds", "RoomLog", "Streams"]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)

KIND = "Meeple-Kind"
SEQ = "Meeple-Seq"
AT = "Meeple-At"
GAME = "Meeple-Game"
FIRST = "Meeple-First"


_DEFAULT = ClusterConfig()


# What a room's log holds, as read back (JSON, written by its owners): each entry and the
# genesis a JSON object in the room log's own format (docs/durability.md, versioned by its
# genesis), an owner's claim (meeple.bus.schema.LogOwner: its lease epoch), the end
# (meeple.bus.schema.LogEnd: the game to store).
_Entry = dict[str, Any]


class RoomLog(Protocol):
    """The operations of a room log, whatever holds it (docs/durability.md, The log)."""

    def open_log(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None: ...

    def append_log(
        self, uid: str, seq: int, entry: Mapping[str, Any], *, at: float | None = None
    ) -> None: ...

    def append_logs(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], *, at: float | None = None
    ) -> None: ...

    def finish_log(self, uid: str, **game: Any) -> int: ...

    def action_log(self, uid: str) -> ActionLog | None: ...

    def open_logs(self, game: str | None = None) -> list[str]: ...


@dataclass
class _Tail:
    """What a writer knows of a room's log: its last message."""

    stream_seq: int  # the fence: the stream sequence of the room's last message
    log_seq: int  # the last entry's sequence (0: the genesis)
    msg_id: str
    closed: bool
    claimed: bool = False  # written by claim(): refused once, refused until claimed again
    refused: bool = False


# One encoder for every entry: ``json.dumps`` with options builds a new one per call.
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


def _body(value: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> bytes:
    return _ENCODE(value).encode()


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


class GameRecords(Protocol):
    """Where a log stores its finished game once (a :class:`Store`, or a rooms node's
    :class:`meeple.node.store.RemoteRecords`, asking a store node over the bus)."""

    def game_by_uid(self, uid: str) -> GameRecord | None: ...

    def record_game_once(
        self,
        uid: str,
        *,
        game: str,
        variant: str,
        protocols: Sequence[str],
        players: Sequence[str],
        started_at: float,
        end_reason: str,
        result: Mapping[str, Any],
        record: str,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        """Store room ``uid``'s finished game unless it is stored; its id either way."""
        ...


class Streams(Protocol):
    """Where a log's stream comes from: a :class:`~meeple.cluster.backplane.Backplane`,
    or a read-only view of one's file (:mod:`meeple.node.logfile`)."""

    def stream(self, name: str) -> LogStream: ...


class JetStreamLog:
    """Room logs in the backplane's log stream (JetStream on a cluster, the local
    backplane's SQLite in one process), on the event loop; see the module doc.

    ``plane`` is a node's backplane (for JetStream: the namespace made sure of,
    :func:`meeple.cluster.jetstream.connect_node`), ``records`` the store of finished
    games. One instance is one writer: it remembers the end of each log it wrote.
    """

    def __init__(
        self,
        plane: Streams,
        ns: Namespace,
        records: GameRecords,
        *,
        wall_clock: Callable[[], float] = time.time,
        store_retry: tuple[float, float] = (_DEFAULT.store_retry, _DEFAULT.store_retry_max),
        store_later: bool = False,
    ) -> None:
        """``store_retry``: a finished game whose store is away (no store node answers)
        is asked again after the first seconds, doubling up to the second; its end is in
        the log meanwhile (:class:`~meeple.server.config.ClusterConfig`'s).
        ``store_later``: meanwhile :meth:`finish_log` returns (0, no id yet) and a task
        of its own asks on (:attr:`storing`), so the room tells its players the end at
        once, as ``meeple serve``'s journal lets a room go on while its store fails."""
        self._stream = plane.stream(ns.log_stream)
        self._store_retry = store_retry
        self._store_later = store_later
        # The finished games being stored by a task of their own (store_later), by uid.
        self.storing: dict[str, asyncio.Task[int]] = {}
        self.ns = ns
        self.records = records
        self._now = wall_clock
        self._tails: dict[str, _Tail] = {}

    # --- writing ---------------------------------------------------------------------------

    async def open_log(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        """Start room ``uid``'s log with its genesis. The same genesis again is a retry and
        does nothing; another genesis under the same uid is a LogConflict."""
        body = _body(genesis)
        msg_id = f"{check_token(uid, 'room')}.0.{_digest(body)}"
        headers = {KIND: "genesis", SEQ: "0", AT: repr(self._now()), GAME: game}
        try:
            ack = await self._publish(uid, body, headers, msg_id, expect=0)
        except LogConflict:
            first = await self._first(uid)
            if first is None or first.headers.get(MSG_ID) != msg_id:
                raise LogConflict(f"room {uid}: a log with another genesis exists") from None
            self._tails.pop(uid, None)  # it may have grown since: read its end when needed
            return
        self._tails[uid] = _Tail(ack, 0, msg_id, closed=False)

    async def append_log(
        self, uid: str, seq: int, entry: Mapping[str, Any], *, at: float | None = None
    ) -> None:
        """Append ``entry`` as number ``seq`` of room ``uid``'s log, fenced (module doc):
        ``seq`` must follow the last entry; the same entry at a sequence already written
        is a retry and does nothing; anything else is a LogConflict."""
        body = _body(entry)
        msg_id = f"{check_token(uid, 'room')}.{seq}.{_digest(body)}"
        tail = self._tails.get(uid) or await self._read_tail(uid)
        if tail.refused:
            raise LogConflict(f"room {uid}: this writer was fenced out; claim the room again")
        if tail.msg_id == msg_id:
            return  # a retry of this writer's last append
        if seq == tail.log_seq + 1 and not tail.closed:
            when = self._now() if at is None else at
            headers = {KIND: "entry", SEQ: str(seq), AT: repr(when)}
            try:
                stream_seq = await self._publish(uid, body, headers, msg_id, tail.stream_seq)
            except LogConflict:
                pass  # someone wrote since: a retry of ours, or a conflict (below)
            else:
                self._tails[uid] = _Tail(stream_seq, seq, msg_id, False, tail.claimed)
                return
        await self._refused(uid, tail, seq, msg_id)

    async def append_logs(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], *, at: float | None = None
    ) -> None:
        """Append ``entries`` as numbers ``seq``, ``seq + 1``, … in one message (module
        doc: ``entries``): all of them or none, fenced and retried as :meth:`append_log`."""
        if len(entries) <= 1:
            for entry in entries:
                await self.append_log(uid, seq, entry, at=at)
            return
        last = seq + len(entries) - 1
        body = _body(list(entries))
        msg_id = f"{check_token(uid, 'room')}.{seq}-{last}.{_digest(body)}"
        tail = self._tails.get(uid) or await self._read_tail(uid)
        if tail.refused:
            raise LogConflict(f"room {uid}: this writer was fenced out; claim the room again")
        if tail.msg_id == msg_id:
            return  # a retry of this writer's last append
        if seq == tail.log_seq + 1 and not tail.closed:
            when = self._now() if at is None else at
            headers = {KIND: "entries", FIRST: str(seq), SEQ: str(last), AT: repr(when)}
            try:
                stream_seq = await self._publish(uid, body, headers, msg_id, tail.stream_seq)
            except LogConflict:
                pass  # someone wrote since: a retry of ours, or a conflict (below)
            else:
                self._tails[uid] = _Tail(stream_seq, last, msg_id, False, tail.claimed)
                return
        await self._refused(uid, tail, seq, msg_id)

    async def _refused(self, uid: str, tail: _Tail, seq: int, msg_id: str) -> None:
        """An append that did not fit the end known here: a retry, or a LogConflict."""
        # A log only grows, so what is read now still says why the append did not fit.
        log = await self._read(uid)
        if log is None:
            raise LogConflict(f"room {uid}: no log")
        mine = [m for m in log if m.headers.get(MSG_ID) == msg_id]
        if mine:
            # The same entry is in the log: a retry (its first acknowledgement was lost).
            # If it is the log's end, it is this writer's end: its fence moves on to it.
            if log[-1] is mine[0]:
                self._tails[uid] = replace(_tail(log[-1]), claimed=tail.claimed)
            return
        if tail.claimed:
            tail.refused = True
        else:
            self._tails.pop(uid, None)
        last = max(int(m.headers.get(SEQ, 0)) for m in log)
        if 1 <= seq <= last:
            raise LogConflict(f"room {uid}: entry {seq} is already another entry")
        raise LogConflict(f"room {uid}: append {seq} after {last} refused")

    async def claim(self, uid: str, owner: str, epoch: int) -> ActionLog:
        """Make this writer room ``uid``'s owner under lease ``epoch`` (the lease's
        revision: a later lease has a greater one): an ``owner`` message fenced on the
        log's end as read here, so every append of an earlier owner is refused from now
        on, whenever it arrives. Returns the log as it stands, to replay.

        LogConflict when there is no open log, or an owner with a later epoch claimed it
        (an old owner that wakes up between its lease and its claim).
        """
        body = encode(LogOwner(epoch=epoch, owner=owner))
        msg_id = f"{check_token(uid, 'room')}.owner.{epoch}"
        for _attempt in range(10):
            messages = await self._read(uid)
            if messages is None:
                raise LogConflict(f"room {uid}: no log")
            tail = _tail(messages[-1])
            if tail.closed:
                raise LogConflict(f"room {uid}: the log is closed")
            claimed = max(
                (
                    decode(m.data, LogOwner).epoch
                    for m in messages
                    if m.headers.get(KIND) == "owner"
                ),
                default=-1,
            )
            if claimed > epoch:
                raise LogConflict(f"room {uid}: claimed under a later lease ({claimed})")
            if claimed < epoch:
                headers = {KIND: "owner", SEQ: str(tail.log_seq), AT: repr(self._now())}
                try:
                    stream_seq = await self._publish(uid, body, headers, msg_id, tail.stream_seq)
                except LogConflict:
                    continue  # an append of the old owner landed meanwhile: claim after it
                tail = _Tail(stream_seq, tail.log_seq, msg_id, False)
            # else: claimed under this epoch already (a retry): the log's end is ours.
            tail.claimed = True
            self._tails[uid] = tail
            return await self._build(uid, messages)
        raise LogConflict(f"room {uid}: the log kept moving; could not claim it")

    async def finish_log(self, uid: str, **game: Any) -> int:
        """Close room ``uid``'s log and store the finished game once (``game``: the
        store's ``record_game`` arguments); the stored game's id. A retry stores nothing
        twice and answers the same id; the game stored is always the one in the log's
        ``end`` message (the first finish's, as with the SQL stores). A retry finds the
        stored game by ``data["uid"]`` (every room's record has it): a game without one
        may be stored again by a retry."""
        body = encode(LogEnd(game=game, end_reason=game["end_reason"]))
        msg_id = f"{check_token(uid, 'room')}.end.{_digest(body)}"
        tail = self._tails.get(uid) or await self._read_tail(uid)
        if tail.refused:
            raise LogConflict(f"room {uid}: this writer was fenced out; claim the room again")
        if not tail.closed:
            headers = {KIND: "end", SEQ: str(tail.log_seq), AT: repr(self._now())}
            try:
                await self._publish(uid, body, headers, msg_id, tail.stream_seq)
            except LogConflict:
                fresh = await self._read_tail(uid)
                if tail.claimed and fresh.msg_id != msg_id:
                    # Another owner wrote (and maybe closed) the log: not ours to end.
                    tail.refused = True
                    raise
                if not fresh.closed:
                    # Not an owner (meeple serve): the SQL stores close the log whatever
                    # its end; so do we, on the end read now.
                    await self._publish(uid, body, headers, msg_id, fresh.stream_seq)
            self._tails[uid] = _Tail(0, tail.log_seq, msg_id, closed=True, claimed=tail.claimed)
        end = await self._get(uid)
        assert end is not None
        game = decode(end.data, LogEnd).game
        if not self._store_later:
            return await self._store_once_for_sure(uid, game)
        try:
            return await asyncio.to_thread(self._store_once, uid, game)
        except BusError as e:
            logger.warning(
                "room %s: the store did not take the finished game (%s); it is stored when"
                " the store is back",
                uid,
                e,
            )
        task = asyncio.ensure_future(self._store_once_for_sure(uid, game))
        self.storing[uid] = task
        task.add_done_callback(lambda _task: self.storing.pop(uid, None))
        return 0

    async def _store_once_for_sure(self, uid: str, game: Mapping[str, Any]) -> int:
        pause, longest = self._store_retry
        while True:
            try:
                return await asyncio.to_thread(self._store_once, uid, game)
            except BusError as e:
                # No store node now (a cluster's records go to one over the bus): the
                # end is logged, so the game is kept; its room waits, as a room of
                # meeple serve waits for its disk, and asks again until one answers.
                logger.warning("room %s: the store did not answer (%s); asking again", uid, e)
                await asyncio.sleep(pause)
                pause = min(2 * pause, longest)

    def _store_once(self, uid: str, game: Mapping[str, Any]) -> int:
        # One request: the look-up and the write are the store's one transaction.
        return self.records.record_game_once(uid, **game)

    # --- reading ---------------------------------------------------------------------------

    async def action_log(self, uid: str) -> ActionLog | None:
        """Room ``uid``'s whole log: genesis, entries in order, and how it ended."""
        messages = await self._read(uid)
        return None if messages is None else await self._build(uid, messages)

    async def _build(self, uid: str, messages: list[Stored]) -> ActionLog:
        head = messages[0].headers
        entries: list[LogEntry] = []
        end_reason: str | None = None
        for m in messages[1:]:
            kind = m.headers.get(KIND)
            if kind == "entry":
                entries.append(
                    LogEntry(int(m.headers[SEQ]), float(m.headers[AT]), decode_json(m.data, _Entry))
                )
            elif kind == "entries":
                first, at = int(m.headers[FIRST]), float(m.headers[AT])
                batch = decode_json(m.data, list[_Entry])
                entries.extend(LogEntry(first + i, at, e) for i, e in enumerate(batch))
            elif kind == "end":
                end_reason = decode(m.data, LogEnd).end_reason
        game_id = None
        if end_reason is not None:
            found = await asyncio.to_thread(self.records.game_by_uid, uid)
            game_id = None if found is None else found.id
        return ActionLog(
            uid,
            head.get(GAME, ""),
            decode_json(messages[0].data, _Entry),
            float(head.get(AT, 0.0)),
            tuple(entries),
            game_id,
            end_reason,
        )

    async def store_end(self, uid: str) -> int | None:
        """Store the game in room ``uid``'s ``end`` message once (the second half of
        :meth:`finish_log`, for a writer that died between its two writes); the stored
        game's id, None if the log is not closed."""
        end = await self._get(uid)
        if end is None or end.headers.get(KIND) != "end":
            return None
        return await self._store_once_for_sure(uid, decode(end.data, LogEnd).game)

    async def closed(self, uid: str) -> bool:
        """Whether room ``uid``'s log has ended (one direct get; False: open, or none)."""
        last = await self._get(uid)
        return last is not None and last.headers.get(KIND) == "end"

    async def open_logs(self, game: str | None = None) -> list[str]:
        """The uids of the rooms whose logs are not closed, oldest first."""
        rooms: list[tuple[float, str]] = []
        prefix = self.ns.log("x")[:-1]
        for subject in await self._stream.subjects():
            if not subject.startswith(prefix):
                continue
            uid = subject.removeprefix(prefix)
            tail = await self._read_tail(uid)
            if tail.closed:
                continue
            first = await self._first(uid)
            assert first is not None
            h = first.headers
            if game is None or h.get(GAME) == game:
                rooms.append((float(h.get(AT, 0.0)), uid))
        return [uid for _, uid in sorted(rooms)]

    # --- the stream --------------------------------------------------------------------------

    async def _publish(
        self, uid: str, body: bytes, headers: dict[str, str], msg_id: str, expect: int
    ) -> int:
        """Append one message of room ``uid``, fenced on ``expect``; its stream sequence.
        LogConflict when the fence refuses it."""
        try:
            return await self._stream.append(
                self.ns.log(uid), body, headers, msg_id=msg_id, expect=expect
            )
        except Fenced:
            raise LogConflict(f"room {uid}: the log moved on from {expect}") from None

    async def _get(self, uid: str, *, seq: int | None = None) -> Stored | None:
        """The room's last message, or its first at or after stream sequence ``seq``."""
        if seq is None:
            return await self._stream.last(self.ns.log(uid))
        return await self._stream.next(self.ns.log(uid), seq)

    async def _first(self, uid: str) -> Stored | None:
        return await self._get(uid, seq=1)

    async def _read(self, uid: str) -> list[Stored] | None:
        """Every message of the room, in order (None: no log)."""
        return await self._stream.read(self.ns.log(uid)) or None

    async def _read_tail(self, uid: str) -> _Tail:
        m = await self._get(uid)
        if m is None:
            raise LogConflict(f"room {uid}: no log")
        return _tail(m)


def _tail(m: Stored) -> _Tail:
    """What a room's last message says of its log."""
    h = m.headers
    return _Tail(m.seq, int(h.get(SEQ, 0)), h.get(MSG_ID, ""), closed=h.get(KIND) == "end")


class LogEnds:
    """How rooms' logs ended, read from the log stream by a node that writes none (the
    lobby's leader, for a CMPN402 contest's results: :mod:`meeple.node.contest`)."""

    def __init__(self, plane: Streams, ns: Namespace) -> None:
        self._stream = plane.stream(ns.log_stream)
        self.ns = ns

    async def end(self, uid: str) -> dict[str, Any] | None:
        """The game room ``uid``'s log ended with (what its owner stored: players,
        result, end reason), or None while it is open (or there is none). One direct get."""
        m = await self._stream.last(self.ns.log(uid))
        if m is None or m.headers.get(KIND) != "end":
            return None
        return decode(m.data or b"", LogEnd).game


class BlockingJetStreamLog:
    """:class:`JetStreamLog` for callers in a thread (the journal's writer thread, the
    store's tests): the same methods, blocking. It runs its own event loop in a thread,
    with its own NATS connection; :meth:`close` stops both.
    """

    def __init__(
        self,
        url: str,
        ns: Namespace,
        records: Store,
        *,
        user: str | None = None,
        password: str | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        from meeple.cluster.jetstream import JetStreamBackplane, connect_node

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="meeple-jetstream-log", daemon=True
        )
        self._thread.start()
        self.records = records
        self._nc = self._call(connect_node(url, ns, user=user, password=password, name="log"))
        self.log = JetStreamLog(JetStreamBackplane(self._nc), ns, records, wall_clock=wall_clock)

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def open_log(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        self._call(self.log.open_log(uid, game, genesis))

    def append_log(
        self, uid: str, seq: int, entry: Mapping[str, Any], *, at: float | None = None
    ) -> None:
        self._call(self.log.append_log(uid, seq, entry, at=at))

    def append_logs(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], *, at: float | None = None
    ) -> None:
        self._call(self.log.append_logs(uid, seq, entries, at=at))

    def finish_log(self, uid: str, **game: Any) -> int:
        return self._call(self.log.finish_log(uid, **game))

    def action_log(self, uid: str) -> ActionLog | None:
        return self._call(self.log.action_log(uid))

    def open_logs(self, game: str | None = None) -> list[str]:
        return self._call(self.log.open_logs(game))

    def close(self) -> None:
        """Close the connection and stop the loop (``records`` stays open: it is the
        caller's)."""
        if self._loop.is_closed():
            return
        self._call(self._nc.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

"""The ``store`` role: finished games and ratings in PostgreSQL, for the whole cluster.

A rooms node ends a room's log itself (the ``end`` message, fenced, carries the game:
:meth:`meeple.cluster.log.JetStreamLog.finish_log`) and then has the game stored once
per room uid. It does so through :class:`RemoteRecords`: ``finish_log``'s
``record_game_once`` is one ``record_game`` request to the store role
(``<ns>.store.req.<op>``, queue group ``store``), which runs it on its
:class:`~meeple.server.store.database.Store` (``--database``: PostgreSQL in the cluster)
as one transaction: the look-up by uid, the game and the players' ratings. Rooms nodes
need no database connection; any number of store nodes may serve.

The same role answers an edge's web pages, which have no database connection either:
the read-only ops :data:`~meeple.bus.subjects.STORE_READS` (a finished game's record by
uid or number, the recent games, a leaderboard, a player's profile and rating history),
which :class:`BusRecords` asks for as the edge's :class:`~meeple.web.records.Records`.
Only finished, public data is read there (what ``meeple serve``'s replay and ratings
pages show anyone); an edge's credentials may make these requests and not the writes
(deploy/nats/meeple-auth.conf). An edge's request is JSON, checked here before the
database sees it; the answer is the store's own value in the bus's schema
(:mod:`meeple.node.wire`), decoded and checked against the type the call returns. A
rooms node's ``record_game`` is a :class:`~meeple.node.wire.RecordGame`, every field
checked against its declared type before the database sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meeple.server.clock import Clock
    from meeple.server.lobby.names import StoreReservations
    from meeple.server.ports import RecordsPort

import asyncio
import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from meeple.bus.base import Bus, BusError, Sealed, Subscription
from meeple.bus.subjects import STORE_KEEPS, STORE_READS, Namespace
from meeple.node import wire
from meeple.server.store.database import (
    OUTCOMES,
    GameRecord,
    PlayerProfile,
    PlayerRating,
    RatingPoint,
    Store,
    StoreUnavailable,
)
from meeple.web.records import MAX_KEY, findable

__all__ = ["BusRecords", "RemoteRecords", "StoreRole"]

_T = TypeVar("_T")

# The most rows one read answers (the games page asks for 200).
MAX_ROWS = 200
MAX_TEXT = MAX_KEY
# What a record in a list keeps of its JSON record: the list shows its summary only
# (meeple.web.replays.summary), and 200 whole records would not fit one NATS message.
_LISTED = ("format", "version", "uid", "lexicon")


def _listed(record: GameRecord) -> GameRecord:
    """``record`` as a list needs it: without its moves (``record``, most of ``data``)."""
    data = None if record.data is None else {k: record.data[k] for k in _LISTED if k in record.data}
    return dataclasses.replace(record, record="", data=data)


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not findable(value):
        raise ValueError(f"{key}: a text of at most {MAX_TEXT} characters, no NUL")
    return value


def _count(args: dict[str, Any], key: str, top: int) -> int:
    value = args.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
        raise ValueError(f"{key}: a whole number from 0 to {top}")
    return value


_ARGS: dict[str, dict[str, str | int]] = {
    "read_game": {"uid": "text"},
    "read_game_number": {"id": 2**62},
    "read_games": {"limit": MAX_ROWS},
    # "" for no filter, 0 for the first page or no date bound (Unix seconds).
    "search_games": {
        "game": "text",
        "player": "text",
        "result": "text",
        "ended_from": 2**40,
        "ended_to": 2**40,
        "before": 2**62,
        "limit": MAX_ROWS,
    },
    "read_leaderboard": {"game": "text", "limit": MAX_ROWS},
    "read_player": {"name": "text", "limit": MAX_ROWS},
    "read_rating_history": {"game": "text", "name": "text"},
    "read_analysis": {"uid": "text", "version": 2**31},
}

# The most bytes of one kept analysis (a 100-move Scrabble game's is ~60 kB).
MAX_ANALYSIS = 512 * 1024


def _check(op: str, args: dict[str, Any]) -> None:
    """An edge's read ``op``: its arguments, exactly (ValueError otherwise)."""
    wanted = _ARGS.get(op)
    if wanted is None or set(args) != set(wanted):
        raise ValueError(f"{op} takes {sorted(wanted or ())}")
    for key, kind in wanted.items():
        if kind == "text":
            _text(args, key)
        else:
            _count(args, key, int(kind))


def _read(store: Store, op: str, args: dict[str, Any]) -> object:
    """The read ``op`` of an edge's request ``args`` (JSON, checked), on ``store``."""
    if op == "read_game":
        return store.game_by_uid(_text(args, "uid"))
    if op == "read_game_number":
        return store.game(_count(args, "id", 2**62))
    if op == "read_games":
        return [_listed(r) for r in store.games(limit=_count(args, "limit", MAX_ROWS))]
    if op == "search_games":
        result = _text(args, "result") or None
        if result is not None and result not in OUTCOMES:
            raise ValueError(f"result: one of {', '.join(OUTCOMES)}, or none")
        found = store.search_games(
            game=_text(args, "game") or None,
            player=_text(args, "player") or None,
            result=result,
            ended_from=_count(args, "ended_from", 2**40) or None,
            ended_to=_count(args, "ended_to", 2**40) or None,
            before=_count(args, "before", 2**62) or None,
            limit=_count(args, "limit", MAX_ROWS),
        )
        return [_listed(r) for r in found]
    if op == "read_leaderboard":
        return store.leaderboard(_text(args, "game"), limit=_count(args, "limit", MAX_ROWS))
    if op == "read_player":
        profile = store.player(_text(args, "name"), limit=_count(args, "limit", MAX_ROWS))
        return dataclasses.replace(profile, games=tuple(_listed(r) for r in profile.games))
    if op == "read_rating_history":
        return store.rating_history(_text(args, "game"), _text(args, "name"))
    if op == "read_analysis":
        return store.analysis(_text(args, "uid"), _count(args, "version", 2**31))
    raise ValueError(f"no read {op!r}")


class StoreRole:
    """Serves the store requests on ``store`` (the node's records and ratings) and the
    edges' accounts (:class:`meeple.node.accounts.AccountService`, on ``clock``)."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        store: Store,
        *,
        clock: Clock | None = None,
        reservations: StoreReservations | None = None,
    ) -> None:
        """``reservations``: the reserved names in memory, kept current by the accounts
        reserved here (the one-process node: its edge checks names against them)."""
        from meeple.node.accounts import AccountService
        from meeple.server.clock import SystemClock

        self.bus = bus
        self.ns = ns
        self.store = store
        self.accounts = AccountService(
            bus, ns, store, clock or SystemClock(), reservations=reservations
        )
        self._subs: list[Subscription] = []
        # One write at a time: "once per uid" is a read, then a write.
        self._lock = asyncio.Lock()
        # The database's calls run on threads of their own, not the event loop's default
        # executor: a rooms role in this process stores its finished games through this
        # role from that executor's threads (RemoteRecords, which wait for the answer),
        # and with as many games ending at once as it has threads the answers would
        # queue behind the waiters (a one-process node, `meeple node --local`).
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="meeple-store")

    async def _run(self, call: Callable[..., _T], *args: Any, **kw: Any) -> _T:
        """``call(*args, **kw)`` on the role's database threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(call, *args, **kw))

    async def start(self) -> None:
        await self.accounts.start()
        registry = wire.registry()
        self._subs.append(
            await self.bus.answer(
                self.ns.store_request("game_by_uid"),
                self._game_by_uid,
                registry,
                str,
                queue="store",
            )
        )
        self._subs.append(
            await self.bus.answer(
                self.ns.store_request("record_game"),
                self._record_game,
                registry,
                wire.RecordGame,
                queue="store",
            )
        )
        for op in STORE_READS:
            self._subs.append(
                await self.bus.serve(self.ns.store_read(op), self._reader(op), queue="store")
            )
        for op in STORE_KEEPS:
            self._subs.append(
                await self.bus.serve(self.ns.store_keep(op), self._keep, queue="store")
            )

    async def _keep(self, payload: bytes) -> Sealed:
        """An edge's ``keep_analysis``: ``{"uid", "version", "steps"}`` as JSON, at most
        :data:`MAX_ANALYSIS` bytes, for a game the store holds; whether it was kept."""
        if len(payload) > MAX_ANALYSIS:
            raise wire.WireError("size", f"an analysis of {len(payload)} bytes")
        args = wire.decode_json(payload, dict[str, str | int | list[dict[str, Any] | None]])
        steps = args.get("steps")
        try:
            if set(args) != {"uid", "version", "steps"} or not isinstance(steps, list):
                raise ValueError("keep_analysis takes uid, version and steps")
            uid = _text(args, "uid")
            version = _count(args, "version", 2**31)
        except ValueError as e:
            raise wire.WireError("shape", str(e)) from None
        found = await self._run(self.store.game_by_uid, uid)
        if found is None:
            return wire.seal(False)
        await self._run(self.store.keep_analysis, uid, version, {"steps": steps})
        return wire.seal(True)

    def _reader(self, op: str) -> Callable[[bytes], Any]:
        """An edge's read (module doc): JSON in, checked; no lock (reads only)."""

        async def handle(payload: bytes) -> Sealed:
            args = wire.decode_json(payload, dict[str, str | int])
            try:
                _check(op, args)
            except ValueError as e:
                raise wire.WireError("shape", str(e)) from None
            # The store built it for this answer and keeps no hold of it (the copy rule).
            return wire.seal(await self._run(_read, self.store, op, args))

        return handle

    async def _game_by_uid(self, _subject: str, uid: str) -> Sealed:
        async with self._lock:
            return wire.seal(await self._run(self.store.game_by_uid, uid))

    async def _record_game(self, _subject: str, game: wire.RecordGame) -> Sealed:
        """A rooms node's finished game, stored once per uid; the stored game's id. In
        one process ``game`` is the rooms role's own value (by reference: its record is
        neither encoded nor checked item by item again)."""
        async with self._lock:
            uid = (game.data or {}).get("uid")
            args = {f.name: getattr(game, f.name) for f in dataclasses.fields(game)}
            if isinstance(uid, str):  # the look-up and the write in one transaction
                return wire.seal(await self._run(self.store.record_game_once, uid, **args))
            return wire.seal(await self._run(self.store.record_game, **args))

    async def stop(self) -> None:
        await self.accounts.stop()
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        self._subs.clear()
        self._pool.shutdown(wait=True)  # the calls under way (short) end first


class RemoteRecords:
    """The store calls of :meth:`~meeple.cluster.log.JetStreamLog.finish_log`, made to
    the store role; called from a thread (``asyncio.to_thread``), answered on ``loop``."""

    def __init__(
        self, bus: Bus, ns: Namespace, loop: asyncio.AbstractEventLoop, *, timeout: float
    ) -> None:
        """``timeout``: a store node's answer's wait (``command_wait``: a game is stored
        before its end is told)."""
        self.bus = bus
        self.ns = ns
        self.loop = loop
        self.timeout = timeout

    def _ask(self, op: str, args: object, expect: object) -> Any:
        # Sealed: in one process the store role is handed ``args`` itself (built here
        # for this request, never touched again), and its answer comes back the same way.
        future = asyncio.run_coroutine_threadsafe(
            self.bus.ask(
                self.ns.store_request(op),
                wire.seal(args),
                wire.registry(),
                expect,
                timeout=self.timeout,
            ),
            self.loop,
        )
        return future.result()

    def game_by_uid(self, uid: str) -> GameRecord | None:
        found: GameRecord | None = self._ask("game_by_uid", uid, GameRecord | None)
        return found

    def record_game(self, **game: Any) -> int:
        game["protocols"] = tuple(game["protocols"])
        game["players"] = tuple(game["players"])
        return int(self._ask("record_game", wire.RecordGame(**game), int))

    def record_game_once(self, uid: str, **game: Any) -> int:
        """One request when the game's record carries ``uid`` (every room's does): the
        store role stores a game once per its record's uid, in one transaction. A record
        without it is looked up first, then stored (two requests, as before)."""
        data = game.get("data")
        if not isinstance(data, Mapping) or data.get("uid") != uid:
            found = self.game_by_uid(uid)
            if found is not None:
                return found.id
        return self.record_game(**game)


class BusRecords:
    """An edge's :class:`~meeple.web.records.Records`: each read a request to any store
    node (queue group ``store``), answered within ``timeout`` seconds (``store_wait`` of
    :class:`~meeple.server.config.ClusterConfig`) or
    :class:`~meeple.server.store.database.StoreUnavailable` (no store node, a slow one, a
    database that fails: the page answers 503 and the edge goes on)."""

    def __init__(self, bus: Bus, ns: Namespace, timeout: float) -> None:
        self.bus = bus
        self.ns = ns
        self.timeout = timeout

    async def _ask(self, op: str, expect: object, **args: object) -> Any:
        subject = self.ns.store_read(op)
        try:
            return await self.bus.ask(
                subject,
                json.dumps(args).encode(),
                wire.registry(),
                expect,
                timeout=self.timeout,
            )
        except BusError as e:
            raise StoreUnavailable(f"{subject}: {type(e).__name__}: {e}") from e
        except wire.WireError as e:
            raise StoreUnavailable(f"{subject}: the answer did not decode: {e}") from e

    async def game_by_uid(self, uid: str) -> GameRecord | None:
        if not findable(uid):
            return None
        found: GameRecord | None = await self._ask("read_game", GameRecord | None, uid=uid)
        return found

    async def game(self, game_id: int) -> GameRecord | None:
        if not 0 <= game_id <= 2**62:
            return None
        found: GameRecord | None = await self._ask(
            "read_game_number", GameRecord | None, id=game_id
        )
        return found

    async def games(self, *, limit: int) -> list[GameRecord]:
        found: list[GameRecord] = await self._ask(
            "read_games", list[GameRecord], limit=min(limit, MAX_ROWS)
        )
        return found

    async def search_games(
        self,
        *,
        game: str | None,
        player: str | None,
        before: int | None,
        limit: int,
        result: str | None = None,
        ended_from: int | None = None,
        ended_to: int | None = None,
    ) -> list[GameRecord]:
        if player is not None and not findable(player):
            return []
        found: list[GameRecord] = await self._ask(
            "search_games",
            list[GameRecord],
            game=(game or "")[:MAX_TEXT],
            player=player or "",
            result=result if result in OUTCOMES else "",
            ended_from=ended_from if ended_from is not None and 0 < ended_from <= 2**40 else 0,
            ended_to=ended_to if ended_to is not None and 0 < ended_to <= 2**40 else 0,
            before=before if before is not None and 0 < before <= 2**62 else 0,
            limit=min(limit, MAX_ROWS),
        )
        return found

    async def analysis(self, uid: str, version: int) -> dict[str, Any] | None:
        if not findable(uid) or not 0 <= version <= 2**31:
            return None
        found: dict[str, Any] | None = await self._ask(
            "read_analysis", dict[str, Any] | None, uid=uid, version=version
        )
        return found

    async def keep_analysis(self, uid: str, version: int, analysis: dict[str, Any]) -> None:
        """Ask a store node to keep the analysis this edge computed (docs/cluster.md)."""
        if not findable(uid) or not 0 <= version <= 2**31:
            return
        subject = self.ns.store_keep("keep_analysis")
        body = json.dumps({"uid": uid, "version": version, "steps": analysis.get("steps")})
        if len(body) > MAX_ANALYSIS:
            return  # computed again after a restart: nothing is lost but the time
        try:
            await self.bus.request(subject, body.encode(), timeout=self.timeout)
        except BusError as e:
            raise StoreUnavailable(f"{subject}: {type(e).__name__}: {e}") from e

    async def leaderboard(self, game: str, *, limit: int) -> list[PlayerRating]:
        found: list[PlayerRating] = await self._ask(
            "read_leaderboard",
            list[PlayerRating],
            game=game[:MAX_TEXT],
            limit=min(limit, MAX_ROWS),
        )
        return found

    async def player(self, name: str, *, limit: int) -> PlayerProfile:
        if not findable(name):
            return PlayerProfile(name, (), ())
        found: PlayerProfile = await self._ask(
            "read_player", PlayerProfile, name=name, limit=min(limit, MAX_ROWS)
        )
        return found

    async def rating_history(self, game: str, name: str) -> list[RatingPoint]:
        found: list[RatingPoint] = await self._ask(
            "read_rating_history", list[RatingPoint], game=game[:MAX_TEXT], name=name[:MAX_TEXT]
        )
        return found


def _conforms(records: BusRecords) -> RecordsPort:
    """What mypy checks and nothing calls: an edge's reads over the bus are the records
    port (meeple.server.ports), as meeple serve's local ones are."""
    return records

"""The ``lobby`` role: one leader on the ``lobby`` lease, standbys ready to take over.

The leader runs ``meeple serve``'s own :class:`~meeple.server.lobby.tables.Lobby` (tables,
matching, the variant and name rules where they are decided today), with two stand-ins:

- each edge seat is a :class:`ProxySeat` (its route, name, protocol, variants): what the
  lobby tells it is published on ``<ns>.seat.<edge>.<route>.lobby``; a call for a seat
  whose route is not the sending edge's (the request subject's last token) is refused;
- a table that starts becomes a :class:`RoomTicket`: the lobby's bookkeeping of a room
  whose actor runs on a rooms node, opened by a request to any of them
  (``<ns>.rooms.open``, queue group ``rooms``); the rooms node tells the leader when the
  room is over (``<ns>.lobby.req.roomdone``) and the lobby frees its seats.

Edges' calls arrive on ``<ns>.lobby.req.<op>`` (queue group ``lobby``), served by the
leader only, one at a time. A standby tries for the lease every third of its TTL and
serves once it holds it.

**The tables survive the leader.** Before it answers a call, or tells anyone what the
call changed (the seats' events, a room to open), the leader writes the lobby's state to
the lobby bucket (:class:`~meeple.cluster.lobbystate.LobbyState`, fenced by the lease's
epoch): the open tables with their seats (each seat's route, name, protocol, variants,
as the edge describes it), the rooms asked for and not yet opened, and the number of the
last call applied per edge. The events wait in an outbox until the write is
acknowledged; a refused write (a later leader claimed the state) drops them, answers
"busy" — the edge asks the new leader — and stands the node down. A standby that takes
the lease claims the state, seats the same seats at the same tables (their ids kept),
tells each waiting seat its table again (what the old leader may have died before
telling) and every edge its whole list of open tables under its epoch (which replaces
the edges' copies: :class:`~meeple.node.wire.TableNews`), asks again for the rooms not
yet opened, and serves. A call asked again (its
answer was lost with the old leader) whose number is in the state is answered without
being applied twice. Running games go on meanwhile: they are the rooms nodes'.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

import nats.errors

from meeple.bus.base import Bus, BusError, Payload, RemoteError, Subscription
from meeple.bus.schema import BUSY, OK
from meeple.bus.subjects import Namespace, edge_of
from meeple.cluster.lease import Lease, Leases, lobby_key
from meeple.cluster.lobbystate import LobbyState, StateFenced
from meeple.cluster.registry import Names
from meeple.node import spawn, wire
from meeple.node.ask import NoAnswer, ask, passing
from meeple.node.contest import CONTEST_GAME, CONTEST_OP, ClusterContest, ContestAnswer, ContestCall
from meeple.node.edge import TABLES, LobbyCall
from meeple.node.rooms import OpenRoom
from meeple.server.config import ClusterConfig, ContestConfig
from meeple.server.lobby.bots import LEVELS, check_bot
from meeple.server.lobby.tables import (
    Dismissed,
    Lobby,
    NoSuchTable,
    QueueChanged,
    QueueKey,
    RoomFactory,
    StartRule,
    Table,
    TableError,
    TableEvent,
)
from meeple.server.metrics import METRICS
from meeple.server.rooms.room import Seat

__all__ = ["LobbyRole", "ProxySeat", "RoomTicket"]

logger = logging.getLogger(__name__)

FULL = StartRule.FULL
# The lobby calls an edge may make, and nothing else (a LobbyCall names a method).
CALLS = frozenset(
    {"join", "leave", "disconnect", "quit", "ready", "renamed", "sit", "create", "addbot"}
)
# Who holds a server bot's name in the names bucket (any leader releases it).
BOTS_HOLDER = "lobby.bots"
# Edges whose last call number the state keeps (the oldest are forgotten beyond this).
CALLERS_KEPT = 1024


class ProxySeat:
    """An edge's seat at the leader's lobby; see the module doc."""

    rejoinable = False

    def __init__(self, role: LobbyRole, info: Mapping[str, Any]) -> None:
        self._role = role
        self.route = str(info["route"])
        self.update(info)

    def update(self, info: Mapping[str, Any]) -> None:
        self.name = str(info["name"])
        self.protocol = str(info.get("protocol", "unknown"))
        variants = info.get("variants")
        self.variants: Collection[tuple[str, str]] | None = (
            None if variants is None else frozenset(tuple(v) for v in variants)
        )
        self.bot = bool(info.get("bot"))
        self.level = info.get("level")
        self.info = dict(info)

    def deliver(self, event: object) -> None:
        if self.bot:
            # A server bot has no edge: it plays on its room's rooms node. A table of
            # bots alone is closed (Dismissed): its name is free again.
            if isinstance(event, Dismissed):
                self._role.bot_gone(self)
            return
        self._role.send(self._role.ns.seat(self.route, "lobby"), wire.seal(event))


class _TicketLog(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[{self.extra['room'] if self.extra else '?'}] {msg}", kwargs


class RoomTicket:
    """A room as the leader's lobby keeps it: its seats and uid; the room itself runs on
    a rooms node."""

    game_name = "room"

    def __init__(
        self, role: LobbyRole, key: QueueKey, seats: list[Seat], uid: str | None = None
    ) -> None:
        self._role = role
        self.key = key
        self.game_name = key.game
        self.seats = list(seats)
        self.uid = uid or secrets.token_hex(6)
        # Asked for before (by a leader that died): every ask of it says so (OpenRoom).
        self.attempt = 0 if uid is None else 1
        self.id = f"room-{self.uid}"
        self.feed: Any = None
        self.journal: Any = None
        self.rejoin_hashes: list[str | None] = [None] * len(seats)
        self.on_changed: list[Callable[[Any], None]] = []
        self.on_finished: list[Callable[[Any], None]] = []
        self.finished = False
        self.unwritten = False
        self.owner: str | None = None
        self.log = _TicketLog(logger, {"room": self.id})

    def start(self) -> None:
        self._role.opening(self)

    async def open(self) -> None:
        """Ask a rooms node to open the room; tell the role when one did, or none will."""
        try:
            await self._open()
        finally:
            self._role.opened(self)

    async def _open(self) -> None:
        request = OpenRoom(
            self.uid,
            self.key,
            tuple(getattr(s, "info", {"route": "", "name": s.name}) for s in self.seats),
            tuple(self.rejoin_hashes),
            self.attempt,
        )
        timing = self._role.timing

        def attempt(n: int) -> Payload:
            # An ask again says so: the room may be open already (RoomsRole._open).
            return wire.seal(dataclasses.replace(request, attempt=request.attempt + n))

        def again(error: BusError) -> bool:
            # No rooms node yet, or the one asked died (or failed) opening it.
            return passing(error) or isinstance(error, RemoteError)

        try:
            await ask(
                self._role.bus,
                self._role.ns.rooms_open,
                attempt,
                timing,
                wait=timing.open_wait,
                again=again,
            )
            return
        except NoAnswer as e:
            logger.error("room %s: no rooms node opened it: %r", self.uid, e.last)
        except BusError as e:
            logger.error("room %s: no rooms node opened it: %r", self.uid, e)
        logger.error("room %s: no rooms node answers; the table's players are freed", self.uid)
        self.ended()

    def ended(self) -> None:
        if self.finished:
            return
        self.finished = True
        for callback in self.on_finished:
            try:
                callback(self)
            except Exception:
                logger.exception("on_finished callback failed")

    # The room's own inbox is on its rooms node: the edges send there.
    def leave(self, seat: Seat) -> None:
        """The edge that held the seat tells the room itself (module doc)."""

    def rebind(self, old: Seat, new: Seat) -> None:
        """Rejoin through another edge is not carried yet."""

    def halt(self, reason: str) -> None:
        """The rooms node's log is JetStream, not the leader's journal."""

    def spectator_view(self) -> dict[str, Any] | None:
        return None


class LobbyRole:
    """The lobby role of one node: standby until it holds the lease, then the leader."""

    def __init__(
        self,
        name: str,
        bus: Bus,
        ns: Namespace,
        leases: Leases,
        lobby: Lobby,
        games: Mapping[str, Mapping[str, tuple[int, int]] | None],
        state: LobbyState,
        *,
        timing: ClusterConfig | None = None,
        names: Names | None = None,
        contest: ContestConfig | None = None,
        admin_token: str | None = None,
        log_ends: Callable[[str], Awaitable[Mapping[str, Any] | None]] | None = None,
    ) -> None:
        self.name = name
        self.timing = timing or ClusterConfig()
        # The names bucket, where a server bot's name is claimed (None: names unchecked).
        self.names = names
        self.bus = bus
        self.ns = ns
        self.leases = leases
        self.state = state
        self.lobby = lobby
        for game, variants in games.items():
            lobby.register_game(game, self._factory(), variants=variants)
        lobby.on_change.append(self._table_changed)
        lobby.seat_bot = self._seat_bot
        self.lease: Lease | None = None
        self.leader = asyncio.Event()
        self._seats: dict[str, ProxySeat] = {}
        self._naming: dict[str, str] = {}  # level -> the bot name claimed for the call
        self._opening: dict[str, RoomTicket] = {}  # rooms asked for, not yet opened
        self._applied: dict[str, int] = {}  # edge -> the number of its last call applied
        self._outbox: list[Callable[[], object]] | None = None  # while a call is applied
        self._lock = asyncio.Lock()  # one call (or state change) at a time
        self._subs: list[Subscription] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._lost = asyncio.Event()
        self._heard: dict[str, float] = {}  # node -> its last heartbeat
        self._news_seq = 0  # the table news published under this lease's epoch
        self._beats: Subscription | None = None
        self.admin_token = admin_token
        # A CMPN402 contest (meeple.node.contest): a policy of this lobby when it leads;
        # its results are the logs' ends (``log_ends``: room uid -> the stored game).
        self.contest: ClusterContest | None = None
        self._log_ends = log_ends
        if contest is not None and log_ends is not None:
            self.contest = ClusterContest(self, contest, token=admin_token, ended=log_ends)

    def _factory(self) -> RoomFactory:
        def create(key: QueueKey, seats: list[Seat]) -> Any:
            return self._ticket(RoomTicket(self, key, seats))

        return create

    def _ticket(self, ticket: RoomTicket) -> RoomTicket:
        ticket.on_finished.append(self._room_over)
        return ticket

    # --- server bots (the web's "add a bot") ------------------------------------------------
    #
    # The leader seats a bot at the table as a ProxySeat with no edge (``bot``: its level),
    # under a name claimed in the names bucket; the table's room, opened on a rooms node,
    # gets the bot's seat as any other (OpenRoom) and plays it there
    # (meeple.node.rooms.RoomBots): a takeover restarts it from the log like any seat.

    async def _bot_name(self, level: str) -> str:
        """A free name for a new bot at ``level`` (``<level>bot<n>``, as meeple serve's),
        claimed in the names bucket so that no player takes it while the bot plays."""
        # The first number free, as meeple serve's: the bucket is asked only for a name
        # no bot of this lobby holds (one bot of an old leader's may: then the next).
        held = {s.name.casefold() for s in self._seats.values() if s.bot}
        for n in itertools.count(1):
            name = f"{level}bot{n}"
            if name in held:
                continue
            if self.names is None or await self.names.claim(name, BOTS_HOLDER):
                return name
        raise AssertionError("unreachable")

    def _seat_bot(self, table_id: str, level: str) -> object:
        """Seat the bot the current ``addbot`` call named (:meth:`_apply`) at
        ``table_id``: the hook of the leader's lobby (Lobby.add_bot)."""
        table = self.lobby.table(table_id)
        if table is None:
            raise NoSuchTable(table_id)
        check_bot(table.game, level)
        name = self._naming.pop(level, None)
        if name is None:
            raise TableError("no bot name was claimed for this call")
        seat = self._seat(
            {"route": f"bot~{name}", "name": name, "protocol": "bot", "bot": True, "level": level}
        )
        try:
            self.lobby.sit(table_id, seat)
        except TableError:
            self.bot_gone(seat)
            raise
        if table.start_rule is StartRule.READY:
            self.lobby.ready(seat)
        return seat

    def bot_gone(self, seat: ProxySeat) -> None:
        """A bot's table closed, or its room ended: it leaves the lobby, its name is free."""
        if self._seats.get(seat.route) is seat:
            del self._seats[seat.route]
        if self.names is not None:
            names = self.names
            self.spawn(names.release(seat.name, BOTS_HOLDER), f"bot {seat.name}")

    def _room_over(self, ticket: RoomTicket) -> None:
        for seat in ticket.seats:
            if isinstance(seat, ProxySeat) and seat.bot:
                self.bot_gone(seat)

    # --- a CMPN402 contest (meeple.node.contest) -------------------------------------------

    def seat_of(self, info: Mapping[str, Any]) -> ProxySeat:
        """The seat an edge described (a contest's agent, restored from the state)."""
        return self._seat(info)

    def later(self, action: Callable[[], object]) -> None:
        """``action`` once the change being applied is written (or now, outside one)."""
        self._later(action)

    def contest_room(self, key: QueueKey, seats: list[Seat]) -> RoomTicket:
        """A contest game's room, to open on a rooms node as a started table's is."""
        return self._ticket(RoomTicket(self, key, seats))

    def admin_room(self, uid: str, action: str) -> None:
        """The referee's ``action`` (stop, pause, resume) on a contest game's room, asked
        of its owner as an edge's admin asks (:class:`~meeple.node.wire.Admin`), again
        while the room is being taken over."""
        self.spawn(self._admin_room(uid, action), f"contest {action} {uid}")

    async def _admin_room(self, uid: str, action: str) -> None:
        payload = wire.seal(wire.Admin(action, self.admin_token or ""))

        def again(error: BusError) -> bool:
            return passing(error) or "moved to another node" in str(error)

        try:
            answer = await ask(
                self.bus,
                self.ns.room_command(uid),
                payload,
                self.timing,
                wait=self.timing.admin_act_wait,
                patience=self.timing.admin_act_for,
                again=again,
            )
        except BusError as e:
            logger.warning("%s: contest: %s of room %s: %s", self.name, action, uid, e)
            return
        logger.info("%s: contest: %s of room %s: %s", self.name, action, uid, answer[:200])

    async def _contest_call(self, _subject: str, call: ContestCall) -> Payload:
        """An edge's console (:class:`~meeple.node.contest.ContestCall`, by reference
        from an edge in this process): a read answered at once, an action applied as a
        change (written before it is answered)."""
        async with self._lock:
            if not self.leader.is_set():
                return BUSY
            contest = self.contest
            if contest is None:
                return wire.seal(ContestAnswer(False, "no CMPN402 contest on this cluster"))
            if call.action == "status":
                return wire.seal(contest.answer(call))
            answers: list[ContestAnswer] = []
            done = await self._change(lambda: answers.append(contest.answer(call)))
            if done != OK or not answers:
                return BUSY
            return wire.seal(answers[0])

    async def _contest_ticks(self) -> None:
        """Every ``heartbeat`` while leading: the running games' logs' ends (their
        results, once) and what time alone changes (rests, forfeits, resume windows)."""
        while True:
            await asyncio.sleep(self.timing.heartbeat)
            contest = self.contest
            if contest is None or not self.leader.is_set():
                continue
            try:
                for uid in contest.playing():
                    await self._contest_result(uid)
                if contest.due():
                    async with self._lock:
                        if self.leader.is_set():
                            await self._change(contest.tick)
            except (BusError, nats.errors.Error, OSError) as e:
                logger.warning("%s: contest: %s", self.name, e)
            except Exception:
                logger.exception("%s: contest tick failed", self.name)

    async def _contest_result(self, uid: str) -> None:
        contest, ends = self.contest, self._log_ends
        if contest is None or ends is None:
            return
        end = await ends(uid)
        if end is None:
            return
        async with self._lock:
            if self.leader.is_set() and uid in contest.playing():
                await self._change(lambda: contest.record(uid, end))

    # --- the edges' copies of the open tables --------------------------------------------

    def _table_changed(self, event: TableEvent) -> None:
        """Tell every edge of a table opened, changed, started or closed (their copy of
        the open tables: :meth:`meeple.node.edge.EdgeLobby.waiting`), numbered under
        this leader's epoch once the change is written (:class:`~meeple.node.wire.TableNews`)."""
        if self.leader.is_set():
            self._later(lambda: self._publish_news(event=event))

    def _news(self, **what: Any) -> wire.TableNews:
        """The next of this leader's table news (its number taken now)."""
        assert self.lease is not None
        if what.get("tables") is None:
            self._news_seq += 1
        return wire.TableNews(self.lease.epoch, self._news_seq, **what)

    def _publish_news(self, **what: Any) -> None:
        payload = wire.seal(self._news(**what))
        self.spawn(self.bus.publish(self.ns.lobby_events, payload), "publish")

    def _all_tables(self) -> tuple[Any, ...]:
        return tuple(self.lobby.tables())

    async def _tables(self, payload: bytes) -> Payload:
        """An edge asks for the whole list (it started, or missed some news): as of the
        last news published, the lock held so that no change is half told."""
        async with self._lock:
            if not self.leader.is_set():
                return BUSY
            return wire.seal(self._news(tables=self._all_tables()))

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        return spawn(self._tasks, coro, name)

    def _later(self, action: Callable[[], object]) -> None:
        """Do ``action`` now, or, while a call is applied, once its state is written."""
        if self._outbox is None:
            action()
        else:
            self._outbox.append(action)

    def send(self, subject: str, payload: Payload) -> None:
        self._later(lambda: self.spawn(self.bus.publish(subject, payload), "publish"))

    def opening(self, ticket: RoomTicket) -> None:
        """A table started: its room is to be opened (kept in the state until it is)."""
        self._opening[ticket.uid] = ticket
        self._later(lambda: self.spawn(ticket.open(), f"open {ticket.uid}"))

    def opened(self, ticket: RoomTicket) -> None:
        """A rooms node opened ``ticket``'s room (or none will): the state forgets it."""
        if self._opening.get(ticket.uid) is ticket:
            self.spawn(self._forget_opening(ticket.uid), f"opened {ticket.uid}")

    async def _forget_opening(self, uid: str) -> None:
        async with self._lock:
            # Written while this node holds the claimed state (a takeover's rooms are
            # opened before it serves); a fenced or lost leader's write changes nothing.
            if self._opening.pop(uid, None) is None or self.state.epoch is None:
                return
            try:
                await self._commit()
            except (StateFenced, nats.errors.Error, OSError) as e:
                self._stand_down(e)

    async def start(self) -> None:
        """Start campaigning; return once the first try for the lease is decided (this
        node leads and serves, or stands by), so a node's ready line says which."""
        self._beats = await self.bus.subscribe(self.ns.nodes, self._heartbeat)
        tried = asyncio.Event()
        self.spawn(self._campaign(tried), "lobby-campaign")
        self.spawn(self._edges_gone(), "lobby-edges")
        if self.contest is not None:
            self.spawn(self._contest_ticks(), "lobby-contest")
        await tried.wait()

    async def _heartbeat(self, subject: str, payload: bytes) -> None:
        self._heard[subject.rsplit(".", 1)[1]] = time.monotonic()

    async def _edges_gone(self) -> None:
        """The seats of an edge silent for ``timing.edge_silence`` seconds are disconnected,
        as when their connections close: a dead edge's seat must not hold a table (a
        READY table, Clarkson's, would never start; a FULL one would start a game for a
        connection that is gone)."""
        since = time.monotonic()
        silence = self.timing.edge_silence
        while True:
            await asyncio.sleep(self.timing.heartbeat)
            now = time.monotonic()
            if not self.leader.is_set() or now - since < silence:
                continue  # not long enough to have heard every live edge
            gone = [
                seat
                for seat in self._seats.values()
                if not seat.bot
                and now - self._heard.get(seat.route.rsplit("-", 1)[0], since) > silence
            ]
            if gone:
                async with self._lock:
                    if self.leader.is_set():
                        try:
                            await self._change(functools.partial(self._free, gone))
                        except Exception:
                            logger.exception("%s: freeing silent edges' seats failed", self.name)

    def _free(self, seats: list[ProxySeat]) -> None:
        """Disconnect the seats of silent edges (:meth:`_edges_gone`)."""
        for seat in seats:
            if self._seats.get(seat.route) is not seat:
                continue  # gone meanwhile
            edge = seat.route.rsplit("-", 1)[0]
            logger.warning("%s: %s's edge %s is silent; seat freed", self.name, seat.name, edge)
            self._seats.pop(seat.route, None)
            if self.contest is not None:
                self.contest.gone(seat)
            table = self.lobby.table_of(seat)
            if table is not None:  # if the edge lives after all, it hears of it
                seat.deliver(Dismissed(table.id))
            self.lobby.disconnect(seat)

    async def _campaign(self, tried: asyncio.Event) -> None:
        """Try for the lease until this node holds it; then take the state over, serve
        until the lease (or the state) is lost, and stand by again. ``tried`` is set
        once the first try is decided."""
        period = self.leases.ttl / 3
        while True:
            try:
                lease = await self.leases.acquire(lobby_key(), self.name)
            except (nats.errors.Error, OSError) as e:
                logger.warning("%s: trying for the lobby's lease: %s", self.name, e)
                lease = None
            if lease is None:
                tried.set()
                await asyncio.sleep(period)
                continue
            self.lease = lease
            self._lost.clear()
            self._keeper = self.leases.keep(lease, lambda _l: self._lost.set())
            try:
                async with self._lock:
                    restored = await self.state.claim(self.name, lease.epoch)
                    self._restore(restored)
            except (StateFenced, nats.errors.Error, OSError) as e:
                logger.warning("%s: could not take the lobby's state over: %s", self.name, e)
                await Leases.stop(self._keeper)
                await self._release()
                tried.set()
                await asyncio.sleep(period)
                continue
            for op in (*CALLS, "roomdone"):
                self._subs.append(
                    await self.bus.answer(
                        self.ns.lobby_requests(op),
                        self._handler(op),
                        wire.registry(),
                        queue="lobby",
                    )
                )
            self._subs.append(
                await self.bus.serve(self.ns.lobby_requests(TABLES), self._tables, queue="lobby")
            )
            self._subs.append(
                await self.bus.answer(
                    self.ns.lobby_requests(CONTEST_OP),
                    self._contest_call,
                    wire.registry(),
                    ContestCall,
                    queue="lobby",
                )
            )
            self.leader.set()
            METRICS.leader_change(True)
            tried.set()
            logger.info(
                "%s: lobby leader (epoch %d): %d open tables, %d rooms to open taken over",
                self.name,
                lease.epoch,
                len(self.lobby.tables()),
                len(self._opening),
            )
            await self._lost.wait()
            logger.warning("%s: lobby lease lost; standing by", self.name)
            self.leader.clear()
            METRICS.leader_change(False)
            await self._unserve()
            await Leases.stop(self._keeper)

    async def _release(self) -> None:
        """Give the lease up now (its keeper stopped), so a standby need not wait for the
        TTL: as the bucket has it, since renewals moved its revision on."""
        if self.lease is None:
            return
        with contextlib.suppress(Exception):
            current = await self.leases.holder(lobby_key())
            if current is not None and current.epoch == self.lease.epoch:
                await self.leases.release(current)

    async def _unserve(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        self._subs.clear()

    # --- the state ---------------------------------------------------------------------------

    def _snapshot(self) -> dict[str, Any]:
        """What a standby needs to carry on (module doc), JSON-safe."""
        tables = []
        for info in self.lobby.tables():
            table = self.lobby.table(info.id)
            assert table is not None
            tables.append(
                {
                    "id": table.id,
                    "game": table.game,
                    "variant": table.variant,
                    "size": table.size,
                    "rule": table.start_rule.value,
                    "settings": [list(pair) for pair in table.settings],
                    "seats": [_info(s) for s in table.seats],
                    "ready": [_info(s)["route"] for s in table.seats if id(s) in table.ready],
                }
            )
        opening = [
            {
                "uid": t.uid,
                "key": [t.key.game, t.key.players, t.key.variant, [*map(list, t.key.settings)]],
                "seats": [_info(s) for s in t.seats],
                "rejoin": list(t.rejoin_hashes),
            }
            for t in self._opening.values()
        ]
        snapshot: dict[str, Any] = {
            "version": 1,
            "tables": tables,
            "opening": opening,
            "callers": self._applied,
        }
        if self.contest is not None:
            snapshot["contest"] = self.contest.snapshot()
        return snapshot

    def _stand_down(self, why: Exception) -> None:
        """The state was not written: this node's lobby is ahead of it, so it leads no
        more (the next leader, maybe this node again, starts from the state)."""
        logger.warning("%s: the lobby's state not written (%s); standing down", self.name, why)
        self.leader.clear()
        self._lost.set()

    async def _commit(self) -> None:
        """Write the state (StateFenced: another leader has it now)."""
        await self.state.write(self.name, self._snapshot())

    def _restore(self, state: Mapping[str, Any]) -> None:
        """Carry on from ``state`` (module doc), in this node's lobby emptied first (it
        may be what this node had when it led before)."""
        self._opening.clear()
        self._applied = {str(k): int(v) for k, v in state.get("callers", {}).items()}
        self._outbox = []  # the seats were told all this already: say nothing now
        try:
            for room in self.lobby.rooms:
                ended = getattr(room, "ended", None)
                if callable(ended):  # a RoomTicket: the lobby forgets its seats
                    ended()
            for seat in list(self._seats.values()):
                self.lobby.disconnect(seat)
            self._seats.clear()
            for saved in state.get("tables", ()):
                if not saved["seats"]:
                    continue  # a table closes when its last seat leaves
                try:
                    table = self.lobby.create_table(
                        saved["game"],
                        saved["variant"],
                        int(saved["size"]),
                        StartRule(saved["rule"]),
                        dict(saved["settings"]),
                        table_id=saved.get("id"),
                    )
                    for info in saved["seats"]:
                        self.lobby.sit(table.id, self._seat(info))
                    for route in saved["ready"]:
                        self.lobby.ready(self._seats[route])
                except TableError as e:  # a game this node does not have, say
                    logger.error("%s: a table not taken over: %s: %r", self.name, e, saved)
            if self.contest is not None:
                self.contest.restore(state.get("contest"))
        finally:
            self._outbox = None
        # What the old leader may have died before telling (after it wrote the state):
        # each waiting seat hears its table as it stands, and every edge the whole list
        # under this leader's epoch (it replaces the edges' copies: a table the old
        # leader started or closed without telling them goes; its late news is older).
        for info in self.lobby.tables():
            waiting = self.lobby.table(info.id)
            if waiting is not None and waiting.seats:
                _tell_table(waiting)
        self._news_seq = 0
        self._publish_news(tables=self._all_tables())
        for saved in state.get("opening", ()):
            game, players, variant, settings = saved["key"]
            key = QueueKey(game, int(players), variant, tuple((k, v) for k, v in settings))
            seats: list[Seat] = [self._seat(i) for i in saved["seats"]]
            ticket = self._ticket(RoomTicket(self, key, seats, saved["uid"]))
            ticket.rejoin_hashes = list(saved["rejoin"])
            self._opening[ticket.uid] = ticket
            # Asked again, saying so: a rooms node that opened it answers from its log.
            self.spawn(ticket.open(), f"reopen {ticket.uid}")

    # --- the calls ---------------------------------------------------------------------------

    def _handler(self, op: str) -> Callable[[str, Any], Any]:
        async def handle(subject: str, value: object) -> bytes:
            async with self._lock:
                if not self.leader.is_set():
                    return BUSY
                return await self._apply(op, value, Namespace.sender_of(subject))

        return handle

    async def _apply(self, op: str, value: object, sender: str) -> bytes:
        """Apply one call (once: module doc) as a :meth:`_change`, handed over as a
        value (by reference in one process); ``sender``: the node that sent it (NATS
        permissions vouch for an edge's)."""
        if op == "roomdone":
            if not isinstance(value, str):
                raise wire.WireError("type", f"a {type(value).__name__} for roomdone")
            uid = value
            if self.contest is not None and uid in self.contest.playing():
                # A contest's game: its result is its log's end, read outside the lock.
                self.spawn(self._contest_result(uid), f"contest result {uid}")
                return OK
            ended = getattr(self.lobby.room_by_uid(uid), "ended", None)
            return await self._change(ended if callable(ended) else lambda: None)
        if not isinstance(value, LobbyCall):
            raise wire.WireError("type", f"a {type(value).__name__} for {op}")
        call = value
        route = str(call.seat.get("route", ""))
        if edge_of(route) != sender:
            # An edge calls for its own seats only (issue 30.1): the lobby would tell
            # another edge's seat what this call changed.
            logger.warning("lobby: %s from %s for seat %s refused", op, sender, route)
            raise ValueError("not a seat of this edge")
        # A call is word from its edge, as a heartbeat is: an edge that starts (or wakes
        # up) and calls before its first beat is heard is not taken for a dead one.
        self._heard[str(call.seat.get("route", "")).rsplit("-", 1)[0]] = time.monotonic()
        caller, number = getattr(call, "caller", ""), getattr(call, "number", 0)
        if caller and number <= self._applied.get(caller, 0):
            return OK  # applied before (the edge asked again): not twice
        if op == "addbot":
            level = str(call.args[1]) if len(call.args) > 1 else ""
            if level not in LEVELS:
                raise ValueError(f"no bot level {level!r} (levels: {', '.join(LEVELS)})")
            # Claimed before the change (the bucket is asked, the lock held); freed if
            # the change does not seat it.
            self._naming[level] = await self._bot_name(level)

        def change() -> None:
            if caller:
                self._applied.pop(caller, None)  # the most recent callers last
                self._applied[caller] = number
                while len(self._applied) > CALLERS_KEPT:
                    del self._applied[next(iter(self._applied))]
            self._call(op, call)

        try:
            return await self._change(change)
        finally:
            unused = self._naming.pop(level, None) if op == "addbot" else None
            if unused is not None and self.names is not None:
                self.spawn(self.names.release(unused, BOTS_HOLDER), f"bot {unused}")

    async def _change(self, change: Callable[[], object]) -> bytes:
        """Change the lobby (the lock held), write the state, then let out what the
        change caused (module doc): "ok"; "busy" when the state was not written (this
        node leads no more: the edge asks again, of whoever leads next). A refusal
        (``change`` raised) is raised once the state is written."""
        self._outbox = []
        failed: Exception | None = None
        try:
            change()
        except Exception as e:
            failed = e
        finally:
            outbox, self._outbox = self._outbox, None
        try:
            await self._commit()
        except (StateFenced, nats.errors.Error, OSError) as e:
            self._stand_down(e)
            return BUSY
        for action in outbox:
            action()
        if failed is not None:
            raise failed
        return OK

    def _call(self, op: str, call: LobbyCall) -> None:
        # An edge's seat is a connection's, never a server bot (only the leader seats
        # one: _seat_bot; a rooms node plays a seat marked so itself).
        seat = self._seat({**call.seat, "bot": False, "level": None})
        if op == "addbot":
            # The web's "add a bot" (meeple.node.edge.EdgeLobby.add_bot): _seat_bot.
            self.lobby.add_bot(str(call.args[0]), str(call.args[1]), by=seat)
            return
        if op == "create":
            # A browser's new table, under the id its edge chose (meeple.web.seat).
            table_id, game, variant, size, rule, settings = call.args
            self.lobby.create_table(
                game, variant, int(size), StartRule(rule), dict(settings), table_id=table_id
            )
            return
        if self.contest is not None and op == "join" and call.args[0].game == CONTEST_GAME:
            self.contest.enter(seat)  # an agent that sent NAME (meeple.node.contest)
            return
        if self.contest is not None and op in ("disconnect", "quit"):
            self.contest.gone(seat)
        method = getattr(self.lobby, op)
        if op in ("join", "sit") and isinstance(self.lobby.room_of(seat), RoomTicket):
            # The edge holds the seat's connection and knows its game is over (it
            # heard the end); the rooms node's "roomdone" may come a moment later.
            self.lobby.quit(seat)
        if op == "join":
            method(call.args[0], seat, rule=call.args[1] if len(call.args) > 1 else FULL)
        elif op == "sit":
            method(call.args[0], seat)
        else:
            method(seat, *call.args)  # renamed: the old name (Clarkson §3.6)
        if op in ("disconnect", "quit"):
            self._seats.pop(seat.route, None)

    def _seat(self, info: Mapping[str, Any]) -> ProxySeat:
        route = str(info["route"])
        seat = self._seats.get(route)
        if seat is None:
            seat = self._seats[route] = ProxySeat(self, info)
        else:
            seat.update(info)
        return seat

    async def stop(self) -> None:
        if self._beats is not None:
            with contextlib.suppress(BusError):
                await self._beats.close()
        await self._unserve()
        if self._keeper is not None:
            await Leases.stop(self._keeper)
        if self.leader.is_set():
            await self._release()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def _info(seat: Seat) -> dict[str, Any]:
    """What the state keeps of a seat (an edge's description of it)."""
    return dict(getattr(seat, "info", {"route": "", "name": seat.name}))


def _tell_table(table: Table) -> None:
    notice = QueueChanged(table.key, len(table.seats), tuple(s.name for s in table.seats), table.id)
    for seat in list(table.seats):
        try:
            seat.deliver(notice)
        except Exception:
            logger.exception("telling %s of its table failed", seat.name)

"""The ``rooms`` role: room actors, each owned by one node at a time, served over the bus.

A room here is the same :class:`~meeple.server.rooms.room.Room` ``meeple serve`` runs, made by
the game's own factory; only its ends are different:

- **its seats** are :class:`RemoteSeat`: a delivery is published, as the seat's view
  (the room's :meth:`~meeple.server.rooms.room.Room.seat_event`, which the room applies
  before any seat is handed an event, as in ``meeple serve``), on the seat's subject
  ``<ns>.seat.<edge>.<route>.<uid>``, where the edge holding the connection listens;
- **its inbox** is served on ``<ns>.room.<uid>.cmd.*`` (queue group ``room``), the last
  token the sending node's name: a :class:`~meeple.node.wire.Command` from an edge is
  submitted, and answered once the room has applied it, logged it and made its
  deliveries (``Room.on_committed``). A command, ``Dropped`` or ``Rebind`` for a seat
  whose route is another edge's is refused ("not a seat of this edge"): NATS lets an
  edge send only in its own name (:mod:`meeple.cluster.auth`), so an edge acts for its
  own seats only;
- **its log** is the room's JetStream subject (:class:`ClusterLog`, over
  :class:`~meeple.cluster.log.JetStreamLog`): fenced appends, awaited before any
  delivery (the room's write-ahead), so nothing is told that is not in the log. A write
  the fence refuses (another node claimed the room) mutes the room for good: what the
  command told is not delivered, and the node stops serving the room.

**Ownership.** A room is opened under a lease (``room.<uid>``, renewed every third of
its TTL) and the log claimed under the lease's epoch right after its genesis. Every
rooms node watches the leases: when one lapses (its owner was killed) or is released
with the log still open, the nodes race for the lease; the winner claims the log,
rebuilds the room with the game's restorer and serves it. Seats keep their routes
(the genesis has them), so the players' edges hear the game go on.

**Exactly once.** Each logged entry carries the command it came from (``cmd``:
``"<seat>:<n>"``), so a new owner knows the last command of each seat that reached the
log: an edge that asks again after a kill (its answer never came) gets "done" instead
of the move being applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meeple.bus.base import Bus, BusClosed, BusError, Payload, Subscription
from meeple.bus.schema import BUSY, DONE, OK, OVER, AdminAnswer, Rebound, encode
from meeple.bus.subjects import Namespace, edge_of
from meeple.cluster.lease import Lease, Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.cluster.registry import RejoinSeat, RejoinTokens
from meeple.node import spawn, wire
from meeple.node.views import ViewSource
from meeple.server.clock import Timer
from meeple.server.config import ClusterConfig
from meeple.server.lobby.cmpn402_console import check_token as same_token
from meeple.server.lobby.tables import QueueKey, Replaced
from meeple.server.metrics import METRICS
from meeple.server.rooms.room import Room, token_hash
from meeple.server.rooms.timecontrol import parse_time_control
from meeple.server.store.database import ActionLog, LogConflict
from meeple.web.seat import seat_view_json

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.lobby.bots import BotHost
    from meeple.server.lobby.tables import Lobby
    from meeple.server.ports import SeatPort
    from meeple.server.rooms.room import Seat

__all__ = ["ROOM_GAMES", "ClusterLog", "OpenRoom", "RemoteSeat", "RoomBots", "RoomsRole"]

logger = logging.getLogger(__name__)

#: What a room's owner answers on its command subject.
_RoomRequest = wire.Command | wire.Watch | wire.History | wire.Rebind | wire.Dropped | wire.Admin
_ROOM_REQUEST: Any = _RoomRequest

#: The games whose rooms a rooms node serves (each room hands its seats their views:
#: Room.seat_event).
ROOM_GAMES = frozenset({"scrabble", "santorini", "spectrangle", "cmpn402"})


@dataclass(frozen=True, slots=True)
class OpenRoom:
    """The lobby's request to open a room: the table's key and its seats, in order
    (each a mapping with ``route``, ``name``, ``protocol``, ``bot``, ``level``)."""

    uid: str
    key: QueueKey
    seats: tuple[Mapping[str, Any], ...]
    rejoin: tuple[str | None, ...] = ()
    # The leader's how-many-th ask (from 0): an ask again may find the room opened by a
    # node whose answer was lost, or its lease held by a node that died opening it.
    attempt: int = 0


class _Owned:
    """A room this node serves, and what the node knows of it."""

    def __init__(self, room: Room, lease: Lease) -> None:
        self.room = room
        self.lease = lease
        self.fenced = False  # the log refused a write: another node owns the room
        self.replaying = False  # a restored room's start (its players saw it, or not)
        self.seen: dict[int, int] = {}  # seat -> the last command number applied
        self.tags: dict[int, str] = {}  # id(command) -> its tag in the log
        self.waiting: dict[int, asyncio.Future[None]] = {}  # id(command) -> its answer
        self.held: dict[int, Timer] = {}  # browser seats held for a rejoin: their expiry
        self.serving: Subscription | None = None
        self.keeper: asyncio.Task[None] | None = None
        self.opened = asyncio.Event()  # its genesis is in the log, claimed by this node


class RemoteSeat:
    """A seat whose player is connected to an edge: deliveries go to its subject."""

    rejoinable = False

    def __init__(
        self, role: RoomsRole, owned: _Owned | None, index: int, info: Mapping[str, Any]
    ) -> None:
        self._role = role
        self.owned = owned
        self.index = index
        self.route: str = str(info["route"])
        self.name: str = str(info["name"])
        self.protocol: str = str(info.get("protocol", "unknown"))
        self.bot = bool(info.get("bot"))
        self.level = info.get("bot") if isinstance(info.get("bot"), str) else info.get("level")
        self.gone = False  # its edge died: its leave was applied
        self._subject = ("", "")  # (route, subject): its deliveries' subject, made once

    def subject(self, uid: str) -> str:
        """The seat's subject for room ``uid`` (formatted once per route)."""
        route, subject = self._subject
        if route != self.route:
            subject = self._role.ns.seat(self.route, uid)
            self._subject = (self.route, subject)
        return subject

    def deliver(self, event: object) -> None:
        owned = self.owned
        if owned is None or owned.fenced:
            return
        room = owned.room
        # ``event`` is the seat's view already (Room.seat_event). A browser's seat renders
        # the whole view after each event: built here, from the real room, as meeple
        # serve's web seat builds it (its own rack only).
        view = seat_view_json(room, self.index) if self.protocol == "web" else None
        logged = 0 if owned.replaying else len(room.logged_actions)
        delivery = wire.Delivery(
            room.uid, self.index, logged, event, owned.replaying, room.game_name, view
        )
        self._role.send(self.subject(room.uid), wire.seal(delivery))

    def replay(self, told: object, logged: int) -> wire.Delivery:
        """``told`` (the log's last action's event) again, as a replay (module doc)."""
        room = self.owned.room if self.owned is not None else None
        assert room is not None
        seen = room.seat_event(told, self.index)
        view = seat_view_json(room, self.index) if self.protocol == "web" else None
        return wire.Delivery(room.uid, self.index, logged, seen, True, room.game_name, view)


class RoomBots:
    """The server bots seated in this node's rooms: what a bot asks of where it plays
    (:class:`~meeple.server.lobby.bots.BotHost`). A bot's seat has no edge: the lobby's
    leader seated it (the web's "add a bot"), the room's genesis names its level, and it
    plays here, in the room's own process, with the room's own events (each is the
    bot's seat's view: :meth:`~meeple.server.rooms.room.Room.seat_event`), as in
    ``meeple serve``. A node that takes the room over seats it again from the log."""

    def __init__(self) -> None:
        self._owned: dict[int, _Owned] = {}  # id(bot) -> the room it plays in

    def add(self, bot: Seat, owned: _Owned) -> None:
        self._owned[id(bot)] = owned

    def room_of(self, seat: Seat) -> Room | None:
        owned = self._owned.get(id(seat))
        return None if owned is None or owned.fenced else owned.room

    def leave(self, seat: Seat) -> None:
        """A bot's table became its room before it got here: nothing to stand up from."""

    def forget(self, owned: _Owned) -> None:
        """``owned``'s room is no longer served here: its bots stop (their thoughts are
        dropped: a fenced room's room_of is None, and its task is cancelled)."""
        for key in [k for k, o in self._owned.items() if o is owned]:
            del self._owned[key]

    def __len__(self) -> int:
        return len(self._owned)


class _Waiting:
    """A bot's seat in a room rebuilt from its log, until the bot sits again
    (:func:`~meeple.server.lobby.bots.restore_bot`)."""

    protocol = "bot"

    def __init__(self, name: str) -> None:
        self.name = name

    def deliver(self, event: object) -> None:
        """Nothing reaches a bot before it sits again."""


class ClusterLog:
    """A room's :class:`~meeple.server.rooms.room.LogSink` over the node's JetStream log: each
    entry tagged with its command (module doc); a refusal fences the room."""

    def __init__(self, log: JetStreamLog, owned: _Owned) -> None:
        self._log = log
        self._owned = owned

    def open(self, uid: str, game: str, genesis: Mapping[str, Any]) -> Awaitable[object]:
        return self._guard(self._opened(uid, game, genesis))

    async def _opened(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        await self._log.open_log(uid, game, genesis)
        # Claimed at once: a writer that claimed stays refused once fenced out.
        lease = self._owned.lease
        await self._log.claim(uid, lease.owner, lease.epoch)
        self._owned.opened.set()

    def append(self, uid: str, seq: int, entry: Mapping[str, Any], at: float) -> Awaitable[object]:
        return self._guard(self._log.append_log(uid, seq, self._tagged(entry), at=at))

    def append_many(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> Awaitable[object]:
        tagged = [self._tagged(e) for e in entries]
        return self._guard(self._log.append_logs(uid, seq, tagged, at=at))

    def _tagged(self, entry: Mapping[str, Any]) -> Mapping[str, Any]:
        """The entry with the command it came from (module doc, "Exactly once")."""
        handling = self._owned.room.handling
        tag = self._owned.tags.get(id(handling[1])) if handling is not None else None
        return entry if tag is None else {**entry, "cmd": tag}

    def finish(self, uid: str, game: Mapping[str, Any]) -> Awaitable[object]:
        return self._guard(self._log.finish_log(uid, **game))

    async def _guard(self, write: Awaitable[object]) -> object:
        began = time.perf_counter()
        try:
            written = await write
            METRICS.log_written(time.perf_counter() - began)
            return written
        except LogConflict:
            self._owned.fenced = True
            raise


@dataclass
class RoomsRole:
    """The rooms role of one node; see the module doc. ``lobby`` holds the games'
    factories (a lobby nobody sits at: its games registered as ``meeple serve`` does)."""

    name: str
    bus: Bus
    ns: Namespace
    log: JetStreamLog
    leases: Leases
    lobby: Lobby
    wall_clock: Callable[[], float] = time.time
    # Seconds a browser seat whose connection or edge is gone is held for its rejoin
    # token (through any edge); 0: its room's leave rule applies at once.
    grace: float = 0.0
    # Where a held seat's token is found by the edges' rejoins (any lobby node reads it).
    tokens: RejoinTokens | None = None
    # The CMPN402 admin token (meeple node --admin-token): an organiser's request to a
    # room must carry it; None: this node takes no admin request (issue 30.1).
    admin_token: str | None = None
    # Its timings (command_wait: how long an edge's command waits for the room before
    # "busy", the edge asking again with the same number; edge_silence; token_ttl).
    timing: ClusterConfig = field(default_factory=ClusterConfig)
    rooms: dict[str, _Owned] = field(default_factory=dict)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _subs: list[Subscription] = field(default_factory=list)
    _taking: set[str] = field(default_factory=set)
    # Told of each room taken over: its uid and the seconds from the lapse to serving it.
    on_takeover: list[Callable[[str], None]] = field(default_factory=list)
    _heard: dict[str, float] = field(default_factory=dict)  # node -> its last heartbeat
    _started: float = 0.0
    _ended: set[str] = field(default_factory=set)  # rooms whose logs are closed
    # Draining (issue 35): no new room is opened or taken over here; the others do it.
    draining: bool = False
    # The rooms' own services (their lexicons, names, rng): what server bots play with.
    # None: this node seats no bot (a room with one is not opened here).
    services: Services | None = None
    bots: RoomBots = field(default_factory=RoomBots)
    # An edge in this process (its name, and its start's id in its seats' routes,
    # meeple.node.edge.EdgeLobby.start_id): a room taken over whose seat was on an
    # earlier start of that edge (this process's predecessor, which crashed) lost its
    # connection with that process: held for its rejoin or gone, as a silent edge's.
    edge_name: str | None = None
    edge_start: str | None = None
    _opening: Subscription | None = None
    views: ViewSource = field(init=False)

    def __post_init__(self) -> None:
        self.views = ViewSource(self.bus, self.ns, timing=self.timing)

    async def start(self) -> None:
        self._opening = await self.bus.serve(self.ns.rooms_open, self._open, queue="rooms")
        self._subs.append(self._opening)
        self._subs.append(await self.bus.subscribe(self.ns.nodes, self._heartbeat))
        self._started = time.monotonic()
        self._spawn(self._watch(), "rooms-watch")
        self._spawn(self._adopt_orphans(), "rooms-orphans")
        self._spawn(self._edges_gone(), "rooms-edges")

    # --- edges that die ----------------------------------------------------------------------

    def _stale(self, route: str) -> bool:
        """Whether ``route`` is a seat of an earlier start of this process's edge."""
        if self.edge_name is None or self.edge_start is None:
            return False
        edge, _, rest = route.rpartition("-")
        return edge == self.edge_name and not rest.startswith(f"{self.edge_start}_")

    def _seats_of_the_dead(self, owned: _Owned, entries: int) -> None:
        """A room just taken over: its seats on an earlier start of this process's edge
        are gone with that process (its connections died with it). A browser's is held
        for its rejoin; the others leave by their protocol's rule (Twente: the game ends,
        stored as ``server-restart``), as ``meeple serve``'s restart recovery does
        (:meth:`~meeple.server.rooms.room.Room.leave_at_restart`; docs/durability.md)."""
        room = owned.room
        stale = [
            index
            for index, seat in enumerate(room.seats)
            if isinstance(seat, RemoteSeat) and self._stale(seat.route)
        ]
        if room.finished or not stale:
            return  # a failover from another node, or nothing left to decide
        departed = set(room.departed())
        gone: list[RemoteSeat] = []
        for index in stale:
            seat = room.seats[index]
            assert isinstance(seat, RemoteSeat)
            if seat.gone or index in departed or index in owned.held:
                continue
            seat.gone = True
            held = self._hold(owned, seat)
            logger.info(
                "%s: room %s: %s's connection ended with the last process; the seat %s",
                self.name,
                room.uid,
                seat.name,
                "is held for its rejoin" if held else "leaves",
            )
            if not held:
                gone.append(seat)
        if gone:
            # Room.leave_at_restart, as meeple serve's recovery: a game that ends from it
            # is stored as server-restart.
            room.leave_at_restart(gone)
        # The line meeple serve's recovery writes (meeple.server.lobby.tables.Lobby.restore).
        logger.info(
            "%s: %s %s restored from its log (%d entries)%s",
            self.name,
            room.game_name,
            room.uid,
            entries,
            f"; gone: {', '.join(s.name for s in gone)}" if gone else "",
        )

    async def _heartbeat(self, subject: str, payload: bytes) -> None:
        self._heard[subject.rsplit(".", 1)[1]] = time.monotonic()

    async def _edges_gone(self) -> None:
        """A seat whose edge is silent for ``timing.edge_silence`` seconds lost its
        connection with the edge: its room's leave rule applies (Twente: the game ends,
        reason DISCONNECT), as when a connection closes."""
        while True:
            await asyncio.sleep(self.timing.heartbeat)
            now = time.monotonic()
            if now - self._started < self.timing.edge_silence:
                continue  # not long enough to have heard every live edge
            for owned in list(self.rooms.values()):
                if owned.fenced or owned.room.finished:
                    continue
                for seat in owned.room.seats:
                    if not isinstance(seat, RemoteSeat) or seat.gone:
                        continue
                    edge = seat.route.rsplit("-", 1)[0]
                    if now - self._heard.get(edge, -1e9) > self.timing.edge_silence:
                        seat.gone = True
                        held = self._hold(owned, seat)
                        logger.warning(
                            "%s: room %s: %s's edge %s is silent; the seat %s",
                            self.name,
                            owned.room.uid,
                            seat.name,
                            edge,
                            "is held for its rejoin" if held else "leaves",
                        )
                        if not held:
                            owned.room.leave(seat)

    # --- browser seats that come back (through any edge) -------------------------------------

    def _hold(self, owned: _Owned, seat: RemoteSeat) -> bool:
        """Hold ``seat`` (a browser's, with a rejoin token) for :attr:`grace` seconds, its
        token findable by any edge; False: not a seat that comes back (its leave rule
        applies now)."""
        room = owned.room
        hashes = room.rejoin_hashes
        key = hashes[seat.index] if seat.index < len(hashes) else None
        if seat.protocol != "web" or not key or self.grace <= 0 or room.finished:
            return False
        if seat.index not in owned.held:
            owned.held[seat.index] = self.lobby.clock.call_later(
                self.grace, lambda: self._expire(owned, seat)
            )
            if self.tokens is not None:  # a node taking the room over holds it too
                found = RejoinSeat(room.uid, seat.index, seat.route, held=True)
                self._spawn(
                    self.tokens.put(key, found, ttl=int(self.timing.token_ttl)), f"held {room.uid}"
                )
            room.log.info("%s dropped; seat held for %.0f s", seat.name, self.grace)
        return True

    async def _tokens(self, owned: _Owned, *, put: bool) -> None:
        """Make the room's browser seats' tokens findable by any edge (its owner opened or
        took the room), or spend them (the room is over)."""
        room = owned.room
        if self.tokens is None:
            return
        for index, seat in enumerate(room.seats):
            key = room.rejoin_hashes[index] if index < len(room.rejoin_hashes) else None
            if not key or getattr(seat, "protocol", "") != "web":
                continue
            try:
                if put:
                    route = getattr(seat, "route", None)
                    found = RejoinSeat(room.uid, index, route, index in owned.held)
                    await self.tokens.put(key, found, ttl=int(self.timing.token_ttl))
                else:
                    await self.tokens.take(key)
            except Exception as e:
                logger.warning("%s: room %s: rejoin token not kept: %r", self.name, room.uid, e)

    async def _routes(self, room: Room) -> list[RemoteSeat]:
        """A room rebuilt from its log: its browser seats taken back through another edge
        since its genesis are there now (their tokens' entries say where); the seats its
        old owner held for their rejoin (to be held here too)."""
        held: list[RemoteSeat] = []
        if self.tokens is None:
            return held
        departed = set(room.departed())  # their leave is in the log
        for index, seat in enumerate(room.seats):
            key = room.rejoin_hashes[index] if index < len(room.rejoin_hashes) else None
            if not key or not isinstance(seat, RemoteSeat) or seat.protocol != "web":
                continue
            try:
                found = await self.tokens.find(key)
            except Exception as e:
                logger.warning("%s: room %s: rejoin token not read: %r", self.name, room.uid, e)
                continue
            if found is not None and found.room == room.uid:
                if found.route:
                    seat.route = found.route
                if found.held and index not in departed:
                    held.append(seat)
        return held

    def _expire(self, owned: _Owned, seat: RemoteSeat) -> None:
        owned.held.pop(seat.index, None)
        room = owned.room
        if not room.finished and not owned.fenced and seat in room.seats:
            room.log.info("%s did not come back within %.0f s", seat.name, self.grace)
            room.leave(seat)

    def _rebind(self, owned: _Owned, request: wire.Rebind) -> bytes:
        """A new connection on any edge takes seat ``request.seat`` back with its token
        (as :meth:`meeple.server.lobby.tables.Lobby.rejoin`): the room tells it the game as it
        is (``Resumed``, on the new seat's subject); a connection still holding the seat
        is told it was ``Replaced``. The answer: the seat's name, and the number the new
        edge's commands for it go on from (a command is applied once: module doc)."""
        room = owned.room
        index = request.seat
        hashes = room.rejoin_hashes
        key = hashes[index] if 0 <= index < len(hashes) else None
        if room.finished or not key or token_hash(request.token) != key:
            raise ValueError("no seat is held for this token")
        old = room.seats[index]
        timer = owned.held.pop(index, None)
        if timer is not None:
            timer.cancel()
        elif isinstance(old, RemoteSeat) and not old.gone:
            # Taken from a connection still open (a second tab, another edge).
            self.send(self.ns.seat(old.route, "lobby"), wire.seal(Replaced(room.uid)))
        new = RemoteSeat(self, owned, index, {**request.info, "name": old.name})
        room.log.info("%s is back (%s)", old.name, new.route)
        room.rebind(old, new)
        if self.tokens is not None:
            # Where the seat is now, for a node that takes the room over later.
            found = RejoinSeat(room.uid, index, new.route)
            ttl = int(self.timing.token_ttl)
            self._spawn(self.tokens.put(key, found, ttl=ttl), f"route {room.uid}")
        return encode(Rebound(name=old.name, next=owned.seen.get(index, 0) + 1))

    async def stop_opening(self) -> None:
        """Drain (issue 35): leave the queue that opens new rooms (the lobby's requests go
        to the other rooms nodes) and take no room over; the rooms served go on."""
        self.draining = True
        if self._opening is not None:
            with contextlib.suppress(BusError):
                await self._opening.close()
            self._subs.remove(self._opening)
            self._opening = None
        logger.info("%s: draining: opens no new room, takes none over", self.name)

    async def stop(self, *, release: bool = True) -> None:
        """Stop serving; with ``release`` give every lease up at once (a clean stop: the
        other rooms nodes take the rooms over without waiting for a lapse)."""
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        for owned in list(self.rooms.values()):
            await self._drop(owned, release=release)
        self.views.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def send(self, subject: str, payload: Payload) -> None:
        """Publish from a room's delivery (which must not block): at once where the bus
        can (one process: the edge's seat hears it in this step, as ``meeple serve``'s
        room calls its seat), else in a task of its own. Called from the room's
        write-ahead step, after the command's entries are committed."""
        try:
            if self.bus.post(subject, payload):
                return
        except BusClosed:
            return
        self._spawn(self.bus.publish(subject, payload), "publish")

    def _spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        return spawn(self._tasks, coro, name)

    # --- opening a room -------------------------------------------------------------------

    async def _open(self, payload: bytes) -> bytes:
        request: OpenRoom = wire.loads(payload, OpenRoom)
        if request.key.game not in ROOM_GAMES:
            raise ValueError(f"{request.key.game} rooms are not served by rooms nodes yet")
        if request.attempt and await self.log.action_log(request.uid) is not None:
            return OK  # opened already: its owner serves it, or a takeover will
        lease = await self._open_lease(request)
        if lease is None:
            return OK  # another node opened it meanwhile
        factory, _restore = self.lobby.factories(request.key.game)
        owned = _Owned(Room([], uid=request.uid), lease)  # the real room comes next
        settings = dict(request.key.settings)
        seats: list[Seat] = []
        for i, info in enumerate(request.seats):
            if info.get("bot"):
                seats.append(self._bot(owned, request.key.game, info, settings.get("lexicon")))
            else:
                seats.append(RemoteSeat(self, owned, i, info))
        room = factory(request.key, list(seats))
        room.uid = request.uid
        room.rejoin_hashes = list(request.rejoin) or [None] * len(seats)
        room.clock = self.lobby.clock
        clock = settings.get("clock")
        if clock:  # the table's time control, as the lobby sets it in meeple serve
            room.time_control = parse_time_control(request.key.game, clock)
        owned.room = room
        await self._serve(owned)
        # Answered once the genesis is logged: from then on a takeover can rebuild the
        # room if this node dies; before, the leader's ask again opens it elsewhere.
        await asyncio.wait_for(owned.opened.wait(), self.timing.command_wait)
        logger.info("%s: opened %s %s for %s", self.name, request.key, room.uid, _names(room))
        return OK

    async def _open_lease(self, request: OpenRoom) -> Lease | None:
        """The new room's lease, or None if another node opened the room meanwhile.
        Asked again, the lease may be another node's: one still opening the room (its log
        appears), or one that died opening it (its lease lapses, no log: taken here)."""
        uid = request.uid
        lease = await self.leases.acquire(room_key(uid), self.name)
        until = time.monotonic() + 3 * self.leases.ttl + 1
        while lease is None and request.attempt and time.monotonic() < until:
            await asyncio.sleep(self.timing.open_poll)
            if await self.log.action_log(uid) is not None:
                return None
            lease = await self.leases.acquire(room_key(uid), self.name)
        if lease is None:
            raise ValueError(f"room {uid} is owned already")
        return lease

    async def _serve(self, owned: _Owned, told: object | None = None) -> None:
        """Serve ``owned``'s room from now on; ``told``: the last logged action's event,
        told again first (a replay, module doc of :mod:`meeple.node.wire`)."""
        room = owned.room
        room.journal = ClusterLog(self.log, owned)
        room.feed = self.views.feed  # spectators' views, for the edges that ask
        room.wall_clock = self.wall_clock
        room.on_committed.append(lambda seat, command: self._committed(owned, command))
        room.on_finished.append(lambda _room: self._finished(owned))
        self.rooms[room.uid] = owned
        owned.keeper = self.leases.keep(owned.lease, lambda _lease: self._lost(owned))
        owned.serving = await self.bus.answer(
            self.ns.room_commands(room.uid),
            lambda s, request: self._command(owned, request, Namespace.sender_of(s)),
            wire.registry(),
            _ROOM_REQUEST,
            queue="room",
            # Bounded by command_wait (then busy), and a command's tag outlives an asker
            # that stops waiting: a direct call in one process (Bus.answer).
            inline=True,
        )
        if told is not None:
            logged = len(room.logged_actions)
            for seat in room.seats:
                if isinstance(seat, RemoteSeat):
                    again = seat.replay(told, logged)
                    await self.bus.publish(self.ns.seat(seat.route, room.uid), wire.seal(again))
        room.start()
        self._spawn(self._tokens(owned, put=True), f"tokens {room.uid}")

    # --- commands -----------------------------------------------------------------------------

    async def _command(self, owned: _Owned, request: _RoomRequest, sender: str) -> Payload:
        """One request on the room's command subject (by reference in one process);
        ``sender``: the node that sent it (the subject's last token, which NATS
        permissions vouch for on an edge)."""
        room = owned.room
        route = _seat_route(room, request)
        if route is not None and edge_of(route) != sender:
            # An edge acts for its own seats only (issue 30.1): not for another edge's
            # seat, nor binding a seat to another edge's route.
            logger.warning(
                "room %s: %s from %s refused: seat route %s is another edge's",
                room.uid,
                type(request).__name__,
                sender,
                route,
            )
            raise ValueError("not a seat of this edge")
        if owned.fenced:
            raise ValueError(f"room {room.uid} moved to another node")
        if isinstance(request, wire.Watch):
            return self.views.watch(room, owned.lease.epoch)
        if isinstance(request, wire.Admin):
            return await self._admin(owned, request)
        if isinstance(request, wire.History):
            from meeple.web.replays import live_steps

            # Spectator views only, as meeple serve's history.json (web/replays.py).
            return wire.seal(None if room.finished else live_steps(room))
        if isinstance(request, wire.Rebind):
            return self._rebind(owned, request)
        if room.finished:
            return OVER
        if isinstance(request, wire.Dropped):
            seat = room.seats[request.seat] if 0 <= request.seat < len(room.seats) else None
            mine = isinstance(seat, RemoteSeat) and seat.route == request.route
            if isinstance(seat, RemoteSeat) and mine and not self._hold(owned, seat):
                room.leave(seat)
            return OK
        if isinstance(request.command, wire.Rejoin):
            # A new connection numbers its commands anew, from this one's (0) on.
            owned.seen[request.seat] = request.n - 1
        if request.n <= owned.seen.get(request.seat, 0):
            return DONE  # applied already (a retry after a lost answer)
        if not 0 <= request.seat < len(room.seats):
            raise ValueError(f"no seat {request.seat}")
        owned.seen[request.seat] = request.n
        seat = room.seats[request.seat]
        if isinstance(request.command, wire.Leave):
            room.leave(seat)
            return OK
        command = request.command
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # The tag goes with the command until the room has handled it (_committed), even
        # if this wait ends first (busy, or an asker that stopped waiting): its entries
        # are tagged all the same, so a new owner applies it once.
        owned.tags[id(command)] = f"{request.seat}:{request.n}"
        owned.waiting[id(command)] = answered
        room.submit(seat, command)
        try:
            async with asyncio.timeout(self.timing.command_wait):
                await answered
        except TimeoutError:
            return BUSY
        finally:
            owned.waiting.pop(id(command), None)
        if owned.fenced:
            raise ValueError(f"room {room.uid} moved to another node")
        return OK

    async def _admin(self, owned: _Owned, request: wire.Admin) -> bytes:
        """An organiser's request (:class:`~meeple.node.wire.Admin`), answered in JSON:
        ``{"owner", "view"}`` and, for an action, ``"result"``; ``{"owner", "error"}``
        when its token is not this node's (or this node has none), the room has no admin
        (only the CMPN402 referee's has), is over, or refuses the action now
        (``"refused": true``: the referee's own reason): an
        :class:`~meeple.bus.schema.AdminAnswer`."""
        room, action = owned.room, request.action
        view = getattr(room, "admin_view", None)
        act = getattr(room, "admin", None)
        answer: dict[str, Any] = {"owner": self.name, "epoch": owned.lease.epoch}
        if self.admin_token is None or not same_token(self.admin_token, request.token):
            # The edge checked the organiser's token; the owner checks it again, so a
            # stolen edge credential cannot stop, pause or read a game by itself.
            logger.warning(
                "%s: room %s: an admin %s without the admin token", self.name, room.uid, action
            )
            answer.update(error="the admin token is not this node's", refused=True)
        elif view is None or act is None:
            answer["error"] = f"a {room.game_name} room has no admin"
        elif action == "status":
            answer["view"] = view()
        elif room.finished:
            answer["error"] = "the game is over"
        else:
            try:
                answer["result"] = await asyncio.wait_for(
                    asyncio.shield(act(action)), self.timing.command_wait
                )
            except TimeoutError:
                answer["error"] = "the room did not apply it in time"
            except Exception as e:  # the referee's refusal (AdminRefused): why
                answer.update(error=str(e), refused=True)
            if owned.fenced:
                raise ValueError(f"room {room.uid} moved to another node")
            answer["view"] = view()
        return encode(AdminAnswer(**answer))

    def _committed(self, owned: _Owned, command: object) -> None:
        if owned.replaying:
            owned.replaying = False  # a restored room's start is done
        owned.tags.pop(id(command), None)
        waiting = owned.waiting.get(id(command))
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    # --- the end of a room here -------------------------------------------------------------

    def _finished(self, owned: _Owned) -> None:
        for waiting in owned.waiting.values():
            if not waiting.done():
                waiting.set_result(None)
        self._spawn(self._close(owned), "room-close")

    async def _close(self, owned: _Owned) -> None:
        room = owned.room
        if not owned.fenced:
            await self._tokens(owned, put=False)
            over = wire.seal(wire.RoomOver(room.uid))
            for seat in room.seats:
                route = getattr(seat, "route", None)
                if route:
                    await self.bus.publish(self.ns.seat(route, room.uid), over)
            with contextlib.suppress(BusError):
                await self.bus.request(
                    self.ns.lobby_request("roomdone"),
                    wire.seal(room.uid),
                    timeout=self.timing.ask_wait,
                )
        await self._drop(owned, release=True)
        logger.info(
            "%s: room %s closed%s", self.name, room.uid, " (fenced)" if owned.fenced else ""
        )

    async def _drop(self, owned: _Owned, *, release: bool) -> None:
        room = owned.room
        self.bots.forget(owned)
        for timer in owned.held.values():
            timer.cancel()
        owned.held.clear()
        if self.rooms.get(room.uid) is owned:
            del self.rooms[room.uid]
        if owned.fenced:
            self.views.forget(room.uid)  # another node owns it: it tells the spectators
        else:
            await self.views.room_gone(room, owned.lease.epoch)
        if owned.serving is not None:
            with contextlib.suppress(BusError):
                await owned.serving.close()
            owned.serving = None
        if owned.keeper is not None:
            await Leases.stop(owned.keeper)
            owned.keeper = None
        if release:
            with contextlib.suppress(Exception):
                await self.leases.release(owned.lease)
        task = getattr(room, "_task", None)
        if not room.finished and task is not None:
            owned.fenced = True  # nothing more leaves this node for it
            task.cancel()

    def _lost(self, owned: _Owned) -> None:
        logger.warning("%s: lease of room %s lost", self.name, owned.room.uid)
        owned.fenced = True
        owned.keeper = None
        self._spawn(self._drop_lost(owned), "room-lost")

    async def _drop_lost(self, owned: _Owned) -> None:
        """Drop a room whose lease lapsed under this node, then take it again if nobody
        else did. A lapse is reported once (:meth:`_watch`), and this node heard it while
        the room was still its own (a renewal late behind a stalled loop, a restore slower
        than the TTL): no event brings the room back, and with no other rooms node taking
        it the game would wait forever. :meth:`take_over` asks the lease and the log: a
        room another node took, or one that ended, stays where it is."""
        uid = owned.room.uid
        await self._drop(owned, release=False)
        await self.take_over(uid, lapsed=True)

    # --- taking rooms over ------------------------------------------------------------------

    async def _watch(self) -> None:
        async for event in self.leases.watch("room."):
            if event.state in ("lapsed", "released"):
                uid = event.key.removeprefix("room.")
                self._spawn(self.take_over(uid, lapsed=event.state == "lapsed"), f"take {uid}")

    async def _adopt_orphans(self) -> None:
        """Rooms whose logs are open and whose lease nobody holds (their owner died before
        this node watched, and the lapse marker is gone)."""
        for uid in await self.log.open_logs():
            if uid not in self.rooms and await self.leases.holder(room_key(uid)) is None:
                await self.take_over(uid)

    async def take_over(self, uid: str, *, lapsed: bool = False) -> bool:
        """Take room ``uid`` if its lease is free and its log open; whether it did."""
        if uid in self.rooms or uid in self._taking or uid in self._ended or self.draining:
            return False
        self._taking.add(uid)
        try:
            if await self.log.closed(uid):
                # A finished room's lease is released at its end: nothing to take (and a
                # closed log never opens again). A lapse means its owner died after the
                # end was logged: maybe before storing the game or telling the players.
                self._ended.add(uid)
                if lapsed:
                    await self._finish_for_the_dead(uid)
                return False
            lease = await self.leases.acquire(room_key(uid), self.name)
            if lease is None:
                return False
            try:
                log = await self.log.claim(uid, self.name, lease.epoch)
            except LogConflict as e:
                logger.info("%s: room %s not taken: %s", self.name, uid, e)
                await self.leases.release(lease)
                return False
            try:
                owned = self._restore(log, lease)
                for seat in await self._routes(owned.room):
                    self._hold(owned, seat)  # held by the old owner: held here (anew)
                told = owned.room.last_told(log)
            except Exception:
                logger.exception("%s: room %s does not replay; left to others", self.name, uid)
                await self.leases.release(lease)
                return False
            await self._serve(owned, told)
            self._seats_of_the_dead(owned, len(log.entries))
            # Edges whose spectators watched it under the old owner hear it go on now,
            # not at their next ask (meeple.node.views).
            self.views.watch(owned.room, lease.epoch)
            logger.info(
                "%s: took room %s over (%d entries, epoch %d)",
                self.name,
                uid,
                len(log.entries),
                lease.epoch,
            )
            METRICS.takeover()
            for callback in self.on_takeover:
                callback(uid)
            return True
        finally:
            self._taking.discard(uid)

    async def _finish_for_the_dead(self, uid: str) -> None:
        """Room ``uid``'s owner died after logging its end: store the game once, tell
        the seats the last action again (they drop it if they heard it) and that the
        room is over, and tell the lobby."""
        lease = await self.leases.acquire(room_key(uid), self.name)
        if lease is None:
            return
        try:
            await self.log.store_end(uid)
            log = await self.log.action_log(uid)
            if log is None:
                return
            owned = self._restore(log, lease, bots=False)
            room = owned.room
            await self._routes(room)
            told = room.last_told(log)
            over = wire.seal(wire.RoomOver(uid))
            for seat in room.seats:
                if not isinstance(seat, RemoteSeat):
                    continue
                subject = self.ns.seat(seat.route, uid)
                if told is not None:
                    again = seat.replay(told, len(log.entries))
                    await self.bus.publish(subject, wire.seal(again))
                await self.bus.publish(subject, over)
            with contextlib.suppress(BusError):
                await self.bus.request(self.ns.lobby_request("roomdone"), wire.seal(uid))
            logger.info("%s: room %s's owner died after its end; finished for it", self.name, uid)
        except Exception:
            logger.exception("%s: finishing room %s for its dead owner failed", self.name, uid)
        finally:
            await self.leases.release(lease)

    def _bot(self, owned: _Owned, game: str, info: Mapping[str, Any], lexicon: str | None) -> Seat:
        """The server bot the lobby seated at a table (``info``: its name, its level), to
        play in the table's room here (:class:`RoomBots`)."""
        if self.services is None:
            raise ValueError("this rooms node seats no bots")
        # The bots' players (meeple.ai) load with the first bot seated here: an edge and a
        # rooms node without bots never pay for them (issue 33, the node's start).
        from meeple.server.lobby.bots import make_bot

        level = info.get("level") or info.get("bot")
        bot = make_bot(
            self.services, game, str(info["name"]), str(level), self.bots, lexicon_name=lexicon
        )
        self.services.names.claim(bot.name, bot)  # the cluster's claim is the leader's
        self.bots.add(bot, owned)
        return bot

    def _restore(self, log: ActionLog, lease: Lease, *, bots: bool = True) -> _Owned:
        """Rebuild a room from its log under ``lease``; ``bots``: seat its server bots
        again (not for a room only finished for its dead owner)."""
        if log.game not in ROOM_GAMES:
            raise ValueError(f"{log.game} rooms are not served by rooms nodes yet")
        _factory, restore = self.lobby.factories(log.game)
        if restore is None:
            raise ValueError(f"{log.game} rooms cannot be restored")
        owned = _Owned(Room([], uid=log.uid), lease)
        owned.replaying = True  # its start was told to the players by the old owner
        infos = log.genesis["seats"]
        seats: list[Seat] = [
            _Waiting(info["name"]) if info.get("bot") else RemoteSeat(self, owned, i, info)
            for i, info in enumerate(infos)
        ]
        room = restore(log, list(seats))
        room.clock = self.lobby.clock
        room.resume_log(log)
        room.rejoin_hashes = [s.get("rejoin") for s in infos]
        owned.room = room
        departed = set(room.departed())
        for index, (waiting, info) in enumerate(zip(seats, infos, strict=True)):
            if bots and isinstance(waiting, _Waiting) and index not in departed:
                # The bot sits again (its Resumed comes once the room starts), as after
                # a restart of meeple serve (meeple.server.lobby.tables.Lobby.restore).
                if self.services is None:
                    raise ValueError("this rooms node seats no bots")
                from meeple.server.lobby.bots import restore_bot

                bot = restore_bot(self.services, room, waiting, info, host=self.bots)
                self.bots.add(bot, owned)
        for entry in log.entries:
            tag = entry.entry.get("cmd")
            if isinstance(tag, str):
                seat, _, n = tag.partition(":")
                owned.seen[int(seat)] = max(owned.seen.get(int(seat), 0), int(n))
        return owned


def _names(room: Room) -> str:
    return ", ".join(f"{s.name} ({getattr(s, 'protocol', '?')})" for s in room.seats)


def _seat_route(room: Room, request: object) -> str | None:
    """The edge route a request acts for (its sender must be that route's edge), or None
    for a request any node may send (a spectator's, an organiser's). A seat without a
    route (a bot's, played by the room itself) gives ``""``: no edge's."""
    if isinstance(request, wire.Rebind):
        return str(request.info.get("route") or "")
    if isinstance(request, wire.Dropped):
        return request.route
    if isinstance(request, wire.Command):
        if isinstance(request.command, wire.Rejoin):
            return request.command.route
        if 0 <= request.seat < len(room.seats):
            return str(getattr(room.seats[request.seat], "route", None) or "")
    return None


def _conforms(seat: RemoteSeat, bots: RoomBots) -> tuple[SeatPort, BotHost]:
    """What mypy checks and nothing calls: a rooms node's seat is the seat port, and
    its bots' host what a bot needs (as meeple serve's lobby)."""
    return seat, bots

"""The ``edge`` role: the protocol listeners, with the lobby and the rooms on other nodes.

The listeners are ``meeple serve``'s own (``meeple.server.app.LISTENERS``), unchanged:
what they see as their lobby is an :class:`EdgeLobby`, and a room they play in is a
:class:`RemoteRoom`. Each connection's seat gets a *route* (``<node>-<n>``, one subject
token); everything for it — the lobby's events and its rooms' — arrives on
``<ns>.seat.<node>.<route>.*``, under this edge's own seats (``<ns>.seat.<node>.>``, all
its NATS user may hear: :mod:`meeple.cluster.auth`):

- ``….<route>.lobby``: what the lobby's leader tells the seat (a table changed, the
  queue filled), delivered to the dialect as it is;
- ``….<route>.<uid>``: a :class:`~meeple.node.wire.Delivery` of room ``uid``:
  the first one binds the seat to a :class:`RemoteRoom` (``lobby.room_of(seat)``), each
  is delivered to the dialect, and :class:`~meeple.node.wire.RoomOver` forgets it.

A seat's commands go to the room's owner by request (:meth:`RemoteRoom.submit`) on
``<ns>.room.<uid>.cmd.<node>``, whose last token the owner checks against the seat's
route (an edge acts for its own seats only), one at a time and in order, numbered, and
asked again with the same number until an answer comes: while a rooms node is killed and
another takes the room over, the edge keeps the connection and the command waits; the
new owner applies it once.

Lobby calls (join, ready, renamed, leave, disconnect, …) go to the leader as requests, in
order, each numbered and asked again until a leader answers (a new one after a failover
applies it once: :mod:`meeple.node.lobby`). Checks the dialects expect at once (a seat
in a game asking for another, a table size the game does not have) are made here with
the same rules, and what they ask of a seat's table at once (Clarkson: is it at one, did
it say READY) is answered from an :class:`EdgeTable` kept here from the seat's own calls
and what the leader told it. Names are cluster-wide (:mod:`meeple.node.names`).

What a dialect asks of the lobby's open tables (AM27's SERVERSTATE ``active`` and
REGISTER (B): :meth:`EdgeLobby.waiting`; all of them: :meth:`EdgeLobby.tables`, and
:attr:`EdgeLobby.on_change` for each change) is answered from this edge's copy of them,
kept from the leader's table news on ``<ns>.lobby.events``
(:class:`~meeple.node.wire.TableNews`, numbered under the leader's lease epoch): a
moment behind the leader, which those two tolerate (a stale ``active`` is harmless, and
a join of a queue that filled meanwhile opens a new table). The edge asks the leader for
its whole list when it starts and when it misses a number; a new leader publishes its
whole list when it takes over, which replaces every edge's copy, and an old leader's
late news is dropped.

The web's browser seats (:mod:`meeple.node.web`) use the same calls and rooms, plus what
a browser does: a table opened by id (:meth:`EdgeLobby.create_table`, :meth:`EdgeLobby.sit`),
a seat held when its socket closes (:class:`~meeple.node.wire.Dropped`), and a seat
taken back by its rejoin token through any edge (:meth:`EdgeLobby.rejoin`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from meeple.bus import schema
from meeple.bus.base import Bus, BusClosed, BusError, Subscription
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.ask import NoAnswer, ask, passing
from meeple.server.config import ClusterConfig
from meeple.server.lobby.tables import (
    DRAINING,
    AlreadyPlaying,
    BadTable,
    Dismissed,
    QueueChanged,
    QueueKey,
    Replaced,
    RoomFactory,
    RoomRestorer,
    Seated,
    StartRule,
    TableError,
    TableEvent,
    TableInfo,
    TooManyTables,
    UnknownGame,
    UnknownToken,
)
from meeple.server.ports import LobbyPort, NamesPort, RoomPort, TablePort
from meeple.server.rooms.room import Resumed, Seat, token_hash
from meeple.server.rooms.timecontrol import parse_time_control

__all__ = ["EdgeLobby", "EdgeTable", "LobbyCall", "RemoteRoom", "SeatInfo"]

logger = logging.getLogger(__name__)

# The lobby request for the leader's whole list of open tables (meeple.node.lobby).
TABLES = "tables"


def describe(seat: Seat, route: str) -> dict[str, Any]:
    """What the lobby and the room know of an edge's seat."""
    variants = getattr(seat, "variants", None)
    return {
        "route": route,
        "name": seat.name,
        "protocol": str(getattr(seat, "protocol", "unknown")),
        "variants": None if variants is None else sorted(variants),
        "bot": bool(getattr(seat, "bot", False)),
        "level": getattr(seat, "level", None),
    }


SeatInfo = Mapping[str, Any]


@dataclass
class EdgeTable:
    """What an edge knows of the table a seat of its sits at (the leader has the table):
    its kind, its id once the leader told it (:class:`~meeple.server.lobby.tables.Seated`), and
    whether the seat said it is ready. Kept from the seat's own calls, which reach the
    leader in order, so it says what the leader's lobby will."""

    key: QueueKey
    rule: StartRule
    id: str = ""
    ready: bool = False


@dataclass(frozen=True, slots=True)
class LobbyCall:
    """One lobby call from an edge: the method, the seat, its arguments; ``caller`` (the
    edge, one per process) and ``number`` (its calls', in order) let the leader apply a
    call asked again once (the leader died, or its answer was late). Crosses the bus
    (meeple.node.wire): the arguments are plain values, a QueueKey and a StartRule."""

    op: str
    seat: SeatInfo
    args: tuple[Any, ...]
    caller: str = ""
    number: int = 0


class RemoteRoom:
    """A room on a rooms node, as one seat of this edge plays in it."""

    def __init__(
        self,
        lobby: EdgeLobby,
        uid: str,
        seat: Seat,
        index: int,
        first: asyncio.Future[int] | None = None,
    ) -> None:
        self.lobby = lobby
        self.uid = uid
        self.id = uid
        self.seat = seat
        self.index = index
        self.finished = False
        self.game: object = None  # the seat's view of the game, from the last delivery
        self.game_name = ""
        # A browser seat's whole view as its owner built it: (data, JSON), from the last
        # delivery (meeple.web.seat reads it instead of building one here).
        self.seat_data: tuple[dict[str, Any], str] | None = None
        self.logged = 0
        # The number of this seat's first command here: 1, or, for a seat taken back
        # from another connection, what the owner said (its commands go on numbered).
        self._first = first
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    @property
    def lexicon_name(self) -> str | None:
        """A Scrabble room's word list (its seat's view names it), for the preview."""
        if self.seat_data is None:
            return None
        name = self.seat_data[0].get("lexicon")
        return name if isinstance(name, str) else None

    def seat_index(self, seat: Seat) -> int | None:
        """The index of the seat this edge plays here (None: another seat)."""
        return self.index if seat is self.seat else None

    def submit(self, seat: Seat | None, command: object) -> None:
        if self.finished:
            return
        self._queue.put_nowait(command)
        if self._task is None:
            # Kept by the lobby until done: a seat's handler may let go of its room while
            # the last command (its Dropped) is still on its way.
            self._task = self.lobby.keep(
                asyncio.get_running_loop().create_task(self._send(), name=f"edge room {self.uid}")
            )

    def leave(self, seat: Seat) -> None:
        self.submit(seat, wire.Leave())

    def dropped(self, route: str) -> None:
        """The browser's connection is gone: the owner holds the seat for its rejoin."""
        self.submit(self.seat, wire.Dropped(self.index, route))

    async def _send(self) -> None:
        subject = self.lobby.ns.room_command(self.uid)
        numbers = itertools.count(1 if self._first is None else await self._first)
        while not self.finished:
            command = await self._queue.get()
            if isinstance(command, wire.Dropped):  # not a seat's command: not numbered
                payload = wire.seal(command)
            else:
                payload = wire.seal(wire.Command(self.index, next(numbers), command))
            # Asked until the room applied it or is over for this seat (the same number:
            # the owner applies it once, wherever the room moved meanwhile).
            try:
                await ask(
                    self.lobby.bus,
                    subject,
                    payload,
                    self.lobby.timing,
                    forever=True,
                    going=lambda: not self.finished,
                    again=self._again,
                )
            except BusClosed:
                return
            except NoAnswer:
                return  # over for this seat
            if isinstance(command, wire.Dropped | wire.Leave):
                # The seat left, or its connection is gone: nothing more comes from it here
                # (a rejoin plays on through a room of its own), so the sender ends rather
                # than wait forever.
                self.finished = True
                return

    def _again(self, error: BusError) -> bool:
        """Every error is asked again (a room moving, an owner that failed)."""
        if not passing(error):
            logger.warning("room %s: %s; asking again", self.uid, error)
        return True

    def received(self, delivery: wire.Delivery) -> None:
        game = getattr(delivery.event, "game", None)
        if game is not None:
            self.game = game
            if getattr(game, "is_over", False):
                # The seat is told its game ended: the room is over for it now, as a
                # room of meeple serve is finished before it tells its seats the end
                # (Clarkson's USERSET right after WINNER is no rename in a game, §3.5).
                # The owner's RoomOver, and the leader's roomdone, come a moment later.
                self.finished = True
        if delivery.game:
            self.game_name = delivery.game
        if delivery.view is not None:
            self.seat_data = (json.loads(delivery.view), delivery.view)
            if self.seat_data[0].get("over"):
                self.finished = True
        self.logged = max(self.logged, delivery.logged)

    def close(self) -> None:
        self.finished = True
        if self._task is not None:
            self._task.cancel()


class EdgeLobby:
    """What an edge's dialects see as the lobby; see the module doc."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        node: str,
        *,
        timing: ClusterConfig | None = None,
        start: str | None = None,
    ) -> None:
        """``start``: this start's id in its seats' routes (random unless told: a node
        tells its rooms role the same, :attr:`meeple.node.rooms.RoomsRole.edge_start`)."""
        self.bus = bus
        self.timing = timing or ClusterConfig()
        self.ns = ns.for_node(node)  # its requests name it: NATS lets it send no other's
        self.node = node
        self._routes: dict[int, str] = {}  # id(seat) -> route
        self._seats: dict[str, Seat] = {}  # route -> seat
        self._subs: dict[str, Subscription] = {}
        self._rooms: dict[int, RemoteRoom] = {}  # id(seat) -> its room
        self._pending_tables: dict[str, EdgeTable] = {}  # created here, nobody sat yet
        self._creating: list[tuple[Any, ...]] = []  # their create calls, sent with the sit
        self._tables: dict[int, EdgeTable] = {}  # id(seat) -> its table, until it starts
        self._variants: dict[str, Mapping[str, tuple[int, int]] | None] = {}
        self._numbers = itertools.count(1)
        # Seat routes are this start's own: a room taken over after a crash still names
        # the dead process's routes, which a restarted edge of the same name must not
        # hand out again (its new connection would be told the old seat's news, rack
        # included, or that it was replaced). The edge stays what precedes the last "-".
        self.start_id = start or secrets.token_hex(3)
        # Lobby calls are numbered per process (a restarted edge is another caller).
        self._caller_id = f"{node}.{secrets.token_hex(4)}"
        self._call_numbers = itertools.count(1)
        self._calls: asyncio.Queue[tuple[LobbyCall, asyncio.Future[None] | None]] = asyncio.Queue()
        self._caller: asyncio.Task[None] | None = None
        self._pending: dict[str, list[object]] = {}  # route -> events before subscribed
        self._open: dict[str, TableInfo] = {}  # the leader's open tables, oldest first
        self._table_sub: Subscription | None = None
        # The edge's name registry, for a browser seat taken back here (set by the node).
        self.names: NamesPort | None = None
        # Browser seats taking a seat back: its token, the number their commands go on
        # from (the owner's answer), and whether the seat was told it sits (Seated).
        self._rejoining: dict[int, tuple[str, asyncio.Future[int], list[bool]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        # The copy's version: the leader's lease epoch and the number of its last news.
        self._news_epoch = -1
        self._news_seq = 0
        self._syncing: asyncio.Task[None] | None = None
        self._held: list[wire.TableNews] = []  # news after a gap, until the whole list
        # Set when the edge drains before it stops (issue 35): no new table, no new game;
        # the games its seats play go on (:attr:`playing`).
        self.draining = False
        self.on_change: list[Callable[[TableEvent], None]] = []
        """Told of every change of this edge's copy of the open tables, as
        :attr:`meeple.server.lobby.tables.Lobby.on_change` is (a whole list taken from the
        leader is told as the tables it opened, changed and closed)."""

    async def start(self) -> None:
        """Follow the leader's table news, and ask it for its whole list (module doc)."""

        async def heard(subject: str, news: wire.TableNews | TableEvent) -> None:
            self._heard_news(news)

        self._table_sub = await self.bus.listen(
            self.ns.lobby_events, heard, wire.registry(), wire.TableNews | TableEvent
        )
        self._sync()

    # --- the leader's open tables: this edge's copy --------------------------------------
    #
    # The leader numbers its news under its lease epoch (wire.TableNews): the next
    # number is applied; anything older than the copy is dropped (an old leader that
    # woke up late, or already in a whole list taken since); a later epoch or a missed
    # number is held and makes the edge ask the leader for its whole list, which
    # replaces the copy, the news held after it applied then. A new leader
    # publishes its whole list when it takes over, so a table its predecessor started
    # or closed and died before telling leaves every edge's copy.

    def tables(self, game: str | None = None) -> list[TableInfo]:
        """The leader's open tables (of ``game``, or all) as this edge last heard, oldest
        first."""
        return [t for t in self._open.values() if game is None or t.game == game]

    def _heard_news(self, news: object) -> None:
        if isinstance(news, TableEvent):  # a leader that numbers nothing
            self._apply_table(news)
            return
        if not isinstance(news, wire.TableNews) or news.epoch < self._news_epoch:
            return  # a leader that lost the lobby since: its news is stale
        if news.tables is not None:
            if (news.epoch, news.seq) >= (self._news_epoch, self._news_seq):
                self._replace_tables(news)
                held, self._held = self._held, []
                for later in held:  # what came while the list was asked for
                    self._heard_news(later)
            return
        if news.epoch == self._news_epoch and news.seq <= self._news_seq:
            return  # in the list this edge took
        if news.epoch == self._news_epoch and news.seq == self._news_seq + 1:
            if isinstance(news.event, TableEvent):
                self._apply_table(news.event)
            self._news_seq = news.seq
            return
        # A later leader, or a number missed: held until the whole list comes.
        self._held.append(news)
        self._sync()

    def _apply_table(self, event: TableEvent) -> None:
        if event.kind in ("opened", "changed"):
            self._open[event.table.id] = event.table
        elif self._open.pop(event.table.id, None) is None and event.kind == "closed":
            return  # closed, and never heard opened: nothing changes here
        self._told(event)

    def _replace_tables(self, news: wire.TableNews) -> None:
        assert news.tables is not None
        fresh = {t.id: t for t in news.tables if isinstance(t, TableInfo)}
        old, self._open = self._open, fresh
        self._news_epoch, self._news_seq = news.epoch, news.seq
        for table_id, table in old.items():
            if table_id not in fresh:
                self._told(TableEvent("closed", table))
        for table_id, table in fresh.items():
            if table_id not in old:
                self._told(TableEvent("opened", table))
            elif old[table_id] != table:
                self._told(TableEvent("changed", table))

    def _told(self, event: TableEvent) -> None:
        for callback in list(self.on_change):
            try:
                callback(event)
            except Exception:
                logger.exception("a table subscriber failed")

    def _sync(self) -> None:
        """Ask the leader for its whole list (once at a time), until one answers."""
        if self._syncing is None or self._syncing.done():
            self._syncing = asyncio.get_running_loop().create_task(
                self._ask_tables(), name="edge lobby tables"
            )

    async def _ask_tables(self) -> None:
        subject = self.ns.lobby_request(TABLES)
        while True:
            # Until a leader answers: nobody leads now, and the next leader publishes
            # its list anyway.
            try:
                answer = await ask(
                    self.bus,
                    subject,
                    b"",
                    self.timing,
                    forever=True,
                    pause=self.timing.sync_pause,
                    again=self._tables_again,
                )
            except BusClosed:
                return
            self._syncing = None  # news it leaves held asks again
            try:
                news = wire.loads(answer, wire.TableNews)
            except wire.WireError as e:
                logger.warning("lobby: the open tables: %s", e)
                await asyncio.sleep(self.timing.sync_pause)
                continue
            self._heard_news(news)
            return

    @staticmethod
    def _tables_again(error: BusError) -> bool:
        if not passing(error):
            logger.warning("lobby: the open tables: %s", error)
        return True

    # --- the games (the listeners register theirs as with meeple serve) --------------------

    def register_game(
        self,
        game: str,
        factory: RoomFactory,
        *,
        variants: Mapping[str, tuple[int, int]] | None = None,
        restore: RoomRestorer | None = None,
    ) -> None:
        """Record ``game``'s variants, for the checks made here (rooms are made elsewhere)."""
        self._variants[game] = variants

    def has_game(self, game: str) -> bool:
        return game in self._variants

    def name_rule(
        self, game: str, variant: str, protocol: str, fits: Callable[[str], bool], rule: str
    ) -> None:
        """Name rules are the leader's to check, and it has none yet: only Clarkson has
        one (for seats of other protocols at its tables), and of the protocols on edges
        none but Clarkson can sit at a Clarkson table."""

    # --- what the dialects call ------------------------------------------------------------

    @property
    def playing(self) -> int:
        """Games this edge's seats play, not over for them (a drain waits for them)."""
        return len({room.uid for room in self._rooms.values() if not room.finished})

    def room_of(self, seat: Seat) -> RemoteRoom | None:
        return self._rooms.get(id(seat))

    def table_of(self, seat: Seat) -> EdgeTable | None:
        return self._tables.get(id(seat))

    def is_ready(self, seat: Seat) -> bool:
        table = self._tables.get(id(seat))
        return table is not None and table.ready

    def waiting(self, key: QueueKey) -> list[object]:
        """Who sits at the open table :meth:`join` would put a player of ``key`` at, as
        this edge last heard (``Lobby.waiting``'s answer, a moment late: module doc)."""
        for table in self._open.values():
            same = QueueKey(table.game, table.size, table.variant, table.settings) == key
            if same and table.start_rule is StartRule.FULL and len(table.seats) < table.size:
                return list(table.seats)
        return []

    # --- tables by id (the browser's create and sit: meeple.web.seat) ---------------------

    def create_table(
        self,
        game: str,
        variant: str,
        size: int,
        start_rule: StartRule = StartRule.FULL,
        settings: Mapping[str, str] | None = None,
        *,
        opener: object | None = None,
    ) -> EdgeTable:
        """Open a table at the leader, under an id chosen here (so the seat can sit at it
        in the next call, in order); what the leader refuses is told to the seat later.
        The checks the leader's lobby makes first are made here too, at once. (``opener``
        is ``Lobby.create_table``'s; tables per address are not capped on a cluster yet.)"""
        if self.draining:
            raise TooManyTables(DRAINING)
        if game not in self._variants:
            raise UnknownGame(f"no game named {game!r}")
        chosen = dict(settings or {})
        if "clock" in chosen:
            try:
                parse_time_control(game, chosen["clock"])
            except ValueError as e:
                raise BadTable(str(e)) from None
        self._check_size(QueueKey(game, size, variant))
        table_id = f"table-{self.node}-{secrets.token_hex(4)}"
        key = QueueKey(game, size, variant, tuple(sorted(chosen.items())))
        self._pending_tables[table_id] = EdgeTable(key, start_rule, table_id)
        self._creating.append((table_id, game, variant, size, start_rule.value, chosen))
        return self._pending_tables[table_id]

    def sit(self, table_id: str, seat: Seat) -> None:
        """Sit ``seat`` at the table ``table_id`` (the leader's ``Lobby.sit``): ``Seated``
        with its rejoin token comes from the leader, or the refusal."""
        if self.draining:
            raise TooManyTables(DRAINING)
        table = self._pending_tables.pop(table_id, None)
        created = [c for c in self._creating if c[0] == table_id]
        for c in created:
            self._creating.remove(c)  # asked for below, or never (refused here)
        room = self._rooms.get(id(seat))
        if room is not None and not (room.finished or getattr(room.game, "is_over", False)):
            raise AlreadyPlaying(f"{seat.name} is already in a game")
        if room is not None:
            room.close()
            del self._rooms[id(seat)]
        if table is None:
            info = self._open.get(table_id)
            key = (
                QueueKey(info.game, info.size, info.variant, info.settings)
                if info is not None
                else QueueKey("", 0)
            )
            rule = info.start_rule if info is not None else StartRule.FULL
            table = EdgeTable(key, rule, table_id)
        for c in created:
            self._call("create", seat, *c)
        self._tables[id(seat)] = table
        self._call("sit", seat, table_id)

    def _check_size(self, key: QueueKey) -> None:
        variants = self._variants[key.game]
        if variants is not None:
            if key.variant not in variants:
                raise BadTable(f"{key.game} has no variant {key.variant!r}")
            low, high = variants[key.variant]
            if not low <= key.players <= high:
                raise BadTable(
                    f"{key.game} ({key.variant}) takes {low} to {high} players, not {key.players}"
                )

    # --- a browser seat taken back through this edge --------------------------------------------

    def rejoin(self, token: str, seat: Seat) -> None:
        """Take back the seat of ``token``, held by its room's owner (its connection or
        its edge is gone) or still another connection's, through this edge: asked of a
        lobby node (where the token's seat is) and then of the room's owner, which
        rebinds the seat to this edge. ``Seated`` (then the game as it is) or a
        :class:`TableError` is delivered to ``seat`` when they answered."""
        if id(seat) in self._rooms or id(seat) in self._tables or id(seat) in self._rejoining:
            raise AlreadyPlaying(f"{seat.name} is already at a table or in a game")
        self.keep(asyncio.get_running_loop().create_task(self._rejoin(token, seat), name="rejoin"))

    async def _rejoin(self, token: str, seat: Seat) -> None:
        route = self.route(seat)
        await self._subscribe(seat, route)
        first: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        told = [False]
        self._rejoining[id(seat)] = (token, first, told)
        try:
            answer = await self._ask_rejoin(token, seat, route)
        except (BusError, ValueError, KeyError) as e:
            logger.info("rejoin through %s refused: %s", self.node, e)
            answer = None
        # Kept until the room's first delivery here (Resumed) makes the seat's room: the
        # owner's answer often comes before it.
        if answer is None:
            self._rejoining.pop(id(seat), None)
            first.cancel()
            room = self._rooms.pop(id(seat), None)
            if room is not None:
                room.close()
            self._tell(seat, UnknownToken("no seat is held for this token"))
            return
        uid, index, name, number = answer
        if self._routes.get(id(seat)) != route:
            # Its socket closed while the owner was taking it back: held again.
            self._rejoining.pop(id(seat), None)
            with contextlib.suppress(BusError):
                dropped = wire.seal(wire.Dropped(index, route))
                await self.bus.request(
                    self.ns.room_command(uid), dropped, timeout=self.timing.ask_wait
                )
            return
        first.set_result(number)
        if not told[0]:
            told[0] = True
            self._rejoined(seat, uid, name, token)

    async def _ask_rejoin(
        self, token: str, seat: Seat, route: str
    ) -> tuple[str, int, str, int] | None:
        found = await ask(
            self.bus,
            self.ns.lobby_request("rejoin"),
            schema.encode(schema.RejoinAsk(hash=token_hash(token))),
            self.timing,
            patience=self.timing.names_patience,
        )
        where = schema.decode(found, schema.SeatAt)
        if where.room is None:
            return None
        uid, index = where.room, where.seat
        rebind = wire.seal(wire.Rebind(index, token, describe(seat, route)))
        try:  # the room may be moving
            answer = await ask(self.bus, self.ns.room_command(uid), rebind, self.timing)
        except NoAnswer:
            return None
        bound = schema.decode(answer, schema.Rebound)
        return uid, index, bound.name, bound.next

    def _rejoined(self, seat: Seat, uid: str, name: str, token: str) -> None:
        seat.name = name
        if self.names is not None:
            self.names.claim(name, seat)
        self._tell(seat, Seated(uid, token))

    def join(self, key: QueueKey, seat: Seat, *, rule: StartRule = StartRule.FULL) -> None:
        if self.draining:
            raise TooManyTables(DRAINING)
        if key.game not in self._variants:
            raise UnknownGame(f"no game named {key.game!r}")
        room = self._rooms.get(id(seat))
        if room is not None and room.finished:
            # The seat heard its game end; the room's "over" may come a moment later.
            room.close()
            del self._rooms[id(seat)]
        elif room is not None:
            raise AlreadyPlaying(f"{seat.name} is already in a game")
        variants = self._variants[key.game]
        if variants is not None:
            if key.variant not in variants:
                raise BadTable(f"{key.game} has no variant {key.variant!r}")
            low, high = variants[key.variant]
            if not low <= key.players <= high:
                raise BadTable(
                    f"{key.game} ({key.variant}) takes {low} to {high} players, not {key.players}"
                )
        table = self._tables.get(id(seat))
        if table is None or table.key != key or table.rule is not rule:
            self._tables[id(seat)] = EdgeTable(key, rule)  # the leader's join moves it
        self._call("join", seat, key, rule)

    def ready(self, seat: Seat) -> None:
        """``seat`` says it is ready (READY tables; Clarkson RFC §3.8)."""
        table = self._tables.get(id(seat))
        if table is not None:
            table.ready = True
            self._call("ready", seat)

    def add_bot(self, table_id: str, level: str, *, by: Seat) -> None:
        """The web's "add a bot" (asked by the browser seat ``by``): the leader seats a
        server bot at ``table_id``; the bot plays on the rooms node that runs the table's
        room, never here (:mod:`meeple.node.lobby`, :class:`meeple.node.rooms.RoomBots`).
        A refusal comes back to ``by`` as a TableError."""
        self._call("addbot", by, table_id, level)

    def renamed(self, seat: Seat, old: str) -> None:
        """``seat`` took a new name: the leader tells its table (Clarkson RFC §3.6)."""
        if id(seat) in self._tables:
            self._call("renamed", seat, old)

    def leave(self, seat: Seat) -> None:
        self._tables.pop(id(seat), None)
        if id(seat) in self._routes:
            self._call("leave", seat)

    leave_queue = leave

    def disconnect(self, seat: Seat) -> None:
        """The connection is gone: its table seat is freed by the leader; its room (if
        any) applies its leave rule, or holds a browser's seat for its rejoin token."""
        self._leave_room(seat, dropped=bool(getattr(seat, "rejoinable", False)))

    def quit(self, seat: Seat) -> None:
        """``seat`` gives up its table or its game on purpose (a browser's leave: the
        room's leave rule applies at once, nothing is held)."""
        self._leave_room(seat, dropped=False)

    def _leave_room(self, seat: Seat, *, dropped: bool) -> None:
        room = self._rooms.pop(id(seat), None)
        if room is not None and not room.finished:
            if dropped:
                room.dropped(self._routes.get(id(seat), ""))
            else:
                room.leave(seat)
        self._tables.pop(id(seat), None)
        if id(seat) in self._routes:
            self._call("disconnect", seat)
            self._forget(seat)

    # --- a seat taken back through this edge (CMPN402: meeple.node.cmpn402_edge) ----------

    async def listen(self, seat: Seat) -> str:
        """The seat's route, subscribed: a room's deliveries reach the seat from now on."""
        route = self.route(seat)
        await self._subscribe(seat, route)
        return route

    def bind(self, seat: Seat, uid: str, index: int) -> RemoteRoom:
        """``seat`` plays seat ``index`` of room ``uid`` (it took it back) from now on."""
        room = self._rooms.get(id(seat))
        if room is None or room.uid != uid:
            room = self._rooms[id(seat)] = RemoteRoom(self, uid, seat, index)
        return room

    # --- the seat's subjects -----------------------------------------------------------------

    def route(self, seat: Seat) -> str:
        route = self._routes.get(id(seat))
        if route is None:
            route = f"{self.node}-{self.start_id}_{next(self._numbers)}"
            self._routes[id(seat)] = route
            self._seats[route] = seat
        return route

    async def _subscribe(self, seat: Seat, route: str) -> None:
        if route in self._subs:
            return
        pattern = self.ns.seat_sources(route)

        def heard(subject: str, message: object) -> None:
            source = subject.rsplit(".", 1)[1]
            # A room's subject carries its deliveries and its end; the lobby's, what the
            # leader tells the seat (its table's events, a refusal).
            if source != "lobby" and not isinstance(message, wire.Delivery | wire.RoomOver):
                raise wire.WireError("type", f"a {type(message).__name__} from a room")
            self._heard(route, source, message)

        # Values by reference in one process, handed to the seat in the room's own step
        # (as meeple serve's room calls its seat); decoded from the schema over NATS.
        self._subs[route] = await self.bus.hear(pattern, heard, wire.registry())

    def _heard(self, route: str, source: str, message: object) -> None:
        seat = self._seats.get(route)
        if seat is None:
            return
        if source == "lobby":
            table = self._tables.get(id(seat))
            if isinstance(message, Seated | QueueChanged) and table is not None:
                if not isinstance(message, QueueChanged) or message.key == table.key:
                    table.id = message.table or table.id
            elif isinstance(message, Dismissed):
                self._tables.pop(id(seat), None)
                if self._seat_again(seat, table, message):
                    return
            elif isinstance(message, Replaced):
                # Another connection took the seat with its token (a room's owner says).
                room = self._rooms.pop(id(seat), None)
                if room is not None:
                    room.close()
            self._tell(seat, message)
            return
        if isinstance(message, wire.RoomOver):
            room = self._rooms.get(id(seat))
            if room is not None and room.uid == message.uid:
                room.close()
                del self._rooms[id(seat)]
            return
        if not isinstance(message, wire.Delivery):
            return
        room = self._rooms.get(id(seat))
        # A replay is only for what the seat's current room may not have told it: not
        # what it was told already (the old owner did before it died), nor of a room it
        # has left since (its game ended and it sits elsewhere now); a room's start, to
        # a seat that has no room, is what the old owner died before telling.
        if message.replay and (
            (room is None and message.logged > 0)
            or (room is not None and (room.uid != message.uid or room.logged >= message.logged))
        ):
            return
        if room is None or room.uid != message.uid:
            if room is not None:
                room.close()
            rejoining = self._rejoining.pop(id(seat), None)
            room = RemoteRoom(
                self, message.uid, seat, message.seat, rejoining[1] if rejoining else None
            )
            self._rooms[id(seat)] = room
            self._tables.pop(id(seat), None)  # the table became this room
            if rejoining is not None and isinstance(message.event, Resumed) and not rejoining[2][0]:
                # Taken back: it sits (Seated) before it hears the game as it is.
                token, _first, told = rejoining
                told[0] = True
                name = message.event.players[message.event.you]
                self._rejoined(seat, message.uid, name, token)
        room.received(message)
        self._tell(seat, message.event)

    # --- a seat the leader freed while this edge was late ---------------------------------

    def _seat_again(self, seat: Seat, table: EdgeTable | None, dismissed: Dismissed) -> bool:
        """The leader frees the seats of an edge it has not heard for a while (it thinks
        it dead: :meth:`meeple.node.lobby.LobbyRole._edges_gone`), with ``Dismissed``.
        This edge lives (it was late: paused, overloaded) and the seat's connection too:
        it sits at a table of the same kind again, ready if it said so, as its client
        believes it still does (a Twente client waits for STARTGAME, a Clarkson one that
        said READY for STARTING); the dialect is told nothing. Not a bot's, nor a table
        the seat left since. Whether it was seated again."""
        if table is None or table.id not in ("", dismissed.table) or getattr(seat, "bot", False):
            return False
        logger.warning(
            "%s: the lobby freed %s's seat at %s (this edge was late); seated again",
            self.node,
            seat.name,
            dismissed.table,
        )
        try:
            self.join(table.key, seat, rule=table.rule)
        except TableError as e:
            logger.info("%s: %s not seated again: %s", self.node, seat.name, e)
            return False
        if table.ready:
            self.ready(seat)
        return True

    def _tell(self, seat: Seat, event: object) -> None:
        if isinstance(event, TableError) and getattr(seat, "protocol", "") != "web":
            return  # only the web's seat hears the leader's refusals (meeple.web.seat)
        try:
            seat.deliver(event)
        except Exception:
            logger.exception("delivering %s to %s failed", type(event).__name__, seat.name)

    def _forget(self, seat: Seat) -> None:
        self._rejoining.pop(id(seat), None)
        route = self._routes.pop(id(seat), None)
        if route is None:
            return
        self._seats.pop(route, None)
        sub = self._subs.pop(route, None)
        if sub is not None:
            asyncio.get_running_loop().create_task(_close(sub))

    # --- calls to the leader, in order ---------------------------------------------------------

    def _call(self, op: str, seat: Seat, *args: Any) -> None:
        route = self.route(seat)
        call = LobbyCall(op, describe(seat, route), args, self._caller_id, next(self._call_numbers))
        self._calls.put_nowait((call, None))
        if self._caller is None:
            self._caller = asyncio.get_running_loop().create_task(
                self._run_calls(), name="edge lobby calls"
            )

    async def _run_calls(self) -> None:
        while True:
            call, _done = await self._calls.get()
            route = call.seat["route"]
            seat = self._seats.get(route)
            if seat is not None and call.op != "disconnect":
                await self._subscribe(seat, route)
            # No leader now, or one that just lost the lobby (busy): a standby takes
            # over within the lease's TTL.
            try:
                await ask(self.bus, self.ns.lobby_request(call.op), wire.seal(call), self.timing)
            except BusClosed:
                return
            except NoAnswer:
                logger.error("lobby: %s for %s: no leader answers", call.op, route)
            except BusError as e:
                logger.info("lobby refused %s for %s: %s", call.op, route, e)
                if call.op in ("join", "sit", "create", "addbot") and seat is not None:
                    if call.op in ("join", "sit"):
                        self._tables.pop(id(seat), None)  # it sits nowhere
                    self._tell(seat, TableError(str(e)))

    def keep(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """Hold ``task`` until it is done (a task nobody holds may be collected while it
        waits), and cancel it at :meth:`close`."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._caller is not None:
            self._caller.cancel()
        if self._syncing is not None:
            self._syncing.cancel()
        if self._table_sub is not None:
            await _close(self._table_sub)
        for room in self._rooms.values():
            room.close()
        for sub in list(self._subs.values()):
            await _close(sub)
        self._subs.clear()


def _conforms(
    lobby: EdgeLobby, room: RemoteRoom, table: EdgeTable
) -> tuple[LobbyPort, RoomPort, TablePort]:
    """What mypy checks and nothing calls: an edge's lobby, remote room and table are the
    ports' (meeple.server.ports), as meeple serve's are."""
    return lobby, room, table


async def _close(sub: Subscription) -> None:
    with contextlib.suppress(BusError):
        await sub.close()

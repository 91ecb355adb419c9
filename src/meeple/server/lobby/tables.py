"""The lobby: tables of waiting players, for every game and protocol, and the rooms they become.

A *table* has a game, a variant, a size and a start rule, and seats bound to
dialects (any :class:`~meeple.server.rooms.room.Seat`: a protocol connection, a browser, a
bot). :attr:`StartRule.FULL` tables start when every seat is taken (Twente ENQUEUE,
AM27 REGISTER, Spectrangle ``request``: the old per-key queues); :attr:`StartRule.READY`
tables start when everyone seated said ready, whatever their number up to ``size``
(Clarkson RFC §3.8). When a table starts, the lobby makes a room for its seats with the
factory registered for the game, starts it, and forgets the table.

A seat is at most at one table or in one room. A seat only sits at a table whose
variant its protocol can express (its ``variants`` attribute, a set of ``(game,
variant)`` pairs; a seat without one, such as a bot or a browser, takes any): the
queue-style :meth:`Lobby.join` only ever matches tables of the seat's own variant,
and :meth:`Lobby.sit` by table id refuses the others with :class:`VariantNotExpressible`.

Every seat that sits is handed a rejoin token (:class:`Seated`). A dialect that can
carry it (``rejoinable = True``, the browser) keeps it; when such a seat's connection
drops mid-game, the lobby holds the seat for ``grace`` seconds on the injected clock
before the room applies its leave policy, and :meth:`Lobby.rejoin` with the token
binds a new connection to the seat (the room delivers
:class:`~meeple.server.rooms.room.Resumed`). The token also takes such a seat from a
connection that is still open (a browser's second tab, or a new socket before the
server noticed the old one die): the old connection is told :class:`Replaced`. The
other dialects leave at once, as before.

Exceptions::

    TableError
    ├── UnknownGame (also KeyError)
    ├── NoSuchTable (also KeyError)
    ├── BadTable (also ValueError): a variant or size the game does not have
    ├── AlreadyPlaying (also ValueError): the seat is in a running game
    ├── TableFull
    ├── TooManyTables: the cap on empty tables (opened, nobody sat yet) is reached
    ├── VariantNotExpressible: the seat's protocol cannot play the table's variant
    └── UnknownToken: no seat that can be taken back has this rejoin token
"""

from __future__ import annotations

import collections
import enum
import itertools
import logging
import secrets
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meeple.server.clock import Clock, SystemClock, Timer
from meeple.server.feed import Feed, game_topic
from meeple.server.rooms.room import END_STORE_UNAVAILABLE, Room, Seat, token_hash
from meeple.server.rooms.timecontrol import parse_time_control
from meeple.server.store.journal import Journal, server_journal

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.lobby.names import NameRegistry
    from meeple.server.ports import LobbyPort, RoomPort, TablePort
    from meeple.server.store.database import ActionLog

__all__ = [
    "DEFAULT_GRACE",
    "DRAINING",
    "LOBBY_TOPIC",
    "MAX_TABLES_PER_ADDRESS",
    "MAX_TABLES_PER_CONNECTION",
    "AlreadyPlaying",
    "BadTable",
    "Dismissed",
    "Lobby",
    "NameNotExpressible",
    "NoSuchTable",
    "Origin",
    "QueueChanged",
    "QueueKey",
    "Replaced",
    "SeatInfo",
    "SeatJoined",
    "SeatRenamed",
    "Seated",
    "StartRule",
    "Table",
    "TableError",
    "TableEvent",
    "TableFull",
    "TableInfo",
    "TooManyTables",
    "UnknownGame",
    "UnknownToken",
    "VariantNotExpressible",
    "expresses",
    "lobby_port",
    "server_lobby",
]

logger = logging.getLogger(__name__)

DEFAULT_GRACE = 30.0
# The feed topic of the lobby's snapshot (see :meth:`Lobby.snapshot`).
LOBBY_TOPIC = "lobby"
# Tables opened that nobody sat at yet (a table whose last seat leaves closes): a cap,
# so that a client creating tables in a loop cannot grow the lobby without bound.
MAX_EMPTY_TABLES = 1000
# Open tables one client address, and one connection, may have opened (issue 30.7: 1,100
# junk tables grew the lobby page to 268 KB); ``[limits]`` sets them (0: no limit).
MAX_TABLES_PER_ADDRESS = 16
MAX_TABLES_PER_CONNECTION = 4


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a seat's connection comes from: the client's address and the connection's
    id. A seat that has one (its ``origin`` attribute) is counted when it opens a table
    (:meth:`Lobby.create_table`); bots and stand-ins have none."""

    address: str
    connection: str


_table_ids = itertools.count(1)


def _table_id(given: str | None) -> str:
    """A new table's id; ``given``, an id from another process (a cluster's lobby leader
    taking its predecessor's tables over), is kept, and later ids of this process come
    after its number so that none is given twice."""
    global _table_ids
    if given is None:
        return f"table-{next(_table_ids)}"
    number = given.removeprefix("table-")
    if number.isdigit():
        _table_ids = itertools.count(max(next(_table_ids), int(number) + 1))
    return given


# --- errors ---------------------------------------------------------------------------


# The refusal of a table while the server drains before it stops (issue 35).
DRAINING = "the server is shutting down: no new game"


class TableError(Exception):
    """A table request that cannot be met; each dialect says why in its own words."""


class UnknownGame(TableError, KeyError):
    pass


class NoSuchTable(TableError, KeyError):
    pass


class BadTable(TableError, ValueError):
    pass


class AlreadyPlaying(TableError, ValueError):
    pass


class TableFull(TableError):
    pass


class TooManyTables(TableError):
    pass


class VariantNotExpressible(TableError):
    """The seat's protocol cannot play this variant (a Twente client at a Clarkson table)."""

    def __init__(self, protocol: str, game: str, variant: str) -> None:
        super().__init__(f"{protocol} cannot play {game} variant {variant!r}")
        self.protocol = protocol
        self.game = game
        self.variant = variant


class NameNotExpressible(TableError):
    """A protocol that plays at this table cannot carry the seat's name (a browser's
    ``x.y`` where Clarkson's RFC §2 names are letters and digits)."""

    def __init__(self, name: str, protocol: str, rule: str) -> None:
        super().__init__(
            f"{protocol.capitalize()} clients play at this table and cannot show the name "
            f"{name!r}: {rule}"
        )
        self.name = name
        self.protocol = protocol


class UnknownToken(TableError, KeyError):
    pass


# --- values ---------------------------------------------------------------------------


class StartRule(enum.Enum):
    """When a table becomes a game."""

    FULL = "full"  # every seat taken (Twente, AM27, Spectrangle queues)
    READY = "ready"  # everyone seated said ready; size is a maximum (Clarkson RFC §3.8)


@dataclass(frozen=True, slots=True)
class QueueKey:
    """Which game a player waits for: the game, how many players, and the variant.

    ``settings`` are a table's own choices, as sorted ``(name, value)`` pairs (issue 24:
    ``clock``, a time control such as ``"25+0"``; ``lexicon``, a Scrabble word list). A
    queue's key has none, so a player who only names a game and a size (Twente, AM27,
    Spectrangle) never lands at a table with a clock or a word list it is not told of.
    """

    game: str
    players: int
    variant: str = "standard"
    settings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class QueueChanged:
    """Delivered to every seat at a table when it changes: ``waiting`` of ``key.players``.

    When a table fills, the players matched are told ``waiting == key.players`` before
    their room starts (Twente INFORMQUEUE 2/2 comes before STARTGAME). ``names`` are
    the seats' names in order (Spectrangle ``waiting``); ``table`` is the table's id.
    """

    key: QueueKey
    waiting: int
    names: tuple[str, ...] = field(default=(), compare=False)
    table: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class SeatJoined:
    """``name`` sits at your table (or sat there before you: Clarkson USERJOIN, §3.7)."""

    table: str
    name: str


@dataclass(frozen=True, slots=True)
class SeatRenamed:
    """A seat at your table took a new name (Clarkson USERCHANGE, §3.6)."""

    table: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Seated:
    """You sit at ``table``; ``token`` takes the seat back after a dropped connection."""

    table: str
    token: str


@dataclass(frozen=True, slots=True)
class Replaced:
    """Another connection presented your rejoin token and has your seat now (at
    ``table``: a table's id, or the game's uid). You sit nowhere; your name went with it."""

    table: str


@dataclass(frozen=True, slots=True)
class Dismissed:
    """You no longer sit at ``table`` and were not the one who asked (a bot left alone)."""

    table: str


@dataclass(frozen=True, slots=True)
class SeatInfo:
    name: str
    protocol: str
    ready: bool


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What a lobby page shows of an open table."""

    id: str
    game: str
    variant: str
    size: int
    start_rule: StartRule
    seats: tuple[SeatInfo, ...]
    settings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class TableEvent:
    """For subscribers (:attr:`Lobby.on_change`): ``kind`` is opened, changed, started
    (``room`` is the new room's id) or closed (the last seat left)."""

    kind: str
    table: TableInfo
    room: str | None = None


def expresses(seat: Seat, game: str, variant: str) -> bool:
    """Whether ``seat``'s protocol can play ``variant`` of ``game``."""
    variants: Collection[tuple[str, str]] | None = getattr(seat, "variants", None)
    return variants is None or (game, variant) in variants


def _protocol(seat: Seat) -> str:
    return str(getattr(seat, "protocol", "unknown"))


def _is_bot(seat: Seat) -> bool:
    return bool(getattr(seat, "bot", False))


class Table:
    """Players waiting together for one game; see the module docstring."""

    def __init__(
        self,
        game: str,
        variant: str,
        size: int,
        start_rule: StartRule,
        *,
        fewest: int = 1,
        settings: tuple[tuple[str, str], ...] = (),
        table_id: str | None = None,
    ) -> None:
        self.id = _table_id(table_id)
        self.settings = settings
        self.game = game
        self.variant = variant
        self.size = size
        self.start_rule = start_rule
        self.fewest = fewest  # a READY table starts with no fewer players
        self.seats: list[Seat] = []
        self.ready: set[int] = set()  # id() of the seats that said ready

    @property
    def key(self) -> QueueKey:
        return QueueKey(self.game, self.size, self.variant, self.settings)

    @property
    def due(self) -> bool:
        """Whether the start rule says the game begins now (never bots among themselves)."""
        if not self.seats or all(_is_bot(s) for s in self.seats):
            return False
        if self.start_rule is StartRule.FULL:
            return len(self.seats) >= self.size
        return len(self.seats) >= self.fewest and all(id(s) in self.ready for s in self.seats)

    def info(self) -> TableInfo:
        seats = tuple(SeatInfo(s.name, _protocol(s), id(s) in self.ready) for s in self.seats)
        return TableInfo(
            self.id, self.game, self.variant, self.size, self.start_rule, seats, self.settings
        )


RoomFactory = Callable[[QueueKey, list[Seat]], Room]
# Builds a game's room from its log (restart recovery): the log and the stand-in seats.
RoomRestorer = Callable[["ActionLog", list[Seat]], Room]


@dataclass
class _Game:
    factory: RoomFactory
    # variant -> (fewest, most players); None: any variant and size (tests' toy games)
    variants: Mapping[str, tuple[int, int]] | None
    restore: RoomRestorer | None = None


class _Absent:
    """A seat whose player has not come back since a restart: hears nothing."""

    rejoinable = False

    def __init__(self, name: str, protocol: str) -> None:
        self.name = name
        self.protocol = protocol

    def deliver(self, event: object) -> None:
        pass


@dataclass
class _Hold:
    """A rejoinable seat whose connection dropped mid-game, held for the grace period."""

    seat: Seat
    room: Room
    timer: Timer


class _SeatRooms:
    """Which room each seat (by ``id``) plays in, indexed by room too, so that a room's
    end forgets its seats in O(seats of the room)."""

    def __init__(self) -> None:
        self._room: dict[int, Room] = {}
        self._seats: dict[int, dict[int, Seat]] = {}  # id(room) -> id(seat) -> seat

    def __contains__(self, key: int) -> bool:
        return key in self._room

    def __len__(self) -> int:
        return len(self._room)

    def get(self, key: int) -> Room | None:
        return self._room.get(key)

    def put(self, seat: Seat, room: Room) -> None:
        self.pop(id(seat), None)
        self._room[id(seat)] = room
        self._seats.setdefault(id(room), {})[id(seat)] = seat

    def pop(self, key: int, default: Room | None = None) -> Room | None:
        room = self._room.pop(key, None)
        if room is None:
            return default
        seats = self._seats.get(id(room))
        if seats is not None:
            seats.pop(key, None)
            if not seats:
                del self._seats[id(room)]
        return room

    def __delitem__(self, key: int) -> None:
        if self.pop(key) is None:
            raise KeyError(key)

    def drop_room(self, room: Room) -> list[Seat]:
        """Forget every seat of ``room``; the seats forgotten."""
        seats = self._seats.pop(id(room), {})
        for key in seats:
            self._room.pop(key, None)
        return list(seats.values())


class Lobby:
    """Open tables, the rooms they became, and held seats. Several games run at once."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        grace: float = DEFAULT_GRACE,
        names: NameRegistry | None = None,
        max_empty_tables: int = MAX_EMPTY_TABLES,
        feed: Feed | None = None,
        max_tables_per_address: int = MAX_TABLES_PER_ADDRESS,
        max_tables_per_connection: int = MAX_TABLES_PER_CONNECTION,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.max_empty_tables = max_empty_tables
        self.max_tables_per_address = max_tables_per_address
        self.max_tables_per_connection = max_tables_per_connection
        # Open tables by who opened them (issue 30.7): table id -> its opener's origin.
        self._opened_by: dict[str, Origin] = {}
        self._open_by_address: collections.Counter[str] = collections.Counter()
        self._open_by_connection: collections.Counter[str] = collections.Counter()
        self.grace = grace
        self.names = names
        self._games: dict[str, _Game] = {}
        # (game, variant) -> (protocol, whether it can carry a name, the rule in words)
        self._name_rules: dict[tuple[str, str], list[tuple[str, Callable[[str], bool], str]]] = {}
        self._tables: dict[str, Table] = {}  # open tables, in creation order
        self._table_of: dict[int, Table] = {}
        self._rooms = _SeatRooms()
        self._by_uid: dict[str, Room] = {}
        # Where every room started here writes its log (None: rooms keep no log).
        self.journal: Journal | None = None
        # Seats a server bot again in a restored room (set by meeple.server.lobby.bots).
        self.restore_bot: Callable[[Room, Seat, Mapping[str, Any]], object] | None = None
        # Seats a new server bot at a table (its id, the level): the web's "add a bot"
        # (:meth:`add_bot`). meeple serve's: meeple.server.lobby.bots.add_bot; a cluster's
        # lobby leader's: meeple.node.lobby (the bot then plays on the room's rooms node).
        self.seat_bot: Callable[[str, str], object] | None = None
        # Viewers (the web) watch the lobby and every room through this one feed.
        self.feed = feed if feed is not None else Feed()
        self._tokens: dict[str, Seat] = {}
        self._token_of: dict[int, str] = {}
        self._held: dict[str, _Hold] = {}
        self._held_in: dict[int, set[str]] = {}  # id(room) -> keys of its held seats
        self.on_change: list[Callable[[TableEvent], None]] = []
        """Subscribers told of every table opened, changed, started or closed."""
        # Set when the server drains before it stops (issue 35): no new table, no new game.
        self.draining = False

    # --- games --------------------------------------------------------------------------

    def register_game(
        self,
        game: str,
        factory: RoomFactory,
        *,
        variants: Mapping[str, tuple[int, int]] | None = None,
        restore: RoomRestorer | None = None,
    ) -> None:
        """Make ``game`` playable; ``variants`` maps each variant to its player range;
        ``restore`` rebuilds a room of it from its log (:meth:`restore`)."""
        self._games[game] = _Game(factory, variants, restore)

    def has_game(self, game: str) -> bool:
        return game in self._games

    def factories(self, game: str) -> tuple[RoomFactory, RoomRestorer | None]:
        """How ``game``'s rooms are made and restored (a rooms node makes them itself)."""
        spec = self._game(game)
        return spec.factory, spec.restore

    def variants(self, game: str) -> Mapping[str, tuple[int, int]] | None:
        return self._game(game).variants

    # --- what is where --------------------------------------------------------------------

    def tables(self, game: str | None = None) -> list[TableInfo]:
        """The open tables (of ``game``, or all), oldest first."""
        return [t.info() for t in self._tables.values() if game is None or t.game == game]

    def table(self, table_id: str) -> Table | None:
        return self._tables.get(table_id)

    def table_of(self, seat: Seat) -> Table | None:
        return self._table_of.get(id(seat))

    def queue_of(self, seat: Seat) -> QueueKey | None:
        table = self._table_of.get(id(seat))
        return table.key if table is not None else None

    def room_of(self, seat: Seat) -> Room | None:
        return self._rooms.get(id(seat))

    def is_ready(self, seat: Seat) -> bool:
        table = self._table_of.get(id(seat))
        return table is not None and id(seat) in table.ready

    def token_of(self, seat: Seat) -> str | None:
        return self._token_of.get(id(seat))

    def waiting(self, key: QueueKey) -> list[Seat]:
        """The seats at the open table :meth:`join` would put a player of ``key`` at."""
        table = self._match(key, StartRule.FULL)
        return list(table.seats) if table is not None else []

    @property
    def rooms(self) -> list[Room]:
        """The running rooms, oldest first."""
        return list(self._by_uid.values())

    def room_by_uid(self, uid: str) -> Room | None:
        """A running room by its uid (its URL); None once it has finished."""
        return self._by_uid.get(uid)

    def snapshot(self) -> dict[str, Any]:
        """The tables and running rooms, for viewers (JSON-safe; names and counts only).

        ``queues`` lists the tables someone sits at (the lobby page's "Waiting"),
        ``tables`` every open table, empty ones included (where a browser may sit).
        """
        tables = [_table_json(t) for t in self._tables.values()]
        rooms = []
        for room in self._by_uid.values():
            last = self.feed.last(game_topic(room.uid))
            # The room's last snapshot if someone watches it, else a view made now.
            view = (last.data.get("view") if last is not None else room.spectator_view()) or {}
            rooms.append(
                {
                    "uid": room.uid,
                    "game": room.game_name,
                    "players": [s.name for s in room.seats],
                    "protocols": [_protocol(s) for s in room.seats],
                    "scores": view.get("scores"),
                    "turn": view.get("turn"),
                }
            )
        trouble = self.journal.trouble() if self.journal is not None else None
        return {
            "queues": [t for t in tables if t["waiting"]],
            "tables": tables,
            "rooms": rooms,
            "store": trouble,
        }

    def publish(self) -> None:
        """Hand viewers a fresh lobby snapshot (a table changed, a room started or ended).

        With nobody watching the lobby the snapshot (which lists every room) is not
        built, only marked stale; the first viewer's subscription publishes it.
        """
        if self.feed.subscribers(LOBBY_TOPIC) == 0:
            self.feed.forget(LOBBY_TOPIC)
            return
        self.feed.publish(LOBBY_TOPIC, self.snapshot)

    @property
    def held(self) -> int:
        """How many dropped seats are held for their grace period."""
        return len(self._held)

    # --- tables -------------------------------------------------------------------------

    def create_table(
        self,
        game: str,
        variant: str,
        size: int,
        start_rule: StartRule = StartRule.FULL,
        settings: Mapping[str, str] | None = None,
        *,
        table_id: str | None = None,
        opener: Seat | None = None,
    ) -> Table:
        """Open an empty table; someone then sits at it with :meth:`sit`. ``settings``:
        the table's own choices (:class:`QueueKey`), checked by the caller; a ``clock``
        one is refused here if it is not a time control of the game. ``table_id``: the
        id it had in another process (a lobby leader's takeover; none: a new one).
        ``opener``: the seat that asks; with an ``origin`` (:class:`Origin`), the table
        counts against its address's and its connection's open tables until it starts or
        closes, and one past ``max_tables_per_address`` or ``max_tables_per_connection``
        is refused (:class:`TooManyTables`)."""
        if self.draining:
            raise TooManyTables(DRAINING)
        if table_id is not None and table_id in self._tables:
            raise BadTable(f"a table {table_id} is open already")
        chosen = tuple(sorted((settings or {}).items()))
        if "clock" in dict(chosen):
            try:
                parse_time_control(game, dict(chosen)["clock"])
            except ValueError as e:
                raise BadTable(str(e)) from None
        spec = self._game(game)
        if spec.variants is not None:
            if variant not in spec.variants:
                raise BadTable(f"{game} has no variant {variant!r}")
            low, high = spec.variants[variant]
            if not low <= size <= high:
                raise BadTable(f"{game} ({variant}) takes {low} to {high} players, not {size}")
        elif size < 1:
            raise BadTable("a table needs at least one seat")
        if sum(1 for t in self._tables.values() if not t.seats) >= self.max_empty_tables:
            raise TooManyTables(f"{self.max_empty_tables} tables are waiting for a first player")
        origin: Origin | None = getattr(opener, "origin", None)
        if origin is not None:
            self._check_opener(origin)
        fewest = spec.variants[variant][0] if spec.variants is not None else 1
        table = Table(
            game, variant, size, start_rule, fewest=fewest, settings=chosen, table_id=table_id
        )
        self._tables[table.id] = table
        if origin is not None:
            self._opened_by[table.id] = origin
            self._open_by_address[origin.address] += 1
            self._open_by_connection[origin.connection] += 1
        self._publish("opened", table)
        return table

    def _check_opener(self, origin: Origin) -> None:
        """Refuse a table past the opener's caps (issue 30.7)."""
        most = self.max_tables_per_connection
        if most and self._open_by_connection[origin.connection] >= most:
            raise TooManyTables(f"this connection has {most} open tables already")
        most = self.max_tables_per_address
        if most and self._open_by_address[origin.address] >= most:
            raise TooManyTables(f"your address has {most} open tables already")

    def _closed_table(self, table: Table) -> None:
        """``table`` is no longer open (it started or closed): its opener may open another."""
        origin = self._opened_by.pop(table.id, None)
        if origin is None:
            return
        for counts, key in (
            (self._open_by_address, origin.address),
            (self._open_by_connection, origin.connection),
        ):
            counts[key] -= 1
            if counts[key] <= 0:
                del counts[key]

    def open_tables_of(self, address: str) -> int:
        """How many open tables were opened from ``address``."""
        return self._open_by_address.get(address, 0)

    def join(self, key: QueueKey, seat: Seat, *, rule: StartRule = StartRule.FULL) -> Room | None:
        """Sit ``seat`` at the oldest open table of ``key`` and ``rule`` with a free seat,
        opening one when there is none (a queue); start and return the room when due."""
        self._game(key.game)
        if self.draining:
            raise TooManyTables(DRAINING)
        # Refusals come before a table is opened for the seat, so none is left empty.
        self._check_seat(seat, key.game, key.variant)
        table = self._match(key, rule, seat)
        if table is None:
            table = self.create_table(key.game, key.variant, key.players, rule, opener=seat)
        return self.sit(table.id, seat)

    def name_rule(
        self, game: str, variant: str, protocol: str, fits: Callable[[str], bool], rule: str
    ) -> None:
        """A listener of ``protocol`` plays ``variant`` of ``game``: every seat at such a
        table must have a name ``fits`` accepts (``rule`` says which, for the refusal).

        Every seat at one table is checked against the same rules (they are the
        variant's), so whoever sits later can be shown every name already there. A seat
        of ``protocol`` itself is not: its names are its protocol's own business (a
        Clarkson client sits, by §3.7, under its address before its USERSET)."""
        rules = self._name_rules.setdefault((game, variant), [])
        if all(p != protocol for p, _, _ in rules):
            rules.append((protocol, fits, rule))

    def _check_seat(self, seat: Seat, game: str, variant: str) -> None:
        """Refuse ``seat`` a table of ``variant`` of ``game`` if it is in a game already,
        its protocol cannot express the variant, or its name breaks a name rule there."""
        if id(seat) in self._rooms:
            raise AlreadyPlaying(f"{seat.name} is already in a game")
        if not expresses(seat, game, variant):
            raise VariantNotExpressible(_protocol(seat), game, variant)
        self._check_name(seat, game, variant)

    def _check_name(self, seat: Seat, game: str, variant: str) -> None:
        for protocol, fits, rule in self._name_rules.get((game, variant), ()):
            if protocol != _protocol(seat) and not fits(seat.name):
                raise NameNotExpressible(seat.name, protocol, rule)

    def sit(self, table_id: str, seat: Seat) -> Room | None:
        """Sit ``seat`` at a table by id (leaving any other table); the room if it started."""
        if self.draining:
            raise TooManyTables(DRAINING)
        table = self._tables.get(table_id)
        if table is None:
            raise NoSuchTable(table_id)
        self._check_seat(seat, table.game, table.variant)
        if self._table_of.get(id(seat)) is table:
            return None
        if len(table.seats) >= table.size:
            raise TableFull(table_id)
        self.leave(seat)
        for other in table.seats:
            # Clarkson §3.7: the newcomer hears of everyone there, and they of it.
            self._tell(seat, SeatJoined(table.id, other.name))
            self._tell(other, SeatJoined(table.id, seat.name))
        table.seats.append(seat)
        self._table_of[id(seat)] = table
        token = secrets.token_urlsafe(18)
        self._tokens[token] = seat
        self._token_of[id(seat)] = token
        self._tell(seat, Seated(table.id, token))
        if table.due:
            return self._start(table)
        self._notify(table)
        self._publish("changed", table)
        return None

    def ready(self, seat: Seat) -> Room | None:
        """``seat`` says it is ready (READY tables); the room if that started the table."""
        table = self._table_of.get(id(seat))
        if table is None:
            return None
        table.ready.add(id(seat))
        if table.due:
            return self._start(table)
        self._publish("changed", table)
        return None

    def renamed(self, seat: Seat, old: str) -> None:
        """``seat`` took a new name: tell the others at its table (Clarkson §3.6)."""
        table = self._table_of.get(id(seat))
        if table is None:
            return
        for other in table.seats:
            if other is not seat:
                self._tell(other, SeatRenamed(table.id, old, seat.name))
        self._publish("changed", table)

    def leave(self, seat: Seat) -> QueueKey | None:
        """Take ``seat`` from its table, if it sits at one; the others may start now."""
        table = self._table_of.pop(id(seat), None)
        if table is None:
            return None
        table.seats.remove(seat)
        table.ready.discard(id(seat))
        self._forget_token(seat)
        if table.seats and all(_is_bot(s) for s in table.seats):
            # Bots never play among themselves for nobody: the table closes.
            for bot in list(table.seats):
                table.seats.remove(bot)
                table.ready.discard(id(bot))
                del self._table_of[id(bot)]
                self._forget_token(bot)
                self._tell(bot, Dismissed(table.id))
        if not table.seats:
            del self._tables[table.id]
            self._closed_table(table)
            self._publish("closed", table)
        elif table.due:
            self._start(table)
        else:
            self._notify(table)
            self._publish("changed", table)
        return table.key

    leave_queue = leave

    def quit(self, seat: Seat) -> None:
        """``seat`` gives up its table or its game on purpose (a browser's Leave or
        Resign, issue 24): unlike :meth:`disconnect` nothing is held for a rejoin, and a
        running game applies its own leave rule at once (Scrabble's ends the game)."""
        self.leave(seat)
        room = self._rooms.pop(id(seat), None)
        if room is None:
            return
        self._forget_token(seat)
        if not room.finished:
            room.leave(seat)

    def disconnect(self, seat: Seat) -> None:
        """The seat's connection is gone: leave its table, hold its seat, or tell its room."""
        self.leave(seat)
        room = self._rooms.get(id(seat))
        if room is None:
            return
        token = self._token_of.get(id(seat))
        if (
            token is not None
            and getattr(seat, "rejoinable", False)
            and self.grace > 0
            and not room.finished
        ):
            self._hold(token_hash(token), seat, room)
            room.log.info("%s dropped; seat held for %.0f s", seat.name, self.grace)
            return
        del self._rooms[id(seat)]
        self._forget_token(seat)
        if not room.finished:
            room.leave(seat)

    def _hold(self, key: str, seat: Seat, room: Room) -> None:
        timer = self.clock.call_later(self.grace, lambda: self._expire(key))
        self._held[key] = _Hold(seat, room, timer)
        self._held_in.setdefault(id(room), set()).add(key)
        if self.names is not None and seat.name:
            # The name stays the seat's while it is held (nobody takes it meanwhile).
            self.names.release(seat.name, seat)
            self.names.claim(seat.name, self._held[key])

    def restore(self, log: ActionLog) -> Room:
        """Rebuild a room from its log after a restart and start it (docs/durability.md).

        Each seat is, until its player is back, a stand-in: a browser's is held for the
        grace period under its rejoin token's hash; a server bot sits again at once; a
        seat of a protocol that cannot take a client back lost its connection with the
        old process, and the room applies its own leave rule to it (the game ends with
        the reason ``server-restart`` if that rule ends it). A seat whose player had left
        the game before (:meth:`Room.departed`) stays empty.
        """
        spec = self._game(log.game)
        if spec.restore is None:
            raise UnknownGame(f"{log.game!r} rooms cannot be restored")
        seats: list[Seat] = [_Absent(s["name"], s["protocol"]) for s in log.genesis["seats"]]
        room = spec.restore(log, seats)
        room.clock = self.clock
        room.resume_log(log)
        room.feed = self.feed
        room.journal = self.journal
        room.rejoin_hashes = [s.get("rejoin") for s in log.genesis["seats"]]
        room.on_changed.append(lambda _room: self.publish())
        room.on_finished.append(self._room_finished)
        self._by_uid[room.uid] = room
        gone: list[Seat] = []
        departed = set(room.departed())
        for index, (seat, info) in enumerate(zip(seats, log.genesis["seats"], strict=True)):
            if index in departed:
                continue  # its leave is in the log: it is not held, nor does it leave again
            self._rooms.put(seat, room)
            if info.get("rejoin") and info["protocol"] == "web" and self.grace > 0:
                self._hold(info["rejoin"], seat, room)
            elif info.get("bot") and self.restore_bot is not None:
                self.restore_bot(room, seat, info)
            else:
                gone.append(seat)
        room.start()
        if gone:
            for seat in gone:
                del self._rooms[id(seat)]
            room.leave_at_restart(gone)
        logger.info(
            "%s: %s %s restored from its log (%d entries)%s",
            room.id,
            log.game,
            log.uid,
            len(log.entries),
            f"; gone: {', '.join(s.name for s in gone)}" if gone else "",
        )
        return room

    def halt_unwritten(self) -> None:
        """The journal overflows: stop every running game whose log it could not write
        (each tells its seats in its protocol) and store them when the store is back."""
        for room in list(self._by_uid.values()):
            if room.unwritten and not room.finished:
                room.log.error("halted: the store cannot keep this game's log")
                room.halt(END_STORE_UNAVAILABLE)

    def add_bot(self, table_id: str, level: str, *, by: Seat) -> object:
        """Seat a server bot at level ``level`` at the open table ``table_id``, asked by
        the seat ``by`` (the web's "add a bot"). Refused with the lobby's
        :class:`TableError` kinds (no such table, a full one, a game no bot plays, a
        server that seats no bots) or ValueError (no such level)."""
        if self.seat_bot is None:
            raise UnknownGame("this server seats no bots")
        return self.seat_bot(table_id, level)

    def seat_restored(self, seat: Seat, room: Room) -> None:
        """``seat`` (a server bot made again after a restart) plays in ``room``."""
        self._rooms.put(seat, room)

    def rejoin(self, token: str, seat: Seat) -> Room | Table:
        """Bind ``seat`` (a new connection) to the seat of ``token``; its room or table.

        A held seat (its connection dropped mid-game) comes back into its room, which
        delivers :class:`~meeple.server.rooms.room.Resumed` to ``seat``. A rejoinable seat whose
        connection is still open, in a game or at a table, is taken from it: the old
        connection is told :class:`Replaced` (a browser's second tab, or a new socket
        while the server has not yet noticed that the old one is dead).
        ``seat`` takes the seat's name (a dialect should set ``seat.name`` from it first).
        """
        key = token_hash(token)  # held seats are kept by the hash (a restart knows no more)
        hold = self._held.get(key)
        if hold is not None:
            if hold.room.finished:
                raise UnknownToken("no seat is held for this token")
            self._not_seated(seat)
            del self._held[key]
            self._held_in.get(id(hold.room), set()).discard(key)
            hold.timer.cancel()
            self._hand_over(token, hold.seat, seat, owner=hold)
            del self._rooms[id(hold.seat)]
            self._rooms.put(seat, hold.room)
            hold.room.log.info("%s is back", seat.name)
            hold.room.rebind(hold.seat, seat)
            return hold.room
        old = self._tokens.get(token)
        if old is None or old is seat or not getattr(old, "rejoinable", False):
            raise UnknownToken("no seat is held for this token")
        table = self._table_of.get(id(old))
        if table is not None:
            # Waiting at a table: the new connection sits where the old one sat, ready or not.
            self._not_seated(seat)
            self._hand_over(token, old, seat, owner=old)
            table.seats[table.seats.index(old)] = seat
            if id(old) in table.ready:
                table.ready.discard(id(old))
                table.ready.add(id(seat))
            del self._table_of[id(old)]
            self._table_of[id(seat)] = table
            self._tell(old, Replaced(table.id))
            return table
        room = self._rooms.get(id(old))
        if room is None or room.finished:
            raise UnknownToken("no seat is held for this token")
        self._not_seated(seat)
        self._hand_over(token, old, seat, owner=old)
        del self._rooms[id(old)]
        self._rooms.put(seat, room)
        room.log.info("%s moved to a new connection", old.name)
        room.rebind(old, seat)
        self._tell(old, Replaced(room.uid))
        return room

    # --- inside -----------------------------------------------------------------------------

    def _game(self, game: str) -> _Game:
        spec = self._games.get(game)
        if spec is None:
            raise UnknownGame(f"no game named {game!r}")
        return spec

    def _match(self, key: QueueKey, rule: StartRule, seat: Seat | None = None) -> Table | None:
        if seat is not None:
            # A seat already at a table of this kind stays there.
            mine = self._table_of.get(id(seat))
            if mine is not None and mine.key == key and mine.start_rule is rule:
                return mine
        for table in self._tables.values():
            if table.key == key and table.start_rule is rule and len(table.seats) < table.size:
                return table
        return None

    def _start(self, table: Table) -> Room:
        del self._tables[table.id]
        self._closed_table(table)
        players = list(table.seats)
        for p in players:
            del self._table_of[id(p)]
        key = QueueKey(table.game, len(players), table.variant, table.settings)
        if table.start_rule is StartRule.FULL:
            self._notify(table)
        room = self._games[table.game].factory(key, players)
        room.clock = self.clock
        clock = dict(table.settings).get("clock")
        if clock:
            # The table's time control (docs/web.md, "Clocks"): the room's clocks run
            # on the server's clock from its first command.
            room.time_control = parse_time_control(table.game, clock)
        for p in players:
            self._rooms.put(p, room)
        self._by_uid[room.uid] = room
        room.feed = self.feed
        room.journal = self.journal
        room.rejoin_hashes = [
            token_hash(t) if (t := self._token_of.get(id(p))) is not None else None for p in players
        ]
        room.on_changed.append(lambda _room: self.publish())
        room.on_finished.append(self._room_finished)
        logger.info(
            "%s: %s %s for %s",
            room.id,
            table.id,
            key,
            ", ".join(f"{p.name} ({_protocol(p)})" for p in players),
        )
        self._publish("started", table, room.id)
        room.start()
        return room

    def _room_finished(self, room: Room) -> None:
        # O(seats of the room), never of the lobby (issue 22): the holds and seats of
        # this room are indexed by room.
        for token in self._held_in.pop(id(room), ()):
            hold = self._held.pop(token, None)
            if hold is None:
                continue
            hold.timer.cancel()
            if self.names is not None:
                self.names.release(hold.seat.name, hold)
            self._rooms.pop(id(hold.seat), None)
            self._forget_token(hold.seat)
        # Every seat of the room, a rejoined one whose rebind came too late included.
        for seat in self._rooms.drop_room(room):
            self._forget_token(seat)
        self._by_uid.pop(room.uid, None)
        # Its viewers had the final snapshot; from now on the store has the game.
        self.feed.forget(game_topic(room.uid))
        self.publish()

    def _expire(self, key: str) -> None:
        hold = self._held.pop(key, None)
        if hold is None:
            return
        seat, room = hold.seat, hold.room
        self._held_in.get(id(room), set()).discard(key)
        if self.names is not None:
            self.names.release(seat.name, hold)
        self._rooms.pop(id(seat), None)
        self._forget_token(seat)
        room.log.info("%s did not come back within %.0f s", seat.name, self.grace)
        if not room.finished:
            room.leave(seat)

    def _not_seated(self, seat: Seat) -> None:
        if id(seat) in self._rooms or id(seat) in self._table_of:
            raise AlreadyPlaying(f"{seat.name} is already at a table or in a game")

    def _hand_over(self, token: str, old: Seat, seat: Seat, *, owner: object) -> None:
        """``seat`` becomes the holder of ``token`` and of ``old``'s name (``owner`` holds
        the name now: the hold, or the old connection)."""
        seat.name = old.name
        if self.names is not None:
            self.names.release(old.name, owner)
            self.names.claim(old.name, seat)
        self._token_of.pop(id(old), None)
        self._tokens[token] = seat
        self._token_of[id(seat)] = token

    def _forget_token(self, seat: Seat) -> None:
        token = self._token_of.pop(id(seat), None)
        if token is not None and self._tokens.get(token) is seat:
            del self._tokens[token]

    def _notify(self, table: Table) -> None:
        names = tuple(s.name for s in table.seats)
        notice = QueueChanged(table.key, len(table.seats), names, table.id)
        for seat in list(table.seats):
            self._tell(seat, notice)

    def _tell(self, seat: Seat, event: object) -> None:
        try:
            seat.deliver(event)
        except Exception:
            logger.exception("telling %s of %s failed", seat.name, type(event).__name__)

    def _publish(self, kind: str, table: Table, room: str | None = None) -> None:
        self.publish()
        if not self.on_change:
            return
        event = TableEvent(kind, table.info(), room)
        for callback in list(self.on_change):
            try:
                callback(event)
            except Exception:
                logger.exception("a table subscriber failed")


def _table_json(table: Table) -> dict[str, Any]:
    return {
        "id": table.id,
        "game": table.game,
        "players": table.size,
        "variant": table.variant,
        "start": table.start_rule.value,
        "settings": dict(table.settings),
        "waiting": [
            {"name": s.name, "protocol": _protocol(s), "ready": id(s) in table.ready}
            for s in table.seats
        ],
    }


def server_lobby(services: Services) -> Lobby:
    """The server's one lobby, on the server's clock, names and rejoin grace period; its
    rooms write their logs through the server's journal."""

    def create() -> Lobby:
        limits = services.config.limits
        lobby = Lobby(
            clock=services.clock,
            grace=services.config.rejoin_grace,
            names=services.names,
            max_tables_per_address=limits.max_tables_per_address,
            max_tables_per_connection=limits.max_tables_per_connection,
        )
        lobby.journal = server_journal(services)
        lobby.journal.on_overflow.append(lobby.halt_unwritten)
        # The lobby's snapshot carries the store's banner: a new one when health changes.
        lobby.journal.on_health.append(lambda _health: lobby.publish())
        from meeple.server.lobby import bots  # it imports this module

        lobby.seat_bot = lambda table, level: bots.add_bot(services, table, level=level)
        return lobby

    if services.lobby is None:
        services.lobby = create()
    lobby = services.lobby
    if not isinstance(lobby, Lobby):
        raise TypeError("this needs meeple serve's own lobby, not a cluster edge's")
    return lobby


def lobby_port(services: Services) -> LobbyPort:
    """The lobby the dialects and web seats use (``Services.lobby``): a cluster edge's,
    or else the server's own (:func:`server_lobby`)."""
    return services.lobby if services.lobby is not None else server_lobby(services)


def _conforms(lobby: Lobby, room: Room, table: Table) -> tuple[LobbyPort, RoomPort, TablePort]:
    """What mypy checks and nothing calls: the in-process lobby, room and table are the
    ports' (meeple.server.ports)."""
    return lobby, room, table

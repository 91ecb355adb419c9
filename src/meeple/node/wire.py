"""What crosses the bus between a cluster's nodes: room events, commands, lobby calls.

The split is at the room's inbox (issue 21): a seat's command is the same Python value
the dialect hands :meth:`~meeple.server.rooms.room.Room.submit` in one process, and what a
room delivers to a seat is the same event value the dialect renders. Both cross the bus
in one schema (:func:`dumps`, :func:`loads`: :class:`meeple.bus.codec.Registry`), never
pickled (issue 30.1), every message led by the schema's version
(:data:`meeple.bus.schema.SCHEMA`: a message of another version is refused, issue 32.4):
a payload names nothing but a tag of :func:`registry`, the exact
list of types that may cross, and every field it brings is checked against its declared
type before the value is built; a message larger than :data:`LIMITS` (1 MiB, 48 levels,
200,000 values) or of another shape is a :class:`~meeple.bus.codec.WireError`, which the
bus answers as an error (a request) or drops (a publish), logged once per subject and
kind of fault. Each handler also says which of the registry's types it takes
(``loads(payload, OpenRoom)``). Only nodes may publish seat events
(deploy/nats/meeple-auth.conf).

**Hidden information.** A seat subject carries one seat's view, and this module knows no
game's rules: the room hands each seat its event through its own
:meth:`~meeple.server.rooms.room.Room.seat_event` before a :class:`RemoteSeat
<meeple.node.rooms.RemoteSeat>` publishes it, the same call ``meeple serve`` makes for
its seats, built in ``games/<game>/view.py`` (``event_for_seat``: a Scrabble game by its
seat's view, no bag order, no other rack, no lexicon, no RNG, and the other seats' tiles
in the engine's events blanked; a Spectrangle game by its seat view; a Santorini event as
it is). The registry takes each engine game attribute by attribute as its game's view
declares a seat's copy (``seat_copy_fields`` in ``games/<game>/view.py``: ``_rng`` and
``lexicon`` None, the first bag empty), so a whole game does not even encode. The
control messages and stored values between nodes are :mod:`meeple.bus.schema`'s.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from meeple.bus.base import Sealed
from meeple.bus.codec import Attrs, EncodeError, Limits, Registry, WireError, decode_json
from meeple.bus.schema import SCHEMA, Beat, BeatRoom, ChatLine

__all__ = [
    "LIMITS",
    "SCHEMA",
    "Admin",
    "Beat",
    "BeatRoom",
    "ChatLine",
    "Command",
    "Delivery",
    "Dropped",
    "EncodeError",
    "History",
    "Leave",
    "Rebind",
    "RecordGame",
    "Rejoin",
    "RoomOver",
    "TableNews",
    "Watch",
    "WireError",
    "decode_json",
    "dumps",
    "loads",
    "registry",
    "seal",
]

logger = logging.getLogger(__name__)

#: How much one message between nodes may hold (meeple.node.codec.Limits): NATS's own
#: default payload limit, 48 levels of nesting, 200,000 values.
LIMITS = Limits()


def dumps(value: object) -> bytes:
    """``value`` as the bytes that cross the bus (:func:`registry`'s schema)."""
    return registry().encode(value)


def seal(value: object) -> Sealed:
    """``value`` as it crosses the bus: by reference in one process, as :func:`dumps`'s
    bytes over NATS (:class:`~meeple.bus.base.Sealed`; the copy rule: the value is
    frozen, or its sender never touches it again)."""
    return Sealed(value, registry())


def loads(data: bytes, expect: object = object) -> Any:
    """The value ``data`` holds, of the type ``expect`` (a class or a union); a payload
    that does not decode raises :class:`~meeple.bus.codec.WireError` (the bus's handlers
    refuse it, logged once per subject and kind of fault: :func:`refused`)."""
    return registry().decode(data, expect)


def _public(modules: Iterable[types.ModuleType]) -> list[type]:
    """The public dataclasses, enums and exceptions defined in ``modules`` (an engine's
    values: its actions, events, results and rule errors)."""
    found: list[type] = []
    for module in modules:
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and not name.startswith("_")
                and (
                    dataclasses.is_dataclass(value)
                    or issubclass(value, enum.Enum)
                    or issubclass(value, Exception)
                )
            ):
                found.append(value)
    return found


@functools.cache
def registry() -> Registry:
    """The exact types that may cross between nodes (module doc), by tag: this module's
    messages, the lobby's and the referee's, each game's room commands and events, and
    the engines' values; the engines' games and boards attribute by attribute, as seat
    views only (no RNG, no lexicon: a whole game does not encode)."""
    from meeple.cluster.registry import RejoinSeat
    from meeple.games.santorini import board as sa_board
    from meeple.games.santorini import errors as sa_errors
    from meeple.games.santorini import game as sa_game
    from meeple.games.santorini import gods as sa_gods
    from meeple.games.santorini import state as sa_state
    from meeple.games.santorini import view as sa_view
    from meeple.games.scrabble import bag as sc_bag
    from meeple.games.scrabble import board as sc_board
    from meeple.games.scrabble import errors as sc_errors
    from meeple.games.scrabble import game as sc_game
    from meeple.games.scrabble import moves as sc_moves
    from meeple.games.scrabble import rules as sc_rules
    from meeple.games.scrabble import tiles as sc_tiles
    from meeple.games.scrabble import view as sc_view
    from meeple.games.spectrangle import board as sp_board
    from meeple.games.spectrangle import errors as sp_errors
    from meeple.games.spectrangle import game as sp_game
    from meeple.games.spectrangle import tiles as sp_tiles
    from meeple.games.spectrangle import view as sp_view
    from meeple.node import cmpn402, contest, edge, rooms
    from meeple.protocols.spectrangle import messages as sp_messages
    from meeple.server.lobby import tables
    from meeple.server.rooms import room as server_room
    from meeple.server.rooms import santorini as sa_room
    from meeple.server.rooms import scrabble as sc_room
    from meeple.server.rooms import spectrangle as sp_room

    mine: list[type | Attrs] = [
        Command, Leave, Dropped, Rebind, Rejoin, Watch, Admin, History, Delivery,
        RoomOver, TableNews, RecordGame,
        rooms.OpenRoom, edge.LobbyCall, RejoinSeat,
        cmpn402.AgentMessage, cmpn402.ToAgent, cmpn402.CloseAgent, cmpn402.GameOver,
        contest.ContestCall, contest.ContestAnswer, contest.LeaveContest,
        tables.StartRule, tables.QueueKey, tables.QueueChanged, tables.SeatJoined,
        tables.SeatRenamed, tables.Seated, tables.Replaced, tables.Dismissed,
        tables.SeatInfo, tables.TableInfo, tables.TableEvent,
        tables.TableError, tables.UnknownGame, tables.NoSuchTable, tables.BadTable,
        tables.AlreadyPlaying, tables.TableFull, tables.TooManyTables,
        tables.VariantNotExpressible, tables.NameNotExpressible, tables.UnknownToken,
        server_room.Halted, server_room.Resumed,
        server_room.Abort, server_room.Resign, server_room.AbortRefused,
        # A Spectrangle seat's turn, as the protocol read it (rooms.spectrangle.TurnCommand).
        sp_messages.Place, sp_messages.Skip, sp_messages.Exchange,
    ]  # fmt: skip
    from meeple.server.store.database import GameRecord, PlayerProfile, PlayerRating, RatingPoint

    mine += [GameRecord, PlayerProfile, PlayerRating, RatingPoint]
    from meeple.node import accounts

    mine += [
        accounts.Credentials, accounts.SignedIn, accounts.AccountRefused, accounts.SessionOf,
        accounts.SessionFound, accounts.SignOut, accounts.IsReserved,
    ]  # fmt: skip
    engines = _public(
        [
            sc_game, sc_moves, sc_rules, sc_board, sc_tiles, sc_bag, sc_errors,
            sa_game, sa_state, sa_board, sa_gods, sa_errors,
            sp_game, sp_board, sp_tiles, sp_errors,
            sc_room, sa_room, sp_room,
        ]
    )  # fmt: skip
    # The engines' games (and their boards, bags, racks) as each game's view says a seat's
    # copy holds them (games/<game>/view.py: seat_copy_fields): this module knows none.
    games: list[type | Attrs] = [
        Attrs(cls, fields)
        for view in (sc_view, sa_view, sp_view)
        for cls, fields in view.seat_copy_fields().items()
    ]
    everything = mine + [t for t in engines if t not in mine] + games
    tags = {_cls(t): _tag(_cls(t)) for t in everything}
    return Registry(everything, tags=tags, limits=LIMITS, version=SCHEMA)


def _cls(entry: type | Attrs) -> type:
    return entry.cls if isinstance(entry, Attrs) else entry


def _tag(cls: type) -> str:
    """A type's tag on the bus: its module under ``meeple.`` and its name."""
    return f"{cls.__module__.removeprefix('meeple.')}.{cls.__qualname__}"


@dataclass(frozen=True, slots=True)
class RecordGame:
    """A rooms node asks a store node to store a finished game once
    (:meth:`meeple.server.store.database.Store.record_game`'s arguments)."""

    game: str
    variant: str
    protocols: tuple[str, ...]
    players: tuple[str, ...]
    started_at: float
    end_reason: str
    result: Mapping[str, Any]
    record: str
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """A seat's command to its room: seat ``seat``'s ``n``-th (from 1; a retry has the
    same ``n``, so the owner applies it once), and the command the dialect submitted."""

    seat: int
    n: int
    command: object


@dataclass(frozen=True, slots=True)
class Leave:
    """The seat's connection is gone (the room's leave rule applies)."""


@dataclass(frozen=True, slots=True)
class Dropped:
    """A browser seat's connection is gone and may come back (its rejoin token): the room
    holds the seat for the rejoin grace instead of applying its leave rule at once.
    ``route``: the edge seat that dropped (a seat rebound elsewhere since is not held)."""

    seat: int
    route: str


@dataclass(frozen=True, slots=True)
class Rebind:
    """A new connection, on any edge, takes back seat ``seat`` with its rejoin token
    (the owner checks its hash against the genesis's); ``info`` describes the new seat
    (its route). Answered with the seat's name and the number its commands go on from."""

    seat: int
    token: str
    info: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Rejoin:
    """A new connection, on edge route ``route``, takes its seat back (a CMPN402 agent
    that reconnected, through any edge): the seat's commands are numbered again from
    here (:mod:`meeple.node.cmpn402`)."""

    route: str
    name: str


@dataclass(frozen=True, slots=True)
class Watch:
    """An edge's spectators watch the room: its owner publishes the room's spectator
    views for a while, and answers with the current one (:mod:`meeple.node.views`)."""


@dataclass(frozen=True, slots=True)
class Admin:
    """An organiser's request to a room's owner, from an edge's admin endpoint (the
    CMPN402 referee's: :mod:`meeple.node.cmpn402_admin`): ``status`` is answered with
    the room's admin view at once, any other action goes through the room's inbox
    (``room.admin``). The answer is JSON (:meth:`meeple.node.rooms.RoomsRole._admin`).

    ``token``: the organiser's admin token, checked again by the room's owner against its
    own (issue 30.1): an edge's NATS credentials alone do not stop, pause or read a game."""

    action: str
    token: str = ""


@dataclass(frozen=True, slots=True)
class History:
    """An edge asks a running room's owner for its steps so far (a browser's
    ``history.json``, docs/protocols/web.md): the answer is
    :func:`meeple.web.replays.live_steps` of the room, spectator views only (never a
    rack or the bag), or None once the game is over or for a game without steps."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One room event for one seat, on the seat's subject: the room, the seat's index,
    and how many actions the room's log held when it was sent.

    ``replay``: sent again by a node that took the room over, because the old owner may
    have died between logging an action and telling it (its start's events, with
    ``logged`` 0, and the last logged action's). An edge that heard of the room up to
    ``logged`` already drops it; one that did not delivers it, so nothing logged is
    lost and nothing is told twice.
    """

    uid: str
    seat: int
    logged: int
    event: object
    replay: bool = False
    # For a browser seat: the room's game and the seat's whole view as JSON, built by the
    # owner from the real room (``games/<game>/view.py`` ``seat_view``: its own rack only),
    # as ``meeple serve``'s web seat builds it (meeple.web.seat.seat_view_json).
    game: str = ""
    view: str | None = None


@dataclass(frozen=True, slots=True)
class RoomOver:
    """The room is over (finished, or its owner lost it for good): forget it."""

    uid: str


@dataclass(frozen=True, slots=True)
class TableNews:
    """What the lobby's leader tells every edge of its open tables, on
    ``<ns>.lobby.events``: one table's change (``event``, a
    :class:`~meeple.server.lobby.tables.TableEvent`) or all of them (``tables``, oldest first:
    what a new leader took over, or the answer to an edge that asks, ``lobby.req.tables``).

    ``epoch`` is the leader's lease epoch and ``seq`` counts what it published under it
    (0: its first list), so an edge keeps a copy of the leader's tables: it drops
    anything from an older epoch (a leader that lost the lobby and wakes up late) or
    already in the list it holds, and asks for the whole list when it hears a later
    epoch or misses a number (:class:`meeple.node.edge.EdgeLobby`)."""

    epoch: int
    seq: int
    event: object = None
    tables: tuple[object, ...] | None = None

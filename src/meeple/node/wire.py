"""What crosses the bus between a cluster's nodes: room events, commands, lobby calls.

The split is at the room's inbox (issue 21): a seat's command is the same Python value
the dialect hands :meth:`~meeple.server.rooms.room.Room.submit` in one process, and what a
room delivers to a seat is the same event value the dialect renders. Both cross the bus
pickled (:func:`dumps`), and are read back with an unpickler that only builds meeple's
own classes and a few plain builtins (:func:`loads`): nothing else can be named in a
payload. Only nodes may publish seat events (deploy/nats/meeple-auth.conf).

**Hidden information.** A seat subject carries one seat's view: before an event goes to
seat ``i``, :func:`for_seat` replaces the engine game it refers to by that seat's view
(:meth:`meeple.games.scrabble.game.Game.seat_view`: no bag order, no other rack, no
lexicon, no RNG) and blanks the tiles other players drew or exchanged; a Spectrangle
game by its seat view (every hand is public in 1.4, the bag is not); a Santorini event
goes as it is (open information, and no RNG in it). A game that has no seat view is
refused by the rooms node (:data:`SEAT_VIEWS`).
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import pickle
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meeple.server.store.database import ActionLog

__all__ = [
    "LAST_TOLD",
    "SEAT_VIEWS",
    "Admin",
    "Command",
    "Delivery",
    "Dropped",
    "History",
    "Leave",
    "Rebind",
    "Rejoin",
    "RoomOver",
    "TableNews",
    "Watch",
    "dumps",
    "for_seat",
    "loads",
]

# Plain builtins a pickled event may use (tuples, frozensets of variants, enums' values).
_BUILTINS = frozenset(
    {"frozenset", "set", "tuple", "list", "dict", "int", "float", "str", "bytes", "bool"}
)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if (module == "meeple" or module.startswith("meeple.")) and not name.startswith("_"):
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} may not cross the bus")


def read_only(mapping: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    """Rebuilds a read-only mapping (a variant's tile counts) from the bus."""
    return types.MappingProxyType(mapping)


copyreg.pickle(types.MappingProxyType, lambda m: (read_only, (dict(m),)))


def dumps(value: object) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


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
    (``room.admin``). The answer is JSON (:meth:`meeple.node.rooms.RoomsRole._admin`)."""

    action: str


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


def _scrabble_seat(event: object, seat: int) -> object:
    """A Scrabble room event (GameStarted, Update, …) as seat ``seat`` may see it: its
    game replaced by the seat's view, its engine events by what the seat may know."""
    from meeple.games.scrabble import game as g

    def hide(value: object) -> object:
        if isinstance(value, g.Game):
            return value.seat_view(seat)
        if isinstance(value, g.TilesDrawn) and value.player != seat:
            return dataclasses.replace(value, tiles="?" * len(value.tiles))
        if isinstance(value, g.Exchanged) and value.player != seat:
            hidden = "?" * len(value.tiles)
            return dataclasses.replace(value, tiles=hidden, rack="?" * len(value.rack))
        if isinstance(value, tuple):
            return tuple(hide(v) for v in value)
        return value

    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        return event
    changes = {}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, g.Game | tuple):
            changes[f.name] = hide(value)
    return dataclasses.replace(event, **changes) if changes else event


def _scrabble_last(room: object, log: ActionLog) -> object | None:
    """What a Scrabble room told its seats of the last action in ``log`` (one Update)."""
    from meeple.games.scrabble import game as g
    from meeple.server.rooms.scrabble import ScrabbleRoom, Update

    if not log.entries or not isinstance(room, ScrabbleRoom):
        return None
    before = dataclasses.replace(log, entries=log.entries[:-1]).replay(lexicon=room.game.lexicon)
    events = room.game.events[len(before.events) :]
    actions = room.game.log
    last = actions[-1] if actions else None
    actor = None if isinstance(last, g.End) or last is None else getattr(last, "player", None)
    return Update(actor, tuple(events), room.game)


def _santorini_seat(event: object, seat: int) -> object:
    """A Santorini room event (GameStarted, Changed, Refused, Fresh, Dropped, ChatSaid)
    as seat ``seat`` may see it: all of it. Santorini is open information (AM27 shows
    every worker, level, dome and god to every player: §3.1.1 godList, §3.2.1 players,
    §4.1.1 update); the room's RNG, which only drew the challenger, is the room's and
    in no event, and the engine's :class:`~meeple.games.santorini.game.Game` holds none
    (``tests/cluster/test_wire.py`` walks what crosses to be sure)."""
    return event


def _spectrangle_seat(event: object, seat: int) -> object:
    """A Spectrangle room event (GameStarted, Update, RoomRejected, ChatSaid) as seat
    ``seat`` may see it: its game replaced by
    :meth:`meeple.games.spectrangle.game.Game.seat_view` (the bag's size, not its tiles
    or order). Every hand is public (spec 1.4, ``tiles [<name> [tiles]]``: "this
    includes all players") and so are the tiles drawn and exchanged: the engine's events
    stay as they are."""
    from meeple.games.spectrangle.game import Game

    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        return event
    changes = {
        f.name: getattr(event, f.name).seat_view(seat)
        for f in dataclasses.fields(event)
        if isinstance(getattr(event, f.name), Game)
    }
    return dataclasses.replace(event, **changes) if changes else event


def _santorini_last(room: object, log: ActionLog) -> object | None:
    """What a Santorini room told its seats of the last action in ``log``: the game's
    :class:`~meeple.server.rooms.santorini.Changed` (from the state before it), or
    :class:`~meeple.server.rooms.santorini.Dropped` when a dropped connection ended the game."""
    from meeple.server.rooms.santorini import Changed, Dropped, SantoriniRoom

    if not log.entries or not isinstance(room, SantoriniRoom):
        return None
    last = log.entries[-1].entry.get("action")
    if isinstance(last, dict) and last.get("type") == "disconnect":
        player = int(last["player"])
        return Dropped(player, room.names[player])
    if not room.game.log:
        return None
    before = dataclasses.replace(log, entries=log.entries[:-1]).replay()
    state = before.state
    events = before.apply(room.game.log[-1])
    return Changed(room.game, state, tuple(events))


def _spectrangle_last(room: object, log: ActionLog) -> object | None:
    """What a Spectrangle room told its seats of the last action in ``log`` (one Update
    with the action's events)."""
    from meeple.server.rooms.spectrangle import SpectrangleRoom, Update

    if not log.entries or not isinstance(room, SpectrangleRoom):
        return None
    before = dataclasses.replace(log, entries=log.entries[:-1]).replay()
    return Update(tuple(room.game.events[len(before.events) :]), room.game)


def _cmpn402_seat(event: object, seat: int) -> object:
    """A CMPN402 referee room's event for seat ``seat``: one encoded message the referee
    sends that agent alone (:mod:`meeple.node.cmpn402`), which holds only what the spec
    tells it (its own rack and drawn tiles; of the opponent, played tiles and counts);
    a finished game's END told again, as that seat's END."""
    from meeple.node.cmpn402 import seat_view

    return seat_view(event, seat)


def _cmpn402_last(room: object, log: ActionLog) -> object | None:
    """A finished game's END (its owner died after logging the end); otherwise nothing:
    a referee room taken over resumes its game as the spec's recovery from a connection
    error does, with END reason 2 and a START that holds the whole logged state (board,
    rack, scores, times) to each agent."""
    from meeple.node.cmpn402 import last_told

    return last_told(room, log)


#: The games whose rooms a rooms node serves: how an event becomes one seat's view.
SEAT_VIEWS: dict[str, Callable[[object, int], object]] = {
    "scrabble": _scrabble_seat,
    "santorini": _santorini_seat,
    "spectrangle": _spectrangle_seat,
    "cmpn402": _cmpn402_seat,
}
#: What each game's room told its seats of the last action in its log (for a replay).
LAST_TOLD: dict[str, Callable[[object, ActionLog], object | None]] = {
    "scrabble": _scrabble_last,
    "santorini": _santorini_last,
    "spectrangle": _spectrangle_last,
    "cmpn402": _cmpn402_last,
}


def for_seat(game: str, event: object, seat: int) -> object:
    """``event`` as seat ``seat`` of a ``game`` room may see it (module doc)."""
    return SEAT_VIEWS[game](event, seat)

"""What a viewer may see of a Scrabble game: the one place that decides it.

:func:`spectator_view` is for anyone watching (the web's spectators, the lobby):
the board with its premium squares and blanks, scores, the number of tiles in the
bag and on each rack, the move log with scores, whose turn it is and the result.
Never a rack's letters, the bag's order or the letters of an exchange: those are
the players' (GCG shows them only to the record's owner). :func:`seat_view` adds
the seat's own rack, for a player's page (issue 13). :func:`seat_event` is an engine
event as one seat may hear it, and :func:`event_for_seat` a room's event (the game it
carries, the engine events in it) as that seat's connection is handed it, by
``meeple serve`` and by a cluster's rooms node alike (issues 30.4, 32.3). :func:`preview`
says what a play of the seat's own tiles would score, or why the rules refuse it,
before it is sent. :func:`seat_copy_fields` says, attribute by attribute, what a seat's
copy of a game (:meth:`Game.seat_view`) holds, so what carries it between processes needs
to know nothing of Scrabble (meeple.node.wire).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping
from typing import Any, cast

from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.game import (
    ChallengeFailed,
    ChallengeUpheld,
    EndReason,
    Event,
    Exchanged,
    Game,
    GameEnded,
    Passed,
    PlayerDropped,
    PlayMade,
    PlayWithdrawn,
    TimePenalized,
    TurnLost,
)
from meeple.games.scrabble.moves import Placement

__all__ = [
    "END_TEXT",
    "event_for_seat",
    "move_entry",
    "preview",
    "seat_copy_fields",
    "seat_event",
    "seat_view",
    "spectator_view",
    "unseen",
]

# The fields of an engine event that hold the tiles of its ``player``'s rack: the tiles
# drawn or put back, and the rack a play, pass, withdrawn play, failed challenge or lost
# turn leaves (PlayMade.rack ... TurnLost.rack, kept for GCG). A tuple of placements
# (PlayWithdrawn.tiles) was on the board: public.
_PRIVATE = ("tiles", "rack")

# How each end reads in a move log (issue 24: one human wording everywhere).
END_TEXT = {
    EndReason.WENT_OUT: "went out",
    EndReason.SCORELESS_TURNS: "six scoreless turns",
    EndReason.PASSES: "everyone passed",
    EndReason.TIME: "out of time",
    EndReason.ADMIN: "stopped by the referee",
    EndReason.DISCONNECT: "a player left",
    EndReason.RESIGNED: "resigned",
    EndReason.ABORTED: "aborted",
}


def seat_copy_fields() -> dict[type, dict[str, object]]:
    """What a seat's copy of a game (:meth:`Game.seat_view`) holds, per class that is no
    dataclass (the game, its board, bag and racks), attribute by attribute with each
    attribute's type: no RNG, no lexicon, no first bag or RNG state (``None`` and the
    empty tuple are the only values those may hold); the other racks and the bag are
    ``?``s already. A copy with anything else — a whole game, its RNG — does not fit."""
    from meeple.games.scrabble.bag import Bag, Rack
    from meeple.games.scrabble.board import Board, Layout
    from meeple.games.scrabble.game import Action, GameResult, GameStatus, PendingPlay, Variant

    return {
        Game: {
            "players": tuple[str, ...],
            "variant": Variant,
            "lexicon": None,
            "_rng": None,
            "_bag": Bag,
            "_initial_bag": tuple[()],
            "_initial_rng_state": tuple[()],
            "_first_player": int,
            "_board": Board,
            "_racks": list[Rack],
            "_opening": list[Event],
            "_scores": list[int],
            "_turn": int,
            "_status": GameStatus,
            "_pending": PendingPlay | None,
            "_scoreless": int,
            "_passes": list[int],
            "_skip": set[int],
            "_left": set[int],
            "_result": GameResult | None,
            "_log": list[Action],
            "_events": list[Event],
            "_reshuffles": list[str],
        },
        Board: {"layout": Layout, "_cells": list[str]},
        Bag: {"_tiles": list[str]},
        Rack: {"_tiles": list[str]},
    }


# Per type, what _fields and _private found (a room asks once per seat per event).
_FIELDS: dict[type, tuple[str, ...]] = {}
_PRIVATE_OF: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    """The field names of dataclass ``cls``; none for another type."""
    names = _FIELDS.get(cls)
    if names is None:
        is_dataclass = dataclasses.is_dataclass(cls)
        names = tuple(f.name for f in dataclasses.fields(cls)) if is_dataclass else ()
        _FIELDS[cls] = names
    return names


def _private(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold its player's tiles (``_PRIVATE``), if it has
    a player."""
    private = _PRIVATE_OF.get(cls)
    if private is None:
        names = _fields(cls)
        private = tuple(n for n in _PRIVATE if n in names) if "player" in names else ()
        _PRIVATE_OF[cls] = private
    return private


def seat_event(event: Event, player: int) -> Event:
    """``event`` as seat ``player`` may hear it: another player's tiles (drawn, put
    back, or left on a rack) become as many ``?``; the final racks of a
    :class:`~meeple.games.scrabble.game.GameResult` stay (the end's scoring shows them to
    all). Every engine event with a ``player`` goes through the same rule, so a new
    event that carries a rack is covered."""
    private = _private(type(event))
    if not private or getattr(event, "player", None) in (None, player):
        return event
    hidden = {
        name: "?" * len(value) for name in private if isinstance(value := getattr(event, name), str)
    }
    return _replace(event, hidden) if hidden else event


def _replace(value: Any, changes: Mapping[str, object]) -> Any:
    """``dataclasses.replace`` of a frozen dataclass whose fields are all ``__init__``'s
    (the engine's events, the rooms' deliveries), at a fraction of its cost."""
    cls = type(value)
    return cls(**{name: changes.get(name, getattr(value, name)) for name in _fields(cls)})


def _hide(value: object, seat: int) -> object:
    if isinstance(value, Game):
        return value.seat_view(seat)
    if isinstance(value, tuple):
        return tuple(_hide(v, seat) for v in value)
    if _private(type(value)):
        return seat_event(cast(Event, value), seat)
    return value


def event_for_seat(event: object, seat: int) -> object:
    """A Scrabble room's event (GameStarted, Update, Resumed, …) as seat ``seat`` may
    have it: every :class:`~meeple.games.scrabble.game.Game` in its fields replaced by
    the seat's view (:meth:`Game.seat_view`: no bag order, no other rack, no lexicon,
    no RNG, no log), every engine event in them by what the seat may hear of it
    (:func:`seat_event`). Seat ``-1`` (no seat of the room) sees no rack at all. What is
    not a dataclass instance goes as it is. The one rule for hidden information on both
    transports: the room applies it before any seat is handed an event
    (:meth:`meeple.server.rooms.room.Room.seat_event`)."""
    changes = {}
    for name in _fields(type(event)):
        value = getattr(event, name)
        if isinstance(value, Game | tuple):
            changes[name] = _hide(value, seat)
    return _replace(event, changes) if changes else event


def _entry(
    player: int | None, kind: str, text: str, score: int, total: int | None
) -> dict[str, Any]:
    return {"player": player, "kind": kind, "text": text, "score": score, "total": total}


def move_entry(event: Event, players: tuple[str, ...]) -> dict[str, Any] | None:
    """One line of the public move log for ``event``, or None if it makes no line."""
    if isinstance(event, PlayMade):
        return {
            "player": event.player,
            "kind": "play",
            "text": f"{event.move.position} {event.move.word}",
            "words": list(event.words),
            "score": event.score,
            "bingo": event.bingo,
            "total": event.total,
        }
    if isinstance(event, Exchanged):
        # The count only: which tiles went back is the exchanger's secret.
        return _entry(event.player, "exchange", f"exchange {event.count}", 0, event.total)
    if isinstance(event, Passed):
        return _entry(event.player, "pass", "pass", 0, event.total)
    if isinstance(event, ChallengeUpheld):
        return _entry(
            event.challenger, "challenge", f"challenge upheld: {', '.join(event.words)}", 0, None
        )
    if isinstance(event, PlayWithdrawn):
        return _entry(event.player, "withdrawn", "play withdrawn", -event.score, event.total)
    if isinstance(event, ChallengeFailed):
        return _entry(
            event.player,
            "challenge",
            f"{players[event.challenger]} challenged in vain",
            event.bonus,
            event.total,
        )
    if isinstance(event, TurnLost):
        return _entry(event.player, "turn-lost", "loses a turn", 0, event.total)
    if isinstance(event, PlayerDropped):
        return _entry(event.player, "left", "left the game", 0, None)
    if isinstance(event, TimePenalized):
        return _entry(event.player, "time", "overtime penalty", -event.points, event.total)
    if isinstance(event, GameEnded):
        result = event.result
        entry = _entry(result.player, "end", f"game over: {END_TEXT[result.reason]}", 0, None)
        return entry | {"adjustments": list(result.adjustments)}
    return None


def _log(game: Game) -> list[dict[str, Any]]:
    """The move log; the end's rack adjustments get a line each, so that the log's
    totals end where the scores do (issue 24). The "game over" line is the last one: an
    overtime penalty, taken off the final score after the end, comes before it."""
    log: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    # The play in its challenge window (the last one made, while one is pending) is not
    # decided yet: its line says so. No log holds it until its verdict (a referee that
    # dies in the window takes it back, as its agents' START then says), so a viewer
    # must not count it among the moves that stay.
    undecided = -1
    if game.pending is not None:
        undecided = max(i for i, ev in enumerate(game.events) if isinstance(ev, PlayMade))
    for i, ev in enumerate(game.events):
        entry = move_entry(ev, game.players)
        if entry is None:
            continue
        if i == undecided:
            entry["pending"] = True
        if isinstance(ev, GameEnded):
            result = ev.result
            for i, adjustment in enumerate(result.adjustments):
                if adjustment:
                    # The count, not the letters: a view never names a rack's tiles.
                    text = "tiles left on the rack" if adjustment < 0 else "the others' racks"
                    log.append(_entry(i, "end-rack", text, adjustment, result.scores[i]))
            end = entry
            continue
        log.append(entry)
    if end is not None:
        log.append(end)
    return log


def unseen(game: Game, player: int) -> dict[str, Any]:
    """The tiles ``player`` has not seen: the whole set less the board and their rack.

    What Woogles shows beside the rack (issue 24). ``tiles`` maps each letter (``?`` the
    blank) to how many are unseen; ``random`` counts a tile set's random letters not
    yet seen (Clarkson's two), whose letters nobody knows until they are drawn.
    """
    tile_set = game.variant.tile_set
    counts = dict(tile_set.counts)
    extra = tile_set.random_letters
    seen = [("?" if t.islower() else t) for _x, _y, t in game.board.tiles()]
    seen += list(game.rack(player))
    for t in seen:
        if counts.get(t, 0) > 0:
            counts[t] -= 1
        elif extra > 0:  # a letter beyond the set's count: one of the random ones
            extra -= 1
    tiles = {t: n for t, n in sorted(counts.items()) if n > 0}
    return {"tiles": tiles, "count": sum(tiles.values()) + extra, "random": extra}


def spectator_view(game: Game) -> dict[str, Any]:
    """The game as anyone may see it; JSON-safe (see the module docstring)."""
    layout = game.variant.layout
    pending = game.pending
    result = game.result
    log = _log(game)
    return {
        "game": "scrabble",
        "variant": game.variant.name,
        "players": list(game.players),
        "size": layout.size,
        "premiums": layout.rows(),  # "." none, "l" DL, "L" TL, "w" DW, "W" TW
        # "." empty, "A"–"Z" a letter tile, "a"–"z" a blank standing for that letter.
        "board": game.board.rows(),
        "pending": (
            None
            if pending is None
            else {
                "player": pending.player,
                "score": pending.score,
                "squares": [[p.x, p.y] for p in pending.result.tiles],
            }
        ),
        "scores": list(game.scores),
        "rack_sizes": [len(r) for r in game.racks],
        "bag": len(game.bag),
        "turn": game.turn,
        "status": game.status.value,
        "moves": log,
        "result": (
            None
            if result is None
            else {
                "reason": result.reason.value,
                "player": result.player,
                "scores": list(result.scores),
                "winners": list(result.winners),
            }
        ),
    }


def seat_view(game: Game, player: int) -> dict[str, Any]:
    """What ``player`` sees: the spectator view and their own rack."""
    view = spectator_view(game)
    view["you"] = player
    view["rack"] = game.rack(player)
    view["unseen"] = unseen(game, player)
    return view


def preview(
    game: Game,
    player: int,
    tiles: Iterable[Placement],
    *,
    lexicon: Container[str] | None = None,
) -> dict[str, Any]:
    """What ``tiles`` from ``player``'s own rack would score now, or the rules' refusal.

    The engine's own check (:meth:`Game.validate`, the same one :meth:`Game.apply`
    runs), never applied. It reveals no more than sending the play would: only
    ``player``'s own rack is consulted, and words are looked up only where the variant
    checks them on play (void challenge: a phony would be refused on sending anyway).
    Where words are checked only on a challenge, a phony previews like a good word, so
    a preview is no free challenge. The turn is not checked: a player may plan ahead.
    ``lexicon``: the word list when ``game`` is a seat's view, which has none (a
    cluster edge's: :meth:`Game.seat_view`). ``{"score", "words": [{"word", "score"}],
    "bingo"}`` or ``{"refusal": reason}``.
    """
    if game.is_over:
        return {"refusal": "the game is over"}
    try:
        result = game.validate(tiles, player, lexicon=lexicon)
    except ScrabbleError as e:
        return {"refusal": str(e)[:200]}
    return {
        "score": result.score,
        "words": [{"word": w.letters, "score": w.score} for w in result.words],
        "bingo": result.bingo,
    }

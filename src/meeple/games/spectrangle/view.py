"""What a viewer may see of a Spectrangle game: the one place that decides it.

The Spectrangle protocol shows every hand to every player (spec, ``tiles``
message; ERRATA), so :func:`spectator_view` shows them too; only the bag's order
stays hidden (its size is shown). The board is the 36 fields with their tiles
(``RGB3``: base, then clockwise, then the value), bonus multipliers and which way
each field points.

:func:`seat_view` adds, for the seat on turn, where each hand tile fits: ``fits``
maps every rotation of every held tile to its ``[field, points]`` pairs (empty when
that rotation fits nowhere), straight from :meth:`Game.legal_placements`, so the page
never needs a copy of the matching or scoring rules.

:func:`event_for_seat` is a room's event as one seat's connection is handed it, by
``meeple serve`` and a cluster's rooms node alike (issue 32.3): the game's seat view.
:func:`seat_copy_fields` says, attribute by attribute, what that copy holds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from meeple.games.spectrangle.board import BONUSES, FIELD_COUNT, Orientation, orientation
from meeple.games.spectrangle.game import (
    ABORTED,
    RESIGNED,
    Event,
    Exchanged,
    Game,
    GameAbandoned,
    GameEnded,
    Skipped,
    TilePlaced,
)

__all__ = [
    "event_for_seat",
    "fits",
    "move_entry",
    "seat_copy_fields",
    "seat_view",
    "spectator_view",
]


def seat_copy_fields() -> dict[type, dict[str, object]]:
    """What a seat's copy of a game (:meth:`Game.seat_view`) holds, per class that is no
    dataclass, attribute by attribute with each attribute's type: the bag's size only
    (None for each tile), no deal order."""
    from meeple.games.spectrangle.board import Board
    from meeple.games.spectrangle.game import Action, GameResult, GameStatus, Rules
    from meeple.games.spectrangle.tiles import Tile

    return {
        Game: {
            "players": tuple[str, ...],
            "rules": Rules,
            "_initial_bag": tuple[()],
            "_bag": list[None],
            "_set_aside": list[Tile],
            "_board": Board,
            "_hands": list[list[Tile]],
            "_events": list[Event],
            "order": tuple[int, ...],
            "_turn": int,
            "_scores": list[int],
            "_status": GameStatus,
            "_skips": int,
            "_result": GameResult | None,
            "_log": list[Action],
        },
        Board: {"_fields": list[Tile | None]},
    }


def event_for_seat(event: object, seat: int) -> object:
    """A Spectrangle room's event (GameStarted, Update, RoomRejected, ChatSaid) as seat
    ``seat`` may have it: its game replaced by :meth:`Game.seat_view` (the bag's size,
    not its tiles or order). Every hand is public (spec 1.4, ``tiles [<name> [tiles]]``:
    "this includes all players") and so are the tiles drawn and exchanged: the engine's
    events stay as they are."""
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        return event
    changes = {
        f.name: value.seat_view(seat)
        for f in dataclasses.fields(event)
        if isinstance(value := getattr(event, f.name), Game)
    }
    return dataclasses.replace(event, **changes) if changes else event


def move_entry(event: Event) -> dict[str, Any] | None:
    """One line of the public move log for ``event``, or None if it makes no line."""
    if isinstance(event, TilePlaced):
        return {
            "player": event.player,
            "text": f"{event.tile} on {event.index}",
            "score": event.points,
            "total": event.total,
        }
    if isinstance(event, Skipped):
        return {"player": event.player, "text": "skip", "score": 0, "total": None}
    if isinstance(event, Exchanged):
        # Hands are public in this protocol, so the tiles exchanged are too.
        return {
            "player": event.player,
            "text": f"exchange {event.tile} for {event.new_tile}",
            "score": 0,
            "total": None,
        }
    if isinstance(event, GameEnded):
        return {"player": None, "text": "game over", "score": 0, "total": None}
    if isinstance(event, GameAbandoned):
        text = _ABANDON_TEXT.get(event.reason, "left: game abandoned")
        return {"player": event.player, "text": text, "score": 0, "total": None}
    return None


def _moves(game: Game) -> list[dict[str, Any]]:
    """The public move log; at the end, after "game over", each player's deduction for
    the tiles left in hand (issue 34: the log's last totals are the final scores)."""
    out: list[dict[str, Any]] = []
    for event in game.events:
        entry = move_entry(event)
        if entry is not None:
            out.append(entry)
        if isinstance(event, GameEnded):
            result = event.result
            for player, (lost, final) in enumerate(
                zip(result.deductions, result.scores, strict=True)
            ):
                if lost:
                    held = " ".join(str(t) for t in result.hands[player])
                    text = f"left in hand: {held}"
                    out.append({"player": player, "text": text, "score": -lost, "total": final})
    return out


def spectator_view(game: Game) -> dict[str, Any]:
    """The game as anyone may see it; JSON-safe."""
    result = game.result
    fields = [
        {
            "index": i,
            "up": orientation(i) is Orientation.UP,
            "bonus": BONUSES.get(i, 1),
            "tile": None if game.board.tile(i) is None else str(game.board.tile(i)),
        }
        for i in range(FIELD_COUNT)
    ]
    return {
        "game": "spectrangle",
        "players": list(game.players),
        "fields": fields,
        "hands": [[str(t) for t in hand] for hand in game.hands],
        # Once over, the final scores: the tiles left in hand are deducted.
        "scores": list(result.scores if result is not None else game.scores),
        "bag": game.bag_size,
        "turn": game.turn,
        "status": game.status.value,
        "moves": _moves(game),
        "result": (
            _abandoned(game)
            if game.abandoned is not None
            else None
            if result is None
            else {
                "reason": "finished",
                "scores": list(result.scores),
                "deductions": list(result.deductions),
                "winners": list(result.winners),
            }
        ),
    }


# How an early end reads in the move log (issue 34.9: a resignation is not "left").
_ABANDON_TEXT = {
    RESIGNED: "resigned",
    ABORTED: "aborted the game",
}


def _abandoned(game: Game) -> dict[str, Any]:
    """The result of a game that ended early: a resigned one has its winners and the
    scores so far; one a player left or aborted has neither (docs/web.md)."""
    end = game.abandoned
    assert end is not None
    if end.reason == RESIGNED:
        return {
            "reason": "resigned",
            "player": end.player,
            "scores": list(game.scores),
            "winners": list(game.abandon_winners()),
        }
    reason = "aborted" if end.reason == ABORTED else "abandoned"
    return {"reason": reason, "player": end.player, "scores": None, "winners": []}


def fits(game: Game, player: int) -> dict[str, list[list[int]]]:
    """Where ``player``'s tiles fit now, by rotated tile: ``{"RGB3": [[field, points]]}``.

    Every rotation of every held tile is a key (its list empty when it fits nowhere),
    in hand order; each list is ordered by field. Empty off turn or once the game is over:
    only the seat on turn may place.
    """
    if game.turn != player:
        return {}
    found: dict[str, list[list[int]]] = {
        str(turned): [] for held in game.hand(player) for turned in held.rotations()
    }
    # The engine's own placements and scores (board.check): no second copy of the rules.
    for placement in game.legal_placements(player):
        found[str(placement.tile)].append([placement.index, placement.points])
    return found


def seat_view(game: Game, player: int) -> dict[str, Any]:
    """The spectator view for seat ``player``: ``you``, and ``fits`` on its turn."""
    view = spectator_view(game)
    view["you"] = player
    view["fits"] = fits(game, player)
    return view

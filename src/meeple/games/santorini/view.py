"""What a viewer may see of a Santorini game: the one place that decides it.

Santorini hides nothing, so :func:`spectator_view` is the whole position in
JSON-safe form: levels, domes, workers, gods, the phase and whose turn it is,
and the action log as text. :func:`seat_view` adds which seat is the viewer's.
"""

from __future__ import annotations

from typing import Any

from meeple.games.santorini.board import SIZE, coordinates
from meeple.games.santorini.game import (
    Action,
    Build,
    ChooseGod,
    ChooseStarter,
    Game,
    Lose,
    Move,
    OfferGod,
    Pass,
    PlaceWorker,
    Undo,
)
from meeple.games.santorini.state import owner, sex_of

__all__ = ["action_text", "seat_view", "spectator_view"]


def _square(c: int) -> str:
    """A cell as the board shows it: column a–e, row 1–5 (row 0 is 1)."""
    row, column = coordinates(c)
    return f"{'abcde'[column]}{row + 1}"


def action_text(action: Action) -> str:
    """One action as a short line of the move log."""
    if isinstance(action, OfferGod):
        return f"offers {action.god}"
    if isinstance(action, ChooseGod):
        return f"takes {action.god}"
    if isinstance(action, ChooseStarter):
        return f"names seat {action.starter + 1} to start"
    if isinstance(action, PlaceWorker):
        return f"places a worker on {_square(action.cell)}"
    if isinstance(action, Move):
        return f"moves {_square(action.src)}→{_square(action.dst)}"
    if isinstance(action, Build):
        what = "a dome" if action.level == 4 else f"level {action.level}"
        return f"builds {what} on {_square(action.dst)}"
    if isinstance(action, Pass):
        return "passes"
    if isinstance(action, Undo):
        return "undoes"
    assert isinstance(action, Lose)
    return "gives up"


def spectator_view(game: Game, players: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The position as anyone may see it; JSON-safe."""
    state = game.state
    names = (
        list(players) if players is not None else [f"seat {i + 1}" for i in range(state.players)]
    )
    workers = [
        {"cell": at, "owner": owner(w), "sex": sex_of(w).value}
        for w, at in enumerate(state.workers)
        if at is not None
    ]
    return {
        "game": "santorini",
        "players": names,
        "size": SIZE,
        "phase": state.phase.value,
        "turn": None if state.is_over else state.turn,
        "challenger": state.challenger,
        "starter": state.starter,
        "gods_in_play": state.rules.gods,
        "gods": list(state.gods) if state.gods else [None] * state.players,
        "pool": list(state.pool),
        "levels": list(state.levels),
        "domes": list(state.domes),
        "workers": workers,
        "alive": list(state.alive),
        "winner": state.winner,
        "moves": [{"player": a.player, "text": action_text(a)} for a in game.log],
        "scores": None,
        "result": (
            None
            if state.winner is None
            else {"winners": [state.winner], "reason": "win", "scores": None}
        ),
    }


def seat_view(game: Game, player: int, players: tuple[str, ...] | None = None) -> dict[str, Any]:
    view = spectator_view(game, players)
    view["you"] = player
    return view

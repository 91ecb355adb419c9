"""What a viewer may see of a Santorini game: the one place that decides it.

Santorini hides nothing, so :func:`spectator_view` is the whole position in
JSON-safe form: levels, domes, workers, gods, the phase and whose turn it is,
and the action log as text. :func:`seat_view` adds which seat is the viewer's and,
for the seat on turn, what it may do now (:func:`legal_view`, straight from the
engine's :func:`~meeple.games.santorini.game.legal_actions`: a god's power is just
more legal steps, so the page needs no god of its own).

:func:`event_for_seat` is a room's event as one seat's connection is handed it
(issue 32.3): all of it. :func:`seat_copy_fields` says what a copy of a game holds.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    legal_actions,
)
from meeple.games.santorini.gods import GODS, MORTAL
from meeple.games.santorini.state import GameState, MoveStep, Phase, owner, sex_of

__all__ = [
    "action_text",
    "event_for_seat",
    "how_won",
    "legal_view",
    "seat_copy_fields",
    "seat_view",
    "spectator_view",
]


def seat_copy_fields() -> dict[type, dict[str, object]]:
    """What a copy of a game holds, attribute by attribute with each attribute's type
    (for what carries it between processes): Santorini is open information and its game
    holds no RNG, so a seat's copy is the whole game."""
    from meeple.games.santorini.state import Rules

    return {
        Game: {
            "rules": Rules,
            "challenger": int,
            "_state": GameState,
            "_turn_states": list[GameState],
            "_log": list[Action],
        }
    }


def event_for_seat(event: object, seat: int) -> object:
    """A Santorini room's event (GameStarted, Changed, Refused, Fresh, Dropped, ChatSaid)
    as seat ``seat`` may have it: all of it. Santorini is open information (AM27 shows
    every worker, level, dome and god to every player: §3.1.1 godList, §3.2.1 players,
    §4.1.1 update); the room's RNG, which only drew the challenger, is the room's and
    in no event, and the engine's :class:`~meeple.games.santorini.game.Game` holds none
    (``tests/cluster/test_wire.py`` walks what crosses to be sure)."""
    return event


def _square(c: int) -> str:
    """A cell as the board shows it: column a–e, row 1–5 (row 0 is 1), lower case."""
    row, column = coordinates(c)
    return f"{'abcde'[column]}{row + 1}"


def action_text(action: Action, players: Sequence[str] | None = None) -> str:
    """One action as a short line of the move log, after the player's name.

    The live log, the play page and the replay all read these words (issue 24): a
    turn ends with "ends the turn" (AM27 ``PASS``), seats are named by their players.
    """
    if isinstance(action, OfferGod):
        return f"offers {action.god}"
    if isinstance(action, ChooseGod):
        return f"takes {action.god}"
    if isinstance(action, ChooseStarter):
        if action.starter == action.player:
            return "starts"
        starter = (
            players[action.starter]
            if players is not None and action.starter < len(players)
            else f"seat {action.starter + 1}"
        )
        return f"lets {starter} start"
    if isinstance(action, PlaceWorker):
        return f"places a worker on {_square(action.cell)}"
    if isinstance(action, Move):
        return f"moves {_square(action.src)}→{_square(action.dst)}"
    if isinstance(action, Build):
        what = "a dome" if action.level == 4 else f"level {action.level}"
        return f"builds {what} on {_square(action.dst)}"
    if isinstance(action, Pass):
        return "ends the turn"
    if isinstance(action, Undo):
        return f"takes back {'the turn' if action.all else 'a step'}"
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
        "moves": [{"player": a.player, "text": action_text(a, names)} for a in game.log],
        # The card text of every god in the game or on offer, shown beside the choice
        # and in the player panel: touch screens have no hover (issue 24).
        "powers": {
            g: GODS[g].description
            for g in sorted({g for g in (*state.gods, *state.pool) if g is not None})
        },
        "scores": None,
        "result": (
            None
            if state.winner is None
            else {
                "winners": [state.winner],
                "reason": "win",
                "scores": None,
                "how": how_won(game, names),
            }
        ),
    }


def how_won(game: Game, names: Sequence[str]) -> str | None:
    """How the winner won, in words (issue 34: "hardbot1 wins." said nothing): the last
    player left because the others resigned or could not move, a worker on the third
    level, or the winner's god's own condition (Pan's fall, Chronus' towers…)."""
    state = game.state
    winner = state.winner
    if winner is None:
        return None
    others = [i for i in range(state.players) if i != winner]
    log = game.log
    if log and isinstance(log[-1], Lose):
        quitter = names[log[-1].player] if log[-1].player < len(names) else "the other"
        return f"{quitter} resigned"
    if state.alive and not any(state.alive[i] for i in others):
        return "the others could not move" if len(others) > 1 else "the other could not move"
    # The engine's own test on the winning step (game.py: "level3" when a mortal's move
    # would have won too). Standing on level 3 is not it: a worker can stay up there
    # (moved 3 to 3) while its god wins by the board, as Chronus' towers do.
    last = state.steps[-1] if state.steps else None
    if (
        isinstance(last, MoveStep)
        and owner(last.worker) == winner
        and MORTAL.wins_by_move(state, winner, last)
    ):
        return "moved up to the third level"
    god = state.gods[winner] if state.gods else None
    return f"by {god}'s power" if god else None


def seat_view(game: Game, player: int, players: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The position as seat ``player`` sees it: the spectator view, ``you``, ``legal``
    (:func:`legal_view`; None off turn) and ``powers``, the card text of every god named
    in the game or on offer to the seat (so the page can say what a choice does)."""
    view = spectator_view(game, players)
    view["you"] = player
    legal = legal_view(game.state, player, undo=game.can_undo(player))
    view["legal"] = legal
    named = {g for g in (*game.state.gods, *game.state.pool) if g is not None}
    if legal is not None:
        named.update(legal["gods"])
    view["powers"] = {g: GODS[g].description for g in sorted(named)}  # the offer's too
    return view


def legal_view(state: GameState, player: int, *, undo: bool = False) -> dict[str, Any] | None:
    """What ``player`` may do now, in JSON-safe form; None when it is not their turn.

    Every entry comes from :func:`~meeple.games.santorini.game.legal_actions`, so what
    is listed is what the engine accepts and nothing else:

    - ``gods``: the gods to offer (phase ``pool``) or to take (phase ``gods``);
    - ``starters``: the seats the challenger may name to start;
    - ``place``: the free cells for the next worker;
    - ``moves``: ``[from, to]`` cells; ``builds``: ``[from, to, level]`` (level 1–3 a
      block, 4 a dome). A god's power is more of them: Atlas' dome on a low level is a
      second build on the same cell, Artemis' second move a move after a move,
      Prometheus' build before moving a build where a move comes first;
    - ``pass``: the turn may end now; ``undo``: a step of this turn may be taken back
      (the :class:`Game` knows, so the caller says); ``lose``: giving up is open (all
      a player stuck without auto-elimination may do, with every list empty).
    """
    if state.is_over or state.turn != player or not state.alive[player]:
        return None
    out: dict[str, Any] = {
        "gods": [],
        "starters": [],
        "place": [],
        "moves": [],
        "builds": [],
        "pass": False,
        "undo": undo,
        "lose": state.phase is Phase.PLAY,
    }
    for action in legal_actions(state):
        if isinstance(action, OfferGod | ChooseGod):
            out["gods"].append(action.god)
        elif isinstance(action, ChooseStarter):
            out["starters"].append(action.starter)
        elif isinstance(action, PlaceWorker):
            out["place"].append(action.cell)
        elif isinstance(action, Move):
            out["moves"].append([action.src, action.dst])
        elif isinstance(action, Build):
            out["builds"].append([action.src, action.dst, action.level])
        elif isinstance(action, Pass):
            out["pass"] = True
    return out

"""The Santorini turn flow the play page follows (issue 24), across every god.

The page ends a turn by itself when the seat view's ``legal`` offers nothing but the
end (``pass`` and no move or build), after a short undo window, and shows "End turn"
where the end comes with an optional step. For every god, random games check what the
page relies on: a turn offers only the end after its build (never before), the end it
sends then really passes the turn, and the optional-step case is where the rules have
one (Demeter's and Hephaestus' second build).
"""

from __future__ import annotations

import random

import pytest

from meeple.games.santorini import GODS, Game, Phase, Rules
from meeple.games.santorini.game import Build, Lose, Pass, legal_actions
from meeple.games.santorini.view import legal_view


def _pick_god(actions: list, me: int, god: str, rng: random.Random) -> object:
    # Player 0 takes (or offers) ``god``; the other player leaves it alone.
    mine = [a for a in actions if a.god == god]
    others = [a for a in actions if a.god != god]
    if me == 0 and mine:
        return mine[0]
    return rng.choice(others or mine)


def _turn_flow(god: str, seed: int) -> set[str]:
    rng = random.Random(seed)
    game = Game(Rules(players=2, gods=True), challenger=0)
    seen: set[str] = set()
    built = False
    for _ in range(400):
        s = game.state
        if s.is_over:
            break
        me = s.turn
        actions = legal_actions(s)
        if s.phase in (Phase.POOL, Phase.GODS):
            game.apply(_pick_god(actions, me, god, rng))  # type: ignore[arg-type]
            continue
        if s.phase is not Phase.PLAY:
            game.apply(rng.choice(actions))
            continue
        legal = legal_view(s, me, undo=game.can_undo(me))
        assert legal is not None
        if not actions:
            game.apply(Lose(me))
            built = False
            continue
        steps = bool(legal["moves"] or legal["builds"])
        if legal["pass"] and not steps:
            seen.add("auto-end")
            assert built, f"{god}: only the end offered before a build"
        elif legal["pass"]:
            seen.add("end-turn")
        else:
            assert steps, f"{god}: no step and no end"
        # Take the end when it is offered half the time, else a random step.
        if legal["pass"] and (not steps or rng.random() < 0.5):
            game.apply(Pass(me))
            after = game.state
            assert after.is_over or after.turn != me, f"{god}: the end did not pass the turn"
            built = False
            continue
        action = rng.choice([a for a in actions if not isinstance(a, Pass)])
        game.apply(action)
        built = built or isinstance(action, Build)
        if game.state.turn != me:
            built = False
    return seen


@pytest.mark.parametrize("god", sorted(GODS))
def test_every_god_turn_ends_by_itself_or_offers_end_turn(god: str) -> None:
    """For each god, the turn's end is offered only after a build and passes the turn."""
    seen: set[str] = set()
    for seed in range(3):
        seen |= _turn_flow(god, seed)
    assert "auto-end" in seen or "end-turn" in seen, god
    if god in ("Demeter", "Hephaestus"):
        assert "end-turn" in seen, f"{god}'s optional second build shows End turn"

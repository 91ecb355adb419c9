"""The Santorini spectator view: the whole position, JSON-safe."""

from __future__ import annotations

import json
import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from meeple.ai.santorini import random_action
from meeple.games.santorini.game import Game, GameWon, PlayerLost
from meeple.games.santorini.state import Rules
from meeple.games.santorini.view import spectator_view


def test_view_follows_a_random_game_with_gods() -> None:
    """Levels, domes, workers and gods in the view are the engine's at every step."""
    game = Game(Rules(players=2, gods=True), challenger=0)
    rng = random.Random(4)
    for _ in range(80):
        if game.is_over:
            break
        game.apply(random_action(game.state, rng))
        view = spectator_view(game, ("ann", "bob"))
        assert json.loads(json.dumps(view)) == view
        state = game.state
        assert view["levels"] == list(state.levels)
        assert view["domes"] == list(state.domes)
        assert sorted(w["cell"] for w in view["workers"]) == sorted(
            c for c in state.workers if c is not None
        )
        assert view["phase"] == state.phase.value
        assert len(view["moves"]) == len(game.log)
    assert view["players"] == ["ann", "bob"]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), players=st.sampled_from([2, 3]), gods=st.booleans())
@example(seed=76, players=3, gods=True)  # Chronus' towers with a worker left on level 3
def test_how_a_game_was_won_is_the_engines_reason(seed: int, players: int, gods: bool) -> None:
    """Issue 34: a finished game's view says how it was won, and that is the engine's
    own reason (its GameWon and PlayerLost events): the third level, the winner's god,
    or the last player left because the others resigned or could not move."""
    game = Game(Rules(players=players, gods=gods), challenger=0)
    rng = random.Random(seed)
    events: list[object] = []
    for _ in range(400):
        if game.is_over:
            break
        events = list(game.apply(random_action(game.state, rng)))
    if not game.is_over:
        return  # a long game: nothing to say yet
    names = ("ann", "bob", "cy")[:players]
    how = spectator_view(game, names)["result"]["how"]
    won = next(e for e in events if isinstance(e, GameWon))
    lost = [e for e in events if isinstance(e, PlayerLost)]
    if won.reason == "level3":
        assert how == "moved up to the third level"
    elif won.reason == "god":
        assert how == f"by {won.god}'s power"
    elif lost and lost[-1].reason == "resigned":
        assert how == f"{names[lost[-1].player]} resigned"
    else:
        assert how in ("the other could not move", "the others could not move")

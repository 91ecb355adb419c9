"""The Santorini spectator view: the whole position, JSON-safe."""

from __future__ import annotations

import json
import random

from meeple.ai.santorini import random_action
from meeple.games.santorini.game import Game
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

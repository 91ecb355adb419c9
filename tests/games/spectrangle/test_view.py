"""The Spectrangle spectator view: board fields, public hands, the bag's size only."""

from __future__ import annotations

import json
import random

from meeple.ai.spectrangle import greedy_action
from meeple.games.spectrangle.game import Game
from meeple.games.spectrangle.view import spectator_view


def test_view_follows_a_greedy_game() -> None:
    """Fields, hands and scores match the engine throughout; the bag appears as a count."""
    game = Game(["ann", "bob", "cid"], random.Random(2))
    while not game.is_over:
        player = game.turn
        assert player is not None
        game.apply(greedy_action(game, player))
        view = spectator_view(game)
        assert json.loads(json.dumps(view)) == view
        assert [f["tile"] for f in view["fields"]] == [
            None if game.board.tile(i) is None else str(game.board.tile(i)) for i in range(36)
        ]
        assert view["hands"] == [[str(t) for t in h] for h in game.hands]
        assert view["bag"] == game.bag_size
    assert view["result"] is not None
    assert game.result is not None
    assert view["result"]["scores"] == view["scores"] == list(game.result.scores)
    assert sum(f["bonus"] > 1 for f in view["fields"]) == 9

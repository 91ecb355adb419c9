"""Random games: legal actions always apply, tiles are conserved, replay is exact;
and the greedy player beats the random one."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.spectrangle import greedy_action, random_action
from meeple.games.spectrangle import (
    TILE_SET,
    Exchange,
    Game,
    GameEnded,
    Place,
    Skip,
    Tile,
    TilePlaced,
    replay,
)


def piece(code: str) -> frozenset[str]:
    return frozenset(str(r) for r in Tile.parse(code).rotations())


ALL_PIECES = Counter(piece(str(t)) for t in TILE_SET)


def assert_tiles_conserved(game: Game) -> None:
    """Hands, bag, board and the set-aside tiles hold each of the 36 pieces once."""
    state = game.state()
    codes = [str(t) for hand in state.hands for t in hand]
    codes += [str(t) for t in state.bag] + [str(t) for t in state.set_aside]
    codes += [code for code in state.board if code is not None]
    assert Counter(piece(code) for code in codes) == ALL_PIECES


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4))
def test_random_games_apply_cleanly_and_replay(seed: int, players: int) -> None:
    """Every legal action applies; placements score what the query said; replay is exact."""
    rng = random.Random(seed)
    game = Game([f"p{i}" for i in range(players)], rng)
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        placements = {(p.tile, p.index): p.points for p in game.legal_placements(turn)}
        actions = game.legal_actions(turn)
        assert actions
        assert game.must_skip() == (not placements)
        if placements:
            assert all(isinstance(a, Place) for a in actions)
        else:
            assert Skip(turn) in actions
            assert all(isinstance(a, Skip | Exchange) for a in actions)
        action = rng.choice(actions)
        events = game.apply(action)
        if isinstance(action, Place):
            placed = events[0]
            assert isinstance(placed, TilePlaced)
            assert placed.points == placements[(action.tile, action.index)]
        assert_tiles_conserved(game)
    ended = game.events[-1]
    assert isinstance(ended, GameEnded)
    assert game.bag_size == 0 or game.rules.skip_rounds_limit is not None
    assert not any(game.can_place(p) for p in range(players))
    placed_total = [0] * players
    for event in game.events:
        if isinstance(event, TilePlaced):
            placed_total[event.player] += event.points
    assert tuple(placed_total) == game.scores
    assert replay(game.record()).state() == game.state()


def test_greedy_beats_random() -> None:
    """Over 30 two-player games, the greedy player wins clearly more than half."""
    wins = 0
    for seed in range(30):
        rng = random.Random(seed)
        game = Game(["greedy", "random"], rng)
        while not game.is_over:
            turn = game.turn
            assert turn is not None
            if turn == 0:
                game.apply(greedy_action(game, turn))
            else:
                game.apply(random_action(game, turn, rng))
        result = game.result
        assert result is not None
        wins += result.ranking[0] == 0
    assert wins >= 20

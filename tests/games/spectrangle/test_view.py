"""The Spectrangle views: board fields, public hands, the bag's size only; the seat's fits."""

from __future__ import annotations

import json
import random

import pytest

from meeple.ai.spectrangle import greedy_action
from meeple.games.spectrangle import FIELD_COUNT, Place, Tile, TilePlaced, replay
from meeple.games.spectrangle.game import Game
from meeple.games.spectrangle.view import seat_view, spectator_view


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


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 2), (4, 11)])
def test_the_move_log_ends_on_the_final_scores(players: int, seed: int) -> None:
    """Issue 34: after "game over" the log deducts each hand's tiles, so every player's
    last total in the log is their final score (not the score before the deduction)."""
    game = Game([f"p{i}" for i in range(players)], random.Random(seed))
    while not game.is_over:
        player = game.turn
        assert player is not None
        game.apply(greedy_action(game, player))
    result = game.result
    assert result is not None
    moves = spectator_view(game)["moves"]
    last: dict[int, int] = {}
    for entry in moves:
        if entry["player"] is not None and entry["total"] is not None:
            last[entry["player"]] = entry["total"]
    assert [last.get(p, 0) for p in range(players)] == list(result.scores)
    ended = [e["text"] for e in moves].index("game over")
    deducted = moves[ended + 1 :]
    assert [e["score"] for e in deducted] == [-d for d in result.deductions if d]
    for entry in deducted:
        held = result.hands[entry["player"]]
        assert entry["text"] == "left in hand: " + " ".join(str(t) for t in held)


def _apply_to_copy(game: Game, action: Place) -> list[TilePlaced]:
    copy = replay(game.record())
    return [e for e in copy.apply(action) if isinstance(e, TilePlaced)]


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 2), (4, 11)])
def test_fits_are_exactly_the_engines_placements(players: int, seed: int) -> None:
    """For the seat on turn, ``fits`` lists every (rotation, field) the board accepts,
    with the points the board scores; every listed placement is accepted by the game and
    scores those points; other seats (and a finished game) get no fits."""
    game = Game(["ann", "bob", "cid", "dee"][:players], random.Random(seed))
    turns = 0
    while not game.is_over:
        player = game.turn
        assert player is not None
        view = seat_view(game, player)
        fits = view["fits"]
        rotations = [t for held in game.hand(player) for t in held.rotations()]
        assert list(fits) == [str(t) for t in rotations]
        for tile in rotations:
            expected = [
                [index, game.board.check(tile, index)]
                for index in range(FIELD_COUNT)
                if game.board.is_legal(tile, index)
            ]
            assert fits[str(tile)] == expected
        listed = [(code, index, points) for code, pairs in fits.items() for index, points in pairs]
        assert bool(listed) == (not game.must_skip())
        for code, index, points in listed:
            [placed] = _apply_to_copy(game, Place(player, Tile.parse(code), index))
            assert (placed.index, placed.points, str(placed.tile)) == (index, points, code)
        for other in range(players):
            if other != player:
                assert seat_view(game, other)["fits"] == {}
        game.apply(greedy_action(game, player))
        turns += 1
    assert turns > 10
    assert all(seat_view(game, p)["fits"] == {} for p in range(players))

"""The Santorini players: the search player wins, blocks, and beats the random player."""

from __future__ import annotations

import math
import random

import pytest
from tests.depth import DEEP, heavy

from meeple.ai.santorini import SearchStats, evaluate, random_action, search_action
from meeple.games.santorini import (
    DOME,
    Build,
    Move,
    Phase,
    Rules,
    advance,
    cell,
    from_diagram,
    legal_actions,
    new_game,
)


def _match(seed: int, *, gods: bool, search_seat: int) -> int | None:
    rng = random.Random(seed)
    s = new_game(Rules(gods=gods), challenger=rng.randrange(2))
    for _ in range(3000):
        if s.is_over:
            return s.winner
        if s.turn == search_seat:
            action = search_action(s, rng)
        else:
            action = random_action(s, rng)
        s, _ = advance(s, action)
    return None


@pytest.mark.slow
def test_search_player_beats_the_random_player() -> None:
    """Nine in ten seeded games or more, half with gods, from either seat (make test: 8
    games, each pairing of gods and seat twice; make test-deep: 20)."""
    games = heavy(8, 20)
    wins = sum(
        _match(seed, gods=seed % 2 == 0, search_seat=seed % 4 // 2) == seed % 4 // 2
        for seed in range(games)
    )
    assert wins >= math.ceil(0.9 * games)


def test_search_takes_a_winning_move() -> None:
    """A worker on level 2 next to level 3 moves up and wins."""
    s = from_diagram(
        """
        0  0  0  0  0
        0  2A 3  0  0
        0  0  0  0  0
        0  0  0  0  0
        0  0  0  0  B
        """
    )
    assert search_action(s, random.Random(0)) == Move(0, cell(1, 1), cell(1, 2))


def test_search_blocks_the_opponents_threat() -> None:
    """The opponent stands on level 2 next to a level-3 cell: the search domes it."""
    s = from_diagram(
        """
        0  0  0  0  0
        0  A  0  0  0
        0  0  3  2B 0
        0  0  0  0  0
        0  0  0  0  0
        """
    )
    rng = random.Random(1)
    first = search_action(s, rng)
    assert isinstance(first, Move)
    s, _ = advance(s, first)
    second = search_action(s, rng)
    assert second == Build(0, first.dst, cell(2, 2), DOME)


def test_search_plays_every_set_up_phase() -> None:
    """Gods, starter and placement: the search player's choices are legal and central."""
    rng = random.Random(3)
    s = new_game(Rules(players=3), challenger=2)
    while s.phase is not Phase.PLAY:
        action = search_action(s, rng)
        assert action in legal_actions(s)
        s, _ = advance(s, action)
    assert s.starter == 2
    assert s.gods[2] is not None
    assert cell(2, 2) in s.workers


def test_random_player_is_reproducible() -> None:
    """The same seed gives the same game."""

    def run(seed: int) -> tuple[object, ...]:
        rng = random.Random(seed)
        s = new_game(Rules(gods=True), challenger=0)
        log = []
        while not s.is_over:
            a = random_action(s, rng)
            log.append(a)
            s, _ = advance(s, a)
        return tuple(log)

    assert run(5) == run(5)


def test_search_counts_its_work_and_evaluation_is_symmetric() -> None:
    """Stats grow with the search; a won game is worth +WIN to the winner only."""
    s = from_diagram("0 0 0 0 0\n0 A 0 0 0\n0 0 0 0 0\n0 0 0 b 0\n0 0 0 0 B")
    stats = SearchStats()
    search_action(s, random.Random(0), stats=stats)
    assert stats.nodes > 50
    assert stats.evaluations > 50
    won, _ = advance(
        from_diagram("0 0 0 0 0\n0 2A 3 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 B"),
        Move(0, cell(1, 1), cell(1, 2)),
    )
    assert evaluate(won, 0) == -evaluate(won, 1) > 0


@pytest.mark.slow
def test_search_asked_step_by_step_finishes_every_turn() -> None:
    """Re-planning after each step never loops (Triton on the perimeter included: seed 1
    has a ten-step Triton turn; make test-deep adds seed 0)."""
    for seed in (0, 1) if DEEP else (1,):
        rng = random.Random(seed)
        s = new_game(Rules(god_set=("Triton", "Artemis"), challenger_picks_pool=False))
        while s.phase is not Phase.PLAY:
            s, _ = advance(s, search_action(s, rng))
        for _ in range(10):
            if s.is_over:
                break
            seat = s.turn
            for _step in range(20):
                s, _ = advance(s, search_action(s, rng, width=2))
                if s.is_over or s.turn != seat:
                    break
            else:
                raise AssertionError("a turn took more than 20 steps")


def test_search_plays_three_player_games_to_the_end() -> None:
    """Three players with gods: the search player (seat 0) beats two random players."""
    rng = random.Random(2)
    s = new_game(Rules(players=3), challenger=1)
    while not s.is_over:
        action = search_action(s, rng) if s.turn == 0 else random_action(s, rng)
        s, _ = advance(s, action)
    assert s.winner == 0

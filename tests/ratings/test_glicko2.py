"""Glicko-2: Glickman's worked example, and properties of random rating periods."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ratings import Rating, Result, rate_game, update
from meeple.ratings.glicko2 import DEFAULT_RD


def test_the_papers_worked_example() -> None:
    """r=1500, RD=200, sigma=0.06, tau=0.5 against 1400/30 (win), 1550/100 (loss) and
    1700/300 (loss): r' 1464.06, RD' 151.52, sigma' 0.05999 ("Example of the Glicko-2
    system", section "An example"). The paper rounds its intermediate values; unrounded
    arithmetic gives r' 1464.05, within 0.01 of it."""
    player = Rating(1500, 200, 0.06)
    after = update(
        player,
        [
            Result(Rating(1400, 30), 1),
            Result(Rating(1550, 100), 0),
            Result(Rating(1700, 300), 0),
        ],
        tau=0.5,
    )
    assert after.rating == pytest.approx(1464.06, abs=0.015)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_only_widens_the_deviation() -> None:
    """Step 6 alone: phi* = sqrt(phi^2 + sigma^2); rating and volatility unchanged."""
    after = update(Rating(1500, 200, 0.06), [])
    assert after.rating == 1500
    assert after.volatility == 0.06
    assert after.rd == pytest.approx(173.7178 * math.hypot(200 / 173.7178, 0.06))
    assert update(Rating(1500, DEFAULT_RD), []).rd == DEFAULT_RD  # capped at a newcomer's


def test_weight_one_is_the_plain_algorithm_and_weights_scale_the_change() -> None:
    """Weight 1 is the paper's result; half the weight moves the rating less."""
    p, o = Rating(1500, 200), Rating(1600, 80)
    assert update(p, [Result(o, 1, 1.0)]) == update(p, [Result(o, 1)])
    assert 1500 < update(p, [Result(o, 1, 0.5)]).rating < update(p, [Result(o, 1)]).rating


ratings = st.builds(
    Rating,
    st.floats(500, 2500),
    st.floats(30, 350),
    st.floats(0.03, 0.1),
)


@settings(max_examples=200, deadline=None)
@given(
    player=ratings,
    games=st.lists(st.tuples(ratings, st.sampled_from([0.0, 0.5, 1.0])), max_size=12),
)
def test_ratings_stay_finite(player: Rating, games: list[tuple[Rating, float]]) -> None:
    """Any period of results gives finite numbers, RD within (0, 350]."""
    after = update(player, [Result(o, s) for o, s in games])
    assert math.isfinite(after.rating)
    assert math.isfinite(after.volatility)
    assert 0 < after.rd <= DEFAULT_RD
    assert after.volatility > 0


@settings(max_examples=100, deadline=None)
@given(
    games=st.lists(
        st.tuples(st.floats(-400, 400), st.floats(30, 350), st.sampled_from([0.0, 0.5, 1.0])),
        min_size=1,
        max_size=40,
    )
)
def test_the_deviation_shrinks_with_games(games: list[tuple[float, float, float]]) -> None:
    """A newcomer's RD drops with every game against a player within 400 points, until it
    nears the floor the volatility keeps it at (about 75 with sigma 0.06)."""
    p = Rating()
    for offset, rd, score in games:
        after = update(p, [Result(Rating(p.rating + offset, rd), score)])
        if p.rd > 100:
            assert after.rd < p.rd
        p = after
    assert p.rd < DEFAULT_RD


def _two_player(scores: list[int], winners: list[int]) -> dict[str, object]:
    return {
        "players": ["a", "b"],
        "actions": [],
        "result": {"reason": "x", "player": None, "scores": scores, "winners": winners},
    }


@settings(max_examples=200, deadline=None)
@given(a=ratings, b=ratings, sa=st.integers(0, 600), sb=st.integers(0, 600))
def test_the_winner_never_drops_against_the_loser(a: Rating, b: Rating, sa: int, sb: int) -> None:
    """In a two-player game the winner's rating does not fall and the loser's does not
    rise; a draw moves them towards each other."""
    winners = [0] if sa > sb else [1] if sb > sa else [0, 1]
    na, nb = rate_game(_two_player([sa, sb], winners), [a, b])
    if sa > sb:
        assert na.rating >= a.rating
        assert nb.rating <= b.rating
    elif sb > sa:
        assert nb.rating >= b.rating
        assert na.rating <= a.rating
    elif a.rating > b.rating:
        assert na.rating <= a.rating
        assert nb.rating >= b.rating

"""Glicko-2, as in Mark Glickman's "Example of the Glicko-2 system" (2013): pure math.

A player's :class:`Rating` is ``rating`` (r), ``rd`` (rating deviation) and
``volatility`` (sigma) on the Glicko scale (1500 / 350 / 0.06 for a newcomer).
:func:`update` takes one rating period's results against opponents — each a
:class:`Result` with the opponent's rating *before* the period, the score (1 win,
0.5 draw, 0 loss) and a weight — and returns the rating after it. Weights extend the
paper: a result of weight w counts w times in the sums of steps 3 and 4 (meeple
weighs each pairwise result of an n-player game 1/(n-1); see
:mod:`meeple.ratings.outcomes`). With weight 1 everywhere it is the paper's algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RATING",
    "DEFAULT_RD",
    "DEFAULT_TAU",
    "DEFAULT_VOLATILITY",
    "SCALE",
    "Rating",
    "Result",
    "update",
]

SCALE = 173.7178  # Glicko-2 step 2: the Glicko scale divided by this is the Glicko-2 scale
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
DEFAULT_TAU = 0.5  # the system constant τ (the paper: reasonable values are 0.3 to 1.2)
EPSILON = 0.000001  # the convergence tolerance of step 5.4
MIN_RD = 1.0  # keep φ away from zero so that repeated updates stay finite


@dataclass(frozen=True, slots=True)
class Rating:
    """A rating on the Glicko scale."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY


@dataclass(frozen=True, slots=True)
class Result:
    """One game against ``opponent`` (rated as before the period): ``score`` 1, 0.5 or 0."""

    opponent: Rating
    score: float
    weight: float = 1.0


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, g_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))


def _new_volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    """Step 5: the Illinois algorithm on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        d = phi * phi + v + ex
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Iterable[Result], *, tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period with ``results`` (steps 2–8).

    With no results only the deviation grows (step 6 alone), as the paper says for a
    player who did not compete.
    """
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    terms = []
    for r in results:
        if r.weight <= 0:
            continue
        mu_j = (r.opponent.rating - DEFAULT_RATING) / SCALE
        g_j = _g(r.opponent.rd / SCALE)
        terms.append((g_j, _expected(mu, mu_j, g_j), r.score, r.weight))
    if not terms:
        return Rating(player.rating, min(DEFAULT_RD, math.hypot(phi, sigma) * SCALE), sigma)
    # Step 3: the estimated variance v; step 4: the estimated improvement Δ.
    v = 1.0 / sum(w * g * g * e * (1.0 - e) for g, e, _, w in terms)
    improvement = sum(w * g * (s - e) for g, e, s, w in terms)
    delta = v * improvement
    sigma_new = _new_volatility(phi, sigma, delta, v, tau)
    # Steps 6 and 7: the pre-period deviation, then the new deviation and rating.
    phi_star = math.hypot(phi, sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * improvement
    # Step 8: back to the Glicko scale.
    return Rating(
        SCALE * mu_new + DEFAULT_RATING,
        min(DEFAULT_RD, max(MIN_RD, SCALE * phi_new)),
        sigma_new,
    )

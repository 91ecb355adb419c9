"""Ratings for every game: Glicko-2 (:mod:`.glicko2`) over the pairwise results of each
finished game (:mod:`.outcomes`). Pure computation; the store keeps the numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from meeple.ratings import glicko2, outcomes
from meeple.ratings.glicko2 import *  # noqa: F403
from meeple.ratings.outcomes import *  # noqa: F403

__all__ = [*glicko2.__all__, *outcomes.__all__, "rate_game"]


def rate_game(
    record: Mapping[str, Any], before: Sequence[glicko2.Rating], *, tau: float = glicko2.DEFAULT_TAU
) -> list[glicko2.Rating]:
    """Every seat's rating after the game (one rating period), from ``before`` by seat.

    Each seat is updated against the others' ratings as they were before the game.
    A record that is not rated (:func:`outcomes.rated`) leaves the ratings as they are.
    """
    results: list[list[glicko2.Result]] = [[] for _ in before]
    pairs = outcomes.pairings(record)
    if not pairs:
        return list(before)
    for p in pairs:
        results[p.a].append(glicko2.Result(before[p.b], p.score, p.weight))
        results[p.b].append(glicko2.Result(before[p.a], 1.0 - p.score, p.weight))
    return [glicko2.update(r, res, tau=tau) for r, res in zip(before, results, strict=True)]

"""How far the heavy tests go: a sample on every run, the whole set under ``make test-deep``.

``make test`` (and CI) runs the ``default`` hypothesis profile, ``make test-deep`` the
``deep`` one (tests/conftest.py). A hypothesis test scales with the profile by itself;
a test that loops over seeds, positions or cases asks :func:`heavy` for its count, so
that ``make test`` checks a fixed sample of what ``make test-deep`` checks whole.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["DEEP", "PROFILE", "every_nth", "heavy"]

T = TypeVar("T")

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
DEEP = PROFILE == "deep"


def heavy(default: int, deep: int) -> int:
    """How many cases a heavy test checks: ``deep`` under make test-deep, else ``default``."""
    return deep if DEEP else default


def every_nth(items: Sequence[T], count: int) -> list[T]:
    """``count`` items spread evenly over ``items`` (all of them when ``count`` covers it),
    so that a sample of a seeded game's positions still reaches its crowded end."""
    if count >= len(items):
        return list(items)
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]

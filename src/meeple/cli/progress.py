"""``--progress K`` for every ``meeple GAME match``: the running summary on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Protocol

__all__ = ["Summarised", "add_progress_argument", "progress_every"]


class Summarised(Protocol):
    """A match result so far (:class:`meeple.ai.match.MatchResult` and the Santorini one)."""

    def summary(self) -> str: ...


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """``--progress K``: report every K games on stderr (0, the default: never)."""
    p.add_argument(
        "--progress", type=int, default=0, metavar="K", help="report every K games on stderr"
    )


def progress_every(k: int) -> Callable[[int, Summarised], None]:
    """A match's progress callback: after every ``k`` games (0: never) the summary so far,
    as ``200 games: …``, on stderr."""

    def progress(done: int, result: Summarised) -> None:
        if k and done % k == 0:
            print(f"{done} games: {result.summary()}", file=sys.stderr, flush=True)

    return progress

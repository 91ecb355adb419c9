"""meeple's ``hard`` player against itself with other search features:
``python benchmarks/santorini_selfmatch.py --a lmr,qs --b none [--games N]
[--think-time T | --nodes N] [--gods] [--seed S]``.

Each side is an :class:`~meeple.ai.santorini_search.AlphaBetaPlayer` searching with the
compiled core and a mask of its selective features
(:data:`~meeple.ai.santorini_native.SELECTIVE`: ``lmr``, ``rfp``, ``nmp``, ``qs``,
``lmp``, ``iir``, ``hist``, ``hp``, ``rfpd``, ``fp``, ``lmri``; ``none`` is the exact
full-width search, ``play`` what the players use,
:data:`~meeple.ai.santorini_search.PLAY_SELECTIVE`). Both play in one process, one
after the other, each on the process's CPU clock (fair on a machine shared with other
work), or with ``--nodes`` at a fixed node budget a turn and no clock. Games come in
pairs: the same random worker placements (and, with ``--gods``, the same random god
pair) with the seats swapped, A starting in the even games. It
prints A's wins, losses and draws with a 95 % Wilson interval, and each side's median
depth and nodes per turn. How each feature was kept is in ``docs/santorini-engine.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from random import Random

from meeple.ai.match import wilson_interval
from meeple.ai.santorini_match import SantoriniMatch, run_match
from meeple.ai.santorini_native import core_module
from meeple.ai.santorini_search import AlphaBetaPlayer, selective_mask
from meeple.games.santorini import Action, GameState

__all__ = ["main", "mask_of"]


def mask_of(spec: str) -> int:
    """``lmr,qs`` → the mask of those features; ``none`` → 0; ``play`` → the players'."""
    try:
        return selective_mask(spec)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc


class _Logged(AlphaBetaPlayer):
    """A player that keeps each search's depth and nodes."""

    def __init__(
        self, think_time: float, selective: int, name: str, nodes: int | None = None
    ) -> None:
        # --nodes: a fixed node budget a turn and no clock (the same games anywhere)
        super().__init__(
            think_time=think_time,
            clock=None if nodes else time.process_time,
            max_nodes=nodes,
            selective=selective,
            name=name,
        )
        self.depths: list[int] = []
        self.nodes: list[int] = []

    def choose(self, s: GameState, rng: Random) -> Action:
        before = self.last
        action = super().choose(s, rng)
        if self.last is not None and self.last is not before:
            self.depths.append(self.last.depth)
            self.nodes.append(self.last.nodes)
        return action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--a", default="play", help="A's features (comma list, none, play)")
    parser.add_argument("--b", default="none", help="B's features")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--think-time", type=float, default=0.1)
    parser.add_argument(
        "--nodes", type=int, default=None, help="a fixed node budget a turn instead of time"
    )
    parser.add_argument("--gods", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if core_module() is None:
        raise SystemExit("the compiled core is not built (make native)")
    a = _Logged(args.think_time, mask_of(args.a), args.a, args.nodes)
    b = _Logged(args.think_time, mask_of(args.b), args.b, args.nodes)
    players = (a, b)

    def fresh(g: int, so_far: SantoriniMatch) -> None:
        print(f"game {g}: {so_far.wins}-{so_far.losses}-{so_far.draws}", flush=True)
        for p in players:  # a new game: the tables forgotten
            core = p._native()
            if core is not None:
                core.clear()

    result = run_match(
        (a, b),
        args.games,
        lambda g: Random(args.seed * 1_000_003 + g // 2),
        gods=args.gods,
        clock=time.process_time,
        progress=fresh,
    )
    lo, hi = wilson_interval(result.win_rate, result.games)
    print(result.summary())
    print(f"A score {100 * result.win_rate:.1f} % (95 % CI {100 * lo:.1f}-{100 * hi:.1f})")
    for p in players:
        if p.depths:
            print(
                f"{p.name}: median depth {statistics.median(p.depths)}, "
                f"median nodes {int(statistics.median(p.nodes))}"
            )


if __name__ == "__main__":
    main()

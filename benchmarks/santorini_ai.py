"""Santorini engine and AI benchmark: ``python benchmarks/santorini_ai.py``.

Prints, for fixed mid-game positions (no gods and a few gods), legal-step generation
per second (the queries an AM27 update needs: ``legal_steps`` with its dead-end check),
complete-turn generation per second (``turns``), the classic two-ply player's search
nodes per second and time per move (best of several runs), and with gods the god
twin's turns per second (:class:`meeple.ai.santorini_twin.GodTwin`, what the search
expands).
Then the alpha-beta search (:func:`meeple.ai.santorini_search.search_turn`) given
``--think-time`` seconds from the same positions: the depth it finished, its nodes
and nodes per second, on the process's CPU clock (``--clock cpu``, the default: fair
on a machine shared with other work) or the wall clock.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable

from meeple.ai.santorini import SearchStats, search_action
from meeple.ai.santorini_search import SearchBudget, search_turn
from meeple.ai.santorini_twin import GodTwin
from meeple.games.santorini import GameState, from_diagram, legal_steps, turns

BOARD = """
0  1  0  2  0
1  A  2  1  0
0  1  a  3  1
0  2  B  1  0
1  0  0  b  0
"""

OPENING = """
0  0  0  0  0
0  A  0  b  0
0  0  0  0  0
0  B  0  a  0
0  0  0  0  0
"""

POSITIONS: dict[str, GameState] = {
    "no gods": from_diagram(BOARD),
    "no gods, opening": from_diagram(OPENING),
    "Apollo v Athena": from_diagram(BOARD, gods=("Apollo", "Athena")),
    "Artemis v Minotaur": from_diagram(BOARD, gods=("Artemis", "Minotaur")),
    "Prometheus v Limus": from_diagram(BOARD, gods=("Prometheus", "Limus")),
    "Demeter v Hera": from_diagram(BOARD, gods=("Demeter", "Hera")),
    "Triton v Hestia": from_diagram(BOARD, gods=("Triton", "Hestia")),
    "Atlas v Hephaestus": from_diagram(BOARD, gods=("Atlas", "Hephaestus")),
    "Pan v Chronus": from_diagram(BOARD, gods=("Pan", "Chronus")),
    "opening, Apollo v Athena": from_diagram(OPENING, gods=("Apollo", "Athena")),
    "opening, Artemis v Minotaur": from_diagram(OPENING, gods=("Artemis", "Minotaur")),
    "opening, Demeter v Hera": from_diagram(OPENING, gods=("Demeter", "Hera")),
    "opening, Triton v Atlas": from_diagram(OPENING, gods=("Triton", "Atlas")),
}


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best kept)")
    parser.add_argument("--think-time", type=float, default=1.0, help="search seconds")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.1f}"
    )
    header = (
        f"{'position':<28} {'steps':>5} {'steps/s':>9} {'turns':>5} {'turns/s':>9}"
        f" {'nodes/s':>9} {'AI move ms':>10} {'twin turns/s':>12}"
    )
    print(header)
    for name, s in POSITIONS.items():
        steps = legal_steps(s)
        t_steps = _best(lambda s=s: legal_steps(s), args.repeat)
        all_turns = list(turns(s))
        t_turns = _best(lambda s=s: list(turns(s)), args.repeat)
        stats = SearchStats()
        t_ai = _best(
            lambda s=s, st=stats: search_action(s, random.Random(0), stats=st), args.repeat
        )
        nodes = stats.nodes // args.repeat
        twin_rate = "-"
        if s.rules.gods and GodTwin.covers(s):
            twin = GodTwin(s.gods)
            node = twin.node(s)
            t_twin = _best(lambda t=twin, n=node: t.children(n), args.repeat)
            twin_rate = f"{len(twin.children(node)) / t_twin:.0f}"
        print(
            f"{name:<28} {len(steps):>5} {len(steps) / t_steps:>9.0f} {len(all_turns):>5}"
            f" {len(all_turns) / t_turns:>9.0f} {nodes / t_ai:>9.0f} {t_ai * 1000:>10.1f}"
            f" {twin_rate:>12}"
        )
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print()
    print(f"alpha-beta search, {args.think_time:g} s a move ({args.clock} clock)")
    print(f"{'position':<28} {'depth':>5} {'nodes':>8} {'nodes/s':>9} {'value':>8}  turn")
    for name, s in POSITIONS.items():
        start = clock()
        result = search_turn(s, SearchBudget(args.think_time, clock))
        spent = clock() - start
        route = " ".join(type(a).__name__ for a in result.route)
        print(
            f"{name:<28} {result.depth:>5} {result.nodes:>8} {result.nodes / spent:>9.0f}"
            f" {result.value:>8}  {route}"
        )


if __name__ == "__main__":
    main()

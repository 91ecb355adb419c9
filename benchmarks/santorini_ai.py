"""Santorini engine and AI benchmark: ``python benchmarks/santorini_ai.py``.

Prints, for fixed mid-game positions (no gods and a few gods), legal-step generation
per second (the queries an AM27 update needs: ``legal_steps`` with its dead-end check),
complete-turn generation per second (``turns``), the classic two-ply player's search
nodes per second and time per move (best of several runs), and with gods the god
twin's turns per second (:class:`meeple.ai.santorini_twin.GodTwin`, what the search
expands).
Then the alpha-beta search (:func:`meeple.ai.santorini_search.search_turn`) given
``--think-times`` seconds (0.1 and 1 by default) from the same positions, the Python
search and the compiled core (``meeple.ai._santorini_core``, when built) one after
the other: the depth each finished, its nodes and nodes per second, on the process's
CPU clock (``--clock cpu``, the default: fair on a machine shared with other work) or
the wall clock; and both at a fixed depth without a clock (depth 4 without gods, 2
with), nodes per second side by side.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable

from meeple.ai.santorini import SearchStats, search_action
from meeple.ai.santorini_native import core_module
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
    parser.add_argument(
        "--think-times",
        type=lambda x: [float(t) for t in x.split(",")],
        default=[0.1, 1.0],
        help="search seconds a move, comma-separated (default 0.1,1)",
    )
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
    searches = [("python", False)]
    if core_module() is not None:
        searches.append(("core", True))
    else:
        print("\n(the compiled core is not built: the Python search only)")
    for think in args.think_times:
        print()
        print(f"alpha-beta search, {think:g} s a move ({args.clock} clock)")
        print(
            f"{'position':<28} {'search':<6} {'depth':>5} {'nodes':>9} {'nodes/s':>9}"
            f" {'value':>8}  turn"
        )
        for name, s in POSITIONS.items():
            for label, native in searches:
                start = clock()
                result = search_turn(s, SearchBudget(think, clock), native=native)
                spent = clock() - start
                route = " ".join(type(a).__name__ for a in result.route)
                print(
                    f"{name:<28} {label:<6} {result.depth:>5} {result.nodes:>9}"
                    f" {result.nodes / max(spent, 1e-9):>9.0f} {result.value:>8}  {route}"
                )
    if len(searches) > 1:
        print()
        print(f"fixed depth, no clock: nodes per second ({args.clock} clock, best of 3)")
        print(f"{'position':<28} {'depth':>5} {'python n/s':>11} {'core n/s':>11} {'ratio':>6}")
        for name, s in POSITIONS.items():
            depth = 4 if not s.rules.gods else 2
            rates = []
            for _label, native in searches:
                best = 0.0
                for _ in range(3):
                    start = clock()
                    result = search_turn(s, SearchBudget(max_depth=depth), native=native)
                    spent = max(clock() - start, 1e-9)
                    best = max(best, result.nodes / spent)
                rates.append(best)
            print(
                f"{name:<28} {depth:>5} {rates[0]:>11.0f} {rates[1]:>11.0f}"
                f" {rates[1] / rates[0]:>6.1f}"
            )


if __name__ == "__main__":
    main()

"""Nodes a second and depth of the compiled core by evaluation, without gods:
``python benchmarks/santorini_evals.py [--think-time 1] [--pin]``.

From fixed positions without gods (an opening from random placements and three
mid-game positions played by the core itself from fixed seeds), the players' selective
search (:func:`meeple.ai.santorini_search.search_turn`) with each evaluation of
:data:`~meeple.ai.santorini_search.EVALUATIONS` (the table evaluation, the network) for
``--think-time`` seconds of the process's CPU time, a fresh search context each: the
depth it finished, its nodes and nodes a second. ``--pin`` runs it on core 0.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from meeple.ai.santorini_native import NativeSearch, core_module
from meeple.ai.santorini_positions import random_position
from meeple.ai.santorini_search import SearchBudget, play_net, search_turn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--think-time", type=float, default=1.0)
    parser.add_argument("--pin", action="store_true", help="run on core 0")
    args = parser.parse_args()
    if args.pin:
        os.sched_setaffinity(0, {0})
    mod = core_module()
    net = play_net()
    if mod is None or net is None:
        raise SystemExit("needs the compiled core and the shipped network")
    positions = [
        ("opening", random_position(random.Random(1), 0)),
        ("mid-game 1", random_position(random.Random(2), 8)),
        ("mid-game 2", random_position(random.Random(3), 12)),
        ("mid-game 3", random_position(random.Random(4), 16)),
    ]
    print(f"load {os.getloadavg()[0]:.1f}; {args.think_time:g} s CPU a search")
    print("| position | evaluation | depth | nodes | nodes a second |")
    print("| --- | --- | --- | --- | --- |")
    for name, s in positions:
        for label, use in (("table", None), ("net", net)):
            core = NativeSearch(mod)
            t0 = time.process_time()
            found = search_turn(
                s, SearchBudget(args.think_time, time.process_time), core=core, net=use
            )
            spent = time.process_time() - t0
            print(
                f"| {name} | {label} | {found.depth} | {found.nodes:,} | "
                f"{found.nodes / max(spent, 1e-9):,.0f} |",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

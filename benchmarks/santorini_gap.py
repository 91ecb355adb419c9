"""What meeple's search spends its nodes on: ``python benchmarks/santorini_gap.py
[--nodes N] [--selective play] [--table-bits B]``.

From fixed positions (an opening from random placements and three mid-game positions
played by the core itself from fixed seeds, no gods; the same with Apollo v Athena),
one search of the compiled core at a fixed node budget (no clock: the same nodes
anywhere, so no pinning is needed; nodes a second are on the process's CPU time),
with the players' evaluation and a mask of selective features
(:data:`~meeple.ai.santorini_native.SELECTIVE`; ``play`` the players', ``none`` the
exact search), a fresh context each. From the core's counters
(:meth:`~meeple.ai.santorini_native.NativeSearch.stats`) it prints per position:

- the nodes of each finished iteration and the effective branching factor
  ``nodes(d) / nodes(d - 1)``;
- the root's number of turns ``b`` and the depth a perfectly ordered full-width
  alpha-beta search would reach with the same nodes (the minimal tree has about
  ``b^ceil(d/2) + b^floor(d/2)`` leaves);
- move ordering: the share of nodes that failed high on their first move, and the
  mean place of the cutting move;
- the table: hits (the position found) and returns (the node answered by it) per probe;
- the nodes facing a win to stop (santorini-ai generates only the blocking turns there);
- the share of the nodes at each ply from the root.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time

from meeple.ai.santorini_native import NativeSearch, core_children, core_module, god_indices
from meeple.ai.santorini_positions import random_position
from meeple.ai.santorini_search import SearchBudget, _twin_for, search_turn, selective_mask
from meeple.games.santorini import GameState

__all__ = ["ideal_depth", "main"]


def ideal_depth(branching: int, nodes: int) -> float:
    """The depth at which the minimal alpha-beta tree of a uniform tree with
    ``branching`` children a node has ``nodes`` leaves (``2 b^(d/2)`` ≈ nodes)."""
    if branching < 2 or nodes < 2:
        return 0.0
    return 2.0 * math.log(nodes / 2.0) / math.log(branching)


def _positions() -> list[tuple[str, GameState]]:
    out: list[tuple[str, GameState]] = []
    for gods in (None, ("Apollo", "Athena")):
        tag = "" if gods is None else f", {gods[0]} v {gods[1]}"
        out.append(("opening" + tag, random_position(random.Random(1), 0, gods)))
        for seed, plies in ((2, 8), (3, 12), (4, 16)):
            out.append(
                (f"mid-game {seed - 1}{tag}", random_position(random.Random(seed), plies, gods))
            )
    return out


def _root_turns(s: GameState) -> int:
    mod = core_module()
    assert mod is not None
    gods = (None, None) if not s.rules.gods else (s.gods[0], s.gods[1])
    assert god_indices(mod, gods) is not None
    twin = _twin_for(gods[0], gods[1])
    return len(core_children(mod, twin, twin.node(s)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--selective", default="play", help="comma list, none or play")
    parser.add_argument("--table-bits", type=int, default=18)
    args = parser.parse_args()
    mod = core_module()
    if mod is None:
        raise SystemExit("the compiled core is not built (make native)")
    try:
        mask = selective_mask(args.selective)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    print(
        f"load {os.getloadavg()[0]:.1f}; {args.nodes:,} nodes a search; selective "
        f"{args.selective}; table 2^{args.table_bits}"
    )
    for name, s in _positions():
        core = NativeSearch(mod, args.table_bits)
        t0 = time.process_time()
        found = search_turn(s, SearchBudget(max_nodes=args.nodes), core=core, selective=mask)
        spent = time.process_time() - t0
        st = core.stats()
        iters: list[int] = st["iteration_nodes"]
        b = _root_turns(s)
        print(
            f"\n## {name}: depth {found.depth}, {found.nodes:,} nodes, "
            f"{found.nodes / max(spent, 1e-9):,.0f} a second; {b} root turns"
        )
        if not iters:
            continue
        per = [iters[0]] + [iters[k] - iters[k - 1] for k in range(1, len(iters))]
        ebf = [f"{per[k] / per[k - 1]:.1f}" if per[k - 1] else "-" for k in range(1, len(per))]
        print("iteration nodes: " + ", ".join(f"{n:,}" for n in per))
        print("effective branching factor: " + ", ".join(ebf))
        print(
            f"a perfectly ordered full-width search with these nodes: depth "
            f"{ideal_depth(b, found.nodes):.1f}"
        )
        cuts, alls = st["cut_nodes"], st["all_nodes"]
        if cuts:
            print(
                f"fail-high nodes {cuts:,} ({100 * cuts / max(cuts + alls, 1):.0f} % of the "
                f"nodes with moves searched), first move cut {100 * st['first_cuts'] / cuts:.1f} %,"
                f" mean place of the cutting move {st['cut_index_sum'] / cuts:.2f}"
            )
        if st["tt_probes"]:
            print(
                f"table: {100 * st['tt_hits'] / st['tt_probes']:.1f} % hits, "
                f"{100 * st['tt_returns'] / st['tt_probes']:.1f} % answered; "
                f"{st['researches']:,} reduced moves searched again"
            )
        if st["check_nodes"]:
            print(
                f"nodes facing a win to stop: {st['check_nodes']:,} "
                f"({100 * st['check_nodes'] / max(cuts + alls, 1):.0f} % of the nodes with moves),"
                f" {st['check_moves'] / st['check_nodes']:.1f} turns each"
            )
        total = sum(st["ply_nodes"])
        print(
            "share of nodes by ply: "
            + ", ".join(f"{k}: {100 * n / total:.1f}" for k, n in enumerate(st["ply_nodes"]) if n)
        )
    print(f"\nload {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

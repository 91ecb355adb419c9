"""Leave values ablation (issue 37): ``nice -n 19 python benchmarks/scrabble_leaves.py``.

Two strong players that differ only in their leave values play pairs of games: in a
pair both games deal the same bag (one seed) and the players swap seats, so the
luck of the draw cancels within a pair. By default ``A`` plays with the self-play
table for the lexicon (``data/superleaves-<lexicon>.xz``, or ``--table``) and
``B`` with the committed feature model (``data/leaves.json``); both choose by
static equity (``--think-time 0``: no simulation, so the leaves alone decide; the
endgame search needs time too, so both play the empty-bag turns by equity).

Prints A's wins, losses and draws with a 95 % Wilson interval and the mean spread
(and its 95 % interval over pairs). Pairs are split over ``--jobs`` processes; each
pair's seed is ``--seed`` + its number, so the result does not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import time
from pathlib import Path
from random import Random

from meeple.ai.leaves import LeaveModel, SuperLeaves, default_leaves, leaves_for
from meeple.ai.match import play_game, wilson_interval
from meeple.ai.scrabble import StrongPlayer
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon


def _pairs(job: tuple[str, str | None, float, int, list[int]]) -> str:
    """Play the given pairs in a worker; A's spreads as JSON (the parent decodes it)."""
    lexicon_name, table_path, think_time, seed, pairs = job
    lexicon = load_lexicon(lexicon_name)
    table: LeaveModel = (
        SuperLeaves.from_bytes(Path(table_path).read_bytes())
        if table_path
        else leaves_for(lexicon_name)
    )
    a = StrongPlayer(lexicon, table)
    b = StrongPlayer(lexicon, default_leaves())
    spreads = []
    start = time.process_time()
    for pair in pairs:
        for a_seat in (0, 1):
            seats = (a, b) if a_seat == 0 else (b, a)
            game = play_game(seats, Random(seed + pair), think_time=think_time)
            spreads.append(game.scores[a_seat] - game.scores[1 - a_seat])
    return json.dumps({"spreads": spreads, "cpu": time.process_time() - start})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games (pairs of two)")
    parser.add_argument("--seed", type=int, default=3700)
    parser.add_argument("--lexicon", default=DEFAULT_LEXICON)
    parser.add_argument("--table", default=None, help="a table file instead of the shipped one")
    parser.add_argument("--think-time", type=float, default=0.0)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    pairs = list(range(args.games // 2))
    chunks = [pairs[i :: args.jobs] for i in range(args.jobs)]
    work = [(args.lexicon, args.table, args.think_time, args.seed, c) for c in chunks if c]
    start = time.perf_counter()
    spreads: list[int] = []
    cpu = 0.0
    with multiprocessing.get_context("spawn").Pool(len(work)) as pool:
        for text in pool.imap(_pairs, work):
            part = json.loads(text)
            spreads.extend(int(s) for s in part["spreads"])
            cpu += float(part["cpu"])
    wins = sum(s > 0 for s in spreads)
    losses = sum(s < 0 for s in spreads)
    draws = len(spreads) - wins - losses
    rate = (wins + draws / 2) / len(spreads)
    lo, hi = wilson_interval(rate, len(spreads))
    per_pair = [spreads[i] + spreads[i + 1] for i in range(0, len(spreads) - 1, 2)]
    mean = sum(spreads) / len(spreads)
    pair_mean = sum(per_pair) / len(per_pair)
    sd = math.sqrt(sum((p - pair_mean) ** 2 for p in per_pair) / max(len(per_pair) - 1, 1))
    half = 1.96 * sd / math.sqrt(len(per_pair)) / 2  # per game
    print(
        f"table v features ({args.lexicon}, think time {args.think_time} s, seed {args.seed}): "
        f"{wins}-{losses}-{draws}, win rate {100 * rate:.1f} % (95 % CI {100 * lo:.1f}–"
        f"{100 * hi:.1f}), mean spread {mean:+.1f} (95 % CI {mean - half:+.1f} to "
        f"{mean + half:+.1f}); {len(spreads)} games, {cpu:.0f} s CPU, "
        f"{time.perf_counter() - start:.0f} s wall, load {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores ({platform.processor() or platform.machine()})"
    )


if __name__ == "__main__":
    main()

"""Move-generation benchmark: ``python benchmarks/movegen.py`` (``make bench``).

Prints, for the default (GCIDE) lexicon, the time to compile the GADDAG and to load it
from the cache, then for fixed positions the number of plays found and the best time
per position over several runs. Figures and the machine go into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from meeple.games.scrabble.cgp import parse_cgp
from meeple.games.scrabble.gaddag import build_gaddag
from meeple.games.scrabble.lexicon import LEXICONS, load_lexicon, normalize_words
from meeple.games.scrabble.movegen import legal_moves

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 {rack}/ 0/0 0"
POSITIONS = {
    "empty board, AEINRST": EMPTY.format(rack="AEINRST"),
    "empty board, ?SATIRE": EMPTY.format(rack="?SATIRE"),
    # Eight plays into a game (GCIDE words), two blanks on the rack.
    "mid-game, AENRS??": (
        "15/15/15/15/15/15/8P6/7BATIK2F/8Q2EH1A/8U2SOWN/8E1CAGE1/10ER1A1/10L2N1/9XL4/9IO4"
        " AENRS??/ 144/100 0"
    ),
}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per position (best is kept)")
    parser.add_argument("--lexicon", default="gcide", help="lexicon name or word-list path")
    args = parser.parse_args()

    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu {_cpu_model()}, nproc {os.cpu_count()}")

    if args.lexicon in LEXICONS:
        start = time.perf_counter()
        words = normalize_words(LEXICONS[args.lexicon]())
        read = time.perf_counter() - start
        start = time.perf_counter()
        build_gaddag(words)
        compiled = time.perf_counter() - start
        print(f"lexicon {args.lexicon}: {len(words)} words, read {read * 1e3:.0f} ms")
        print(f"GADDAG compile: {compiled:.2f} s")

    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        lexicon = load_lexicon(args.lexicon, cache_dir=cache)
        cold = time.perf_counter() - start
        loads = []
        for _ in range(5):
            start = time.perf_counter()
            lexicon = load_lexicon(args.lexicon, cache_dir=cache)
            loads.append(time.perf_counter() - start)
    g = lexicon.gaddag
    print(f"GADDAG: {g.node_count} nodes, {len(g.targets)} arcs")
    print(f"load_lexicon, no cache (read + compile + write): {cold:.2f} s")
    print(f"load_lexicon from cache (read + hash + load): {min(loads) * 1e3:.0f} ms")
    print()
    print(f"{'position':<24} {'plays':>7} {'best µs':>10} {'µs/play':>8}")
    for name, cgp in POSITIONS.items():
        position = parse_cgp(cgp)
        best = float("inf")
        count = 0
        for _ in range(args.runs):
            start = time.perf_counter()
            moves = legal_moves(position.board, position.rack, lexicon)
            best = min(best, time.perf_counter() - start)
            count = len(moves)
        print(f"{name:<24} {count:>7} {best * 1e6:>10.0f} {best * 1e6 / max(count, 1):>8.1f}")


if __name__ == "__main__":
    main()

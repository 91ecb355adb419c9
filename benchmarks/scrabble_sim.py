"""Simulation iterations per second of the strong Scrabble player (issue 37):
``python benchmarks/scrabble_sim.py [--positions N] [--lexicon enable] [--profile]``.

Positions come from seeded greedy self-play on the lexicon (every fourth turn of a few
games, bag not empty); at each one the strong player's candidates are simulated over
the same draws twice, once with the pure-Python line (``StrongPlayer._run_once``
without the candidate's board: a board copy, two ``best`` calls that build
:class:`Move` values, leave lookups in Python) and once with the compiled line
(``NativeGenerator.line``), and the two must give the same numbers. It prints the
iterations (one candidate's line) per CPU second of each, and the rounds a move the
player's ``choose`` then runs in ``--think-time`` CPU seconds. ``--profile`` prints
where the Python line's time goes (cProfile, by internal time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time
from random import Random

from meeple.ai.scrabble import Budget, Position, StrongPlayer, _Candidate, unseen_tiles
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.engine import NativeGenerator, get_generator
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon


def positions(lexicon: Lexicon, count: int, seed: int) -> list[Position]:
    """Every fourth turn of seeded greedy self-play games, while the bag has tiles."""
    rng = Random(seed)
    native = get_generator("native")
    found: list[Position] = []
    while len(found) < count:
        game = SimGame.new(rng)
        turn = 0
        while not game.over and game.bag and len(found) < count:
            rack = game.racks[game.turn]
            if turn % 4 == 1:
                scores = (game.scores[game.turn], game.scores[1 - game.turn])
                found.append(Position(game.board.copy(), rack, len(game.bag), scores=scores))
            turn += 1
            best = native.best(game.board, rack, lexicon, n=1)
            if best:
                game.play(best[0])
            else:
                game.pass_()
    return found


def draws(position: Position, rounds: int, rng: Random) -> list[tuple[str, list[str]]]:
    """``rounds`` (opponent rack, bag) pairs drawn from the unseen tiles."""
    out = []
    for _ in range(rounds):
        tiles = list(unseen_tiles(position.board, position.rack))
        rng.shuffle(tiles)
        out.append(("".join(tiles[:7]), tiles[7:]))
    return out


def iterations(
    player: StrongPlayer,
    work: list[tuple[Position, list[_Candidate], list[tuple[str, list[str]]]]],
    compiled: bool,
) -> tuple[int, float, list[tuple[float, int, bool]]]:
    """Run every line of ``work``; (lines, CPU seconds, their results)."""
    native = player.generator
    results = []
    start = time.process_time()
    for position, candidates, rounds in work:
        if not compiled:  # the call as it was before the compiled line (issue 37)
            for opp, bag in rounds:
                for c in candidates:
                    results.append(player._run_once(position, c, opp, bag))
            continue
        assert isinstance(native, NativeGenerator)
        cells = [player._cells_after(position, c, native) for c in candidates]
        for opp, bag in rounds:
            for c, cell in zip(candidates, cells, strict=True):
                results.append(player._run_once(position, c, opp, bag, cell))
    return len(results), time.process_time() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lexicon", default="enable")
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=10, help="draws per position")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--think-time", type=float, default=0.2)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--python-only",
        action="store_true",
        help="time only the Python line (runs on code from before the compiled line)",
    )
    args = parser.parse_args()
    lexicon = load_lexicon(args.lexicon)
    player = StrongPlayer(lexicon)
    rng = Random(args.seed)
    work = []
    for position in positions(lexicon, args.positions, args.seed):
        candidates = player._candidates(position, 0)
        work.append((position, candidates, draws(position, args.rounds, rng)))
    print(f"{len(work)} positions, load {os.getloadavg()[0]:.1f}", flush=True)
    if not args.python_only:
        iterations(player, work[:2], True)  # warm the caches of both paths
    iterations(player, work[:2], False)
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        iterations(player, work, False)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(18)
        print(out.getvalue())
    n_py, t_py, want = iterations(player, work, False)
    if args.python_only:
        print(
            f"python line: {n_py} iterations in {t_py:.2f} s CPU, {n_py / t_py:.0f}/s; "
            f"load {os.getloadavg()[0]:.1f}"
        )
    else:
        n_c, t_c, got = iterations(player, work, True)
        assert got == want, "the compiled line disagrees with the Python line"
        print(
            f"python line: {n_py} iterations in {t_py:.2f} s CPU, {n_py / t_py:.0f}/s; "
            f"compiled line: {n_c} in {t_c:.2f} s, {n_c / t_c:.0f}/s; "
            f"{t_py / t_c:.1f}x; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    rounds = []
    for position in work:
        budget = Budget(args.think_time, time.process_time)
        player.choose(position[0], budget, Random(args.seed))
        if player.last_method.startswith("simulation"):
            rounds.append(player.last_rounds)
    print(
        f"choose at {args.think_time:g} s CPU: median {statistics.median(rounds):g} rounds "
        f"over {len(rounds)} simulated moves (candidates: median "
        f"{statistics.median(len(w[1]) for w in work):g}); load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


if __name__ == "__main__":
    main()

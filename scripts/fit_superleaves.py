"""Fit a value for every leave by self-play: ``nice -n 19 python scripts/fit_superleaves.py``.

What it does, reproducibly for a given ``--seed`` (issue 37):

1. The policy starts as the strong player's static equity (score + leave value, best
   exchange by the same measure) with the committed feature model
   (``data/leaves.json``, :class:`meeple.ai.leaves.LeaveValues`).
2. Play ``--games`` self-play games with the compiled generator. After every play
   or exchange that leaves tiles in the bag, note the leave kept; the player's next
   turn gives the sample's target: the points it scores plus the value (under the
   current policy) of the leave it keeps then, if the bag still holds tiles (so a
   leave is worth the *equity* it leads to, as Quackle's and Macondo's tables are).
   Every tenth game is held out.
3. Fit, on the training samples:

   - with ``--refit``, the feature model again (ridge least squares on
     :func:`meeple.ai.leaves.features`); its intercept ``b`` is the next turn's
     equity after keeping nothing, so a leave's value is what it adds to that.
     Without it (the default: a few thousand games fit 90 weights worse than the
     committed model did), the committed model stays the prior and ``b`` is the
     mean of y minus the prior's value;
   - a value for each of the 914,625 leaves of up to 6 tiles: the feature model's
     value plus the leave's mean residual shrunk by ``n / (n + k)`` (``n`` samples
     of that leave; ``k`` = noise variance / variance of the true residuals, both
     estimated from the leaves seen at least 50 times: empirical Bayes). A leave
     never kept gets the feature model's value.

4. Report the held-out root mean square error of the intercept alone, the feature
   model and the table, and how much the values moved; the table is the next
   iteration's policy. After ``--iterations`` write
   ``src/meeple/ai/data/superleaves-<lexicon>.xz`` (or ``--out``) with its
   provenance (games, seed, date, command, figures) in the header.

``--games`` is per iteration, played in chunks of 200 games by ``--jobs`` worker
processes; each chunk has its own seed (seed, iteration, chunk), so the table does not
depend on ``--jobs``. Run it under ``nice -n 19``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import random
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

from meeple.ai.leaves import LeaveModel, LeaveValues, SuperLeaves, default_leaves, features
from meeple.ai.scrabble import Budget, ExchangeChoice, PassChoice, Position, StrongPlayer
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.engine import get_generator, leave_of, sort_leave
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH

DATA = Path(__file__).resolve().parents[1] / "src" / "meeple" / "ai" / "data"
CHUNK = 200  # games per work unit and seed
HELD_OUT = 10  # every tenth game
MIN_FOR_VARIANCE = 50

# leave -> [n, sum y, sum y^2]
Stats = dict[str, list[float]]


def play_games(
    leaves: LeaveModel, lexicon_name: str, games: int, rng: random.Random, first_game: int
) -> tuple[Stats, Stats, int]:
    """(training stats, held-out stats, moves) from ``games`` self-play games."""
    lexicon = load_lexicon(lexicon_name)
    generator = get_generator("native")
    player = StrongPlayer(lexicon, leaves, generator, candidates=1)
    no_time = Budget(0.0, lambda: 0.0)
    train: Stats = {}
    held: Stats = {}
    moves = 0
    for g in range(first_game, first_game + games):
        stats = held if g % HELD_OUT == 0 else train
        game = SimGame.new(rng)
        waiting: list[str | None] = [None, None]
        while not game.over:
            p = game.turn
            rack = game.racks[p]
            choice: Move | ExchangeChoice | PassChoice
            if game.bag:
                position = Position(game.board, rack, len(game.bag), unseen=game.unseen(p))
                choice = player.choose(position, no_time)
            else:  # the leave no longer counts: the best score (no endgame search)
                best = generator.best(game.board, rack, lexicon, ENGLISH, n=1)
                choice = best[0] if best else PassChoice()
            moves += 1
            score = 0
            leave: str | None = None
            if isinstance(choice, ExchangeChoice) and game.can_exchange(len(choice.tiles)):
                leave = sort_leave(_minus(rack, choice.tiles))
                game.exchange(choice.tiles, rng)
            elif isinstance(choice, (ExchangeChoice, PassChoice)):
                game.pass_()
            else:
                leave = leave_of(rack, choice)
                score = choice.score
                game.play(choice)
            kept = leave if leave is not None and game.bag else None
            previous = waiting[p]
            if previous is not None:
                y = score + (leaves.value(kept) if kept is not None else 0.0)
                s = stats.get(previous)
                if s is None:
                    stats[previous] = [1.0, y, y * y]
                else:
                    s[0] += 1
                    s[1] += y
                    s[2] += y * y
            waiting[p] = kept
    return train, held, moves


def _chunk(job: tuple[bytes | None, str, int, int, int, int]) -> str:
    """One chunk of games in a worker: its stats as JSON (the parent decodes it)."""
    table, lexicon, seed, iteration, chunk, games = job
    policy: LeaveModel = default_leaves() if table is None else SuperLeaves.from_bytes(table)
    rng = random.Random(f"{seed}-{iteration}-{chunk}")
    train, held, moves = play_games(policy, lexicon, games, rng, chunk * CHUNK)
    return json.dumps({"train": train, "held": held, "moves": moves})


def play_parallel(
    table: SuperLeaves | None, lexicon: str, seed: int, iteration: int, games: int, jobs: int
) -> tuple[Stats, Stats, int]:
    """``games`` games in chunks of :data:`CHUNK`, each seeded by (seed, iteration, chunk),
    so the result does not depend on ``jobs``."""
    data = table.to_bytes() if table is not None else None
    work = [
        (data, lexicon, seed, iteration, c, min(CHUNK, games - c * CHUNK))
        for c in range((games + CHUNK - 1) // CHUNK)
    ]
    train: Stats = {}
    held: Stats = {}
    moves = 0
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for text in pool.imap(_chunk, work):
            part = json.loads(text)
            moves += int(part["moves"])
            for mine, theirs in ((train, part["train"]), (held, part["held"])):
                for leave, (n, sy, syy) in theirs.items():
                    s = mine.get(leave)
                    if s is None:
                        mine[leave] = [float(n), float(sy), float(syy)]
                    else:
                        s[0] += n
                        s[1] += sy
                        s[2] += syy
    return train, held, moves


def _minus(rack: str, tiles: str) -> str:
    left = list(rack)
    for t in tiles:
        left.remove(t)
    return "".join(left)


def fit_features(stats: Stats, ridge: float) -> tuple[dict[str, float], float]:
    """Weighted ridge least squares of y on a leave's features: (weights, intercept)."""
    rows = [(features(leave), s) for leave, s in stats.items()]
    names = sorted({f for x, _ in rows for f in x})
    index = {f: i + 1 for i, f in enumerate(names)}  # 0 is the intercept
    n = len(names) + 1
    a = [[0.0] * n for _ in range(n)]
    b = [0.0] * n
    for x, (count, sy, _) in rows:
        row = [(0, 1.0)] + [(index[f], float(v)) for f, v in x.items()]
        for i, vi in row:
            b[i] += vi * sy
            ai = a[i]
            for j, vj in row:
                ai[j] += vi * vj * count
    for i in range(1, n):
        a[i][i] += ridge
    for col in range(n):  # Gaussian elimination, partial pivoting
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        d = a[col][col]
        for r in range(col + 1, n):
            f = a[r][col] / d
            if f:
                ar, ac = a[r], a[col]
                for c in range(col, n):
                    ar[c] -= f * ac[c]
                b[r] -= f * b[col]
    w = [0.0] * n
    for r in range(n - 1, -1, -1):
        w[r] = (b[r] - sum(a[r][c] * w[c] for c in range(r + 1, n))) / a[r][r]
    return {f: round(w[index[f]], 3) for f in names}, w[0]


def intercept(stats: Stats, model: LeaveValues) -> float:
    """The mean of y minus the model's leave value: the next turn's equity from nothing kept."""
    total = sum(s[0] for s in stats.values())
    return sum(s[1] - s[0] * model.value(leave) for leave, s in stats.items()) / total


def shrinkage(stats: Stats, model: LeaveValues, b: float) -> tuple[float, float, float]:
    """(k, noise variance, true residual variance) by empirical Bayes over common leaves."""
    noise = []
    means = []
    for leave, (n, sy, syy) in stats.items():
        if n >= MIN_FOR_VARIANCE:
            mean = sy / n
            noise.append((syy - n * mean * mean) / (n - 1))
            means.append((mean - b - model.value(leave), n))
    if not means:
        return 1e9, 0.0, 0.0
    sigma2 = sum(noise) / len(noise)
    spread = sum(r * r for r, _ in means) / len(means)
    tau2 = max(spread - sum(sigma2 / n for _, n in means) / len(means), 1e-6)
    return sigma2 / tau2, sigma2, tau2


def _shrunk(stats: Stats, model: LeaveValues, b: float, k: float) -> Callable[[str], float]:
    """A leave's value: the feature model's plus its mean residual times n / (n + k)."""

    def value(leave: str) -> float:
        prior = model.value(leave)
        s = stats.get(leave)
        if s is None or not leave:
            return prior
        n, sy, _ = s
        return prior + (sy - n * (b + prior)) / (n + k)

    return value


def rmse(stats: Stats, predict: LeaveModel | None, b: float) -> float:
    err = 0.0
    total = 0.0
    for leave, (n, sy, syy) in stats.items():
        pred = b + (predict.value(leave) if predict is not None else 0.0)
        err += syy - 2 * pred * sy + n * pred * pred
        total += n
    return math.sqrt(err / total) if total else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--games", type=int, default=20000, help="games per iteration")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--ridge", type=float, default=50.0)
    parser.add_argument("--lexicon", default=DEFAULT_LEXICON)
    parser.add_argument(
        "--refit",
        action="store_true",
        help="refit the feature model on these games (else keep the committed one as prior)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or DATA / f"superleaves-{args.lexicon}.xz"

    previous: SuperLeaves | None = None
    prior = default_leaves()
    history = []
    for it in range(1, args.iterations + 1):
        start = time.perf_counter()
        train, held, moves = play_parallel(
            previous, args.lexicon, args.seed, it, args.games, args.jobs
        )
        played = time.perf_counter() - start
        if args.refit:
            weights, b = fit_features(train, args.ridge)
            model = LeaveValues(weights)
        else:
            model = prior
            b = intercept(train, model)
        k, sigma2, tau2 = shrinkage(train, model, b)

        table = SuperLeaves.from_values(ENGLISH, _shrunk(train, model, b, k), model)
        samples = int(sum(s[0] for s in train.values()))
        moved = 0.0
        if previous is not None:
            weight = sum(s[0] for s in train.values())
            moved = (
                sum(s[0] * abs(table.value(lv) - previous.value(lv)) for lv, s in train.items())
                / weight
            )
        figures = {
            "iteration": it,
            "games": args.games,
            "moves": moves,
            "samples": samples,
            "leaves_seen": len(train),
            "seconds": round(played),
            "games_per_second": round(args.games / played, 1),
            "intercept": round(b, 2),
            "k": round(k, 1),
            "noise_sd": round(math.sqrt(sigma2), 2),
            "residual_sd": round(math.sqrt(tau2), 2),
            "heldout_rmse_intercept": round(rmse(held, None, b), 3),
            "heldout_rmse_features": round(rmse(held, model, b), 3),
            "heldout_rmse_table": round(rmse(held, table, b), 3),
            "mean_abs_change": round(moved, 3),
        }
        history.append(figures)
        print(
            " ".join(f"{key}={val}" for key, val in figures.items())
            + f" | ? {table.value('?'):+.1f} S {table.value('S'):+.1f} "
            f"Q {table.value('Q'):+.1f} EEE {table.value('EEE'):+.1f} "
            f"ERS {table.value('ERS'):+.1f} AEINST {table.value('AEINST'):+.1f}",
            flush=True,
        )
        table.info = {
            "script": "scripts/fit_superleaves.py",
            "command": "python scripts/fit_superleaves.py " + shlex.join(sys.argv[1:]),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "seed": args.seed,
            "lexicon": args.lexicon,
            "games_per_iteration": args.games,
            "iterations": it,
            "ridge": args.ridge,
            "refit": args.refit,
            "history": history,
        }
        # Written after every iteration, so a run cut short keeps what it finished.
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(table.to_bytes())
        print(f"wrote {out} ({out.stat().st_size} bytes, {len(table.values)} leaves)", flush=True)
        previous = table
        prior = model


if __name__ == "__main__":
    main()

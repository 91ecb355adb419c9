"""Fit the learned Santorini evaluation from self-play, and measure it (fixed seeds).

    .venv/bin/python scripts/train_santorini_learned.py --games 400 --seed 36
    .venv/bin/python scripts/train_santorini_learned.py --duel 200 --nodes 20000 --seed 37

Training (issue 36; games without gods, two players):

1. Self-play: games between two copies of the compiled search
   (:func:`meeple.ai.santorini_search.search_turn`, the core when it is built) at a
   fixed depth (``--depth``) with the shipped evaluation
   (:func:`meeple.ai.santorini_eval.default_weights`); no clock, so a seed gives the
   same games on any machine. Workers are placed at random, and each of the first
   ``--explore`` turns is a random one with probability ``--epsilon``.
2. Every turn-start position is kept with the features of the side to move minus its
   opponent's: :data:`~meeple.ai.santorini_eval.FEATURES` and
   :data:`~meeple.ai.santorini_eval.LEARNED_FEATURES`, and whether the side to move
   went on to win.
3. Logistic regression of that result on the differences (Newton's method with an L2
   penalty, features scaled by their spread); the weights, ``--scale`` points per unit
   of log-odds, go with their provenance (games, seed, date, command) to
   ``src/meeple/ai/data/santorini_eval_learned.json``.

``--duel N`` plays instead N games without gods between the learned weights of that
file and the shipped evaluation, seats alternating (each pair of games from the same
random placements), every turn searched by the compiled core with the same budget:
``--nodes`` nodes a turn (equal nodes; the default, the same games on any machine) or
``--think-time`` seconds of process CPU time (equal time). It prints the learned
side's wins, losses and unfinished games with a 95 % Wilson interval, and adds the line
to the file's provenance with ``--record``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import sys
import time
from pathlib import Path

from meeple.ai.santorini_eval import (
    FEATURES,
    LEARNED_FEATURES,
    EvalWeights,
    default_weights,
    learned_seat_features,
    seat_features,
)
from meeple.ai.santorini_native import NativeSearch, core_module
from meeple.ai.santorini_positions import placed
from meeple.ai.santorini_search import SearchBudget, search_turn
from meeple.games.santorini import (
    Action,
    GameState,
    Phase,
    advance,
    turns,
)

OUT = Path(__file__).resolve().parent.parent / "src/meeple/ai/data/santorini_eval_learned.json"
NAMES = (*FEATURES, *LEARNED_FEATURES)
MAX_TURNS = 200


def _heights(s: GameState) -> list[int]:
    return [4 if d else lv for lv, d in zip(s.levels, s.domes, strict=True)]


def features(s: GameState) -> list[int]:
    """The side to move's features minus its opponent's (:data:`NAMES`)."""
    me = s.turn
    h = _heights(s)
    wk = [w for w in s.workers if w is not None]
    mine = seat_features(h, s.workers, me, me) + learned_seat_features(h, wk, me)
    theirs = seat_features(h, s.workers, 1 - me, me) + learned_seat_features(h, wk, 1 - me)
    return [a - b for a, b in zip(mine, theirs, strict=True)]


def self_play(
    rng: random.Random, depth: int, explore: int, epsilon: float, weights: EvalWeights
) -> tuple[list[tuple[list[int], int]], int | None]:
    """One game; returns (feature differences from the mover's view, mover) per turn
    and the winner (None: unfinished)."""
    s = placed(rng)
    rows: list[tuple[list[int], int]] = []
    core = NativeSearch(mod) if (mod := core_module()) is not None else None
    for turn_no in range(MAX_TURNS):
        if s.phase is not Phase.PLAY:
            break
        rows.append((features(s), s.turn))
        route: tuple[Action, ...]
        if turn_no < explore and rng.random() < epsilon:
            route = rng.choice([r for r, _ in turns(s)])
        else:
            route = search_turn(
                s, SearchBudget(max_depth=depth), weights=weights, rng=rng, core=core
            ).route
        for action in route:
            s = advance(s, action)[0]
    return rows, s.winner if s.phase is Phase.OVER else None


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small, positive definite system)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def fit(
    xs: list[list[int]], ys: list[int], l2: float, iterations: int
) -> tuple[list[float], float]:
    """Logistic regression by Newton's method (L2 penalty ``l2`` per position on the
    scaled weights); returns the weights on the raw features and the mean log-loss."""
    n, k = len(xs), len(xs[0])
    spread = [max(1e-9, max(abs(x[j]) for x in xs)) for j in range(k)]
    zs = [[x[j] / spread[j] for j in range(k)] for x in xs]
    w = [0.0] * k
    loss = 0.0
    for _ in range(iterations):
        grad = [l2 * n * wj for wj in w]
        hess = [[l2 * n if i == j else 0.0 for j in range(k)] for i in range(k)]
        loss = 0.0
        for z, y in zip(zs, ys, strict=True):
            t = max(-30.0, min(30.0, sum(a * b for a, b in zip(w, z, strict=True))))
            p = 1.0 / (1.0 + math.exp(-t))
            loss -= math.log(max(1e-12, p if y else 1 - p))
            g, q = p - y, p * (1 - p)
            for i in range(k):
                zi = z[i]
                if zi == 0.0:
                    continue
                grad[i] += g * zi
                qi = q * zi
                row = hess[i]
                for j in range(i, k):
                    row[j] += qi * z[j]
        for i in range(k):
            for j in range(i):
                hess[i][j] = hess[j][i]
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        loss /= n
    return [w[j] / spread[j] for j in range(k)], loss


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a score ``wins`` out of ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def duel(
    rng: random.Random,
    games: int,
    first: EvalWeights,
    second: EvalWeights,
    nodes: int | None,
    seconds: float | None,
    progress: int = 0,
) -> tuple[int, int, int]:
    """``games`` games without gods, ``first`` against ``second``, seats alternating
    (each pair of games from the same placements); returns (first's wins, second's,
    unfinished)."""
    mod = core_module()
    if mod is None:
        raise SystemExit("the duel needs the compiled core (make native)")
    score = [0, 0, 0]
    start = placed(rng)
    for g in range(games):
        if g % 2 == 0:
            start = placed(rng)
        s = start
        sides = (first, second) if g % 2 == 0 else (second, first)
        cores = (NativeSearch(mod), NativeSearch(mod))
        for _ in range(MAX_TURNS):
            if s.phase is not Phase.PLAY:
                break
            me = s.turn
            budget = SearchBudget(
                seconds=seconds,
                clock=time.process_time if seconds is not None else None,
                max_nodes=nodes,
            )
            route = search_turn(s, budget, weights=sides[me], core=cores[me]).route
            for action in route:
                s = advance(s, action)[0]
        if s.phase is not Phase.OVER or s.winner is None:
            score[2] += 1
        else:
            score[0 if (s.winner == 0) == (g % 2 == 0) else 1] += 1
        if progress and (g + 1) % progress == 0:
            print(f"{g + 1} games: {score[0]}-{score[1]}-{score[2]}", flush=True)
    return score[0], score[1], score[2]


def load(path: Path, names: tuple[str, ...] = NAMES) -> tuple[EvalWeights, dict[str, object]]:
    """A weights file's weights (in the order of ``names``) and the file's whole data."""
    data = json.loads(path.read_text())
    weights = data["weights"]
    return EvalWeights(tuple(round(float(weights[f])) for f in names), "file"), data


def to_points(weights: list[float], names: tuple[str, ...], scale: float) -> dict[str, float]:
    """Fitted weights (log-odds a unit) as the evaluation's points, by feature name; the
    immediate win of the side to move is never left to the evaluation's scale."""
    points = {f: round(w * scale, 2) for f, w in zip(names, weights, strict=True)}
    points["threat_to_move"] = round(
        max(points["threat_to_move"], 10 * max(abs(v) for v in points.values() if v)), 2
    )
    return points


def write(out: Path, names: tuple[str, ...], points: dict[str, float], provenance: str) -> None:
    """The weights file: its features in order, their points and how they were made."""
    data = {"features": list(names), "weights": points, "provenance": provenance}
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(provenance)
    print(json.dumps(points, indent=2))


def report_duel(
    args: argparse.Namespace,
    command: str,
    title: str,
    new: EvalWeights,
    old: EvalWeights,
    nodes: int | None,
    data: dict[str, object],
) -> None:
    """Play ``args.duel`` games of ``new`` v ``old`` (``nodes`` a turn, else
    ``args.think_time`` CPU seconds), print the score with its interval and, with
    ``args.record``, add that line to the weights file's provenance."""
    w, lost, d = duel(
        random.Random(args.seed), args.duel, new, old, nodes, args.think_time, args.progress
    )
    lo, hi = wilson(w + d / 2, args.duel)
    budget = f"{nodes} nodes" if nodes is not None else f"{args.think_time} s CPU"
    line = (
        f"{command}: {title} evaluation at {budget} a turn, {args.duel} games "
        f"without gods, seats alternating: {w}-{lost}-{d}, "
        f"{100 * (w + d / 2) / args.duel:.1f} % (95 % CI {100 * lo:.1f}-{100 * hi:.1f} %)"
    )
    print(line)
    if args.record:
        data["provenance"] = f"{data['provenance']}; {line}"
        args.out.write_text(json.dumps(data, indent=2) + "\n")


def fit_options(parser: argparse.ArgumentParser, *, games: int, seed: int, out: Path) -> None:
    """The options the training scripts share: self-play, the fit, the duel."""
    parser.add_argument("--games", type=int, default=games)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--explore", type=int, default=8)
    parser.add_argument("--epsilon", type=float, default=0.3)
    parser.add_argument("--l2", type=float, default=1e-4)
    parser.add_argument("--iterations", type=int, default=8, help="Newton steps")
    parser.add_argument("--scale", type=float, default=100.0, help="points per unit of log-odds")
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--duel", type=int, default=0, help="play this many games instead")
    parser.add_argument(
        "--think-time", type=float, default=None, help="duel: CPU seconds a turn instead"
    )
    parser.add_argument("--record", action="store_true", help="duel: add it to the provenance")
    parser.add_argument("--progress", type=int, default=0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    fit_options(parser, games=400, seed=36, out=OUT)
    parser.add_argument("--depth", type=int, default=3, help="self-play search depth (turns)")
    parser.add_argument("--nodes", type=int, default=20000, help="duel: nodes a turn")
    args = parser.parse_args()
    command = " ".join(["scripts/train_santorini_learned.py", *sys.argv[1:]])
    if args.duel:
        learned, data = load(args.out)
        nodes = None if args.think_time is not None else args.nodes
        report_duel(args, command, "learned v shipped", learned, default_weights(), nodes, data)
        return

    rng = random.Random(args.seed)
    start_weights = default_weights()
    xs: list[list[int]] = []
    ys: list[int] = []
    wins = [0, 0, 0]
    start = time.perf_counter()
    for g in range(args.games):
        rows, winner = self_play(rng, args.depth, args.explore, args.epsilon, start_weights)
        wins[2 if winner is None else winner] += 1
        if winner is not None:
            for x, mover in rows:
                xs.append(x)
                ys.append(1 if mover == winner else 0)
        if (g + 1) % 50 == 0:
            print(f"{g + 1} games, {len(xs)} positions, {time.perf_counter() - start:.0f} s")
    weights, loss = fit(xs, ys, args.l2, args.iterations)
    points = to_points(weights, NAMES, args.scale)
    provenance = (
        f"{command} on {datetime.date.today().isoformat()}: {len(xs)} positions from "
        f"{args.games} self-play games without gods at depth {args.depth} with the shipped "
        f"evaluation ({start_weights.provenance.split(':')[0]}; seat 0 won {wins[0]}, "
        f"seat 1 {wins[1]}, unfinished {wins[2]}), Newton logistic regression, "
        f"log-loss {loss:.4f}"
    )
    write(args.out, NAMES, points, provenance)


if __name__ == "__main__":
    main()

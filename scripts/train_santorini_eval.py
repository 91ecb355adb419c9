"""Fit the Santorini search's evaluation weights from self-play (fixed seed, no downloads).

    .venv/bin/python scripts/train_santorini_eval.py --games 300 --seed 25
    .venv/bin/python scripts/train_santorini_eval.py --gods --games 300 --seed 26

Without ``--gods`` (games without gods, :data:`meeple.ai.santorini_eval.FEATURES`):

1. Self-play: games without gods between two copies of the search
   (:func:`meeple.ai.santorini_search.search_turn`) at a fixed depth with the
   hand-written weights (:data:`meeple.ai.santorini_eval.HAND_WEIGHTS`), no clock, so
   a seed gives the same games on any machine. Workers are placed at random, and each
   of the first ``--explore`` turns is a random one with probability ``--epsilon``,
   so the games differ.
2. Every position at the start of a turn is kept with its features for the side to
   move and its opponent (:func:`meeple.ai.santorini_eval.seat_features`) and whether
   the side to move went on to win.
3. Logistic regression (batch gradient descent, L2 penalty) of that result on the
   feature differences; the weights, scaled to points (``--scale`` per unit of
   log-odds), are written with their provenance to
   ``src/meeple/ai/data/santorini_eval.json``.

With ``--gods`` the same, on games between a random pair of gods for each game (drawn
from the seed), searched through the god twin with the shipped no-god weights and
starting guesses for the god terms (:data:`GOD_START`), and the features
:data:`meeple.ai.santorini_eval.GOD_FEATURES` of the twin's positions (god-aware
threats, Athena's lock, Chronus' towers, Artemis' and Triton's second steps); written
to ``src/meeple/ai/data/santorini_eval_gods.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

from meeple.ai.santorini_eval import (
    FEATURES,
    GOD_FEATURES,
    HAND_WEIGHTS,
    EvalWeights,
    GodWeights,
    default_weights,
    god_seat_features,
    seat_features,
)
from meeple.ai.santorini_positions import placed
from meeple.ai.santorini_search import SearchBudget, search_turn
from meeple.ai.santorini_twin import height_codes
from meeple.games.santorini import (
    GODS,
    Action,
    GameState,
    Phase,
    advance,
    turns,
)

DATA = Path(__file__).resolve().parent.parent / "src/meeple/ai/data"
OUT = DATA / "santorini_eval.json"
OUT_GODS = DATA / "santorini_eval_gods.json"
GOD_START = (-40, 30, 120)
_NO_GOD_TERMS = GodWeights((*default_weights().weights, 0, 0, 0), "the no-god evaluation")
"""Starting guesses for the god terms beyond :data:`FEATURES` (locked_up,
chronus_towers, double_move) while the self-play with gods is played."""
MAX_TURNS = 200


def _heights(s: GameState) -> list[int]:
    return [4 if d else lv for lv, d in zip(s.levels, s.domes, strict=True)]


def self_play(
    rng: random.Random, depth: int, explore: int, epsilon: float, weights: EvalWeights
) -> tuple[list[tuple[list[int], int]], int | None]:
    """One game; returns (feature difference from the mover's view, mover) per turn and
    the winner."""
    s = placed(rng)
    rows: list[tuple[list[int], int]] = []
    table: dict[int, tuple[int, int, int, object]] = {}
    turn_no = 0
    while s.phase is Phase.PLAY and turn_no < MAX_TURNS:
        me = s.turn
        h = _heights(s)
        mine = seat_features(h, s.workers, me, me)
        theirs = seat_features(h, s.workers, 1 - me, me)
        rows.append(([a - b for a, b in zip(mine, theirs, strict=True)], me))
        route: tuple[Action, ...]
        if turn_no < explore and rng.random() < epsilon:
            route = rng.choice([r for r, _ in turns(s)])
        else:
            route = search_turn(
                s, SearchBudget(max_depth=depth), weights=weights, table=table, rng=rng
            ).route
        for action in route:
            s = advance(s, action)[0]
        turn_no += 1
    return rows, s.winner if s.phase is Phase.OVER else None


def self_play_gods(
    rng: random.Random, depth: int, explore: int, epsilon: float, gw: GodWeights
) -> tuple[list[tuple[list[int], int]], int | None, tuple[str, str]]:
    """One game between a random pair of gods; like :func:`self_play`, with the
    features of :data:`GOD_FEATURES`. Also returns the gods."""
    pair = rng.sample(sorted(GODS), 2)
    s = placed(rng, (pair[0], pair[1]), starter=rng.randrange(2))
    rows: list[tuple[list[int], int]] = []
    table: dict[int, tuple[int, int, int, object]] = {}
    turn_no = 0
    gods = (pair[0], pair[1])
    while s.phase is Phase.PLAY and turn_no < MAX_TURNS:
        me = s.turn
        h = height_codes(s)
        wk = [at for at in s.workers if at is not None]
        mu = (1 if s.moved_up[0] else 0) | (2 if s.moved_up[1] else 0)
        mine = god_seat_features(h, wk, me, me, mu, gods)
        theirs = god_seat_features(h, wk, 1 - me, me, mu, gods)
        rows.append(([a - b for a, b in zip(mine, theirs, strict=True)], me))
        route: tuple[Action, ...]
        if turn_no < explore and rng.random() < epsilon:
            route = rng.choice([r for r, _ in turns(s)])
        else:
            route = search_turn(
                s, SearchBudget(max_depth=depth), table=table, rng=rng, gweights=gw
            ).route
        for action in route:
            s = advance(s, action)[0]
        turn_no += 1
    return rows, s.winner if s.phase is Phase.OVER else None, gods


def duel_gods(
    rng: random.Random, depth: int, first: GodWeights | None, second: GodWeights | None, games: int
) -> tuple[int, int, int]:
    """``games`` games between random god pairs at ``depth``, searched with ``first``'s
    god weights against ``second``'s (None: the no-god evaluation), each pair played
    twice with the seats swapped; returns (first's wins, second's wins, unfinished)."""
    score = [0, 0, 0]
    pair: list[str] = []
    for g in range(games):
        if g % 2 == 0:
            pair = rng.sample(sorted(GODS), 2)
        s = placed(rng, (pair[0], pair[1]))
        sides = (first, second) if g % 2 == 0 else (second, first)
        tables: list[dict[int, tuple[int, int, int, object]]] = [{}, {}]
        for _ in range(MAX_TURNS):
            if s.phase is not Phase.PLAY:
                break
            me = s.turn
            gw = sides[me]
            route = search_turn(
                s,
                SearchBudget(max_depth=depth),
                table=tables[me],
                rng=rng,
                gweights=gw if gw is not None else _NO_GOD_TERMS,
            ).route
            for action in route:
                s = advance(s, action)[0]
        if s.phase is not Phase.OVER or s.winner is None:
            score[2] += 1
        else:
            score[0 if (s.winner == 0) == (g % 2 == 0) else 1] += 1
    return score[0], score[1], score[2]


def fit(
    xs: list[list[int]], ys: list[int], l2: float, steps: int, lr: float
) -> tuple[list[float], float]:
    """Logistic regression by batch gradient descent (features scaled by their spread);
    returns the weights on the raw features and the final mean log-loss."""
    n, k = len(xs), len(xs[0])
    spread = [max(1e-9, max(abs(x[j]) for x in xs)) for j in range(k)]
    zs = [[x[j] / spread[j] for j in range(k)] for x in xs]
    w = [0.0] * k
    loss = 0.0
    for _ in range(steps):
        grad = [0.0] * k
        loss = 0.0
        for z, y in zip(zs, ys, strict=True):
            t = sum(a * b for a, b in zip(w, z, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, t))))
            loss -= math.log(max(1e-12, p if y else 1 - p))
            for j in range(k):
                grad[j] += (p - y) * z[j]
        for j in range(k):
            w[j] -= lr * (grad[j] / n + l2 * w[j])
        loss /= n
    return [w[j] / spread[j] for j in range(k)], loss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--gods", action="store_true", help="fit the weights for god games")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--depth", type=int, default=2, help="self-play search depth (turns)")
    parser.add_argument("--explore", type=int, default=8)
    parser.add_argument("--epsilon", type=float, default=0.3)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--scale", type=float, default=100.0, help="points per unit of log-odds")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--duel",
        type=int,
        default=0,
        help="with --gods, instead of training: play this many games between the god "
        "weights in --out (default the shipped file) and the start weights, and add the "
        "result to the file's provenance",
    )
    parser.add_argument(
        "--compare",
        type=int,
        default=0,
        help="with --gods: then play this many games, fitted v start weights",
    )
    args = parser.parse_args()
    if args.gods and args.duel:
        duel_file(args)
        return
    if args.gods:
        train_gods(args)
        return
    out = args.out or OUT

    rng = random.Random(args.seed)
    hand = EvalWeights(tuple(int(w) for w in HAND_WEIGHTS))
    xs: list[list[int]] = []
    ys: list[int] = []
    wins = [0, 0, 0]
    start = time.perf_counter()
    for g in range(args.games):
        rows, winner = self_play(rng, args.depth, args.explore, args.epsilon, hand)
        wins[2 if winner is None else winner] += 1
        if winner is None:
            continue
        for x, mover in rows:
            xs.append(x)
            ys.append(1 if mover == winner else 0)
        if (g + 1) % 25 == 0:
            print(f"{g + 1} games, {len(xs)} positions, {time.perf_counter() - start:.0f} s")
    weights, loss = fit(xs, ys, args.l2, args.steps, args.lr)
    points = {f: round(w * args.scale, 2) for f, w in zip(FEATURES, weights, strict=True)}
    # The immediate win of the side to move is never left to the evaluation's scale.
    points["threat_to_move"] = max(
        points["threat_to_move"], 10 * max(abs(v) for v in points.values() if v)
    )
    provenance = (
        f"scripts/train_santorini_eval.py --games {args.games} --seed {args.seed} "
        f"--depth {args.depth} --explore {args.explore} --epsilon {args.epsilon} "
        f"--l2 {args.l2} --steps {args.steps} --lr {args.lr} --scale {args.scale}: "
        f"{len(xs)} positions from {args.games} self-play games without gods "
        f"(seat 0 won {wins[0]}, seat 1 {wins[1]}, unfinished {wins[2]}), "
        f"log-loss {loss:.4f}"
    )
    data = {"features": list(FEATURES), "weights": points, "provenance": provenance}
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(provenance)
    print(json.dumps(points, indent=2))


def duel_file(args: argparse.Namespace) -> None:
    path: Path = args.out or OUT_GODS
    data = json.loads(path.read_text())
    fitted = GodWeights(tuple(round(float(data["weights"][f])) for f in GOD_FEATURES), "file")
    start_weights = GodWeights((*default_weights().weights, *GOD_START), "self-play start")
    w, lost, d = duel_gods(random.Random(args.seed), args.depth, fitted, start_weights, args.duel)
    line = (
        f"scripts/train_santorini_eval.py --gods --duel {args.duel} --seed {args.seed} "
        f"--depth {args.depth}: over {args.duel} games (random god pairs, seats swapped) "
        f"these weights beat the self-play start weights {w}-{lost}-{d}"
    )
    data["provenance"] = f"{data['provenance']}; {line}"
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(line)


def train_gods(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    start_weights = GodWeights((*default_weights().weights, *GOD_START), "self-play start")
    xs: list[list[int]] = []
    ys: list[int] = []
    wins = [0, 0, 0]
    start = time.perf_counter()
    for g in range(args.games):
        rows, winner, _gods = self_play_gods(
            rng, args.depth, args.explore, args.epsilon, start_weights
        )
        wins[2 if winner is None else winner] += 1
        if winner is not None:
            for x, mover in rows:
                xs.append(x)
                ys.append(1 if mover == winner else 0)
        if (g + 1) % 25 == 0:
            print(f"{g + 1} games, {len(xs)} positions, {time.perf_counter() - start:.0f} s")
    weights, loss = fit(xs, ys, args.l2, args.steps, args.lr)
    points = {f: round(w * args.scale, 2) for f, w in zip(GOD_FEATURES, weights, strict=True)}
    points["threat_to_move"] = max(
        points["threat_to_move"], 10 * max(abs(v) for v in points.values() if v)
    )
    provenance = (
        f"scripts/train_santorini_eval.py --gods --games {args.games} --seed {args.seed} "
        f"--depth {args.depth} --explore {args.explore} --epsilon {args.epsilon} "
        f"--l2 {args.l2} --steps {args.steps} --lr {args.lr} --scale {args.scale}: "
        f"{len(xs)} positions from {args.games} self-play games with a random pair of "
        f"gods each, searched through the god twin with the shipped no-god weights and "
        f"god terms {dict(zip(GOD_FEATURES[len(FEATURES) :], GOD_START, strict=True))} "
        f"(seat 0 won {wins[0]}, seat 1 {wins[1]}, unfinished {wins[2]}), "
        f"log-loss {loss:.4f}"
    )
    if args.compare:
        fitted = GodWeights(tuple(round(v) for v in points.values()), "fitted")
        duel_rng = random.Random(args.seed + 1)
        w, lost, d = duel_gods(duel_rng, args.depth, fitted, start_weights, args.compare)
        provenance += (
            f"; at depth {args.depth} over {args.compare} games (random god pairs, seats "
            f"swapped, seed {args.seed + 1}) the fitted weights beat the start {w}-{lost}-{d}"
        )
    data = {"features": list(GOD_FEATURES), "weights": points, "provenance": provenance}
    (args.out or OUT_GODS).write_text(json.dumps(data, indent=2) + "\n")
    print(provenance)
    print(json.dumps(points, indent=2))


if __name__ == "__main__":
    main()

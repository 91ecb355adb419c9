"""Fit the table evaluation of Santorini from self-play, and measure it (fixed seeds).

    .venv/bin/python scripts/train_santorini_tables.py --games 800 --seed 46
    .venv/bin/python scripts/train_santorini_tables.py --duel 200 --think-time 0.01 --seed 47

Issue 36: the games lost to santorini-ai were lost by a positional drift its evaluation
saw and meeple's did not (``docs/santorini-engine.md``), so the evaluation gets the
:data:`~meeple.ai.santorini_eval.TABLE_FEATURES` (a worker-on-cell table by height,
the neighbourhood of each worker by relative height, threats in the making) beside the
16 of the learned evaluation. Training (games without gods, two players):

1. Self-play: games between two copies of the compiled core's selective search (the
   players' own) at a fixed node budget (``--nodes``) with the learned evaluation
   (:func:`meeple.ai.santorini_eval.learned_weights`); no clock, so a seed gives the
   same games on any machine. Workers are placed at random, and each of the first
   ``--explore`` turns is a random one with probability ``--epsilon``.
2. Every turn-start position is kept with the features of the side to move minus its
   opponent's (the 10, the 6 learned, the 28 of the tables) and whether the side to
   move went on to win.
3. Logistic regression of that result on the differences (Newton's method with an L2
   penalty, ``scripts/train_santorini_learned.py``'s ``fit``); the weights, ``--scale``
   points per unit of log-odds, go with their provenance to
   ``src/meeple/ai/data/santorini_eval_tables.json``.

``--duel N`` plays instead N games without gods between the table weights of that file
and the learned evaluation, seats alternating (each pair of games from the same random
placements), every turn searched by the compiled core with the same budget:
``--think-time`` seconds of process CPU time (equal time), or ``--duel-nodes`` nodes.
``--record`` adds the line to the file's provenance.
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_santorini_learned import (
    MAX_TURNS,
    _heights,
    _placed,
    fit,
    fit_options,
    load,
    report_duel,
    to_points,
    write,
)

from meeple.ai.santorini_eval import (
    FEATURES,
    LEARNED_FEATURES,
    TABLE_FEATURES,
    EvalWeights,
    learned_seat_features,
    learned_weights,
    seat_features,
    table_seat_features,
)
from meeple.ai.santorini_native import NativeSearch, core_module
from meeple.ai.santorini_search import SearchBudget, search_turn
from meeple.games.santorini import Action, GameState, Phase, advance, turns

OUT = Path(__file__).resolve().parent.parent / "src/meeple/ai/data/santorini_eval_tables.json"
NAMES = (*FEATURES, *LEARNED_FEATURES, *TABLE_FEATURES)


def features(s: GameState) -> list[int]:
    """The side to move's features minus its opponent's (:data:`NAMES`)."""
    me = s.turn
    h = _heights(s)
    wk = [w for w in s.workers if w is not None]

    def of(seat: int) -> list[int]:
        return (
            seat_features(h, s.workers, seat, me)
            + learned_seat_features(h, wk, seat)
            + table_seat_features(h, wk, seat)
        )

    return [a - b for a, b in zip(of(me), of(1 - me), strict=True)]


def self_play(
    rng: random.Random, nodes: int, explore: int, epsilon: float, weights: EvalWeights
) -> tuple[list[tuple[list[int], int]], int | None]:
    """One game; (feature differences, mover) per turn, and the winner (None: unfinished)."""
    mod = core_module()
    if mod is None:
        raise SystemExit("the training needs the compiled core (make native)")
    s = _placed(rng)
    core = NativeSearch(mod)
    rows: list[tuple[list[int], int]] = []
    for turn_no in range(MAX_TURNS):
        if s.phase is not Phase.PLAY:
            break
        rows.append((features(s), s.turn))
        route: tuple[Action, ...]
        if turn_no < explore and rng.random() < epsilon:
            route = rng.choice([r for r, _ in turns(s)])
        else:
            budget = SearchBudget(max_nodes=nodes)
            route = search_turn(s, budget, weights=weights, rng=rng, core=core).route
        for action in route:
            s = advance(s, action)[0]
    return rows, s.winner if s.phase is Phase.OVER else None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    fit_options(parser, games=800, seed=46, out=OUT)
    parser.add_argument("--nodes", type=int, default=3000, help="self-play nodes a turn")
    parser.add_argument("--duel-nodes", type=int, default=20000, help="duel: nodes a turn")
    parser.add_argument(
        "--play-with",
        type=Path,
        default=None,
        help="self-play with the table weights of this file (a second round) instead of "
        "the learned evaluation; the duel's opponent too",
    )
    args = parser.parse_args()
    command = " ".join(["scripts/train_santorini_tables.py", *sys.argv[1:]])
    learned = learned_weights()
    if learned is None:
        raise SystemExit("the learned evaluation's weights are missing")
    players = learned if args.play_with is None else load(args.play_with, NAMES)[0]
    players_name = "learned" if args.play_with is None else f"table ({args.play_with.name})"
    if args.duel:
        tables, data = load(args.out, NAMES)
        nodes = None if args.think_time is not None else args.duel_nodes
        report_duel(args, command, f"tables v {players_name}", tables, players, nodes, data)
        return

    rng = random.Random(args.seed)
    xs: list[list[int]] = []
    ys: list[int] = []
    wins = [0, 0, 0]
    start = time.perf_counter()
    for g in range(args.games):
        rows, winner = self_play(rng, args.nodes, args.explore, args.epsilon, players)
        wins[2 if winner is None else winner] += 1
        if winner is not None:
            for x, mover in rows:
                xs.append(x)
                ys.append(1 if mover == winner else 0)
        if (g + 1) % 50 == 0:
            print(
                f"{g + 1} games, {len(xs)} positions, {time.perf_counter() - start:.0f} s",
                flush=True,
            )
    weights, loss = fit(xs, ys, args.l2, args.iterations)
    points = to_points(weights, NAMES, args.scale)
    provenance = (
        f"{command} on {datetime.date.today().isoformat()}: {len(xs)} positions from "
        f"{args.games} self-play games without gods, the compiled core's selective search "
        f"at {args.nodes} nodes a turn with the {players_name} evaluation (seat 0 won {wins[0]}, "
        f"seat 1 {wins[1]}, unfinished {wins[2]}), Newton logistic regression, "
        f"log-loss {loss:.4f}"
    )
    write(args.out, NAMES, points, provenance)


if __name__ == "__main__":
    main()

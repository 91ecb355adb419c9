"""Train the network evaluation of Santorini from self-play, and measure it (fixed seeds).

    .venv/bin/python scripts/train_santorini_net.py --games 1200 --seed 60 --save /tmp/a.npz
    .venv/bin/python scripts/train_santorini_net.py --games 1200 --seed 61 --save /tmp/b.npz
    .venv/bin/python scripts/train_santorini_net.py --data /tmp/a.npz /tmp/b.npz --seed 62
    .venv/bin/python scripts/train_santorini_net.py --duel 200 --think-time 0.01 --seed 63

Issue 36: a small network evaluated incrementally by the compiled core
(:mod:`meeple.ai.santorini_net` is its Python twin and the format of its weights), for
games without gods between two players. Training:

1. Self-play (``--games``, ``--seed``; ``--save`` writes the positions): games between
   two copies of the compiled core's selective search (the players' own) at a fixed node
   budget (``--nodes``) with the table evaluation; no clock, so a seed gives the same
   games on any machine. Workers are placed at random, and each of the first
   ``--explore`` turns is a random one with probability ``--epsilon``. Every turn-start
   position is kept with the search's value (the mover's view) and the game's result.
2. The label of a position: ``--mix`` of the game's result (1 the mover won, 0 lost)
   and ``1 - --mix`` of the search's value as a probability (``sigmoid(value /
   --scale)``; a proved win or loss is 1 or 0). Positions of unfinished games are
   dropped.
3. Each position is seen in the board's 8 symmetries. The network (inputs
   :data:`~meeple.ai.santorini_net.INPUTS` per side, ``HIDDEN`` units per side, clipped
   ReLU, one output) is fitted in numpy with Adam on the cross-entropy of
   ``sigmoid(output)`` against the label (``--epochs``, ``--batch``, ``--lr``,
   ``--seed`` for the shuffles and the initial weights), then quantised: first layer
   int16 at :data:`~meeple.ai.santorini_net.QA` a unit, output layer int16 at
   :data:`~meeple.ai.santorini_net.QB`; the output is ``--scale`` points a unit of
   log-odds (the table evaluation's scale). Weights and provenance go to
   ``src/meeple/ai/data/santorini_net.json``.

``--duel N`` plays instead N games without gods between the network and the table
evaluation, seats alternating (each pair of games from the same random placements),
every turn searched by the compiled core with the same budget: ``--think-time`` seconds
of process CPU time (equal time), or ``--duel-nodes`` nodes. ``--record`` adds the line
to the weights file's provenance.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_santorini_learned import MAX_TURNS, _heights, _placed, wilson

from meeple.ai.santorini_eval import EvalWeights, table_weights
from meeple.ai.santorini_native import NativeSearch, core_module
from meeple.ai.santorini_net import (
    HIDDEN,
    INPUTS,
    QA,
    QB,
    NetWeights,
    evaluate_net,
    features,
    net_weights,
)
from meeple.ai.santorini_search import _MATE, SearchBudget, search_turn
from meeple.games.santorini import Action, Phase, advance, turns

OUT = Path(__file__).resolve().parent.parent / "src/meeple/ai/data/santorini_net.json"

# The board's 8 symmetries as cell permutations: SYM[k][c] is where cell c goes.
SYM: list[list[int]] = []
for _k in range(8):
    perm = []
    for _c in range(25):
        r, q = divmod(_c, 5)
        for _ in range(_k % 4):
            r, q = q, 4 - r
        if _k >= 4:
            q = 4 - q
        perm.append(r * 5 + q)
    SYM.append(perm)


def self_play(
    rng: random.Random, nodes: int, explore: int, epsilon: float, weights: EvalWeights
) -> tuple[list[tuple[list[int], list[int], int, int]], int | None]:
    """One game: (heights, workers, mover, search value or 0) per turn start, and the
    winner (None: unfinished)."""
    mod = core_module()
    if mod is None:
        raise SystemExit("the training needs the compiled core (make native)")
    s = _placed(rng)
    core = NativeSearch(mod)
    rows: list[tuple[list[int], list[int], int, int]] = []
    for turn_no in range(MAX_TURNS):
        if s.phase is not Phase.PLAY:
            break
        route: tuple[Action, ...]
        value = 0
        result = search_turn(s, SearchBudget(max_nodes=nodes), weights=weights, rng=rng, core=core)
        if turn_no < explore and rng.random() < epsilon:
            route = rng.choice([r for r, _ in turns(s)])
        else:
            route = result.route
        value = result.value
        wk = [w for w in s.workers if w is not None]
        rows.append((_heights(s), wk, s.turn, value))
        for action in route:
            s = advance(s, action)[0]
    return rows, s.winner if s.phase is Phase.OVER else None


def generate(args: argparse.Namespace, command: str) -> None:
    table = table_weights()
    if table is None:
        raise SystemExit("the table evaluation's weights are missing")
    rng = random.Random(args.seed)
    heights: list[list[int]] = []
    workers: list[list[int]] = []
    movers: list[int] = []
    values: list[int] = []
    results: list[int] = []
    start = time.perf_counter()
    wins = [0, 0, 0]
    for g in range(args.games):
        rows, winner = self_play(rng, args.nodes, args.explore, args.epsilon, table)
        wins[2 if winner is None else winner] += 1
        if winner is None:
            continue
        for h, wk, mover, value in rows:
            heights.append(h)
            workers.append(wk)
            movers.append(mover)
            values.append(value)
            results.append(1 if mover == winner else 0)
        if (g + 1) % 50 == 0:
            print(
                f"{g + 1} games, {len(heights)} positions, {time.perf_counter() - start:.0f} s",
                flush=True,
            )
    np.savez_compressed(
        args.save,
        heights=np.array(heights, dtype=np.int8),
        workers=np.array(workers, dtype=np.int8),
        movers=np.array(movers, dtype=np.int8),
        values=np.array(values, dtype=np.int64),
        results=np.array(results, dtype=np.int8),
        provenance=np.array(
            f"{command}: {args.games} self-play games without gods, the compiled core's "
            f"selective search at {args.nodes} nodes a turn with the table evaluation "
            f"(seat 0 won {wins[0]}, seat 1 {wins[1]}, unfinished {wins[2]}), "
            f"{len(heights)} positions"
        ),
    )
    print(f"{len(heights)} positions in {time.perf_counter() - start:.0f} s -> {args.save}")


def encode(heights: np.ndarray, workers: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The 29 active inputs of each position from ``seats``' view, as
    :func:`~meeple.ai.santorini_net.features` gives them (n x 29)."""
    h = heights.astype(np.int64)
    wk = workers.astype(np.int64)
    cells = np.arange(25) * 5 + np.minimum(h, 4)
    under = np.minimum(np.take_along_axis(h, wk, axis=1), 3)
    own = (np.arange(4)[None, :] >> 1) == seats.astype(np.int64)[:, None]
    base = np.where(own, 125, 225)
    return np.concatenate([cells, base + wk * 4 + under], axis=1)


def _dense(idx: np.ndarray) -> np.ndarray:
    out = np.zeros((len(idx), INPUTS), dtype=np.float32)
    np.put_along_axis(out, idx, 1.0, axis=1)
    return out


def fit_net(args: argparse.Namespace, command: str) -> None:
    parts = [np.load(p) for p in args.data]
    heights = np.concatenate([p["heights"] for p in parts])
    workers = np.concatenate([p["workers"] for p in parts])
    movers = np.concatenate([p["movers"] for p in parts])
    values = np.concatenate([p["values"] for p in parts]).astype(np.float64)
    results = np.concatenate([p["results"] for p in parts]).astype(np.float64)
    sources = "; ".join(str(p["provenance"]) for p in parts)
    # The search's value as a probability; proved wins and losses are 1 and 0.
    prob = 1.0 / (1.0 + np.exp(-np.clip(values / args.scale, -30, 30)))
    prob[values > _MATE] = 1.0
    prob[values < -_MATE] = 0.0
    labels = args.mix * results + (1.0 - args.mix) * prob
    # The 8 symmetries of every position.
    hs, ws = [], []
    for perm in SYM:
        p = np.array(perm)
        moved = np.empty_like(heights)
        moved[:, p] = heights
        hs.append(moved)
        ws.append(p[workers.astype(np.int64)].astype(np.int8))
    n0 = len(heights)
    heights = np.concatenate(hs)
    workers = np.concatenate(ws)
    movers = np.tile(movers, 8)
    labels = np.tile(labels, 8).astype(np.float32)
    start = time.perf_counter()
    us = encode(heights, workers, movers)
    them = encode(heights, workers, 1 - movers)
    # the encoding is the twin's
    for i in range(0, len(us), max(1, len(us) // 50)):
        h = [int(x) for x in heights[i]]
        wk = [int(x) for x in workers[i]]
        assert list(us[i]) == features(h, wk, int(movers[i]))
        assert list(them[i]) == features(h, wk, 1 - int(movers[i]))
    print(f"{n0} positions x 8 symmetries encoded in {time.perf_counter() - start:.0f} s")
    # --residual: the table evaluation's value (log-odds) is a fixed part of the output
    base = np.zeros(len(labels), dtype=np.float32)
    if args.residual:
        mod = core_module()
        table = table_weights()
        if mod is None or table is None:
            raise SystemExit("--residual needs the compiled core and the table weights")
        for i in range(len(labels)):
            t = int(movers[i])
            base[i] = mod.evaluate(
                heights[i].tolist(), workers[i].tolist(), t, t, 0, (0, 0), table.weights, None
            )
        base = np.clip(base / args.scale, -20.0, 20.0)
        print(f"table values in {time.perf_counter() - start:.0f} s")

    rng = np.random.default_rng(args.seed)
    # validation: whole positions (all 8 symmetries of one) kept apart
    held = rng.permutation(n0)[: n0 // 20]
    is_valid = np.zeros(n0, dtype=bool)
    is_valid[held] = True
    is_valid = np.tile(is_valid, 8)
    valid = np.flatnonzero(is_valid)
    train = np.flatnonzero(~is_valid)
    w1 = (rng.standard_normal((INPUTS, HIDDEN)) * (1.0 / math.sqrt(29))).astype(np.float32)
    b1 = np.full(HIDDEN, 0.5, dtype=np.float32)
    w2 = (rng.standard_normal(2 * HIDDEN) * (1.0 / math.sqrt(2 * HIDDEN))).astype(np.float32)
    b2 = np.zeros(1, dtype=np.float32)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0

    def forward(idx: np.ndarray) -> tuple[np.ndarray, ...]:
        x_us, x_them = _dense(us[idx]), _dense(them[idx])
        a_us = x_us @ w1 + b1
        a_them = x_them @ w1 + b1
        h_us = np.clip(a_us, 0.0, 1.0)
        h_them = np.clip(a_them, 0.0, 1.0)
        out = h_us @ w2[:HIDDEN] + h_them @ w2[HIDDEN:] + b2[0] + base[idx]
        return x_us, x_them, a_us, a_them, h_us, h_them, out

    def loss_of(idx: np.ndarray) -> float:
        total = 0.0
        for b in range(0, len(idx), 8192):
            part = idx[b : b + 8192]
            out = forward(part)[6]
            p = 1.0 / (1.0 + np.exp(-np.clip(out, -30, 30)))
            y = labels[part]
            total -= float(np.sum(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7)))
        return total / len(idx)

    for epoch in range(args.epochs):
        rng.shuffle(train)
        lr = args.lr * (0.3 ** (epoch // max(1, args.epochs // 3)))
        for b in range(0, len(train), args.batch):
            idx = train[b : b + args.batch]
            x_us, x_them, a_us, a_them, h_us, h_them, out = forward(idx)
            p = 1.0 / (1.0 + np.exp(-np.clip(out, -30, 30)))
            g = ((p - labels[idx]) / len(idx)).astype(np.float32)
            gw2 = np.concatenate([h_us.T @ g, h_them.T @ g])
            gb2 = np.array([g.sum()], dtype=np.float32)
            d_us = np.outer(g, w2[:HIDDEN]) * ((a_us > 0) & (a_us < 1))
            d_them = np.outer(g, w2[HIDDEN:]) * ((a_them > 0) & (a_them < 1))
            gw1 = x_us.T @ d_us + x_them.T @ d_them + args.l2 * w1
            gb1 = d_us.sum(0) + d_them.sum(0)
            step += 1
            for q, gq, mq, vq in zip(params, (gw1, gb1, gw2, gb2), m, v, strict=True):
                mq *= beta1
                mq += (1 - beta1) * gq
                vq *= beta2
                vq += (1 - beta2) * gq * gq
                mhat = mq / (1 - beta1**step)
                vhat = vq / (1 - beta2**step)
                q -= (lr * mhat / (np.sqrt(vhat) + eps)).astype(np.float32)
            # the quantised weights must stay within int16
            np.clip(w1, -32767 / QA, 32767 / QA, out=w1)
            np.clip(w2, -32767 / QB, 32767 / QB, out=w2)
        print(
            f"epoch {epoch + 1}: train {loss_of(train[:100000]):.4f}, "
            f"valid {loss_of(valid):.4f}, {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    # Quantise: accumulators at QA a unit, the output layer at QB a unit, points at
    # args.scale a unit of log-odds (the output's divisor is QA * QB / scale).
    qw1 = np.clip(np.round(w1 * QA), -32767, 32767).astype(np.int64)
    qb1 = np.clip(np.round(b1 * QA), -32767, 32767).astype(np.int64)
    qw2 = np.clip(np.round(w2 * QB), -32767, 32767).astype(np.int64)
    qb2 = round(float(b2[0]) * QA * QB)
    valid_loss = loss_of(valid)
    # the quantised network's loss on the held-out positions, by the twin's integers
    qnet = NetWeights(
        tuple(int(x) for x in qw1.reshape(-1)),
        tuple(int(x) for x in qb1),
        tuple(int(x) for x in qw2),
        qb2,
        round(args.scale),
    )
    sample = valid[:: max(1, len(valid) // 2000)]
    qloss = 0.0
    for i in sample:
        h = [int(x) for x in heights[i]]
        wk = [int(x) for x in workers[i]]
        t = evaluate_net(qnet, h, wk, int(movers[i])) / args.scale + float(base[i])
        pq = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, t))))
        y = float(labels[i])
        qloss -= y * math.log(pq + 1e-7) + (1 - y) * math.log(1 - pq + 1e-7)
    qloss /= len(sample)
    provenance = (
        f"{command} on {datetime.date.today().isoformat()}: {n0} positions (x 8 symmetries) "
        f"from [{sources}]; label {args.mix} x result + {1 - args.mix:.2f} x "
        f"sigmoid(value / {args.scale:g}); "
        f"{'residual on the table evaluation; ' if args.residual else ''}"
        f"Adam, {args.epochs} epochs, batch {args.batch}, "
        f"lr {args.lr}, L2 {args.l2}, seed {args.seed}; held-out log-loss {valid_loss:.4f} "
        f"(quantised, {len(sample)} of them: {qloss:.4f})"
    )
    data = {
        "inputs": INPUTS,
        "hidden": HIDDEN,
        "qa": QA,
        "qb": QB,
        "scale": round(args.scale),
        "w1": qw1.tolist(),
        "b1": qb1.tolist(),
        "w2": qw2.tolist(),
        "b2": qb2,
        "residual": bool(args.residual),
        "provenance": provenance,
    }
    args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(provenance)


def duel(args: argparse.Namespace, command: str) -> None:
    """The network against the table evaluation, seats alternating."""
    mod = core_module()
    if mod is None:
        raise SystemExit("the duel needs the compiled core (make native)")
    net = net_weights(args.out)
    table = table_weights()
    if net is None or table is None:
        raise SystemExit("the network's or the table evaluation's weights are missing")
    rng = random.Random(args.seed)
    score = [0, 0, 0]
    depths: list[list[int]] = [[], []]
    start = _placed(rng)
    for g in range(args.duel):
        if g % 2 == 0:
            start = _placed(rng)
        s = start
        net_seat = 0 if g % 2 == 0 else 1
        cores = (NativeSearch(mod), NativeSearch(mod))
        for _ in range(MAX_TURNS):
            if s.phase is not Phase.PLAY:
                break
            me = s.turn
            budget = SearchBudget(
                seconds=args.think_time,
                clock=time.process_time if args.think_time is not None else None,
                max_nodes=None if args.think_time is not None else args.duel_nodes,
            )
            is_net = me == net_seat
            result = search_turn(
                s,
                budget,
                weights=table,
                net=net if is_net else None,
                core=cores[me],
            )
            depths[0 if is_net else 1].append(result.depth)
            for action in result.route:
                s = advance(s, action)[0]
        if s.phase is not Phase.OVER or s.winner is None:
            score[2] += 1
        else:
            score[0 if s.winner == net_seat else 1] += 1
        if args.progress and (g + 1) % args.progress == 0:
            print(f"{g + 1} games: {score[0]}-{score[1]}-{score[2]}", flush=True)
    w, lost, d = score
    lo, hi = wilson(w + d / 2, args.duel)
    budget = f"{args.duel_nodes} nodes" if args.think_time is None else f"{args.think_time} s CPU"
    med = [sorted(x)[len(x) // 2] if x else 0 for x in depths]
    line = (
        f"{command}: network v table evaluation at {budget} a turn, {args.duel} games "
        f"without gods, seats alternating: {w}-{lost}-{d}, "
        f"{100 * (w + d / 2) / args.duel:.1f} % (95 % CI {100 * lo:.1f}-{100 * hi:.1f} %), "
        f"median depth {med[0]} v {med[1]}"
    )
    print(line)
    if args.record:
        data = json.loads(args.out.read_text())
        data["provenance"] = f"{data['provenance']}; {line}"
        args.out.write_text(json.dumps(data, separators=(",", ":")) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=60)
    parser.add_argument("--nodes", type=int, default=4000, help="self-play nodes a turn")
    parser.add_argument("--explore", type=int, default=8)
    parser.add_argument("--epsilon", type=float, default=0.3)
    parser.add_argument("--save", type=Path, default=None, help="self-play: write positions")
    parser.add_argument("--data", type=Path, nargs="*", default=None, help="fit these positions")
    parser.add_argument("--mix", type=float, default=0.5, help="the result's share of a label")
    parser.add_argument("--scale", type=float, default=100.0, help="points a unit of log-odds")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--l2", type=float, default=1e-6)
    parser.add_argument(
        "--residual",
        action="store_true",
        help="fit what the table evaluation misses (the search adds both)",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--duel", type=int, default=0, help="play this many games instead")
    parser.add_argument("--think-time", type=float, default=None, help="duel: CPU s a turn")
    parser.add_argument("--duel-nodes", type=int, default=20000, help="duel: nodes a turn")
    parser.add_argument("--record", action="store_true", help="duel: add it to the provenance")
    parser.add_argument("--progress", type=int, default=0)
    args = parser.parse_args()
    command = " ".join(["scripts/train_santorini_net.py", *sys.argv[1:]])
    if args.duel:
        duel(args, command)
    elif args.data:
        fit_net(args, command)
    elif args.save is not None:
        generate(args, command)
    else:
        raise SystemExit("--save FILE (self-play), --data FILES (fit) or --duel N")


if __name__ == "__main__":
    main()

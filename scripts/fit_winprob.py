"""Fit the win-probability table by self-play: ``nice -n 19 python scripts/fit_winprob.py``.

What it does, reproducibly for a given ``--seed`` (issue 37):

1. Play ``--games`` self-play games on ``--lexicon`` with the compiled generator, both
   sides the strong player's static equity (score + leave value, the leaves the bots
   play that lexicon with, :func:`meeple.ai.leaves.leaves_for`) while the bag has
   tiles and the best score once it is empty, under the standard end rules
   (:class:`meeple.ai.selfplay.SimGame`). Games run in chunks of 200, each seeded by
   (seed, chunk), over ``--jobs`` processes, so the table does not depend on ``--jobs``.
2. At every turn note, for the side to move, its lead and the tiles it cannot see
   (bag + the other rack); when the game ends, whether that side won (1, a draw 0.5,
   0). Every tenth game is held out.
3. For each number of tiles unseen ``u`` (0-93), fit a logistic curve ``P(win) =
   1 / (1 + exp(-(slope * lead + bias)))`` by maximum likelihood on the training turns
   with ``u - 2 .. u + 2`` tiles unseen (the neighbours smooth the curves where turns are
   few).
4. Report the held-out log loss of the table against a coin (0.693) and against one
   curve for all ``u``; write ``src/meeple/ai/data/winprob.json`` (or ``--out``) with
   the provenance (command, seed, date, games, lexicon, the figures) in ``info``.

The strong player uses one table for every lexicon (decision: how fast a lead stops
being caught depends on the scoring rate, which differs little between English lists).
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
from pathlib import Path

from meeple.ai.leaves import leaves_for
from meeple.ai.scrabble import Budget, ExchangeChoice, PassChoice, Position, StrongPlayer
from meeple.ai.scrabble_winprob import WinTable, fit_curve
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.engine import get_generator
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH

DATA = Path(__file__).resolve().parents[1] / "src" / "meeple" / "ai" / "data"
CHUNK = 200
HELD_OUT = 10
MAX_U = 93  # a player sees its own 7 of the 100 tiles at the start
WINDOW = 2

# one turn: (tiles unseen, lead, win)
Sample = tuple[int, int, float]


def play_games(lexicon_name: str, games: int, rng: random.Random, first: int) -> list[list[Sample]]:
    """[training turns, held-out turns] from ``games`` self-play games."""
    lexicon = load_lexicon(lexicon_name)
    generator = get_generator("native")
    player = StrongPlayer(lexicon, leaves_for(lexicon_name), generator, candidates=1)
    no_time = Budget(0.0, lambda: 0.0)
    out: list[list[Sample]] = [[], []]
    for g in range(first, first + games):
        game = SimGame.new(rng, first=g % 2)
        turns: list[tuple[int, int, int]] = []  # (player, unseen, lead)
        while not game.over:
            p = game.turn
            rack = game.racks[p]
            turns.append(
                (p, len(game.bag) + len(game.racks[1 - p]), game.scores[p] - game.scores[1 - p])
            )
            choice: Move | ExchangeChoice | PassChoice
            if game.bag:
                position = Position(game.board, rack, len(game.bag), unseen=game.unseen(p))
                choice = player.choose(position, no_time)
            else:
                best = generator.best(game.board, rack, lexicon, ENGLISH, n=1)
                choice = best[0] if best else PassChoice()
            if isinstance(choice, ExchangeChoice) and game.can_exchange(len(choice.tiles)):
                game.exchange(choice.tiles, rng)
            elif isinstance(choice, (ExchangeChoice, PassChoice)):
                game.pass_()
            else:
                game.play(choice)
        final = game.scores[0] - game.scores[1]
        result = (1.0 if final > 0 else 0.5 if final == 0 else 0.0, 0.0)
        result = (result[0], 1.0 - result[0])
        sink = out[1] if g % HELD_OUT == 0 else out[0]
        sink.extend((u, lead, result[p]) for p, u, lead in turns)
    return out


def _chunk(job: tuple[str, int, int, int]) -> str:
    lexicon, seed, chunk, games = job
    rng = random.Random(f"winprob-{seed}-{chunk}")
    return json.dumps(play_games(lexicon, games, rng, chunk * CHUNK))


def log_loss(samples: list[Sample], table: WinTable) -> float:
    total = 0.0
    for u, lead, y in samples:
        p = min(max(table.win(lead, u), 1e-9), 1 - 1e-9)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
    return total / max(1, len(samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--lexicon", default="enable")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DATA / "winprob.json")
    args = parser.parse_args()
    start = time.perf_counter()
    work = [
        (args.lexicon, args.seed, c, min(CHUNK, args.games - c * CHUNK))
        for c in range((args.games + CHUNK - 1) // CHUNK)
    ]
    train: list[Sample] = []
    held: list[Sample] = []
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for i, text in enumerate(pool.imap(_chunk, work)):
            part = json.loads(text)
            train.extend((int(u), int(x), float(y)) for u, x, y in part[0])
            held.extend((int(u), int(x), float(y)) for u, x, y in part[1])
            print(f"chunk {i + 1}/{len(work)}: {len(train)} turns", flush=True)
    played = time.perf_counter() - start
    by_u: list[list[Sample]] = [[] for _ in range(MAX_U + 1)]
    for s in train:
        by_u[min(s[0], MAX_U)].append(s)
    slope: list[float] = []
    bias: list[float] = []
    counts: list[int] = []
    for u in range(MAX_U + 1):
        pool_ = [s for v in range(max(0, u - WINDOW), min(MAX_U, u + WINDOW) + 1) for s in by_u[v]]
        counts.append(len(by_u[u]))
        a, b = fit_curve([s[1] for s in pool_], [s[2] for s in pool_]) if pool_ else (0.01, 0.0)
        slope.append(max(a, 1e-4))
        bias.append(b)
    one_a, one_b = fit_curve([s[1] for s in train], [s[2] for s in train])
    table = WinTable(tuple(slope), tuple(bias))
    flat = WinTable((max(one_a, 1e-4),), (one_b,))
    figures = {
        "games": args.games,
        "train_turns": len(train),
        "heldout_turns": len(held),
        "seconds": round(played),
        "heldout_log_loss_table": round(log_loss(held, table), 4),
        "heldout_log_loss_one_curve": round(log_loss(held, flat), 4),
        "heldout_log_loss_coin": round(math.log(2), 4),
        "turns_per_unseen": counts,
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "turns_per_unseen"}), flush=True)
    for u in (7, 14, 30, 50, 80, 93):
        print(
            f"u={u}: slope {slope[u]:.4f} bias {bias[u]:+.3f}; lead 10 -> "
            f"{table.win(10, u):.3f}, lead 30 -> {table.win(30, u):.3f}",
            flush=True,
        )
    info = {
        "script": "scripts/fit_winprob.py",
        "command": "python scripts/fit_winprob.py " + shlex.join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "seed": args.seed,
        "lexicon": args.lexicon,
        "policy": "static equity (leaves_for(lexicon)), best score with the bag empty",
        "window": WINDOW,
        "figures": figures,
    }
    out = WinTable(tuple(slope), tuple(bias), info)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(out.to_json() + "\n", encoding="utf-8")
    print(f"wrote {args.out}", flush=True)


if __name__ == "__main__":
    main()

"""The strong player's endgame (and one-tile pre-endgame) against an older meeple's, on
the same positions with the seats swapped (issue 37):
``python benchmarks/scrabble_endgame_ab.py --old-src DIR [--bag 0-7] [--positions N]``.

``DIR`` is the ``src`` of an older meeple (``git archive <commit> src | tar x -C DIR/..``,
with its compiled ``_movegen`` copied beside its sources); its ``meeple/ai/scrabble.py``
is loaded as a separate module over this tree's engine, so only the player differs.
Positions come from greedy self-play on ENABLE (seed ``--seed`` + i), stopped at the
first turn with ``--bag`` tiles in the bag (games that skip that count are passed
over). Each position is played to the end twice: the new player on the side to move and
the old one on the other, then the other way round; the new player's gain is the side
to move's final spread in the first game minus in the second. Both think ``--think-time``
CPU seconds a move (``time.process_time``). Prints the mean gain with a 95 % interval,
the new player's gain in games won (a win 1, a draw 0.5, over the two games, so between
-1 and +1 a position), how often each game's first move differed, and the CPU a move.
``--bag`` up to 86 (e.g. 20 for the simulation by the chance to win near the end);
``--no-by-wins`` and ``--no-prune`` turn those parts of the new player off, to measure
each alone; ``--close N`` keeps only the positions with a lead of at most ``N`` points.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
import time
from pathlib import Path
from random import Random
from types import ModuleType
from typing import Any

from meeple.ai.scrabble import Budget, GreedyPlayer, Position, StrongPlayer
from meeple.ai.selfplay import SCORELESS_TURNS, SimGame
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.games.scrabble.moves import Move


def load_old(src: Path) -> ModuleType:
    """The older ``meeple/ai/scrabble.py`` as the module ``old_scrabble``."""
    path = src / "meeple" / "ai" / "scrabble.py"
    spec = importlib.util.spec_from_file_location("old_scrabble", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_scrabble"] = module
    spec.loader.exec_module(module)
    return module


def start(seed: int, bag: int, lexicon: Any) -> SimGame | None:
    """A greedy self-play game stopped at the first turn with ``bag`` tiles left."""
    rng = Random(seed)
    game = SimGame.new(rng)
    greedy = GreedyPlayer(lexicon)
    while not game.over:
        if len(game.bag) == bag:
            return game
        if len(game.bag) < bag:
            return None
        p = game.turn
        position = Position(game.board, game.racks[p], len(game.bag), unseen=game.unseen(p))
        apply(game, greedy.choose(position, Budget(0.0), rng), rng)
    return None


def apply(game: SimGame, choice: object, rng: Random) -> None:
    """Either module's choice (their exchange and pass classes differ): by kind."""
    tiles = str(getattr(choice, "tiles", "")) if type(choice).__name__ == "ExchangeChoice" else ""
    if isinstance(choice, Move):
        game.play(choice)
    elif tiles and game.can_exchange(len(tiles)):
        game.exchange(tiles, rng)
    else:
        game.pass_()


def play_out(
    game: SimGame, players: tuple[Any, Any], old: ModuleType, think: float, cpu: list[float]
) -> tuple[int, str]:
    """Play ``game`` to its end; the final spread of the side to move at the start."""
    first = game.turn
    rng = Random(0)
    opening = ""
    while not game.over:
        p = game.turn
        player = players[0 if p == first else 1]
        is_old = not isinstance(player, StrongPlayer)
        mod_position = old.Position if is_old else Position
        mod_budget = old.Budget if is_old else Budget
        kwargs: dict[str, Any] = {}
        if not is_old:
            kwargs = {"scoreless_turns": game.scoreless, "scoreless_limit": SCORELESS_TURNS}
        position = mod_position(
            game.board,
            game.racks[p],
            len(game.bag),
            scores=(game.scores[p], game.scores[1 - p]),
            unseen=game.unseen(p),
            **kwargs,
        )
        t = time.process_time()
        choice = player.choose(position, mod_budget(think, time.process_time), Random(1))
        cpu[0] += time.process_time() - t
        cpu[1] += 1
        if not opening:
            opening = str(choice) if isinstance(choice, Move) else type(choice).__name__
        apply(game, choice, rng)
    return game.scores[first] - game.scores[1 - first], opening


def _won(spread: int) -> float:
    return 1.0 if spread > 0 else 0.5 if spread == 0 else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-src", required=True, type=Path)
    parser.add_argument("--bag", type=int, default=0, choices=range(87))
    parser.add_argument("--positions", type=int, default=50)
    parser.add_argument("--think-time", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lexicon", default="enable")
    parser.add_argument(
        "--no-by-wins", action="store_true", help="the new player chooses by value only"
    )
    parser.add_argument("--no-prune", action="store_true", help="the new player drops nothing")
    parser.add_argument(
        "--close",
        type=int,
        default=None,
        help="only positions whose lead is at most this many points either way",
    )
    args = parser.parse_args(argv)
    old = load_old(args.old_src)
    lexicon = load_lexicon(args.lexicon)
    new_player = StrongPlayer(lexicon, by_wins=not args.no_by_wins, prune=not args.no_prune)
    old_player = old.StrongPlayer(lexicon)
    gains: list[float] = []
    win_gains: list[float] = []
    differ = 0
    cpu = [0.0, 0]
    seed = args.seed
    while len(gains) < args.positions:
        seed += 1
        game = start(seed, args.bag, lexicon)
        if game is None:
            continue
        if args.close is not None and abs(game.scores[0] - game.scores[1]) > args.close:
            continue
        a, first_new = play_out(game.copy(), (new_player, old_player), old, args.think_time, cpu)
        b, first_old = play_out(game.copy(), (old_player, new_player), old, args.think_time, cpu)
        gains.append(a - b)
        win_gains.append(_won(a) - _won(b))
        differ += first_new != first_old
        n = len(gains)
        mean = statistics.fmean(gains)
        half = 1.96 * statistics.stdev(gains) / math.sqrt(n) if n > 1 else math.inf
        wins = statistics.fmean(win_gains)
        win_half = 1.96 * statistics.stdev(win_gains) / math.sqrt(n) if n > 1 else math.inf
        print(
            f"position {n} (seed {seed}): new first {a:+d}, old first {b:+d}; "
            f"gain {mean:+.1f} ± {half:.1f} a position, games won {wins:+.3f} ± "
            f"{win_half:.3f} a position, first moves differ {differ}/{n}, "
            f"CPU {cpu[0] / max(1, int(cpu[1])):.3f} s a move",
            flush=True,
        )


if __name__ == "__main__":
    main()

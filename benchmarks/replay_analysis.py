"""Replay analysis benchmark: ``python benchmarks/replay_analysis.py``.

What the replay page's analysis (issue 24, ``meeple.ai.analysis.analyse``) costs for a
whole Scrabble game: the record replayed through the engine and, before each play,
exchange and pass, the move generator's best play by static equity (score + leave
value). The games are greedy self-play games on ``--lexicon`` (gcide by default, the
list the tests use; ``enable`` for the default one); each is analysed ``--runs``
times, best kept. The issue's goal: a 25-move game in under 5 s.
"""

from __future__ import annotations

import argparse
import random
import time

from meeple.ai.analysis import analyse
from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games.scrabble.engine import get_generator
from meeple.games.scrabble.game import Exchange, Game, Pass, Play
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.record import to_record


def _game(seed: int, lexicon: Lexicon) -> tuple[dict, int]:  # type: ignore[type-arg]
    game = Game(["ann", "bob"], random.Random(seed), lexicon=lexicon)
    moves = 0
    while not game.is_over:
        p = game.turn
        assert p is not None
        c = choose(game.board, game.rack(p), lexicon, bag_count=len(game.bag))
        if isinstance(c, ExchangeChoice):
            game.apply(Exchange(p, c.tiles))
        elif isinstance(c, PassChoice):
            game.apply(Pass(p))
        else:
            game.apply(Play.from_move(p, c))
        moves += 1
    return to_record(game), moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lexicon", default="gcide")
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--generator", default="auto", help="auto, native or python")
    args = parser.parse_args()
    lexicon = load_lexicon(args.lexicon)
    generator = get_generator(args.generator)
    print(f"lexicon {args.lexicon}, generator {type(generator).__name__}")
    for seed in range(args.games):
        record, moves = _game(seed, lexicon)
        best = float("inf")
        for _ in range(args.runs):
            start = time.perf_counter()
            analyse(record, lexicon, generator=generator)
            best = min(best, time.perf_counter() - start)
        print(f"game {seed}: {moves} moves analysed in {best * 1000:.0f} ms")


if __name__ == "__main__":
    main()

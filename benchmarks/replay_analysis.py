"""Replay analysis benchmark: ``python benchmarks/replay_analysis.py``.

What the replay page's analysis (issue 24, ``meeple.ai.analysis.analyse``) costs for a
whole Scrabble game: the record replayed through the engine and, before each play,
exchange and pass, the move generator's best play by static equity (score + leave
value). The games are greedy self-play games on ``--lexicon`` (gcide by default, the
list the tests use; ``enable`` for the default one); each is analysed ``--runs``
times, best kept. The issue's goal: a 25-move game in under 5 s.

``--game santorini`` (issue 34.7, ``meeple.ai.analysis.analyse_santorini``): every
completed turn's options each searched two turns deeper. The games are searching bots
on both seats (depth ``--bot-depth``, a node budget: the same games every run), with
gods and without; the time per game and per turn is printed. Goal: a 40-turn game well
under a few seconds.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from meeple.ai.analysis import analyse, analyse_santorini
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


def _santorini_game(seed: int, gods: bool, depth: int) -> dict[str, Any]:
    from meeple.ai.santorini_search import AlphaBetaPlayer
    from meeple.games.santorini import record as santorini_record
    from meeple.games.santorini.game import Game as SantoriniGame
    from meeple.games.santorini.state import Rules

    rng = random.Random(seed)
    game = SantoriniGame(Rules(players=2, gods=gods), challenger=seed % 2)
    bots = [AlphaBetaPlayer(max_depth=depth, max_nodes=20_000) for _ in range(2)]
    while not game.is_over:
        s = game.state
        game.apply(bots[s.turn].choose(s, rng))
    return santorini_record.to_record(game, players=["ann", "bob"])


def santorini(games: int, runs: int, depth: int) -> None:
    print(f"santorini: searching bots (depth {depth}) on both seats")
    for gods in (False, True):
        for seed in range(games):
            record = _santorini_game(seed, gods, depth)
            best, cpu, turns = float("inf"), float("inf"), 0
            for _ in range(runs):
                start, used = time.perf_counter(), time.process_time()
                found = analyse_santorini(record)
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, time.process_time() - used)
                turns = sum(1 for a in found if a)
            print(
                f"{'gods' if gods else 'no gods'} game {seed}: {turns} turns analysed in "
                f"{best * 1000:.0f} ms, cpu {cpu * 1000:.0f} ms "
                f"({cpu * 1000 / max(turns, 1):.1f} ms a turn)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="scrabble", help="scrabble or santorini")
    parser.add_argument("--bot-depth", type=int, default=2, help="santorini: the bots' depth")
    parser.add_argument("--lexicon", default="gcide")
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--generator", default="auto", help="auto, native or python")
    args = parser.parse_args()
    if args.game == "santorini":
        santorini(args.games, args.runs, args.bot_depth)
        return
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

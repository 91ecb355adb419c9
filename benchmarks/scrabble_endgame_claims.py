"""Does meeple's endgame search get what it claims against Quackle? (issue 37, first item):
``python benchmarks/scrabble_endgame_claims.py --quackle DIR [--games N] [--seed S]``.

Plays the match of ``scrabble_external.py`` (Speedy, the same pairs and seeds) with a
strong player that notes, at its first move with the bag empty, the value its endgame
search claimed (the final spread from there for meeple when exact) and compares it with
what the game then gave (the final spread less the spread at that move). It also says
who emptied the bag: the other side moves first in the endgame, and the endgame's gain
is split by it. Prints one line a game, then the mean of actual minus claimed (all, and
over the exact claims) and the endgame's gain by who emptied the bag.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

import scrabble_external as ext  # beside this file: a script's directory is on sys.path
from meeple.ai.scrabble import Budget, Choice, Position, StrongPlayer
from meeple.games.rng import Random
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.moves import Move


@dataclass(frozen=True, slots=True)
class Claim:
    method: str
    value: float
    lead: int  # meeple's score minus the engine's at that move


class Noting(StrongPlayer):
    """The strong player, noting its first endgame claim of each game."""

    def __init__(self, lexicon: Lexicon) -> None:
        super().__init__(lexicon)
        self.claim: Claim | None = None
        self.emptied = False

    def choose(
        self, position: Position, budget: Budget, rng: Random | None = None, *, skip: int = 0
    ) -> Choice:
        choice = super().choose(position, budget, rng, skip=skip)
        if position.bag_count == 0 and self.claim is None:
            lead = position.scores[0] - position.scores[1]
            self.claim = Claim(self.last_method, self.last_value, lead)
        if isinstance(choice, Move) and 0 < position.bag_count <= len(choice.tiles):
            self.emptied = True
        return choice


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quackle", required=True)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--think-time", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    lexicon = load_lexicon("enable")
    player = Noting(lexicon)
    bridge = argparse.Namespace(
        quackle=args.quackle,
        lexicon="enable",
        player="speedy",
        quackle_seconds=1,
        think_time=args.think_time,
        cpu_limit=None,
        seed=args.seed,
    )
    engine = ext.LineEngine(ext.bridge_argv(bridge), "quackle-speedy")
    misses: list[float] = []
    exact_misses: list[float] = []
    gains: dict[bool, list[int]] = {True: [], False: []}

    def progress(g: int, outcome: ext.GameOutcome, tally: ext.MatchTally) -> None:
        claim, emptied = player.claim, player.emptied
        player.claim, player.emptied = None, False
        if outcome.bag_empty_spread is not None:
            gains[emptied].append(outcome.spread - outcome.bag_empty_spread)
        line = (
            f"game {g + 1}: {outcome.spread:+d}, bag emptied by {'meeple' if emptied else 'engine'}"
        )
        if claim is not None:
            actual = outcome.spread - claim.lead
            misses.append(actual - claim.value)
            if claim.method == "endgame-exact":
                exact_misses.append(actual - claim.value)
            line += f"; {claim.method} claimed {claim.value:+.0f}, got {actual:+d}"
        print(line, flush=True)

    try:
        tally = ext.run_match(
            engine,
            player,
            lexicon,
            args.games,
            seed=args.seed,
            think_time=args.think_time,
            progress=progress,
        )
    finally:
        engine.close()

    def mean(xs: list[float] | list[int]) -> str:
        return f"{statistics.fmean(xs):+.1f} over {len(xs)}" if xs else "none"

    print(tally.summary("meeple strong", engine.name))
    print(f"actual - claimed: {mean(misses)} games; exact claims {mean(exact_misses)}")
    print(
        f"endgame gain: meeple emptied the bag {mean(gains[True])}, the engine {mean(gains[False])}"
    )


if __name__ == "__main__":
    main()

"""Matches between two players, in process: whole games, alternating who starts.

:func:`play_game` plays one :class:`~meeple.ai.selfplay.SimGame` between two
:class:`~meeple.ai.scrabble.Player` objects; :func:`run_match` plays many and sums
them up in a :class:`MatchResult`, whose :meth:`MatchResult.summary` is the line
``meeple scrabble match`` prints. Clocks and RNGs are passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from meeple.ai.scrabble import Budget, ExchangeChoice, PassChoice, Player, Position
from meeple.ai.selfplay import SCORELESS_TURNS, SimGame
from meeple.games.rng import Random
from meeple.games.scrabble.tiles import ENGLISH, TileSet

__all__ = ["MatchResult", "Tally", "play_game", "run_match", "wilson_interval"]

# A game that has not ended after this many turns is stopped (it cannot happen with
# the six-scoreless-turns rule, but a bug must not hang a match).
MAX_TURNS = 200


@dataclass(slots=True)
class Tally:
    """Wins, losses and draws of A against B, from A's side (any game's match)."""

    name_a: str
    name_b: str
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def win_rate(self) -> float:
        """Wins plus half the draws, over games played."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


@dataclass(slots=True)
class MatchResult(Tally):
    """Games between A and B, from A's side."""

    spread: int = 0
    moves_a: int = 0
    seconds_a: float = 0.0
    spreads: list[int] = field(default_factory=list)

    def summary(self) -> str:
        """``strong v greedy: 312-180-8, win rate 63.2 % (95 % CI 58.9–67.3), mean spread
        +23.1, 0.84 s per move`` (the time is A's mean thinking time per move)."""
        lo, hi = wilson_interval(self.win_rate, self.games)
        mean_spread = self.spread / self.games if self.games else 0.0
        per_move = self.seconds_a / self.moves_a if self.moves_a else 0.0
        return (
            f"{self.name_a} v {self.name_b}: {self.wins}-{self.losses}-{self.draws}, "
            f"win rate {100 * self.win_rate:.1f} % "
            f"(95 % CI {100 * lo:.1f}–{100 * hi:.1f}), "
            f"mean spread {mean_spread:+.1f}, {per_move:.2f} s per move"
        )


def wilson_interval(p: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``p`` observed over ``n`` trials."""
    if n <= 0:
        return 0.0, 1.0
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def play_game(
    players: tuple[Player, Player],
    rng: Random,
    *,
    first: int = 0,
    think_time: float = 1.0,
    clock: Callable[[], float] | None = None,
    max_rounds: int | None = None,
    tile_set: TileSet = ENGLISH,
    timing: list[float] | None = None,
) -> SimGame:
    """Play one game to its end; seat ``i`` is ``players[i]``. Returns the finished game.

    ``timing[i]`` (if given, two floats) accumulates the seconds seat ``i`` thought,
    read from ``clock``.
    """
    game = SimGame.new(rng, tile_set, first=first)
    turns = 0
    while not game.over and turns < MAX_TURNS:
        turns += 1
        p = game.turn
        position = Position(
            game.board,
            game.racks[p],
            len(game.bag),
            tile_set=tile_set,
            exchange_minimum=game.exchange_minimum,
            scores=(game.scores[p], game.scores[1 - p]),
            unseen=game.unseen(p),
            scoreless_turns=game.scoreless,
            scoreless_limit=SCORELESS_TURNS,
        )
        start = clock() if clock is not None else 0.0
        choice = players[p].choose(position, Budget(think_time, clock, max_rounds=max_rounds), rng)
        if timing is not None and clock is not None:
            timing[p] += clock() - start
        if isinstance(choice, PassChoice):
            game.pass_()
        elif isinstance(choice, ExchangeChoice):
            if game.can_exchange(len(choice.tiles)):
                game.exchange(choice.tiles, rng)
            else:
                game.pass_()
        else:
            game.play(choice)
    return game


def run_match(
    players: tuple[Player, Player],
    games: int,
    rng_for_game: Callable[[int], Random],
    *,
    think_time: float = 1.0,
    clock: Callable[[], float] | None = None,
    max_rounds: int | None = None,
    progress: Callable[[int, MatchResult], None] | None = None,
) -> MatchResult:
    """``games`` games, A (``players[0]``) starting the even-numbered ones."""
    result = MatchResult(players[0].name, players[1].name)
    for g in range(games):
        a_seat = 0 if g % 2 == 0 else 1
        seats = (players[0], players[1]) if a_seat == 0 else (players[1], players[0])
        timing = [0.0, 0.0]
        game = play_game(
            seats,
            rng_for_game(g),
            first=0,
            think_time=think_time,
            clock=clock,
            max_rounds=max_rounds,
            timing=timing,
        )
        spread = game.scores[a_seat] - game.scores[1 - a_seat]
        result.spread += spread
        result.spreads.append(spread)
        if spread > 0:
            result.wins += 1
        elif spread < 0:
            result.losses += 1
        else:
            result.draws += 1
        result.seconds_a += timing[a_seat]
        result.moves_a += (game.moves + (a_seat == 0)) // 2
        if progress is not None:
            progress(g + 1, result)
    return result

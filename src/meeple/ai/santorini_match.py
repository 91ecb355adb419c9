"""Santorini matches between two players, in process: whole games, alternating seats.

The players are named (:data:`PLAYERS`): ``random``, ``classic`` (the two-ply player of
:mod:`meeple.ai.santorini`, meeple's player before the search) and the search levels
``easy``, ``medium``, ``hard`` (:data:`meeple.ai.santorini_search.LEVELS`).

:func:`run_match` plays ``games`` games, A in seat 0 (which starts) in the even ones
and in seat 1 in the odd ones. With gods each pair of games (0–1, 2–3, …) draws one
pair of distinct gods: seat 0 gets the first, seat 1 the second, so both players play
both sides of the pairing. Workers are placed by the players' own set-up policy.
The result is a :class:`~meeple.ai.match.MatchResult` line (W-L-D, the Wilson 95 %
interval), with the mean turns per game and A's mean seconds per turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from meeple.ai.match import Tally, wilson_interval
from meeple.ai.santorini import random_action, search_action
from meeple.ai.santorini_search import LEVELS, AlphaBetaPlayer
from meeple.games.santorini import (
    GODS,
    Action,
    ChooseGod,
    ChooseStarter,
    GameState,
    Lose,
    OfferGod,
    Pass,
    Phase,
    Rules,
    advance,
    legal_actions,
    new_game,
)
from meeple.games.santorini.game import can_complete_turn

if TYPE_CHECKING:
    from random import Random

__all__ = [
    "MAX_TURNS",
    "PLAYERS",
    "ClassicPlayer",
    "MatchPlayer",
    "RandomPlayer",
    "SantoriniMatch",
    "make_player",
    "play_game",
    "run_match",
]

MAX_TURNS = 300  # a game still going after this many turns is a draw (a bug must not hang)


class MatchPlayer(Protocol):
    name: str

    def choose(self, s: GameState, rng: Random) -> Action: ...


class ClassicPlayer:
    """meeple's player before the search: :func:`meeple.ai.santorini.search_action`."""

    name = "classic"

    def choose(self, s: GameState, rng: Random) -> Action:
        return search_action(s, rng)


class RandomPlayer:
    name = "random"

    def choose(self, s: GameState, rng: Random) -> Action:
        return random_action(s, rng)


PLAYERS: tuple[str, ...] = ("random", "classic", *LEVELS)


def make_player(
    name: str, *, think_time: float | None = None, clock: Callable[[], float] | None = None
) -> MatchPlayer:
    """The player called ``name`` (:data:`PLAYERS`); ``think_time`` overrides a search
    level's seconds per turn."""
    if name == "random":
        return RandomPlayer()
    if name == "classic":
        return ClassicPlayer()
    if name in LEVELS:
        return AlphaBetaPlayer.at_level(name, clock=clock, think_time=think_time)
    raise ValueError(f"no Santorini player {name!r}; choose from {', '.join(PLAYERS)}")


@dataclass(slots=True)
class SantoriniMatch(Tally):
    """Games between A and B, from A's side."""

    turns: int = 0
    turns_a: int = 0
    seconds_a: float = 0.0
    lengths: list[int] = field(default_factory=list)

    def summary(self) -> str:
        """``hard v classic: 18-2-0, win rate 90.0 % (95 % CI 69.9–97.2), mean plies
        31.4, 0.98 s per move`` (plies are turns; the time is A's per turn)."""
        lo, hi = wilson_interval(self.win_rate, self.games)
        plies = self.turns / self.games if self.games else 0.0
        per_move = self.seconds_a / self.turns_a if self.turns_a else 0.0
        return (
            f"{self.name_a} v {self.name_b}: {self.wins}-{self.losses}-{self.draws}, "
            f"win rate {100 * self.win_rate:.1f} % "
            f"(95 % CI {100 * lo:.1f}–{100 * hi:.1f}), "
            f"mean plies {plies:.1f}, {per_move:.2f} s per move"
        )


def _start(gods: tuple[str, str] | None) -> GameState:
    """A two-player game at the placing of workers, seat 0 to start, ``gods[i]`` seat i's."""
    if gods is None:
        s = new_game(Rules(players=2, gods=False), challenger=1)
    else:
        s = new_game(Rules(players=2, gods=True), challenger=1)
        for action in (OfferGod(1, gods[0]), OfferGod(1, gods[1])):
            s = advance(s, action)[0]
        s = advance(s, ChooseGod(0, gods[0]))[0]
        s = advance(s, ChooseGod(1, gods[1]))[0]
    return advance(s, ChooseStarter(1, 0))[0]


def play_game(
    players: tuple[MatchPlayer, MatchPlayer],
    rng: Random,
    *,
    gods: tuple[str, str] | None = None,
    clock: Callable[[], float] | None = None,
    timing: list[float] | None = None,
    turn_counts: list[int] | None = None,
) -> tuple[int | None, int]:
    """One game, seat ``i`` played by ``players[i]``; returns (winner or None for a draw,
    turns played). ``timing``/``turn_counts`` accumulate each seat's thinking seconds
    (read from ``clock``) and turns."""
    s = _start(gods)
    turns = 0
    while s.phase is not Phase.OVER and turns < MAX_TURNS:
        seat = s.turn
        if s.phase is Phase.PLAY and not s.steps and not can_complete_turn(s):
            s = advance(s, Lose(seat))[0]
            continue
        start = clock() if clock is not None else 0.0
        action = players[seat].choose(s, rng)
        if timing is not None and clock is not None:
            timing[seat] += clock() - start
        if action not in legal_actions(s) and not isinstance(action, Lose):
            raise AssertionError(f"{players[seat].name} chose an illegal {action} in {s}")
        s = advance(s, action)[0]
        if isinstance(action, Pass) or s.phase is Phase.OVER:
            turns += 1
            if turn_counts is not None:
                turn_counts[seat] += 1
    return (s.winner if s.phase is Phase.OVER else None), turns


def run_match(
    players: tuple[MatchPlayer, MatchPlayer],
    games: int,
    rng_for_game: Callable[[int], Random],
    *,
    gods: bool = False,
    clock: Callable[[], float] | None = None,
    progress: Callable[[int, SantoriniMatch], None] | None = None,
) -> SantoriniMatch:
    """``games`` games, A (``players[0]``) in seat 0 (starting) in the even ones."""
    result = SantoriniMatch(players[0].name, players[1].name)
    names = sorted(GODS)
    for g in range(games):
        a_seat = g % 2
        seats = (players[0], players[1]) if a_seat == 0 else (players[1], players[0])
        pair = None
        if gods:
            picker = rng_for_game(g - a_seat)  # the same pair for games 2k and 2k+1
            first, second = picker.sample(names, 2)
            pair = (first, second)
        timing, counts = [0.0, 0.0], [0, 0]
        winner, turns = play_game(
            seats, rng_for_game(g), gods=pair, clock=clock, timing=timing, turn_counts=counts
        )
        if winner is None:
            result.draws += 1
        elif winner == a_seat:
            result.wins += 1
        else:
            result.losses += 1
        result.turns += turns
        result.lengths.append(turns)
        result.turns_a += counts[a_seat]
        result.seconds_a += timing[a_seat]
        if progress is not None:
            progress(g + 1, result)
    return result

"""Random Santorini positions for tests, benchmarks and the training scripts.

One builder instead of the near-copies those had: :func:`started` (a two-player game
at the placing of workers, gods chosen), :func:`placed` (its workers placed at random
cells) and :func:`random_position` (then a number of turns of the players' search at a
small node budget, reproducible from a seeded ``Random``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meeple.games.santorini import (
    CELLS,
    ChooseGod,
    ChooseStarter,
    GameState,
    OfferGod,
    Phase,
    PlaceWorker,
    Rules,
    advance,
    new_game,
)

if TYPE_CHECKING:
    from random import Random

__all__ = ["placed", "random_position", "started"]


def started(gods: tuple[str, str] | None = None, starter: int = 0) -> GameState:
    """A two-player game at the placing of workers: no gods (None) or seat i with
    ``gods[i]``; seat 1 is the challenger, ``starter`` places and moves first."""
    if gods is None:
        s = new_game(Rules(players=2, gods=False), challenger=1)
    else:
        s = new_game(Rules(players=2, gods=True), challenger=1)
        for god in gods:
            s = advance(s, OfferGod(1, god))[0]
        s = advance(s, ChooseGod(0, gods[0]))[0]
        s = advance(s, ChooseGod(1, gods[1]))[0]
    return advance(s, ChooseStarter(1, starter))[0]


def placed(rng: Random, gods: tuple[str, str] | None = None, starter: int = 0) -> GameState:
    """:func:`started`, then every worker on a random free cell (``rng``'s choices)."""
    s = started(gods, starter)
    while s.phase is Phase.PLACE:
        occ = s.occupancy()
        s = advance(s, PlaceWorker(s.turn, rng.choice([c for c in CELLS if occ[c] is None])))[0]
    return s


def random_position(
    rng: Random, plies: int, gods: tuple[str, str] | None = None, nodes: int = 2000
) -> GameState:
    """Random placements by ``rng`` (a seeded ``Random``: the pure layer imports no
    global random), then ``plies`` turns of the players' search at
    ``nodes`` nodes each (deterministic: no clock); stops early rather than play into a
    finished game, so the result is always a turn's start in :attr:`Phase.PLAY`."""
    from meeple.ai.santorini_search import SearchBudget, search_turn

    s = placed(rng, gods)
    for _ in range(plies):
        after = s
        for action in search_turn(s, SearchBudget(max_nodes=nodes)).route:
            after = advance(after, action)[0]
        if after.phase is not Phase.PLAY:
            break
        s = after
    return s

"""Spectrangle players: pure functions from a game to the action to take.

:func:`greedy_action` takes the placement with the best immediate score; without one
it exchanges its highest-valued tile (a tile left in hand costs its value at the end)
while the bag has tiles, else skips. :func:`random_action` picks uniformly among the
legal actions with an injected ``random.Random``. Both only read the game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meeple.games.spectrangle import Action, Exchange, Game, Place, Skip

if TYPE_CHECKING:
    from random import Random

__all__ = ["greedy_action", "random_action"]


def greedy_action(game: Game, player: int) -> Action:
    """The best-scoring placement (ties: lowest field, then hand order), else exchange
    the most valuable tile, else skip. ``player`` must be on turn."""
    if game.turn != player:
        raise ValueError(f"player {player} is not on turn")
    placements = game.legal_placements(player)
    if placements:
        best = max(placements, key=lambda p: p.points)
        return Place(player, best.tile, best.index)
    hand = game.hand(player)
    if hand and game.bag_size:
        return Exchange(player, max(hand, key=lambda t: t.value))
    return Skip(player)


def random_action(game: Game, player: int, rng: Random) -> Action:
    """A uniformly random legal action of ``player``, who must be on turn."""
    actions = game.legal_actions(player)
    if not actions:
        raise ValueError(f"player {player} has no action now")
    return rng.choice(actions)

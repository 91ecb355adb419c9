"""Spectrangle players: pure functions from a game to the action to take.

:func:`greedy_action` takes the placement with the best immediate score; without one
it exchanges its highest-valued tile (a tile left in hand costs its value at the end)
while the bag has tiles, else skips. :func:`random_action` picks uniformly among the
legal actions with an injected ``random.Random``. Both only read the game.
:func:`turn_options` is what a network bot tries in order when the server refuses
its choices, since its own count of the bag may be wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meeple.games.spectrangle import Action, Board, Exchange, Game, Place, Skip, Tile

if TYPE_CHECKING:
    from collections.abc import Sequence
    from random import Random

__all__ = ["greedy_action", "greedy_choice", "random_action", "turn_options"]


def greedy_action(game: Game, player: int) -> Action:
    """The best-scoring placement (ties: lowest field, then hand order), else exchange
    the most valuable tile, else skip. ``player`` must be on turn."""
    if game.turn != player:
        raise ValueError(f"player {player} is not on turn")
    return greedy_choice(game.board, game.hand(player), game.bag_size, player)


def greedy_choice(board: Board, hand: Sequence[Tile], bag_size: int, player: int = 0) -> Action:
    """:func:`greedy_action` from what a client sees: the board, its hand and how many
    tiles the bag still holds (a network client has no :class:`Game`)."""
    placements = board.placements(hand)
    if placements:
        best = max(placements, key=lambda p: p.points)
        return Place(player, best.tile, best.index)
    if hand and bag_size:
        return Exchange(player, max(hand, key=lambda t: t.value))
    return Skip(player)


def turn_options(
    board: Board,
    hand: Sequence[Tile],
    *,
    must_skip: bool = False,
    exchange: bool = True,
    player: int = 0,
) -> list[Action]:
    """Every action worth trying this turn, best first: the placements by score (none
    when the server says the player must skip), then an exchange of the most valuable
    tile, then a skip. A client tries them in order as the server refuses them; it
    offers the exchange whatever its own count of the bag says, because only the
    server knows the bag (a server may keep tiles a client counted as gone). Leave the
    exchange out with ``exchange=False`` (the server said its bag is empty)."""
    placements = [] if must_skip else board.placements(hand)
    placements.sort(key=lambda p: -p.points)  # stable: ties keep field and hand order
    options: list[Action] = [Place(player, p.tile, p.index) for p in placements]
    if hand and exchange:
        options.append(Exchange(player, max(hand, key=lambda t: t.value)))
    options.append(Skip(player))
    return options


def random_action(game: Game, player: int, rng: Random) -> Action:
    """A uniformly random legal action of ``player``, who must be on turn."""
    actions = game.legal_actions(player)
    if not actions:
        raise ValueError(f"player {player} has no action now")
    return rng.choice(actions)

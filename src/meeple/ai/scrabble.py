"""A Scrabble player: the best-scoring play, else an exchange, else a pass.

Pure computation over the engine's move generator, usable by any bot runner on any
protocol: give it what the player can see (board, rack, tiles left in the bag).
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.movegen import legal_moves
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = ["ExchangeChoice", "PassChoice", "choose", "ranked_moves"]


@dataclass(frozen=True, slots=True)
class ExchangeChoice:
    tiles: str


@dataclass(frozen=True, slots=True)
class PassChoice:
    pass


Choice = Move | ExchangeChoice | PassChoice


def ranked_moves(board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet) -> list[Move]:
    """Every legal play, best score first; ties broken by position and word, so stable."""
    moves = legal_moves(board, rack, lexicon, tile_set)
    moves.sort(key=lambda m: (-m.score, m.y, m.x, m.direction.value, m.word))
    return moves


def choose(
    board: Board,
    rack: str,
    lexicon: Lexicon,
    *,
    tile_set: TileSet = ENGLISH,
    bag_count: int,
    exchange_minimum: int = 7,
    skip: int = 0,
) -> Choice:
    """The move to make. ``skip`` passes over the best plays (after the server refused them).

    With no play, exchange the tiles least likely to help (blanks and S are kept) when
    the bag allows it, else pass.
    """
    moves = ranked_moves(board, rack, lexicon, tile_set)
    if skip < len(moves):
        return moves[skip]
    keep = {BLANK, "S"}
    give = "".join(t for t in rack if t not in keep) or rack
    if give and bag_count >= max(exchange_minimum, len(give)):
        return ExchangeChoice(give)
    if rack and bag_count >= max(exchange_minimum, 1):
        return ExchangeChoice(rack[: max(1, min(len(rack), bag_count))])
    return PassChoice()

"""Moves as values: the tiles a play puts down, and the notations that describe them.

A play is, at bottom, a set of new tiles on empty squares (:class:`Placement`).
Protocols describe plays in other ways, and this module turns those into tiles:

- the whole main word from a start square (Twente ``MAKEMOVE WORD``, GCG, CGP tools):
  :func:`tiles_from_word`;
- only the new tiles, laid on the next empty squares from a start square (CMPN402
  ``PLAY``): :func:`tiles_from_new_tiles`;
- explicit ``(letter, x, y)`` triples (Clarkson ``PLACE``): build Placements directly.

:class:`Move` is a play with its main word and score, as move generation returns it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from meeple.games.scrabble.board import Board, Direction, format_gcg_position
from meeple.games.scrabble.errors import NotationError, OffBoard, SquareOccupied
from meeple.games.scrabble.tiles import BLANK

__all__ = ["Move", "Placement", "tiles_from_new_tiles", "tiles_from_word"]


@dataclass(frozen=True, slots=True, order=True)
class Placement:
    """One new tile on a square.

    ``tile`` is ``A``–``Z`` for a letter tile, ``a``–``z`` for a blank standing for that
    letter, or ``?`` for a blank whose letter was not named (which the rules refuse).
    Ordered by row, then column.
    """

    y: int
    x: int
    tile: str

    @property
    def is_blank(self) -> bool:
        return self.tile == BLANK or self.tile.islower()

    @property
    def letter(self) -> str:
        """The letter the tile shows (upper case), ``?`` for an unnamed blank."""
        return self.tile.upper()

    @property
    def rack_tile(self) -> str:
        """The tile as it sits on a rack: ``?`` for any blank."""
        return BLANK if self.is_blank else self.tile


@dataclass(frozen=True, slots=True)
class Move:
    """A scored tile play: the new tiles, the main word they make, and its score.

    ``x, y, direction`` is where the main word starts; ``word`` is the whole main word,
    letters already on the board included, blanks in lower case (GCG style).
    """

    tiles: tuple[Placement, ...]
    x: int
    y: int
    direction: Direction
    word: str
    score: int

    @property
    def position(self) -> str:
        """GCG position: ``8D`` across, ``D8`` down."""
        return format_gcg_position(self.x, self.y, self.direction)

    @property
    def rack_tiles(self) -> str:
        """The tiles the move takes from the rack, ``?`` for blanks, in board order."""
        return "".join(p.rack_tile for p in self.tiles)

    def __str__(self) -> str:
        return f"{self.position} {self.word} {self.score}"


def _check_letters(word: str) -> None:
    if not word or not word.isascii() or not word.isalpha():
        raise NotationError(f"not a word of letters: {word!r}")


def tiles_from_word(
    board: Board, x: int, y: int, direction: Direction, word: str
) -> tuple[Placement, ...]:
    """The new tiles for ``word`` written from ``(x, y)``, letters on the board played through.

    ``word`` is the whole word, blanks in lower case. A letter that differs from the
    tile already on its square raises :class:`SquareOccupied`; a word running off the
    board raises :class:`OffBoard`. The result may be empty (every square taken); the
    rules refuse that as an empty play.
    """
    _check_letters(word)
    dx, dy = direction.step
    end_x, end_y = x + dx * (len(word) - 1), y + dy * (len(word) - 1)
    if not (board.on_board(x, y) and board.on_board(end_x, end_y)):
        raise OffBoard(f"{word} from ({x}, {y}) does not fit on the board")
    placed = []
    for i, c in enumerate(word):
        sx, sy = x + dx * i, y + dy * i
        there = board.tile(sx, sy)
        if there is None:
            placed.append(Placement(sy, sx, c))
        elif there.upper() != c.upper():
            raise SquareOccupied(sx, sy, f"{c.upper()} clashes with {there.upper()} on the board")
    return tuple(placed)


def tiles_from_new_tiles(
    board: Board, x: int, y: int, direction: Direction, tiles: Iterable[str]
) -> tuple[Placement, ...]:
    """New tiles laid from ``(x, y)``: the first on that square, each next on the next empty one.

    This is how CMPN402 describes a play (ERRATA: tiles already on the board are played
    through). The start square must be empty (:class:`SquareOccupied`), and every tile
    must land on the board (:class:`OffBoard`).
    """
    dx, dy = direction.step
    placed = []
    sx, sy = x, y
    if board.on_board(sx, sy) and not board.is_empty_at(sx, sy):
        raise SquareOccupied(sx, sy)
    for tile in tiles:
        while board.on_board(sx, sy) and not board.is_empty_at(sx, sy):
            sx, sy = sx + dx, sy + dy
        if not board.on_board(sx, sy):
            raise OffBoard(f"tile {tile} would fall off the board")
        placed.append(Placement(sy, sx, tile))
        sx, sy = sx + dx, sy + dy
    return tuple(placed)

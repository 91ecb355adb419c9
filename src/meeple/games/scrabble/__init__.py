"""Scrabble as a pure library: board, tiles, rules, scoring, lexicon and move generation."""

from __future__ import annotations

from meeple.games.scrabble import errors
from meeple.games.scrabble.board import (
    BOARD_SIZE,
    CENTRE,
    STANDARD_LAYOUT,
    Board,
    Direction,
    Layout,
    Premium,
    format_gcg_position,
    format_square,
    parse_gcg_position,
    parse_square,
)
from meeple.games.scrabble.errors import *  # noqa: F403  (the error tree is public as a whole)
from meeple.games.scrabble.moves import Move, Placement, tiles_from_new_tiles, tiles_from_word
from meeple.games.scrabble.tiles import BLANK, CLARKSON, ENGLISH, TILE_SETS, TileSet

__all__ = [
    "BLANK",
    "BOARD_SIZE",
    "CENTRE",
    "CLARKSON",
    "ENGLISH",
    "STANDARD_LAYOUT",
    "TILE_SETS",
    "Board",
    "Direction",
    "Layout",
    "Move",
    "Placement",
    "Premium",
    "TileSet",
    "errors",
    "format_gcg_position",
    "format_square",
    "parse_gcg_position",
    "parse_square",
    "tiles_from_new_tiles",
    "tiles_from_word",
]
__all__ += errors.__all__

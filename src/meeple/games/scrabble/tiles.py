"""Tile sets as data: how many of each tile, and what each is worth.

``?`` is the blank. A tile set may also ask for ``random_letters`` extra tiles,
chosen at random per game (the Clarkson RFC §4.2 puts two random letters where the
two blanks would be); :class:`~meeple.games.scrabble.bag.Bag` draws them with the
game's RNG.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["BLANK", "CLARKSON", "ENGLISH", "TILE_SETS", "TileSet"]

BLANK = "?"

_ENGLISH_VALUES = {
    **dict.fromkeys("AEILNORSTU", 1),
    **dict.fromkeys("DG", 2),
    **dict.fromkeys("BCMP", 3),
    **dict.fromkeys("FHVWY", 4),
    "K": 5,
    **dict.fromkeys("JX", 8),
    **dict.fromkeys("QZ", 10),
    BLANK: 0,
}

_ENGLISH_COUNTS = {
    "A": 9, "B": 2, "C": 2, "D": 4, "E": 12, "F": 2, "G": 3, "H": 2, "I": 9,
    "J": 1, "K": 1, "L": 4, "M": 2, "N": 6, "O": 8, "P": 2, "Q": 1, "R": 6,
    "S": 4, "T": 6, "U": 4, "V": 2, "W": 2, "X": 1, "Y": 2, "Z": 1,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TileSet:
    """The tiles a game is played with: counts and values per letter, blank as ``?``."""

    name: str
    counts: Mapping[str, int]
    values: Mapping[str, int]
    random_letters: int = 0
    letters: str = field(default="ABCDEFGHIJKLMNOPQRSTUVWXYZ")

    def value(self, tile: str) -> int:
        """Points for a tile: a rack tile (``?`` for a blank) or a board tile (lower = blank)."""
        if tile.islower() or tile == BLANK:
            return 0
        return self.values[tile]

    @property
    def total(self) -> int:
        """How many tiles the bag starts with, random letters included."""
        return sum(self.counts.values()) + self.random_letters

    @property
    def has_blanks(self) -> bool:
        return self.counts.get(BLANK, 0) > 0


ENGLISH = TileSet(
    name="english",
    counts=MappingProxyType({**_ENGLISH_COUNTS, BLANK: 2}),
    values=MappingProxyType(_ENGLISH_VALUES),
)

# Clarkson RFC §4.2: the 98 letter tiles, no blanks, 2 letters drawn at random per game.
CLARKSON = TileSet(
    name="clarkson",
    counts=MappingProxyType(dict(_ENGLISH_COUNTS)),
    values=MappingProxyType(_ENGLISH_VALUES),
    random_letters=2,
)

TILE_SETS: Mapping[str, TileSet] = MappingProxyType({t.name: t for t in (ENGLISH, CLARKSON)})

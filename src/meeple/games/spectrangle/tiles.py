"""Spectrangle tiles: three coloured sides and a value, their notation and rotation.

A tile is written ``XYZn`` (ERRATA, Spectrangle): ``X`` the colour of the flat side
(the base of the triangle), ``Y`` and ``Z`` the next sides going clockwise, ``n`` the
points (1–6). ``W`` (white) is the joker colour: it matches every colour.

Rotating a tile moves every side one place clockwise, so ``XYZn`` becomes ``ZXYn``
(ERRATA); a player may place any of a tile's three rotations. :data:`TILE_SET` holds
the 36 tiles of the game, each written as the ERRATA lists it; a hand holds tiles in
that form, and :meth:`Tile.same_piece` tells whether a placed rotation is that tile.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from meeple.games.spectrangle.errors import NotationError

__all__ = [
    "TILE_SET",
    "Colour",
    "Tile",
    "tile_set",
]

_TILE_RE = re.compile(r"[RGBYPW]{3}[1-6]")


class Colour(enum.Enum):
    """A side's colour; the value is its letter on the wire."""

    RED = "R"
    GREEN = "G"
    BLUE = "B"
    YELLOW = "Y"
    PURPLE = "P"
    WHITE = "W"

    def matches(self, other: Colour) -> bool:
        """True when a side of this colour may touch a side of ``other`` (white: any)."""
        return self is other or self is Colour.WHITE or other is Colour.WHITE


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile in one rotation: ``sides`` = (X, Y, Z) clockwise from the flat side."""

    sides: tuple[Colour, Colour, Colour]
    value: int

    def __post_init__(self) -> None:
        if not 1 <= self.value <= 6:
            raise NotationError(f"a tile is worth 1–6 points, not {self.value}")

    @classmethod
    def parse(cls, text: str) -> Tile:
        """``RGB4`` (any letter case) to a tile; raise :class:`NotationError` otherwise."""
        code = text.strip().upper()
        if not _TILE_RE.fullmatch(code):
            raise NotationError(f"not a tile: {text!r}")
        x, y, z = (Colour(c) for c in code[:3])
        return cls((x, y, z), int(code[3]))

    @classmethod
    def is_notation(cls, text: str) -> bool:
        """True when ``text`` reads as a tile (the check :meth:`parse` makes)."""
        return _TILE_RE.fullmatch(text.upper()) is not None

    def __str__(self) -> str:
        return "".join(c.value for c in self.sides) + str(self.value)

    @property
    def code(self) -> str:
        """The tile's notation, ``XYZn``."""
        return str(self)

    def rotated(self) -> Tile:
        """The next rotation: ``XYZn`` → ``ZXYn`` (ERRATA)."""
        x, y, z = self.sides
        return Tile((z, x, y), self.value)

    def rotations(self) -> tuple[Tile, ...]:
        """The distinct rotations, this one first (one for ``RRR``, three for ``RGB``)."""
        found = [self]
        turned = self.rotated()
        while turned != self:
            found.append(turned)
            turned = turned.rotated()
        return tuple(found)

    def same_piece(self, other: Tile) -> bool:
        """True when ``other`` is this tile in some rotation."""
        return other in self.rotations()


def tile_set(codes: Iterable[str]) -> tuple[Tile, ...]:
    """Tiles from their codes (``"RRR6"``, ...), in order."""
    return tuple(Tile.parse(code) for code in codes)


# The 36 tiles, as listed in ERRATA (Spectrangle), grouped by value.
TILE_SET: tuple[Tile, ...] = tile_set(
    [f"{c}6" for c in ("RRR", "BBB", "GGG", "YYY", "PPP")]
    + [f"{c}5" for c in ("RRY", "RRP", "BBR", "BBP", "GGR", "GGB", "YYG", "YYB", "PPY", "PPG")]
    + [f"{c}4" for c in ("RRB", "RRG", "BBG", "BBY", "GGY", "GGP", "YYR", "YYP", "PPR", "PPB")]
    + [f"{c}3" for c in ("YBP", "RGY", "BGP", "GRB")]
    + [f"{c}2" for c in ("BRP", "YPR", "YPG")]
    + [f"{c}1" for c in ("GRP", "BYG", "RYB", "WWW")]
)

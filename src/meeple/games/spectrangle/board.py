"""The Spectrangle board: 36 triangular fields, their neighbours, bonuses and placement.

Geometry (ERRATA, Spectrangle): six rows of 1, 3, 5, 7, 9 and 11 fields; field
``(r, k)`` (row ``r`` = 0–5 from the top, ``k`` = 0–2r from the left) has index
``r*r + k``; fields with even ``k`` point up, odd ``k`` point down::

    row 0                  0
    row 1               1  2  3
    row 2            4  5  6  7  8
    row 3         9 10 11 12 13 14 15
    row 4     16 17 18 19 20 21 22 23 24
    row 5  25 26 27 28 29 30 31 32 33 34 35

Every field has three edges (:class:`Edge`): the horizontal ``BASE`` (the bottom of an
up field, the top of a down field) and the slanted ``LEFT`` and ``RIGHT``. Across the
base an up field ``(r, k)`` touches the down field ``(r+1, k+1)`` below it, and a down
field ``(r, k)`` the up field ``(r-1, k-1)`` above it; across left and right it touches
``(r, k-1)`` and ``(r, k+1)``. Fields on the rim lack some neighbours.

Which side of a tile lies on which edge: a tile ``XYZn`` lies with its flat side ``X``
on the field's base and ``Y``, ``Z`` following clockwise, as a physical tile does. Going
clockwise round an up field from its base gives base, left, right; round a down field
(the tile turned upside down) base, right, left. So::

    up field:    X → BASE (bottom)   Y → LEFT    Z → RIGHT
    down field:  X → BASE (top)      Y → RIGHT   Z → LEFT

The transcript ``spectrangle-3p-game.log`` bears this out: ``RBB5`` on up field 1 next
to ``GGB5`` on down field 2 matches blue to blue only under this mapping, and every
score announced there is reproduced by the tests.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from meeple.games.spectrangle.errors import (
    BonusFieldFirst,
    ColourMismatch,
    FieldOccupied,
    NoSuchField,
    NotTouching,
)
from meeple.games.spectrangle.tiles import Colour, Tile

__all__ = [
    "BONUSES",
    "FIELD_COUNT",
    "NEIGHBOURS",
    "ROWS",
    "SIDE_ON_EDGE",
    "Board",
    "Edge",
    "Orientation",
    "Placement",
    "coordinates",
    "field_index",
    "orientation",
]

ROWS = 6
FIELD_COUNT = ROWS * ROWS  # rows of 1, 3, ..., 11 fields: 36 in all


class Orientation(enum.Enum):
    """Which way a field's triangle points."""

    UP = "up"
    DOWN = "down"


class Edge(enum.Enum):
    """An edge of a field: the horizontal base, or a slanted side."""

    BASE = "base"
    LEFT = "left"
    RIGHT = "right"

    @property
    def opposite(self) -> Edge:
        """The neighbour's edge that lies against this one (base on base, left on right)."""
        return _OPPOSITE[self]


_OPPOSITE = {Edge.BASE: Edge.BASE, Edge.LEFT: Edge.RIGHT, Edge.RIGHT: Edge.LEFT}


def coordinates(index: int) -> tuple[int, int]:
    """Field index to ``(row, k)``; raise :class:`NoSuchField` off the board."""
    if not 0 <= index < FIELD_COUNT:
        raise NoSuchField(index)
    row = 0
    while (row + 1) * (row + 1) <= index:
        row += 1
    return row, index - row * row


def field_index(row: int, k: int) -> int:
    """``(row, k)`` to the field index ``row*row + k`` (ERRATA)."""
    if not (0 <= row < ROWS and 0 <= k <= 2 * row):
        raise NoSuchField(row * row + k)
    return row * row + k


def orientation(index: int) -> Orientation:
    """Up for even ``k``, down for odd ``k`` (ERRATA)."""
    _, k = coordinates(index)
    return Orientation.UP if k % 2 == 0 else Orientation.DOWN


def _neighbours(index: int) -> Mapping[Edge, int]:
    row, k = coordinates(index)
    found: dict[Edge, int] = {}
    if k > 0:
        found[Edge.LEFT] = field_index(row, k - 1)
    if k < 2 * row:
        found[Edge.RIGHT] = field_index(row, k + 1)
    if k % 2 == 0:
        if row + 1 < ROWS:
            found[Edge.BASE] = field_index(row + 1, k + 1)
    else:
        found[Edge.BASE] = field_index(row - 1, k - 1)
    return MappingProxyType(found)


# NEIGHBOURS[i] maps each edge of field i that has a field beyond it to that field.
NEIGHBOURS: tuple[Mapping[Edge, int], ...] = tuple(_neighbours(i) for i in range(FIELD_COUNT))

# SIDE_ON_EDGE[orientation][edge]: which of the tile's sides (0 = X, 1 = Y, 2 = Z) lies
# on that edge of a field (see the module docstring for why).
SIDE_ON_EDGE: Mapping[Orientation, Mapping[Edge, int]] = MappingProxyType(
    {
        Orientation.UP: MappingProxyType({Edge.BASE: 0, Edge.LEFT: 1, Edge.RIGHT: 2}),
        Orientation.DOWN: MappingProxyType({Edge.BASE: 0, Edge.RIGHT: 1, Edge.LEFT: 2}),
    }
)

# Bonus multipliers (ERRATA): x2 on 10, 14, 30; x3 on 2, 26, 34; x4 on 11, 13, 20.
BONUSES: Mapping[int, int] = MappingProxyType(
    {10: 2, 14: 2, 30: 2, 2: 3, 26: 3, 34: 3, 11: 4, 13: 4, 20: 4}
)

_ORIENTATIONS = tuple(orientation(i) for i in range(FIELD_COUNT))


def _colour_on(tile: Tile, index: int, edge: Edge) -> Colour:
    return tile.sides[SIDE_ON_EDGE[_ORIENTATIONS[index]][edge]]


@dataclass(frozen=True, slots=True)
class Placement:
    """A tile (in the rotation it lies in) on a field, with the points it scores there."""

    tile: Tile
    index: int
    points: int


class Board:
    """The tiles on the 36 fields. Mutable for speed; :meth:`copy` gives an independent board.

    :meth:`check` validates a placement and returns its points, :meth:`place` puts a
    tile down after checking; :meth:`placements` lists every legal placement of a hand.
    """

    __slots__ = ("_fields",)

    def __init__(self) -> None:
        self._fields: list[Tile | None] = [None] * FIELD_COUNT

    def copy(self) -> Board:
        other = Board()
        other._fields = self._fields.copy()
        return other

    def tile(self, index: int) -> Tile | None:
        """The tile on a field, in the rotation it was placed in, or None."""
        coordinates(index)
        return self._fields[index]

    @property
    def is_empty(self) -> bool:
        """True before the first tile."""
        return all(t is None for t in self._fields)

    def tiles(self) -> Iterator[tuple[int, Tile]]:
        """Every tile on the board as ``(index, tile)``, by index."""
        for i, t in enumerate(self._fields):
            if t is not None:
                yield i, t

    def state(self) -> tuple[str | None, ...]:
        """The board as one comparable value: each field's tile code, or None."""
        return tuple(None if t is None else t.code for t in self._fields)

    def touching(self, index: int) -> int:
        """How many tiles share an edge with the field."""
        return sum(self._fields[n] is not None for n in NEIGHBOURS[index].values())

    def check(self, tile: Tile, index: int) -> int:
        """The points ``tile`` (as rotated) scores on field ``index``; raise a RuleError if
        the placement is illegal.

        ERRATA: the first tile may not go on a bonus field; every later tile touches at
        least one tile and matches every side it touches (white matches all); the score
        is value × bonus × max(1, touching sides).
        """
        coordinates(index)
        if self._fields[index] is not None:
            raise FieldOccupied(index)
        touching = 0
        for edge, other in NEIGHBOURS[index].items():
            neighbour = self._fields[other]
            if neighbour is None:
                continue
            touching += 1
            mine = _colour_on(tile, index, edge)
            theirs = _colour_on(neighbour, other, edge.opposite)
            if not mine.matches(theirs):
                raise ColourMismatch(index, other, mine.value, theirs.value)
        if self.is_empty:
            if index in BONUSES:
                raise BonusFieldFirst(index)
        elif touching == 0:
            raise NotTouching(index)
        return tile.value * BONUSES.get(index, 1) * max(1, touching)

    def is_legal(self, tile: Tile, index: int) -> bool:
        try:
            self.check(tile, index)
        except (FieldOccupied, ColourMismatch, BonusFieldFirst, NotTouching, NoSuchField):
            return False
        return True

    def place(self, tile: Tile, index: int) -> int:
        """Check the placement, put the tile down and return its points."""
        points = self.check(tile, index)
        self._fields[index] = tile
        return points

    def put(self, tile: Tile, index: int) -> None:
        """Put a tile down without any check (for setting up positions in tests and tools)."""
        coordinates(index)
        self._fields[index] = tile

    def candidate_fields(self) -> list[int]:
        """The empty fields a tile could go on at all: any non-bonus field on an empty
        board, else empty fields that touch a tile."""
        if self.is_empty:
            return [i for i in range(FIELD_COUNT) if i not in BONUSES]
        return [
            i
            for i in range(FIELD_COUNT)
            if self._fields[i] is None
            and any(self._fields[n] is not None for n in NEIGHBOURS[i].values())
        ]

    def placements(self, hand: Iterable[Tile]) -> list[Placement]:
        """Every legal placement of the tiles in ``hand``, each rotation separately,
        ordered by field, then hand order, then rotation."""
        tiles = list(hand)
        found: list[Placement] = []
        for index in self.candidate_fields():
            for held in tiles:
                for turned in held.rotations():
                    try:
                        points = self.check(turned, index)
                    except ColourMismatch:
                        continue
                    found.append(Placement(turned, index, points))
        return found

    def has_placement(self, hand: Iterable[Tile]) -> bool:
        """True when some tile of ``hand`` fits somewhere (cheaper than :meth:`placements`)."""
        tiles = list(hand)
        for index in self.candidate_fields():
            for held in tiles:
                for turned in held.rotations():
                    if self.is_legal(turned, index):
                        return True
        return False

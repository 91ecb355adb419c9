"""The Santorini board: 25 cells as integers, neighbours, the perimeter and directions.

A cell is an ``int`` 0–24, ``row * 5 + column`` with rows and columns 0–4 (the AM27
ERRATA counts from 0 as well). :func:`cell` and :func:`coordinates` convert; the
tables here are computed once so move generation only indexes tuples.

A cell's building is its ``level`` (0–3 blocks) plus whether a dome sits on top; the
dome is written as level :data:`DOME` (4) when a build or a query names what goes on
a cell, as AM27 does (``levelList`` ``[4, 0]`` is a dome on the ground).
"""

from __future__ import annotations

__all__ = [
    "CELLS",
    "DOME",
    "MAX_LEVEL",
    "NEIGHBOURS",
    "PERIMETER",
    "SIZE",
    "Cell",
    "behind",
    "cell",
    "coordinates",
    "is_perimeter",
]

SIZE = 5
MAX_LEVEL = 3  # the highest block level; a worker that moves up onto it wins
DOME = 4  # what a build names to put a dome on a cell (any level, with Atlas)

Cell = int
"""A cell index, ``row * 5 + column``."""

CELLS: tuple[Cell, ...] = tuple(range(SIZE * SIZE))


def cell(row: int, column: int) -> Cell:
    """The cell at ``row``, ``column`` (both 0–4); ValueError off the board."""
    if not (0 <= row < SIZE and 0 <= column < SIZE):
        raise ValueError(f"({row}, {column}) is off the 5×5 board")
    return row * SIZE + column


def coordinates(c: Cell) -> tuple[int, int]:
    """``(row, column)`` of a cell."""
    return divmod(c, SIZE)


def _neighbours(c: Cell) -> tuple[Cell, ...]:
    r, k = divmod(c, SIZE)
    return tuple(
        (r + dr) * SIZE + k + dk
        for dr in (-1, 0, 1)
        for dk in (-1, 0, 1)
        if (dr or dk) and 0 <= r + dr < SIZE and 0 <= k + dk < SIZE
    )


NEIGHBOURS: tuple[tuple[Cell, ...], ...] = tuple(_neighbours(c) for c in CELLS)
"""The up to 8 cells around each cell, in reading order."""

PERIMETER: frozenset[Cell] = frozenset(
    c for c in CELLS if divmod(c, SIZE)[0] in (0, SIZE - 1) or divmod(c, SIZE)[1] in (0, SIZE - 1)
)
"""The 16 cells on the board's edge (Hera, Hestia, Triton)."""


def is_perimeter(c: Cell) -> bool:
    return c in PERIMETER


def behind(src: Cell, dst: Cell) -> Cell | None:
    """The cell one step further from ``src`` through ``dst`` (straight on), or None
    off the board. ``src`` and ``dst`` must be neighbours (Minotaur's push)."""
    r1, k1 = divmod(src, SIZE)
    r2, k2 = divmod(dst, SIZE)
    r3, k3 = 2 * r2 - r1, 2 * k2 - k1
    if 0 <= r3 < SIZE and 0 <= k3 < SIZE:
        return r3 * SIZE + k3
    return None

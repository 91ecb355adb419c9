"""What a Santorini player sees, as plain data: no engine, no protocol.

The shape follows the AM27 ``UPDATE`` message (spec 4.1.1, ERRATA): for each changed
cell its ``levelList`` (levels top first, ``4`` a dome: ``[3, 2, 1, 0]`` is a tower of
three, ``[4, 0]`` a dome on the ground), the optional worker (owner and sex), the
active player, each worker's reachable cells and buildable cells (with the heights
it may build there), and the ``canPlaceWorker`` / ``canPass`` / ``canUndo`` flags.
Rows and columns are 0–4.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["DOME", "SIZE", "Cell", "SantoriniView", "Square", "Worker"]

SIZE = 5
DOME = 4  # the levelList entry that stands for a dome (ERRATA)
Square = tuple[int, int]  # (row, column), 0-4


@dataclass(frozen=True, slots=True)
class Worker:
    """A worker on a cell: its owner's name and ``M`` or ``F``."""

    owner: str
    sex: str


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell: how many building blocks (0–3), a dome or not, the worker on top."""

    height: int = 0
    dome: bool = False
    worker: Worker | None = None

    @classmethod
    def from_level_list(cls, levels: Iterable[int], worker: Worker | None = None) -> Cell:
        """From an AM27 ``levelList`` (top first; 4 = dome); raise ValueError if malformed."""
        found = list(levels)
        if any(not 0 <= level <= DOME for level in found):
            raise ValueError(f"not a level list: {found}")
        blocks = [level for level in found if level < DOME]
        return cls(max(blocks, default=0), DOME in found, worker)


@dataclass(frozen=True)
class SantoriniView:
    """One player's view of a Santorini game at one moment."""

    me: str
    players: tuple[str, ...] = ()
    gods: Mapping[str, str] = field(default_factory=dict)
    cells: tuple[Cell, ...] = (Cell(),) * (SIZE * SIZE)
    active: str | None = None
    reachable: Mapping[Square, frozenset[Square]] = field(default_factory=dict)
    buildable: Mapping[Square, Mapping[Square, tuple[int, ...]]] = field(default_factory=dict)
    can_place_worker: bool = False
    can_pass: bool = False
    can_undo: bool = False
    winner: str | None = None

    def cell(self, row: int, column: int) -> Cell:
        return self.cells[row * SIZE + column]

    @property
    def my_turn(self) -> bool:
        return self.active == self.me and self.winner is None

    def with_cells(self, changes: Iterable[tuple[Square, Cell]]) -> SantoriniView:
        """The view with the given cells replaced (an UPDATE's ``boardUpdate``)."""
        cells = list(self.cells)
        for (row, column), cell in changes:
            if not (0 <= row < SIZE and 0 <= column < SIZE):
                raise ValueError(f"not a cell: {(row, column)}")
            cells[row * SIZE + column] = cell
        return replace(self, cells=tuple(cells))

    @classmethod
    def from_rows(
        cls, me: str, rows: Iterable[str], *, players: tuple[str, ...] = (), **fields: Any
    ) -> SantoriniView:
        """A view from five rows of five cells, for tests and tools.

        A cell is its height ``0``–``3``, then ``D`` for a dome, then optionally a
        worker as the owner's initial in upper case (``M``) or lower case (``F``),
        separated by spaces: ``"0 1 2A 3D 0b"``. Initials are matched to ``players``.
        """
        by_initial = {name[0].upper(): name for name in players}
        cells: list[Cell] = []
        lines = list(rows)
        if len(lines) != SIZE:
            raise ValueError(f"{SIZE} rows needed")
        for line in lines:
            texts = line.split()
            if len(texts) != SIZE:
                raise ValueError(f"{SIZE} cells needed in {line!r}")
            for text in texts:
                height, rest = int(text[0]), text[1:]
                dome = rest.startswith("D")
                rest = rest[1:] if dome else rest
                worker = None
                if rest:
                    owner = by_initial[rest.upper()]
                    worker = Worker(owner, "M" if rest.isupper() else "F")
                cells.append(Cell(height, dome, worker))
        return cls(me=me, players=players, cells=tuple(cells), **fields)

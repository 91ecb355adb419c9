"""The Scrabble board: its geometry and premium squares, the tiles on it, and coordinates.

Coordinates inside meeple are 0-based ``(x, y)``: ``x`` the column (A = 0), ``y`` the
row (1 = 0). The notations players and protocols use convert to and from that:

- GCG (``8D`` across, ``D8`` down), as in Macondo, Quackle and wolges;
- a square as column letter + row (``H8``), as the Twente protocol writes it;
- 1-based row and column, as CMPN402 sends them (done in that protocol).

A tile on the board is one character: ``A``–``Z`` for a letter tile, ``a``–``z`` for a
blank standing for that letter (the CGP and GCG convention).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from meeple.games.scrabble.errors import NotationError

__all__ = [
    "BOARD_SIZE",
    "CENTRE",
    "STANDARD_LAYOUT",
    "Board",
    "Direction",
    "Layout",
    "Premium",
    "format_gcg_position",
    "format_square",
    "parse_gcg_position",
    "parse_square",
]

BOARD_SIZE = 15
CENTRE = (7, 7)
EMPTY = "."


class Premium(enum.IntEnum):
    """A square's premium. The values are the Clarkson RFC's modifier codes (§3.11)."""

    NONE = 0
    DOUBLE_LETTER = 1
    TRIPLE_LETTER = 2
    DOUBLE_WORD = 3
    TRIPLE_WORD = 4

    @property
    def letter_multiplier(self) -> int:
        return _LETTER_MULTIPLIERS[self]

    @property
    def word_multiplier(self) -> int:
        return _WORD_MULTIPLIERS[self]


# By Premium value (NONE, DL, TL, DW, TW): read on every scored square.
_LETTER_MULTIPLIERS = (1, 2, 3, 1, 1)
_WORD_MULTIPLIERS = (1, 1, 1, 2, 3)


class Direction(enum.Enum):
    """The direction a word runs in."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    ACROSS = "across"
    DOWN = "down"

    @property
    def step(self) -> tuple[int, int]:
        """``(dx, dy)`` from one square of a word to the next."""
        return (1, 0) if self is Direction.ACROSS else (0, 1)

    @property
    def other(self) -> Direction:
        return Direction.DOWN if self is Direction.ACROSS else Direction.ACROSS


_PREMIUM_CODES = {
    ".": Premium.NONE,
    "l": Premium.DOUBLE_LETTER,
    "L": Premium.TRIPLE_LETTER,
    "w": Premium.DOUBLE_WORD,
    "W": Premium.TRIPLE_WORD,
}
_PREMIUM_LETTERS = {premium: code for code, premium in _PREMIUM_CODES.items()}


@dataclass(frozen=True, slots=True)
class Layout:
    """A board's size, premium squares and the square the first play must cover."""

    size: int
    premiums: tuple[tuple[Premium, ...], ...]  # indexed [y][x]
    centre: tuple[int, int]

    @classmethod
    def from_rows(cls, rows: Iterable[str], centre: tuple[int, int] | None = None) -> Layout:
        """Build a layout from rows of ``.`` (none), ``l`` DL, ``L`` TL, ``w`` DW, ``W`` TW."""
        grid = tuple(tuple(_PREMIUM_CODES[c] for c in row) for row in rows)
        size = len(grid)
        if any(len(row) != size for row in grid):
            raise ValueError("a layout must be square")
        return cls(size, grid, centre or (size // 2, size // 2))

    def rows(self) -> list[str]:
        """The premiums as :meth:`from_rows` reads them (its inverse)."""
        return ["".join(_PREMIUM_LETTERS[p] for p in row) for row in self.premiums]

    def premium(self, x: int, y: int) -> Premium:
        return self.premiums[y][x]

    def on_board(self, x: int, y: int) -> bool:
        return 0 <= x < self.size and 0 <= y < self.size


# The standard 15x15 layout; the centre star is a double-word square.
STANDARD_LAYOUT = Layout.from_rows(
    [
        "W..l...W...l..W",
        ".w...L...L...w.",
        "..w...l.l...w..",
        "l..w...l...w..l",
        "....w.....w....",
        ".L...L...L...L.",
        "..l...l.l...l..",
        "W..l...w...l..W",
        "..l...l.l...l..",
        ".L...L...L...L.",
        "....w.....w....",
        "l..w...l...w..l",
        "..w...l.l...w..",
        ".w...L...L...w.",
        "W..l...W...l..W",
    ]
)


class Board:
    """The tiles on the board. Mutable for speed; :meth:`copy` gives an independent board.

    Call :meth:`tile` to read a square, :meth:`place` and :meth:`remove` to change it;
    the rules engine does both, so most callers only read.
    """

    __slots__ = ("_cells", "layout")

    def __init__(self, layout: Layout = STANDARD_LAYOUT) -> None:
        self.layout = layout
        self._cells = [EMPTY] * (layout.size * layout.size)

    @classmethod
    def from_rows(cls, rows: Iterable[str], layout: Layout = STANDARD_LAYOUT) -> Board:
        """A board from rows of tile characters, ``.`` (or space) for an empty square."""
        board = cls(layout)
        rows = list(rows)
        if len(rows) != layout.size or any(len(r) != layout.size for r in rows):
            raise NotationError(f"a board needs {layout.size} rows of {layout.size} squares")
        for y, row in enumerate(rows):
            for x, c in enumerate(row):
                if c in ". ":
                    continue
                if not (c.isascii() and c.isalpha()):
                    raise NotationError(f"not a tile: {c!r}")
                board._cells[y * layout.size + x] = c
        return board

    @property
    def size(self) -> int:
        return self.layout.size

    def copy(self) -> Board:
        other = Board(self.layout)
        other._cells = self._cells.copy()
        return other

    def tile(self, x: int, y: int) -> str | None:
        """The tile on a square (``a``–``z`` for a blank), or None when it is empty."""
        c = self._cells[y * self.layout.size + x]
        return None if c == EMPTY else c

    def is_empty_at(self, x: int, y: int) -> bool:
        return self._cells[y * self.layout.size + x] == EMPTY

    def on_board(self, x: int, y: int) -> bool:
        return self.layout.on_board(x, y)

    @property
    def is_empty(self) -> bool:
        """True before the first play."""
        return self._cells.count(EMPTY) == len(self._cells)  # C speed, on every play

    def place(self, x: int, y: int, tile: str) -> None:
        self._cells[y * self.layout.size + x] = tile

    def remove(self, x: int, y: int) -> None:
        self._cells[y * self.layout.size + x] = EMPTY

    def tiles(self) -> Iterator[tuple[int, int, str]]:
        """Every tile on the board as ``(x, y, tile)``, row by row."""
        size = self.layout.size
        for i, c in enumerate(self._cells):
            if c != EMPTY:
                yield i % size, i // size, c

    def rows(self) -> list[str]:
        """The board as rows of tile characters with ``.`` for empty squares."""
        size = self.layout.size
        return ["".join(self._cells[y * size : (y + 1) * size]) for y in range(size)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.layout == other.layout and self._cells == other._cells

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return "Board.from_rows([\n" + "".join(f"    {r!r},\n" for r in self.rows()) + "])"

    def __str__(self) -> str:
        return "\n".join(self.rows())


def _column_letter(x: int) -> str:
    return chr(ord("A") + x)


def parse_square(text: str, size: int = BOARD_SIZE) -> tuple[int, int]:
    """``H8`` (column letter, then row from 1) to ``(x, y)``; raise NotationError if off."""
    t = text.strip().upper()
    if len(t) < 2 or not ("A" <= t[0] <= "Z") or not t[1:].isdigit() or not t[1:].isascii():
        raise NotationError(f"not a square: {text!r}")
    x, y = ord(t[0]) - ord("A"), int(t[1:]) - 1
    if not (0 <= x < size and 0 <= y < size):
        raise NotationError(f"square off the board: {text!r}")
    return x, y


def format_square(x: int, y: int) -> str:
    """``(x, y)`` to ``H8`` style."""
    return f"{_column_letter(x)}{y + 1}"


def parse_gcg_position(text: str, size: int = BOARD_SIZE) -> tuple[int, int, Direction]:
    """GCG position to ``(x, y, direction)``: ``8D`` is across from D8, ``D8`` is down."""
    t = text.strip().upper()
    if not t or not t.isascii() or not t.isalnum():
        raise NotationError(f"not a position: {text!r}")
    if t[0].isdigit():
        digits = t.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        letter, direction = t[len(digits) :], Direction.ACROSS
    else:
        letter, digits, direction = t[:1], t[1:], Direction.DOWN
    if len(letter) != 1 or not digits.isdigit():
        raise NotationError(f"not a position: {text!r}")
    x, y = ord(letter) - ord("A"), int(digits) - 1
    if not (0 <= x < size and 0 <= y < size):
        raise NotationError(f"position off the board: {text!r}")
    return x, y, direction


def format_gcg_position(x: int, y: int, direction: Direction) -> str:
    """``(x, y, direction)`` to GCG: row first for across (``8D``), column first for down."""
    if direction is Direction.ACROSS:
        return f"{y + 1}{_column_letter(x)}"
    return f"{_column_letter(x)}{y + 1}"

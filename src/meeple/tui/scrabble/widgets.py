"""Textual widgets for Scrabble: the board (with placement by keyboard and mouse) and the rack.

:class:`BoardView` shows the board as players know it: premium squares in their usual
colours (TW red, DW pink, TL blue, DL light blue, the centre star), tiles in wheat,
blanks as a lower-case letter in a paler tile, and the tiles being placed in green.

Placing tiles: click a square (or move the cursor with the arrow keys), type letters;
each goes on the cursor's square if the rack holds it (else a blank stands for it) and
the cursor moves on, over tiles already there. ``?`` then a letter places a blank on
purpose. The cursor shows (an arrow for the direction) while the board has the focus
(F2, or a click). Space (or a second click on the same square) turns the direction between
across and down, Backspace takes back the last tile, Escape takes back all, Enter
submits. The widget posts :class:`BoardView.Submitted` with the placements and
:class:`BoardView.Problem` when a key cannot be honoured; the app turns the placements
into a move.
"""

from __future__ import annotations

from collections import Counter

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive

from meeple.games.scrabble.board import Board, Direction, Premium, format_square
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet
from meeple.tui.widgets import BoardWidget

__all__ = ["BoardView", "rack_text"]

CELL = 3  # characters per square
LABEL = 3  # the row-number margin

_PREMIUM = {
    Premium.TRIPLE_WORD: ("TW", Style(color="white", bgcolor="#b3261e", bold=True)),
    Premium.DOUBLE_WORD: ("DW", Style(color="black", bgcolor="#f2a7b5")),
    Premium.TRIPLE_LETTER: ("TL", Style(color="white", bgcolor="#2f5fb3", bold=True)),
    Premium.DOUBLE_LETTER: ("DL", Style(color="black", bgcolor="#a9d3f0")),
}
_PLAIN = Style(color="#6f9f86", bgcolor="#1f5b42")
_TILE = Style(color="black", bgcolor="#ecd08a", bold=True)
_BLANK_TILE = Style(color="#7a4b00", bgcolor="#f6ead0", italic=True)
_PENDING = Style(color="black", bgcolor="#7ed37e", bold=True)
_CURSOR = Style(reverse=True)
_LABEL_STYLE = Style(color="#9aa0a6")
_ARROWS = {Direction.ACROSS: "→", Direction.DOWN: "↓"}


def rack_text(rack: str, pending: str = "", tile_set: TileSet = ENGLISH) -> Text:
    """The rack as tiles with their values (``?`` for a blank); tiles in ``pending`` dimmed."""
    text = Text()
    left = Counter(pending)
    for tile in rack:
        style = _BLANK_TILE if tile == BLANK else _TILE
        if left[tile] > 0:
            left[tile] -= 1
            style = Style(color="#777777", bgcolor="#333333")
        text.append(f" {tile}{_subscript(tile_set.value(tile))} ", style)
        text.append(" ")
    return text


def _subscript(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


class BoardView(BoardWidget):
    """The board, and the player's tiles being placed on it."""

    DEFAULT_CSS = """
    BoardView { width: 48; height: 16; }
    """

    cursor: reactive[tuple[int, int]] = reactive((7, 7))
    direction: reactive[Direction] = reactive(Direction.ACROSS)

    class Submitted(Message):
        """Enter was pressed with tiles placed."""

        def __init__(self, placements: tuple[Placement, ...]) -> None:
            self.placements = placements
            super().__init__()

    class Changed(Message):
        """The placed tiles changed (the app dims them on the rack)."""

    class Problem(Message):
        """A key could not be honoured (no such tile, nothing to submit ...)."""

        def __init__(self, text: str) -> None:
            self.text = text
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.board = Board()
        self.rack = ""
        self.pending: dict[tuple[int, int], str] = {}
        self._blank_next = False

    # --- state from the app ---------------------------------------------------------------

    def show(self, board: Board, rack: str) -> None:
        """Show a new board and rack; placed tiles that no longer fit are taken back."""
        self.board = board
        self.rack = rack
        self.pending = {sq: t for sq, t in self.pending.items() if board.is_empty_at(*sq)}
        if Counter(self.pending_rack_tiles()) - Counter(rack):
            self.pending = {}
        self.refresh()

    def clear_pending(self) -> None:
        had = bool(self.pending)
        self.pending = {}
        self._blank_next = False
        self.refresh()
        if had:
            self.post_message(self.Changed())

    def pending_rack_tiles(self) -> str:
        """The rack tiles the placed tiles use (``?`` for blanks)."""
        return "".join(BLANK if t.islower() else t for t in self.pending.values())

    def placements(self) -> tuple[Placement, ...]:
        return tuple(sorted(Placement(y, x, t) for (x, y), t in self.pending.items()))

    # --- drawing --------------------------------------------------------------------------

    def render(self) -> Text:
        size = self.board.size
        text = Text(" " * LABEL, style=_LABEL_STYLE)
        for x in range(size):
            text.append(f" {chr(ord('A') + x)} ", _LABEL_STYLE)
        for y in range(size):
            text.append("\n")
            text.append(f"{y + 1:>2} ", _LABEL_STYLE)
            for x in range(size):
                label, style = self._cell(x, y)
                if (x, y) == self.cursor and self.has_focus:
                    style = style + _CURSOR
                text.append(label, style)
        return text

    def _cell(self, x: int, y: int) -> tuple[str, Style]:
        tile = self.board.tile(x, y)
        if tile is not None:
            return f" {tile} ", _BLANK_TILE if tile.islower() else _TILE
        pending = self.pending.get((x, y))
        if pending is not None:
            return f" {pending} ", _PENDING
        if (x, y) == self.cursor and self.has_focus:
            return f" {_ARROWS[self.direction]} ", _PLAIN
        if (x, y) == self.board.layout.centre:
            return " ★ ", _PREMIUM[Premium.DOUBLE_WORD][1]
        premium = self.board.layout.premium(x, y)
        if premium in _PREMIUM:
            label, style = _PREMIUM[premium]
            return f"{label} ", style
        return " · ", _PLAIN

    def watch_direction(self) -> None:
        self.refresh()

    # --- input ----------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        x, y = (event.x - LABEL) // CELL, event.y - 1
        if not (event.x >= LABEL and self.board.on_board(x, y)):
            return
        self.focus()
        if (x, y) == self.cursor:
            self.direction = self.direction.other
        else:
            self.cursor = (x, y)

    def on_key(self, event: events.Key) -> None:
        handled = True
        x, y = self.cursor
        moves = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
        if event.key in moves:
            dx, dy = moves[event.key]
            if self.board.on_board(x + dx, y + dy):
                self.cursor = (x + dx, y + dy)
        elif event.key == "space":
            self.direction = self.direction.other
        elif event.key == "backspace":
            self._take_back()
        elif event.key == "escape":
            if self.pending:
                self.cursor = next(iter(self.pending))  # back where the placing began
            self.clear_pending()
        elif event.key == "enter":
            if self.pending:
                self.post_message(self.Submitted(self.placements()))
            else:
                self.post_message(self.Problem("no tiles placed: type letters on the board"))
        elif event.character == "?":
            self._blank_next = True
        elif (
            event.character is not None and event.character.isascii() and event.character.isalpha()
        ):
            self._type(event.character.upper())
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()

    def _type(self, letter: str) -> None:
        x, y = self.cursor
        if not self.board.is_empty_at(x, y):
            self.post_message(self.Problem(f"{format_square(x, y)} is taken"))
            return
        left = Counter(self.rack) - Counter(self.pending_rack_tiles())
        if self._blank_next or left[letter] == 0:
            if left[BLANK] == 0:
                self.post_message(self.Problem(f"no {letter} (and no blank) left on your rack"))
                self._blank_next = False
                return
            letter = letter.lower()
        self._blank_next = False
        self.pending[(x, y)] = letter
        self._advance()
        self.refresh()
        self.post_message(self.Changed())

    def _advance(self) -> None:
        dx, dy = self.direction.step
        x, y = self.cursor
        x, y = x + dx, y + dy
        while self.board.on_board(x, y) and not self.board.is_empty_at(x, y):
            x, y = x + dx, y + dy
        if self.board.on_board(x, y):
            self.cursor = (x, y)

    def _take_back(self) -> None:
        if not self.pending:
            return
        square = next(reversed(self.pending))  # dicts keep the order tiles were placed in
        del self.pending[square]
        self.cursor = square
        self.refresh()
        self.post_message(self.Changed())

"""Textual widgets for Spectrangle: the triangle board and the hand.

:class:`TriangleBoard` draws the 36 fields in six rows (1, 3, ..., 11), each field two
lines high: an up field as its value (or index) between two slants over its base, a
down field upside down. A tile's three sides are drawn in their colours (the base bar is side X, the
slants Y and Z as the engine lays them, see :mod:`meeple.games.spectrangle.board`);
an empty field shows its index, bonus fields (×2, ×3, ×4) are tinted. The cursor
field is drawn reversed; while a hand tile is selected it shows that tile there as a
preview, green when the placement is legal and red when not.

Keys on the board: arrows move between fields, 1–4 pick a hand tile, ``r`` rotates
it, Enter places it on the cursor field, ``x`` exchanges it, ``s`` skips. A click on
a field moves the cursor there; a click on a hand tile picks it, a second click on
the picked tile rotates it.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from meeple.games.spectrangle.board import (
    BONUSES,
    ROWS,
    SIDE_ON_EDGE,
    Board,
    Edge,
    Orientation,
    coordinates,
    field_index,
    orientation,
)
from meeple.games.spectrangle.tiles import Colour, Tile
from meeple.tui.widgets import BoardWidget

__all__ = ["FIELD_WIDTH", "HandView", "TriangleBoard", "field_at", "tile_text"]

FIELD_WIDTH = 6
BOARD_WIDTH = FIELD_WIDTH * (2 * ROWS - 1)

COLOURS = {
    Colour.RED: "#e53935",
    Colour.GREEN: "#43a047",
    Colour.BLUE: "#1e88e5",
    Colour.YELLOW: "#fdd835",
    Colour.PURPLE: "#8e24aa",
    Colour.WHITE: "#f5f5f5",
}
_BONUS_BG = {2: "#3a3a10", 3: "#4a2a05", 4: "#501020"}
_EMPTY = Style(color="#6b6b6b")
_SLASH = "\u2571"  # box-drawing diagonals: the slanted sides of a field
_BACKSLASH = "\u2572"
_LEGAL = "#1b5e20"
_ILLEGAL = "#7f0000"


_COMMAND_KEYS = {"r": "rotate", "enter": "place", "x": "exchange", "s": "skip"}


def _indent(row: int) -> int:
    return FIELD_WIDTH * (ROWS - 1 - row)


def field_at(x: int, y: int) -> int | None:
    """The field under widget cell ``(x, y)``, or None."""
    row = y // 2
    if not 0 <= row < ROWS:
        return None
    k, rest = divmod(x - _indent(row), FIELD_WIDTH)
    if x < _indent(row) or not 0 <= k <= 2 * row or rest < 0:
        return None
    return field_index(row, k)


def _side(tile: Tile, index: int, edge: Edge) -> Style:
    colour = tile.sides[SIDE_ON_EDGE[orientation(index)][edge]]
    return Style(color=COLOURS[colour], bold=True)


def _field_lines(
    index: int, tile: Tile | None, bg: str | None, centre_style: Style | None = None
) -> tuple[Text, Text]:
    """The two lines of one field, ``FIELD_WIDTH`` characters each."""
    up = orientation(index) is Orientation.UP
    background = Style(bgcolor=bg) if bg else Style()
    if tile is None:
        label = f"{index:>2}"
        base = left = right = _EMPTY
        centre = _EMPTY
    else:
        bonus = BONUSES.get(index)
        label = f"{tile.value}{'²³⁴'[bonus - 2] if bonus else ' '}"
        base = _side(tile, index, Edge.BASE)
        left = _side(tile, index, Edge.LEFT)
        right = _side(tile, index, Edge.RIGHT)
        centre = Style(bold=True)
    if centre_style is not None:
        centre = centre + centre_style
    top, bottom = Text(), Text()
    if up:
        top.append(" ")
        top.append(_SLASH, left + background)
        top.append(label, centre + background)
        top.append(_BACKSLASH, right + background)
        top.append(" ")
        bottom.append(_SLASH, left + background)
        bottom.append("▁▁▁▁", base + background)
        bottom.append(_BACKSLASH, right + background)
    else:
        top.append(_BACKSLASH, left + background)
        top.append("▔▔▔▔", base + background)
        top.append(_SLASH, right + background)
        bottom.append(" ")
        bottom.append(_BACKSLASH, left + background)
        bottom.append(label, centre + background)
        bottom.append(_SLASH, right + background)
        bottom.append(" ")
    return top, bottom


def tile_text(tile: Tile) -> Text:
    """A tile as its code with each side letter in its colour: ``RGB4``."""
    text = Text()
    for colour in tile.sides:
        text.append(colour.value, Style(color=COLOURS[colour], bold=True))
    text.append(str(tile.value), Style(bold=True))
    return text


class TriangleBoard(BoardWidget):
    """The board, a cursor field, and a preview of the selected tile on it."""

    DEFAULT_CSS = f"""
    TriangleBoard {{ width: {BOARD_WIDTH}; height: {2 * ROWS}; }}
    """

    cursor: reactive[int] = reactive(0)

    class Command(Message):
        """A key for the hand on the board: ``pick`` (with ``slot``), ``rotate``,
        ``place``, ``exchange`` or ``skip``; the app acts on it."""

        def __init__(self, action: str, slot: int = 0) -> None:
            self.action = action
            self.slot = slot
            super().__init__()

    class Clicked(Message):
        """A field was clicked (the cursor is already on it)."""

        def __init__(self, index: int) -> None:
            self.index = index
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.board = Board()
        self.preview: Tile | None = None

    def show(self, board: Board, preview: Tile | None) -> None:
        self.board = board
        self.preview = preview
        self.refresh()

    def render(self) -> Text:
        text = Text()
        for row in range(ROWS):
            top, bottom = Text(" " * _indent(row)), Text(" " * _indent(row))
            for k in range(2 * row + 1):
                index = field_index(row, k)
                tile = self.board.tile(index)
                bonus = BONUSES.get(index)
                bg = _BONUS_BG[bonus] if bonus else None
                centre: Style | None = None
                if index == self.cursor and self.has_focus:
                    centre = Style(reverse=True)
                    if tile is None and self.preview is not None:
                        tile = self.preview
                        bg = _LEGAL if self.board.is_legal(self.preview, index) else _ILLEGAL
                a, b = _field_lines(index, tile, bg, centre)
                top.append_text(a)
                bottom.append_text(b)
            text.append_text(top)
            text.append("\n")
            text.append_text(bottom)
            if row < ROWS - 1:
                text.append("\n")
        return text

    def on_click(self, event: events.Click) -> None:
        index = field_at(event.x, event.y)
        if index is None:
            return
        self.focus()
        self.cursor = index
        self.post_message(self.Clicked(index))

    def on_key(self, event: events.Key) -> None:
        row, k = coordinates(self.cursor)
        target: tuple[int, int] | None = None
        if event.key == "left" and k > 0:
            target = (row, k - 1)
        elif event.key == "right" and k < 2 * row:
            target = (row, k + 1)
        elif event.key == "up" and row > 0:
            target = (row - 1, min(max(k - 1, 0), 2 * (row - 1)))
        elif event.key == "down" and row < ROWS - 1:
            target = (row + 1, k + 1)
        command: TriangleBoard.Command | None = None
        if event.character in ("1", "2", "3", "4"):
            command = self.Command("pick", int(event.character) - 1)
        elif event.key in _COMMAND_KEYS:
            command = self.Command(_COMMAND_KEYS[event.key])
        if target is not None:
            self.cursor = field_index(*target)
        elif command is not None:
            self.post_message(command)
        else:
            return
        event.stop()
        event.prevent_default()


class HandView(Widget):
    """Our four tiles; the selected one (in its current rotation) marked."""

    DEFAULT_CSS = """
    HandView { height: 1; width: 1fr; }
    """

    class Picked(Message):
        """Slot ``slot`` (0-based) was clicked."""

        def __init__(self, slot: int) -> None:
            self.slot = slot
            super().__init__()

    SLOT_WIDTH = 9

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tiles: tuple[Tile, ...] = ()
        self.selected: int | None = None

    def show(self, tiles: tuple[Tile, ...], selected: int | None) -> None:
        self.tiles = tiles
        self.selected = selected
        self.refresh()

    def render(self) -> Text:
        text = Text()
        for slot, tile in enumerate(self.tiles):
            mark = Style(reverse=True) if slot == self.selected else Style()
            text.append(f"{slot + 1}:", mark)
            text.append_text(tile_text(tile))
            text.append("   ")
        if not self.tiles:
            text.append("(no tiles)", _EMPTY)
        return text

    def on_click(self, event: events.Click) -> None:
        slot = event.x // self.SLOT_WIDTH
        if 0 <= slot < len(self.tiles):
            self.post_message(self.Picked(slot))

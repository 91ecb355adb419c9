"""The Santorini board widget: levels as shades, domes, workers in their owners' colours.

Each cell is 9 characters by 3 lines: the building height as a shade (ground green,
then lighter to darker stone for levels 1–3) with ``▁▂▃`` steps, a dome as a blue
cap, and the worker as its owner's initial (``♂``/``♀`` for the sex) in the owner's
colour. While a worker is selected, the cells it can reach are marked ``•`` and the
cells it can build on ``+`` (from the view's reachable and buildable maps).

Keys: arrows move the cursor, Enter (or a click) picks the cursor cell; the widget
posts :class:`SantoriniBoard.Picked` and the app decides what that means.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive

from meeple.tui.santorini.view import SIZE, Cell, SantoriniView, Square
from meeple.tui.widgets import BoardWidget

__all__ = ["CELL_HEIGHT", "CELL_WIDTH", "PLAYER_COLOURS", "SantoriniBoard"]

CELL_WIDTH = 9
CELL_HEIGHT = 3
LABEL = 3
PLAYER_COLOURS = ("#d32f2f", "#1565c0", "#6a1b9a")
_GROUND = ("#2e7d32", "#e0e0e0", "#b0b0b0", "#808080")  # level 0-3 backgrounds
_STEPS = ("", "▁", "▂", "▃")
_DOME = Style(color="white", bgcolor="#1e4fa3", bold=True)
_LABEL = Style(color="#9aa0a6")


class SantoriniBoard(BoardWidget):
    """The 5×5 board of a :class:`SantoriniView`, with a cursor and a selected worker."""

    DEFAULT_CSS = f"""
    SantoriniBoard {{ width: {LABEL + CELL_WIDTH * SIZE}; height: {1 + CELL_HEIGHT * SIZE}; }}
    """

    cursor: reactive[Square] = reactive((2, 2))

    class Picked(Message):
        """The player picked a cell (Enter or a click)."""

        def __init__(self, square: Square) -> None:
            self.square = square
            super().__init__()

    def __init__(self, view: SantoriniView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view
        self.selected: Square | None = None

    def show(self, view: SantoriniView, selected: Square | None) -> None:
        self.view = view
        self.selected = selected
        self.refresh()

    def _colour(self, owner: str) -> str:
        players = self.view.players
        index = players.index(owner) if owner in players else len(players)
        return PLAYER_COLOURS[index % len(PLAYER_COLOURS)]

    def render(self) -> Text:
        text = Text(" " * LABEL)
        for column in range(SIZE):
            text.append(f"{column:^{CELL_WIDTH}}", _LABEL)
        reach = self.view.reachable.get(self.selected, frozenset()) if self.selected else ()
        build = self.view.buildable.get(self.selected, {}) if self.selected else {}
        for row in range(SIZE):
            for line in range(CELL_HEIGHT):
                text.append("\n")
                text.append(f"{row:>2} " if line == 1 else " " * LABEL, _LABEL)
                for column in range(SIZE):
                    square = (row, column)
                    mark = "•" if square in reach else "+" if square in build else " "
                    text.append_text(self._line(square, self.view.cell(row, column), line, mark))
        return text

    def _line(self, square: Square, cell: Cell, line: int, mark: str) -> Text:
        background = _GROUND[cell.height]
        ink = "black" if cell.height else "#a5d6a7"
        base = Style(color=ink, bgcolor=background)
        if square == self.cursor and self.has_focus:
            base = base + Style(reverse=True)
        if square == self.selected:
            base = base + Style(underline=True)
        out = Text()
        if line == 0:
            label = f"L{cell.height}" if cell.height else ""
            out.append(f"{mark}{label:<7}{mark}", base)
        elif line == 1:
            if cell.dome:
                out.append(" ", base)
                out.append("  ◖◗  ", _DOME)
                out.append("  ", base)
            elif cell.worker is not None:
                owner = Style(color=self._colour(cell.worker.owner), bold=True, bgcolor=background)
                if square == self.cursor and self.has_focus:
                    owner = owner + Style(reverse=True)
                sex = "♂" if cell.worker.sex.upper() == "M" else "♀"
                out.append("   ", base)
                out.append(f"{cell.worker.owner[:1].upper()}{sex}", owner)
                out.append("    ", base)
            else:
                out.append(" " * CELL_WIDTH, base)
        else:
            step = _STEPS[cell.height] * 7
            out.append(f"{mark}{step:<7}{mark}", base)
        return out

    def on_click(self, event: events.Click) -> None:
        row, column = (event.y - 1) // CELL_HEIGHT, (event.x - LABEL) // CELL_WIDTH
        if event.x < LABEL or event.y < 1 or not (0 <= row < SIZE and 0 <= column < SIZE):
            return
        self.focus()
        self.cursor = (row, column)
        self.post_message(self.Picked((row, column)))

    def on_key(self, event: events.Key) -> None:
        row, column = self.cursor
        steps = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0)}
        if event.key in steps:
            dr, dc = steps[event.key]
            if 0 <= row + dr < SIZE and 0 <= column + dc < SIZE:
                self.cursor = (row + dr, column + dc)
        elif event.key == "enter":
            self.post_message(self.Picked(self.cursor))
        else:
            return
        event.stop()
        event.prevent_default()

"""The Santorini screen: board, players and gods, whose turn, what may be done, a log.

It draws :class:`~meeple.tui.santorini.view.SantoriniView` values given to
:meth:`SantoriniApp.show` and records the cells the player picks: picking one of
the active player's workers selects it (its reachable and buildable cells light
up); picking another cell is appended to :attr:`SantoriniApp.picks` as
``(worker, cell)`` for the protocol adapter to turn into a move, build or
placement. No adapter exists yet (no engine or AM27 client on this branch).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, RichLog, Static

from meeple.tui.santorini.view import SantoriniView, Square
from meeple.tui.santorini.widgets import PLAYER_COLOURS, SantoriniBoard

__all__ = ["SantoriniApp"]


class SantoriniApp(App[None]):
    """A Santorini screen over a view; see the module docstring for what is wired."""

    TITLE = "meeple · Santorini"
    CSS = """
    #main { height: 1fr; }
    #board-box { width: 52; height: 19; border: round $primary; }
    #side { width: 1fr; }
    #status { height: 2; padding: 0 1; }
    #players { height: auto; padding: 0 1; }
    #log { height: 1fr; border: round $secondary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit")]

    def __init__(self, view: SantoriniView) -> None:
        super().__init__()
        self.view = view
        self.selected: Square | None = None
        self.picks: list[tuple[Square | None, Square]] = []

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="")
        with Horizontal(id="main"):
            with Vertical(id="board-box"):
                yield SantoriniBoard(self.view, id="board")
            with Vertical(id="side"):
                yield Static(id="status")
                yield Static(id="players")
                yield RichLog(id="log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#board-box").border_title = "board"
        self.query_one("#log", RichLog).border_title = "log"
        self.query_one(SantoriniBoard).focus()
        self._redraw()

    def show(self, view: SantoriniView) -> None:
        """Draw a new view (after each UPDATE); a selection that is gone is dropped."""
        self.view = view
        if self.selected is not None and view.reachable.get(self.selected) is None:
            self.selected = None
        self._redraw()

    def log_line(self, text: str) -> None:
        self.query_one("#log", RichLog).write(text)

    @on(SantoriniBoard.Picked)
    def _picked(self, event: SantoriniBoard.Picked) -> None:
        cell = self.view.cell(*event.square)
        if cell.worker is not None and cell.worker.owner == self.view.me:
            self.selected = event.square
        else:
            self.picks.append((self.selected, event.square))
        self._redraw()

    def _redraw(self) -> None:
        v = self.view
        self.query_one(SantoriniBoard).show(v, self.selected)
        self.query_one("#status", Static).update(self._status())
        players = Text()
        for i, name in enumerate(v.players):
            mark = "▶ " if name == v.active else "  "
            colour = PLAYER_COLOURS[i % len(PLAYER_COLOURS)]
            players.append(mark)
            players.append(name, f"bold {colour}")
            players.append(" (you)" if name == v.me else "")
            players.append(f"  {v.gods.get(name, 'Atheist')}\n")
        self.query_one("#players", Static).update(players)

    def _status(self) -> Text:
        v = self.view
        if v.winner is not None:
            return Text(f"Game over: {v.winner} wins", style="bold")
        if not v.my_turn:
            return Text(f"{v.active}'s turn" if v.active else "Waiting …")
        can = [
            what
            for what, flag in (
                ("place a worker", v.can_place_worker),
                ("pass", v.can_pass),
                ("undo", v.can_undo),
            )
            if flag
        ]
        extra = f" (you may {', '.join(can)})" if can else ""
        return Text(f"Your turn: pick a worker, then a cell{extra}", style="bold green")

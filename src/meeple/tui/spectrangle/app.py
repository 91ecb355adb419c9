"""The Spectrangle terminal app: triangle board, hands, scores, turn, log and chat.

Construct it with a connector and the options (``meeple play spectrangle`` does), then
``run()``. Moves come from the command line (``place RGB4 on 11``, ``skip``,
``exchange RGB4``, ``say ...``, with completion of keywords and hand tiles) or from the
board: pick a hand tile (1–4 or a click), rotate it (``r`` or a second click), move
the cursor (arrows or a click; the preview turns green where the tile fits), Enter.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, RichLog, Static

from meeple.games.spectrangle.tiles import Tile
from meeple.tui.app import TableApp
from meeple.tui.connection import (
    Connection,
    ConnectOptions,
)
from meeple.tui.spectrangle.events import (
    ExchangeTile,
    PlaceTile,
    SkipTurn,
    SpectrangleEvent,
    SpectrangleMove,
)
from meeple.tui.spectrangle.notation import USAGE, CommandSuggester, parse_command
from meeple.tui.spectrangle.table import Phase, Table
from meeple.tui.spectrangle.widgets import BOARD_WIDTH, HandView, TriangleBoard, tile_text

__all__ = ["SpectrangleApp"]

SpectrangleConnection = Connection[SpectrangleEvent, SpectrangleMove]


class SpectrangleApp(TableApp[SpectrangleEvent, SpectrangleMove]):
    """One human player's Spectrangle client."""

    TITLE = "meeple · Spectrangle"
    CSS = f"""
    #main {{ height: 1fr; }}
    #board-box {{ width: {BOARD_WIDTH + 4}; height: 16; border: round $primary; }}
    #board-box:focus-within {{ border: round $accent; }}
    #side {{ width: 1fr; }}
    #status {{ height: 2; padding: 0 1; }}
    #scores {{ height: auto; padding: 0 1; }}
    #hand-row {{ height: 1; padding: 0 1; margin: 1 0 0 0; }}
    #hand-label {{ width: 6; }}
    #moves {{ height: 1fr; border: round $secondary; }}
    #chat {{ height: 1fr; border: round $secondary; }}
    #message {{ height: 1; padding: 0 1; }}
    #message.error {{ color: $error; }}
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit"),
        Binding("f2", "focus_board", "Board"),
        Binding("f3", "focus_command", "Command"),
    ]

    USAGE = USAGE
    table: Table

    def __init__(self, connector: Any, options: ConnectOptions, *, protocol: str = "") -> None:
        super().__init__(connector, options, Table(name=options.name), protocol=protocol)
        self.selected: int | None = None
        self.rotation = 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="")
        with Horizontal(id="main"):
            with Vertical(id="board-box"):
                yield TriangleBoard(id="board")
            with Vertical(id="side"):
                yield Static(id="status")
                yield Static(id="scores")
                with Horizontal(id="hand-row"):
                    yield Static("hand", id="hand-label")
                    yield HandView(id="hand")
                yield RichLog(id="moves", wrap=True, markup=False)
                yield RichLog(id="chat", wrap=True, markup=False)
        yield Static(id="message")
        yield Input(
            placeholder="place RGB4 on 11 · skip · exchange RGB4 · say hi",
            suggester=CommandSuggester(lambda: self.table.hand),
            id="command",
        )
        yield Footer()

    def _apply(self, event: SpectrangleEvent) -> None:
        hand_before = self.table.hand
        super()._apply(event)
        if self.table.hand != hand_before:
            self.selected, self.rotation = None, 0

    def _parse(self, text: str) -> SpectrangleMove:
        return parse_command(text)

    def selected_tile(self) -> Tile | None:
        """The picked hand tile in its current rotation."""
        hand = self.table.hand
        if self.selected is None or self.selected >= len(hand):
            return None
        tile = hand[self.selected]
        for _ in range(self.rotation):
            tile = tile.rotated()
        return tile

    def _pick(self, slot: int) -> None:
        if slot >= len(self.table.hand):
            self._say(f"there is no tile {slot + 1} in your hand", error=True)
            return
        if self.selected == slot:
            self.rotation = (self.rotation + 1) % 3
        else:
            self.selected, self.rotation = slot, 0
        tile = self.selected_tile()
        self._say(f"{tile}: r rotates, arrows or a click choose the field, Enter places")
        self._redraw()

    @on(TriangleBoard.Command)
    async def _board_command(self, event: TriangleBoard.Command) -> None:
        if event.action == "pick":
            self._pick(event.slot)
            return
        if event.action == "skip":
            await self.send_move(SkipTurn())
            return
        tile = self.selected_tile()
        if tile is None:
            self._say("pick a tile first: 1-4, or click it in your hand", error=True)
            return
        if event.action == "rotate":
            self.rotation = (self.rotation + 1) % 3
            self._say(f"{self.selected_tile()}: r rotates, Enter places it on the cursor field")
            self._redraw()
        elif event.action == "exchange":
            await self.send_move(ExchangeTile(tile))
        elif event.action == "place":
            board = self.query_one(TriangleBoard)
            await self.send_move(PlaceTile(tile, board.cursor))

    @on(HandView.Picked)
    def _hand_clicked(self, event: HandView.Picked) -> None:
        self._pick(event.slot)
        self.query_one(TriangleBoard).focus()

    def action_focus_board(self) -> None:
        self.query_one(TriangleBoard).focus()

    # --- drawing --------------------------------------------------------------------------

    def _redraw(self) -> None:
        t = self.table
        self.query_one(TriangleBoard).show(t.board, self.selected_tile())
        self.query_one(HandView).show(t.hand, self.selected)
        self.query_one("#status", Static).update(self._status())
        scores = Text()
        for player in t.order or ((t.name,) if t.name else ()):
            mark = "▶ " if player == t.turn else "  "
            you = " (you)" if player == t.name else ""
            style = "bold" if player == t.turn else ""
            scores.append(f"{mark}{player}{you}".ljust(16), style)
            scores.append(f"{t.scores.get(player, 0):>4}  ", style)
            if player != t.name:
                for tile in t.hands.get(player, ()):
                    scores.append_text(tile_text(tile))
                    scores.append(" ")
            scores.append("\n")
        self.query_one("#scores", Static).update(scores)

    def _status(self) -> Text:
        t = self.table
        if t.phase is Phase.CONNECTING:
            return Text(f"Connecting to {self.options.host}:{self.options.port} …")
        if t.phase is Phase.QUEUED:
            if t.queue:
                return Text(f"Waiting for players; in the queue: {', '.join(t.queue)}")
            return Text("Waiting for a game …")
        if t.phase is Phase.OVER:
            if t.result is None:
                return Text("Game over: a player left (no scores)", style="bold")
            return Text(f"Game over. {t.result_line()}", style="bold")
        if t.phase is Phase.CLOSED:
            return Text(f"Disconnected: {t.closed_reason}", style="bold red")
        if t.my_turn and t.must_skip:
            return Text(
                "No tile of yours fits: skip (s) or exchange a tile (x)", style="bold yellow"
            )
        if t.my_turn:
            return Text("Your turn: type a move, or pick a tile (F2, 1-4)", style="bold green")
        return Text(f"{t.turn}'s turn" if t.turn else "Game on")

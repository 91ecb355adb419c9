"""The Scrabble terminal app: board, rack, scores, turn, move log and chat, over any protocol.

Construct it with a connector and the options (``meeple play scrabble`` does), then
``run()``. The app connects on start, applies every event to its
:class:`~meeple.tui.scrabble.table.Table` and redraws. Moves come from the command
line (:mod:`~meeple.tui.scrabble.notation`, with completion) or from tiles placed on
the board (:class:`~meeple.tui.scrabble.widgets.BoardView`); every refusal, local or
from the server, is shown in words on the line above the command input.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input, RichLog, Static

from meeple.games.scrabble.board import format_gcg_position
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.rules import validate_play
from meeple.tui.app import TableApp
from meeple.tui.connection import (
    Connection,
    ConnectOptions,
)
from meeple.tui.scrabble.events import (
    AnswerChallenge,
    ChallengeOffered,
    Clocks,
    PlayWord,
    Say,
    ScrabbleEvent,
    ScrabbleMove,
)
from meeple.tui.scrabble.notation import USAGE, CommandSuggester, parse_command
from meeple.tui.scrabble.table import Phase, Table
from meeple.tui.scrabble.widgets import BoardView, rack_text

__all__ = ["ScrabbleApp", "format_ms"]

logger = logging.getLogger(__name__)

ScrabbleConnection = Connection[ScrabbleEvent, ScrabbleMove]
PLACEHOLDERS = {
    "twente": "H8 across WORD · 8H WORD · swap ABC · pass · say hi",
    "cmpn402": "H8 across WORD · 8H WORD · swap ABC · pass · challenge · accept",
}
TICK = 0.2  # seconds between redraws of running clocks and of the challenge countdown


def format_ms(ms: float) -> str:
    """``9:58``: minutes and seconds, rounded up as countdowns are (0:00 only at the end)."""
    seconds = max(0, math.ceil(ms / 1000))
    return f"{seconds // 60}:{seconds % 60:02d}"


class ScrabbleApp(TableApp[ScrabbleEvent, ScrabbleMove]):
    """One human player's Scrabble client."""

    TITLE = "meeple · Scrabble"
    CSS = """
    Screen { layout: vertical; }
    #main { height: 1fr; }
    #board-box { width: 50; height: 18; border: round $primary; }
    #board-box:focus-within { border: round $accent; }
    #side { width: 1fr; }
    #status { height: 2; padding: 0 1; }
    #clocks { height: 1; padding: 0 1; }
    #scores { height: auto; padding: 0 1; }
    #rack { height: 1; padding: 0 1; margin: 1 0 0 0; }
    #moves { height: 1fr; border: round $secondary; }
    #chat { height: 1fr; border: round $secondary; }
    #message { height: 1; padding: 0 1; }
    #message.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit"),
        Binding("f2", "focus_board", "Board"),
        Binding("f3", "focus_command", "Command"),
        Binding("f5", "challenge(True)", "Challenge", show=False),
        Binding("f6", "challenge(False)", "Let it stand", show=False),
    ]

    USAGE = USAGE
    table: Table

    def __init__(
        self,
        connector: Any,
        options: ConnectOptions,
        *,
        protocol: str = "twente",
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(connector, options, Table(name=options.name), protocol=protocol)
        self.now = now  # for the countdowns; tests pass a fixed clock
        self._clocks_at = 0.0
        self._challenge_at = 0.0
        self.protocol = protocol

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="")
        with Horizontal(id="main"):
            with Vertical(id="board-box"):
                yield BoardView(id="board")
            with Vertical(id="side"):
                yield Static(id="status")
                yield Static(id="clocks")
                yield Static(id="scores")
                yield Static(id="rack")
                yield RichLog(id="moves", wrap=True, markup=False)
                yield RichLog(id="chat", wrap=True, markup=False)
        yield Static(id="message")
        yield Input(
            placeholder=PLACEHOLDERS.get(self.protocol, PLACEHOLDERS["twente"]),
            suggester=CommandSuggester(),
            id="command",
        )
        yield Footer()

    def _mounted(self) -> None:
        self.set_interval(TICK, self._tick)

    def _apply(self, event: ScrabbleEvent) -> None:
        super()._apply(event)
        if isinstance(event, Clocks):
            self._clocks_at = self.now()
        elif isinstance(event, ChallengeOffered):
            self._challenge_at = self.now()

    def _parse(self, text: str) -> ScrabbleMove:
        return parse_command(text)

    def _typed(self, move: ScrabbleMove) -> None:
        if not isinstance(move, Say):
            self.query_one(BoardView).clear_pending()

    @on(BoardView.Submitted)
    async def _placed(self, event: BoardView.Submitted) -> None:
        try:
            play = validate_play(self.table.board, event.placements)
        except ScrabbleError as e:
            self._say(f"not a play: {e}", error=True)
            return
        main = play.main_word
        if await self.send_move(PlayWord(main.x, main.y, main.direction, main.text)):
            self.query_one(BoardView).clear_pending()

    @on(BoardView.Changed)
    def _placing(self) -> None:
        self._redraw_rack()

    @on(BoardView.Problem)
    def _problem(self, event: BoardView.Problem) -> None:
        self._say(event.text, error=True)

    async def action_challenge(self, challenge: bool) -> None:
        """F5 / F6: challenge the play offered, or let it stand."""
        if self.table.challenge is None:
            self._say("there is no play to challenge now", error=True)
            return
        await self.send_move(AnswerChallenge(challenge))

    def action_focus_board(self) -> None:
        self.query_one(BoardView).focus()

    # --- drawing --------------------------------------------------------------------------

    def _redraw(self) -> None:
        t = self.table
        board = self.query_one(BoardView)
        board.show(t.board, t.rack)
        self.query_one("#status", Static).update(self._status())
        self._redraw_clocks()
        scores = Text()
        for player in t.players or ((t.name,) if t.name else ()):
            mark = "▶ " if player == t.turn else "  "
            gone = " (left)" if player in t.left else ""
            you = " (you)" if player == t.name else ""
            style = "bold" if player == t.turn else ""
            scores.append(f"{mark}{player}{you}{gone}".ljust(28), style)
            scores.append(f"{t.scores.get(player, 0):>4}\n", style)
        self.query_one("#scores", Static).update(scores)
        self._redraw_rack()

    def _redraw_rack(self) -> None:
        t = self.table
        rack = Text("rack ")
        rack.append_text(rack_text(t.rack, self.query_one(BoardView).pending_rack_tiles()))
        if t.bag is not None:
            rack.append(f"  bag {t.bag}")
        self.query_one("#rack", Static).update(rack)

    def _tick(self) -> None:
        t = self.table
        try:
            if t.challenge is not None:
                self.query_one("#status", Static).update(self._status())
            if t.clocks is not None and (t.clocks.player_running or t.clocks.total_running):
                self._redraw_clocks()
        except NoMatches:
            return  # the app is closing: its widgets are gone before its timers

    def _redraw_clocks(self) -> None:
        """``your time 9:58 ▶   game 19:51 ▶``: each counts down while it runs."""
        widget = self.query_one("#clocks", Static)
        clocks = self.table.clocks
        widget.display = clocks is not None
        if clocks is None:
            return
        elapsed = (self.now() - self._clocks_at) * 1000
        text = Text()
        for label, ms, running in (
            ("your time", clocks.player_ms, clocks.player_running),
            ("game", clocks.total_ms, clocks.total_running),
        ):
            left = ms - elapsed if running else ms
            style = "bold red" if left < 60_000 else ("bold" if running else "dim")
            text.append(f"{label} ")
            text.append(format_ms(left), style)
            text.append(" ▶   " if running else " ⏸   ", style)
        widget.update(text)

    def _challenge_status(self, offer: ChallengeOffered) -> Text:
        left = offer.window_ms - (self.now() - self._challenge_at) * 1000
        where = format_gcg_position(offer.x, offer.y, offer.direction)
        word = offer.words[0] if offer.words else "?"
        text = Text(f"{offer.player} plays {where} {word} for {offer.score}", style="bold")
        if len(offer.words) > 1:
            text.append(f" (also {', '.join(offer.words[1:])})")
        text.append("\nChallenge? ", style="bold yellow")
        text.append("F5 challenge · F6 accept · ")
        text.append(f"{max(0, math.ceil(left / 1000))} s left", style="bold yellow")
        return text

    def _status(self) -> Text:
        t = self.table
        if t.challenge is not None and t.phase is Phase.PLAYING:
            return self._challenge_status(t.challenge)
        if t.phase is Phase.CONNECTING:
            return Text(f"Connecting to {self.options.host}:{self.options.port} …")
        if t.phase is Phase.QUEUED:
            waiting, required = t.queue
            if required:
                return Text(f"Waiting for players: {waiting} of {required} here")
            return Text("Waiting for a game …")
        if t.phase is Phase.OVER:
            return Text(f"Game over. {t.result_line()}", style="bold")
        if t.phase is Phase.CLOSED:
            return Text(f"Disconnected: {t.closed_reason}", style="bold red")
        if t.my_turn:
            return Text("Your turn: type a move, or place tiles (F2)", style="bold green")
        return Text(f"{t.turn}'s turn" if t.turn else "Game on")

"""What the playable terminal apps share: connect, pump events, send moves.

:class:`PlayerApp` is what every game's playable app does with its connection (the
Santorini one included): open it (a refusal is said), close it on unmount, send a move
or say why it cannot go, and the message line.

:class:`TableApp` is a Textual app over a :class:`~meeple.tui.connection.Connection` and a
:class:`~meeple.tui.table.BaseTable`: on mount it connects (a refusal closes the table
and says why), applies every event to the table, writes the new move-log lines and chat
lines, says refusals and server notices on the message line, and redraws. Moves from
the command line are parsed by the game's notation and sent; what cannot go is said.

A game's app gives its layout (``compose`` with the ids ``#board-box``, ``#moves``,
``#chat``, ``#message`` and ``#command``), :meth:`TableApp._parse`, ``USAGE`` and
:meth:`TableApp._redraw`, and hooks into :meth:`TableApp._apply` and
:meth:`TableApp._typed` where it keeps more than the table.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on
from textual.app import App
from textual.widgets import Input, RichLog, Static

from meeple.tui.connection import ConnectFailed, Connection, ConnectOptions, MoveError, ServerNotice
from meeple.tui.notation import CommandError
from meeple.tui.table import BaseTable, ChatReceived, Phase, Refused, Say

__all__ = ["PlayerApp", "TableApp"]

E = TypeVar("E")
M = TypeVar("M")


class PlayerApp(App[None], Generic[E, M]):
    """One human player's app over a connection: call :meth:`_player` from ``__init__``
    and :meth:`_connect` from the worker that pumps events; a game's app says when its
    table is closed (:meth:`_table_closed`), what a refusal to let it in does
    (:meth:`_refused`) and what follows a sent move (:meth:`_sent`). Its layout has
    ``#message`` and ``#command``."""

    connector: Any
    options: ConnectOptions
    connection: Connection[E, M] | None

    def _player(self, connector: Any, options: ConnectOptions, protocol: str) -> None:
        """Who plays where: the connection opens in :meth:`_connect`."""
        self.connector = connector
        self.options = options
        self.connection = None
        self.sub_title = f"{protocol} {options.host}:{options.port} · {options.name}"

    async def on_unmount(self) -> None:
        if self.connection is not None:
            await self.connection.close()

    async def _connect(self) -> Connection[E, M] | None:
        """Open the connection; None when the server would not let us in (said)."""
        try:
            self.connection = await self.connector(self.options)
        except ConnectFailed as e:
            self._refused(str(e))
            self._say(str(e), error=True)
            self._redraw()
            return None
        return self.connection

    def _refused(self, reason: str) -> None:
        """The connection did not open: mark the table closed for ``reason``."""
        raise NotImplementedError

    def _table_closed(self) -> bool:
        """Whether the table is closed (moves cannot go)."""
        raise NotImplementedError

    async def send_move(self, move: M) -> bool:
        """Send a move; show why if it cannot go. True when it was sent."""
        if self.connection is None or self._table_closed():
            self._say("not connected", error=True)
            return False
        try:
            await self.connection.send(move)
        except MoveError as e:
            self._say(str(e), error=True)
            return False
        self._sent(move)
        return True

    def _sent(self, move: M) -> None:
        """``move`` went out."""
        self._say("sent; waiting for the server")

    def action_focus_command(self) -> None:
        self.query_one("#command", Input).focus()

    def _say(self, text: str, *, error: bool = False) -> None:
        message = self.query_one("#message", Static)
        message.update(Text(text))
        message.set_class(error, "error")

    def _redraw(self) -> None:
        """Draw the table as it is now."""
        raise NotImplementedError


class TableApp(PlayerApp[E, M]):
    """One human player's client of a table game over any protocol's connection."""

    USAGE: ClassVar[str]  # said when the command line is submitted empty

    def __init__(
        self, connector: Any, options: ConnectOptions, table: BaseTable[E], *, protocol: str = ""
    ) -> None:
        super().__init__()
        self._player(connector, options, protocol)
        self.table = table

    def on_mount(self) -> None:
        self.query_one("#moves", RichLog).border_title = "moves"
        self.query_one("#chat", RichLog).border_title = "chat"
        self.query_one("#board-box").border_title = "board"
        self.query_one("#command", Input).focus()
        self._redraw()
        self._mounted()
        self.run_worker(self._pump(), name="connection", exit_on_error=False)

    def _mounted(self) -> None:
        """Mounted and drawn, before the connection starts (timers go here)."""

    # --- network --------------------------------------------------------------------------

    async def _pump(self) -> None:
        """Connect, then apply every event until the connection ends."""
        connection = await self._connect()
        if connection is None:
            return
        shown_log = len(self.table.log)
        async for event in connection.events():
            self._apply(event)
            moves = self.query_one("#moves", RichLog)
            for line in self.table.log[shown_log:]:
                moves.write(line)
            shown_log = len(self.table.log)
            if isinstance(event, ChatReceived):
                self.query_one("#chat", RichLog).write(f"{event.player}: {event.text}")
            if isinstance(event, Refused):
                self._say(event.message, error=True)
            elif isinstance(event, ServerNotice):  # issue 31: said, not logged
                self._say(event.text, error=True)
            self._redraw()

    def _apply(self, event: E) -> None:
        """Take one event into the table (a game's app keeps more around it)."""
        self.table.apply(event)

    def _refused(self, reason: str) -> None:
        self.table.phase = Phase.CLOSED
        self.table.closed_reason = reason

    def _table_closed(self) -> bool:
        return self.table.phase is Phase.CLOSED

    def _sent(self, move: M) -> None:
        # Our own chat line comes back as an event (Twente NOTIFYCHAT goes to "all
        # clients"), so it is not written here.
        if not isinstance(move, Say):
            super()._sent(move)

    # --- input ----------------------------------------------------------------------------

    def _parse(self, text: str) -> M:
        """The move a typed command stands for; :class:`~meeple.tui.notation.CommandError`
        says in words why it stands for none."""
        raise NotImplementedError

    @on(Input.Submitted, "#command")
    async def _command(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            self._say(self.USAGE)
            return
        try:
            move = self._parse(text)
        except CommandError as e:
            self._say(str(e), error=True)
            return
        if await self.send_move(move):
            event.input.value = ""
            self._typed(move)

    def _typed(self, move: M) -> None:
        """A typed move went out (the command line is cleared)."""

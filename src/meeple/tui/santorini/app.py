"""The Santorini screen: board, players and gods, whose turn, what may be done, a log.

It draws :class:`~meeple.tui.santorini.view.SantoriniView` values given to
:meth:`SantoriniApp.show` and records the cells the player picks: picking one of
the active player's workers selects it (its reachable and buildable cells light
up); picking another cell is appended to :attr:`SantoriniApp.picks` as
``(worker, cell)``.

:class:`SantoriniGameApp` is the playable client (``meeple play santorini``): the same
screen over a :data:`~meeple.tui.connection.Connector`, with a command line and the
picks turned into moves: on set-up a free cell places a worker; then pick a worker and
a cell marked ``•`` to move there, ``+`` to build there (the usual level; ``build``
names another, e.g. a dome). Keys on the board: ``p`` pass, ``u`` undo, ``U`` undo the
whole turn. Commands: ``god NAME``, ``starter NAME``, ``place R C``, ``move R C R C``,
``build R C R C [LEVEL]``, ``pass``, ``undo [all]``, ``lose``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, RichLog, Static

from meeple.tui.app import PlayerApp
from meeple.tui.connection import (
    Connection,
    ConnectOptions,
    ServerNotice,
)
from meeple.tui.santorini.events import (
    BuildOn,
    ChooseGod,
    ChooseStarter,
    Concede,
    ConnectionLost,
    GameOver,
    MoveWorker,
    Notice,
    PassTurn,
    PlaceWorker,
    Prompt,
    Refused,
    SantoriniEvent,
    SantoriniMove,
    UndoStep,
    ViewChanged,
)
from meeple.tui.santorini.view import SantoriniView, Square
from meeple.tui.santorini.widgets import PLAYER_COLOURS, SantoriniBoard

__all__ = ["USAGE", "CommandError", "SantoriniApp", "SantoriniGameApp", "parse_command"]


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
    async def _picked(self, event: SantoriniBoard.Picked) -> None:
        await self.pick(event.square)

    async def pick(self, square: Square) -> None:
        """The player picked ``square``: select our worker, or record the pick."""
        cell = self.view.cell(*square)
        if cell.worker is not None and cell.worker.owner == self.view.me:
            self.selected = square
        else:
            self.picks.append((self.selected, square))
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


USAGE = (
    "pick a worker then a marked cell · god NAME · starter NAME · place R C · "
    "move R C R C · build R C R C [LEVEL] · pass · undo [all] · lose"
)


class CommandError(ValueError):
    """A command line that is not a Santorini command; the message says why."""


def _squares(words: list[str], count: int) -> list[Square]:
    if len(words) < 2 * count or not all(w.isdigit() and int(w) < 5 for w in words[: 2 * count]):
        raise CommandError(f"expected {count} cell(s) as ROW COLUMN, each 0-4")
    return [(int(words[2 * i]), int(words[2 * i + 1])) for i in range(count)]


def parse_command(line: str) -> SantoriniMove:
    """A typed command as a move: see :data:`USAGE`."""
    words = line.split()
    if not words:
        raise CommandError(USAGE)
    verb, rest = words[0].lower(), words[1:]
    if verb == "pass" and not rest:
        return PassTurn()
    if verb == "lose" and not rest:
        return Concede()
    if verb == "undo" and rest in ([], ["all"]):
        return UndoStep(all=bool(rest))
    if verb == "god" and len(rest) == 1:
        return ChooseGod(rest[0])
    if verb == "starter" and len(rest) == 1:
        return ChooseStarter(rest[0])
    if verb == "place" and len(rest) == 2:
        return PlaceWorker(_squares(rest, 1)[0])
    if verb == "move" and len(rest) == 4:
        source, destination = _squares(rest, 2)
        return MoveWorker(source, destination)
    if verb == "build" and len(rest) in (4, 5):
        source, destination = _squares(rest, 2)
        if len(rest) == 5 and not (rest[4].isdigit() and 1 <= int(rest[4]) <= 4):
            raise CommandError("a level is 1-3, or 4 for a dome")
        return BuildOn(source, destination, int(rest[4]) if len(rest) == 5 else None)
    raise CommandError(f"not a command: {line.strip()[:40]!r}; {USAGE}")


SantoriniConnection = Connection[SantoriniEvent, SantoriniMove]


class SantoriniGameApp(SantoriniApp, PlayerApp[SantoriniEvent, SantoriniMove]):
    """One human player's Santorini client over a connector (see the module docstring)."""

    CSS = (
        SantoriniApp.CSS
        + """
    #message { height: 1; padding: 0 1; }
    #message.error { color: $error; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit"),
        Binding("f2", "focus_board", "Board"),
        Binding("f3", "focus_command", "Command"),
        Binding("p", "send('pass')", "Pass"),
        Binding("u", "send('undo')", "Undo"),
        Binding("U", "send('undo all')", "Undo turn"),
    ]

    def __init__(self, connector: Any, options: ConnectOptions, *, protocol: str = "") -> None:
        super().__init__(SantoriniView(me=options.name))
        self._player(connector, options, protocol)
        self.over = False
        self.closed_reason: str | None = None
        self.prompt: str | None = None

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static(id="message")
        yield Input(placeholder=USAGE, id="command")

    def on_mount(self) -> None:
        super().on_mount()
        self.run_worker(self._pump(), name="connection", exit_on_error=False)

    async def _pump(self) -> None:
        connection = await self._connect()
        if connection is None:
            return
        self.log_line(f"Registered as {self.options.name}; waiting for players")
        async for event in connection.events():
            self.apply(event)

    def _refused(self, reason: str) -> None:
        self.closed_reason = reason

    def _table_closed(self) -> bool:
        return self.closed_reason is not None

    def apply(self, event: SantoriniEvent) -> None:
        """Show one event."""
        if isinstance(event, ViewChanged):
            self.show(event.view)
            if event.view.my_turn:
                self.prompt = None
        elif isinstance(event, Notice):
            self.log_line(event.text)
        elif isinstance(event, Prompt):
            self.prompt = event.text
            self.log_line(event.text)
            self._say(event.text)
            self.query_one("#command", Input).focus()
        elif isinstance(event, Refused):
            self.log_line(f"refused: {event.text}")
            self._say(event.text, error=True)
        elif isinstance(event, GameOver):
            self.over = True
            self.log_line(event.text)
            self._say(event.text)
        elif isinstance(event, ConnectionLost):
            self.closed_reason = event.reason
        elif isinstance(event, ServerNotice):  # issue 31: said, not logged
            self._say(event.text, error=True)
        self._redraw()

    def _sent(self, move: SantoriniMove) -> None:
        if isinstance(move, MoveWorker):
            self.selected = move.destination  # the same worker builds next
        if isinstance(move, ChooseGod | ChooseStarter):
            self.prompt = None
        super()._sent(move)

    @on(Input.Submitted, "#command")
    async def _command(self, event: Input.Submitted) -> None:
        try:
            move = parse_command(event.value)
        except CommandError as e:
            self._say(str(e), error=True)
            return
        if await self.send_move(move):
            event.input.value = ""

    async def action_send(self, command: str) -> None:
        await self.send_move(parse_command(command))

    def action_focus_board(self) -> None:
        self.query_one(SantoriniBoard).focus()

    async def pick(self, square: Square) -> None:
        """Turn a picked cell into a placement, a move or a build (see the module docstring)."""
        v = self.view
        cell = v.cell(*square)
        if not v.my_turn:
            self._say("not your turn", error=True)
        elif cell.worker is not None and cell.worker.owner == v.me:
            self.selected = square
            self._say("now pick a cell: • to move there, + to build there")
        elif v.can_place_worker and cell.worker is None:
            await self.send_move(PlaceWorker(square))
        elif self.selected is None:
            self._say("pick one of your workers first", error=True)
        elif square in v.reachable.get(self.selected, frozenset()):
            await self.send_move(MoveWorker(self.selected, square))
        elif square in v.buildable.get(self.selected, {}):
            await self.send_move(BuildOn(self.selected, square))
        else:
            self._say("that worker cannot move or build there now", error=True)
        self._redraw()

    def _status(self) -> Text:
        if self.closed_reason is not None and not self.over:
            return Text(f"Disconnected: {self.closed_reason}", style="bold red")
        if self.over and self.view.winner is None:
            return Text("Game over", style="bold")
        if self.prompt is not None and self.view.winner is None:
            return Text(self.prompt, style="bold yellow")
        if self.view.my_turn and self.view.can_place_worker:
            return Text("Your turn: pick a free cell for a worker", style="bold green")
        return super()._status()

"""The Scrabble app on a scripted connection: what it shows and what it sends, key by key.

The connection here is a queue of events the test pushes and a list of the moves the
app sent; the same app talks to the real Twente adapter in test_scrabble_game.py.
Screens are compared with SVG snapshots in ``snapshots/``; after a deliberate change,
rerun with ``MEEPLE_UPDATE_SNAPSHOTS=1`` and review the new files.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Static

from meeple.games.scrabble.board import Direction
from meeple.tui.connection import ConnectFailed, ConnectOptions, MoveError
from meeple.tui.scrabble.app import ScrabbleApp
from meeple.tui.scrabble.events import (
    BagCount,
    ChatReceived,
    ConnectionLost,
    GameEnded,
    Pass,
    PlayWord,
    Queued,
    RackChanged,
    Refused,
    Say,
    ScrabbleEvent,
    ScrabbleMove,
    Started,
    Swap,
    Swapped,
    TurnChanged,
    Welcomed,
    WordPlayed,
)
from meeple.tui.scrabble.table import Phase
from meeple.tui.scrabble.widgets import BoardView

SIZE = (100, 32)
SNAPSHOTS = Path(__file__).parent / "snapshots"
OPTIONS = ConnectOptions("127.0.0.1", 7777, "ann")


class Scripted:
    """A connection whose events the test pushes and whose sent moves it reads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[ScrabbleEvent | None] = asyncio.Queue()
        self.sent: list[ScrabbleMove] = []
        self.refuse: str | None = None
        self.closed = False

    async def events(self) -> AsyncIterator[ScrabbleEvent]:
        while (event := await self.queue.get()) is not None:
            yield event

    async def send(self, move: ScrabbleMove) -> None:
        if self.refuse is not None:
            raise MoveError(self.refuse)
        self.sent.append(move)

    async def close(self) -> None:
        self.closed = True

    def push(self, *events: ScrabbleEvent) -> None:
        for e in events:
            self.queue.put_nowait(e)


def app_with(conn: Scripted) -> ScrabbleApp:
    async def connector(options: ConnectOptions) -> Scripted:
        return conn

    return ScrabbleApp(connector, OPTIONS)


async def settle(pilot: object) -> None:
    for _ in range(3):
        await pilot.pause()  # type: ignore[attr-defined]


def check_snapshot(app: ScrabbleApp, name: str) -> None:
    """The screen equals the stored SVG (written anew with MEEPLE_UPDATE_SNAPSHOTS=1)."""
    svg = app.export_screenshot(title=name)
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("MEEPLE_UPDATE_SNAPSHOTS"):
        path.write_text(svg, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with MEEPLE_UPDATE_SNAPSHOTS=1"
    assert svg == path.read_text(encoding="utf-8"), f"screen differs from {path.name}"


MIDGAME: tuple[ScrabbleEvent, ...] = (
    Welcomed("ann", chat=True),
    Queued(2, 2),
    Started(("ann", "bob")),
    RackChanged("AEIRST?"),
    BagCount(86),
    TurnChanged("bob", mine=False),
    WordPlayed("bob", 6, 7, Direction.ACROSS, "QUIz", 54),
    Swapped("bob", 0),
    TurnChanged("ann", mine=True),
    ChatReceived("bob", "good luck!"),
)


async def test_waiting_screen() -> None:
    """Before the game: who we are, where, and how many players are there."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(Welcomed("ann", chat=True), Queued(1, 2))
        await settle(pilot)
        assert "Waiting for players: 1 of 2" in str(app.query_one("#status").render())
        check_snapshot(app, "scrabble_waiting")


async def test_game_screen_shows_board_rack_scores_turn_log_and_chat() -> None:
    """Premium squares, a played word, the rack with values, scores, turn, log and chat."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        t = app.table
        assert t.board.rows()[7] == "......QUIz....."
        assert t.scores == {"ann": 0, "bob": 54}
        assert t.my_turn
        assert t.log[-2:] == ["bob: 8G QUIz 54", "bob passes"]
        assert "Your turn" in str(app.query_one("#status").render())
        assert str(app.query_one("#rack").render()).endswith("bag 86")
        check_snapshot(app, "scrabble_my_turn")


async def test_typed_commands_are_sent_and_mistakes_explained() -> None:
    """Notation, swap, pass and chat go out as moves; a bad line is explained and kept."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        command = app.query_one("#command")
        await pilot.press(*"H7 down STAR", "enter")  # key by key once; then set the line
        for line in ("swap e?", "pass", "say hi bob"):
            command.value = line  # type: ignore[attr-defined]
            await pilot.press("enter")
        assert conn.sent == [
            PlayWord(7, 6, Direction.DOWN, "STAR"),
            Swap("E?"),
            Pass(),
            Say("hi bob"),
        ]
        command.value = "H8 sideways STAR"  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert "direction is 'across' or 'down'" in str(app.query_one("#message").render())
        assert app.query_one("#message").has_class("error")
        assert command.value == "H8 sideways STAR"  # type: ignore[attr-defined]
        assert len(conn.sent) == 4


async def test_completion_is_accepted_with_the_right_arrow() -> None:
    """Typing 'H8 a' suggests 'across'; Right accepts it."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        await pilot.press(*"H8 a")
        await settle(pilot)
        await pilot.press("right")
        assert app.query_one("#command").value == "H8 across "  # type: ignore[attr-defined]


async def test_refusals_are_shown_in_words() -> None:
    """A server refusal and a move the adapter cannot send both land on the message line."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        await pilot.press(*"H6 down SATIRE", "enter")
        conn.push(Refused("E006", "E006 Unknown word: not in the server's dictionary"))
        await settle(pilot)
        assert "E006 Unknown word" in str(app.query_one("#message").render())
        assert app.table.log[-1] == "refused: E006 Unknown word: not in the server's dictionary"
        conn.refuse = "E009 It is not your turn: wait for your turn"
        await pilot.press(*"pass", "enter")
        assert "E009 It is not your turn" in str(app.query_one("#message").render())


async def test_tiles_placed_with_keys_make_the_move() -> None:
    """F2, arrows, letters (a blank when the rack lacks one), Backspace, Space, Enter."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        board = app.query_one(BoardView)
        await pilot.press("f2")
        assert board.has_focus
        # Cursor starts on H8 (the U of QUIz, z a blank); go up to H5 and write down through the U.
        await pilot.press("up", "up", "up", "space")
        assert board.direction is Direction.DOWN
        await pilot.press("T", "R", "X")  # no X on the rack: the blank stands for it
        assert board.pending == {(7, 4): "T", (7, 5): "R", (7, 6): "x"}
        await pilot.press("backspace", "E")
        assert board.pending == {(7, 4): "T", (7, 5): "R", (7, 6): "E"}
        await pilot.pause()
        rack = app.query_one("#rack", Static).content
        assert isinstance(rack, Text)
        dimmed = {
            rack.plain[span.start : span.end].strip()[:1]
            for span in rack.spans
            if "#777777" in str(span.style)
        }
        assert dimmed == {"T", "R", "E"}
        assert board.cursor == (7, 8)  # skipped over the U on H8
        await pilot.press("S", "enter")
        await settle(pilot)
        assert conn.sent == [PlayWord(7, 4, Direction.DOWN, "TREUS")]  # the server judges words
        assert board.pending == {}


async def test_tiles_placed_with_the_mouse() -> None:
    """A click picks a square, a second click turns the direction; Escape takes all back."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        board = app.query_one(BoardView)
        # Square (x, y) is at offset (3 + 3x + 1, 1 + y) in the widget.
        await pilot.click(BoardView, offset=(3 + 3 * 10 + 1, 1 + 6))
        assert board.cursor == (10, 6)
        await pilot.click(BoardView, offset=(3 + 3 * 10 + 1, 1 + 6))
        assert board.direction is Direction.DOWN
        await pilot.press("A", "escape")
        assert board.pending == {}
        assert board.cursor == (10, 6)
        await pilot.press("A", "T", "E")
        check_snapshot(app, "scrabble_placing")
        await pilot.press("enter")
        await settle(pilot)
        assert conn.sent == [PlayWord(10, 6, Direction.DOWN, "ATE")]


async def test_a_placement_that_breaks_a_rule_is_explained_not_sent() -> None:
    """Tiles that do not touch the board: the rule is named, nothing is sent."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME)
        await settle(pilot)
        await pilot.click(BoardView, offset=(3 + 1, 1))
        await pilot.press("A", "T", "enter")
        await settle(pilot)
        assert conn.sent == []
        assert "not a play" in str(app.query_one("#message").render())


async def test_game_over_screen() -> None:
    """Final scores (the server's), who won, and the log line."""
    conn = Scripted()
    app = app_with(conn)
    async with app.run_test(size=SIZE) as pilot:
        conn.push(*MIDGAME, GameEnded("the game is over", (("bob", 70), ("ann", -8))))
        await settle(pilot)
        assert app.table.phase is Phase.OVER
        assert "bob 70, ann -8: bob wins" in str(app.query_one("#status").render())
        check_snapshot(app, "scrabble_game_over")
        conn.push(ConnectionLost("connection closed by the server"))
        await settle(pilot)
        assert "Disconnected" in str(app.query_one("#status").render())


async def test_a_refused_connection_is_shown() -> None:
    """ConnectFailed from the connector: the reason on screen, no crash."""

    async def connector(options: ConnectOptions) -> Scripted:
        raise ConnectFailed("cannot reach a Twente server at 127.0.0.1:1")

    app = ScrabbleApp(connector, OPTIONS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "cannot reach" in str(app.query_one("#status").render())
        await pilot.press(*"pass", "enter")
        assert "not connected" in str(app.query_one("#message").render())


@pytest.mark.parametrize("name", ["scrabble_waiting", "scrabble_my_turn"])
def test_snapshots_are_stored(name: str) -> None:
    """The snapshot files exist and are SVG (a missing one would make comparison vacuous)."""
    assert (SNAPSHOTS / f"{name}.svg").read_text(encoding="utf-8").startswith("<svg")

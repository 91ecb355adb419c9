"""Spectrangle in the terminal against a scripted peer speaking raw spec lines on loopback.

The peer is a real TCP server on 127.0.0.1:0 driven line by line by the test: it
checks every byte the app sends and answers with the lines a Spectrangle 1.4 server
sends (the shapes of shared/transcripts/spectrangle-3p-game.log).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.patience import PATIENCE

from meeple.tui.connection import ConnectOptions
from meeple.tui.spectrangle.adapter import connect
from meeple.tui.spectrangle.app import SpectrangleApp
from meeple.tui.spectrangle.table import Phase
from meeple.tui.spectrangle.widgets import FIELD_WIDTH, HandView, TriangleBoard, field_at

SIZE = (120, 34)
SNAPSHOTS = Path(__file__).parent / "snapshots"


class Peer:
    """The server end of one connection, driven by the test."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def send(self, *lines: str) -> None:
        self.writer.write("".join(f"{line}\n" for line in lines).encode())

    async def expect(self, line: str) -> None:
        got = await asyncio.wait_for(self.reader.readline(), PATIENCE)
        assert got == f"{line}\n".encode()


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, asyncio.Queue[Peer]]]:
    """A loopback listener; each accepted connection arrives in the queue as a Peer."""
    peers: asyncio.Queue[Peer] = asyncio.Queue()
    writers: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await peers.put(Peer(reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield port, peers
    for writer in writers:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    server.close()
    await server.wait_closed()


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


async def check_snapshot(pilot: Any, name: str) -> None:
    """The screen equals the stored SVG (written anew with MEEPLE_UPDATE_SNAPSHOTS=1).

    The listener's port changes every run, so the title shows the default port instead.
    """
    app = pilot.app
    app.sub_title = app.sub_title.replace(f":{app.options.port} ", ":4000 ")
    await pilot.pause()
    svg = app.export_screenshot(title=name)
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("MEEPLE_UPDATE_SNAPSHOTS"):
        path.write_text(svg, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with MEEPLE_UPDATE_SNAPSHOTS=1"
    assert svg == path.read_text(encoding="utf-8"), f"screen differs from {path.name}"


def message(app: SpectrangleApp) -> str:
    return str(app.query_one("#message").render())


def status(app: SpectrangleApp) -> str:
    return str(app.query_one("#status").render())


def test_field_at_inverts_the_layout() -> None:
    """Every field's two lines, all its columns, map back to it; the margins to nothing."""
    for row in range(6):
        for k in range(2 * row + 1):
            index = row * row + k
            x0 = FIELD_WIDTH * (5 - row) + FIELD_WIDTH * k
            for dx in range(FIELD_WIDTH):
                assert field_at(x0 + dx, 2 * row) == index
                assert field_at(x0 + dx, 2 * row + 1) == index
    assert field_at(0, 0) is None
    assert field_at(FIELD_WIDTH * 6, 0) is None
    assert field_at(0, 12) is None


async def test_a_game_by_typing_keys_and_mouse(
    listener: tuple[int, asyncio.Queue[Peer]],
) -> None:
    """Handshake, a refused and an accepted typed move, a keyboard placement with
    rotation, a move out of turn kept local, must-skip, exchange by mouse, chat, result."""
    port, peers = listener
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"), protocol="spectrangle")
    async with app.run_test(size=SIZE) as pilot:
        peer = await asyncio.wait_for(peers.get(), PATIENCE)
        await peer.expect("connect ann chat")
        peer.send("welcome chat")
        await peer.expect("request 2")
        peer.send("waiting ann")
        await until(pilot, lambda: app.table.queue == ("ann",))
        assert "in the queue: ann" in status(app)
        await check_snapshot(pilot, "spectrangle_waiting")
        peer.send(
            "waiting ann bob",
            "start with ann bob",
            "order ann bob",
            "tiles ann RRR6 GGB5 YBP3 WWW1 bob BBB6 PPP6 YYG5 GRP1 turn ann",
        )
        await until(pilot, lambda: app.table.my_turn)
        assert app.table.order == ("ann", "bob")
        assert "Your turn" in status(app)

        # Typed, with completion of the tile; the server refuses the bonus field.
        await pilot.press(*"place R")
        await pilot.pause()
        await pilot.press("right")
        assert app.query_one("#command").value == "place RRR6 on "  # type: ignore[attr-defined]
        await pilot.press(*"10", "enter")
        await peer.expect("place RRR6 on 10")
        peer.send("invalidMove")
        await until(pilot, lambda: app.table.refusal is not None)
        assert message(app).startswith("invalidMove: that tile cannot go there")
        await pilot.press(*"place RRR6 on 0", "enter")
        await peer.expect("place RRR6 on 0")
        peer.send(
            "move ann RRR6 0 6",
            "tiles ann GGB5 YBP3 WWW1 BBY4 bob BBB6 PPP6 YYG5 GRP1 turn bob",
            "move bob RRB4 2 12",
            "tiles ann GGB5 YBP3 WWW1 BBY4 bob PPP6 YYG5 GRP1 RGY3 turn ann",
        )
        await until(pilot, lambda: app.table.my_turn and "RGY3" in map(str, app.table.hands["bob"]))
        assert app.table.scores == {"ann": 6, "bob": 12}
        assert app.table.board.state()[2] == "RRB4"

        # On the board: pick tile 4 (BBY4), rotate twice, to field 1, preview, Enter.
        board = app.query_one(TriangleBoard)
        await pilot.press("f2", "4", "r", "r")
        assert str(app.selected_tile()) == "BYB4"
        await pilot.press("down", "left")
        assert board.cursor == 1
        await check_snapshot(pilot, "spectrangle_placing")
        await pilot.press("enter")
        await peer.expect("place BYB4 on 1")
        peer.send(
            "move ann BYB4 1 4",
            "tiles ann GGB5 YBP3 WWW1 YYR4 bob PPP6 YYG5 GRP1 RGY3 turn bob",
        )
        await until(pilot, lambda: app.table.scores["ann"] == 10)
        # Out of turn: the session refuses to send; the player is told, the peer gets nothing.
        await pilot.press("s")
        assert "wait for your turn" in message(app)

        peer.send(
            "player skipped bob",
            "tiles ann GGB5 YBP3 WWW1 YYR4 bob PPP6 YYG5 GRP1 RGY3 skip ann",
        )
        await until(pilot, lambda: app.table.must_skip and app.table.my_turn)
        assert "skip (s) or exchange" in status(app)
        # Exchange with the mouse: click tile 2 in the hand, then x on the board.
        await pilot.click(HandView, offset=(HandView.SLOT_WIDTH + 2, 0))
        assert app.selected == 1
        await pilot.press("x")
        await peer.expect("exchange YBP3")
        peer.send(
            "replace ann YBP3 with PPB4",
            "tiles ann GGB5 WWW1 YYR4 PPB4 bob PPP6 YYG5 GRP1 RGY3 turn bob",
        )
        await until(pilot, lambda: "ann exchanges YBP3 for PPB4" in app.table.log)
        assert app.selected is None  # the hand changed

        # Chat both ways (the server broadcasts ours back).
        await pilot.press("f3", *"say gg", "enter")
        await peer.expect("chat gg")
        peer.send("chat ann gg", "chat bob well played")
        await until(pilot, lambda: len(app.table.chat_lines) == 2)
        assert app.table.chat_lines == [("ann", "gg"), ("bob", "well played")]

        peer.send("game finished leaderboard bob 12 ann 10 ")
        await until(pilot, lambda: app.table.phase is Phase.OVER)
        assert "bob 12, ann 10: bob wins" in status(app)
        await check_snapshot(pilot, "spectrangle_game_over")
        peer.writer.close()
        await until(pilot, lambda: app.table.phase is Phase.CLOSED)


async def test_mouse_picks_a_field_and_a_second_click_on_a_tile_rotates(
    listener: tuple[int, asyncio.Queue[Peer]],
) -> None:
    """Click a field: the cursor goes there; click a hand tile twice: it turns once."""
    port, peers = listener
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        peer = await asyncio.wait_for(peers.get(), PATIENCE)
        await peer.expect("connect ann chat")
        peer.send("welcome chat")
        await peer.expect("request 2")
        peer.send(
            "start with ann bob",
            "order ann bob",
            "tiles ann RGB4 GGB5 YBP3 WWW1 bob BBB6 PPP6 YYG5 GRP1 turn ann",
        )
        await until(pilot, lambda: app.table.my_turn)
        await pilot.click(HandView, offset=(1, 0))
        await pilot.click(HandView, offset=(1, 0))
        assert str(app.selected_tile()) == "BRG4"
        # Field 27 is row 5, k 2: columns 12-17, lines 10-11.
        await pilot.click(TriangleBoard, offset=(FIELD_WIDTH * 2 + 3, 11))
        assert app.query_one(TriangleBoard).cursor == 27
        await pilot.press("enter")
        await peer.expect("place BRG4 on 27")


async def test_a_name_refused_by_the_server_is_shown(
    listener: tuple[int, asyncio.Queue[Peer]],
) -> None:
    """invalidName during the handshake: the reason on screen, no crash."""
    port, peers = listener
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        peer = await asyncio.wait_for(peers.get(), PATIENCE)
        await peer.expect("connect ann chat")
        peer.send("invalidName")
        await until(pilot, lambda: app.table.phase is Phase.CLOSED)
        assert "invalidName: the name is taken" in status(app)


async def _start_1_3_game(pilot: Any, app: SpectrangleApp, peers: asyncio.Queue[Peer]) -> Peer:
    """Handshake and a game of ann and bob, bob on turn."""
    peer = await asyncio.wait_for(peers.get(), PATIENCE)
    await peer.expect("connect ann chat")
    peer.send("welcome chat")
    await peer.expect("request 2")
    peer.send(
        "start with bob ann",
        "order bob ann",
        "tiles ann RRR6 GGB5 YBP3 WWW1 bob BBB6 PPP6 YYG5 GRP1 turn bob",
        "move bob BBB6 0 6",
    )
    await until(pilot, lambda: app.table.scores.get("bob") == 6)
    assert not app.table.my_turn
    return peer


async def test_a_stand_alone_skip_line_asks_the_player_to_skip(
    listener: tuple[int, asyncio.Queue[Peer]],
) -> None:
    """A 1.3 server's ``skip ann`` with no tiles line puts ann on turn, must skip; her
    skip goes out, and the server's ``skip ann`` echo hands the turn on to bob."""
    port, peers = listener
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"), protocol="spectrangle")
    async with app.run_test(size=SIZE) as pilot:
        peer = await _start_1_3_game(pilot, app, peers)
        peer.send("skip ann")
        await until(pilot, lambda: app.table.my_turn)
        assert app.table.turn == "ann"
        assert app.table.must_skip
        assert "skip (s) or exchange" in status(app)
        assert "▶ ann (you)" in str(app.query_one("#scores").render())
        await pilot.press("f2", "s")
        await peer.expect("skip")
        peer.send("skip ann")  # 1.3: the server announces the skip it took
        await until(pilot, lambda: app.table.turn == "bob")
        assert not app.table.my_turn
        assert app.table.log[-1] == "ann skips"
        assert status(app) == "bob's turn"
        # Another player's stand-alone skip: shown on turn, not ours to act on.
        peer.send("skip bob")
        await until(pilot, lambda: app.table.log[-1] == "bob cannot place a tile: skip or exchange")
        assert app.table.turn == "bob"
        assert not app.table.my_turn


async def test_an_exchange_answered_by_replace_alone_shows_the_new_hand(
    listener: tuple[int, asyncio.Queue[Peer]],
) -> None:
    """``replace ann YBP3 with PPB4`` with no tiles line after it: the hand shows PPB4 in
    YBP3's place and the turn passes on; bob's replace updates bob's open hand."""
    port, peers = listener
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"), protocol="spectrangle")
    async with app.run_test(size=SIZE) as pilot:
        peer = await _start_1_3_game(pilot, app, peers)
        peer.send("skip ann")
        await until(pilot, lambda: app.table.my_turn)
        await pilot.press("f3", *"exchange YBP3", "enter")
        await peer.expect("exchange YBP3")
        peer.send("replace ann YBP3 with PPB4")
        await until(pilot, lambda: not app.table.my_turn)
        assert [str(t) for t in app.table.hand] == ["RRR6", "GGB5", "PPB4", "WWW1"]
        assert [str(t) for t in app.query_one(HandView).tiles] == ["RRR6", "GGB5", "PPB4", "WWW1"]
        assert app.table.turn == "bob"
        assert status(app) == "bob's turn"
        peer.send("replace bob PPP6 with RGY3")
        await until(pilot, lambda: app.table.turn == "ann")
        assert [str(t) for t in app.table.hands["bob"]] == ["BBB6", "RGY3", "YYG5", "GRP1"]

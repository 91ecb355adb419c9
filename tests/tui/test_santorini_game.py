"""Santorini through the terminal app over AM27: a whole game against `meeple bot santorini`.

A real MeepleServer (only the AM27 listener, 127.0.0.1 port 0); the person's side is
played through the UI only: board clicks for placements, moves and builds, ``p`` for
pass, the command line for the starter. The bot's own account of the game must agree
with what the screen shows.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.patience import GAME_PATIENCE, PATIENCE
from textual.pilot import Pilot
from textual.widgets import RichLog

from meeple.clients.santorini import SantoriniClient, play_santorini
from meeple.protocols.santorini.messages import ServerState
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.tui.connection import ConnectOptions
from meeple.tui.santorini.am27 import connect, refusal_text
from meeple.tui.santorini.app import CommandError, SantoriniGameApp, parse_command
from meeple.tui.santorini.events import BuildOn, ChooseStarter, MoveWorker, PassTurn, UndoStep
from meeple.tui.santorini.view import SantoriniView, Square
from meeple.tui.santorini.widgets import CELL_HEIGHT, CELL_WIDTH, LABEL, SantoriniBoard

SNAPSHOTS = Path(__file__).parent / "snapshots"
ONLY = {"santorini": "meeple.server.edge.santorini:create_listener"}


@pytest.fixture
async def am27(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"))
    for name in config.listeners:
        config = config.with_port(name, 0)
    server = MeepleServer(config, listeners=ONLY, rng=random.Random(7))
    await server.start()
    yield server
    await server.stop()


async def _wait_for_waiting_game(port: int) -> None:
    """Until a greeting says a game is waiting (SERVERSTATE active), so seats are fixed.

    The server greets once per connection and never pushes a second SERVERSTATE (issue
    22), so the probe connects again until one says so."""
    async with asyncio.timeout(PATIENCE):
        while True:
            probe = await SantoriniClient.connect("127.0.0.1", port)
            try:
                message = await probe.receive()
            finally:
                await probe.close()
            if isinstance(message, ServerState) and message.active:
                return
            await asyncio.sleep(0.02)


async def _click(pilot: Pilot[None], square: Square) -> None:
    row, column = square
    offset = (LABEL + CELL_WIDTH * column + 4, 1 + CELL_HEIGHT * row + 1)
    await pilot.click(SantoriniBoard, offset=offset)


async def _turn(pilot: Pilot[None], app: SantoriniGameApp, view: SantoriniView) -> None:
    """One step of the person's turn, through the UI: a simple climber."""
    if view.can_place_worker:
        free = [(r, c) for r in (1, 3, 2, 0, 4) for c in (1, 3, 2, 0, 4)]
        await _click(pilot, next(s for s in free if view.cell(*s).worker is None))
        return
    if view.can_pass:
        app.action_focus_board()
        await pilot.press("p")
        return
    builds = [(w, d) for w, cells in view.buildable.items() for d in cells]
    moves = [(w, d) for w, cells in view.reachable.items() for d in cells]
    if builds:
        worker, cell = builds[0]
    elif moves:
        worker, cell = max(moves, key=lambda wd: view.cell(*wd[1]).height)
    else:
        app.action_focus_command()
        await pilot.press(*"lose", "enter")
        return
    await _click(pilot, worker)
    await _click(pilot, cell)


SIMPLE_GODS = ("Pan", "Athena", "Artemis", "Demeter", "Hephaestus", "Apollo", "Minotaur")


def _god_to_pick(prompt: str) -> str:
    names = [n.strip() for n in prompt.split(":", 1)[1].split(",")]
    return next((n for n in SIMPLE_GODS if n in names), names[0])


@pytest.mark.parametrize("gods", [False, True])
async def test_a_whole_game_against_the_bot(am27: MeepleServer, gods: bool) -> None:
    port = am27.ports["santorini"]
    options = ConnectOptions("127.0.0.1", port, "ann", gods=gods)
    app = SantoriniGameApp(connect, options, protocol="santorini")
    async with app.run_test(size=(110, 30)) as pilot:
        await _wait_for_waiting_game(port)
        bot = asyncio.create_task(
            play_santorini("127.0.0.1", port, "bot", players=2, gods=gods, seed=3)
        )
        acted_on: SantoriniView | None = None
        answered = False
        steps = 0
        async with asyncio.timeout(GAME_PATIENCE):
            while not app.over:
                await pilot.pause(0.01)
                if app.prompt and app.prompt.startswith("You are the challenger") and not answered:
                    await pilot.press(*"starter ann", "enter")
                    answered = True
                elif app.prompt and app.prompt.startswith("Your pick of the gods"):
                    prompt = app.prompt
                    await pilot.press(*f"god {_god_to_pick(prompt)}", "enter")
                    while app.prompt == prompt:
                        await pilot.pause(0.01)
                elif app.view.my_turn and app.view is not acted_on:
                    acted_on = app.view
                    await _turn(pilot, app, app.view)
                    steps += 1
            results = await bot
        assert steps > 6  # two placements, then at least two whole turns
        assert [r.winner for r in results] == [app.view.winner]
        assert app.view.winner in {"ann", "bot"}
        status = str(app.query_one("#status").render())
        assert status == f"Game over: {app.view.winner} wins"
        on_board = [c.worker for c in app.view.cells if c.worker is not None]
        assert sorted((w.owner, w.sex) for w in on_board) == [
            ("ann", "F"),
            ("ann", "M"),
            ("bot", "F"),
            ("bot", "M"),
        ]
        # The log tells every placement, move and build, the bot's too.
        log = [line.text for line in app.query_one("#log", RichLog).lines]
        assert sum("placed a worker on" in line for line in log) == 4
        assert any(line.startswith("bot moved to") for line in log)
        assert any(line.startswith("bot built") for line in log)
        assert any(line.startswith("ann built") for line in log)
        if gods:
            assert "Atheist" not in app.view.gods.values()
            assert set(app.view.gods) == {"ann", "bot"}
            return
        assert app.view.gods == {"ann": "Atheist", "bot": "Atheist"}
        app.sub_title = "santorini 127.0.0.1:7778 · ann"  # the port is a random one
        await pilot.pause()
        path = SNAPSHOTS / "santorini_game_over.svg"
        svg = app.export_screenshot(title="santorini_game_over")
        if os.environ.get("MEEPLE_UPDATE_SNAPSHOTS"):
            path.write_text(svg, encoding="utf-8")
        assert svg == path.read_text(encoding="utf-8")


async def test_refusals_are_shown_in_words(am27: MeepleServer) -> None:
    """A pass before any move reaches the server; its INFO comes back as a sentence."""
    port = am27.ports["santorini"]
    app = SantoriniGameApp(connect, ConnectOptions("127.0.0.1", port, "ann"), protocol="santorini")
    async with app.run_test(size=(110, 30)) as pilot:
        await _wait_for_waiting_game(port)
        bot = asyncio.create_task(
            play_santorini("127.0.0.1", port, "bot", players=2, gods=False, seed=3)
        )
        async with asyncio.timeout(PATIENCE):
            while not (app.view.players and app.prompt is None and app.view.active):
                if app.prompt and app.prompt.startswith("You are the challenger"):
                    await pilot.press(*"starter ann", "enter")
                await pilot.pause(0.01)
            app.action_focus_command()
            await pilot.press(*"pass", "enter")
            log = app.query_one("#log", RichLog)
            while not any("refused" in line.text for line in log.lines):
                await pilot.pause(0.01)
        refusal = next(line.text for line in log.lines if "refused" in line.text)
        assert refusal in {f"refused: {refusal_text(code)}" for code in ("WAIT", "INVALID")}
        assert str(app.query_one("#message").render()) == refusal.removeprefix("refused: ")
        bot.cancel()


def test_commands() -> None:
    assert parse_command("pass") == PassTurn()
    assert parse_command("undo all") == UndoStep(all=True)
    assert parse_command("move 1 1 0 2") == MoveWorker((1, 1), (0, 2))
    assert parse_command("build 1 1 0 2 4") == BuildOn((1, 1), (0, 2), 4)
    assert parse_command("starter ann") == ChooseStarter("ann")
    for bad in ("", "move 1 1 5 2", "build 1 1 0 2 7", "fly"):
        with pytest.raises(CommandError):
            parse_command(bad)


def test_play_santorini_is_registered() -> None:
    from meeple.cli.main import build_parser
    from meeple.cli.play import build_app

    args = build_parser().parse_args(["play", "santorini", "--name", "ann"])
    app = build_app(args)
    assert isinstance(app, SantoriniGameApp)
    assert (app.options.port, args.protocol) == (7778, "santorini")

"""Scrabble in the terminal end to end: the app against `meeple bot`'s AI on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from meeple.ai.scrabble import ranked_moves
from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.board import format_square
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.server.app import MeepleServer
from meeple.tui.connection import ConnectOptions
from meeple.tui.scrabble.app import ScrabbleApp
from meeple.tui.scrabble.table import Phase
from meeple.tui.scrabble.twente import connect

SIZE = (110, 34)


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until ``condition()`` holds (fail after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


def message(app: ScrabbleApp) -> str:
    return str(app.query_one("#message").render())


async def test_a_whole_game_typed_into_the_app_against_the_bot(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """Every move typed as notation (the first by keys, a blank lower case), to GAMEOVER."""
    port = server.ports["twente"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.QUEUED)
        bot = asyncio.create_task(play_twente("127.0.0.1", port, "bot", gcide))
        await until(pilot, lambda: app.table.phase is Phase.PLAYING)
        assert set(app.table.players) == {"human", "bot"}
        typed = 0
        while app.table.phase is Phase.PLAYING:
            await until(pilot, lambda: app.table.my_turn or app.table.phase is not Phase.PLAYING)
            if not app.table.my_turn:
                break
            moves = ranked_moves(app.table.board, app.table.rack, gcide, ENGLISH)
            before = len(app.table.log)
            if moves:
                m = moves[0]
                command = f"{format_square(m.x, m.y)} {m.direction.value} {m.word}"
            else:
                command = "pass"
            if typed == 0:
                await pilot.click("#command")
                await pilot.press(*command)
            else:
                app.query_one("#command").value = command  # type: ignore[attr-defined]
            await pilot.press("enter")
            typed += 1
            await until(pilot, lambda b=before: len(app.table.log) > b)  # type: ignore[misc]
            assert not app.table.log[-1].startswith("refused"), app.table.log[-1]
        await until(pilot, lambda: app.table.phase is Phase.OVER)
        results = await asyncio.wait_for(bot, 10)
        assert typed >= 3
        # The app's final scores are the server's, and they add up with the log.
        assert dict(app.table.scores) == results[0].scores
        status = str(app.query_one("#status").render())
        assert "Game over" in status
        assert app.table.result_line() in status

"""A whole Spectrangle game through the app against ``meeple bot spectrangle`` on a real
in-process server (127.0.0.1, port 0).

The test plays the first seat through the app, typed moves and moves made with the
mouse and keys, to the leaderboard; then the app's scores must be the server's stored
record and the bot's leaderboard, and its board the stored game replayed. (This
replaces the earlier test against a stand-in peer built from the engine, written
before the server's Spectrangle listener existed.)
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.patience import PATIENCE

from meeple.clients.spectrangle import play_spectrangle
from meeple.games.spectrangle import replay
from meeple.games.spectrangle.board import coordinates
from meeple.server.app import LISTENERS, MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.rooms.spectrangle import record_from_json
from meeple.server.store.database import Store
from meeple.tui.connection import ConnectOptions
from meeple.tui.spectrangle.adapter import connect
from meeple.tui.spectrangle.app import SpectrangleApp
from meeple.tui.spectrangle.table import Phase
from meeple.tui.spectrangle.widgets import FIELD_WIDTH, TriangleBoard


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


async def test_a_whole_game_against_meeple_bot_on_a_real_server(tmp_path: Path) -> None:
    """The app against ``meeple bot spectrangle``'s greedy AI on an in-process MeepleServer:
    typed and clicked moves to the leaderboard; the app's final scores and board are the
    server's stored record, and the bot saw the same leaderboard."""
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("spectrangle")
    server = MeepleServer(
        config, rng=random.Random(99), listeners={"spectrangle": LISTENERS["spectrangle"]}
    )
    await server.start()
    port = server.ports["spectrangle"]
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"))
    try:
        async with app.run_test(size=(120, 34)) as pilot:
            await until(pilot, lambda: app.table.phase is Phase.QUEUED)
            bot = asyncio.create_task(play_spectrangle("127.0.0.1", port, "bot", players=2))
            await until(pilot, lambda: app.table.phase is not Phase.QUEUED)
            moves = 0
            while app.table.phase is Phase.PLAYING:
                await until(pilot, lambda: app.table.my_turn or app.table.phase is Phase.OVER)
                if app.table.phase is Phase.OVER:
                    break
                log_size = len(app.table.log)
                placements = app.table.board.placements(app.table.hand)
                if placements and moves % 3 == 1:  # by mouse and keys
                    best = max(placements, key=lambda p: p.points)
                    slot = next(i for i, t in enumerate(app.table.hand) if t.same_piece(best.tile))
                    turns = app.table.hand[slot].rotations().index(best.tile)
                    row, k = coordinates(best.index)
                    offset = (FIELD_WIDTH * (5 - row) + FIELD_WIDTH * k + 2, 2 * row)
                    await pilot.click(TriangleBoard, offset=offset)
                    await pilot.press(str(slot + 1), *["r"] * turns, "enter")
                else:
                    if placements:
                        best = max(placements, key=lambda p: p.points)
                        text = f"place {best.tile} on {best.index}"
                    else:
                        text = "skip"
                    await pilot.press("f3")
                    app.query_one("#command").value = text  # type: ignore[attr-defined]
                    await pilot.press("enter")
                moves += 1
                await until(pilot, lambda n=log_size: len(app.table.log) > n)  # type: ignore[misc]
                assert not app.table.log[log_size].startswith("refused"), app.table.log
            results = await asyncio.wait_for(bot, PATIENCE)
            assert app.table.phase is Phase.OVER
            assert "Game over" in str(app.query_one("#status").render())
            assert moves >= 5
            store: Store = server.services.store
            record = store.games(game="spectrangle")[0]
            assert record.end_reason == "finished"
            assert set(record.players) == {"ann", "bot"}
            assert app.table.scores == record.result["scores"]
            assert results[0].leaderboard is not None
            assert dict(results[0].leaderboard) == app.table.scores
            game = replay(record_from_json(record.record))
            assert app.table.board.state() == game.board.state()
    finally:
        await server.stop()

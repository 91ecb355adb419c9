"""The AM27 bot keeps the heartbeat while it thinks a whole second a turn.

The listener here drops a client silent for 0.8 s (ERRATA's 5 s, scaled down), so a
bot whose search held the event loop for its 1 s think time would be dropped on its
first turn: the game would end by the heartbeat, not by a win.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from meeple.clients.santorini import play_santorini
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig
from meeple.server.store.database import Store

ONLY = {"santorini": "meeple.server.edge.santorini:create_listener"}


async def test_a_bot_thinking_one_second_a_turn_keeps_its_heartbeat(tmp_path: Path) -> None:
    config = ServerConfig(
        database=str(tmp_path / "meeple.sqlite3"),
        santorini=SantoriniConfig("lines", ping_interval=0.1, heartbeat_timeout=0.8),
    )
    for name in config.listeners:
        config = config.with_port(name, 0)
    server = MeepleServer(config, listeners=ONLY, rng=random.Random(3))
    await server.start()
    try:
        port = server.ports["santorini"]
        thinker, _quick = await asyncio.wait_for(
            asyncio.gather(
                play_santorini(
                    "127.0.0.1",
                    port,
                    "thinker",
                    seed=1,
                    level="hard",
                    think_time=1.0,
                    ping_interval=0.1,
                ),
                play_santorini("127.0.0.1", port, "quick", seed=2, ping_interval=0.1),
            ),
            120,
        )
    finally:
        await server.stop()
    [result] = thinker
    assert result.winner in {"thinker", "quick"}
    assert result.turns >= 2  # it thought through whole turns, not one
    store = Store(str(tmp_path / "meeple.sqlite3"))
    try:
        [game] = store.games(game="santorini")
    finally:
        store.close()
    assert game.end_reason == "win"

"""The server's Scrabble bots play at their level (issue 37: the bots use the strong player).

``hard`` is the strong player with its simulation and endgame search for the server's
``bot_think_time``, ``medium`` its equity without simulation, ``easy`` a random one of the
top-scoring plays. Each test plays a whole game over loopback against Twente clients and
reads how each of the bot's decisions was made from its debug log.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.patience import GAME_PATIENCE, eventually

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ConfigError, ServerConfig, config_from_mapping
from meeple.server.lobby.bots import ScrabbleBot, add_bot
from meeple.server.lobby.tables import server_lobby

ONLY = {"twente": "meeple.server.edge.twente:create_listener"}
DECIDED = re.compile(r": .* by (\w[\w-]*)$")


async def _server(tmp_path: Path, gcide: Lexicon, think: float) -> MeepleServer:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"), bot_think_time=think)
    for name in config.listeners:
        config = config.with_port(name, 0)
    server = MeepleServer(config, listeners=ONLY, rng=random.Random(37))
    server.services.lexicon = gcide
    await server.start()
    return server


@pytest.fixture
async def quick(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """A Twente server whose bots think 0.05 s a move at most."""
    server = await _server(tmp_path, gcide, 0.05)
    yield server
    await server.stop()


def _methods(caplog: pytest.LogCaptureFixture, bot: ScrabbleBot) -> list[str]:
    found = []
    for record in caplog.records:
        message = record.getMessage()
        if record.name == "meeple.server.lobby.bots" and message.startswith(f"{bot.name}: "):
            match = DECIDED.search(message)
            if match:
                found.append(match.group(1))
    return found


async def _play(server: MeepleServer, gcide: Lexicon, level: str, players: int) -> ScrabbleBot:
    lobby = server_lobby(server.services)
    table = lobby.create_table("scrabble", "twente", players)
    bot = add_bot(server.services, table.id, level=level)
    assert isinstance(bot, ScrabbleBot)
    port = server.ports["twente"]
    names = ["ann", "bea", "cid"][: players - 1]
    results = await asyncio.wait_for(
        asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide, players=players) for n in names)),
        GAME_PATIENCE,
    )
    for [result] in results:
        assert bot.name in result.players
    return bot


@pytest.mark.parametrize(
    ("level", "methods"),
    [
        # easy: a pick among the top-scoring plays; the strong player's equity only
        # when no word fits (an exchange or a pass).
        ("easy", {"top-score", "static"}),
        ("medium", {"static"}),
        # hard: the simulation on most turns; the pre-endgame, endgame and a single
        # candidate's static play near the end.
        ("hard", {"simulation", "simulation-win", "static", "preendgame", "endgame"}),
    ],
)
async def test_each_level_decides_as_its_player(
    quick: MeepleServer,
    gcide: Lexicon,
    caplog: pytest.LogCaptureFixture,
    level: str,
    methods: set[str],
) -> None:
    caplog.set_level(logging.DEBUG, logger="meeple.server.lobby.bots")
    bot = await _play(quick, gcide, level, 2)
    seen = _methods(caplog, bot)
    assert len(seen) >= 3, seen  # a whole game's decisions
    assert {m.removesuffix("-exact") for m in seen} <= methods, seen
    if level == "hard":
        assert {"simulation", "simulation-win"} & set(seen), seen
    if level == "easy":
        assert "top-score" in seen, seen


async def test_at_a_table_of_three_the_hard_bot_plays_its_equity(
    quick: MeepleServer, gcide: Lexicon, caplog: pytest.LogCaptureFixture
) -> None:
    """The simulation and the endgame search see one opponent's rack: with two
    opponents the hard bot plays by equity, never by a misread simulation."""
    caplog.set_level(logging.DEBUG, logger="meeple.server.lobby.bots")
    bot = await _play(quick, gcide, "hard", 3)
    seen = _methods(caplog, bot)
    assert seen, seen
    assert set(seen) == {"static"}, seen


async def test_a_thinking_bot_leaves_the_loop_free(tmp_path: Path, gcide: Lexicon) -> None:
    """A hard bot thinks its whole time in a thread: while its thought is in flight the
    loop turns and the lobby answers."""
    server = await _server(tmp_path, gcide, 1.0)
    game: asyncio.Task[object] | None = None
    try:
        lobby = server_lobby(server.services)
        table = lobby.create_table("scrabble", "twente", 2)
        bot = add_bot(server.services, table.id, level="hard")
        assert isinstance(bot, ScrabbleBot)
        game = asyncio.create_task(
            play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2)
        )
        await eventually(lambda: bool(bot.thinking), "the bot thinking")
        [thought] = list(bot.thinking)
        await asyncio.sleep(0.05)  # the loop turns while the thread thinks
        other = lobby.create_table("scrabble", "twente", 2)  # the lobby answers
        assert lobby.table(other.id) is not None
        assert not thought.done()  # the 1 s simulation still runs beside the loop
        await asyncio.wait_for(asyncio.shield(thought), GAME_PATIENCE)
        assert bot.last_method.startswith(("simulation", "static"))
    finally:
        if game is not None:
            game.cancel()
            await asyncio.gather(game, return_exceptions=True)
        await server.stop()


@pytest.mark.parametrize("value", [0, -1, 61, True, "1"])
def test_bot_think_time_must_be_a_sane_number_of_seconds(value: object) -> None:
    with pytest.raises(ConfigError, match="bot_think_time"):
        config_from_mapping({"bot_think_time": value}).validate()


def test_bot_think_time_is_read_from_the_config_file() -> None:
    config = config_from_mapping({"bot_think_time": 0.25})
    config.validate()
    assert config.bot_think_time == 0.25

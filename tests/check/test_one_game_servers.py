"""Issue 31.8: a server that hosts one game at a time, and one that must be restarted
after each game (``--fresh COMMAND``): the kit follows the AM27 flow (``open: false``,
``active: true``, §2.1-§2.3) and fails no rule such a server follows."""

from __future__ import annotations

import random
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.check.one_game import OneGame

from meeple.check import run_server_kit
from meeple.check.core import Result, Status
from meeple.check.report import causes, to_text
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig

# Checks that start games and end them in each of the ways the kit does: by closing
# the connections, LOSE, a player gone, a whole game.
GAMES = [
    "register-a",
    "register-b",
    "nickname",
    "starter",
    "lose",
    "disconnect",
    "serverstate-after-end",
    "endgame-win",
]


@pytest.fixture
async def am27(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "am27.sqlite3")).only("santorini")
    config = replace(config, santorini=SantoriniConfig(heartbeat_timeout=1.0))
    srv = MeepleServer(config, rng=random.Random(27))
    await srv.start()
    yield srv
    await srv.stop()


async def _run(port: int, ids: list[str], fresh: str | None = None) -> list[Result]:
    return await run_server_kit(
        "santorini",
        "127.0.0.1",
        port,
        lexicon=None,
        wait=1.0,
        only=[f"santorini.server.{i}" for i in ids],
        options={"heartbeat": 1.0},
        fresh=fresh,
    )


async def test_one_game_at_a_time_fails_nothing(am27: MeepleServer) -> None:
    """A server busy (open: false) until the last check's game is over: every check
    passes; the kit met open: false and asked again."""
    async with OneGame(am27.ports["santorini"]) as one:
        results = await _run(one.port, GAMES)
    text = to_text("meeple check server santorini", results)
    assert [r.status for r in results] == [Status.PASS] * len(GAMES), text
    assert one.turned_away > 0  # the quirk was met
    assert one.games >= 6


async def test_a_server_of_one_game_is_said_to_stop(am27: MeepleServer) -> None:
    """A server that stops listening after its first game, run without --fresh: one
    cause, "stopped accepting connections during check" the one after that game."""
    async with OneGame(am27.ports["santorini"], once=True) as one:
        results = await _run(one.port, GAMES)
    text = to_text("meeple check server santorini", results)
    assert "the server stopped accepting connections during check" in text.splitlines()[2], text
    assert not [r for r in results if r.status is Status.FAIL], text
    assert len(causes(results)) == 1, text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_fresh_starts_the_server_for_each_check() -> None:
    """--fresh COMMAND: the same one-game server started before each check and stopped
    after it: every check passes."""
    port = _free_port()
    command = f"{sys.executable} -m tests.check.one_game {port} --once"
    ids = ["register-b", "lose"]
    results = await _run(port, ids, fresh=command)
    text = to_text("meeple check server santorini", results)
    assert [r.status for r in results] == [Status.PASS] * len(ids), text


async def test_fresh_with_a_command_that_fails_says_so() -> None:
    """A --fresh command that exits at once: one cause naming it, with its stderr."""
    port = _free_port()
    command = f"{sys.executable} -c \"import sys; sys.exit('no such game server')\""
    results = await _run(port, ["serverstate", "ping"], fresh=command)
    text = to_text("meeple check server santorini", results)
    assert "the --fresh command did not start the server" in text.splitlines()[2], text
    assert "no such game server" in text, text
    assert all(r.status is Status.COULD_NOT_TEST for r in results), text

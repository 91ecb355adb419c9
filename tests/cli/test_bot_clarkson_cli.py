"""`meeple bot scrabble --protocol clarkson` plays whole games against a running server."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from meeple.cli.main import main
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig


@pytest.fixture
def clarkson_port(tmp_path: Path, gcide: Lexicon) -> Iterator[int]:
    """A real server in a background thread with its own event loop; yields the Clarkson port."""
    loop = asyncio.new_event_loop()
    config = ServerConfig(database=str(tmp_path / "db.sqlite3")).with_port("clarkson", 0)
    server = MeepleServer(config, rng=random.Random(4))
    server.services.resource("scrabble.lexicon", lambda: gcide)
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()
        loop.run_until_complete(server.stop())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    yield server.ports["clarkson"]
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_three_clarkson_bots_play_to_the_end(
    clarkson_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three bot commands sit at one table, READY when all are there, and print one result."""
    codes: list[int] = []

    def bot(name: str) -> None:
        args = ["bot", "scrabble", "--protocol", "clarkson", "--players", "3"]
        codes.append(main([*args, "--port", str(clarkson_port), "--name", name]))

    threads = [threading.Thread(target=bot, args=(n,)) for n in ("ann", "ben", "cy")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [0, 0, 0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert len(set(lines)) == 1
    words = lines[0].split()
    assert words[0] == "WIN:"
    assert sorted(words[1::2]) == ["ann", "ben", "cy"]


def test_lone_clarkson_bot_plays_two_games(
    clarkson_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone player may play (RFC §3.8); --games 2 says READY again after WINNER."""
    args = ["bot", "scrabble", "--protocol", "clarkson", "--players", "1", "--games", "2"]
    assert main([*args, "--port", str(clarkson_port), "--name", "solo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("WIN: solo ") for line in lines)

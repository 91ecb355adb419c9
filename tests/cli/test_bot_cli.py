"""`meeple bot scrabble` plays whole games against a running server."""

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
def running_server(tmp_path: Path, gcide: Lexicon) -> Iterator[int]:
    """A real server in a background thread with its own event loop; yields the Twente port."""
    loop = asyncio.new_event_loop()
    config = ServerConfig(database=str(tmp_path / "db.sqlite3"))
    for name in config.listeners:  # every listener on a free port, not its default
        config = config.with_port(name, 0)
    server = MeepleServer(config, rng=random.Random(3))
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
    yield server.ports["twente"]
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_two_bot_commands_play_a_game_to_the_end(
    running_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two `meeple bot scrabble` runs (threads) queue, play and print the final scores."""
    codes: list[int] = []

    def bot(name: str) -> None:
        args = ["bot", "scrabble", "--port", str(running_server), "--name", name]
        codes.append(main(args))

    threads = [threading.Thread(target=bot, args=(n,)) for n in ("ann", "ben")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [0, 0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0] == lines[1]  # both saw the same result
    words = lines[0].split()
    assert words[0] == "WIN:"
    assert sorted(words[1::2]) == ["ann", "ben"]
    assert all(score.isdigit() for score in words[2::2])


def test_bot_reports_a_refused_connection(capsys: pytest.CaptureFixture[str]) -> None:
    """No server at the address: a one-line error and exit code 1, no traceback."""
    assert main(["bot", "scrabble", "--port", "1", "--name", "x"]) == 1
    assert "meeple bot:" in capsys.readouterr().err

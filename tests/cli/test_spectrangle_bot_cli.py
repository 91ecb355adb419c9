"""`meeple bot spectrangle` plays whole games against a running server."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from meeple.cli.main import main
from meeple.server.app import MeepleServer


@pytest.fixture
def spectrangle_port(threaded_server: Callable[..., MeepleServer]) -> int:
    """The port of a real server running the Spectrangle listener."""
    return threaded_server("spectrangle").ports["spectrangle"]


def test_three_bot_commands_play_two_games(
    spectrangle_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three `meeple bot spectrangle --players 3 --games 2` runs print the same leaderboards."""
    codes: list[int] = []

    def bot(name: str) -> None:
        args = ["bot", "spectrangle", "--port", str(spectrangle_port), "--name", name]
        codes.append(main([*args, "--players", "3", "--games", "2"]))

    threads = [threading.Thread(target=bot, args=(n,)) for n in ("ann", "ben", "cat")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [0, 0, 0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6
    assert len(set(lines)) == 2  # everyone saw the same two games end
    for line in lines:
        words = line.split()
        assert words[0] == "finished:"
        assert sorted(words[1::2]) == ["ann", "ben", "cat"]
        points = [int(p) for p in words[2::2]]
        assert points == sorted(points, reverse=True)


def test_bot_reports_a_refused_connection(capsys: pytest.CaptureFixture[str]) -> None:
    """No server at the address: a one-line error and exit code 1, no traceback."""
    assert main(["bot", "spectrangle", "--port", "1", "--name", "x"]) == 1
    assert "meeple bot:" in capsys.readouterr().err


def test_bot_refuses_an_invalid_name(
    spectrangle_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name the protocol forbids (tile notation) is an error line and exit code 1."""
    assert main(["bot", "spectrangle", "--port", str(spectrangle_port), "--name", "RGB4"]) == 1
    assert "meeple bot:" in capsys.readouterr().err

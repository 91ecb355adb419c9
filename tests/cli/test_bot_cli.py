"""`meeple bot scrabble` plays whole games against a running server."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from meeple.cli.main import main
from meeple.server.app import MeepleServer


@pytest.fixture
def running_server(threaded_server: Callable[..., MeepleServer]) -> int:
    """The Twente port of a real server running every listener."""
    return threaded_server().ports["twente"]


def test_two_bot_commands_play_a_game_to_the_end(
    running_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two `meeple bot scrabble` runs (threads) queue, play and print the final scores."""
    codes: list[int] = []

    def bot(name: str) -> None:
        args = [
            "bot",
            "scrabble",
            "--port",
            str(running_server),
            "--name",
            name,
            "--think-time",
            "0.05",
            "--lexicon",
            "gcide",  # the server's (the fixture's); Wordnik is the CLI's default
        ]
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
    line, _, who = lines[0].partition(" (")
    words = line.split()
    assert words[0] == "WIN:"  # Twente's kind of end
    assert sorted(words[1::2]) == ["ann", "ben"]
    assert all(score.lstrip("-").isdigit() for score in words[2::2])  # racks may outweigh
    scores = dict(zip(words[1::2], map(int, words[2::2]), strict=True))
    top = max(scores.values())
    winners = [n for n, s in scores.items() if s == top]
    expected = f"{winners[0]} wins)" if len(winners) == 1 else f"a draw: {', '.join(winners)})"
    assert who == expected, lines[0]  # who won, said in words


def test_bot_reports_a_refused_connection(capsys: pytest.CaptureFixture[str]) -> None:
    """No server at the address: a one-line error and exit code 1, no traceback."""
    assert main(["bot", "scrabble", "--port", "1", "--name", "x"]) == 1
    assert "meeple bot:" in capsys.readouterr().err

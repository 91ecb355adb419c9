"""`meeple bot scrabble --protocol clarkson` plays whole games against a running server."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from meeple.cli.main import main
from meeple.server.app import MeepleServer


@pytest.fixture
def clarkson_port(threaded_server: Callable[..., MeepleServer]) -> int:
    """The port of a real server running the Clarkson listener."""
    return threaded_server("clarkson", seed=4).ports["clarkson"]


def test_three_clarkson_bots_play_to_the_end(
    clarkson_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three bot commands sit at one table, READY when all are there, and print one result."""
    codes: list[int] = []

    def bot(name: str) -> None:
        args = [
            "bot",
            "scrabble",
            "--protocol",
            "clarkson",
            "--players",
            "3",
            "--think-time",
            "0.05",
        ]
        codes.append(main([*args, "--port", str(clarkson_port), "--name", name]))

    threads = [threading.Thread(target=bot, args=(n,)) for n in ("ann", "ben", "cy")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)  # a bound, not a figure: a loaded `make test` makes 30 turns slow
    assert codes == [0, 0, 0]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert len(set(lines)) == 1
    line, _, who = lines[0].partition(" (")
    words = line.split()
    assert words[0] == "WIN:"
    assert sorted(words[1::2]) == ["ann", "ben", "cy"]
    scores = dict(zip(words[1::2], map(int, words[2::2]), strict=True))
    best = {n for n, x in scores.items() if x == max(scores.values())}
    if len(best) == 1:
        assert who == f"{best.pop()} wins)", lines[0]  # who won, in words
    else:
        assert who.startswith("a draw: "), lines[0]
        assert set(who.removeprefix("a draw: ").rstrip(")").split(", ")) == best


def test_lone_clarkson_bot_plays_two_games(
    clarkson_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone player may play (RFC §3.8); --games 2 says READY again after WINNER."""
    args = ["bot", "scrabble", "--protocol", "clarkson", "--players", "1", "--games", "2"]
    args += ["--think-time", "0.05"]
    assert main([*args, "--port", str(clarkson_port), "--name", "solo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("WIN: solo ") for line in lines)
    assert all(line.endswith(" (solo wins)") for line in lines)  # who won, in words

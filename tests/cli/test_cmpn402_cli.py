"""`meeple bot scrabble --protocol cmpn402` and `meeple cmpn402` against a real referee."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace

import pytest

from meeple.cli.main import main
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig


@pytest.fixture
def referee_port(threaded_server: Callable[..., MeepleServer]) -> int:
    """The port of a real CMPN402 referee whose admin token is ``x``."""
    base = ServerConfig()
    server = threaded_server("cmpn402", seed=5, cmpn402=replace(base.cmpn402, admin_token="x"))
    return server.ports["cmpn402"]


def test_two_bots_play_a_game(referee_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Both bots exit 0 after one game and print the same scores from each side."""
    args = ["bot", "scrabble", "--protocol", "cmpn402", "--port", str(referee_port)]
    args += ["--think-time", "0.05"]
    codes: list[int] = []
    other = threading.Thread(target=lambda: codes.append(main([*args, "--name", "ann"])))
    other.start()
    codes.append(main([*args, "--name", "ben"]))
    other.join(60)
    assert codes == [0, 0]
    lines = sorted(capsys.readouterr().out.splitlines())
    assert len(lines) == 2
    assert all(line.startswith("all_tiles_used: ") for line in lines)
    ann, ben = (line.split() for line in lines)
    assert (ann[2], ann[4]) == (ben[4], ben[2])


def test_bot_without_a_referee_fails_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    """No server: exit 1 with a message, at once."""
    code = main(["bot", "scrabble", "--protocol", "cmpn402", "--port", "1", "--name", "x"])
    assert code == 1
    assert "cannot reach" in capsys.readouterr().err


def test_admin_commands(referee_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    """`meeple cmpn402 ACTION` presses the buttons (POST); a wrong token is refused."""
    base = ["cmpn402", "--port", str(referee_port)]
    assert main([*base, "status", "--token", "x"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["referee"]["state"] == "INIT"
    assert out["status"]["state"] == "waiting"
    assert main([*base, "pause", "--token", "x"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == "paused"
    assert main([*base, "swap", "--token", "x"]) == 0
    assert "seat 2" in json.loads(capsys.readouterr().out)["result"]
    assert main([*base, "resume", "--token", "x"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == "resumed"
    assert main([*base, "resume", "--token", "x"]) == 1
    assert "409 not paused" in capsys.readouterr().err
    assert main([*base, "stop", "--token", "wrong"]) == 1
    assert "403" in capsys.readouterr().err
    assert main([*base, "standings", "--token", "x"]) == 0
    assert capsys.readouterr().out.split()[:2] == ["#", "agent"]
    assert main([*base, "withdraw", "--token", "x"]) == 2  # withdraw needs --name
    assert main([*base, "withdraw", "--name", "a", "--token", "x"]) == 1
    assert "contest" in capsys.readouterr().err

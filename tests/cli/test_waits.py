"""cli/waits.py: every ``meeple bot`` takes its patience and runs its games alike: bad
``--notice``/``--give-up`` said (exit 2), a server problem said (exit 1)."""

from __future__ import annotations

import argparse
import asyncio
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.cli.waits import add_patience_arguments, bot_patience, play_games
from meeple.clients.watch import NoAnswer


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_patience_arguments(parser)
    return parser.parse_args(list(argv))


@given(notice=st.floats(-1e6, 1e6), give_up=st.floats(-1e6, 1e6))
def test_bot_patience_says_why_it_makes_none(notice: float, give_up: float) -> None:
    """Any numbers: a Patience, or None with the reason (never an exception)."""
    args = argparse.Namespace(notice=notice, give_up=give_up)
    patience = bot_patience(args)
    if patience is not None:
        assert patience.notice == notice


def test_bot_patience_prints_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert bot_patience(_args("--notice", "0")) is None
    assert capsys.readouterr().err.startswith("meeple bot: --notice/--give-up: ")
    assert bot_patience(_args()) is not None


async def _refused(port: int) -> None:
    await asyncio.open_connection("127.0.0.1", port)


async def _no_answer() -> None:
    raise NoAnswer("waited 120 s for WELCOME; no answer: giving up")


async def _played() -> list[str]:
    return ["won"]


class _Refused(Exception):
    pass


async def _refused_by_server() -> None:
    raise _Refused("name taken")


def test_play_games_says_a_server_problem(capsys: pytest.CaptureFixture[str]) -> None:
    """A refused connection, an answer never given and the client's own error are said on
    stderr and give None; other errors are not swallowed; games played give their result."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: the connection is refused
        assert play_games(_refused(port), ()) is None
    assert play_games(_no_answer(), ()) is None
    assert play_games(_refused_by_server(), (_Refused,)) is None
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3
    assert all(line.startswith("meeple bot: ") for line in err)
    assert err[-1] == "meeple bot: name taken"
    with pytest.raises(_Refused):
        play_games(_refused_by_server(), ())
    assert play_games(_played(), ()) == ["won"]

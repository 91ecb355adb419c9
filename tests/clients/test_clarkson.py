"""The Clarkson bot acts on each message with what it knew at that message.

Regression: the client used to update its board and turn for everything in one read
before handing out the first message. A read holding ``TURN xa``, xa's move and
``TURN xb`` made bot xb act on ``TURN xa`` as if it were its own turn (with the board
after xa's move), then again on ``TURN xb``: the same move twice, answered NOK, or a
tile on an occupied square.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys

import pytest
from tests.clients.peers import serve
from tests.patience import PATIENCE

from meeple.clients.clarkson import play_clarkson
from meeple.clients.watch import NoAnswer, Patience
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.clarkson.messages import (
    BoardPush,
    Goodbye,
    Ok,
    Score,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    Winner,
    meeple_hello,
)
from meeple.server.clock import VirtualClock

COMMANDS = (b"PLACE", b"PASS", b"EXCHANGE")


async def test_one_read_with_two_turns_gets_one_move(gcide: Lexicon) -> None:
    after = Board()
    for x, letter in enumerate("CAT", start=6):
        after.place(x, 7, letter)
    received: list[bytes] = []
    done = asyncio.Event()

    async def referee(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(meeple_hello("test").encode())
        await reader.readline()  # the bot's HELLO
        writer.write(Ok("send a username").encode())
        await reader.readline()  # USERSET xb
        writer.write(UserChange("127.0.0.1", "xb").encode() + UserJoin("xa").encode())
        assert (await reader.readline()).startswith(b"READY")
        # The whole start and xa's first move in one write (so, most likely, one read).
        writer.write(
            b"".join(
                m.encode()
                for m in (
                    Ok("ready"),
                    Starting(),
                    Score(0, "xa"),
                    Score(0, "xb"),
                    BoardPush.from_board(Board()),
                    Tiles("SEATRIN"),
                    Turn("xa"),
                    Score(10, "xa"),
                    BoardPush.from_board(after),
                    Turn("xb"),
                )
            )
        )
        line = await reader.readline()
        received.append(line)
        writer.write(Ok("Turn Successful").encode() + Tiles("EEEEEEE").encode())
        writer.write(Score(99, "xb").encode() + BoardPush.from_board(after).encode())
        # Anything the bot sends now (before WINNER) is a second move.
        try:
            extra = await asyncio.wait_for(reader.readline(), 0.5)
        except TimeoutError:
            extra = b""
        received.append(extra)
        writer.write(Winner(99, "xb").encode())
        while line := await reader.readline():
            if line.startswith(b"QUIT"):
                writer.write(Goodbye().encode())
                break
        writer.close()
        done.set()

    server = await asyncio.start_server(referee, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        [result] = await asyncio.wait_for(
            play_clarkson("127.0.0.1", port, "xb", gcide, players=2), 30
        )
        await asyncio.wait_for(done.wait(), PATIENCE)
    finally:
        server.close()
        await server.wait_closed()
    first, extra = received
    assert first.split(b" ")[0].strip() in COMMANDS
    assert extra == b"", f"a second move after one TURN: {extra!r}"
    if first.startswith(b"PLACE"):
        # Played on the board after xa's move: no tile on C, A or T.
        for x in (6, 7, 8):
            assert f",{x},7)".encode() not in first
    assert result.refused == 0


# --- issue 31: a server that never answers READY -----------------------------------------


async def test_ready_never_answered(gcide: Lexicon, caplog: pytest.LogCaptureFixture) -> None:
    """A server that takes READY and says nothing more: the bot says it is waiting after
    the notice time, gives up at its bound (virtual time) with a clear NoAnswer, and
    leaves with QUIT (it used to wait until killed)."""
    clock = VirtualClock()
    readied = asyncio.Event()
    heard: list[bytes] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(meeple_hello("test").encode())
        await reader.readline()  # the bot's HELLO
        writer.write(Ok("send a username").encode())
        await reader.readline()  # USERSET bot
        writer.write(UserChange("127.0.0.1", "bot").encode())
        assert (await reader.readline()).startswith(b"READY")
        readied.set()
        while line := await reader.readline():  # never a word back
            heard.append(line)

    caplog.set_level(logging.WARNING, logger="meeple.clients.clarkson")
    async with serve(silent) as port:
        bot = asyncio.create_task(
            play_clarkson(
                "127.0.0.1", port, "bot", gcide, players=1, patience=Patience(10, 60, clock)
            )
        )
        await asyncio.wait_for(readied.wait(), PATIENCE)
        await clock.advance(9)
        assert "waiting" not in caplog.text
        await clock.advance(1)
        assert "waiting 10 s for OK to our READY; no answer yet" in caplog.text
        await clock.advance(50)
        with pytest.raises(NoAnswer, match="waited 60 s for OK to our READY; no answer"):
            await asyncio.wait_for(bot, 10)
    assert heard == [b"QUIT\r\n"]
    assert "waiting 20 s for OK to our READY" in caplog.text
    assert "waiting 40 s for OK to our READY" in caplog.text


@pytest.mark.parametrize(
    ("someone_joins", "awaited"),
    [
        (True, "STARTING (everyone at the table READY)"),
        (False, "another player to join the table (USERJOIN)"),
    ],
)
async def test_waits_on_other_players_are_said_but_never_given_up(
    gcide: Lexicon, caplog: pytest.LogCaptureFixture, someone_joins: bool, awaited: str
) -> None:
    """A bot for a 2-player table waits on the others: after OK to its READY for
    STARTING, and alone at the table for someone to join before its READY (§3.8; it said
    nothing at all there before). Either wait is said as it goes on, and never given
    up at the bound: a table fills when it fills."""
    clock = VirtualClock()
    seated = asyncio.Event()

    async def slow_table(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(meeple_hello("test").encode())
        await reader.readline()
        writer.write(Ok("send a username").encode())
        await reader.readline()
        writer.write(UserChange("127.0.0.1", "bot").encode())
        if someone_joins:
            writer.write(UserJoin("slow").encode())
            assert (await reader.readline()).startswith(b"READY")
            writer.write(Ok("when everyone is ready the game will start").encode())
        seated.set()
        while await reader.readline():
            pass

    caplog.set_level(logging.WARNING, logger="meeple.clients.clarkson")
    async with serve(slow_table) as port:
        bot = asyncio.create_task(
            play_clarkson(
                "127.0.0.1", port, "bot", gcide, players=2, patience=Patience(10, 60, clock)
            )
        )
        await asyncio.wait_for(seated.wait(), PATIENCE)
        await clock.advance(200)
        assert not bot.done()
        text = caplog.text
        assert f"waiting 10 s for {awaited}; no answer yet" in text
        assert f"waiting 160 s for {awaited}" in text
        assert "giving up" not in text
        bot.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await bot


async def test_the_cli_gives_up_with_a_message() -> None:
    """``meeple bot scrabble --protocol clarkson --notice 0.2 --give-up 0.6`` against a
    server that never answers READY: the waits in the log, then exit 1 with one line."""
    readied = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(meeple_hello("test").encode())
        await reader.readline()
        writer.write(Ok("send a username").encode())
        await reader.readline()
        writer.write(UserChange("127.0.0.1", "bot").encode())
        assert (await reader.readline()).startswith(b"READY")
        readied.set()
        while await reader.readline():
            pass

    async with serve(silent) as port:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "meeple",
            "bot",
            "scrabble",
            "--protocol",
            "clarkson",
            "--players",
            "1",
            "--lexicon",
            "gcide",
            "--name",
            "bot",
            "--port",
            str(port),
            "--notice",
            "0.2",
            "--give-up",
            "0.6",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert readied.is_set()
    assert proc.returncode == 1
    text = err.decode()
    # The seconds in the lines are measured on the real clock: 0.3 s at load 20 (issue 33).
    assert re.search(r"waiting 0\.\d s for OK to our READY; no answer yet", text), text
    last = text.strip().splitlines()[-1]
    assert re.match(r"meeple bot: waited (0\.[6-9]|\d+\.\d) s for OK to our READY", last), last

"""The Clarkson bot acts on each message with what it knew at that message.

Regression: the client used to update its board and turn for everything in one read
before handing out the first message. A read holding ``TURN xa``, xa's move and
``TURN xb`` made bot xb act on ``TURN xa`` as if it were its own turn (with the board
after xa's move), then again on ``TURN xb``: the same move twice, answered NOK, or a
tile on an occupied square.
"""

from __future__ import annotations

import asyncio

from meeple.clients.clarkson import play_clarkson
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
        await asyncio.wait_for(done.wait(), 10)
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

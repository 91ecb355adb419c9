"""The Spectrangle bot against a scripted server whose bag the bot counts as empty."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from tests.patience import PATIENCE

from meeple.ai.spectrangle import turn_options
from meeple.clients.spectrangle import play_spectrangle
from meeple.games.spectrangle import TILE_SET, Board, Exchange, Place, Skip, Tile

HAND = "RRR6 GGB5 YBP3 WWW1"


async def _readline(reader: asyncio.StreamReader) -> str:
    return (await asyncio.wait_for(reader.readline(), PATIENCE)).decode().rstrip("\n")


async def _script(
    exchange_reply: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> list[str]:
    """Fill 28 fields with the other player's moves, so that with 8 tiles in hands the
    bot counts 36 - 28 - 8 = 0 in the bag, then tell the bot it must skip."""
    heard = [await _readline(reader)]  # connect
    writer.write(b"welcome\n")
    heard.append(await _readline(reader))  # request 2
    lines = ["start with zed bot", "order zed bot"]
    lines += [f"move zed {tile} {i} 1" for i, tile in enumerate(TILE_SET[8:36])]
    lines.append(f"tiles bot {HAND} zed BBB6 PPP6 YYG5 GRP1 skip bot")
    writer.write("".join(f"{line}\n" for line in lines).encode())
    heard.append(await _readline(reader))  # the bot's first answer
    if heard[-1].startswith("exchange"):
        writer.write(f"{exchange_reply}\n".encode())
        if exchange_reply == "invalidMove":
            heard.append(await _readline(reader))  # what it does next
            writer.write(b"player skipped bot\n")
    writer.write(b"game finished leaderboard zed 28 bot 0\n")
    await writer.drain()
    return heard


@pytest.fixture
async def scripted(request: pytest.FixtureRequest) -> AsyncIterator[tuple[int, list[list[str]]]]:
    transcripts: list[list[str]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, TimeoutError):
            transcripts.append(await _script(request.param, reader, writer))
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1], transcripts
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize(
    ("scripted", "expected"),
    [
        ("replace bot RRR6 with PPR4", ["exchange RRR6"]),
        ("invalidMove", ["exchange RRR6", "skip"]),
    ],
    indirect=["scripted"],
)
async def test_bot_exchanges_though_it_counts_an_empty_bag(
    scripted: tuple[int, list[list[str]]], expected: list[str]
) -> None:
    """Unable to place, the bot offers an exchange even when its own count of the bag is
    0, and falls back to skip only when the server refuses the exchange."""
    port, transcripts = scripted
    results = await asyncio.wait_for(play_spectrangle("127.0.0.1", port, "bot"), PATIENCE)
    assert results[0].leaderboard == (("zed", 28), ("bot", 0))
    assert transcripts == [["connect bot", "request 2", *expected]]


def test_turn_options_end_with_exchange_then_skip() -> None:
    """Placements by score first, then an exchange of the most valuable tile, then skip;
    with must_skip only the last two."""
    hand = [Tile.parse(t) for t in HAND.split()]
    options = turn_options(Board(), hand)
    places = [o for o in options if isinstance(o, Place)]
    assert places
    assert [p.tile.value for p in places] == sorted((p.tile.value for p in places), reverse=True)
    assert options[-2:] == [Exchange(0, Tile.parse("RRR6")), Skip(0)]
    assert turn_options(Board(), hand, must_skip=True) == [Exchange(0, Tile.parse("RRR6")), Skip(0)]
    assert turn_options(Board(), []) == [Skip(0)]

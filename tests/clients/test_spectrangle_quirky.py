"""The Spectrangle bot against a 1.3-style server (issue 22, item 16): a game may end in
any in-game state, and a move of the bot's reported without a tiles line still leaves
the placed tile out of the bot's hand."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from tests.clients.peers import Chunking, chunkings, serve, write_in_pieces
from tests.patience import PATIENCE

from meeple.clients.spectrangle import BotResult, play_spectrangle
from meeple.games.spectrangle import Tile

BOT_HAND = ["RRR6", "GGB5", "YBP3", "WWW1"]
TILES = "tiles bot {} zed BBB6 PPP6 YYG5 GRP1 turn {}\n"
FINISHED = "game finished leaderboard bot 6 zed 0\n"


@dataclass
class Peer:
    chunking: Chunking = ()
    refused: list[str] = field(default_factory=list)  # bot lines the server refused
    late: list[str] = field(default_factory=list)  # turn commands after the end
    heard: list[str] = field(default_factory=list)


async def _line(reader: asyncio.StreamReader) -> str:
    data = await asyncio.wait_for(reader.readline(), PATIENCE)
    if not data:
        raise ConnectionResetError("the bot hung up")
    return data.decode().rstrip("\n")


async def quirky_spectrangle(
    peer: Peer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A 1.3 server: no tiles line after the bot's move, the stand-alone ``skip bot``
    for "you must skip", and the end of the game right behind it."""
    hand = list(BOT_HAND)
    peer.heard.append(await _line(reader))  # connect bot
    writer.write(b"welcome\n")
    peer.heard.append(await _line(reader))  # request 2
    opening = "start with bot zed\norder bot zed\n" + TILES.format(" ".join(hand), "bot")
    writer.write(opening.encode())
    while True:  # the bot's placement; refused while it names a tile it does not hold
        line = await _line(reader)
        peer.heard.append(line)
        _, text, _, index = line.split()
        tile = Tile.parse(text)
        held = [t for t in hand if Tile.parse(t).same_piece(tile)]
        if held:
            hand.remove(held[0])
            break
        peer.refused.append(line)
        writer.write(b"invalidMove\n")
    # 1.3: the move, and no tiles line; then zed plays and the bot must skip.
    burst = f"move bot {text} {index} {tile.value}\nmove zed BBB6 1 6\nskip bot\n"
    await write_in_pieces(writer, burst.encode(), peer.chunking)
    while True:  # the bot's answer to "skip bot": an exchange of a tile it holds, or skip
        line = await _line(reader)
        peer.heard.append(line)
        if line.startswith("exchange"):
            old = Tile.parse(line.split()[1])
            if not any(Tile.parse(t).same_piece(old) for t in hand):
                peer.refused.append(line)
                writer.write(b"invalidMove\n")
                continue
            writer.write(f"replace bot {old} with GGG6\n".encode())
        else:
            writer.write(b"skip bot\n")  # 1.3 echoes a chosen skip the same way
        break
    # The bot must skip again, and the game ends in the same breath.
    await write_in_pieces(writer, f"skip bot\n{FINISHED}".encode(), peer.chunking)
    while True:  # anything after the end: a turn command that crossed it on the wire
        line = await _line(reader)
        peer.late.append(line)
        writer.write(b"invalidCommand\n")


async def _play(peer: Peer) -> list[BotResult]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await quirky_spectrangle(peer, reader, writer)

    async with serve(handle) as port:
        return await asyncio.wait_for(play_spectrangle("127.0.0.1", port, "bot"), PATIENCE)


def test_game_end_behind_a_13_skip_and_a_move_without_tiles() -> None:
    """The bot's hand loses the tile it placed though no tiles line came, and the game's
    end right behind a ``skip bot`` ends the bot's game (not a hang)."""
    peer = Peer()
    results = asyncio.run(_play(peer))
    assert [r.leaderboard for r in results] == [(("bot", 6), ("zed", 0))]
    assert peer.refused == []
    assert peer.late == []  # one read held both lines: nothing was sent after the end


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunking=chunkings())
def test_any_split_of_the_13_servers_lines(chunking: Chunking) -> None:
    """However the server's lines are cut across reads, the game ends for the bot and it
    never offers a tile it has already placed."""
    peer = Peer(chunking)
    results = asyncio.run(_play(peer))
    assert len(results) == 1
    assert peer.refused == []
    assert len(peer.late) <= 1  # at most the one turn command that crossed the end

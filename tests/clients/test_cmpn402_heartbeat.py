"""The CMPN402 agent answers pings while it thinks (issue 22, item 12): a strict test
referee with a 1 s heartbeat (a ping each second, dropped if its pong is over 1 s late)
plays three turns against the built-in agent thinking 1 s a move."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from meeple.clients.cmpn402 import BuiltinAgent, GameResult, play
from meeple.clients.scrabble_bot import configure
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.cmpn402 import (
    EndMessage,
    EndReason,
    ExchangeMove,
    ExchangeTiles,
    Name,
    NameRequest,
    NoChallengeTiles,
    PassNotice,
    PlayMove,
    Start,
    decode_client,
)

HEARTBEAT = 1.0  # the course judge's default: a ping a second, its pong within a second
THINK = 1.0  # seconds the agent thinks a move
TURNS = 3
EMPTY = tuple("." * 15 for _ in range(15))
MS = 600_000


@dataclass
class Referee:
    latencies: list[tuple[float, bool]] = field(default_factory=list)  # (s, while thinking)
    dropped: bool = False
    moves: list[object] = field(default_factory=list)
    thinking: bool = False


async def _heartbeat(ref: Referee, ws: ServerConnection) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT)
        during = ref.thinking
        sent = time.monotonic()
        try:
            waiter = await ws.ping()
            await asyncio.wait_for(waiter, HEARTBEAT)
        except TimeoutError:
            ref.dropped = True
            await ws.close(1011, "no pong within the heartbeat")
            return
        ref.latencies.append((time.monotonic() - sent, during))


async def _referee(ref: Referee, ws: ServerConnection) -> None:
    beat = asyncio.create_task(_heartbeat(ref, ws))
    try:
        await ws.send(NameRequest().encode())
        assert isinstance(decode_client(await ws.recv(decode=False)), Name)
        turn: object = Start(1, "RETAINS", EMPTY, 0, 0, MS, MS)
        for _ in range(TURNS):
            ref.thinking = True  # the agent thinks from the message that gives it the turn
            await ws.send(turn.encode())  # type: ignore[attr-defined]
            move = decode_client(await ws.recv(decode=False))
            ref.thinking = False
            ref.moves.append(move)
            if isinstance(move, PlayMove):
                await ws.send(
                    NoChallengeTiles("EIOU"[: len(move.tiles)].ljust(len(move.tiles), "A")).encode()
                )
            elif isinstance(move, ExchangeMove):
                await ws.send(ExchangeTiles("E" * len(move.tiles)).encode())
            turn = PassNotice(MS, MS)  # the other agent passes: our turn again
        await ws.send(EndMessage(EndReason.STOPPED, 0, 0).encode())
        with contextlib.suppress(ConnectionClosed):
            await ws.recv()
    except ConnectionClosed:
        pass
    finally:
        beat.cancel()


def test_pongs_while_thinking(gcide: Lexicon) -> None:
    """Three 1 s thinks under a 1 s heartbeat: never dropped, and every ping sent while
    the agent thought was answered at once, not when the thought ended."""
    ref = Referee()

    async def scenario() -> list[GameResult]:
        async def handler(ws: ServerConnection) -> None:
            await _referee(ref, ws)

        async with serve(handler, "127.0.0.1", 0, ping_interval=None) as server:
            port = server.sockets[0].getsockname()[1]
            agent = BuiltinAgent(gcide)
            return await asyncio.wait_for(
                play(f"ws://127.0.0.1:{port}", "thinker", agent, reconnect_for=0), 30
            )

    with configure("strong", THINK):
        results = asyncio.run(scenario())
    assert not ref.dropped
    assert len(ref.moves) == TURNS
    assert [r.reason for r in results] == [EndReason.STOPPED]
    during = [latency for latency, thinking in ref.latencies if thinking]
    assert len(during) >= TURNS - 1  # a ping a second lands in most 1 s thinks
    assert max(during) < 0.3, ref.latencies

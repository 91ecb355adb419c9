"""Restart recovery: ``python benchmarks/recovery.py``.

How soon games go on after a crash (docs/durability.md). A real ``meeple serve`` on a
fresh SQLite file gets ``--games`` browser-v-bot Scrabble games (each browser seat a
WebSocket client that has played ``--moves`` moves), and, with ``--cmpn402``, a CMPN402
game between two agents; it is killed with SIGKILL and started again on the same file.
Printed: the new process's start-up (exec to listening: the lexicon, the listeners and
replaying every open log), and from the moment it listens, per browser game, until its
seat is back with the whole game in a ``seat`` view (rejoin sent as soon as the port
answers: a real page retries every second), p50/p99/max; and for a CMPN402 game (two
agents that passed a few turns before the crash) until both have START
again after sending NAME (the spec's "Disconnection"). The issue's anchor: a browser
game and a CMPN402 game go on within 2 s of the new process listening.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

from meeple.protocols.cmpn402.messages import (
    Name,
    NameRequest,
    PassMove,
    Start,
    decode_server,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serve import Serve, next_of, web_client


async def _browser_game(port: int, name: str, moves: int) -> str:
    """A browser seat v a server bot, ``moves`` passes played; its rejoin token."""
    ws = await web_client(port)
    await ws.send(
        json.dumps(
            {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": name}
        )
    )
    seated = await next_of(ws, "seated")
    await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
    played = 0
    while played < moves:
        view = (await next_of(ws, "seat"))["data"]
        if view["over"]:
            break
        if view["turn"] == view["you"] and view["pending"] is None:
            await ws.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
            played += 1
    token: str = seated["token"]
    return token


async def _rejoin(port: int, token: str) -> float:
    """Seconds from now until the seat is back with a whole view."""
    start = time.perf_counter()
    ws = await web_client(port)
    await ws.send(json.dumps({"type": "rejoin", "token": token}))
    await next_of(ws, "seat")
    took = time.perf_counter() - start
    await ws.close()
    return took


async def _agent(port: int, name: str) -> Any:
    ws = await websockets.connect(f"ws://127.0.0.1:{port}", compression=None)
    assert isinstance(decode_server(await ws.recv()), NameRequest)
    await ws.send(Name(name).encode())
    return ws


async def _cmpn402_game(port: int, turns: int) -> None:
    """Two agents pass in turn ``turns`` times (fewer than six: the game goes on)."""
    a, b = await _agent(port, "ann"), await _agent(port, "ben")
    starts = {ws: decode_server(await ws.recv()) for ws in (a, b)}
    order = sorted((a, b), key=lambda ws: starts[ws].order)  # type: ignore[union-attr]
    for turn in range(min(turns, 5)):
        mover, other = order[turn % 2], order[1 - turn % 2]
        await mover.send(PassMove().encode())
        await other.recv()  # the notice


async def _cmpn402_resume(port: int) -> float:
    """Seconds from now until both agents, named again, have their START."""
    start = time.perf_counter()
    a, b = await asyncio.gather(_agent(port, "ann"), _agent(port, "ben"))
    for ws in (a, b):
        assert isinstance(decode_server(await asyncio.wait_for(ws.recv(), 30)), Start)
    took = time.perf_counter() - start
    await asyncio.gather(a.close(), b.close())
    return took


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(games: int, moves: int, cmpn402: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "db.sqlite3"
        first = Serve(database)
        try:
            web = first.ports["web"]
            tokens = await asyncio.gather(
                *(_browser_game(web, f"b{i}", moves) for i in range(games))
            )
            if cmpn402:
                await _cmpn402_game(first.ports["cmpn402"], cmpn402)
        finally:
            first.kill()
        exec_at = time.perf_counter()
        second = Serve(database)
        started = second.listening_at - exec_at
        try:
            listening = second.listening_at
            waits = await asyncio.gather(*(_rejoin(second.ports["web"], t) for t in tokens))
            since = time.perf_counter() - listening
            print(f"meeple serve restart with {games} open browser games ({moves} moves each)")
            print(
                f"  exec -> listening (lexicon, listeners, {games} logs replayed)  {started:.2f} s"
            )
            print(
                f"  listening -> seat back, per game   p50 {_pct(waits, 0.5) * 1000:.0f} ms"
                f"   p99 {_pct(waits, 0.99) * 1000:.0f} ms   max {max(waits) * 1000:.0f} ms"
            )
            print(f"  listening -> every seat back       {since * 1000:.0f} ms")
            if cmpn402:
                took = await _cmpn402_resume(second.ports["cmpn402"])
                print(
                    f"  CMPN402 game ({cmpn402} turns logged): NAME -> START to both agents"
                    f"  {took * 1000:.0f} ms (the referee resumed it from its log at start-up)"
                )
        finally:
            second.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="open browser games at the crash")
    parser.add_argument("--moves", type=int, default=4, help="moves each browser has made")
    parser.add_argument(
        "--cmpn402", type=int, default=4, help="turns of a CMPN402 game at the crash (0: none)"
    )
    args = parser.parse_args()
    asyncio.run(run(args.games, args.moves, args.cmpn402))


if __name__ == "__main__":
    main()

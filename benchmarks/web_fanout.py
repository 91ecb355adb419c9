"""Web fan-out: one Scrabble game watched by N WebSocket spectators on loopback.

Run: ``.venv/bin/python benchmarks/web_fanout.py [--spectators 1000] [--moves 30]``

The server (Twente and web listeners) runs in this process, with two Twente players
that swap one tile a turn, one move every ``--interval`` seconds. The spectators run
in two other processes (their JSON parsing must not be charged to the server); each
opens its share of WebSockets, says hello and subscribes to the game. Printed:

- p50/p99 over the moves of the time from sending a move to the *last* spectator
  receiving the snapshot it caused (``time.monotonic`` is one clock for all processes
  on Linux); this includes the spectators' own processes reading 1,000 frames;
- how many spectators saw every move (a snapshot coalesced for a slow reader shows
  as a missed seq; the next snapshot still carries the whole state);
- server memory per spectator: resident memory after all subscribed minus before,
  divided by the number of spectators.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import websockets

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.protocols.twente.messages import (
    GameOver,
    InformSwap,
    InformWord,
    NotifyTurn,
)
from meeple.protocols.web import PROTOCOL
from meeple.server.app import MeepleServer
from meeple.server.config import LimitsConfig, ServerConfig
from meeple.server.lobby import Lobby


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- spectators (their own processes) ---------------------------------------------------


def spectator_process(port: int, uid: str, count: int, ready: Any, done: Any, out: Any) -> None:
    """Open ``count`` spectators; report when subscribed; at ``done``, send the last
    receive time per seq and how many spectators saw each seq."""

    async def one(last: dict[int, float], seen: dict[int, int], subscribed: list[int]) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=2**22) as ws:
            await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
            await ws.recv()
            await ws.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
            await ws.recv()  # the current snapshot
            subscribed.append(1)
            async for frame in ws:
                now = time.monotonic()
                message = json.loads(frame)
                if message.get("type") == "game":
                    seq = message["seq"]
                    last[seq] = max(last.get(seq, 0.0), now)
                    seen[seq] = seen.get(seq, 0) + 1

    async def run() -> None:
        last: dict[int, float] = {}
        seen: dict[int, int] = {}
        subscribed: list[int] = []
        tasks = [asyncio.create_task(one(last, seen, subscribed)) for _ in range(count)]
        while len(subscribed) < count:
            await asyncio.sleep(0.05)
        ready.put(count)
        while not done.is_set():
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        out.put((last, seen))

    asyncio.run(run())


# --- the server and the players (this process) ------------------------------------------


async def _until(player: TwenteClient, kind: type | tuple[type, ...]) -> None:
    while not isinstance(await asyncio.wait_for(player.receive(), 5), kind):
        pass


async def main(spectators: int, moves: int, interval: float) -> None:
    db = Path(tempfile.mkdtemp()) / "bench.sqlite3"
    server = MeepleServer(
        # All spectators come from 127.0.0.1: no per-address limit for this measurement.
        ServerConfig(database=str(db), lexicon="gcide")
        .only("twente", "web")
        .with_overrides(limits=LimitsConfig(max_connections_per_address=0)),
        rng=random.Random(1),
    )
    lexicon = server.services.resource("scrabble.lexicon", lambda: load_lexicon("gcide"))
    await server.start()
    twente, web = server.ports["twente"], server.ports["web"]
    players = [await TwenteClient.connect("127.0.0.1", twente, n) for n in ("ann", "bob")]
    for p in players:
        await p.request_game(2)
    lobby: Lobby = server.services.resource("lobby", Lobby)
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    uid = lobby.rooms[0].uid
    for p in players:  # let each see the start and whose turn it is
        await _until(p, NotifyTurn)

    spawn = mp.get_context("spawn")
    ready, out, done = spawn.Queue(), spawn.Queue(), spawn.Event()
    shares = [spectators // 2, spectators - spectators // 2]
    before = rss_bytes()
    procs = [
        spawn.Process(target=spectator_process, args=(web, uid, n, ready, done, out))
        for n in shares
        if n
    ]
    for proc in procs:
        proc.start()
    for _ in procs:
        await asyncio.get_running_loop().run_in_executor(None, ready.get)
    await asyncio.sleep(0.5)
    per_spectator = (rss_bytes() - before) / spectators

    feed = lobby.feed
    sent: dict[int, float] = {}
    for _ in range(moves):
        if any(p.game_over for p in players):
            break
        mover = next(p for p in players if p.my_turn)
        choice = choose(
            mover.board, mover.rack, lexicon, bag_count=mover.bag_count, exchange_minimum=1
        )
        item = feed.last(f"game:{uid}")
        assert item is not None
        sent[item.seq + 1] = time.monotonic()
        if isinstance(choice, PassChoice):
            await mover.pass_turn()
        elif isinstance(choice, ExchangeChoice):
            await mover.swap(choice.tiles)
        else:
            await mover.play_word(choice.x, choice.y, choice.direction, choice.word)
        for p in players:  # read until the turn has passed (or the game is over)
            await _until(p, (InformWord, InformSwap, GameOver))
            if not p.game_over:
                await _until(p, (NotifyTurn, GameOver))
        await asyncio.sleep(interval)

    done.set()
    last: dict[int, float] = {}
    seen: dict[int, int] = {}
    for _ in procs:
        part_last, part_seen = await asyncio.get_running_loop().run_in_executor(None, out.get)
        for seq, t in part_last.items():
            last[seq] = max(last.get(seq, 0.0), t)
        for seq, n in part_seen.items():
            seen[seq] = seen.get(seq, 0) + n
    for proc in procs:
        proc.join()
    for p in players:
        await p.close()
    await server.stop()

    latencies = [(last[seq] - t) * 1000 for seq, t in sent.items() if seq in last]
    complete = sum(seen.get(seq, 0) == spectators for seq in sent)
    moves = len(sent)
    print(f"web fan-out: {spectators} spectators, {moves} moves, one every {interval:g} s")
    print(
        f"  move -> last spectator's update: p50 {percentile(latencies, 0.5):.1f} ms, "
        f"p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms"
    )
    print(f"  moves every spectator saw: {complete}/{moves}")
    print(f"  server memory per spectator: {per_spectator / 1024:.1f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=20, help="at most; the game may end")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between moves")
    args = parser.parse_args()
    asyncio.run(main(args.spectators, args.moves, args.interval))

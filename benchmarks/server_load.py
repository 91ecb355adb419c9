"""Server load: N concurrent 2-player Twente bot games over loopback, against a baseline.

Run: ``.venv/bin/python benchmarks/server_load.py [--games 20] [--idle 500]``

The server runs in this process; the bots run in a separate process (they spend
their time in move generation, which must not be charged to the server). Printed:

- completed turns per second, and the server's CPU time per turn (its capacity on
  one core is the inverse: the bots, not the server, are the limit here);
- p50/p99 latency from sending MAKEMOVE to receiving its INFORMMOVE, measured by a
  probe (a third process: two clients swapping one tile a turn, game after game) while
  the bot games run, because a bot's own move generation would delay its reads;
- server memory per idle connection (announced Twente clients doing nothing, held by
  another process so that only the server's memory counts).

Before that, the same message pattern against a bare asyncio echo server (a frame out,
the same frame back, 40 connections at full speed) marks what the machine's loopback
and asyncio can do at best.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing as mp
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.protocols.twente.messages import GameOver, InformSwap, InformWord, NotifyTurn
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

FRAME = b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fQUARTZ\x1e"


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- the bot side (its own process) -----------------------------------------------------


async def _bot(port: int, name: str, lexicon: Lexicon) -> int:
    client = await TwenteClient.connect("127.0.0.1", port, name)
    await client.request_game(2)
    turns = 0
    async for m in client:
        if isinstance(m, NotifyTurn) and m.your_turn:
            choice = choose(
                client.board, client.rack, lexicon, bag_count=client.bag_count, exchange_minimum=1
            )
            if isinstance(choice, PassChoice):
                await client.pass_turn()
            elif isinstance(choice, ExchangeChoice):
                await client.swap(choice.tiles)
            else:
                await client.play_word(choice.x, choice.y, choice.direction, choice.word)
        elif isinstance(m, InformWord | InformSwap):
            turns += m.player == name
        elif isinstance(m, GameOver):
            break
    await client.close()
    return turns


def bot_process(port: int, games: int, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    lexicon = load_lexicon("gcide")

    async def run() -> tuple[int, float]:
        t0 = time.perf_counter()
        turns = await asyncio.gather(*(_bot(port, f"b{i}", lexicon) for i in range(2 * games)))
        return sum(turns), time.perf_counter() - t0

    queue.put(asyncio.run(run()))


async def _probe(port: int, name: str, samples: int, latencies: list[float]) -> None:
    client = await TwenteClient.connect("127.0.0.1", port, name)
    await client.request_game(2)
    sent_at = 0.0
    while len(latencies) < samples:
        m = await client.receive()
        if isinstance(m, NotifyTurn) and m.your_turn:
            sent_at = time.perf_counter()
            await client.swap(client.rack[:1])
        elif isinstance(m, InformSwap) and m.player == name:
            latencies.append(time.perf_counter() - sent_at)
        elif isinstance(m, GameOver):
            await client.request_game(2)
    await client.close()


def probe_process(port: int, samples: int, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    async def run() -> list[float]:
        latencies: list[float] = []
        await asyncio.gather(*(_probe(port, f"probe{i}", samples, latencies) for i in (1, 2)))
        return latencies

    queue.put(asyncio.run(run()))


def echo_client_process(port: int, conns: int, messages: int, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    async def one(latencies: list[float]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(messages):
            t = time.perf_counter()
            writer.write(FRAME)
            await reader.readexactly(len(FRAME))
            latencies.append(time.perf_counter() - t)
        writer.close()

    async def run() -> tuple[int, list[float], float]:
        latencies: list[float] = []
        t0 = time.perf_counter()
        await asyncio.gather(*(one(latencies) for _ in range(conns)))
        return len(latencies), latencies, time.perf_counter() - t0

    queue.put(asyncio.run(run()))


# --- the measured side ------------------------------------------------------------------


def idle_process(port: int, count: int, announce: bool, ready: mp.Queue, stop: Any) -> None:  # type: ignore[type-arg]
    """Open ``count`` idle connections (announced Twente clients, or bare sockets), hold them."""

    async def run() -> None:
        if announce:
            clients = [
                await TwenteClient.connect("127.0.0.1", port, f"idle{i}") for i in range(count)
            ]
        else:
            conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]
        ready.put(count)
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        if announce:
            for c in clients:
                await c.close()
        else:
            for _, w in conns:
                w.close()

    asyncio.run(run())


async def idle_memory(port: int, count: int, *, announce: bool) -> float:
    """Bytes of server RSS per idle connection, the clients held by another process.

    The clients live in their own process so that only the server's memory is counted.
    """
    gc.collect()
    await asyncio.sleep(0.2)
    before = rss_bytes()
    spawn = mp.get_context("spawn")
    ready: mp.Queue = spawn.Queue()  # type: ignore[type-arg]
    stop = spawn.Event()
    proc = spawn.Process(target=idle_process, args=(port, count, announce, ready, stop))
    proc.start()
    await asyncio.get_running_loop().run_in_executor(None, ready.get)
    await asyncio.sleep(0.3)  # let the server take the last ones in
    per = (rss_bytes() - before) / count
    stop.set()
    await asyncio.get_running_loop().run_in_executor(None, proc.join)
    return per


async def meeple_run(games: int, idle: int, db: Path) -> None:
    config = ServerConfig(database=str(db)).only("twente")
    server = MeepleServer(config, rng=random.Random(1))
    await server.start()
    port = server.ports["twente"]
    spawn = mp.get_context("spawn")
    bots_out: mp.Queue = spawn.Queue()  # type: ignore[type-arg]
    probe_out: mp.Queue = spawn.Queue()  # type: ignore[type-arg]
    bots = spawn.Process(target=bot_process, args=(port, games, bots_out))
    probe = spawn.Process(target=probe_process, args=(port, 200, probe_out))
    cpu0 = time.process_time()
    bots.start()
    probe.start()
    loop = asyncio.get_running_loop()
    turns, wall = await loop.run_in_executor(None, bots_out.get)
    cpu = time.process_time() - cpu0
    latencies = await loop.run_in_executor(None, probe_out.get)
    bots.join()
    probe.join()
    print(f"meeple twente: {games} concurrent 2-player games, {turns} turns in {wall:.2f} s")
    print(f"  turns/s                 {turns / wall:10.1f}")
    all_turns = turns + len(latencies)  # the probe's turns cost the server too
    print(f"  server CPU per turn     {cpu / all_turns * 1e6:10.0f} us")
    print(
        f"  MAKEMOVE->INFORMMOVE    p50 {percentile(latencies, 0.5) * 1e3:.2f} ms"
        f"   p99 {percentile(latencies, 0.99) * 1e3:.2f} ms"
    )
    per_conn = await idle_memory(port, idle, announce=True)
    print(f"  memory per idle conn    {per_conn / 1024:10.1f} KiB")
    await server.stop()


async def echo_run(conns: int, messages: int, idle: int) -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
        writer.close()

    srv = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    queue: mp.Queue = mp.get_context("spawn").Queue()  # type: ignore[type-arg]
    proc = mp.get_context("spawn").Process(
        target=echo_client_process, args=(port, conns, messages, queue)
    )
    cpu0 = time.process_time()
    proc.start()
    count, latencies, wall = await asyncio.get_running_loop().run_in_executor(None, queue.get)
    cpu = time.process_time() - cpu0
    proc.join()
    print(f"baseline asyncio echo: {conns} connections x {messages} round trips")
    print(f"  round trips/s           {count / wall:10.1f}")
    print(f"  server CPU per message  {cpu / count * 1e6:10.0f} us")
    print(
        f"  round trip              p50 {percentile(latencies, 0.5) * 1e3:.2f} ms"
        f"   p99 {percentile(latencies, 0.99) * 1e3:.2f} ms"
    )
    per_conn = await idle_memory(port, idle, announce=False)
    print(f"  memory per idle conn    {per_conn / 1024:10.1f} KiB")
    srv.close()
    await srv.wait_closed()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="concurrent 2-player games")
    parser.add_argument("--idle", type=int, default=500, help="idle connections for memory")
    args = parser.parse_args()
    load_lexicon("gcide")  # compile once up front, outside every measurement
    # The baseline first: its idle-memory figure needs a heap that no earlier run has
    # left free pages in.
    asyncio.run(echo_run(2 * args.games, 200, args.idle))
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(meeple_run(args.games, args.idle, Path(tmp) / "bench.sqlite3"))


if __name__ == "__main__":
    main()

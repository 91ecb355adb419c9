"""Web fan-out: one Scrabble game watched by N WebSocket spectators on loopback.

Run: ``.venv/bin/python benchmarks/web_fanout.py [--spectators 1000] [--moves 20] [--full]``

The server (Twente and web listeners) runs in this process, with two Twente players
that swap one tile a turn, one move every ``--interval`` seconds. The spectators run
in two other processes (their JSON parsing must not be charged to the server); each
opens its share of WebSockets, says hello and subscribes to the game, asking for deltas
(``--full``: whole snapshots only, as before issue 21). Printed:

- p50/p99 over the moves of the time from sending a move to the *last* spectator
  receiving the snapshot it caused (``time.monotonic`` is one clock for all processes
  on Linux); this includes the spectators' own processes reading 1,000 frames;
- how many spectators saw every move (a snapshot coalesced for a slow reader shows
  as a missed seq; the next snapshot still carries the whole state);
- server CPU per spectator-frame: the server process's CPU time (``process_time``)
  from the first move to the last spectator's last frame, minus the CPU the players'
  AI spent choosing moves, divided by the frames the spectators received (so it
  includes the game, the two Twente players' I/O and the keep-alive pings: an upper
  bound on the fan-out's own cost);
- bytes per spectator-frame on the wire (payload), and what one shared deflate of the
  frames would have made of them (the alternative to sending them uncompressed);
- server memory per spectator: resident memory after all subscribed minus before (and
  once ``malloc_trim`` has returned freed heap pages), and with ``--trace`` Python's
  allocations while the spectators connected (``tracemalloc``, zlib's included; its own
  traces then inflate the resident figure), each divided by the number of spectators;
- a check: the first ten spectators of each process rebuild the game from the
  snapshot and the deltas, and their state must equal the feed's last snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import multiprocessing as mp
import os
import random
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from meeple.server.feed import FeedItem
from meeple.server.lobby.tables import Lobby, server_lobby

try:
    from meeple.web import fanout
except ImportError:  # a tree before issue 21 (for a before/after run)
    fanout = None  # type: ignore[assignment]


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- spectators (their own processes) ---------------------------------------------------


class _Spectator(asyncio.Protocol):
    """A bare WebSocket client (RFC 6455) for many spectators in one process: the
    ``websockets`` library's per-frame machinery would make these processes, not the
    server, the slowest part of the measurement. It says hello, subscribes, and for
    every game frame notes the time and the seq; the first few also rebuild the game."""

    def __init__(self, request: bytes, hello: list[bytes], check: bool, sink: Any) -> None:
        self.request, self.hello, self.check, self.sink = request, hello, check, sink
        self.buffer = b""
        self.upgraded = False
        self.held = -1
        self.data: Any = None
        self.subscribed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        self.buffer += data
        if not self.upgraded:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if not sep:
                return
            if not head.startswith(b"HTTP/1.1 101"):
                raise ConnectionError(head.decode(errors="replace"))
            self.upgraded, self.buffer = True, rest
            for message in self.hello:
                self.transport.write(_masked(message))
        while len(self.buffer) >= 2:
            n, at = self.buffer[1] & 0x7F, 2
            if n == 126:
                if len(self.buffer) < 4:
                    return
                n, at = int.from_bytes(self.buffer[2:4], "big"), 4
            elif n == 127:
                if len(self.buffer) < 10:
                    return
                n, at = int.from_bytes(self.buffer[2:10], "big"), 10
            if len(self.buffer) < at + n:
                return
            opcode, payload = self.buffer[0] & 0x0F, self.buffer[at : at + n]
            self.buffer = self.buffer[at + n :]
            if opcode == 0x9:  # ping: pong with the same payload
                self.transport.write(_masked(payload, 0xA))
            elif opcode == 0x1 and payload.startswith(b'{"type":"game"'):
                self.frame(now, payload)

    def frame(self, now: float, payload: bytes) -> None:
        last, seen, sizes, rebuilt, errors, first = self.sink
        if self.held < 0:  # the snapshot on joining: whole
            message = json.loads(payload)
            self.held, self.data = message["seq"], message["data"]
            self.subscribed.set_result(None)
            return
        head = json.loads(
            payload[: payload.index(b',"data"' if b'"data"' in payload[:80] else b',"patch"')]
            + b"}"
        )
        seq = head["seq"]
        last[seq] = max(last.get(seq, 0.0), now)
        first[seq] = min(first.get(seq, now), now)
        seen[seq] = seen.get(seq, 0) + 1
        sizes.append(len(payload))
        if seq <= self.held or head.get("base", self.held) != self.held:
            errors.append(f"frame {seq} on top of {self.held}: not forward")
        self.held = seq
        if self.check:
            message = json.loads(payload)
            self.data = message["data"] if "data" in message else _patched(self.data, message)
            rebuilt[id(self)] = (self.held, self.data)


def _patched(data: Any, message: dict[str, Any]) -> Any:
    from meeple.protocols.web import apply_patch  # a delta run only: older trees have none

    return apply_patch(data, message["patch"])


def _masked(payload: bytes, opcode: int = 0x1) -> bytes:
    """A client frame: masked, as RFC 6455 §5.3 requires (the mask's key: zeros)."""
    n = len(payload)
    assert n < 126
    return bytes([0x80 | opcode, 0x80 | n]) + b"\0\0\0\0" + payload


def spectator_process(
    port: int, uid: str, count: int, delta: bool, ready: Any, done: Any, out: Any
) -> None:
    """Open ``count`` spectators; report when subscribed; at ``done``, send the last
    receive time per seq, how many spectators saw each seq, frame sizes, the states the
    first ten rebuilt, and any frame that did not move forward."""
    request = (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    subscribe: dict[str, Any] = {"type": "subscribe", "topic": "game", "uid": uid}
    if delta:
        subscribe["delta"] = True
    hello = [json.dumps(m).encode() for m in ({"type": "hello", "protocol": PROTOCOL}, subscribe)]

    async def run() -> None:
        loop = asyncio.get_running_loop()
        sink: tuple[Any, ...] = ({}, {}, [], {}, [], {})
        spectators = []
        for i in range(count):
            _, spectator = await loop.create_connection(
                lambda i=i: _Spectator(request, hello, i < 10, sink), "127.0.0.1", port
            )
            spectators.append(spectator)
        await asyncio.gather(*(s.subscribed for s in spectators))
        ready.put(count)
        while not done.is_set():
            await asyncio.sleep(0.05)
        for s in spectators:
            s.transport.close()
        last, seen, sizes, rebuilt, errors, first = sink
        out.put((last, seen, sizes, list(rebuilt.values()), errors, first))

    asyncio.run(run())


# --- the server and the players (this process) ------------------------------------------


async def _until(player: TwenteClient, kind: type | tuple[type, ...]) -> None:
    while not isinstance(await asyncio.wait_for(player.receive(), 5), kind):
        pass


async def take_turn(
    players: list[TwenteClient], lexicon: Any, sending: Callable[[], None]
) -> float:
    """The player to move makes meeple's AI's move (a swap of one tile when it finds no
    play), calling ``sending()`` just before it goes; then both read until the turn has
    passed (or the game is over). The CPU seconds the AI took, which are not the server's."""
    mover = next(p for p in players if p.my_turn)
    think = time.process_time()
    choice = choose(mover.board, mover.rack, lexicon, bag_count=mover.bag_count, exchange_minimum=1)
    thinking = time.process_time() - think
    sending()
    if isinstance(choice, PassChoice):
        await mover.pass_turn()
    elif isinstance(choice, ExchangeChoice):
        await mover.swap(choice.tiles)
    else:
        await mover.play_word(choice.x, choice.y, choice.direction, choice.word)
    for p in players:
        await _until(p, (InformWord, InformSwap, GameOver))
        if not p.game_over:
            await _until(p, (NotifyTurn, GameOver))
    return thinking


async def main(spectators: int, moves: int, interval: float, delta: bool, trace: bool) -> None:
    db = Path(tempfile.mkdtemp()) / "bench.sqlite3"
    server = MeepleServer(
        # All spectators come from 127.0.0.1: no per-address limit for this measurement.
        ServerConfig(database=str(db), lexicon="gcide")
        .only("twente", "web")
        .with_overrides(limits=LimitsConfig(max_connections_per_address=0)),
        rng=random.Random(1),
    )
    lexicon = server.services.lexicon = load_lexicon("gcide")
    await server.start()
    twente, web = server.ports["twente"], server.ports["web"]
    players = [await TwenteClient.connect("127.0.0.1", twente, n) for n in ("ann", "bob")]
    for p in players:
        await p.request_game(2)
    lobby: Lobby = server_lobby(server.services)
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    uid = lobby.rooms[0].uid
    for p in players:  # let each see the start and whose turn it is
        await _until(p, NotifyTurn)

    spawn = mp.get_context("spawn")
    ready, out, done = spawn.Queue(), spawn.Queue(), spawn.Event()
    shares = [spectators // 2, spectators - spectators // 2]
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    before = rss_bytes()
    if trace:
        tracemalloc.start()
    traced_before = tracemalloc.get_traced_memory()[0]
    procs = [
        spawn.Process(target=spectator_process, args=(web, uid, n, delta, ready, done, out))
        for n in shares
        if n
    ]
    for proc in procs:
        proc.start()
    for _ in procs:
        await asyncio.get_running_loop().run_in_executor(None, ready.get)
    await asyncio.sleep(0.5)
    gc.collect()  # what the handshakes left behind is not a spectator's
    per_spectator = (rss_bytes() - before) / spectators
    traced = (tracemalloc.get_traced_memory()[0] - traced_before) / spectators
    tracemalloc.stop()  # it slows every allocation: not during the moves
    with contextlib.suppress(OSError, AttributeError):  # glibc: return freed heap pages
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    trimmed = (rss_bytes() - before) / spectators

    # How long the server's one loop takes to write a frame to every spectator's socket.
    writing: list[float] = []
    loop_cpu: list[float] = []
    if fanout is not None:
        advance = fanout._Topic.advance

        def timed(self: Any, item: FeedItem) -> None:
            start, cpu = time.perf_counter(), time.thread_time()
            advance(self, item)
            if self.topic == f"game:{uid}" and self.watchers:
                writing.append((time.perf_counter() - start) * 1000)
                loop_cpu.append((time.thread_time() - cpu) / len(self.watchers))

        fanout._Topic.advance = timed  # type: ignore[method-assign]

    feed = lobby.feed
    sent: dict[int, float] = {}
    thinking = 0.0  # the players' AI: not the server's work
    cpu_start = time.process_time()
    for _ in range(moves):
        if any(p.game_over for p in players):
            break
        item = feed.last(f"game:{uid}")
        assert item is not None
        seq = item.seq + 1
        thinking += await take_turn(
            players, lexicon, lambda seq=seq: sent.__setitem__(seq, time.monotonic())
        )
        await asyncio.sleep(interval)
    cpu = time.process_time() - cpu_start - thinking
    final = feed.last(f"game:{uid}")
    assert final is not None

    done.set()
    last: dict[int, float] = {}
    seen: dict[int, int] = {}
    sizes: list[int] = []
    rebuilt: list[Any] = []
    errors: list[str] = []
    first: dict[int, float] = {}
    for _ in procs:
        part = await asyncio.get_running_loop().run_in_executor(None, out.get)
        part_last, part_seen, part_sizes, part_rebuilt, part_errors, part_first = part
        for seq, t in part_first.items():
            first[seq] = min(first.get(seq, t), t)
        for seq, t in part_last.items():
            last[seq] = max(last.get(seq, 0.0), t)
        for seq, n in part_seen.items():
            seen[seq] = seen.get(seq, 0) + n
        sizes += part_sizes
        rebuilt += part_rebuilt
        errors += part_errors
    for proc in procs:
        proc.join()
    for p in players:
        await p.close()
    await server.stop()

    latencies = [(last[seq] - t) * 1000 for seq, t in sent.items() if seq in last]
    to_first = [(first[seq] - t) * 1000 for seq, t in sent.items() if seq in first]
    spread = [(last[seq] - first[seq]) * 1000 for seq in sent if seq in first]
    complete = sum(seen.get(seq, 0) == spectators for seq in sent)
    moves = len(sent)
    print(f"web fan-out: {spectators} spectators, {moves} moves, one every {interval:g} s")
    print(
        f"  move -> last spectator's update: p50 {percentile(latencies, 0.5):.1f} ms, "
        f"p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms"
    )
    print(
        f"  of which move -> first spectator (the move's own path, its durable append "
        f"included): p50 {percentile(to_first, 0.5):.1f} ms, "
        f"p99 {percentile(to_first, 0.99):.1f} ms"
    )
    print(
        f"  and first -> last spectator (the fan-out): p50 {percentile(spread, 0.5):.1f} ms, "
        f"p99 {percentile(spread, 0.99):.1f} ms"
    )
    if writing:
        print(
            f"  the server's loop writing one frame to all {spectators} sockets: "
            f"p50 {percentile(writing, 0.5):.1f} ms, p99 {percentile(writing, 0.99):.1f} ms "
            f"(its CPU: {sum(loop_cpu) / len(loop_cpu) * 1e6:.1f} µs a socket, the kernel's "
            f"loopback send included)"
        )
    print(f"  moves every spectator saw: {complete}/{moves}")
    frames = sum(seen.get(seq, 0) for seq in sent)
    print(
        f"  server CPU per spectator-frame: {cpu / max(1, frames) * 1e6:.1f} µs "
        f"({cpu:.2f} s over {frames} frames; the players' AI not counted)"
    )
    deflated = len(zlib.compress(final.json().encode(), 6, -12)) if final else 0
    print(
        f"  bytes per spectator-frame: {sum(sizes) / max(1, len(sizes)):.0f} "
        f"({'deltas' if delta else 'whole snapshots'}; the last whole snapshot is "
        f"{len(final.json())} B, {deflated} B deflated)"
    )
    print(
        f"  server memory per spectator: {per_spectator / 1024:.1f} KiB resident "
        f"({trimmed / 1024:.1f} KiB once malloc_trim has returned freed heap pages)"
        + (
            f", {traced / 1024:.1f} KiB allocated (tracemalloc: its own traces are in the "
            "resident figure; run without --trace for that one)"
            if trace
            else ""
        )
    )
    good = sum(1 for seq, data in rebuilt if seq == final.seq and data == final.data)
    print(f"  rebuilt from snapshot + deltas equal to the last snapshot: {good}/{len(rebuilt)}")
    if errors:
        print(f"  spectator errors: {len(errors)}, e.g. {errors[0]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=20, help="at most; the game may end")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between moves")
    parser.add_argument("--full", action="store_true", help="whole snapshots, no deltas")
    parser.add_argument(
        "--trace", action="store_true", help="also count allocations with tracemalloc"
    )
    args = parser.parse_args()
    asyncio.run(main(args.spectators, args.moves, args.interval, not args.full, args.trace))

"""Spectators across a cluster (issue 21): one Scrabble game watched through 3 edges.

Run: ``.venv/bin/python benchmarks/cluster_fanout.py [--spectators 10000] [--edges 3]
[--moves 20] [--interval 0.5]``

It starts its own NATS and embedded PostgreSQL (as ``benchmarks/cluster.py``) and
``meeple node`` processes on loopback: a hub (``lobby,store``), one rooms node, and
``--edges`` edges, each with its web port (``--api-port 0``: ``/api/cluster`` and the
spectators' ``/ws``). Two Twente players on the first edge play one game, one move every
``--interval`` seconds (meeple's AI, swapping a tile when it finds nothing). The
spectators are bare RFC 6455 clients (``benchmarks/web_fanout.py``'s) in two other
processes, spread evenly over the edges; each says hello and subscribes to the game with
deltas. Each edge hears the room once over NATS and writes its spectators' frames with
``meeple serve``'s fan-out (``meeple.node.views``). Printed:

- p50/p99 over the moves of the time from sending a move to the *last* spectator's first
  frame after it (one ``time.monotonic`` clock for all processes on Linux), and to the
  first spectator's: the move's path through edge, rooms node, log and NATS;
- spectators that got a frame for every move, and any frame that did not move forward;
- per edge: CPU per spectator-frame (the edge process's CPU over the moves, divided by
  the frames its spectators got), and resident memory per spectator (after they
  subscribed, minus before);
- the CPU seconds of every process over the moves: what limits the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import secrets
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster, cpu_seconds
from meeple.bus.subjects import Namespace
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.protocols.twente.messages import NotifyTurn
from meeple.protocols.web import PROTOCOL
from web_fanout import _Spectator, _until, percentile, take_turn

PAGE = 4096


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


class _Timed(_Spectator):
    """web_fanout's bare spectator, keeping the arrival time of every frame after the
    whole snapshot it joined with, and checking each frame moves forward."""

    def __init__(self, request: bytes, hello: list[bytes]) -> None:
        super().__init__(request, hello, False, None)
        self.times: list[tuple[int, float]] = []  # (seq, arrival) of each frame
        self.errors: list[str] = []

    def frame(self, now: float, payload: bytes) -> None:
        cut = payload.index(b',"data"' if b'"data"' in payload[:80] else b',"patch"')
        head = json.loads(payload[:cut] + b"}")
        if self.held < 0:
            self.held = head["seq"]
            self.subscribed.set_result(None)
            return
        if head["seq"] <= self.held or head.get("base", self.held) != self.held:
            self.errors.append(f"frame {head['seq']} on top of {self.held}: not forward")
        self.held = head["seq"]
        self.times.append((self.held, now))


def spectator_process(
    ports: list[int], uid: str, count: int, ready: Any, done: Any, out: Any
) -> None:
    subscribe = {"type": "subscribe", "topic": "game", "uid": uid, "delta": True}
    hello = [json.dumps(m).encode() for m in ({"type": "hello", "protocol": PROTOCOL}, subscribe)]

    def request(port: int) -> bytes:
        return (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        spectators: list[_Timed] = []
        for i in range(count):
            port = ports[i % len(ports)]
            _, s = await loop.create_connection(
                lambda port=port: _Timed(request(port), hello), "127.0.0.1", port
            )
            spectators.append(s)
            if i % 200 == 199:
                await asyncio.sleep(0.01)  # let the edges take the handshakes
        await asyncio.wait_for(asyncio.gather(*(s.subscribed for s in spectators)), 300)
        ready.put(count)
        while not done.is_set():
            await asyncio.sleep(0.05)
        for s in spectators:
            s.transport.close()
        edges = [i % len(ports) for i in range(count)]
        out.put(
            (
                list(zip(edges, [s.times for s in spectators], strict=True)),
                [e for s in spectators for e in s.errors],
            )
        )

    asyncio.run(run())


def _api(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/cluster", timeout=5) as r:
        body: dict[str, Any] = json.load(r)
        return body


async def main(spectators: int, edges: int, moves: int, interval: float) -> None:
    work = Path(tempfile.mkdtemp(prefix="meeple-cluster-fanout-"))
    config = work / "edge.toml"
    # Every spectator comes from 127.0.0.1: no per-address limit for this measurement.
    config.write_text("[limits]\nmax_connections_per_address = 0\n")
    ns = Namespace(f"bf{secrets.token_hex(3)}")
    with Cluster(work) as cluster:
        database = cluster.pg.create_database(ns.root)
        cluster.node("hub", "lobby,store", ns, database=database)
        rooms = cluster.node("rooms1", "rooms", ns)
        nodes = [
            cluster.node(
                f"edge{i}", "edge", ns, extra_args=("--api-port", "0", "--config", str(config))
            )
            for i in range(1, edges + 1)
        ]
        lexicon = load_lexicon("enable")
        twente = nodes[0].listeners["twente"]
        players = [await TwenteClient.connect("127.0.0.1", twente, n) for n in ("ann", "bob")]
        for p in players:
            await p.request_game(2)
        for p in players:
            await _until(p, NotifyTurn)
        web_ports = [n.listeners["api"] for n in nodes]
        uid = ""
        for _ in range(100):
            found = (await asyncio.to_thread(_api, web_ports[0]))["rooms"]
            if found:
                uid = found[0]["uid"]
                break
            await asyncio.sleep(0.1)
        assert uid, "the game's room never showed in /api/cluster"

        spawn = mp.get_context("spawn")
        ready, out, done = spawn.Queue(), spawn.Queue(), spawn.Event()
        shares = [spectators // 2, spectators - spectators // 2]
        before = {n.name: rss(n.pid) for n in nodes}
        procs = [
            spawn.Process(target=spectator_process, args=(web_ports, uid, n, ready, done, out))
            for n in shares
            if n
        ]
        t_join = time.monotonic()
        for proc in procs:
            proc.start()
        for _ in procs:
            await asyncio.get_running_loop().run_in_executor(None, ready.get)
        joined = time.monotonic() - t_join
        await asyncio.sleep(1.0)
        per_spectator = {
            n.name: (rss(n.pid) - before[n.name]) / (spectators / edges) for n in nodes
        }

        watched = [*nodes, rooms, *cluster.nodes[:1]]
        cpu0 = {n.name: cpu_seconds(n.pid) for n in watched}
        nats_pid = cluster.nats.pid or 0
        nats0 = cpu_seconds(nats_pid)
        sent: list[float] = []
        for _ in range(moves):
            if any(p.game_over for p in players):
                break
            await take_turn(players, lexicon, lambda: sent.append(time.monotonic()))
            await asyncio.sleep(interval)
        await asyncio.sleep(1.0)  # the last frames
        cpu = {n.name: cpu_seconds(n.pid) - cpu0[n.name] for n in watched}
        nats_cpu = cpu_seconds(nats_pid) - nats0
        done.set()
        times: list[tuple[int, list[tuple[int, float]]]] = []
        errors: list[str] = []
        for _ in procs:
            part_times, part_errors = await asyncio.get_running_loop().run_in_executor(
                None, out.get
            )
            times += part_times
            errors += part_errors
        for proc in procs:
            proc.join()
        for p in players:
            await p.close()

    # Which move each edge's frame (its own seq) shows: the last move sent before any of
    # its spectators got that frame. Then per move, each spectator's first frame of it.
    earliest: dict[tuple[int, int], float] = {}
    frames_per_edge = [0] * edges
    for edge, arrivals in times:
        frames_per_edge[edge] += len(arrivals)
        for seq, at in arrivals:
            earliest[edge, seq] = min(earliest.get((edge, seq), at), at)
    move_of = {
        key: max((m for m, t in enumerate(sent) if t <= at), default=-1)
        for key, at in earliest.items()
    }
    per_move: list[list[float]] = [[] for _ in sent]
    complete = 0
    for edge, arrivals in times:
        got: dict[int, float] = {}
        for seq, at in arrivals:
            m = move_of[edge, seq]
            if m >= 0 and m not in got:
                got[m] = (at - sent[m]) * 1000
        for m, latency in got.items():
            per_move[m].append(latency)
        complete += len(got) == len(sent)
    last = [max(lat) for lat in per_move if lat]
    first = [min(lat) for lat in per_move if lat]
    print(
        f"cluster fan-out: {spectators} spectators over {edges} edges, {len(sent)} moves, "
        f"one every {interval:g} s (joined in {joined:.1f} s)"
    )
    print(
        f"  move -> last spectator's frame: p50 {percentile(last, 0.5):.1f} ms, "
        f"p99 {percentile(last, 0.99):.1f} ms, max {max(last):.1f} ms"
    )
    print(
        f"  move -> first spectator's frame (edge, rooms node, log, NATS): "
        f"p50 {percentile(first, 0.5):.1f} ms, p99 {percentile(first, 0.99):.1f} ms"
    )
    print(f"  spectators with a frame for every move: {complete}/{spectators}")
    for i, n in enumerate(nodes):
        frames = max(1, frames_per_edge[i])
        print(
            f"  {n.name}: {cpu[n.name] / frames * 1e6:.1f} µs CPU per spectator-frame "
            f"({frames} frames), {per_spectator[n.name] / 1024:.1f} KiB resident per spectator"
        )
    print(
        "  CPU seconds over the moves: "
        + ", ".join(f"{name} {s:.2f}" for name, s in cpu.items())
        + f", nats {nats_cpu:.2f}"
    )
    if errors:
        print(f"  spectator errors: {len(errors)}, e.g. {errors[0]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spectators", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=3)
    parser.add_argument("--moves", type=int, default=20, help="at most; the game may end")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between moves")
    args = parser.parse_args()
    asyncio.run(main(args.spectators, args.edges, args.moves, args.interval))

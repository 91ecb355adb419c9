"""The bus's costs, in one process and over NATS: ``python benchmarks/bus.py``.

For each implementation (``LocalBus``; ``NatsBus`` on two connections to a NATS server
from the pinned wheel on loopback):

- a room command's round trip: one requester, one responder, sequential requests of
  ~100 bytes (p50, p99, requests/s);
- 100 requesters at once to 100 rooms, one responder each (requests/s);
- seat events: one publisher, one subscriber, 20,000 messages of ~200 bytes (messages/s
  from the first publish to the last delivery).

``--requests N`` sets the sequential count (default 3,000).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import time

from meeple.bus import Bus, LocalBus, Namespace
from meeple.bus.natsbus import NatsBus, connect
from meeple.cluster.natsserver import NatsServer

NS = Namespace("bench")
COMMAND = b'{"seat":0,"command":{"kind":"play","word":"QUIXOTIC","at":"8D"}}' + b" " * 40
EVENT = b"x" * 200


def _ms(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))]


async def measure(name: str, owner: Bus, edge: Bus, requests: int) -> None:
    async def echo(payload: bytes) -> bytes:
        return payload[:16]

    await owner.serve(NS.room_command("r0"), echo)
    times = []
    for _ in range(requests):
        t = time.perf_counter()
        await edge.request(NS.room_command("r0"), COMMAND)
        times.append(time.perf_counter() - t)
    print(
        f"{name}: request/reply {requests / sum(times):,.0f}/s, "
        f"p50 {_ms(times, 0.5):.3f} ms, p99 {_ms(times, 0.99):.3f} ms"
    )

    rooms, each = 100, 30
    for r in range(1, rooms + 1):
        await owner.serve(NS.room_command(f"r{r}"), echo)

    async def requester(r: int) -> None:
        for _ in range(each):
            await edge.request(NS.room_command(f"r{r}"), COMMAND)

    t = time.perf_counter()
    await asyncio.gather(*(requester(r) for r in range(1, rooms + 1)))
    print(f"{name}: {rooms} requesters at once {rooms * each / (time.perf_counter() - t):,.0f}/s")

    count = 20_000
    done = asyncio.Event()
    got = 0

    async def listen(subject: str, payload: bytes) -> None:
        nonlocal got
        got += 1
        if got == count:
            done.set()

    await edge.subscribe(NS.seat("e1-1", "r0"), listen)
    t = time.perf_counter()
    for _ in range(count):
        await owner.publish(NS.seat("e1-1", "r0"), EVENT)
    await asyncio.wait_for(done.wait(), 60)
    print(f"{name}: seat events {count / (time.perf_counter() - t):,.0f} messages/s")


async def run(url: str, requests: int) -> None:
    local = LocalBus()
    await measure("local", local, local, requests)
    await local.close()
    owner = NatsBus(await connect(url, name="owner"))
    edge = NatsBus(await connect(url, name="edge"))
    await measure("nats ", owner, edge, requests)
    await owner.close()
    await edge.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    with NatsServer() as server:
        print(f"NATS {'.'.join(map(str, server.version))} at {server.url}")
        asyncio.run(run(server.url, args.requests))


if __name__ == "__main__":
    main()

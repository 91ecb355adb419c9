"""Room-log appends on JetStream: ``python benchmarks/jetstream_log.py``.

A NATS server from the pinned wheel (meeple.cluster.natsserver) on loopback, file
storage with the server's defaults (JetStream writes each message to its file at once
and syncs to the disk every 2 minutes, not per message; a three-server cluster makes an
append durable by replication instead: docs/cluster.md). One writer
(:class:`meeple.cluster.log.JetStreamLog`) appends entries of about 200 bytes of JSON, each
fenced (expected last subject sequence) with a message id, as a room's owner does:

- one room, one append at a time: the latency of one acknowledged append;
- 100 rooms at once, each one append at a time (the rooms node under load): appends/s;
- the claim of a 100-entry log by a new owner (owner mark + replay): the takeover's
  cost in the log, without the lease's TTL;
- the lease: one renewal (compare-and-set with a TTL);
- the lobby leader's state (:mod:`meeple.cluster.lobbystate`), written before each
  lobby call is answered: one fenced write with 100 players waiting at 100 tables.

``--appends N`` sets the single-room count (default 2,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.lobbystate import LobbyState
from meeple.cluster.log import JetStreamLog
from meeple.cluster.natsserver import NatsServer
from meeple.server.store.database import Store

GENESIS = {"version": 1, "game": "scrabble", "variant": "twente", "seed": 2026}


def _entry(seq: int) -> dict[str, object]:
    return {
        "action": {"kind": "play", "player": seq % 2, "position": "8D", "word": "QUIXOTIC"},
        "clocks": [512.25 - seq, 498.5 - seq],
        "pad": "x" * 60,
    }


def _ms(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))]


async def run(url: str, appends: int, records: Store) -> None:
    ns = Namespace("bench")
    nc = await connect_node(url, ns, user=None, password=None, name="bench")
    log = JetStreamLog(JetStreamBackplane(nc), ns, records)

    await log.open_log("one", "scrabble", GENESIS)
    times: list[float] = []
    for seq in range(1, appends + 1):
        t = time.perf_counter()
        await log.append_log("one", seq, _entry(seq))
        times.append(time.perf_counter() - t)
    print(
        f"one room, {appends} appends: {appends / sum(times):,.0f}/s, "
        f"p50 {_ms(times, 0.5):.3f} ms, p99 {_ms(times, 0.99):.3f} ms"
    )

    rooms, each = 100, 40
    for r in range(rooms):
        await log.open_log(f"r{r}", "scrabble", GENESIS)

    async def room(r: int) -> list[float]:
        out = []
        for seq in range(1, each + 1):
            t = time.perf_counter()
            await log.append_log(f"r{r}", seq, _entry(seq))
            out.append(time.perf_counter() - t)
        return out

    start = time.perf_counter()
    per_room = await asyncio.gather(*(room(r) for r in range(rooms)))
    elapsed = time.perf_counter() - start
    flat = [x for xs in per_room for x in xs]
    print(
        f"{rooms} rooms at once, {rooms * each} appends: {rooms * each / elapsed:,.0f}/s, "
        f"p50 {_ms(flat, 0.5):.3f} ms, p99 {_ms(flat, 0.99):.3f} ms"
    )

    claims = []
    for r in range(20):
        t = time.perf_counter()
        replay = await JetStreamLog(JetStreamBackplane(nc), ns, records).claim(
            f"r{r}", "new", epoch=10 + r
        )
        claims.append(time.perf_counter() - t)
        assert len(replay.entries) == each
    print(f"claim + replay of a {each}-entry log: p50 {_ms(claims, 0.5):.1f} ms")

    leases = Leases(JetStreamBackplane(nc), ns, ttl=2)
    lease = await leases.acquire(room_key("one"), "bench")
    assert lease is not None
    renewals = []
    for _ in range(500):
        t = time.perf_counter()
        lease = await leases.renew(lease)
        renewals.append(time.perf_counter() - t)
    print(f"lease renewal: p50 {_ms(renewals, 0.5):.3f} ms, p99 {_ms(renewals, 0.99):.3f} ms")

    state = LobbyState(JetStreamBackplane(nc), ns)
    await state.claim("bench", epoch=1)
    seat = {"protocol": "twente", "variants": [["scrabble", "twente"]], "bot": False}
    tables = [
        {
            "game": "scrabble",
            "variant": "twente",
            "size": 2,
            "rule": "full",
            "settings": [],
            "seats": [{**seat, "route": f"edge1-{t}", "name": f"player{t}"}],
            "ready": [],
        }
        for t in range(100)
    ]
    lobby = {"version": 1, "tables": tables, "opening": [], "callers": {"edge1.ab12cd34": 1}}
    size = len(json.dumps(lobby))
    writes = []
    for n in range(500):
        lobby["callers"] = {"edge1.ab12cd34": n}
        t = time.perf_counter()
        await state.write("bench", lobby)
        writes.append(time.perf_counter() - t)
    print(
        f"lobby state write ({size:,} bytes, 100 tables): "
        f"p50 {_ms(writes, 0.5):.3f} ms, p99 {_ms(writes, 0.99):.3f} ms"
    )
    await nc.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=2000)
    args = parser.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp, NatsServer(directory=Path(tmp) / "nats") as s:
        print(f"NATS {'.'.join(map(str, s.version))} at {s.url}")
        records = Store(Path(tmp) / "records.sqlite3")
        try:
            asyncio.run(run(s.url, args.appends, records))
        finally:
            records.close()


if __name__ == "__main__":
    main()

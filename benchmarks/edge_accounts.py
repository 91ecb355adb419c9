"""Accounts on a cluster's edges (issue 32.6): what an edge's account checks cost over
NATS. ``python benchmarks/edge_accounts.py`` (starts its own NATS from the pinned wheel
on loopback; a SQLite store in a temporary directory).

In one process, an edge's and a store node's and a lobby node's parts on their own NATS
connections:

- ``account_reserved`` of a name the edge has not seen (p50, p99);
- a wire client's name claim (``ClusterNames.claim_then``) without the account check
  and with it (the two requests at once): p50, p99;
- a session's lookup (``account_session``) and a sign-in at ``meeple serve``'s scrypt
  cost (p50).

``--names N`` sets how many names each measurement takes (default 500).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import platform
import tempfile
import time
from pathlib import Path

from meeple.bus import Namespace
from meeple.bus.natsbus import NatsBus, connect
from meeple.cluster.jetstream import JetStreamBackplane, ensure_namespace
from meeple.cluster.natsserver import NatsServer
from meeple.cluster.registry import Names
from meeple.node.accounts import AccountService, BusAccounts, SignedIn
from meeple.node.names import ClusterNames, NameService
from meeple.server.clock import SystemClock
from meeple.server.store.database import Store

NS = Namespace("bench")


def _ms(values: list[float], q: float) -> float:
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))]


async def _claim(names: ClusterNames, name: str) -> bool:
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    names.claim_then(name, object(), answer.set_result)
    return await answer


async def run(count: int, directory: Path) -> None:
    with NatsServer() as server:
        store_nc, lobby_nc, edge_nc = [await connect(server.url) for _ in range(3)]
        await ensure_namespace(lobby_nc.jetstream(), NS)
        store = Store(directory / "db.sqlite3")
        service = AccountService(NatsBus(store_nc), NS, store, SystemClock())
        await service.start()
        names_service = NameService(NatsBus(lobby_nc), NS, Names(JetStreamBackplane(lobby_nc), NS))
        await names_service.start()
        edge_bus = NatsBus(edge_nc)
        accounts = BusAccounts(edge_bus, NS, timeout=5.0)
        plain = ClusterNames(edge_bus, NS, "e1", ttl=60)
        checked = ClusterNames(edge_bus, NS, "e2", ttl=60, reserved=accounts.reserved)
        made = await accounts.reserve("ann", "correct horse")
        assert isinstance(made, SignedIn)
        numbers = itertools.count()

        async def timed(call: object, n: int) -> list[float]:
            times = []
            for _ in range(n):
                name = f"p{next(numbers)}"
                t = time.perf_counter()
                await call(name)  # type: ignore[operator]
                times.append(time.perf_counter() - t)
            return times

        for what, call, n in (
            ("account_reserved, a new name", accounts.reserved, count),
            ("a name claim, no account check", lambda name: _claim(plain, name), count),
            ("a name claim, with the account check", lambda name: _claim(checked, name), count),
            ("account_session", lambda _name: accounts.session(made.session), count),
            ("sign-in (scrypt 2^14)", lambda _n: accounts.sign_in("ann", "correct horse", ""), 20),
        ):
            times = await timed(call, n)
            print(f"{what}: p50 {_ms(times, 0.5):.2f} ms, p99 {_ms(times, 0.99):.2f} ms ({n})")
        assert not await _claim(checked, "ANN")
        await plain.close()
        await checked.close()
        await names_service.stop()
        await service.stop()
        for nc in (store_nc, lobby_nc, edge_nc):
            await nc.close()
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=500)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{platform.python_implementation()} {platform.python_version()}, load {load:.1f}")
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(run(args.names, Path(directory)))


if __name__ == "__main__":
    main()

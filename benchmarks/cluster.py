"""Cluster figures (issue 21): Twente turns per second through edges with 1 and 2 rooms
nodes, and the failover gap when a rooms node is SIGKILLed mid-game.

Run: ``.venv/bin/python benchmarks/cluster.py`` (100 concurrent Twente games per run,
20 kills), or ``--games 40 --kills 5`` for a quick look. It starts its own NATS (the
pinned wheel, the repository's permissions) and an embedded PostgreSQL, and
``meeple node`` processes on loopback:

- **Turns per second.** A hub node (``lobby,store``), two edges, and 1 then 2 rooms
  nodes. Every room deals the same game (``--same-game-seed``); two client processes
  (one per edge) replay it as recorded beforehand by meeple's AI (no move search in the
  clients: benchmarks/server_load.py's Twente player). Turns/s is the turns the clients
  saw answered over the wall time; the CPU seconds of each process over the run say
  what limits it.
- **Failover gap.** The same layout with two rooms nodes and a 2 s lease; Twente bots
  (greedy moves, a pause before each) play games in a row on the two edges. ``--kills``
  times: wait for a game with a few moves logged, SIGKILL the node that owns it, and
  time from the kill to the next entry in the room's log (its ``at``, written by the new
  owner); then start the killed node again. At the end every room's log is checked: no
  gap, no duplicate, and every finished game stored once with the log's actions.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from meeple.bus.subjects import Namespace
from meeple.cluster.auth import ADMIN_USER, DEPLOY_EDGES, DEPLOY_NODES, users
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.cluster.natsserver import NatsServer
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.node.launch import NodeProcess, start_node
from meeple.server.store.database import open_store
from meeple.server.store.pgembed import EmbeddedPostgres
from server_load import (
    SEED,
    ScrabbleMove,
    Stats,
    percentile,
    record_scrabble,
    twente_player,
)

ROOT = Path(__file__).resolve().parents[1]
AUTH = ROOT / "deploy" / "nats" / "meeple-auth.conf"
TICKS = os.sysconf("SC_CLK_TCK")
# The benchmark's nodes run in namespaces of their own, which only the admin user of the
# permissions file (written for `meeple`) may use.
NODE_USER = ADMIN_USER


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


class Cluster:
    """NATS and PostgreSQL for the whole run; node processes per part."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.password = f"pw{secrets.token_hex(16)}"
        # Every user of the file needs a password in the server's environment.
        env = {
            variable: self.password if user == NODE_USER else f"pw{secrets.token_hex(16)}"
            for user, variable in users(DEPLOY_EDGES, DEPLOY_NODES, admin=True).items()
        }
        self.nats = NatsServer(include=AUTH, environment=env, max_file="4G")
        self.pg = EmbeddedPostgres()
        self.nodes: list[NodeProcess] = []

    def __enter__(self) -> Cluster:
        self.nats.start()
        self.pg.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_nodes()
        self.pg.stop()
        self.nats.stop()

    def node(self, name: str, roles: str, ns: Namespace, **kw: Any) -> NodeProcess:
        node = start_node(
            name,
            roles.split(","),
            self.nats.url,
            user=NODE_USER,
            password=self.password,
            log_dir=self.work,
            namespace=ns.root,
            **kw,
        )
        self.nodes.append(node)
        return node

    def stop_nodes(self) -> None:
        for node in self.nodes:
            node.stop()
        self.nodes.clear()


# --- turns per second --------------------------------------------------------------------


def client_process(
    prefix: str, port: int, games: int, recorded: list[ScrabbleMove], out: Any, go: Any
) -> None:
    """server_load's Twente clients, named apart per edge (names are each edge's own)."""

    async def run() -> tuple[Stats, float]:
        stats = Stats()
        ready = asyncio.Event()
        tasks = [
            asyncio.create_task(
                twente_player(port, f"{prefix}g{i // 2}p{i % 2}", recorded, stats, ready, 1)
            )
            for i in range(2 * games)
        ]
        while stats.joined < len(tasks):
            await asyncio.sleep(0.05)
        out.put("joined")
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        t0 = time.perf_counter()
        ready.set()
        await asyncio.gather(*tasks)
        return stats, time.perf_counter() - t0

    stats, wall = asyncio.run(run())
    out.put((stats.turns, stats.games, stats.latencies, wall))


def throughput(cluster: Cluster, rooms_nodes: int, games: int) -> dict[str, Any]:
    ns = Namespace(f"tput{rooms_nodes}-{secrets.token_hex(2)}")
    database = cluster.pg.create_database(ns.root.replace("-", "_"))
    seed = ["--same-game-seed", str(SEED)]
    hub = cluster.node(f"hub{rooms_nodes}", "lobby,store", ns, database=database)
    # Every client comes from 127.0.0.1: no per-address limit (as server_load.py).
    config = cluster.work / "edge.toml"
    config.write_text("[limits]\nmax_connections_per_address = 0\n")
    edges = [
        cluster.node(f"edge{rooms_nodes}{i}", "edge", ns, extra_args=["--config", str(config)])
        for i in (1, 2)
    ]
    rooms = [
        cluster.node(f"rooms{rooms_nodes}{i}", "rooms", ns, extra_args=seed)
        for i in range(1, rooms_nodes + 1)
    ]
    recorded = record_scrabble("twente", load_lexicon("enable"))
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    go: Any = ctx.Event()
    clients = [
        ctx.Process(
            target=client_process,
            args=(f"e{i}", e.listeners["twente"], games // 2, recorded, out, go),
        )
        for i, e in enumerate(edges)
    ]
    for c in clients:
        c.start()
    print(f"  {rooms_nodes} rooms node(s): nodes up, clients connecting", flush=True)
    for _ in clients:
        assert out.get(timeout=120) == "joined"
    watched = {"hub": [hub], "edges": edges, "rooms": rooms}
    before = {k: sum(cpu_seconds(n.pid) for n in v) for k, v in watched.items()}
    nats_before = cpu_seconds(cluster.nats.pid or 0)
    t0 = time.perf_counter()
    go.set()
    print("  playing", flush=True)
    results = [out.get(timeout=600) for _ in clients]
    wall = time.perf_counter() - t0
    for c in clients:
        c.join()
    cpu = {k: sum(cpu_seconds(n.pid) for n in v) - before[k] for k, v in watched.items()}
    cpu["nats"] = cpu_seconds(cluster.nats.pid or 0) - nats_before
    turns = sum(r[0] for r in results)
    finished = sum(r[1] for r in results)
    latencies = [x for r in results for x in r[2]]
    cluster.stop_nodes()
    return {
        "rooms_nodes": rooms_nodes,
        "games": finished,
        "turns": turns,
        "wall": wall,
        "turns_per_s": turns / wall,
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "cpu": cpu,
    }


# --- the failover gap --------------------------------------------------------------------


async def _bot(port: int, name: str, pace: float, stop: asyncio.Event, errors: list[str]) -> None:
    from meeple.clients.scrabble_bot import _move
    from meeple.clients.twente import TwenteClient
    from meeple.protocols.twente.messages import Error, GameOver

    lexicon = load_lexicon("enable")
    client = await TwenteClient.connect("127.0.0.1", port, name)
    try:
        await client.request_game(2)
        async for message in client:
            if isinstance(message, Error):
                errors.append(f"{name}: {message}")
            if isinstance(message, GameOver):
                if stop.is_set():
                    return
                await client.request_game(2)
            elif client.move_due:
                await asyncio.sleep(pace)
                if client.move_due:
                    await _move(client, lexicon, client.session.refusals)
    finally:
        await client.close()


async def failover(cluster: Cluster, kills: int, pairs: int) -> dict[str, Any]:
    ns = Namespace(f"fail-{secrets.token_hex(2)}")
    database = cluster.pg.create_database(ns.root.replace("-", "_"))
    await asyncio.to_thread(cluster.node, "fhub", "lobby,store", ns, database=database)
    edges = [await asyncio.to_thread(cluster.node, f"fedge{i}", "edge", ns) for i in (1, 2)]
    rooms: dict[str, NodeProcess] = {}
    for i in (1, 2):
        rooms[f"frooms{i}"] = await asyncio.to_thread(cluster.node, f"frooms{i}", "rooms", ns)
    nc = await connect_node(
        cluster.nats.url, ns, user=NODE_USER, password=cluster.password, name="bench"
    )
    records = open_store(database)
    log = JetStreamLog(JetStreamBackplane(nc), ns, records)
    leases = Leases(JetStreamBackplane(nc), ns)
    stop = asyncio.Event()
    errors: list[str] = []
    bots = [
        asyncio.ensure_future(_bot(edges[i % 2].listeners["twente"], f"b{i}", 0.1, stop, errors))
        for i in range(2 * pairs)
    ]
    gaps: list[float] = []
    try:
        for k in range(kills):
            uid, owner = await _a_game_to_kill(log, leases, rooms)
            victim = rooms[owner]
            killed_at = time.time()
            victim.kill()
            # What the dead owner logged (read after the kill: it writes nothing more).
            dead = await log.action_log(uid)
            assert dead is not None
            if dead.end_reason is not None:
                # Its end was logged between the choice and the kill: no gap to measure.
                print(f"  kill {k + 1}: {owner} owned {uid}, whose game had just ended")
            else:
                after = await _next_entry(log, uid, len(dead.entries))
                gaps.append(after - killed_at)
                print(f"  kill {k + 1}: {owner} owned {uid}; next move after {gaps[-1]:.2f} s")
            # A new name: the dead one's leases still name it until they lapse.
            del rooms[owner]
            fresh = f"frooms{k + 3}"
            rooms[fresh] = await asyncio.to_thread(cluster.node, fresh, "rooms", ns)
        stop.set()
        done, pending = await asyncio.wait(bots, timeout=120)
        for b in done:
            if b.exception() is not None:
                errors.append(f"a bot failed: {b.exception()!r}")
        if pending:
            errors.append(f"{len(pending)} bots did not finish their game in 120 s")
    finally:
        for b in bots:
            b.cancel()
    checked, bad = await _check_logs(log, records)
    await nc.close()
    records.close()
    cluster.stop_nodes()
    return {"gaps": gaps, "errors": errors, "rooms_checked": checked, "bad": bad}


async def _a_game_to_kill(
    log: JetStreamLog, leases: Leases, rooms: dict[str, NodeProcess]
) -> tuple[str, str]:
    while True:
        for uid in await log.open_logs():
            found = await log.action_log(uid)
            lease = await leases.holder(room_key(uid))
            if found is None or lease is None or lease.owner not in rooms:
                continue
            if 3 <= len(found.entries) <= 30:
                return uid, lease.owner
        await asyncio.sleep(0.05)


async def _next_entry(log: JetStreamLog, uid: str, before: int) -> float:
    until = time.monotonic() + 60
    while time.monotonic() < until:
        found = await log.action_log(uid)
        if found is not None and len(found.entries) > before:
            return found.entries[before].at
        if found is not None and found.end_reason is not None:
            # The dead owner's last entry ended the game: the new owner's first act is
            # to store it (seen here within the 20 ms poll).
            return time.time()
        await asyncio.sleep(0.02)
    raise RuntimeError(f"room {uid}: no move in 60 s after the kill")


async def _check_logs(log: JetStreamLog, records: Any) -> tuple[int, list[str]]:
    """Every room of the run: entries 1..n, once each; a finished game stored once, with
    the log's actions."""
    bad: list[str] = []
    info = await log._js.stream_info(log.ns.log_stream, subjects_filter=log.ns.logs)
    uids = [s.rsplit(".", 1)[1] for s in (info.state.subjects or {})]
    for uid in uids:
        found = await log.action_log(uid)
        assert found is not None
        if [e.seq for e in found.entries] != list(range(1, len(found.entries) + 1)):
            bad.append(f"{uid}: entries {[e.seq for e in found.entries]}")
        if found.end_reason is not None:
            stored = [g for g in records.games(limit=10_000) if (g.data or {}).get("uid") == uid]
            if len(stored) != 1:
                bad.append(f"{uid}: stored {len(stored)} times")
            elif stored[0].data["actions"] != [e.entry["action"] for e in found.entries]:
                bad.append(f"{uid}: the stored actions are not the log's")
    return len(uids), bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="concurrent games per run")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=3, help="bot pairs during the kills")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    work = tempfile.mkdtemp(prefix="meeple-bench-cluster-")
    print(f"node logs in {work} (deleted after a run without error)")
    with Cluster(Path(work)) as cluster:
        if not args.skip_throughput:
            runs = [throughput(cluster, k, args.games) for k in (1, 2)]
            for r in runs:
                cpu = ", ".join(f"{k} {v:.1f}" for k, v in r["cpu"].items())
                print(
                    f"{r['rooms_nodes']} rooms node(s): {r['games']} games, {r['turns']} turns "
                    f"in {r['wall']:.1f} s = {r['turns_per_s']:.0f} turns/s; move→update "
                    f"p50 {r['p50_ms']:.1f} ms p99 {r['p99_ms']:.1f} ms; CPU s: {cpu}"
                )
            print(f"ratio 2/1: {runs[1]['turns_per_s'] / runs[0]['turns_per_s']:.2f}")
            print(f"load average now {os.getloadavg()[0]:.1f}")
        if args.kills:
            result = asyncio.run(failover(cluster, args.kills, args.pairs))
            gaps = result["gaps"]
            print(
                f"failover over {len(gaps)} kills (lease 2 s): gap p50 "
                f"{percentile(gaps, 0.5):.2f} s, p99 {percentile(gaps, 0.99):.2f} s, "
                f"max {max(gaps):.2f} s"
            )
            verdict = result["bad"] or "no gap, no duplicate, each finished game stored once"
            print(f"rooms checked {result['rooms_checked']}: {verdict}")
            print(f"errors the bots heard: {result['errors'] or 'none'}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

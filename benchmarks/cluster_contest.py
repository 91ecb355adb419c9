"""A CMPN402 contest on a cluster (issue 32.5): a Swiss of 20 agents, 5 rounds (50
games), the boards on two rooms nodes, one of them SIGKILLed midway.

Run: ``.venv/bin/python benchmarks/cluster_contest.py`` (``--agents 20 --rounds 5
--boards 10``; ``--pause`` seconds before each move). It starts its own NATS (the
repository's permissions) and an embedded PostgreSQL (benchmarks/cluster.py's
``Cluster``), and ``meeple node`` processes on loopback: a hub (``lobby,store``), two
edges, two rooms nodes, every node with the same ``[cmpn402.contest]`` config. The
agents are meeple's own (``meeple bot scrabble --protocol cmpn402``'s
``BuiltinAgent``, in this process), half on each edge. Once a third of the games are
played, at a moment when at least half the boards run, the rooms node that owns the
most running games is SIGKILLed.

Checked at the end, and printed: the contest finished; every game is stored once (by
its room's uid) with the scores the standings count; each agent's rating counts its
games; wins, draws and losses add up to two per game; each agent's points are the sum
of the scores it heard at its ENDs; both edges' consoles show the same standings, and
answered throughout (every poll of ``/admin/status`` on each edge, every half second).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import Cluster
from meeple.bus.subjects import Namespace
from meeple.clients.cmpn402 import BuiltinAgent, View, play
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.protocols.cmpn402.messages import PlayNotice
from meeple.server.store.database import open_store

TOKEN = secrets.token_urlsafe(16)


class Paced:
    """meeple's agent, ``pause`` seconds before each move (a short think time)."""

    def __init__(self, lexicon: Lexicon, pause: float) -> None:
        self.inner = BuiltinAgent(lexicon)
        self.pause = pause

    async def choose_move(self, view: View) -> Any:
        await asyncio.sleep(self.pause)
        return await asyncio.to_thread(self.inner.choose_move, view)

    async def want_challenge(self, view: View, notice: PlayNotice) -> bool:
        return await asyncio.to_thread(self.inner.want_challenge, view, notice)


def status(port: int) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/admin/status", headers={"Authorization": f"Bearer {TOKEN}"})
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"/admin/status: {response.status} {body}")
    snapshot: dict[str, Any] = body["status"]
    return snapshot


async def run(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    ns = Namespace(f"contest-{secrets.token_hex(2)}")
    database = cluster.pg.create_database(ns.root.replace("-", "_"))
    config = cluster.work / "contest.toml"
    config.write_text(
        f'[cmpn402.contest]\nformat = "swiss"\ngames = 1\nrounds = {args.rounds}\n'
        f"boards = {args.boards}\nagents = {args.agents}\n"
    )
    common = {"extra_args": ("--config", str(config), "--admin-token", TOKEN)}
    node = cluster.node
    await asyncio.to_thread(node, "chub", "lobby,store", ns, database=database, **common)
    edges = [await asyncio.to_thread(node, f"cedge{i}", "edge", ns, **common) for i in (1, 2)]
    rooms = {
        f"crooms{i}": await asyncio.to_thread(node, f"crooms{i}", "rooms", ns, **common)
        for i in (1, 2)
    }
    ports = [e.listeners["cmpn402"] for e in edges]
    lexicon = load_lexicon(DEFAULT_LEXICON)
    names = [f"agent{i:02d}" for i in range(args.agents)]
    started = time.monotonic()
    agents = [
        asyncio.ensure_future(
            play(
                f"ws://127.0.0.1:{ports[i % 2]}",
                name,
                Paced(lexicon, args.pause),
                games=args.rounds,
            )
        )
        for i, name in enumerate(names)
    ]
    polls = {"answered": 0, "failed": 0}
    killed: str | None = None
    snapshots: list[dict[str, Any]] = []
    while True:
        for port in ports:
            try:
                snapshots.append(await asyncio.to_thread(status, port))
                polls["answered"] += 1
            except Exception as e:  # counted: the console must answer throughout
                polls["failed"] += 1
                print(f"console on {port}: {e}")
        last = snapshots[-1] if snapshots else {"series": {"played": 0, "games": 1}}
        played, planned = last["series"]["played"], last["series"]["games"]
        running = len(last.get("boards", []))
        if killed is None and played >= planned // 3 and running >= max(1, args.boards // 2):
            owners: dict[str, int] = {}
            for board in last["boards"]:
                if board.get("owner") in rooms:
                    owners[board["owner"]] = owners.get(board["owner"], 0) + 1
            if owners:
                killed = max(owners, key=lambda k: owners[k])
                print(
                    f"{time.monotonic() - started:.0f} s: {played}/{planned} played; "
                    f"SIGKILL {killed} ({owners[killed]} running games)"
                )
                rooms[killed].kill()
        if last.get("state") == "finished":
            break
        if time.monotonic() - started > args.limit:
            raise RuntimeError(f"not finished after {args.limit} s: {last}")
        await asyncio.sleep(0.5)
    results = await asyncio.wait_for(asyncio.gather(*agents), 120)
    wall = time.monotonic() - started
    final = [status(p) for p in ports]
    bad: list[str] = []
    if final[0]["standings"] != final[1]["standings"]:
        bad.append("the edges' standings differ")
    snapshot = final[0]
    played = snapshot["series"]["results"]
    games = [r for r in played if r["reason"] not in ("BYE", "FORFEIT")]
    rows = {r["name"]: r for r in snapshot["standings"]}
    outcomes = sum(r["wins"] + r["draws"] + r["losses"] for r in rows.values())
    if outcomes != 2 * len(games) + (len(played) - len(games)):
        bad.append(f"outcomes {outcomes} for {len(games)} games")
    for name, heard in zip(names, results, strict=True):
        if rows[name]["points"] != sum(g.score for g in heard):
            mine = [
                (r["scores"][r["players"].index(name)], r["reason"])
                for r in played
                if name in r["players"]
            ]
            ends = [(g.score, g.opponent_score, g.reason.name) for g in heard]
            bad.append(f"{name}'s points {rows[name]['points']} {mine} are not its ENDs' {ends}")
    with contextlib.closing(open_store(database)) as records:
        everything = records.games(limit=10_000)
        for result in games:
            uid = result["game_id"]
            stored = [g for g in everything if (g.data or {}).get("uid") == uid]
            if len(stored) != 1:
                bad.append(f"game {uid} stored {len(stored)} times")
            elif [stored[0].result["scores"][p] for p in result["players"]] != result["scores"]:
                bad.append(f"game {uid}'s stored scores are not the standings'")
        rated = {r.player: r.games for r in records.leaderboard("scrabble", limit=1000)}
    for name in names:
        mine = sum(name in r["players"] for r in games)
        if rated.get(name) != mine:
            bad.append(f"{name} rated for {rated.get(name)} games, played {mine}")
    return {
        "wall": wall,
        "games": len(games),
        "byes_forfeits": len(played) - len(games),
        "killed": killed,
        "polls": polls,
        "bad": bad,
        "top": snapshot["standings"][:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--boards", type=int, default=10)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds before a move")
    parser.add_argument("--limit", type=float, default=3600.0, help="give up after (s)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    work = tempfile.mkdtemp(prefix="meeple-bench-contest-")
    print(f"node logs in {work} (deleted after a run without error)")
    with Cluster(Path(work)) as cluster:
        result = asyncio.run(run(cluster, args))
    print(
        f"Swiss of {args.agents} agents, {args.rounds} rounds, {args.boards} boards: "
        f"{result['games']} games (+{result['byes_forfeits']} byes/forfeits) in "
        f"{result['wall']:.0f} s; SIGKILLed {result['killed']} midway"
    )
    print(f"console polls on both edges: {result['polls']}")
    print("top 3:", ", ".join(f"{r['name']} {r['wins']}-{r['losses']}" for r in result["top"]))
    print(f"checks: {result['bad'] or 'every game stored once, standings and ratings agree'}")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    if not result["bad"]:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

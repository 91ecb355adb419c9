"""A whole CMPN402 contest over loopback: `meeple bot scrabble --protocol cmpn402` agents,
a round robin on two boards, a server restart in the middle, standings that add up."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from meeple.cli.main import main
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ContestConfig, ListenerConfig, ServerConfig
from meeple.server.lobby.cmpn402_console import public
from meeple.server.store.database import Store

AGENTS = 8
GAMES = 1  # per pairing
PER_AGENT = (AGENTS - 1) * GAMES


def _config(tmp_path: Path, port: int) -> ServerConfig:
    base = ServerConfig(database=str(tmp_path / "contest.sqlite3"))
    listeners = {n: ListenerConfig(port if n == "cmpn402" else 0, enabled=n == "cmpn402")
                 for n in base.listeners}  # fmt: skip
    cmpn402 = replace(
        base.cmpn402,
        admin_token="tok",
        ping_interval=0.5,
        contest=ContestConfig(games=GAMES, boards=2, agents=AGENTS, resume_window=30),
    )
    return replace(base, listeners=listeners, cmpn402=cmpn402)


async def _server(config: ServerConfig, gcide: Lexicon) -> MeepleServer:
    server = MeepleServer(config, rng=random.Random(11))
    server.services.lexicon = gcide
    await server.start()
    return server


@pytest.mark.slow
async def test_eight_bots_play_a_round_robin_through_a_restart(
    tmp_path: Path, gcide: Lexicon, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eight bots of two levels, two boards, every pairing once; the server is stopped
    mid-contest and a new one on the same database finishes the same contest; the
    standings add up."""
    server = await _server(_config(tmp_path, 0), gcide)
    port = server.ports["cmpn402"]
    args = ["bot", "scrabble", "--protocol", "cmpn402", "--port", str(port)]
    # One thread per bot (the default executor has too few on two cores).
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=AGENTS)
    loop = asyncio.get_running_loop()
    # Two levels, as a class would field them: half greedy, half strong on a short budget.
    levels = [["--level", "greedy"], ["--level", "strong", "--think-time", "0.02"]]
    bots = [
        loop.run_in_executor(
            pool, main, [*args, *levels[i % 2], "--name", f"bot{i}", "--games", str(PER_AGENT)]
        )
        for i in range(AGENTS)
    ]
    contest = server.listeners["cmpn402"].contest
    assert contest is not None
    for _ in range(600):  # a third of the games, then the "kill"
        if len(contest.results()) >= 9 and any(t.referee for t in contest.tables.values()):
            break
        await asyncio.sleep(0.05)
    before = len(contest.results())
    assert 9 <= before < 28
    await server.stop()

    again = await _server(_config(tmp_path, port), gcide)
    contest = again.listeners["cmpn402"].contest
    assert contest is not None
    assert contest.state == "running"
    assert len(contest.results()) == before
    codes = await asyncio.wait_for(asyncio.gather(*bots), 240)
    try:
        assert codes == [0] * AGENTS
        assert contest.state == "finished"
        results = contest.results()
        pairings = Counter(frozenset(r["players"]) for r in results)
        assert len(pairings) == AGENTS * (AGENTS - 1) // 2
        assert set(pairings.values()) == {GAMES}
        records = Store(again.config.database).games()
        assert len(records) == len(results)  # every game played, none twice
        points: Counter[str] = Counter()
        for record in records:
            points.update(record.result["scores"])
        console = again.listeners["cmpn402"].console
        standings = console.snapshot()["standings"]
        assert len(standings) == AGENTS
        for row in standings:
            assert row["wins"] + row["draws"] + row["losses"] == PER_AGENT
            assert row["games_left"] == 0
            assert row["points"] == points[row["name"]]
        assert sum(r["wins"] for r in standings) + sum(r["draws"] for r in standings) / 2 == 28
        json.dumps(public(console.snapshot()))
        resumed = [r for r in results if r["reason"] == "CONNECTION_ERROR"]
        assert not resumed  # every interrupted game was resumed and played out
        out = capsys.readouterr().out.splitlines()
        assert len(out) == AGENTS * PER_AGENT
        code = await asyncio.to_thread(
            main, ["cmpn402", "standings", "--port", str(port), "--token", "tok"]
        )
        assert code == 0
        table = capsys.readouterr().out.splitlines()
        assert len(table) == 1 + AGENTS
    finally:
        await again.stop()
        pool.shutdown(wait=False)

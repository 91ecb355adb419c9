"""How long a full ``meeple check`` run takes, against meeple's own server (and client).

::

    .venv/bin/python benchmarks/check_kits.py [--runs 3] [--samples docs-dir] [--kit server-web]

For each protocol with a server kit: a meeple server in this process (that listener only,
port 0; AM27's heartbeat timeout 1 s and CMPN402's ping 0.5 s and challenge window 1 s,
as a team would set them for CI), then the whole server kit against it, ``--runs``
times; prints the checks, the outcome counts and the wall time of each run. Then each
client kit with meeple's own bot as the client (two games). ``--samples DIR`` also
writes each first run's text report to ``DIR/check-<side>-<protocol>.txt``
(docs/check.md quotes them).

``--reads-lines S`` (repeatable) instead runs the Twente server kit with ``--wait S``
against meeple behind a relay that reads lines (a server that answers only after a line
end, tests/check/test_quirky_servers.py): every check waits out one silence, and the
probe after it none (issue 33); prints the wall time, the outcome counts and the
silences the kit waited out.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from meeple.check import SERVER_KITS, run_server_kit
from meeple.check.clients import CLIENT_KITS, run_client_kit
from meeple.check.report import summary, to_text
from meeple.clients.clarkson import play_clarkson
from meeple.clients.cmpn402 import BuiltinAgent
from meeple.clients.cmpn402 import play as play_cmpn402
from meeple.clients.santorini import play_santorini
from meeple.clients.scrabble_bot import configure, play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

# The servers' timers set short, as a team would for a CI run of the kit: the AM27
# heartbeat timeout (default 5 s), the CMPN402 ping interval and challenge window.
SHORT = {"heartbeat": 1.0, "ping_interval": 0.5}


def _config(protocol: str, database: str) -> ServerConfig:
    # The web kit's table is Spectrangle: the web listener serves that game's tables.
    listeners = (protocol, "spectrangle") if protocol == "web" else (protocol,)
    config = ServerConfig(database=database).only(*listeners)
    if protocol == "santorini":
        config = replace(config, santorini=replace(config.santorini, heartbeat_timeout=1.0))
    if protocol == "cmpn402":
        config = replace(
            config, cmpn402=replace(config.cmpn402, ping_interval=0.5, challenge_time=1.0)
        )
    return config


async def server_run(protocol: str, lexicon: Lexicon) -> tuple[float, str, dict[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        config = _config(protocol, f"{tmp}/bench.sqlite3")
        server = MeepleServer(config, rng=random.Random(7))
        server.services.lexicon = lexicon
        await server.start()
        try:
            started = time.perf_counter()
            results = await run_server_kit(
                protocol, "127.0.0.1", server.ports[protocol], lexicon=lexicon, options=SHORT
            )
            took = time.perf_counter() - started
        finally:
            await server.stop()
    title = f"meeple check server {protocol} 127.0.0.1:PORT (meeple's own server)"
    return took, to_text(title, results), summary(results)


async def reads_lines_run(wait: float, lexicon: Lexicon) -> tuple[float, str, dict[str, int]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.check.broken import Mangler
    from tests.check.test_quirky_servers import _ReadsLines

    with tempfile.TemporaryDirectory() as tmp:
        server = MeepleServer(_config("twente", f"{tmp}/bench.sqlite3"), rng=random.Random(7))
        server.services.resource("scrabble.lexicon", lambda: lexicon)
        await server.start()
        reads_lines = _ReadsLines()
        try:
            async with Mangler(server.ports["twente"], b"\x1e", relay=reads_lines) as relay:
                started = time.perf_counter()
                results = await run_server_kit(
                    "twente", "127.0.0.1", relay.port, lexicon=lexicon, wait=wait
                )
                took = time.perf_counter() - started
        finally:
            await server.stop()
    title = f"meeple check server twente --wait {wait:g} (a server that reads lines)"
    return took, to_text(title, results), {**summary(results), "silences": reads_lines.waits}


async def client_run(protocol: str, lexicon: Lexicon) -> tuple[float, str, dict[str, int]]:
    async def bot(port: int) -> object:
        if protocol == "twente":
            return await play_twente("127.0.0.1", port, "Alice", lexicon, players=2, games=2)
        if protocol == "spectrangle":
            return await play_spectrangle("127.0.0.1", port, "Alice", players=2, games=2)
        if protocol == "santorini":
            return await play_santorini("127.0.0.1", port, "Alice", games=2)
        if protocol == "cmpn402":
            agent = BuiltinAgent(lexicon)
            return await play_cmpn402(f"ws://127.0.0.1:{port}/", "Alice", agent, games=2)
        if protocol == "web":  # meeple's browser client is JavaScript: the tests' raw one
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.check.clients import web_player

            return await web_player(port, 2, frozenset())
        return await play_clarkson("127.0.0.1", port, "Alice", lexicon, players=2, games=2)

    started = time.perf_counter()
    with configure("greedy", 0):
        results = await run_client_kit(
            protocol, "127.0.0.1", 0, lexicon=lexicon, games=2, timeout=120, after_ready=bot
        )
    took = time.perf_counter() - started
    title = f"meeple check client {protocol} --games 2 (meeple's own bot as the client)"
    return took, to_text(title, results), summary(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--samples", type=Path)
    parser.add_argument(
        "--kit", action="append", default=[], help="only these kits: server-web, client-twente, …"
    )
    parser.add_argument(
        "--reads-lines",
        type=float,
        action="append",
        default=[],
        metavar="S",
        help="only the Twente server kit at --wait S against a server that reads lines",
    )
    args = parser.parse_args()
    lexicon = load_lexicon("gcide")
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, CPython {platform.python_version()}"
    )
    for wait in args.reads_lines:
        for i in range(args.runs):
            took, _, counts = asyncio.run(reads_lines_run(wait, lexicon))
            shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            print(f"reads lines --wait {wait:g} run {i + 1}: {took:6.2f} s  ({shown})")
    if args.reads_lines:
        return
    for side, kits, run in (
        ("server", SERVER_KITS, server_run),
        ("client", CLIENT_KITS, client_run),
    ):
        for protocol in kits:
            if args.kit and f"{side}-{protocol}" not in args.kit:
                continue
            for i in range(args.runs):
                took, text, counts = asyncio.run(run(protocol, lexicon))
                shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
                print(f"{side:6} {protocol:9} run {i + 1}: {took:6.2f} s  ({shown})")
                if i == 0 and args.samples is not None:
                    args.samples.mkdir(parents=True, exist_ok=True)
                    (args.samples / f"check-{side}-{protocol}.txt").write_text(text)


if __name__ == "__main__":
    main()

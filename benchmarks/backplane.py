"""A Twente turn's server cost through the one-process node (every role over the local
backplane: ``meeple node --local``) against ``meeple serve``'s: ``python
benchmarks/backplane.py`` (``--games 100``, ``--repeats 3``).

Both are measured as benchmarks/server_load.py measures ``meeple serve``: the server in
its own process, scripted Twente clients in another replaying one recorded game (every
room deals the same bag), the server's CPU time (user + system) over the load divided by
the turns played. The node's rooms log to the backplane's SQLite file and its store
keeps the finished games in another; ``meeple serve`` logs to its store. The best of
``--repeats`` runs is kept for each (the machine is shared).

Where the node's time goes: ``MEEPLE_BENCH_PROFILE=path`` writes the node process's
cProfile stats to ``path.node``; ``MEEPLE_BENCH_PYSPY=path`` has py-spy (``pip install
py-spy``; next to this Python) sample it at 250 Hz into ``path.node`` (collapsed stacks),
with less overhead than cProfile (docs/benchmarks.md, "No hop in one process").
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import server_load
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon
from server_load import SEED, bench_config, record_scrabble


def node_process(names: tuple[str, ...], db: str, out: Any, stop: Any) -> None:
    from meeple.node.node import ROLES, Node, NodeConfig

    async def run() -> None:
        base = Path(db)
        config = NodeConfig(
            name="bench",
            roles=frozenset(ROLES),
            nats_url="",
            local=str(base.with_name(base.stem + "-backplane.sqlite3")),
            database=f"sqlite:///{db}",
            server=bench_config(names, db),
            listeners=names,
            same_game_seed=SEED,
        )
        node = Node(config)
        await node.start()
        out.put((os.getpid(), {n: node.listeners[n].port for n in names}))
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await node.stop()

    spy = None
    sampled = os.environ.get("MEEPLE_BENCH_PYSPY")
    if sampled:  # py-spy samples the node's process, its stacks (collapsed) to this path
        spy = subprocess.Popen(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(os.getpid()),
             "--rate", "250", "--nonblocking", "--format", "raw", "-o", f"{sampled}.node"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
    profile = os.environ.get("MEEPLE_BENCH_PROFILE")
    if profile:  # cProfile the node's process, stats written to this path
        import cProfile

        cProfile.runctx("asyncio.run(run())", globals(), locals(), f"{profile}.node")
    else:
        asyncio.run(run())
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(60)


class NodeServer:
    """The one-process node in its own process, as :class:`server_load.Server`."""

    def __init__(self, names: tuple[str, ...], db: Path) -> None:
        ctx = mp.get_context("spawn")
        self._out: Any = ctx.Queue()
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=node_process, args=(names, str(db), self._out, self._stop))

    def __enter__(self) -> NodeServer:
        self._proc.start()
        self.pid, self.ports = self._out.get(timeout=120)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="concurrent Twente games")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (best kept)")
    args = parser.parse_args()
    lexicon = load_lexicon(DEFAULT_LEXICON)
    recorded = {f: record_scrabble("twente", lexicon, f) for f in (0, 1)}
    print(
        f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f};"
        " server and clients in separate processes"
    )
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for title, server in (("meeple serve", None), ("one-process node", NodeServer)):
                cost = server_load.run_listener(
                    "twente",
                    args.games,
                    1,
                    0,
                    recorded,
                    Path(tmp) / f"{title.replace(' ', '-')}-{r}",
                    server_class=server,
                    title=title,
                )
                best[title] = min(best.get(title, cost), cost)
    serve, node = best["meeple serve"], best["one-process node"]
    print(f"Twente server CPU per turn, {args.games} games (best of {args.repeats}):")
    print(f"  meeple serve        {serve * 1e6:8.0f} us")
    print(f"  one-process node    {node * 1e6:8.0f} us   {(node / serve - 1) * 100:+6.1f} %")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

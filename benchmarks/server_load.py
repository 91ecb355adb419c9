"""Server load on all five listeners: scripted clients replaying fixed games.

Run: ``.venv/bin/python benchmarks/server_load.py`` (full size: 1,000 concurrent Twente
games, 500 on each other TCP listener), or ``--quick`` (a tenth of that), or choose:
``--games twente=200,spectrangle=50 --idle 500``.

The server runs in its own process and is measured from outside: its CPU time
(``/proc/<pid>/stat``, user + system) over the load, divided by the turns played, and
its memory (RSS) per idle connection. The clients run in another process and do no
move search: every game is the same fixed game, replayed.

- Scrabble (Twente, Clarkson, CMPN402): the server process hands every room the same
  RNG seed (:class:`SameGameRng`), so every game deals the same bag; the benchmark
  plays that game once beforehand with the engine and meeple's AI and records it, and
  the clients send the recorded moves, pre-encoded, as the server asks for them.
- Santorini and Spectrangle: the same, with moves chosen from what the server sends by
  a cheap fixed policy (AM27: the first option listed; Spectrangle: the best-scoring
  placement, else skip), so the games are fixed too.
- CMPN402 is a contest referee: one game at a time per listener (a third agent is
  refused, ERRATA), so it plays its games one after another on one pair of clients.

Printed per listener: games and turns, turns/s, p50/p99 from a move leaving its player
to the opponent's update arriving, server CPU per turn, memory per idle connection;
first, a bare asyncio echo server in its own process (a frame out, the frame back,
on as many connections) for what loopback and asyncio can do on this machine.

Heartbeats are slowed for the run (AM27 PING every 60 s instead of 0.5 s, CMPN402
WebSocket ping every 60 s) so that turns are measured, not pings, and the per-address
connection limit is off (every client comes from 127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import random
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games.scrabble.game import VARIANTS, Exchange, Game, Pass, Play
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon

SEED = 20261124  # every Scrabble room's RNG seed in the server process
FULL_GAMES = {"twente": 1000, "clarkson": 500, "cmpn402": 500, "santorini": 500, "spectrangle": 500}
LISTENERS = tuple(FULL_GAMES)
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


class SameGameRng(random.Random):
    """The server's RNG in the benchmark: a room seeds its game from ``getrandbits(64)``,
    which is always :data:`SEED` here, so every game deals the same bag."""

    def getrandbits(self, k: int) -> int:
        return SEED if k == 64 else super().getrandbits(k)


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS  # utime, stime


def cpu_seconds(pid: int) -> float:
    return sum(cpu_times(pid))


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- the server process -----------------------------------------------------------------


def server_process(names: tuple[str, ...], db: str, out: Any, stop: Any) -> None:
    from meeple.server import config as cfg
    from meeple.server.app import MeepleServer
    from meeple.server.config import Cmpn402Config, SantoriniConfig, ServerConfig

    async def run() -> None:
        config = ServerConfig(database=db).only(*names)
        # (Without [limits], e.g. the tree before issue 16, for before/after figures.)
        limits = getattr(cfg, "LimitsConfig", None)
        if limits is not None:
            config = config.with_overrides(limits=limits(max_connections_per_address=0))
        config = config.with_overrides(
            santorini=SantoriniConfig(framing="lines", ping_interval=60, heartbeat_timeout=600),
            cmpn402=Cmpn402Config(
                admin_token="bench", ping_interval=60, games=10**6, challenge_time=30
            ),
            idle_timeout=3600,
        )
        server = MeepleServer(config, rng=SameGameRng(1))
        await server.start()
        out.put((os.getpid(), server.ports))
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await server.stop()

    profile = os.environ.get("MEEPLE_BENCH_PROFILE")
    if profile:  # cProfile the whole server process, stats written to this path
        import cProfile

        cProfile.runctx("asyncio.run(run())", globals(), locals(), f"{profile}.{names[0]}")
    else:
        asyncio.run(run())


class Server:
    """The measured server in its own process."""

    def __init__(self, names: tuple[str, ...], db: Path) -> None:
        ctx = mp.get_context("spawn")
        self._out: Any = ctx.Queue()
        self._stop = ctx.Event()
        self._proc = ctx.Process(
            target=server_process, args=(names, str(db), self._out, self._stop)
        )

    def __enter__(self) -> Server:
        self._proc.start()
        self.pid, self.ports = self._out.get(timeout=120)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()


# --- recorded games ---------------------------------------------------------------------


@dataclass(frozen=True)
class ScrabbleMove:
    """One recorded turn: the seat and what it did (x, y, direction, word / tiles)."""

    seat: int
    kind: str  # "play", "exchange", "pass"
    x: int = 0
    y: int = 0
    direction: Any = None
    word: str = ""
    tiles: str = ""
    placements: tuple[Any, ...] = ()
    score: int = 0


def record_scrabble(variant: str, lexicon: Lexicon, first_player: int = 0) -> list[ScrabbleMove]:
    """Play the benchmark's game once with the engine and meeple's AI; its turns."""
    game = Game(
        ["p0", "p1"],
        random.Random(SEED),
        variant=VARIANTS[variant],
        lexicon=lexicon,
        first_player=first_player,
    )
    moves: list[ScrabbleMove] = []
    while not game.is_over:
        seat = game.turn
        assert seat is not None
        choice = choose(
            game.board,
            game.rack(seat),
            lexicon,
            tile_set=VARIANTS[variant].tile_set,
            bag_count=len(game.bag),
            exchange_minimum=VARIANTS[variant].exchange_minimum,
        )
        if isinstance(choice, PassChoice):
            game.apply(Pass(seat))
            moves.append(ScrabbleMove(seat, "pass"))
        elif isinstance(choice, ExchangeChoice):
            game.apply(Exchange(seat, choice.tiles))
            moves.append(ScrabbleMove(seat, "exchange", tiles=choice.tiles))
        else:
            game.apply(Play(seat, choice.tiles))
            moves.append(
                ScrabbleMove(
                    seat,
                    "play",
                    choice.x,
                    choice.y,
                    choice.direction,
                    choice.word,
                    placements=choice.tiles,
                    score=choice.score,
                )
            )
    return moves


# --- the client process -----------------------------------------------------------------


@dataclass
class Stats:
    """What the clients saw: turns, move→update latencies, games finished."""

    turns: int = 0
    games: int = 0  # finished, counted by the first seat's client
    joined: int = 0  # clients connected and greeted, waiting for the start
    latencies: list[float] = field(default_factory=list)
    sent: dict[Any, float] = field(default_factory=dict)  # game key -> time of last move

    def moved(self, key: Any) -> None:
        self.sent[key] = time.perf_counter()

    def updated(self, key: Any) -> None:
        sent = self.sent.pop(key, None)
        if sent is not None:
            self.latencies.append(time.perf_counter() - sent)
            self.turns += 1


async def twente_player(
    port: int,
    name: str,
    game: list[ScrabbleMove],
    stats: Stats,
    ready: asyncio.Event,
    rounds: int,
) -> None:
    from meeple.protocols import twente as tw

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    session = tw.ClientSession()
    writer.write(session.send(tw.Announce(name)))
    queued = False
    mine: list[ScrabbleMove] = []
    key: Any = None
    while True:
        data = await reader.read(65536)
        if not data:
            break
        for m in session.receive_data(data):
            if isinstance(m, tw.Welcome) and not queued:
                queued = True
                stats.joined += 1
                await ready.wait()
                writer.write(session.send(tw.RequestGame(2)))
            elif isinstance(m, tw.StartGame):
                key = m.players
                seat = m.players.index(name)
                mine = [mv for mv in game if mv.seat == seat]
            elif isinstance(m, tw.NotifyTurn) and m.your_turn:
                move = mine.pop(0)
                if move.kind == "play":
                    message: Any = tw.MakeWord(move.x, move.y, move.direction, move.word)
                else:
                    message = tw.MakeSwap(move.tiles.replace("?", "!"))
                stats.moved(key)
                writer.write(session.send(message))
            elif isinstance(m, tw.InformWord | tw.InformSwap) and m.player != name:
                stats.updated(key)
            elif isinstance(m, tw.GameOver):
                stats.games += name.endswith("p0")
                rounds -= 1
                if not rounds:
                    writer.close()
                    return
                writer.write(session.send(tw.RequestGame(2)))
            elif isinstance(m, tw.Error):
                raise RuntimeError(f"{name}: server refused a recorded move: {m}")
    writer.close()


PLAYERS: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {"twente": twente_player}


def client_process(
    listener: str,
    port: int,
    games: int,
    rounds: int,
    recorded: list[ScrabbleMove],
    out: Any,
    go: Any,
) -> None:
    async def run() -> tuple[Stats, float]:
        stats = Stats()
        ready = asyncio.Event()
        player = PLAYERS[listener]
        tasks = [
            asyncio.create_task(player(port, f"g{i // 2}p{i % 2}", recorded, stats, ready, rounds))
            for i in range(2 * games)
        ]
        while stats.joined < len(tasks):  # connected and past the greeting
            await asyncio.sleep(0.05)
        out.put("joined")  # the parent reads the server's CPU time now
        await asyncio.get_running_loop().run_in_executor(None, go.wait)
        t0 = time.perf_counter()
        ready.set()
        await asyncio.gather(*tasks)
        return stats, time.perf_counter() - t0

    stats, wall = asyncio.run(run())
    out.put((stats.turns, stats.games, stats.latencies, wall))


def idle_process(port: int, count: int, ready: Any, stop: Any) -> None:
    async def run() -> None:
        conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]
        ready.put(count)
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        for _, w in conns:
            w.close()

    asyncio.run(run())


def idle_memory(pid: int, port: int, count: int) -> float:
    """Bytes of server RSS per idle (connected, silent) connection."""
    ctx = mp.get_context("spawn")
    ready: Any = ctx.Queue()
    stop = ctx.Event()
    time.sleep(0.3)
    before = rss_bytes(pid)
    proc = ctx.Process(target=idle_process, args=(port, count, ready, stop))
    proc.start()
    ready.get(timeout=120)
    time.sleep(0.5)  # let the server take the last ones in
    per = (rss_bytes(pid) - before) / count
    stop.set()
    proc.join(30)
    return per


# --- runs -------------------------------------------------------------------------------


def report(
    title: str,
    turns: int,
    wall: float,
    cpu: float,
    lat: list[float],
    mem: float,
    split: str = "",
) -> None:
    print(title)
    print(f"  turns/s                    {turns / wall:10.1f}")
    print(f"  server CPU per turn        {cpu / max(turns, 1) * 1e6:10.0f} us{split}")
    print(
        f"  move -> opponent update    p50 {percentile(lat, 0.5) * 1e3:.2f} ms"
        f"   p99 {percentile(lat, 0.99) * 1e3:.2f} ms"
    )
    print(f"  memory per idle conn       {mem / 1024:10.1f} KiB", flush=True)


def run_listener(
    name: str, games: int, rounds: int, idle: int, recorded: list[ScrabbleMove], tmp: Path
) -> None:
    with Server((name,), tmp / f"{name}.sqlite3") as server:
        port = server.ports[name]
        ctx = mp.get_context("spawn")
        out: Any = ctx.Queue()
        go = ctx.Event()
        clients = ctx.Process(
            target=client_process, args=(name, port, games, rounds, recorded, out, go)
        )
        clients.start()
        assert out.get() == "joined"
        user0, system0 = cpu_times(server.pid)
        go.set()
        turns, finished, latencies, wall = out.get()
        user1, system1 = cpu_times(server.pid)
        user, system = user1 - user0, system1 - system0
        cpu = user + system
        clients.join()
        mem = idle_memory(server.pid, port, idle)
    played = f"{games} concurrent games" + (f" x {rounds} in a row" if rounds > 1 else "")
    report(
        f"meeple {name}: {played}, {finished} finished, {turns} turns in {wall:.2f} s",
        turns,
        wall,
        cpu,
        latencies,
        mem,
        f"  (user {user / max(turns, 1) * 1e6:.0f} us"
        f" + system {system / max(turns, 1) * 1e6:.0f} us)",
    )


def echo_server_process(out: Any, stop: Any) -> None:
    async def run() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while data := await reader.read(65536):
                writer.write(data)
            writer.close()

        srv = await asyncio.start_server(echo, "127.0.0.1", 0)
        out.put((os.getpid(), srv.sockets[0].getsockname()[1]))
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        srv.close()

    asyncio.run(run())


FRAME = b"MAKEMOVE\x1fWORD\x1fH8\x1fH\x1fQUARTZ\x1e"


def echo_client_process(port: int, conns: int, messages: int, out: Any) -> None:
    async def one(latencies: list[float]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(messages):
            t = time.perf_counter()
            writer.write(FRAME)
            await reader.readexactly(len(FRAME))
            latencies.append(time.perf_counter() - t)
        writer.close()

    async def run() -> tuple[list[float], float]:
        latencies: list[float] = []
        t0 = time.perf_counter()
        await asyncio.gather(*(one(latencies) for _ in range(conns)))
        return latencies, time.perf_counter() - t0

    latencies, wall = asyncio.run(run())
    out.put((latencies, wall))


def run_echo(conns: int, messages: int, idle: int) -> None:
    ctx = mp.get_context("spawn")
    info: Any = ctx.Queue()
    stop = ctx.Event()
    server = ctx.Process(target=echo_server_process, args=(info, stop))
    server.start()
    pid, port = info.get()
    out: Any = ctx.Queue()
    clients = ctx.Process(target=echo_client_process, args=(port, conns, messages, out))
    cpu0 = cpu_seconds(pid)
    clients.start()
    latencies, wall = out.get()
    cpu = cpu_seconds(pid) - cpu0
    clients.join()
    mem = idle_memory(pid, port, idle)
    stop.set()
    server.join()
    report(
        f"baseline asyncio echo: {conns} connections x {messages} round trips",
        len(latencies),
        wall,
        cpu,
        latencies,
        mem,
    )


def parse_games(text: str | None, quick: bool) -> dict[str, int]:
    games = {k: (v // 10 if quick else v) for k, v in FULL_GAMES.items()}
    if text:
        games = {}
        for part in text.split(","):
            name, _, count = part.partition("=")
            if name not in FULL_GAMES:
                raise SystemExit(f"no listener {name!r} (known: {', '.join(FULL_GAMES)})")
            games[name] = int(count)
    return games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the full size")
    parser.add_argument("--games", help="e.g. twente=1000,clarkson=500 (only these)")
    parser.add_argument("--idle", type=int, default=500, help="idle connections for memory")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="games each client plays in a row (few games x many rounds: a lightly loaded server)",
    )
    args = parser.parse_args()
    games = parse_games(args.games, args.quick)
    lexicon = load_lexicon("gcide")
    print(f"machine: {os.cpu_count()} CPUs; server and clients in separate processes")
    run_echo(min(2 * max(games.values()), 400), 200, args.idle)
    with tempfile.TemporaryDirectory() as tmp:
        for name, count in games.items():
            recorded = record_scrabble(name, lexicon) if name == "twente" else []
            run_listener(name, count, args.rounds, args.idle, recorded, Path(tmp))


if __name__ == "__main__":
    main()

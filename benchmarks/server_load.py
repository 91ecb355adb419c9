"""Server load on all five listeners: scripted clients replaying fixed games.

Run: ``.venv/bin/python benchmarks/server_load.py`` (full size: 1,000 concurrent Twente
games, 500 on Clarkson, AM27 and Spectrangle, 100 CMPN402 games in a row), or
``--quick`` (a tenth of that), or choose: ``--games twente=200,spectrangle=50 --idle 500``.
``--rounds 50`` with few games measures a lightly loaded server (each client plays
games in a row; Twente only).

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
  refused, ERRATA), so it plays a series of games one after another on one pair of
  agents (100 in a full run; the referee pauses between the games of a series), the
  first player alternating (so two recorded games); no idle-memory figure.

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
import queue
import random
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games.scrabble.game import VARIANTS, Accept, Exchange, Game, Pass, Play
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon

try:  # the list meeple serve judges with (a tree before it had one: GCIDE)
    from meeple.games.scrabble.lexicon import DEFAULT_LEXICON
except ImportError:
    DEFAULT_LEXICON = "gcide"

SEED = 20261124  # every Scrabble room's RNG seed in the server process
# CMPN402 plays its games one after another (about a second each, most of it the
# referee's pause between the games of a series), so 100 rather than 500.
FULL_GAMES = {"twente": 1000, "clarkson": 500, "cmpn402": 100, "santorini": 500, "spectrangle": 500}
LISTENERS = tuple(FULL_GAMES)
TICKS = os.sysconf("SC_CLK_TCK")
LOG = [True]  # rooms write their action log (--no-log: they do not)
METRICS = [True]  # Prometheus metrics counted (--no-metrics: not; issue 35)
# What serves (--runtime, else $MEEPLE_SERVE_RUNTIME, as meeple serve): "server",
# MeepleServer; "node", the one-process node (meeple.node.node.serve_config).
RUNTIME = [os.environ.get("MEEPLE_SERVE_RUNTIME") or "server"]
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


def main_thread_seconds(pid: int) -> float:
    """CPU of the process's main thread (the event loop), user + system."""
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def context_switches(pid: int) -> tuple[int, int]:
    """Context switches (voluntary + involuntary) so far of process ``pid``'s main thread
    (the event loop) and of its other threads (the journal's writer, executors)."""
    loop = other = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                n = sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        if int(tid) == pid:
            loop += n
        else:
            other += n
    return loop, other


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


def bench_config(names: tuple[str, ...], db: str, metrics: bool = True) -> Any:
    """The measured server's configuration: only ``names`` listening, limits off,
    heartbeats slowed (also the one-process node's: benchmarks/backplane.py)."""
    from meeple.server import config as cfg
    from meeple.server.config import Cmpn402Config, SantoriniConfig, ServerConfig

    config = ServerConfig(database=db).only(*names)
    # (Without [limits], e.g. the tree before issue 16, for before/after figures.)
    limits = getattr(cfg, "LimitsConfig", None)
    if limits is not None:
        try:  # the message budget (issue 22) too: the clients replay as fast as they can
            off = limits(
                max_connections_per_address=0,
                message_rate=1e9,
                message_burst=10**9,
                hard_message_rate=1e9,
                hard_message_burst=10**9,
            )
        except TypeError:  # a tree before issue 22
            off = limits(max_connections_per_address=0)
        config = config.with_overrides(limits=off)
    config = config.with_overrides(
        santorini=SantoriniConfig(framing="lines", ping_interval=60, heartbeat_timeout=600),
        cmpn402=Cmpn402Config(
            admin_token="bench", ping_interval=60, games=10**6, challenge_time=30
        ),
        idle_timeout=3600,
    )
    if hasattr(config, "metrics"):  # a tree before issue 35 has none
        config = config.with_overrides(metrics=metrics)
    return config


def server_process(
    names: tuple[str, ...], db: str, out: Any, stop: Any, log: bool = True, metrics: bool = True
) -> None:
    from meeple.server.app import MeepleServer

    async def run() -> None:
        config = bench_config(names, db, metrics)
        server = MeepleServer(config, rng=SameGameRng(1))
        await server.start()
        if not log:
            # Rooms keep no action log (docs/durability.md): the "without" figure.
            from meeple.server.lobby.tables import server_lobby

            server_lobby(server.services).journal = None
        out.put((os.getpid(), server.ports))
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await server.stop()

    profile = os.environ.get("MEEPLE_BENCH_PROFILE")
    if profile:  # cProfile the whole server process, stats written to this path
        import cProfile

        cProfile.runctx("asyncio.run(run())", globals(), locals(), f"{profile}.{names[0]}")
    else:
        asyncio.run(run())


def serve_node_process(names: tuple[str, ...], db: str, out: Any, stop: Any) -> None:
    """``meeple serve``'s default runtime, the one-process node (every role over the
    local backplane beside ``db``), with only ``names`` listening and every game dealt
    alike (``same_game_seed``)."""
    from dataclasses import replace

    from meeple.node.node import Node, serve_config

    async def run() -> None:
        config = replace(
            serve_config(bench_config(names, db)), listeners=names, same_game_seed=SEED
        )
        node = Node(config)
        await node.start()
        out.put((os.getpid(), {n: node.listeners[n].port for n in names}))
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await node.stop()

    profile = os.environ.get("MEEPLE_BENCH_PROFILE")
    if profile:  # cProfile the whole node process, stats written to this path
        import cProfile

        cProfile.runctx("asyncio.run(run())", globals(), locals(), f"{profile}.{names[0]}")
    else:
        asyncio.run(run())


class Server:
    """The measured server in its own process (``RUNTIME``'s)."""

    def __init__(self, names: tuple[str, ...], db: Path) -> None:
        ctx = mp.get_context("spawn")
        self._out: Any = ctx.Queue()
        self._stop = ctx.Event()
        if RUNTIME[0] == "node":
            self._proc = ctx.Process(
                target=serve_node_process, args=(names, str(db), self._out, self._stop)
            )
            return
        self._proc = ctx.Process(
            target=server_process, args=(names, str(db), self._out, self._stop, LOG[0], METRICS[0])
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
    """Play the benchmark's game once with the engine and meeple's AI; its turns.

    (Clarkson can exchange one tile or the whole hand, §3.16: the whole hand here.)"""
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
        pending = game.pending
        if pending is not None and pending.going_out:  # CMPN402: accept the last play
            game.apply(Accept(seat))
            continue
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
            tiles = game.rack(seat) if variant == "clarkson" else choice.tiles
            game.apply(Exchange(seat, tiles))
            moves.append(ScrabbleMove(seat, "exchange", tiles=tiles))
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
    sent: dict[Any, list[float]] = field(default_factory=dict)  # game -> moves not yet seen

    def moved(self, key: Any) -> None:
        self.sent.setdefault(key, []).append(time.perf_counter())

    def updated(self, key: Any) -> None:
        """The opponent saw the oldest move of game ``key`` not yet seen."""
        pending = self.sent.get(key)
        if pending:
            self.latencies.append(time.perf_counter() - pending.pop(0))
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


_CLARKSON_SEATING: dict[str, Any] = {}  # the client process's table lock and pair events


async def clarkson_player(
    port: int,
    name: str,
    game: list[ScrabbleMove],
    stats: Stats,
    ready: asyncio.Event,
    rounds: int,
) -> None:
    """A Clarkson client. A table holds whoever said HELLO and starts when all are READY
    (a lone player too), so each pair takes its seats under one lock: both HELLO, then
    both READY, and the next pair waits until this table has started."""
    from meeple.protocols import clarkson as cl

    locks = _CLARKSON_SEATING
    pair = name[: name.index("p")]
    if "" not in locks:
        locks[""] = asyncio.Lock()
    if pair not in locks:
        locks[pair] = [asyncio.Event(), asyncio.Event()]  # p0 greeted, p1 greeted
    table_lock: asyncio.Lock = locks[""]
    first, second = locks[pair]
    seat = int(name[-1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    session = cl.ClientSession()
    mine = [mv for mv in game if mv.seat == seat]
    greeted = named = False
    while True:
        data = await reader.read(65536)
        if not data:
            break
        for m in session.receive_data(data):
            if isinstance(m, cl.Hello) and not greeted:
                greeted = True
                if seat == 0:
                    await table_lock.acquire()
                else:
                    await first.wait()
                writer.write(session.send(cl.meeple_hello("Linux")))
            elif isinstance(m, cl.Ok) and not named:
                named = True
                writer.write(session.send(cl.UserSet(name)))
            elif isinstance(m, cl.UserChange) and m.new == name:
                session.name = name  # TURN <name> is ours from now on
                if seat == 0:
                    first.set()
                    await second.wait()
                    writer.write(session.send(cl.Ready()))
                else:
                    second.set()
                    writer.write(session.send(cl.Ready()))
            elif isinstance(m, cl.Starting):
                if seat == 0:
                    table_lock.release()
                # Seated: the measurement starts when every table is (tables start
                # one after another, which is not what is measured).
                stats.joined += 1
                await ready.wait()
            elif isinstance(m, cl.Turn) and m.name == name:
                stats.updated(pair)
                move = mine.pop(0)
                if move.kind == "play":
                    message: Any = cl.Place(tuple(move.placements))
                elif move.kind == "exchange":
                    message = cl.Exchange(None)
                else:
                    message = cl.Pass()
                stats.moved(pair)
                writer.write(session.send(message))
            elif isinstance(m, cl.Winner):
                stats.updated(pair)
                stats.games += seat == 0
                writer.close()
                return
            elif isinstance(m, cl.Nok) and named:
                raise RuntimeError(f"{name}: server refused: {m}")
    writer.close()


async def spectrangle_player(
    port: int,
    name: str,
    game: list[ScrabbleMove],
    stats: Stats,
    ready: asyncio.Event,
    rounds: int,
) -> None:
    """A Spectrangle client: the best-scoring placement, else exchange/skip (cheap and
    deterministic, so with every room's bag the same, every game is the same game)."""
    from meeple.clients.spectrangle import SpectrangleClient, take_turn
    from meeple.protocols import spectrangle as sp

    client = await SpectrangleClient.connect("127.0.0.1", port, name)
    stats.joined += 1
    await ready.wait()
    await client.request_game(2)
    key: Any = None
    while True:
        m = await client.receive()
        if isinstance(m, sp.StartWith):
            key = m.names
        elif isinstance(m, sp.Move | sp.Replace | sp.PlayerSkipped) and m.name != name:
            stats.updated(key)
        elif isinstance(m, sp.GameFinished | sp.PlayerLeft):
            stats.games += name == (key[0] if key else "")
            await client.close()
            return
        if client.my_turn and not client._pending:
            stats.moved(key)
            await take_turn(client, 0, exchange=True)


async def santorini_player(
    port: int,
    name: str,
    game: list[ScrabbleMove],
    stats: Stats,
    ready: asyncio.Event,
    rounds: int,
) -> None:
    """An AM27 client with the simple fixed policy (first choice of the option lists the
    server sends, ties broken by a seeded RNG): no search, the same game every time."""
    from meeple.clients.santorini import SantoriniClient, choose
    from meeple.protocols.santorini import messages as am

    rng = random.Random(SEED)
    client = await SantoriniClient.connect("127.0.0.1", port, ping_interval=3600)
    key: Any = None
    async for m in client:
        if isinstance(m, am.ServerState) and not client.nickname:
            stats.joined += 1
            await ready.wait()
            await client.register(name, 2, False)
        elif isinstance(m, am.Players):
            key = tuple(n for n, _ in m.players)
            if m.player == name:
                await client.send(am.ChooseStarter(name, name))
        elif isinstance(m, am.Update):
            if m.player != name:
                stats.updated(key)  # the opponent's step, as we see it
            else:
                command = choose(client, m, rng)
                if command is not None:
                    stats.moved(key)
                    await client.send(command)
        elif isinstance(m, am.EndGame):
            stats.games += key is not None and name == key[0]
            break
    await client.close()


def cmpn402_process(
    port: int, games: int, recorded: dict[int, list[ScrabbleMove]], out: Any, go: Any
) -> None:
    """Two agents play ``games`` games in a row (the referee's series; the first player
    alternates, so two recorded games, one per first player), replaying moves."""
    from websockets.asyncio.client import connect

    from meeple.clients.cmpn402 import GameResult, View, _Runner
    from meeple.games.scrabble.board import Direction
    from meeple.protocols.cmpn402 import ExchangeMove, PassMove, PlayMove, PlayNotice

    stats = Stats()

    class Replay:
        def __init__(self, results: list[GameResult]) -> None:
            self.results = results
            self.queues: dict[tuple[int, int], list[ScrabbleMove]] = {}

        def choose_move(self, view: View) -> Any:
            game = len(self.results)
            first = game % 2
            seat = first if view.order == 1 else 1 - first
            queue = self.queues.setdefault(
                (game, seat), [mv for mv in recorded[first] if mv.seat == seat]
            )
            if not queue:
                # The game's last play was ours or theirs and the END is on its way: the
                # client asks for a move after its NO_CHALLENGE; it goes nowhere.
                return PassMove()
            if view.refused:
                raise RuntimeError(
                    f"game {game}, order {view.order}, seat {seat}: the replay left the "
                    f"recorded game (refused {view.refused}, rack {view.rack})"
                )
            move = queue.pop(0)
            stats.moved(None)
            if move.kind == "pass":
                return PassMove()
            if move.kind == "exchange":
                return ExchangeMove(move.tiles)
            tiles = sorted(move.placements, key=lambda p: (p.y, p.x))
            return PlayMove(
                tiles[0].x + 1,
                tiles[0].y + 1,
                0 if move.direction is Direction.ACROSS else 1,
                "".join(p.tile for p in tiles),
                move.score,
            )

        def want_challenge(self, view: View, play: PlayNotice) -> bool:
            stats.updated(None)
            return False

    async def agent(name: str, results: list[GameResult]) -> None:
        uri = f"ws://127.0.0.1:{port}/"
        async with connect(uri, max_size=2**16, compression=None) as ws:
            stats.joined += 1
            await asyncio.get_running_loop().run_in_executor(None, go.wait)
            await _Runner(ws, name, Replay(results)).run(games, results)

    async def run() -> tuple[int, float]:
        a: list[GameResult] = []
        b: list[GameResult] = []
        tasks = [asyncio.create_task(agent("a", a)), asyncio.create_task(agent("b", b))]
        while stats.joined < 2:
            await asyncio.sleep(0.05)
        out.put("joined")
        t0 = time.perf_counter()
        await asyncio.gather(*tasks)
        return len(a), time.perf_counter() - t0

    finished, wall = asyncio.run(run())
    # Every move counts as a turn; latencies are plays only (the notice an agent sees).
    out.put(
        (len(stats.latencies) + sum(map(len, stats.sent.values())), finished, stats.latencies, wall)
    )


PLAYERS: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
    "twente": twente_player,
    "clarkson": clarkson_player,
    "spectrangle": spectrangle_player,
    "santorini": santorini_player,
}


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
    """Bytes of server RSS per idle (connected, silent) connection; NaN for none."""
    if count <= 0:
        return float("nan")
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
    idle = "       n/a" if mem != mem else f"{mem / 1024:10.1f} KiB"  # NaN: not measured
    print(f"  memory per idle conn       {idle}", flush=True)


def run_listener(
    name: str,
    games: int,
    rounds: int,
    idle: int,
    recorded: dict[int, list[ScrabbleMove]],
    tmp: Path,
    server_class: Callable[[tuple[str, ...], Path], Any] | None = None,
    title: str = "meeple",
) -> float:
    """Run one listener's load and print its figures; the server CPU seconds per turn.
    ``server_class``: the measured process (:class:`Server`, ``meeple serve``'s, unless
    told; benchmarks/backplane.py passes the one-process node's)."""
    tmp.mkdir(parents=True, exist_ok=True)
    with (server_class or Server)((name,), tmp / f"{name}.sqlite3") as server:
        port = server.ports[name]
        # First, on the fresh server: after a load, freed memory would hide the cost.
        # (CMPN402 seats two agents; a third connection is refused: no idle figure.)
        no_idle = name == "cmpn402" or idle <= 0
        mem = float("nan") if no_idle else idle_memory(server.pid, port, idle)
        ctx = mp.get_context("spawn")
        out: Any = ctx.Queue()
        go = ctx.Event()
        if name == "cmpn402":
            clients = ctx.Process(target=cmpn402_process, args=(port, games, recorded, out, go))
        else:
            clients = ctx.Process(
                target=client_process, args=(name, port, games, rounds, recorded[0], out, go)
            )
        clients.start()

        def answer() -> Any:
            # The clients' process answers, or dies (a refused move): never wait forever.
            while True:
                try:
                    return out.get(timeout=1)
                except queue.Empty:
                    if not clients.is_alive():
                        raise SystemExit(f"{name}: the clients' process died") from None

        assert answer() == "joined"
        user0, system0 = cpu_times(server.pid)
        loop0 = main_thread_seconds(server.pid)
        switches0 = context_switches(server.pid)
        go.set()
        turns, finished, latencies, wall = answer()
        user1, system1 = cpu_times(server.pid)
        loop = main_thread_seconds(server.pid) - loop0
        switches1 = context_switches(server.pid)
        user, system = user1 - user0, system1 - system0
        cpu = user + system
        clients.join()
    played = f"{games} concurrent games" + (f" x {rounds} in a row" if rounds > 1 else "")
    if name == "cmpn402":
        played = f"{games} games one after another (one referee game at a time)"
    report(
        f"{title} {name}: {played}, {finished} finished, {turns} turns in {wall:.2f} s",
        turns,
        wall,
        cpu,
        latencies,
        mem,
        f"  (user {user / max(turns, 1) * 1e6:.0f} us"
        f" + system {system / max(turns, 1) * 1e6:.0f} us;"
        f" event loop {loop / max(turns, 1) * 1e6:.0f} us,"
        f" other threads {(cpu - loop) / max(turns, 1) * 1e6:.0f} us)",
    )
    print(
        "  context switches per turn  "
        f"{(switches1[0] - switches0[0]) / max(turns, 1):10.2f} event loop"
        f"   {(switches1[1] - switches0[1]) / max(turns, 1):.2f} other threads",
        flush=True,
    )
    return cpu / max(turns, 1)


def run_scaling(sizes: list[int], repeats: int, lexicon: Lexicon) -> None:
    """Issue 22: Twente's server CPU per turn at each number of concurrent games, each
    size run ``repeats`` times (the best kept: the machine is shared), and how far each
    is from the smallest size's."""
    recorded = {f: record_scrabble("twente", lexicon, f) for f in (0, 1)}
    best: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            for r in range(repeats):
                cost = run_listener("twente", size, 1, 0, recorded, Path(tmp) / f"{size}-{r}")
                best[size] = min(best.get(size, cost), cost)
    base = best[sizes[0]]
    print(f"Twente server CPU per turn by concurrent games (best of {repeats}):")
    for size in sizes:
        change = (best[size] / base - 1) * 100
        print(f"  {size:6d} games  {best[size] * 1e6:8.0f} us   {change:+6.1f} % vs {sizes[0]}")
    worst = max(abs(best[s] / base - 1) for s in sizes)
    print(
        f"  largest difference {worst * 100:.1f} % ({'within' if worst <= 0.10 else 'over'} 10 %)"
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
    mem = idle_memory(pid, port, idle)
    out: Any = ctx.Queue()
    clients = ctx.Process(target=echo_client_process, args=(port, conns, messages, out))
    cpu0 = cpu_seconds(pid)
    clients.start()
    latencies, wall = out.get()
    cpu = cpu_seconds(pid) - cpu0
    clients.join()
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
    parser.add_argument(
        "--no-log",
        action="store_true",
        help="rooms keep no action log (for the with/without figure of docs/durability.md)",
    )
    parser.add_argument(
        "--no-metrics",
        action="store_true",
        help="count no Prometheus metrics (the baseline of their cost; docs/operations.md)",
    )
    parser.add_argument(
        "--scaling",
        help="Twente only: CPU per turn at these numbers of concurrent games, e.g. 100,1000,4000",
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs per size for --scaling")
    parser.add_argument(
        "--runtime",
        choices=("server", "node"),
        default=RUNTIME[0],
        help="what serves, as meeple serve --runtime (default $MEEPLE_SERVE_RUNTIME, else"
        " server); node: no --no-log nor --no-metrics",
    )
    args = parser.parse_args()
    RUNTIME[0] = args.runtime
    LOG[0] = not args.no_log
    METRICS[0] = not args.no_metrics
    if args.scaling:
        sizes = [int(n) for n in args.scaling.split(",")]
        print(
            f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; server"
            f" ({RUNTIME[0]} runtime) and clients in separate processes"
        )
        run_scaling(sizes, args.repeats, load_lexicon(DEFAULT_LEXICON))
        return
    games = parse_games(args.games, args.quick)
    # The games are recorded with the list meeple serve judges with.
    lexicon = load_lexicon(DEFAULT_LEXICON)
    print(
        f"machine: {os.cpu_count()} CPUs; server and clients in separate processes;"
        f" action log {'on' if LOG[0] else 'off'}; metrics {'on' if METRICS[0] else 'off'}"
    )
    run_echo(min(2 * max(games.values()), 400), 200, args.idle)
    with tempfile.TemporaryDirectory() as tmp:
        for name, count in games.items():
            recorded: dict[int, list[ScrabbleMove]] = {0: []}
            if name in ("twente", "clarkson", "cmpn402"):
                recorded = {f: record_scrabble(name, lexicon, f) for f in (0, 1)}
            run_listener(name, count, args.rounds, args.idle, recorded, Path(tmp))


if __name__ == "__main__":
    main()

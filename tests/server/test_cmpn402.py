"""The CMPN402 referee end to end: raw WebSocket bytes against a real server on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import GAME_PATIENCE, eventually
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from meeple.ai.scrabble import ranked_moves
from meeple.clients.cmpn402 import BuiltinAgent, play
from meeple.games import records
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.gcg import parse_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Placement, tiles_from_new_tiles
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.cmpn402 import (
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    EndMessage,
    EndReason,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    Name,
    NameRequest,
    NoChallenge,
    NoChallengeTiles,
    NoChallengeTimes,
    PassMove,
    PassNotice,
    PlayMove,
    PlayNotice,
    ServerMessage,
    Start,
    decode_server,
)
from meeple.server.app import LISTENERS, MeepleServer
from meeple.server.clock import Clock, SystemClock, VirtualClock
from meeple.server.config import ContestConfig, ListenerConfig, ServerConfig
from meeple.server.edge.cmpn402 import Cmpn402Listener
from meeple.server.lobby.cmpn402_console import ConsoleError, public
from meeple.server.store.database import ActionLog, Store

TOKEN = "t0ken"
PLAYER_MS, TOTAL_MS, CHALLENGE_MS = 60_000, 100_000, 5_000
EMPTY = tuple("." * 15 for _ in range(15))


# The ping interval of tests on the real clock that are not about the heartbeat.
SLOW_PING = 30.0


def _config(tmp_path: Path, **cmpn402: Any) -> ServerConfig:
    base = ServerConfig(database=str(tmp_path / "meeple.sqlite3"))
    listeners = {name: ListenerConfig(0, enabled=(name == "cmpn402")) for name in base.listeners}
    settings = {
        "admin_token": TOKEN,
        "player_time": PLAYER_MS / 1000,
        "total_time": TOTAL_MS / 1000,
        "challenge_time": CHALLENGE_MS / 1000,
    }
    settings.update(cmpn402)
    return replace(base, listeners=listeners, cmpn402=replace(base.cmpn402, **settings))


Factory = Callable[..., Any]


@pytest.fixture
async def make_server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[Factory]:
    """Start referees on port 0 with a virtual clock; all are stopped at the end."""
    servers: list[MeepleServer] = []

    async def make(clock: Clock | None = None, seed: int = 7, **cmpn402: Any) -> Any:
        server = MeepleServer(
            _config(tmp_path, **cmpn402), clock=clock or VirtualClock(), rng=random.Random(seed)
        )
        server.services.lexicon = gcide
        await server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        await server.stop()


class Peer:
    """A raw WebSocket agent: bytes in, bytes out."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, server: MeepleServer) -> Peer:
        return await cls.at(server.ports["cmpn402"])

    @classmethod
    async def at(cls, port: int) -> Peer:
        return cls(await connect(f"ws://127.0.0.1:{port}", compression=None))

    async def send(self, data: bytes | ServerMessage | Any) -> None:
        await self.ws.send(data if isinstance(data, bytes | str) else data.encode())

    async def next(self, timeout: float = 3.0) -> ServerMessage:
        data = await asyncio.wait_for(self.ws.recv(), timeout)
        assert isinstance(data, bytes)
        return decode_server(data)

    async def expect(self, message: ServerMessage) -> None:
        assert await self.next() == message

    async def quiet(self, wait: float = 0.1) -> None:
        with contextlib.suppress(TimeoutError):
            data = await asyncio.wait_for(self.ws.recv(), wait)
            raise AssertionError(f"unexpected {data!r}")

    async def named(self, name: str) -> Peer:
        await self.expect(NameRequest())
        await self.send(Name(name))
        return self

    async def close(self) -> None:
        await self.ws.close()


async def _pair(server: MeepleServer) -> tuple[Peer, Peer, Start, Start]:
    """Alice and Bob named; returns (mover, other, mover's START, other's START)."""
    a = await (await Peer.open(server)).named("alice")
    b = await (await Peer.open(server)).named("bob")
    sa, sb = await a.next(), await b.next()
    assert isinstance(sa, Start)
    assert isinstance(sb, Start)
    return (a, b, sa, sb) if sa.order == 1 else (b, a, sb, sa)


def _best(rack: str, gcide: Lexicon, board: Board | None = None) -> PlayMove:
    move = ranked_moves(board or Board(), rack, gcide, ENGLISH)[0]
    tiles = sorted(move.tiles, key=lambda p: (p.y, p.x))
    direction = 0 if move.direction is Direction.ACROSS else 1
    return PlayMove(
        tiles[0].x + 1, tiles[0].y + 1, direction, "".join(p.tile for p in tiles), move.score
    )


def _phony(rack: str, gcide: Lexicon) -> PlayMove:
    """Two rack letters at H8 across that are not a word, with their true score."""
    letters = [c for c in rack if c != "?"]
    for i, x in enumerate(letters):
        for j, y in enumerate(letters):
            if i != j and x + y not in gcide:
                tiles = (Placement(7, 7, x), Placement(7, 8, y))
                return PlayMove(8, 8, 0, x + y, validate_play(Board(), tiles).score)
    raise AssertionError(f"no phony in {rack}")


def _notice(play: PlayMove, player_time: int, total_time: int) -> PlayNotice:
    return PlayNotice(
        play.column,
        play.row,
        play.direction,
        play.tiles,
        play.score,
        CHALLENGE_MS,
        player_time,
        total_time,
    )


# --- the start --------------------------------------------------------------------


async def test_name_then_start_bytes(make_server: Factory) -> None:
    """NAME is the single byte 0; two NAMEs start a game: orders 1 and 2, 7 tiles, full times."""
    server = await make_server()
    a = await Peer.open(server)
    assert await a.ws.recv() == b"\x00"
    await a.send(b"\x00alice")
    await a.quiet()
    b = await (await Peer.open(server)).named("bob")
    raw = await a.ws.recv()
    assert isinstance(raw, bytes)
    assert len(raw) == 250
    assert raw[0] == 1
    sa, sb = decode_server(raw), await b.next()
    assert isinstance(sa, Start)
    assert isinstance(sb, Start)
    assert {sa.order, sb.order} == {1, 2}
    for s in (sa, sb):
        assert len(s.tiles) == 7
        assert s.board == EMPTY
        assert (s.score, s.opponent_score) == (0, 0)
        assert (s.player_time, s.total_time) == (PLAYER_MS, TOTAL_MS)
    await a.close()
    await b.close()


async def test_third_connection_is_refused_with_1013(make_server: Factory) -> None:
    """ERRATA: a third agent is closed with code 1013; the two seated agents are unaffected."""
    server = await make_server()
    a, b, _, _ = await _pair(server)
    c = await Peer.open(server)
    with pytest.raises(ConnectionClosed):
        await c.next()
    assert c.ws.close_code == 1013
    await a.send(PassMove())
    assert isinstance(await b.next(), PassNotice)


# --- moves ------------------------------------------------------------------------


async def test_invalid_moves_and_ignored_input(make_server: Factory, gcide: Lexicon) -> None:
    """Bad PLAY/EXCHANGE from the mover: INVALID with times; anything else: silence."""
    server = await make_server()
    mover, other, start, _ = await _pair(server)
    invalid = Invalid(PLAYER_MS, TOTAL_MS)
    best = _best(start.tiles, gcide)
    absent = next(c for c in "QZXJKVWYBCFHMP" if c not in start.tiles)
    for bad in (
        replace(best, score=best.score + 1),  # ERRATA: claimed score must match
        replace(best, column=1, row=1),  # misses the centre
        PlayMove(8, 8, 0, absent * 2, 0),  # tiles not on the rack
        ExchangeMove(absent),
        bytes.fromhex("04 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),  # malformed PLAY
        bytes.fromhex("03 ff 00 00 00 00 00 00"),  # malformed EXCHANGE
    ):
        await mover.send(bad)
        await mover.expect(invalid)
    for junk in (b"", b"\xff", b"\x02\x00", "text", NoChallenge().encode(), b"\x00again"):
        await mover.send(junk)
    await other.send(best)  # out of turn
    await other.send(PassMove())
    await mover.quiet()
    await other.quiet()
    await mover.send(PassMove())
    await other.expect(PassNotice(PLAYER_MS, TOTAL_MS))
    await mover.quiet()


async def test_exchange(make_server: Factory) -> None:
    """EXCHANGE: new tiles to the exchanger, the count and times to the other."""
    server = await make_server()
    mover, other, start, _ = await _pair(server)
    await mover.send(ExchangeMove(start.tiles[:3]))
    got = await mover.next()
    assert isinstance(got, ExchangeTiles)
    assert len(got.tiles) == 3
    await other.expect(ExchangeNotice(3, PLAYER_MS, TOTAL_MS))


async def test_play_no_challenge(make_server: Factory, gcide: Lexicon) -> None:
    """PLAY is echoed with the challenge time; NO_CHALLENGE gives the player new tiles."""
    server = await make_server()
    mover, other, start, _ = await _pair(server)
    best = _best(start.tiles, gcide)
    await mover.send(best)
    await other.expect(_notice(best, PLAYER_MS, TOTAL_MS))
    await mover.quiet()
    await other.send(NoChallenge())
    got = await mover.next()
    assert isinstance(got, NoChallengeTiles)
    assert len(got.tiles) == len(best.tiles)
    await other.send(PassMove())  # the challenger is on turn
    await mover.expect(PassNotice(PLAYER_MS, TOTAL_MS))


async def test_phony_challenged_is_accepted(make_server: Factory, gcide: Lexicon) -> None:
    """A phony challenged: CHALLENGE_ACCEPTED (empty) to its player, with times to the
    challenger, who is then on turn; the board is empty again."""
    server = await make_server()
    mover, other, start, _ = await _pair(server)
    phony = _phony(start.tiles, gcide)
    await mover.send(phony)
    await other.expect(_notice(phony, PLAYER_MS, TOTAL_MS))
    await other.send(ChallengeMove())
    await mover.expect(ChallengeAccepted())
    await other.expect(ChallengeAcceptedTimes(PLAYER_MS, TOTAL_MS))
    status = server.listeners["cmpn402"].referee.status()
    assert status["game"]["board"] == list(EMPTY)
    assert status["game"]["scores"] == [0, 0]
    await other.send(PassMove())
    await mover.expect(PassNotice(PLAYER_MS, TOTAL_MS))


async def test_good_play_challenged_is_rejected(make_server: Factory, gcide: Lexicon) -> None:
    """A good play challenged: CHALLENGE_REJECTED (empty) to the challenger, new tiles and
    times to the player, who moves again (double challenge)."""
    server = await make_server()
    mover, other, start, _ = await _pair(server)
    best = _best(start.tiles, gcide)
    await mover.send(best)
    await other.next()
    await other.send(ChallengeMove())
    got = await mover.next()
    assert isinstance(got, ChallengeRejectedTiles)
    assert len(got.tiles) == len(best.tiles)
    assert (got.player_time, got.total_time) == (PLAYER_MS, TOTAL_MS)
    await other.expect(ChallengeRejected())
    await mover.send(PassMove())
    await other.expect(PassNotice(PLAYER_MS, TOTAL_MS))


# --- clocks -----------------------------------------------------------------------


async def test_time_is_charged_to_the_player_on_turn(make_server: Factory) -> None:
    """The mover's clock and the game clock run while the mover thinks."""
    clock = VirtualClock()
    server = await make_server(clock)
    mover, other, _, _ = await _pair(server)
    await clock.advance(1.5)
    await mover.send(PassMove())
    await other.expect(PassNotice(PLAYER_MS, TOTAL_MS - 1500))
    await clock.advance(2.0)
    await other.send(PassMove())
    await mover.expect(PassNotice(PLAYER_MS - 1500, TOTAL_MS - 3500))


async def test_challenge_window_times_out_as_no_challenge(
    make_server: Factory, gcide: Lexicon
) -> None:
    """No answer in the window: NO_CHALLENGE with times to the challenger, tiles to the player;
    the window's time is charged to nobody."""
    clock = VirtualClock()
    server = await make_server(clock)
    mover, other, start, _ = await _pair(server)
    await clock.advance(1.0)
    best = _best(start.tiles, gcide)
    await mover.send(best)
    await other.expect(_notice(best, PLAYER_MS, TOTAL_MS - 1000))
    await clock.advance(CHALLENGE_MS / 1000 - 0.01)
    await other.quiet()
    await clock.advance(0.02)
    await other.expect(NoChallengeTimes(PLAYER_MS, TOTAL_MS - 1000))
    got = await mover.next()
    assert isinstance(got, NoChallengeTiles)
    await other.send(ChallengeMove())  # too late: ignored
    await other.send(PassMove())  # 10 ms after the window closed, on the challenger's clock
    await mover.expect(PassNotice(PLAYER_MS - 1000, TOTAL_MS - 1010))


@pytest.mark.parametrize(("player", "total"), [(3.0, 100.0), (60.0, 3.0)])
async def test_time_out_ends_with_reason_1(
    make_server: Factory, player: float, total: float
) -> None:
    """The player's clock or the game clock running out: END reason 1 to both."""
    clock = VirtualClock()
    server = await make_server(clock, player_time=player, total_time=total)
    mover, other, _, _ = await _pair(server)
    await clock.advance(2.9)
    await mover.quiet()
    await clock.advance(0.2)
    await mover.expect(EndMessage(EndReason.TIME_ENDED, 0, 0))
    await other.expect(EndMessage(EndReason.TIME_ENDED, 0, 0))
    records = Store(server.config.database).games()
    assert [r.end_reason for r in records] == ["time_ended"]


# --- whole games ------------------------------------------------------------------


async def test_whole_game_agent_vs_agent(make_server: Factory, gcide: Lexicon) -> None:
    """Two built-in agents play to END reason 0; the store and the game log agree."""
    server = await make_server()
    uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
    ra, rb = await asyncio.wait_for(
        asyncio.gather(
            play(uri, "alice", BuiltinAgent(gcide)), play(uri, "bob", BuiltinAgent(gcide))
        ),
        GAME_PATIENCE,
    )
    assert ra[0].reason is EndReason.ALL_TILES_USED
    assert (ra[0].score, ra[0].opponent_score) == (rb[0].opponent_score, rb[0].score)
    [record] = Store(server.config.database).games()
    assert record.result["scores"] == {"alice": ra[0].score, "bob": rb[0].score}
    assert parse_gcg(record.record).final_scores() == record.result["scores"]
    log_dir = Path(server.config.database).parent / "cmpn402"
    [log] = log_dir.glob("*.log")
    [gcg] = log_dir.glob("*.gcg")
    assert gcg.read_text() == record.record
    # The record carries the game's id (its files' stem, the console's game_id), so the
    # web finds it at /games/<id> like any other game.
    assert record.data is not None
    assert record.data["uid"] == log.stem
    found = Store(server.config.database).game_by_uid(log.stem)
    assert found is not None
    assert found.id == record.id
    lines = log.read_text().splitlines()
    assert any("<- " in line and "PlayMove" in line for line in lines)
    assert any("-> " in line and "EndMessage" in line for line in lines)
    # The agents' boards and racks stayed in step with the referee's: nothing refused.
    assert not [line for line in lines if "INVALID" in line or "refused" in line]


async def test_series_alternates_the_first_player(make_server: Factory, gcide: Lexicon) -> None:
    """--games 2: two games in a row, each agent moving first once; the next START
    comes a second after END (on the real clock here)."""
    server = await make_server(SystemClock(), games=2)
    uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
    ra, _ = await asyncio.wait_for(
        asyncio.gather(
            play(uri, "alice", BuiltinAgent(gcide), games=2),
            play(uri, "bob", BuiltinAgent(gcide), games=2),
        ),
        90,
    )
    assert len(ra) == 2
    records = Store(server.config.database).games()
    firsts = {parse_gcg(r.record).events[0].nick for r in records}
    assert firsts == {"alice", "bob"}


# --- disconnect, restart, resume --------------------------------------------------


async def test_disconnect_and_resume(make_server: Factory, gcide: Lexicon) -> None:
    """A drop: END reason 2 to the other; the agent reconnects, sends NAME, and both get
    START from the last checkpoint (a PLAY awaiting its challenge is not in it)."""
    clock = VirtualClock()
    server = await make_server(clock)
    mover, other, start, other_start = await _pair(server)
    await clock.advance(2.0)
    await mover.send(PassMove())
    await other.next()
    await clock.advance(1.0)
    await other.send(PassMove())
    await mover.next()
    await clock.advance(0.5)
    best = _best(start.tiles, gcide)
    await mover.send(best)  # pending in its challenge window: not checkpointed
    await other.next()
    referee = server.listeners["cmpn402"].referee
    names = referee.game.players
    mover_name = names[referee.game.turn ^ 1]
    await mover.close()
    await other.expect(EndMessage(EndReason.CONNECTION_ERROR, 0, 0))
    back = await (await Peer.open(server)).named(mover_name)
    got_back, got_other = await back.next(), await other.next()
    assert got_back == Start(1, start.tiles, EMPTY, 0, 0, PLAYER_MS - 2500, TOTAL_MS - 3500)
    assert got_other == Start(2, other_start.tiles, EMPTY, 0, 0, PLAYER_MS - 1000, TOTAL_MS - 3500)
    await back.send(best)
    await other.expect(_notice(best, PLAYER_MS - 1000, TOTAL_MS - 3500))


async def test_restart_and_resume(make_server: Factory, gcide: Lexicon) -> None:
    """A server restart: the checkpoint in SQLite resumes the game with the same racks."""
    clock = VirtualClock()
    server = await make_server(clock)
    mover, other, start, other_start = await _pair(server)
    await clock.advance(4.0)
    await mover.send(ExchangeMove(start.tiles[:2]))
    new = await mover.next()
    assert isinstance(new, ExchangeTiles)
    await other.next()
    await clock.advance(1.0)
    await server.stop()
    for peer in (mover, other):
        await peer.expect(EndMessage(EndReason.CONNECTION_ERROR, 0, 0))
    rack = start.tiles[2:] + new.tiles
    again = await make_server(VirtualClock())
    b = await (await Peer.open(again)).named("bob")
    a = await (await Peer.open(again)).named("alice")
    starts = {s.order: s for s in (await a.next(), await b.next()) if isinstance(s, Start)}
    assert starts[1] == Start(1, other_start.tiles, EMPTY, 0, 0, PLAYER_MS - 1000, TOTAL_MS - 5000)
    assert starts[2] == Start(2, rack, EMPTY, 0, 0, PLAYER_MS - 4000, TOTAL_MS - 5000)


# --- a hard stop: the server process is killed, a new one reads the log ------------


async def _serve_process(database: Path, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """`meeple serve` in a process of its own, every port 0, the referee's times as in
    :func:`_config`; returns it and the referee's port, read from its log."""
    args = [sys.executable, "-m", "meeple", "serve", "--database", str(database)]
    # MeepleServer's runtime: the restart below is one in this process (make_server),
    # which resumes the referee's logs from the store (the node's takeover of a killed
    # referee: tests/cluster/test_cmpn402.py).
    args += ["--runtime", "server"]
    args += ["--admin-token", TOKEN, "--player-time", str(PLAYER_MS / 1000)]
    args += ["--total-time", str(TOTAL_MS / 1000), "--challenge-time", str(CHALLENGE_MS / 1000)]
    # Not a heartbeat test: a ping a second with a second to answer dropped agents (1011)
    # when a loaded machine held the test's loop past it (issue 33).
    args += ["--ping-interval", str(SLOW_PING)]
    for name in LISTENERS:
        args += [f"--{name}-port", "0"]
    log = database.with_name("serve.log")
    with log.open("wb") as out:
        proc = subprocess.Popen([*args, *extra], stdout=subprocess.DEVNULL, stderr=out)
    for _ in range(1200):
        found = re.search(r"cmpn402: listening on 127\.0\.0\.1:(\d+)", log.read_text())
        if found:
            return proc, int(found.group(1))
        assert proc.poll() is None, log.read_text()
        await asyncio.sleep(0.05)
    _kill(proc)
    raise AssertionError("the server did not start listening")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no goodbye, no END, nothing more written."""
    proc.kill()
    proc.wait(10)


def _after_play(rack: str, play: PlayMove, drawn: str) -> str:
    """The rack after a play that stood: its tiles (a blank as ?) out, the new tiles in."""
    left = list(rack)
    for tile in play.tiles:
        left.remove("?" if tile.islower() else tile)
    return "".join(left) + drawn


def _place(board: Board, play: PlayMove) -> None:
    direction = Direction.ACROSS if play.direction == 0 else Direction.DOWN
    tiles = tiles_from_new_tiles(board, play.column - 1, play.row - 1, direction, play.tiles)
    for t in tiles:
        board.place(t.x, t.y, t.tile)


async def _play_then_kill(
    database: Path, names: tuple[str, str], gcide: Lexicon, *extra: str
) -> tuple[tuple[Board, str, str, PlayMove], str]:
    """Under `meeple serve` in its own process: START, PLAY + NO_CHALLENGE, EXCHANGE,
    and a PLAY left in its challenge window; then SIGKILL. Returns the board and both
    racks as the log has them, the first play, and the name of the player whose PLAY
    was in its window."""
    proc, port = await _serve_process(database, *extra)
    try:
        a = await (await Peer.at(port)).named(names[0])
        b = await (await Peer.at(port)).named(names[1])
        sa, sb = await a.next(10), await b.next(10)
        assert isinstance(sa, Start)
        assert isinstance(sb, Start)
        mover, other, start, other_start = (a, b, sa, sb) if sa.order == 1 else (b, a, sb, sa)
        board = Board()
        first = _best(start.tiles, gcide)
        await mover.send(first)
        await other.next()
        await other.send(NoChallenge())
        drawn = await mover.next()
        assert isinstance(drawn, NoChallengeTiles)
        _place(board, first)
        rack = _after_play(start.tiles, first, drawn.tiles)
        await other.send(ExchangeMove(other_start.tiles[:2]))
        new = await other.next()
        assert isinstance(new, ExchangeTiles)
        other_rack = other_start.tiles[2:] + new.tiles
        assert isinstance(await mover.next(), ExchangeNotice)
        await mover.send(_best(rack, gcide, board))
        assert isinstance(await other.next(), PlayNotice)  # in its window: not logged
        _kill(proc)
    finally:
        if proc.poll() is None:
            _kill(proc)  # and reaped: a Popen collected while running warns (issue 33)
    for peer in (a, b):
        with pytest.raises(ConnectionClosed):
            await peer.next()
        assert peer.ws.close_code == 1006  # dropped: no close frame, no END
    mover_name = names[0] if mover is a else names[1]
    return (board, rack, other_rack, first), mover_name


async def _both_start(peers: list[Peer]) -> list[Start]:
    starts = [await p.next(10) for p in peers]
    assert all(isinstance(s, Start) for s in starts)
    return starts  # type: ignore[return-value]


async def _pass_to_the_end(starts: dict[int, Peer]) -> None:
    """Passes in turn until six scoreless turns (the exchange was one) end the game:
    END reason 0 to both."""
    turn = [starts[1], starts[2]]
    for i in range(6):
        await turn[i % 2].send(PassMove())
        heard = await turn[1 - i % 2].next()
        if isinstance(heard, EndMessage):
            mine = await turn[i % 2].next()
            assert isinstance(mine, EndMessage)
            assert heard.reason is mine.reason is EndReason.ALL_TILES_USED
            assert (heard.score, heard.opponent_score) == (mine.opponent_score, mine.score)
            return
        assert isinstance(heard, PassNotice)
    raise AssertionError("six passes and no END")


def _check_stored(database: Path, uid: str, gcide: Lexicon) -> None:
    """The log is closed with the stored game, whose record is the log's and replays."""
    store = Store(database)
    try:
        log = store.action_log(uid)
        assert log is not None
        assert log.finished
        stored = store.game(log.game_id or 0)
        assert stored is not None
        assert stored.data is not None
        assert stored.data["uid"] == uid
        logged = [e.entry["action"] for e in log.entries if e.entry["action"] is not None]
        assert stored.data["actions"] == logged
        *_, last = records.replay(stored.data, lexicon=gcide)
        assert [last.game.scores[i] for i in range(2)] == [
            stored.result["scores"][p] for p in stored.players
        ]
        assert store.open_logs("scrabble") == []
    finally:
        store.close()


def _open_log(database: Path) -> ActionLog:
    store = Store(database)
    try:
        [uid] = store.open_logs("scrabble")
        log = store.action_log(uid)
        assert log is not None
        return log
    finally:
        store.close()


async def _resume_and_finish(
    again: MeepleServer,
    names: tuple[str, str],
    part: tuple[Board, str, str, PlayMove],
    log: ActionLog,
    mover_name: str,
    gcide: Lexicon,
) -> None:
    """Both agents come back to the new server: START from the log (board, racks,
    scores, times), the pending PLAY's player on turn; then the game is played out."""
    board, rack, other_rack, first = part
    peers = [await (await Peer.at(again.ports["cmpn402"])).named(n) for n in names]
    starts = dict(zip(names, await _both_start(peers), strict=True))
    other_name = next(n for n in names if n != mover_name)
    clocks = [round(c * 1000) for c in log.entries[-1].entry["clocks"]]
    players = log.genesis["record"]["players"]
    mover_index = players.index(mover_name)
    rows = tuple(board.rows())
    assert starts[mover_name] == Start(
        1, rack, rows, first.score, 0, clocks[mover_index], clocks[2]
    )
    assert starts[other_name] == Start(
        2, other_rack, rows, 0, first.score, clocks[1 - mover_index], clocks[2]
    )
    assert clocks[mover_index] < PLAYER_MS
    by_order = {starts[n].order: peers[names.index(n)] for n in names}
    await _pass_to_the_end(by_order)


async def test_a_killed_server_resumes_the_game_from_its_log(
    make_server: Factory, tmp_path: Path, gcide: Lexicon
) -> None:
    """The server process is killed mid-game (SIGKILL: no END, nothing written after
    the last entry); a new server on the same SQLite file finds the referee's log, both
    agents reconnect and get START with the logged board, racks, scores and times (the
    PLAY that was in its challenge window is gone: its player is on turn), and the game
    is played to its end; the stored record is the log's and replays."""
    database = tmp_path / "meeple.sqlite3"
    part, mover_name = await _play_then_kill(database, ("alice", "bob"), gcide)
    log = _open_log(database)
    assert log.genesis["table"]["referee"] == "cmpn402:cmpn402"
    assert log.genesis["seats"][0]["protocol"] == "cmpn402"
    assert [e.entry["action"]["type"] for e in log.entries] == ["play", "accept", "exchange"]
    again = await make_server(SystemClock(), ping_interval=SLOW_PING)
    assert again.listeners["cmpn402"].referee.waiting
    await _resume_and_finish(again, ("bob", "alice"), part, log, mover_name, gcide)
    _check_stored(database, log.uid, gcide)


async def test_a_killed_contest_resumes_its_board_from_the_log(
    make_server: Factory, tmp_path: Path, gcide: Lexicon
) -> None:
    """The same on a contest board: the contest comes back from its checkpoint, the
    board's game from its log; the contest finishes with that game's result."""
    database = tmp_path / "meeple.sqlite3"
    contest = ("--contest", "round-robin", "--contest-agents", "2")
    part, mover_name = await _play_then_kill(database, ("ann", "ben"), gcide, *contest)
    log = _open_log(database)
    assert log.genesis["table"]["referee"] == "cmpn402:cmpn402:contest1:game0"
    again = await make_server(
        SystemClock(), contest=ContestConfig(agents=2), ping_interval=SLOW_PING
    )
    contest_now = again.listeners["cmpn402"].contest
    assert contest_now.state == "running"
    await _resume_and_finish(again, ("ann", "ben"), part, log, mover_name, gcide)
    _check_stored(database, log.uid, gcide)
    [result] = contest_now.results()
    assert result["game_id"] == log.uid
    assert contest_now.state == "finished"


# --- admin and heartbeat ----------------------------------------------------------


async def _admin(
    server: MeepleServer, action: str, token: str | None = TOKEN, method: str | None = None
) -> tuple[int, Any]:
    """One admin request: GET for status/standings, POST for the rest (unless ``method``)."""
    method = method or ("GET" if action.split("?")[0] in ("status", "standings") else "POST")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.ports["cmpn402"])
    auth = "" if token is None else f"Authorization: Bearer {token}\r\n"
    writer.write(f"{method} /admin/{action} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                 .split(b":")[1])  # fmt: skip
    body = await reader.readexactly(length)
    writer.close()
    return int(head.split()[1]), json.loads(body)


async def test_admin_manual_start_pause_stop(make_server: Factory, gcide: Lexicon) -> None:
    """--manual-start waits for the admin; pause holds moves; stop ends with reason 3."""
    clock = VirtualClock()
    server = await make_server(clock, manual_start=True)
    assert (await _admin(server, "nothing"))[0] == 404
    a = await (await Peer.open(server)).named("alice")
    b = await (await Peer.open(server)).named("bob")
    await a.quiet()
    code, body = await _admin(server, "status")
    assert code == 200
    assert body["referee"]["state"] == "READY"
    assert body["status"]["state"] == "waiting"
    assert body["status"]["mode"] == "series"
    assert {x["name"] for x in body["status"]["agents"]} == {"alice", "bob"}
    assert (await _admin(server, "start"))[1]["result"] == "started"
    sa, sb = await a.next(), await b.next()
    mover, other = (a, b) if isinstance(sa, Start) and sa.order == 1 else (b, a)
    assert (await _admin(server, "pause"))[1]["result"] == "paused"
    assert (await _admin(server, "pause"))[0] == 409  # already paused: refused, with why
    await clock.advance(100)  # no clock runs while paused
    await mover.send(PassMove())
    await other.quiet()
    code, body = await _admin(server, "resume")
    assert (code, body["result"]) == (200, "resumed")
    await other.expect(PassNotice(PLAYER_MS, TOTAL_MS))
    assert (await _admin(server, "stop"))[1]["result"] == "stopped"
    await a.expect(EndMessage(EndReason.STOPPED, 0, 0))
    await b.expect(EndMessage(EndReason.STOPPED, 0, 0))
    _, body = await _admin(server, "status")
    assert body["referee"]["results"][0]["reason"] == "STOPPED"
    [result] = body["status"]["series"]["results"]
    assert (result["reason"], result["scores"], result["winner"]) == ("STOPPED", [0, 0], None)
    assert body["status"]["state"] == "finished"
    assert sb is not None


@pytest.mark.parametrize("action", ["start", "pause", "resume", "stop", "swap", "withdraw"])
async def test_admin_actions_change_state_only_on_post(make_server: Factory, action: str) -> None:
    """A GET of an action is 405 and changes nothing; no token is 401, a wrong one 403."""
    server = await make_server(manual_start=True)
    referee = server.listeners["cmpn402"].referee
    before = referee.status()
    code, body = await _admin(server, action, method="GET")
    assert code == 405
    assert "POST" in body["error"]
    assert (await _admin(server, action, token=None))[0] == 401
    assert (await _admin(server, action, token="wrong"))[0] == 403
    assert (await _admin(server, action, token=""))[0] == 401
    assert referee.status() == before
    assert referee.mode.value == "running"


async def test_admin_reads_are_gets(make_server: Factory) -> None:
    """status and standings answer GET only, with the token like every admin path."""
    server = await make_server()
    for read in ("status", "standings"):
        assert (await _admin(server, read, method="POST"))[0] == 405
        assert (await _admin(server, read, token=None))[0] == 401
        assert (await _admin(server, read, token="nope"))[0] == 403
        assert (await _admin(server, read))[0] == 200
    code, body = await _admin(server, "standings")
    assert (code, body) == (200, {"mode": "series", "standings": []})


async def test_admin_refusals_and_parameters(make_server: Factory) -> None:
    """Actions that cannot be done now are 409 with the reason; contest actions in a
    series are refused; parameters are checked."""
    server = await make_server(manual_start=True)
    code, body = await _admin(server, "start")
    assert code == 409
    assert "cannot start" in body["error"]
    code, body = await _admin(server, "withdraw?name=alice")
    assert code == 409
    assert "contest" in body["error"]
    assert (await _admin(server, "resume"))[0] == 409  # not paused
    assert (await _admin(server, "pause?x=1&x=2"))[0] == 409
    assert (await _admin(server, "pause?" + "n=" + "x" * 300))[0] == 409
    code, body = await _admin(server, "swap")
    assert (code, body["result"]) == (200, "the next game's first player is seat 2")


async def test_swap_gives_the_first_move_to_the_other_agent(make_server: Factory) -> None:
    """After swap the first game's first player is seat 2 (the agent that named second)."""
    server = await make_server(manual_start=True)
    a = await (await Peer.open(server)).named("alice")
    b = await (await Peer.open(server)).named("bob")
    assert (await _admin(server, "swap"))[0] == 200
    assert (await _admin(server, "start"))[0] == 200
    sa, sb = await a.next(), await b.next()
    assert isinstance(sa, Start)
    assert isinstance(sb, Start)
    assert (sa.order, sb.order) == (2, 1)


# --- the console (issue 12's /cmpn402 page reads it) -------------------------------


async def test_console_snapshot_follows_the_game(make_server: Factory, gcide: Lexicon) -> None:
    """The console is a service; its snapshot shows agents, the board, clocks, the
    challenge window and the moves, and its JSON part holds no rack letter."""
    clock = VirtualClock()
    server = await make_server(clock)
    console = server.services.console
    assert console is server.listeners["cmpn402"].console
    assert console.snapshot()["state"] == "waiting"
    mover, other, start, _ = await _pair(server)
    snap = console.snapshot()
    assert snap["state"] == "running"
    assert [a["connected"] for a in snap["agents"]] == [True, True]
    assert all(a["address"].startswith("127.0.0.1:") and a["board"] == 1 for a in snap["agents"])
    [board] = snap["boards"]
    referee = server.listeners["cmpn402"].referee
    assert board["game"] is referee.game
    assert board["players"] == ["alice", "bob"]
    assert board["turn"] == board["first"]
    assert (board["scores"], board["bag"], board["moves"]) == ([0, 0], 86, [])
    assert board["clocks"] == {"players_ms": [PLAYER_MS] * 2, "total_ms": TOTAL_MS, "running": True}
    assert board["challenge"] == {"open": False, "remaining_ms": 0}
    await clock.advance(2.0)
    best = _best(start.tiles, gcide)
    await mover.send(best)
    await other.next()
    await clock.advance(1.0)
    [board] = console.snapshot()["boards"]
    assert board["challenge"] == {"open": True, "remaining_ms": CHALLENGE_MS - 1000}
    assert board["clocks"]["running"] is False
    mover_index = 1 - board["turn"]
    assert board["clocks"]["players_ms"][mover_index] == PLAYER_MS - 2000
    [move] = board["moves"]
    assert (move["player"], move["score"], move["total"]) == (mover_index, best.score, best.score)
    text = json.dumps(public(console.snapshot()))
    racks = referee.game.racks
    assert all(f'"{rack}"' not in text for rack in racks)
    assert '"game"' not in text
    assert console.snapshot()["files"][0]["log"] is True


async def test_console_subscribers_and_files(make_server: Factory, gcide: Lexicon) -> None:
    """Subscribers hear every change; a failing one hurts nothing; unsubscribe works;
    a finished game's log and GCG are there by id; bad ids and kinds are None."""
    clock = VirtualClock()
    server = await make_server(clock)
    console = server.listeners["cmpn402"].console
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("a bad subscriber")

    console.subscribe(broken)
    stop = console.subscribe(lambda: heard.append(console.snapshot()["state"]))
    mover, other, _, _ = await _pair(server)
    assert heard[-1] == "running"
    count = len(heard)
    await mover.send(PassMove())
    await other.next()
    assert len(heard) == count + 1
    assert console.act("pause") == "paused"
    assert heard[-1] == "paused"
    with pytest.raises(ConsoleError):
        console.act("pause")
    with pytest.raises(ConsoleError):
        console.act("dance")
    assert console.act("stop") == "stopped"
    await mover.expect(EndMessage(EndReason.STOPPED, 0, 0))
    snap = console.snapshot()
    assert snap["state"] == "finished"
    [result] = snap["series"]["results"]
    game_id = result["game_id"]
    assert snap["files"] == [{"game_id": game_id, "log": True, "gcg": True}]
    gcg = console.file(game_id, "gcg")
    assert gcg is not None
    assert "#player1 alice alice" in gcg.read_text()
    assert console.file(game_id, "log").name == f"{game_id}.log"
    for bad_id, kind in (("../meeple", "log"), (game_id, "sqlite3"), ("", "gcg"), ("x", "log")):
        assert console.file(bad_id, kind) is None
    stop()
    count = len(heard)
    console.act("swap")
    assert len(heard) == count
    assert console.check_token(TOKEN)
    assert not console.check_token("t0ken ")
    assert not console.check_token("é")
    standings = {r["name"]: r for r in snap["standings"]}
    assert standings["alice"]["draws"] == standings["bob"]["draws"] == 1
    assert standings["alice"]["games_left"] == 0


async def test_heartbeat_drops_a_silent_client(make_server: Factory) -> None:
    """A client that stops answering pings is dropped; its seat is free again."""
    server = await make_server(ping_interval=0.05)
    a = await (await Peer.open(server)).named("alice")
    transport = a.ws.transport
    transport.pause_reading()
    listener = server.listeners["cmpn402"]
    assert isinstance(listener, Cmpn402Listener)
    await eventually(lambda: listener.referee.seats[0] is None, "the seat freed")
    assert listener.referee.seats == [None, None]
    transport.resume_reading()
    b = await (await Peer.open(server)).named("bob")
    await b.quiet()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), st.binary(max_size=40)), max_size=15))
def test_random_binary_over_the_wire(
    tmp_path_factory: pytest.TempPathFactory, gcide: Lexicon, junk: list[tuple[bool, bytes]]
) -> None:
    """Random binary messages from either agent: the connections and the game go on."""

    async def scenario() -> None:
        config = _config(tmp_path_factory.mktemp("junk"))
        server = MeepleServer(config, clock=VirtualClock(), rng=random.Random(1))
        server.services.lexicon = gcide
        await server.start()
        try:
            mover, other, _, _ = await _pair(server)
            for from_mover, data in junk:
                if data[:1] not in (b"\x02", b"\x03", b"\x04"):  # no real moves
                    await (mover if from_mover else other).send(data)
            await mover.send(b"\x02")
            await other.expect(PassNotice(PLAYER_MS, TOTAL_MS))
            await mover.quiet(0.02)
        finally:
            await server.stop()

    asyncio.run(scenario())


# --- configuration ----------------------------------------------------------------


def test_cmpn402_config_table_and_flags() -> None:
    """The [cmpn402] table and the serve flags set the referee; bad values are refused."""
    from meeple.cli.main import build_parser
    from meeple.cli.serve import config_from_args
    from meeple.server.config import ConfigError, config_from_mapping

    config = config_from_mapping(
        {"cmpn402": {"manual_start": True, "games": 3, "admin_token": "a", "player_time": 5}}
    )
    assert config.cmpn402.manual_start is True
    assert (config.cmpn402.games, config.cmpn402.player_time) == (3, 5)
    assert config.cmpn402.total_time == 1200.0
    for bad in (
        {"games": 0},
        {"games": "2"},
        {"manual_start": 1},
        {"challenge_time": -1},
        {"player_time": 3e6},
        {"colour": "red"},
    ):
        with pytest.raises(ConfigError):
            config_from_mapping({"cmpn402": bad})
    args = build_parser().parse_args(
        ["serve", "--manual-start", "--games", "4", "--ping-interval", "0.5", "--total-time", "60"]
    )
    settings = config_from_args(args).cmpn402
    assert (settings.manual_start, settings.games, settings.ping_interval) == (True, 4, 0.5)
    assert settings.total_time == 60
    assert config_from_args(build_parser().parse_args(["serve"])).cmpn402.manual_start is False


def test_contest_table_and_flags(tmp_path: Path) -> None:
    """[cmpn402.contest] and --contest/--contest-games/--contest-rounds/--boards set the
    contest; bad values and contest flags without a contest are refused."""
    from meeple.cli.main import build_parser
    from meeple.cli.serve import config_from_args
    from meeple.server.config import ConfigError, ContestConfig, config_from_mapping

    assert config_from_mapping({}).cmpn402.contest is None
    config = config_from_mapping(
        {"cmpn402": {"games": 2, "contest": {"format": "swiss", "rounds": 4, "boards": 3}}}
    )
    assert config.cmpn402.contest == ContestConfig(format="swiss", rounds=4, boards=3)
    assert config.cmpn402.games == 2
    for bad in (
        {"format": "knockout"},
        {"games": 0},
        {"boards": "2"},
        {"agents": 1},
        {"resume_window": 0},
        {"rounds": True},
        {"colour": "red"},
    ):
        with pytest.raises(ConfigError):
            config_from_mapping({"cmpn402": {"contest": bad}})
    with pytest.raises(ConfigError):
        config_from_mapping({"cmpn402": {"contest": 3}})
    parse = build_parser().parse_args
    args = parse(["serve", "--contest", "round-robin", "--contest-games", "2", "--boards", "2"])
    contest = config_from_args(args).cmpn402.contest
    assert contest == ContestConfig(games=2, boards=2)
    file = tmp_path / "meeple.toml"
    file.write_text('[cmpn402.contest]\nformat = "swiss"\nrounds = 5\n')
    args = parse(["serve", "--config", str(file), "--contest-rounds", "2", "--contest-agents", "6"])
    assert config_from_args(args).cmpn402.contest == ContestConfig(
        format="swiss", rounds=2, agents=6
    )
    with pytest.raises(ConfigError):
        config_from_args(parse(["serve", "--boards", "2"]))
    assert config_from_args(parse(["serve"])).cmpn402.contest is None


async def test_contest_mode_on_the_wire(make_server: Factory) -> None:
    """With a contest table: any number of agents, NAME then nothing until START; the
    admin starts, lists standings, refuses swap, withdraws by name (POST only)."""
    server = await make_server(contest=ContestConfig(boards=1))
    listener = server.listeners["cmpn402"]
    assert listener.referee is None
    peers = [await (await Peer.open(server)).named(n) for n in ("ann", "ben", "cat")]
    for peer in peers:
        await peer.quiet(0.05)  # a fourth connection would be welcome too: no 1013
    code, body = await _admin(server, "status")
    assert (code, body["status"]["mode"], body["status"]["state"]) == (
        200,
        "round-robin",
        "waiting",
    )
    assert "referee" not in body
    assert (await _admin(server, "start", method="GET"))[0] == 405
    assert (await _admin(server, "start"))[1]["result"] == "started"
    starts = []
    for peer in peers:
        with contextlib.suppress(TimeoutError):
            starts.append(await peer.next(0.2))
    assert len(starts) == 2
    assert all(isinstance(s, Start) for s in starts)
    code, body = await _admin(server, "swap")
    assert code == 409
    code, body = await _admin(server, "standings")
    assert [r["games_left"] for r in body["standings"]] == [2, 2, 2]
    assert (await _admin(server, "withdraw?name=nobody"))[0] == 409
    code, body = await _admin(server, "withdraw?name=cat")
    assert (code, body["result"]) == (200, "cat withdrawn")
    code, body = await _admin(server, "standings")
    rows = {r["name"]: r for r in body["standings"]}
    assert rows["cat"]["losses"] >= 1
    assert rows["cat"]["withdrawn"] is True


async def test_a_bot_reconnects_after_a_restart_and_resumes(
    make_server: Factory, gcide: Lexicon
) -> None:
    """Issue 16, bug 5: the server goes away for longer than the old five quick retries;
    both agents come back with the backoff and finish the resumed game."""
    server = await make_server(SystemClock())
    port = server.ports["cmpn402"]
    uri = f"ws://127.0.0.1:{port}"

    class Slow(BuiltinAgent):
        async def choose_move(self, view: Any) -> Any:  # type: ignore[override]
            await asyncio.sleep(0.05)
            return super().choose_move(view)

    games = asyncio.gather(play(uri, "alice", Slow(gcide)), play(uri, "bob", Slow(gcide)))
    referee = server.listeners["cmpn402"].referee
    await eventually(
        lambda: referee.game is not None and len(referee.game.log) >= 3, "three moves", every=0.05
    )
    assert referee.game is not None
    await server.stop()
    await asyncio.sleep(6.5)  # the old client gave up after 5 retries a second apart
    config = replace(server.config, listeners={**server.config.listeners})
    config = config.with_port("cmpn402", port)
    again = MeepleServer(config, clock=SystemClock(), rng=random.Random(7))
    again.services.lexicon = gcide
    await again.start()
    try:
        ra, rb = await asyncio.wait_for(games, 60)
        assert (ra[0].score, ra[0].opponent_score) == (rb[0].opponent_score, rb[0].score)
        [record] = Store(server.config.database).games()
        assert record.result["scores"] == {"alice": ra[0].score, "bob": rb[0].score}
    finally:
        await again.stop()


async def test_a_bot_gives_up_after_the_reconnect_window(
    make_server: Factory, gcide: Lexicon
) -> None:
    """With the server gone for good the client stops after its window, with the reason."""
    server = await make_server(SystemClock())
    uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
    task = asyncio.create_task(play(uri, "alice", BuiltinAgent(gcide), reconnect_for=0.5))
    await asyncio.sleep(0.2)
    await server.stop()
    with pytest.raises(ConnectionError, match=r"no reconnect in 0\.5 s"):
        await asyncio.wait_for(task, 10)


# --- what protects a seat (issue 30, item 6) ----------------------------------------


async def _closed_with(peer: Peer) -> int | None:
    """The close code the referee closed ``peer`` with (it must send nothing before)."""
    try:
        got = await peer.next()
    except ConnectionClosed:
        return peer.ws.close_code
    raise AssertionError(f"{got} instead of a close")


async def _seat_free(server: MeepleServer) -> None:
    """Until the referee has let go of a refused connection's seat."""
    referee = server.listeners["cmpn402"].referee
    await eventually(lambda: any(s is None for s in referee.seats), "a seat freed")


async def test_a_dropped_agents_seat_is_not_given_to_another_name(make_server: Factory) -> None:
    """Alice drops: NAME mallory (and NAME bob, whose agent is still here) are closed with
    1013 and hear no START; alice's agent coming back with her name gets her rack and turn."""
    server = await make_server(VirtualClock())
    mover, other, start, other_start = await _pair(server)
    referee = server.listeners["cmpn402"].referee
    names = referee.game.players
    mover_name, other_name = names[referee.game.turn], names[1 - referee.game.turn]
    await mover.close()
    await other.expect(EndMessage(EndReason.CONNECTION_ERROR, 0, 0))
    for impostor in ("mallory", other_name):
        await _seat_free(server)
        peer = await (await Peer.open(server)).named(impostor)
        assert await _closed_with(peer) == 1013
    await other.quiet()
    await _seat_free(server)
    back = await (await Peer.open(server)).named(mover_name)
    assert await back.next() == Start(1, start.tiles, EMPTY, 0, 0, PLAYER_MS, TOTAL_MS)
    assert await other.next() == Start(2, other_start.tiles, EMPTY, 0, 0, PLAYER_MS, TOTAL_MS)
    assert sorted(referee.status()["seats"]) == sorted(names)


async def test_a_waiting_game_does_not_resume_with_two_new_agents(make_server: Factory) -> None:
    """Both agents drop: two fresh agents (carol, dave) are closed with 1013 and the game
    waits on; it resumes, stored under its own names, when alice and bob come back."""
    server = await make_server(VirtualClock())
    mover, other, start, other_start = await _pair(server)
    referee = server.listeners["cmpn402"].referee
    names = referee.game.players
    mover_name = names[referee.game.turn]
    await mover.close()
    await other.expect(EndMessage(EndReason.CONNECTION_ERROR, 0, 0))
    await other.close()
    await eventually(lambda: referee.seats == [None, None], "both seats freed")
    carol = await (await Peer.open(server)).named("carol")
    dave = await (await Peer.open(server)).named("dave")
    assert await _closed_with(carol) == 1013
    assert await _closed_with(dave) == 1013
    assert referee.waiting
    await _seat_free(server)
    peers = {n: await (await Peer.open(server)).named(n) for n in ("bob", "alice")}
    starts = {n: await p.next() for n, p in peers.items()}
    mine = {mover_name: start, names[1 - names.index(mover_name)]: other_start}
    for name, got in starts.items():
        assert isinstance(got, Start)
        assert got.tiles == mine[name].tiles
        assert got.order == (1 if name == mover_name else 2)
    await _admin(server, "stop")
    await peers["alice"].expect(EndMessage(EndReason.STOPPED, 0, 0))
    [result] = referee.series.results
    assert result["players"] == list(names)


def _secrets_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents.secrets"
    path.write_text("alpha#alpha-s3cret\nbravo#bravo-s3cret\n", encoding="utf-8")
    return path


async def test_a_contest_seat_needs_its_secret(make_server: Factory, tmp_path: Path) -> None:
    """Contest with a secrets file: alpha drops; NAME alpha, NAME alpha#<wrong> and a name
    the file does not list are closed with 1008; alpha#<its secret> resumes alpha's game,
    and the name shown is the bare name."""
    server = await make_server(
        VirtualClock(),
        contest=ContestConfig(boards=1, agents=2),
        agent_secrets=str(_secrets_file(tmp_path)),
    )
    a = await (await Peer.open(server)).named("alpha#alpha-s3cret")
    b = await (await Peer.open(server)).named("bravo#bravo-s3cret")
    sa, sb = await a.next(), await b.next()
    assert isinstance(sa, Start)
    assert isinstance(sb, Start)
    _, body = await _admin(server, "status")
    assert sorted(x["name"] for x in body["status"]["agents"]) == ["alpha", "bravo"]
    assert sorted(body["status"]["boards"][0]["players"]) == ["alpha", "bravo"]
    await a.close()
    await b.expect(EndMessage(EndReason.CONNECTION_ERROR, 0, 0))
    for wrong in ("alpha", "alpha#bravo-s3cret", "alpha#alpha-s3cre", "mallory#alpha-s3cret"):
        peer = await (await Peer.open(server)).named(wrong)
        assert await _closed_with(peer) == 1008, wrong
    await b.quiet()
    back = await (await Peer.open(server)).named("alpha#alpha-s3cret")
    again = await back.next()
    assert isinstance(again, Start)
    assert (again.order, again.tiles) == (sa.order, sa.tiles)
    assert isinstance(await b.next(), Start)


async def test_two_agent_mode_checks_secrets_too(
    make_server: Factory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The secrets file in two-agent mode: a bare NAME is closed with 1008; the lines
    start a game whose players are the bare names; no secret is in a log or a file,
    not even from a NAME sent twice."""
    caplog.set_level("DEBUG", logger="meeple")
    server = await make_server(agent_secrets=str(_secrets_file(tmp_path)))
    bare = await (await Peer.open(server)).named("alpha")
    assert await _closed_with(bare) == 1008
    await _seat_free(server)
    a = await (await Peer.open(server)).named("alpha#alpha-s3cret")
    b = await (await Peer.open(server)).named("bravo#bravo-s3cret")
    assert isinstance(await a.next(), Start)
    assert isinstance(await b.next(), Start)
    referee = server.listeners["cmpn402"].referee
    assert sorted(referee.game.players) == ["alpha", "bravo"]
    await a.send(Name("alpha#alpha-s3cret"))  # a second NAME: ignored
    await a.send(b"\x00alpha#alpha-s3cret\xff")  # not UTF-8: ignored once named
    await _admin(server, "stop")
    await a.expect(EndMessage(EndReason.STOPPED, 0, 0))
    files = [p.read_text(encoding="utf-8") for p in (tmp_path / "cmpn402").iterdir()]
    assert files
    for text in [caplog.text, *files]:
        assert "alpha-s3cret" not in text
        assert "bravo-s3cret" not in text
        assert b"s3cret".hex() not in text


# --- the admin endpoint's attempt limit (issue 30, item 7) ---------------------------


async def _admin_head(server: MeepleServer, token: str) -> tuple[int, dict[str, str]]:
    """GET /admin/status with ``token``: the status and the headers (lower-case names)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.ports["cmpn402"])
    writer.write(
        f"GET /admin/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
    )
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    writer.close()
    lines = head.split("\r\n")
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)
    }
    return int(lines[0].split()[1]), headers


async def test_admin_wrong_tokens_are_limited_per_address(make_server: Factory) -> None:
    """Five wrong admin tokens a minute from one address (the console sign-in's limit);
    then 429 with Retry-After for any token, the right one too, until the minute is
    over. Right tokens are not counted: an organiser's script may poll."""
    clock = VirtualClock()
    server = await make_server(clock)
    for _ in range(8):
        assert (await _admin(server, "status"))[0] == 200
    for i in range(5):
        await clock.advance(1)
        assert (await _admin(server, "status", token=f"guess{i}"))[0] == 403
    code, headers = await _admin_head(server, "guess5")
    assert code == 429
    assert headers["retry-after"] == "56"  # the first guess is 56 s from leaving the window
    code, body = await _admin(server, "status")
    assert code == 429
    assert "too many" in body["error"]
    assert (await _admin(server, "stop"))[0] == 429
    await clock.advance(56)
    assert (await _admin(server, "status"))[0] == 200
    assert (await _admin(server, "status", token="guess6"))[0] == 403  # one slot was free
    assert (await _admin(server, "status"))[0] == 429


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tokens=st.lists(
        st.one_of(st.just(TOKEN), st.text(st.characters(min_codepoint=32, max_codepoint=126))),
        min_size=1,
        max_size=12,
    )
)
def test_admin_gate_counts_only_wrong_tokens(tokens: list[str]) -> None:
    """Whatever tokens an address offers, the gate lets the right one through only while
    fewer than five wrong ones came in the window, and never answers a token after that."""
    from websockets.datastructures import Headers
    from websockets.http11 import Request

    from meeple.server.edge.attempts import AttemptLimiter
    from meeple.server.edge.cmpn402 import admin_gate

    clock = VirtualClock()
    limiter = AttemptLimiter(clock)
    wrong = 0
    for token in [*tokens, TOKEN]:
        request = Request("/admin/status", Headers([("Authorization", f"Bearer {token}")]))
        answer = admin_gate(
            request,
            ("status",),
            (),
            lambda t: t == TOKEN,
            attempts=limiter,
            address="10.0.0.1",
        )
        status = answer.status_code if not isinstance(answer, tuple) else 200
        if not token.strip():
            assert status == 401
        elif wrong >= 5:
            assert status == 429
        elif token.strip() == TOKEN:
            assert status == 200
        else:
            assert status == 403
            wrong += 1


def test_agent_secrets_table_and_flag(tmp_path: Path) -> None:
    """[cmpn402] agent_secrets and --agent-secrets name the file; a missing or bad file
    is refused when the configuration loads, with the line that is wrong."""
    from meeple.cli.main import build_parser
    from meeple.cli.serve import config_from_args
    from meeple.server.config import ConfigError, config_from_mapping

    good = _secrets_file(tmp_path)
    config = config_from_mapping({"cmpn402": {"agent_secrets": str(good)}})
    assert config.cmpn402.agent_secrets == str(good)
    bad = tmp_path / "bad.secrets"
    bad.write_text("alpha#alpha-s3cret\nbravo\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2"):
        config_from_mapping({"cmpn402": {"agent_secrets": str(bad)}})
    with pytest.raises(ConfigError, match="cannot read"):
        config_from_mapping({"cmpn402": {"agent_secrets": str(tmp_path / "none")}})
    with pytest.raises(ConfigError):
        config_from_mapping({"cmpn402": {"agent_secrets": 1}})
    args = build_parser().parse_args(["serve", "--agent-secrets", str(good)])
    assert config_from_args(args).cmpn402.agent_secrets == str(good)
    args = build_parser().parse_args(["serve", "--agent-secrets", str(bad)])
    with pytest.raises(ConfigError, match="not name#secret"):
        config_from_args(args)

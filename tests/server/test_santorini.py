"""Santorini over AM27 end to end: real sockets on 127.0.0.1:0, raw bytes and whole bot games."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.memory import MemoryWriter, open_memory

from meeple.clients.santorini import play_santorini
from meeple.protocols.santorini.framing import STREAM_HEADER, AutoDecoder, Text
from meeple.protocols.santorini.messages import (
    Cell,
    ChooseStarter,
    EndGame,
    Info,
    Message,
    Move,
    Ping,
    Players,
    Register,
    ServerState,
    Update,
    WorkerInit,
    decode,
)
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import SantoriniConfig, ServerConfig
from meeple.server.store.database import Store

ONLY = {"santorini": "meeple.server.edge.santorini:create_listener"}


async def _server(
    tmp_path: Path, *, clock: VirtualClock | None = None, framing: str = "object-stream"
) -> MeepleServer:
    config = ServerConfig(
        database=str(tmp_path / "meeple.sqlite3"), santorini=SantoriniConfig(framing=framing)
    )
    for name in config.listeners:
        config = config.with_port(name, 0)
    server = MeepleServer(config, clock=clock, listeners=ONLY, rng=random.Random(7))
    await server.start()
    return server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    srv = await _server(tmp_path)
    yield srv
    await srv.stop()


OPEN: list[Raw] = []


@pytest.fixture(autouse=True)
async def _close_peers() -> AsyncIterator[None]:
    """Close every raw peer a test opened, so no stream is left to the collector."""
    yield
    while OPEN:
        peer = OPEN.pop()
        peer.writer.close()
        with contextlib.suppress(Exception):
            await peer.writer.wait_closed()


class Raw:
    """A raw AM27 peer: writes JSON lines, reads whatever framing the server writes."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = AutoDecoder()
        self.raw = b""
        self.pending: list[Message] = []

    @classmethod
    async def open(cls, server: MeepleServer) -> Raw:
        peer = cls(*await open_memory(server.listeners["santorini"]))
        OPEN.append(peer)
        return peer

    def send(self, message: Message | bytes) -> None:
        data = message if isinstance(message, bytes) else message.encode().encode() + b"\n"
        self.writer.write(data)

    async def next(self, timeout: float = 2.0, *, pings: bool = False) -> Message:
        """The next message (PINGs skipped unless asked for)."""
        while True:
            while not self.pending:
                chunk = await asyncio.wait_for(self.reader.read(65536), timeout)
                assert chunk, "connection closed"
                self.raw += chunk
                events = self.decoder.receive_data(chunk)
                self.pending += [decode(e.text) for e in events if isinstance(e, Text)]
            message = self.pending.pop(0)
            if pings or not isinstance(message, Ping):
                return message

    async def closed(self, timeout: float = 2.0) -> bool:
        try:
            while await asyncio.wait_for(self.reader.read(65536), timeout):
                pass
        except (TimeoutError, ConnectionError):
            return False
        return True


async def _pair(server: MeepleServer) -> tuple[Raw, Raw, Raw, Raw]:
    """Ann (A, 2 players, no gods) and Bob (B) in a game; returns (ann, bob, challenger, other)."""
    ann = await Raw.open(server)
    assert await ann.next() == ServerState(True, False)
    ann.send(Register("Ann", 2, False))
    bob = await Raw.open(server)
    assert await bob.next() == ServerState(True, True)
    bob.send(Register("Bob"))
    players = await ann.next()
    assert isinstance(players, Players)
    assert await bob.next() == players
    assert players.players == (("Ann", "Atheist"), ("Bob", "Atheist"))
    challenger, other = (ann, bob) if players.player == "Ann" else (bob, ann)
    return ann, bob, challenger, other


async def test_greeting_is_the_java_object_stream(server: MeepleServer) -> None:
    """Header AC ED 00 05, then 79 74 + u16 length + SERVERSTATE, as the group's server."""
    peer = await Raw.open(server)
    await peer.next()
    expected = b'{"type":"SERVERSTATE","message":"{\\"open\\":true,\\"active\\":false}"}'
    assert peer.raw[: 4 + 4 + len(expected)] == STREAM_HEADER + b"yt\x00C" + expected


async def test_setup_refusals_and_fresh_updates(server: MeepleServer) -> None:
    """Out-of-turn, impersonation and occupied cells: INFO then a fresh UPDATE; game goes on."""
    ann, bob, challenger, other = await _pair(server)
    names = {id(ann): "Ann", id(bob): "Bob"}
    other.send(ChooseStarter(names[id(other)], names[id(other)]))
    assert await other.next() == Info(names[id(other)], "WAIT")
    assert isinstance(await other.next(), Players)  # the fresh state of this phase
    challenger.send(ChooseStarter("", names[id(other)]))
    first = await other.next()
    assert first == Update(names[id(other)], can_place_worker=True)
    assert await challenger.next() == Update(names[id(other)])
    mover, name = other, names[id(other)]
    mover.send(WorkerInit(name, Cell(2, 2), "M"))
    placed = await mover.next()
    assert isinstance(placed, Update)
    assert [(c, s.owner, s.sex) for c, s in placed.board] == [(Cell(2, 2), name, "M")]
    await challenger.next()
    challenger.send(WorkerInit(names[id(challenger)], Cell(0, 0), "M"))  # not its turn
    assert await challenger.next() == Info(names[id(challenger)], "WAIT")
    fresh = await challenger.next()
    assert isinstance(fresh, Update)
    assert [c for c, _ in fresh.board] == [Cell(2, 2)]  # the whole board, for a resync
    mover.send(WorkerInit(names[id(challenger)], Cell(0, 1), "F"))  # claims to be the other
    assert await mover.next() == Info(name, "INVALID")
    assert isinstance(await mover.next(), Update)
    mover.send(WorkerInit(name, Cell(2, 2), "F"))
    assert await mover.next() == Info(name, "OCCUPIED")
    assert isinstance(await mover.next(), Update)
    for garbage in (b"not json at all\n", b"\xff\xfe\n"):
        mover.send(garbage)
        assert await mover.next() == Info(name, "MALFORMED")
        assert isinstance(await mover.next(), Update)
    mover.send(WorkerInit(name, Cell(2, 3), "F"))
    done = await mover.next()
    assert isinstance(done, Update)
    assert done.player == names[id(challenger)]
    assert not done.can_place_worker


async def test_no_second_serverstate_before_register(server: MeepleServer) -> None:
    """Issue 22: a client that has not registered hears SERVERSTATE once, however often
    whether a game waits changes meanwhile; so the first message after its REGISTER is
    the game's, never a SERVERSTATE that a client could take for the answer."""
    late = await Raw.open(server)
    assert await late.next() == ServerState(True, False)
    ann = await Raw.open(server)
    assert await ann.next() == ServerState(True, False)
    ann.send(Register("Ann", 3, False))  # a game now waits
    bob = await Raw.open(server)
    assert await bob.next() == ServerState(True, True)
    bob.writer.close()  # still waiting; then nobody waits any more:
    ann.writer.close()
    await asyncio.sleep(0.1)
    with pytest.raises(TimeoutError):
        await late.next(timeout=0.3)  # nothing was pushed
    late.send(Register("Late"))  # (B) on a stale active: false starts a 2-player game
    friend = await Raw.open(server)
    assert await friend.next() == ServerState(True, True)
    friend.send(Register("Friend"))
    players = await late.next()
    assert isinstance(players, Players)
    assert set(dict(players.players)) == {"Late", "Friend"}


async def test_disconnect_ends_the_game_for_the_others(server: MeepleServer) -> None:
    """ERRATA: the others get ENDGAME naming the dropped player, isWinner false; then
    SERVERSTATE, and they may register again on the same connection."""
    ann, bob, _, _ = await _pair(server)
    bob.writer.close()
    assert await ann.next() == EndGame("Bob", False)
    assert await ann.next() == ServerState(True, False)
    ann.send(Register("Ann", 3, True))
    other = await Raw.open(server)
    assert await other.next() == ServerState(True, True)


async def test_nickname_taken_and_bad_player_count(server: MeepleServer) -> None:
    """A nickname in use (any case) is INFO NICKNAME; 4 players is INFO INVALID; each is
    followed by SERVERSTATE and the client may register again."""
    ann = await Raw.open(server)
    await ann.next()
    ann.send(Register("Ann", 2, False))
    dup = await Raw.open(server)
    await dup.next()
    dup.send(Register("ann", 2, False))
    assert await dup.next() == Info("ann", "NICKNAME")
    assert await dup.next() == ServerState(True, True)
    dup.send(Register("Dan", 4, False))
    assert await dup.next() == Info("Dan", "INVALID")
    assert await dup.next() == ServerState(True, True)
    dup.send(Move("Dan", Cell(0, 0), Cell(0, 1)))
    assert await dup.next() == Info("", "WAIT")


async def test_lines_framing_option(tmp_path: Path) -> None:
    """framing = "lines": plain JSON lines server → client, no header."""
    srv = await _server(tmp_path, framing="lines")
    try:
        peer = await Raw.open(srv)
        assert await peer.next() == ServerState(True, False)
        assert peer.raw == ServerState(True, False).encode().encode() + b"\n"
    finally:
        await srv.stop()


async def test_heartbeat_on_the_virtual_clock(tmp_path: Path) -> None:
    """PING every 0.5 s; a client silent for 5 s is dropped and its opponent told so."""
    clock = VirtualClock()
    srv = await _server(tmp_path, clock=clock)
    try:
        ann, bob, _, _ = await _pair(srv)
        await clock.advance(0.5)
        assert isinstance(await ann.next(pings=True), Ping)
        for _ in range(9):  # Ann keeps talking, Bob says nothing (4.5 s: not yet gone)
            ann.send(Ping("AIping"))
            await asyncio.sleep(0.01)
            await clock.advance(0.5)
            assert not bob.reader.at_eof()
        await clock.advance(0.5)
        assert await bob.closed()
        assert await ann.next() == EndGame("Bob", False)
        assert await ann.next() == ServerState(True, False)
    finally:
        await srv.stop()


@pytest.mark.parametrize(("players", "gods"), [(2, False), (2, True), (3, False), (3, True)])
async def test_bot_games(tmp_path: Path, players: int, gods: bool) -> None:
    """Whole games between meeple bots over real sockets, recorded in the store. bot0 is
    the two-ply search player, the others the simple policy: each game still has the
    search player choosing in it, at a third of the CPU (issue 33: 15.3 s -> 5.4 s for
    the four)."""
    srv = await _server(tmp_path)
    try:
        port = srv.ports["santorini"]
        results = await asyncio.wait_for(
            asyncio.gather(
                *(
                    play_santorini(
                        "127.0.0.1",
                        port,
                        f"bot{i}",
                        players=players,
                        gods=gods,
                        games=2,
                        seed=i,
                        search=i == 0,
                    )
                    for i in range(players)
                )
            ),
            60,
        )
    finally:
        await srv.stop()
    bots = {f"bot{i}" for i in range(players)}
    for me, mine in zip(sorted(bots), results, strict=True):
        assert len(mine) == 2
        for r in mine:
            # A winner, or (three players) this bot was knocked out and the others went on.
            assert r.winner in bots or (players == 3 and r.ended_by == me and r.winner is None)
            assert set(r.gods) == bots
            assert all((god != "Atheist") == gods for god in r.gods.values())
    store = Store(str(tmp_path / "meeple.sqlite3"))
    try:
        games = store.games(game="santorini")
    finally:
        store.close()
    assert len(games) == 2
    assert {g.end_reason for g in games} == {"win"}
    assert {g.variant for g in games} == {"gods" if gods else "standard"}


_garbage = st.lists(
    st.one_of(
        st.binary(max_size=200),
        st.just(b"x" * 20000 + b"\n"),
        st.builds(
            lambda t, body: f'{{"type":"{t}","message":{body}}}\n'.encode(),
            st.sampled_from(["MOVE", "BUILD", "UNDO", "PASS", "LOSE", "GODINIT", "UPDATE", "ZAP"]),
            st.sampled_from(["{}", '"{}"', "[]", "null", '{"source":{"row":9}}', "1"]),
        ),
    ),
    max_size=8,
)


@given(_garbage)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
async def test_garbage_never_stalls_a_game(server: MeepleServer, chunks: list[bytes]) -> None:
    """Random bytes, oversized lines and random JSON from a player: INFO replies, and the
    player's next legal command is still played."""
    ann, bob, challenger, _ = await _pair(server)
    for chunk in chunks:
        # Lines are the framing: a line left open would swallow the next command.
        challenger.send(chunk + b"\n")
    challenger.send(ChooseStarter("", "Ann"))
    while True:
        message = await challenger.next()
        if isinstance(message, Update):
            break
        assert isinstance(message, Info | Players)
    assert message.player == "Ann"
    ann.writer.close()
    bob.writer.close()
    await asyncio.sleep(0.05)


def test_santorini_config_table() -> None:
    """[santorini] sets the framing and heartbeat; bad values are refused."""
    from meeple.server.config import ConfigError, config_from_mapping

    config = config_from_mapping({"santorini": {"framing": "lines", "ping_interval": 1}})
    assert config.santorini == SantoriniConfig("lines", 1.0, 5.0)
    for bad in ({"framing": "xml"}, {"ping_interval": 9}, {"color": 1}, {"ping_interval": "1"}):
        with pytest.raises(ConfigError):
            config_from_mapping({"santorini": bad})


def test_bot_command_is_registered() -> None:
    """`meeple bot santorini` parses its options."""
    from meeple.cli.main import build_parser

    args = build_parser().parse_args(["bot", "santorini", "--gods", "--players", "3"])
    assert (args.game, args.gods, args.players, args.port) == ("santorini", True, 3, 7778)


@pytest.fixture(params=["in-process", "copied"])
def deliveries(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How a seat is handed its events: the room's own values (meeple serve), or copies
    that crossed the bus's schema, as a cluster edge's seat hears them (issue 32.3)."""
    if request.param == "copied":
        from meeple.games.santorini.view import event_for_seat
        from meeple.node import wire
        from meeple.server.rooms.santorini import SantoriniRoom

        def copied(room: SantoriniRoom, event: object, index: int) -> object:
            return wire.loads(wire.dumps(event_for_seat(event, index)))

        monkeypatch.setattr(SantoriniRoom, "seat_event", copied)
    return str(request.param)


async def test_three_players_one_gives_up_and_plays_again(
    server: MeepleServer, deliveries: str
) -> None:
    """3 players: the one who sends LOSE gets ENDGAME (itself, false) and SERVERSTATE and
    may register again at once; the others see its workers go and play on, and their
    game's end does not reach it in its next game. The AM27 dialect tells the two games
    apart by the room each delivery names, so copies of the game (a cluster edge's) do
    as well as the room's own."""
    peers = {}
    for name in ("Ann", "Bob", "Cid"):
        peer = await Raw.open(server)
        await peer.next()
        peer.send(Register(name, 3, False))
        peers[name] = peer
    players = await peers["Ann"].next()
    assert isinstance(players, Players)
    for name in ("Bob", "Cid"):
        assert await peers[name].next() == players
    peers[players.player].send(ChooseStarter("", players.player))
    free = iter([Cell(r, c) for r in (0, 4) for c in range(5)])
    owned: dict[str, list[Cell]] = {}
    while True:  # every update to everyone; the one it names acts
        updates = {n: await p.next() for n, p in peers.items()}
        active = next(iter(updates.values()))
        assert isinstance(active, Update)
        mine = updates[active.player]
        assert isinstance(mine, Update)
        if not mine.can_place_worker:
            break
        placed = [c for c, s in mine.board if s.owner == active.player]
        sex = "F" if placed else "M"
        cell = next(free)
        owned.setdefault(active.player, []).append(cell)
        peers[active.player].send(WorkerInit("", cell, sex))
    loser = active.player
    peers[loser].send(b'{"type":"LOSE","message":"{}"}\n')
    assert isinstance(await peers[loser].next(), Update)
    assert await peers[loser].next() == EndGame(loser, False)
    assert isinstance(await peers[loser].next(), ServerState)
    rest = [n for n in peers if n != loser]
    for name in rest:
        seen = await peers[name].next()
        assert isinstance(seen, Update)
        assert {c for c, s in seen.board if s.owner is None} == set(owned[loser])
        assert seen.player in rest
    peers[loser].send(Register(loser, 2, False))
    newcomer = await Raw.open(server)
    assert await newcomer.next() == ServerState(True, True)
    newcomer.send(Register("Dee", 2, False))
    started = await peers[loser].next()
    assert isinstance(started, Players)
    assert await newcomer.next() == started
    # The old game ends: the one on turn there gives up, the last one wins.
    on_turn = seen.player
    peers[on_turn].send(b'{"type":"LOSE","message":"{}"}\n')
    winner = next(n for n in rest if n != on_turn)
    for name in rest:
        message = await peers[name].next()
        while not isinstance(message, EndGame):
            message = await peers[name].next()
        assert message == EndGame(winner, True)
    # The new game goes on for the one who left the old one: its chooser is asked.
    {loser: peers[loser], "Dee": newcomer}[started.player].send(ChooseStarter("", started.player))
    first = await peers[loser].next()
    assert isinstance(first, Update), first

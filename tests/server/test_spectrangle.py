"""Spectrangle 1.4 end to end: raw lines against a real server on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.memory import MemoryWriter, open_memory
from tests.patience import GAME_PATIENCE, PATIENCE

import meeple.server.rooms.spectrangle as spectrangle_server
from meeple.ai.spectrangle import greedy_action
from meeple.clients.spectrangle import SpectrangleClient, SpectrangleClientError, play_spectrangle
from meeple.games import spectrangle as engine
from meeple.games.spectrangle import TILE_SET, Game, Tile, replay
from meeple.protocols.spectrangle import Move, Tiles, messages_for
from meeple.server.app import LISTENERS, MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store

ONLY_SPECTRANGLE = {"spectrangle": LISTENERS["spectrangle"]}


def make_server(tmp_path: Path, seed: int = 1234) -> MeepleServer:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only("spectrangle")
    return MeepleServer(config, rng=random.Random(seed), listeners=ONLY_SPECTRANGLE)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    """A server with only the Spectrangle listener, on a free port, with a seeded RNG."""
    srv = make_server(tmp_path)
    await srv.start()
    yield srv
    await srv.stop()


class Raw:
    """A raw-lines Spectrangle peer."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buffer = b""

    @classmethod
    async def open(cls, server: MeepleServer) -> Raw:
        return cls(*await open_memory(server.listeners["spectrangle"]))

    def send(self, data: str | bytes) -> None:
        self.writer.write(data.encode() + b"\n" if isinstance(data, str) else data)

    async def next(self, timeout: float = 2.0) -> str:
        while b"\n" not in self.buffer:
            chunk = await asyncio.wait_for(self.reader.read(4096), timeout)
            assert chunk, f"connection closed; buffer {self.buffer!r}"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    async def expect(self, *lines: str) -> None:
        for line in lines:
            assert await self.next() == line

    async def ask(self, line: str, *replies: str) -> None:
        self.send(line)
        await self.expect(*replies)

    async def quiet(self, wait: float = 0.1) -> None:
        """Nothing more arrives for ``wait`` seconds."""
        try:
            chunk = await asyncio.wait_for(self.reader.read(4096), wait)
        except TimeoutError:
            return
        self.buffer += chunk
        assert not self.buffer, f"unexpected {self.buffer!r}"

    def close(self) -> None:
        self.writer.close()


async def connected(server: MeepleServer, name: str, *extensions: str) -> Raw:
    peer = await Raw.open(server)
    await peer.ask(" ".join(("connect", name, *extensions)), " ".join(("welcome", *extensions)))
    return peer


# --- the transcript's deal, for byte-exact games --------------------------------------

DEALT = ("YYR4 RRB4 BRP2 YBP3", "WWW1 RRG4 GGB5 RRR6", "BBR5 RGY3 YYG5 GGG6")
DRAWS = "PPP6 PPR4 BBB6 PPB4 GRP1"


def transcript_bag() -> list[Tile]:
    """The transcript's deal (p1, p2, p3) and draws, then the other tiles in set order."""
    dealt = [Tile.parse(t) for hand in DEALT for t in hand.split()]
    draws = [Tile.parse(t) for t in DRAWS.split()]
    used = {t.code for t in dealt + draws}
    rest = [t for t in TILE_SET if t.code not in used]
    return list(reversed(rest)) + list(reversed(draws)) + list(reversed(dealt))


@pytest.fixture
def transcript_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every room deals the transcript's hands (the players must be p1, p2, p3)."""

    def new_game(players: list[str], rng: random.Random) -> Game:
        return Game(players, bag=transcript_bag())

    monkeypatch.setattr(spectrangle_server, "new_game", new_game)


async def three_players(server: MeepleServer) -> tuple[Raw, Raw, Raw]:
    """p1, p2 and p3 queue for 3 and the game starts; returns them after the first tiles."""
    p1 = await connected(server, "p1")
    p2 = await connected(server, "p2", "chat")
    p3 = await connected(server, "p3", "chat")
    await p1.ask("request 3", "waiting p1")
    await p2.ask("request 3", "waiting p1 p2")
    await p1.expect("waiting p1 p2")
    p3.send("request 3")
    for peer in (p1, p2, p3):
        await peer.expect(
            "waiting p1 p2 p3",
            "start with p3 p1 p2",
            "order p3 p1 p2",
            "tiles p1 YYR4 RRB4 BRP2 YBP3 p2 WWW1 RRG4 GGB5 RRR6 p3 BBR5 RGY3 YYG5 GGG6 turn p3",
        )
    return p1, p2, p3


# --- connect, names, lobby --------------------------------------------------------------


async def test_connect_names_and_extensions(server: MeepleServer) -> None:
    """welcome echoes the known extensions asked for; bad or taken names are invalidName."""
    a = await Raw.open(server)
    await a.ask("request 2", "invalidCommand")  # not registered yet
    await a.ask("connect", "invalidName")
    await a.ask("connect null", "invalidName")  # a word that stands where names stand
    await a.ask("connect RGB4", "invalidName")  # tile notation
    await a.ask("connect " + "x" * 33, "invalidName")
    await a.ask("connect alice chat teleport", "welcome chat")
    await a.ask("connect alice", "invalidCommand")  # already registered
    b = await Raw.open(server)
    await b.ask("connect ALICE", "invalidName")  # unique, case-insensitively
    await b.ask("CONNECT bob", "welcome")  # command words in any case; no extension
    # Unique server-wide: a name held on another protocol is refused too.
    assert server.services.names.claim("carol", object())
    c = await Raw.open(server)
    await c.ask("connect carol chat", "invalidName")
    await c.ask("connect dave chat", "welcome chat")
    for peer in (a, b, c):
        peer.close()
    await asyncio.sleep(0.05)
    assert "alice" not in server.services.names  # released when the connection went
    d = await connected(server, "alice")
    d.close()


async def test_lobby_commands_and_errors(server: MeepleServer) -> None:
    """request 2–4 only; turn commands outside a game are invalidCommand; waiting lists."""
    a = await connected(server, "ann")
    for bad in ("request", "request 1", "request 5", "request two", "request 2 3"):
        await a.ask(bad, "invalidCommand")
    for bad in ("place RGB4 on 1", "skip", "exchange RGB4", "hello", "tiles", "chat hi"):
        await a.ask(bad, "invalidCommand")  # chat: ann did not ask for the extension
    await a.ask("request 4", "waiting ann")
    await a.ask("request 4", "invalidCommand")  # already queued
    b = await connected(server, "ben")
    await b.ask("request 4", "waiting ann ben")
    await a.expect("waiting ann ben")
    b.close()  # leaving a queue: the others hear the shorter queue
    await a.expect("waiting ann")
    await a.quiet()
    a.close()


async def test_pipelined_and_byte_by_byte_lines(server: MeepleServer) -> None:
    """Lines sent before their verdict wait for it; any chunking and \\r\\n are understood."""
    a = await Raw.open(server)
    a.send(b"connect ann\r\nrequest 2\nbogus\n")
    await a.expect("welcome", "waiting ann", "invalidCommand")
    b = await Raw.open(server)
    for byte in b"connect ben\nrequest 2\n":
        b.send(bytes([byte]))
        await b.writer.drain()
    await b.expect("welcome", "waiting ann ben")
    assert (await b.next()).startswith("start with ")
    a.close()
    b.close()


async def test_oversized_and_binary_lines(server: MeepleServer) -> None:
    """A line over the size limit and bytes that are not UTF-8 get invalidCommand; the
    connection goes on."""
    a = await Raw.open(server)
    limit = server.config.max_message_size
    a.send(b"connect " + b"x" * limit + b"\n")
    await a.expect("invalidCommand")
    a.send(b"\xff\xfe\x00garbage\n\x00\n")
    await a.expect("invalidCommand", "invalidCommand")
    await a.ask("connect ann", "welcome")
    a.close()


# --- a game, byte for byte --------------------------------------------------------------


@pytest.mark.usefixtures("transcript_deal")
async def test_every_turn_command_and_error_byte_exact(server: MeepleServer) -> None:
    """The transcript's opening, with every refusal the rules give along the way."""
    p1, p2, p3 = await three_players(server)
    await p1.ask("place YYR4 on 1", "invalidCommand")  # out of turn
    await p1.ask("skip", "invalidCommand")
    for bad in (
        "place GGG6 on 2",  # the first tile may not go on a bonus field
        "place RRR6 on 0",  # not in hand
        "place GGG6 on 36",  # no such field
        "place GGG6 on -1",
        "place GGGG on 0",  # not a tile
        "skip",  # p3 can place, so may not skip
        "exchange GGG6",  # ... nor exchange
    ):
        await p3.ask(bad, "invalidMove")
    for bad in ("place GGG6", "place GGG6 at 0", "exchange", "skip now", "place GGG6 on"):
        await p3.ask(bad, "invalidCommand")
    p3.send("place GGG6 on 0")
    tiles = "tiles p1 YYR4 RRB4 BRP2 YBP3 p2 WWW1 RRG4 GGB5 RRR6 p3 BBR5 RGY3 YYG5 PPP6"
    for peer in (p1, p2, p3):
        await peer.expect("move p3 GGG6 0 6", f"{tiles} skip p1")
    for bad in ("place RRB4 on 1", "place RRB4 on 8", "exchange RRR6"):
        await p1.ask(bad, "invalidMove")  # p1 holds no green: skip or exchange only
    await p1.ask("skip please", "invalidCommand")
    p1.send("exchange RYY4")  # any rotation names the held YYR4
    after = "tiles p1 RRB4 BRP2 YBP3 PPR4 p2 WWW1 RRG4 GGB5 RRR6 p3 BBR5 RGY3 YYG5 PPP6 turn p2"
    for peer in (p1, p2, p3):
        await peer.expect("replace p1 YYR4 with PPR4", after)
    await p2.ask("place GGB5 on 1", "invalidMove")  # blue side against GGG6's green
    p2.send("place GGB5 on 2")
    for peer in (p1, p2, p3):
        await peer.expect(
            "move p2 GGB5 2 15",
            "tiles p1 RRB4 BRP2 YBP3 PPR4 p2 WWW1 RRG4 RRR6 BBB6 p3 BBR5 RGY3 YYG5 PPP6 turn p3",
        )
    p3.send("place RBB5 on 1")  # a rotation of the held BBR5, which leaves the hand
    for peer in (p1, p2, p3):
        await peer.expect(
            "move p3 RBB5 1 5",
            "tiles p1 RRB4 BRP2 YBP3 PPR4 p2 WWW1 RRG4 RRR6 BBB6 p3 RGY3 YYG5 PPP6 PPB4 turn p1",
        )
    await p1.quiet()
    for peer in (p1, p2, p3):
        peer.close()


@pytest.mark.usefixtures("transcript_deal")
async def test_transcript_client_lines_replayed(
    server: MeepleServer, spectrangle_transcript: list[Any]
) -> None:
    """The log's client lines, sent to meeple in log order, get the log's game lines back,
    up to where the log's server broke the rules (it kept p3's rotated BBR5 in hand).

    The documented differences: meeple sends ``welcome`` without extensions to a client
    that asked for none, tells every queued player each change of the queue, and says
    "p1 must skip" in the 1.4 tiles line rather than the 1.3 ``skip p1`` line.
    """
    log = [(t.connection, t.outgoing, t.text) for t in spectrangle_transcript]
    stop = next(i for i, (_, out, text) in enumerate(log) if out and text == "place RBB5 on 1")
    peers: dict[int, Raw] = {}
    seen: dict[int, list[str]] = {}

    async def until(conn: int, done: Callable[[list[str]], bool]) -> None:
        while not done(seen[conn]):
            seen[conn].append(await peers[conn].next())

    turns = 0
    for conn, outgoing, text in log[: stop + 1]:
        if not outgoing:
            continue
        if conn not in peers:
            peers[conn], seen[conn] = await Raw.open(server), []
        me = f"p{conn}"
        if text.split()[0] in ("place", "skip", "exchange"):
            # As the log's clients did: act on the tiles line that gives this player the turn.
            def my_turn(lines: list[str], n: int = turns + 1, me: str = me) -> bool:
                tiles = [t for t in lines if t.startswith("tiles ")]
                return len(tiles) >= n and tiles[-1].split()[-1] == me

            await until(conn, my_turn)
            turns += 1
        peers[conn].send(text)
        if text.startswith("connect"):
            await until(conn, lambda lines: any(t.startswith("welcome") for t in lines))
        elif text.startswith("request"):
            await until(conn, lambda lines: any(t.startswith("waiting") for t in lines))
    skip_tiles = (
        "tiles p1 YYR4 RRB4 BRP2 YBP3 p2 WWW1 RRG4 GGB5 RRR6 p3 BBR5 RGY3 YYG5 PPP6 skip p1"
    )
    for conn, peer in peers.items():
        expected = [t for c, out, t in log if c == conn and not out]
        expected = expected[expected.index("order p3 p1 p2") :]
        expected = [skip_tiles if t == "skip p1" else t for t in expected]
        await until(conn, lambda lines: bool(lines) and lines[-1].startswith("move p3 RBB5"))
        got = seen[conn][seen[conn].index("order p3 p1 p2") :]
        assert got == expected[: len(got)], f"connection {conn}"
        assert len(got) == 9  # order, first tiles, then 3 full turns and the 4th move
        peer.close()


# --- skipping, chat, leaving ------------------------------------------------------------


@pytest.mark.usefixtures("transcript_deal")
async def test_player_skipped_and_chat(server: MeepleServer) -> None:
    """A chosen skip is announced as player skipped; chat reaches chat players only."""
    p1, p2, p3 = await three_players(server)
    await p1.ask("chat hi", "invalidCommand")  # p1 did not ask for chat
    p2.send("chat good  luck, all ")
    for peer in (p2, p3):
        await peer.expect("chat p2 good  luck, all")
    p3.send("place GGG6 on 0")
    for peer in (p1, p2, p3):
        await peer.expect("move p3 GGG6 0 6")
        assert (await peer.next()).endswith("skip p1")
    p1.send("skip")
    for peer in (p1, p2, p3):
        await peer.expect("player skipped p1")
        assert (await peer.next()).endswith("turn p2")
    await p1.quiet()
    for peer in (p1, p2, p3):
        peer.close()


async def test_lobby_chat_reaches_players_outside_games(server: MeepleServer) -> None:
    """Outside a game, chat goes to every Spectrangle player not in a game who has chat."""
    a = await connected(server, "ann", "chat")
    b = await connected(server, "ben", "chat")
    c = await connected(server, "cat")
    await a.ask("request 3", "waiting ann")
    b.send("chat anyone for a 3-player game?")
    for peer in (a, b):
        await peer.expect("chat ben anyone for a 3-player game?")
    await c.quiet()
    for peer in (a, b, c):
        peer.close()


@pytest.mark.usefixtures("transcript_deal")
async def test_a_player_leaving_ends_the_game_without_points(
    server: MeepleServer,
) -> None:
    """player <name> left to the others, no leaderboard; they are back in the lobby."""
    p1, p2, p3 = await three_players(server)
    p2.close()
    for peer in (p1, p3):
        await peer.expect("player p2 left")
    await p1.ask("place YYR4 on 0", "invalidCommand")  # no game any more
    await p1.ask("request 2", "waiting p1")
    await p3.ask("request 2", "waiting p1 p3")
    await p1.expect("waiting p1 p3")
    assert (await p1.next()).startswith("start with")
    store: Store = server.services.store
    record = store.games(game="spectrangle")[0]
    assert record.end_reason == "player-left"
    assert record.result == {"left": ["p2"]}
    p1.close()
    p3.close()


@pytest.mark.usefixtures("transcript_deal")
async def test_a_silent_player_is_cut_off_at_the_idle_timeout(tmp_path: Path) -> None:
    """No turn clock: the idle timeout (on the injected clock) closes a silent player's
    connection, and the others hear it leave, as for any disconnect."""
    clock = VirtualClock()
    config = ServerConfig(database=str(tmp_path / "db.sqlite3"), idle_timeout=60).with_port(
        "spectrangle", 0
    )
    srv = MeepleServer(config, clock=clock, listeners=ONLY_SPECTRANGLE)
    await srv.start()
    try:
        p1, p2, p3 = await three_players(srv)
        await clock.advance(30)
        await p1.ask("chat x", "invalidCommand")  # p1 and p2 are not silent
        await p2.ask("skip", "invalidCommand")
        await clock.advance(31)  # p3, on turn, has said nothing for 61 s
        for peer in (p1, p2):
            await peer.expect("player p3 left")
        assert await p3.reader.read() == b""
        for peer in (p1, p2, p3):
            peer.close()
    finally:
        await srv.stop()


def command_for(action: engine.Action) -> str:
    """The client line for an engine action."""
    if isinstance(action, engine.Place):
        return f"place {action.tile} on {action.index}"
    if isinstance(action, engine.Exchange):
        return f"exchange {action.tile}"
    return "skip"


@pytest.mark.usefixtures("transcript_deal")
async def test_a_whole_raw_game_to_the_leaderboard(server: MeepleServer) -> None:
    """Three raw peers play the transcript's deal to its end with the greedy player, each
    line checked against a replica game; the last line is the leaderboard."""
    peers = dict(zip(("p1", "p2", "p3"), await three_players(server), strict=True))
    replica = Game(["p1", "p2", "p3"], bag=transcript_bag())
    lines = 0
    while replica.turn is not None:
        action = greedy_action(replica, replica.turn)
        command = command_for(action)
        peers[replica.players[replica.turn]].send(command)
        expected = [m.to_line() for m in messages_for(replica, replica.apply(action))]
        for peer in peers.values():
            await peer.expect(*expected)
        lines += len(expected)
    assert replica.result is not None
    ranked = [(replica.players[p], replica.result.scores[p]) for p in replica.result.ranking]
    assert expected[-1] == "game finished leaderboard " + " ".join(f"{n} {s}" for n, s in ranked)
    assert lines > 36
    for peer in peers.values():
        await peer.quiet()
        peer.close()


# --- whole games over real sockets --------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
async def test_whole_bot_games_match_the_stored_record(server: MeepleServer, players: int) -> None:
    """Greedy bots play to the leaderboard; every bot saw the same one; it equals the
    stored game replayed through the engine."""
    port = server.ports["spectrangle"]
    names = [f"bot{players}{i}" for i in range(players)]
    results = await asyncio.wait_for(
        asyncio.gather(*(play_spectrangle("127.0.0.1", port, n, players=players) for n in names)),
        GAME_PATIENCE,
    )
    boards = {r[0].leaderboard for r in results}
    assert len(boards) == 1
    board = boards.pop()
    assert board is not None
    assert sorted(n for n, _ in board) == sorted(names)
    assert [p for _, p in board] == sorted((p for _, p in board), reverse=True)
    assert all(r[0].refused == 0 for r in results)
    store: Store = server.services.store
    record = store.games(game="spectrangle")[0]
    assert record.players == tuple(names)
    assert record.end_reason == "finished"
    game = replay(spectrangle_server.record_from_json(record.record))
    assert game.result is not None
    assert dict(board) == dict(zip(game.players, game.result.scores, strict=True))
    assert dict(board) == record.result["scores"]


async def test_client_keeps_what_a_player_can_know(server: MeepleServer) -> None:
    """The client's board, hands, points and bag size follow the game; a refused name raises."""
    port = server.ports["spectrangle"]
    a = await SpectrangleClient.connect("127.0.0.1", port, "ann", chat=True)
    assert a.extensions == frozenset({"chat"})
    with pytest.raises(SpectrangleClientError, match="not welcomed"):
        await SpectrangleClient.connect("127.0.0.1", port, "Ann")
    b = await SpectrangleClient.connect("127.0.0.1", port, "ben")
    await a.request_game(2)
    await b.request_game(2)
    for client in (a, b):
        while client.turn is None:
            await asyncio.wait_for(client.receive(), PATIENCE)
    assert a.my_turn != b.my_turn
    mover = a if a.my_turn else b
    assert mover.order[0] == mover.name
    assert mover.bag_size == 36 - 8
    assert set(mover.hands) == {"ann", "ben"}
    assert all(len(h) == 4 for h in mover.hands.values())
    best = max(mover.board.placements(mover.hand), key=lambda p: p.points)
    await mover.place(best.tile, best.index)
    assert not mover.my_turn
    while not isinstance(await asyncio.wait_for(mover.receive(), PATIENCE), Move):
        pass
    assert isinstance(await asyncio.wait_for(mover.receive(), PATIENCE), Tiles)
    assert mover.board.tile(best.index) == best.tile
    assert mover.points[mover.name] == best.points
    assert mover.bag_size == 36 - 8 - 1
    assert mover.turn != mover.name
    await a.close()
    await b.close()


# --- garbage beside a live game ---------------------------------------------------------

_LINES = [
    b"place RGB4 on 11\n",
    b"connect p1\n",
    b"connect\n",
    b"request 3\n",
    b"skip\n",
    b"exchange WWW1\n",
    b"chat hello\n",
    b"tiles p1 null null null null turn p1\n",
    b"\r\n",
    b"\n",
    b"\xff\xfe\x00\n",
    b"x" * 9000 + b"\n",
]


def _garbage() -> st.SearchStrategy[bytes]:
    pieces = st.one_of(st.binary(max_size=64), st.sampled_from(_LINES))
    return st.lists(pieces, max_size=12).map(b"".join)


async def game_line(peer: Raw) -> str:
    """The next line that is not chat (a player's garbage may hold valid chat lines)."""
    while (line := await peer.next()).startswith("chat "):
        pass
    return line


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=_garbage(), from_player=st.booleans())
def test_garbage_never_disturbs_a_running_game(
    junk: bytes, from_player: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random bytes from a stranger, or from a player waiting for its turn, get error
    lines at most; the game goes on exactly as before."""
    monkeypatch.setattr(
        spectrangle_server, "new_game", lambda players, rng: Game(players, bag=transcript_bag())
    )

    async def scenario() -> None:
        srv = make_server(tmp_path)
        await srv.start()
        try:
            p1, p2, p3 = await three_players(srv)
            sender = p2 if from_player else await Raw.open(srv)
            sender.send(junk)
            await sender.writer.drain()
            await asyncio.sleep(0.05)  # let the server take it in before the game moves
            p3.send("place GGG6 on 0")
            for peer in (p1, p3):
                assert await game_line(peer) == "move p3 GGG6 0 6"
                assert (await game_line(peer)).endswith("PPP6 skip p1")
            p1.send("skip")
            for peer in (p1, p3):
                assert await game_line(peer) == "player skipped p1"
                assert (await game_line(peer)).endswith("turn p2")
            for peer in (p1, p2, p3, sender):
                peer.close()
        finally:
            await srv.stop()

    asyncio.run(scenario())


async def test_error_words_from_a_client_are_never_answered(server: MeepleServer) -> None:
    """invalidCommand / invalidMove / invalidName from a client (any case, before or after
    connect) get no answer, so two peers cannot bounce errors; the client carries on."""
    a = await Raw.open(server)
    a.send("invalidCommand")
    await a.quiet()
    await a.ask("connect ann", "welcome")
    for word in ("invalidCommand", "invalidMove", "invalidName", "INVALIDCOMMAND", " invalidMove"):
        a.send(word)
    await a.quiet()
    await a.ask("request 2", "waiting ann")
    a.send("invalidMove")
    await a.quiet()
    a.close()

"""Scrabble over Twente v2 end to end: raw bytes against a real server, in memory
(tests/memory.py: the listener's own code, no socket), and whole games of bots over
loopback on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.memory import MemoryWriter, open_memory
from tests.patience import GAME_PATIENCE

from meeple.ai.scrabble import ranked_moves
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.board import Board, Direction, format_square
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH, TileSet
from meeple.protocols.twente.messages import NotifyTurn
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store

US, RS = b"\x1f", b"\x1e"


def msg(*fields: str) -> bytes:
    return US.join(f.encode() for f in fields) + RS


class Raw:
    """A raw-bytes Twente peer, in memory."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buffer = b""

    @classmethod
    async def open(cls, server: MeepleServer) -> Raw:
        return cls(*await open_memory(server.listeners["twente"]))

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def next(self, timeout: float = 2.0) -> list[str]:
        """The next message's fields."""
        while RS not in self.buffer:
            chunk = await asyncio.wait_for(self.reader.read(4096), timeout)
            assert chunk, "connection closed"
            self.buffer += chunk
        frame, self.buffer = self.buffer.split(RS, 1)
        return frame.decode().split("\x1f")

    async def expect(self, *fields: str) -> None:
        assert await self.next() == list(fields)

    async def quiet(self, wait: float = 0.1) -> None:
        """Nothing more arrives for ``wait`` seconds."""
        try:
            chunk = await asyncio.wait_for(self.reader.read(4096), wait)
        except TimeoutError:
            return
        self.buffer += chunk
        assert RS not in self.buffer, f"unexpected {self.buffer!r}"

    def close(self) -> None:
        self.writer.close()


async def _announced(server: MeepleServer, name: str, *flags: str) -> Raw:
    peer = await Raw.open(server)
    peer.send(msg("ANNOUNCE", name, *flags))
    await peer.expect("WELCOME", name, "CHAT", "TEAMPLAY")
    return peer


async def _two_player_game(server: MeepleServer) -> tuple[Raw, Raw, dict[str, str], str]:
    """Alice and Bob in a game; returns both, their racks, and who starts."""
    a = await _announced(server, "Alice", "CHAT")
    b = await _announced(server, "Bob")
    a.send(msg("REQUESTGAME"))
    await a.expect("INFORMQUEUE", "1", "2")
    b.send(msg("REQUESTGAME", "2"))
    racks = {}
    first = ""
    for name, peer in (("Alice", a), ("Bob", b)):
        await peer.expect("INFORMQUEUE", "2", "2")
        await peer.expect("STARTGAME", "Alice", "Bob")
        command, tiles = await peer.next()
        assert command == "NEWTILES"
        assert len(tiles) == 7
        racks[name] = tiles.replace("!", "?")
        command, mine, first = await peer.next()
        assert command == "NOTIFYTURN"
        assert mine == ("1" if first == name else "0")
    return a, b, racks, first


def _word_from(rack: str, lexicon: Lexicon, *, valid: bool) -> str:
    """A 2-letter string from the rack's letters that is (or is not) a word."""
    letters = [c for c in rack if c != "?"]
    for i, x in enumerate(letters):
        for j, y in enumerate(letters):
            if i != j and ((x + y) in lexicon) == valid:
                return x + y
    raise AssertionError(f"no {'word' if valid else 'non-word'} in {rack}")


async def test_lobby_errors_byte_exact(server: MeepleServer) -> None:
    """E013, E012, E001 (case-insensitive), E002, E003, E014 and E015 come back as the spec says."""
    p = await Raw.open(server)
    p.send(msg("REQUESTGAME"))
    await p.expect("ERROR", "E013")
    p.send(msg("FOO", "bar"))
    await p.expect("ERROR", "E002")
    p.send(msg("ANNOUNCE", "Alice"))
    await p.expect("WELCOME", "Alice", "CHAT", "TEAMPLAY")
    p.send(msg("ANNOUNCE", "Alice"))
    await p.expect("ERROR", "E012")
    q = await Raw.open(server)
    q.send(msg("ANNOUNCE", "ALICE"))
    await q.expect("ERROR", "E001")
    q.send(msg("ANNOUNCE", "Carol"))
    await q.expect("WELCOME", "Carol", "CHAT", "TEAMPLAY")
    p.send(msg("MAKEMOVE", "SWAP", "ABC"))
    await p.expect("ERROR", "E014")
    p.send(msg("REQUESTGAME", "5"))
    await p.expect("ERROR", "E003")
    p.send(msg("SENDCHAT", "hello"))  # Alice did not announce CHAT: E002 (ERRATA)
    await p.expect("ERROR", "E002")
    p.send(msg("REQUESTGAME"))
    await p.expect("INFORMQUEUE", "1", "2")
    q.send(msg("REQUESTGAME"))
    for peer in (p, q):
        await peer.expect("INFORMQUEUE", "2", "2")
        await peer.expect("STARTGAME", "Alice", "Carol")
        assert (await peer.next())[0] == "NEWTILES"
        assert (await peer.next())[0] == "NOTIFYTURN"
    p.send(msg("REQUESTGAME"))
    await p.expect("ERROR", "E015")
    p.close()
    q.close()


async def test_move_errors_then_a_real_move(server: MeepleServer, gcide: Lexicon) -> None:
    """E004, E003, E005, E011, E008, E006 and E009 for bad moves; then a move goes through."""
    a, b, racks, first = await _two_player_game(server)
    mover, other = (a, b) if first == "Alice" else (b, a)
    rack = racks[first]
    mover.send(msg("MAKEMOVE", "WORD", "C16", "H", "CAT"))
    await mover.expect("ERROR", "E004")
    mover.send(msg("MAKEMOVE", "WORD", "H8", "D", "CAT"))
    await mover.expect("ERROR", "E003")
    word = _word_from(rack, gcide, valid=True)
    mover.send(msg("MAKEMOVE", "WORD", "O8", "H", word))
    await mover.expect("ERROR", "E005")
    mover.send(msg("MAKEMOVE", "WORD", "A1", "H", word))
    await mover.expect("ERROR", "E011")
    absent = next(c for c in "QZXJKVWYBCFHMP" if c not in rack)
    mover.send(msg("MAKEMOVE", "WORD", "H8", "H", absent * 2))
    await mover.expect("ERROR", "E008")
    mover.send(msg("MAKEMOVE", "WORD", "H8", "H", _word_from(rack, gcide, valid=False)))
    await mover.expect("ERROR", "E006")
    other.send(msg("MAKEMOVE", "SWAP", ""))
    await other.expect("ERROR", "E009")
    best = ranked_moves(Board(), rack, gcide, ENGLISH)[0]
    pos = format_square(best.x, best.y)
    d = "H" if best.direction is Direction.ACROSS else "V"
    mover.send(msg("MAKEMOVE", "WORD", pos, d, best.word))
    command, drawn = await mover.next()
    assert command == "NEWTILES"
    assert len(drawn) == len(best.tiles)
    player = first
    for peer in (mover, other):
        await peer.expect("INFORMMOVE", player, "WORD", pos, d, best.word)
    second = "Bob" if first == "Alice" else "Alice"
    await mover.expect("NOTIFYTURN", "0", second)
    await other.expect("NOTIFYTURN", "1", second)
    await a.quiet()
    a.close()
    b.close()


async def test_byte_by_byte_and_batched_delivery(server: MeepleServer) -> None:
    """Messages split into single bytes, or several in one write, are understood the same."""
    p = await Raw.open(server)
    for byte in msg("ANNOUNCE", "Dora"):
        p.send(bytes([byte]))
        await p.writer.drain()
    await p.expect("WELCOME", "Dora", "CHAT", "TEAMPLAY")
    p.send(msg("FOO") + b"\r\n" + msg("REQUESTGAME", "3") + b"\n" + msg("BAR"))
    await p.expect("ERROR", "E002")
    await p.expect("INFORMQUEUE", "1", "3")
    await p.expect("ERROR", "E002")
    p.close()


async def test_swap_with_too_few_tiles_in_the_bag_is_e007(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """Once the bag holds fewer tiles than a swap asks for, the server answers E007."""
    c1 = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "p1")
    c2 = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "p2")
    await c1.request_game()
    await c2.request_game()
    clients = {"p1": c1, "p2": c2}
    errors = []

    async def drive(c: TwenteClient) -> None:
        async for m in c:
            if c.game_over:
                return
            if isinstance(m, NotifyTurn) and m.your_turn:
                if 0 < c.bag_count < len(c.rack):
                    await c.swap(c.rack)
                    continue
                moves = ranked_moves(c.board, c.rack, gcide, ENGLISH)
                if moves:
                    await c.play_word(moves[0].x, moves[0].y, moves[0].direction, moves[0].word)
                else:
                    await c.pass_turn()
            elif c.last_error is not None:
                errors.append(c.last_error.code.value)
                c.last_error = None
                await c.pass_turn()

    await asyncio.wait_for(asyncio.gather(*(drive(c) for c in clients.values())), GAME_PATIENCE)
    assert "E007" in errors
    for c in clients.values():
        await c.close()


async def test_whole_bot_games_match_the_engine_replay(
    server: MeepleServer, gcide: Lexicon, replay_gcg: Callable[[str, TileSet], dict[str, int]]
) -> None:
    """2-, 3- and 4-player bot games run to GAMEOVER; scores equal a replay of the record."""
    port = server.ports["twente"]
    for n in (2, 3, 4):
        results = await asyncio.wait_for(
            asyncio.gather(
                *(play_twente("127.0.0.1", port, f"bot{n}{i}", gcide, players=n) for i in range(n))
            ),
            GAME_PATIENCE,
        )
        seen = {tuple(sorted(r[0].scores.items())) for r in results}
        assert len(seen) == 1, "every bot saw the same final scores"
        assert all(r[0].reason == "WIN" for r in results)
        store: Store = server.services.store
        record = store.games()[0]
        assert record.players == tuple(f"bot{n}{i}" for i in range(n))
        assert dict(results[0][0].scores) == record.result["scores"]
        assert replay_gcg(record.record, ENGLISH) == record.result["scores"]


async def test_disconnect_ends_the_game_and_frees_the_others(server: MeepleServer) -> None:
    """A player vanishing: PLAYERDISCONNECTED, GAMEOVER DISCONNECT (0 for them); re-queueing."""
    a, b, _, _ = await _two_player_game(server)
    b.close()
    await a.expect("PLAYERDISCONNECTED", "Bob")
    await a.expect("GAMEOVER", "DISCONNECT", "Alice", "0", "Bob", "0")
    a.send(msg("REQUESTGAME"))
    await a.expect("INFORMQUEUE", "1", "2")
    c = await _announced(server, "Bob")  # the name is free again
    c.close()
    a.close()


async def test_chat_reaches_players_of_the_same_game_that_announced_chat(
    server: MeepleServer,
) -> None:
    """SENDCHAT goes to the game's players with CHAT; others never see NOTIFYCHAT."""
    a, b, _, _ = await _two_player_game(server)
    a.send(msg("SENDCHAT", "good luck"))
    await a.expect("NOTIFYCHAT", "Alice", "good luck")
    await b.quiet()
    a.close()
    b.close()


async def test_shutdown_tells_players_in_a_game(tmp_path: Path, gcide: Lexicon) -> None:
    """Stopping the server sends GAMEOVER DISCONNECT to players mid-game, then closes."""
    config = ServerConfig(database=str(tmp_path / "db.sqlite3")).only("twente")
    srv = MeepleServer(config, rng=random.Random(5))
    srv.services.lexicon = gcide
    await srv.start()
    a, b, _, _ = await _two_player_game(srv)
    await srv.stop()
    for peer in (a, b):
        fields = await peer.next()
        assert fields[:2] == ["GAMEOVER", "DISCONNECT"]
        assert await peer.reader.read() == b""
        peer.close()


def _garbage() -> st.SearchStrategy[bytes]:
    pieces = st.one_of(
        st.binary(max_size=64),
        st.sampled_from(
            [
                msg("MAKEMOVE", "WORD", "H8", "H", "QI"),
                msg("ANNOUNCE"),
                msg("REQUESTGAME", "x"),
                msg("MAKEMOVE"),
                RS,
                US,
                b"\r\n",
                msg("SENDCHAT", "x" * 50),
                b"\xff\xfe" + RS,
            ]
        ),
    )
    return st.lists(pieces, max_size=12).map(b"".join)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=_garbage())
def test_garbage_never_disturbs_a_running_game(junk: bytes, gcide: Lexicon, tmp_path: Path) -> None:
    """Random bytes from a stranger get errors or a close; the game next door plays on."""

    async def scenario() -> None:
        config = ServerConfig(database=":memory:").only("twente")
        srv = MeepleServer(config, rng=random.Random(7))
        srv.services.lexicon = gcide
        await srv.start()
        try:
            a, b, _, first = await _two_player_game(srv)
            stranger = await Raw.open(srv)
            stranger.send(junk)
            await stranger.writer.drain()
            mover, other = (a, b) if first == "Alice" else (b, a)
            mover.send(msg("MAKEMOVE", "SWAP", ""))
            for peer in (mover, other):
                await peer.expect("INFORMMOVE", first, "SWAP", "0")
            stranger.close()
            a.close()
            b.close()
        finally:
            await srv.stop()

    asyncio.run(scenario())


# Messages a player in a game may well send at the wrong moment, each with the one
# reply the spec gives it there (None: no reply). Bob did not announce CHAT.
_OUT_OF_ORDER: list[tuple[bytes, str | None]] = [
    (msg("ANNOUNCE", "Bob"), "E012"),
    (msg("REQUESTGAME"), "E015"),
    (msg("REQUESTGAME", "3"), "E015"),
    (msg("MAKEMOVE", "WORD", "H8", "H", "QI"), "E009"),
    (msg("MAKEMOVE", "SWAP", "A"), "E009"),
    (msg("MAKEMOVE", "SWAP", ""), "E009"),
    (msg("MAKEMOVE", "PASS"), "E009"),
    (msg("SENDCHAT", "hi"), "E002"),
    (msg("ERROR", "E002"), None),
    (msg("WELCOME", "Bob"), "E002"),
]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(script=st.lists(st.sampled_from(_OUT_OF_ORDER), min_size=1, max_size=8))
def test_out_of_order_messages_are_answered_and_the_game_goes_on(
    script: list[tuple[bytes, str | None]], gcide: Lexicon
) -> None:
    """A player sending valid messages out of turn gets one ERROR each; the game is untouched."""

    async def scenario() -> None:
        config = ServerConfig(database=":memory:").only("twente")
        srv = MeepleServer(config, rng=random.Random(11))
        srv.services.lexicon = gcide
        await srv.start()
        try:
            a, b, _, first = await _two_player_game(srv)
            mover, other = (a, b) if first == "Alice" else (b, a)
            other_name = "Bob" if first == "Alice" else "Alice"
            for data, code in script:
                if data.startswith((b"ANNOUNCE", b"WELCOME")):
                    data = data.replace(b"Bob", other_name.encode())
                if data.startswith(b"SENDCHAT") and other is a:
                    continue  # Alice announced CHAT: hers would be relayed, not refused
                other.send(data)
                if code is not None:
                    await other.expect("ERROR", code)
            await other.quiet()
            mover.send(msg("MAKEMOVE", "SWAP", ""))
            for peer in (mover, other):
                await peer.expect("INFORMMOVE", first, "SWAP", "0")
                await peer.expect("NOTIFYTURN", "1" if peer is other else "0", other_name)
            a.close()
            b.close()
        finally:
            await srv.stop()

    asyncio.run(scenario())

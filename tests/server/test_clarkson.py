"""Scrabble over Clarkson end to end: raw bytes against a real server on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.memory import MemoryWriter, open_memory
from tests.patience import GAME_PATIENCE, PATIENCE

from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import ClarksonClient, play_clarkson
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON, TileSet
from meeple.protocols.clarkson.messages import Goodbye
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store

HELLO = b"HELLO 1.0.1,Linux 6.1,Python/3.11,tester\r\n"


class Raw:
    """A raw-bytes Clarkson peer."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader, self.writer = reader, writer
        self.buffer = b""

    @classmethod
    async def open(cls, server: MeepleServer) -> Raw:
        return cls(*await open_memory(server.listeners["clarkson"]))

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def line(self, timeout: float = 2.0) -> bytes:
        """The next line, CRLF included."""
        while b"\r\n" not in self.buffer:
            chunk = await asyncio.wait_for(self.reader.read(4096), timeout)
            assert chunk, f"connection closed; buffer {self.buffer!r}"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line + b"\r\n"

    async def expect(self, wire: bytes) -> None:
        assert await self.line() == wire

    async def board(self) -> list[bytes]:
        """A BOARDPUSH's 15 rows (and its final empty line checked)."""
        await self.expect(b"BOARDPUSH\r\n")
        rows = [await self.line() for _ in range(15)]
        await self.expect(b"\r\n")
        return rows

    async def closed(self) -> None:
        """The server closed the connection (after GOODBYE)."""
        assert await asyncio.wait_for(self.reader.read(), PATIENCE) == b""
        self.writer.close()

    async def quiet(self, wait: float = 0.1) -> None:
        try:
            chunk = await asyncio.wait_for(self.reader.read(4096), wait)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected {self.buffer + chunk!r}")

    def close(self) -> None:
        self.writer.close()


async def _joined(server: MeepleServer, name: str, others: tuple[str, ...] = ()) -> Raw:
    """Connected, greeted, told of everyone already at the table, and named ``name``."""
    peer = await Raw.open(server)
    assert (await peer.line()).startswith(b"HELLO 1.0.1,")
    peer.send(HELLO)
    ok = await peer.line()
    assert ok.startswith(b"OK Please send a username, otherwise you will be known as 127.0.0.1")
    default = ok.split()[-1].decode()
    for other in others:
        await peer.expect(f"USERJOIN {other}\r\n".encode())
    peer.send(f"USERSET {name}\r\n".encode())
    await peer.expect(f"USERCHANGE {default} {name}\r\n".encode())
    return peer


async def _start(peers: dict[str, Raw]) -> dict[str, str]:
    """Everyone READY; check the opening of §3.9–§3.13; return each one's tiles."""
    names = list(peers)
    racks = {}
    for peer in peers.values():
        peer.send(b"READY\r\n")
    for name, peer in peers.items():
        await peer.expect(b"OK when everyone is ready the game will start\r\n")
        await peer.expect(b"STARTING\r\n")
        for n in names:
            await peer.expect(f"SCORE 0 {n}\r\n".encode())
        rows = await peer.board()
        assert rows[7].split(b" ")[7] == b"(0,3)"
        tiles = await peer.line()
        assert tiles.startswith(b"TILES ")
        racks[name] = tiles[6:-2].decode()
        assert len(racks[name]) == 7
        await peer.expect(f"TURN {names[0]}\r\n".encode())
    return racks


async def test_greeting_names_and_userjoin(server: MeepleServer) -> None:
    """HELLO/OK, IP default names, USERJOIN both ways, newcomer told of all, name taken NOK."""
    a = await Raw.open(server)
    assert (await a.line()).startswith(b"HELLO 1.0.1,")
    a.send(HELLO)
    await a.expect(b"OK Please send a username, otherwise you will be known as 127.0.0.1\r\n")
    b = await Raw.open(server)
    await b.line()
    b.send(HELLO)
    # Two clients from one address: the second default name gets a suffix (§3.5).
    await b.expect(b"OK Please send a username, otherwise you will be known as 127.0.0.1-2\r\n")
    await b.expect(b"USERJOIN 127.0.0.1\r\n")
    await a.expect(b"USERJOIN 127.0.0.1-2\r\n")
    a.send(b"USERSET Hunter\r\n")
    for peer in (a, b):
        await peer.expect(b"USERCHANGE 127.0.0.1 Hunter\r\n")
    b.send(b"USERSET hunter\r\n")
    await b.expect(b"NOK name already taken\r\n")
    b.send(b"USERSET Jeanna\r\n")
    for peer in (b, a):
        await peer.expect(b"USERCHANGE 127.0.0.1-2 Jeanna\r\n")
    c = await _joined(server, "Marzieh", ("Hunter", "Jeanna"))
    for peer in (a, b):
        await peer.expect(b"USERJOIN 127.0.0.1\r\n")
        await peer.expect(b"USERCHANGE 127.0.0.1 Marzieh\r\n")
    for peer in (a, b, c):
        peer.send(b"QUIT\r\n")
        await peer.expect(b"GOODBYE\r\n")
        await peer.closed()


async def test_version_and_protocol_violations(server: MeepleServer) -> None:
    """Unsupported version NOK then QUIT/GOODBYE (§3.4); a command before HELLO gets GOODBYE."""
    p = await Raw.open(server)
    await p.line()
    p.send(b"HELLO 1.4.7,Temple OS,Holy-C,Hunter\r\n")
    assert (await p.line()).startswith(b"NOK Unsupported version!")
    p.send(b"QUIT\r\n")
    await p.expect(b"GOODBYE\r\n")
    await p.closed()
    q = await Raw.open(server)
    await q.line()
    q.send(b"READY\r\n")
    await q.expect(b"GOODBYE\r\n")
    await q.closed()


async def test_lobby_errors_byte_exact(server: MeepleServer) -> None:
    """Unknown command, moves before the game, HELLO twice, bad names: each its NOK."""
    p = await _joined(server, "Ann")
    for line, reply in [
        (b"FOOBAR\r\n", b"NOK unrecognized command\r\n"),
        (b"PLACE (A,7,7)\r\n", b"NOK the game has not started yet: send READY\r\n"),
        (b"PASS\r\n", b"NOK the game has not started yet: send READY\r\n"),
        (HELLO, b"NOK HELLO was already exchanged\r\n"),
        (
            b"USERSET 1abc\r\n",
            b"NOK invalid name: a name is a letter then letters or digits, "
            b"at most 32 characters\r\n",
        ),
        (b"READY now\r\n", b"NOK READY takes no arguments\r\n"),
        (b"x" * 9000 + b"\r\n", b"NOK line too long: at most 8192 bytes\r\n"),
    ]:
        p.send(line)
        await p.expect(reply)
    p.close()


async def test_lone_player_nul_padding_byte_by_byte_and_pass_twice(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """A lone player plays (§3.8) in NUL-padded 4096-byte buffers, byte by byte; PASS twice ends."""
    p = await Raw.open(server)
    await p.line()
    for line in (HELLO, b"USERSET Solo\r\n"):
        for byte in line.ljust(4096, b"\x00"):
            p.send(bytes([byte]))
        await p.writer.drain()
    await p.line()
    await p.expect(b"USERCHANGE 127.0.0.1 Solo\r\n")
    p.send(b"  READY\n".ljust(4096, b"\x00"))
    await p.expect(b"OK when everyone is ready the game will start\r\n")
    await p.expect(b"STARTING\r\n")
    await p.expect(b"SCORE 0 Solo\r\n")
    await p.board()
    rack = (await p.line())[6:-2].decode()
    await p.expect(b"TURN Solo\r\n")
    moves = ranked_moves(Board(), rack, gcide, CLARKSON)
    best = moves[0]
    cells = " ".join(f"({t.tile},{t.x},{t.y})" for t in best.tiles)
    p.send(f"PLACE {cells}\r\n".encode().ljust(4096, b"\x00"))
    await p.expect(b"OK Turn Successful\r\n")
    tiles = await p.line()
    assert len(tiles) == 6 + 7 + 2
    await p.expect(f"SCORE {best.score} Solo\r\n".encode())
    rows = await p.board()
    for t in best.tiles:
        assert rows[t.y].split(b" ")[t.x].startswith(f"({t.tile},".encode())
    await p.expect(b"TURN Solo\r\n")
    p.send(b"PASS\r\n")
    await p.expect(b"OK turn passed\r\n")
    await p.expect(tiles)
    await p.expect(f"SCORE {best.score} Solo\r\n".encode())
    await p.board()
    await p.expect(b"TURN Solo\r\n")
    p.send(b"PASS\r\n")
    await p.expect(b"OK turn passed\r\n")
    await p.expect(tiles)
    await p.expect(f"SCORE {best.score} Solo\r\n".encode())
    await p.board()
    await p.expect(f"SCORE {best.score} Solo\r\n".encode())
    await p.expect(f"WINNER {best.score} Solo\r\n".encode())
    p.send(b"QUIT\r\n")
    await p.expect(b"GOODBYE\r\n")
    await p.closed()


async def test_move_errors_then_exchange(server: MeepleServer, gcide: Lexicon) -> None:
    """Out of turn, off the centre, not in hand, not a word, gaps: NOK; EXCHANGE one tile works."""
    a = await _joined(server, "Ann")
    b = await _joined(server, "Bob", ("Ann",))
    await a.expect(b"USERJOIN 127.0.0.1\r\n")
    await a.expect(b"USERCHANGE 127.0.0.1 Bob\r\n")
    racks = await _start({"Ann": a, "Bob": b})
    rack = racks["Ann"]
    b.send(b"PLACE (A,7,7)\r\n")
    await b.expect(b"NOK cannot do that when it's not your turn\r\n")
    b.send(b"EXCHANGE\r\n")
    await b.expect(b"NOK cannot do that when it's not your turn\r\n")
    a.send(f"PLACE ({rack[0]},0,0) ({rack[1]},1,0)\r\n".encode())
    await a.expect(b"NOK the first word must cover the centre square (7,7)\r\n")
    absent = next(c for c in "QZXJKVWYBCFHMP" if c not in rack)
    a.send(f"PLACE ({absent},7,7) ({absent},8,7)\r\n".encode())
    assert (await a.line()).startswith(b"NOK tiles not in your hand")
    a.send(f"PLACE ({rack[0]},7,7) ({rack[1]},9,7)\r\n".encode())
    assert (await a.line()).startswith(b"NOK tiles must form one word")
    a.send(b"PLACE (A,15,7)\r\n")
    assert (await a.line()).startswith(b"NOK PLACE coordinates are numbers 0 to 14")
    nonword = next(
        x + y
        for i, x in enumerate(rack)
        for j, y in enumerate(rack)
        if i != j and x + y not in gcide
    )
    a.send(f"PLACE ({nonword[0]},7,7) ({nonword[1]},8,7)\r\n".encode())
    assert (await a.line()) == f"NOK word not in dictionary: {nonword}\r\n".encode()
    a.send(f"EXCHANGE {rack[0]}\r\n".encode())
    await a.expect(b"OK tiles exchanged\r\n")
    assert (await a.line()).startswith(b"TILES ")
    for peer in (a, b):
        await peer.expect(b"SCORE 0 Ann\r\n")
        await peer.board()
        await peer.expect(b"TURN Bob\r\n")
    await a.quiet()
    a.close()
    b.close()


async def test_quit_mid_game_the_others_play_on(server: MeepleServer) -> None:
    """ERRATA: a player quitting mid-game gets GOODBYE; the game goes on for the rest."""
    a = await _joined(server, "Ann")
    b = await _joined(server, "Bob", ("Ann",))
    await a.line()
    await a.line()
    await _start({"Ann": a, "Bob": b})
    a.send(b"QUIT\r\n")
    await a.expect(b"GOODBYE\r\n")
    await a.closed()
    await b.expect(b"TURN Bob\r\n")  # it was Ann's turn: it passes to Bob
    b.send(b"PASS\r\n")
    await b.expect(b"OK turn passed\r\n")
    assert (await b.line()).startswith(b"TILES ")
    await b.expect(b"SCORE 0 Bob\r\n")
    await b.board()
    await b.expect(b"TURN Bob\r\n")  # Ann's turns are skipped
    b.close()


async def test_three_bots_play_to_winner_matching_the_engine_replay(
    server: MeepleServer, gcide: Lexicon, replay_gcg: Callable[[str, TileSet], dict[str, int]]
) -> None:
    """Three bots run a game to WINNER; every bot saw the stored scores; a replay agrees."""
    port = server.ports["clarkson"]
    names = ("ann", "bob", "cyd")
    results = await asyncio.wait_for(
        asyncio.gather(*(play_clarkson("127.0.0.1", port, n, gcide, players=3) for n in names)),
        GAME_PATIENCE,
    )
    store: Store = server.services.store
    [record] = store.games()
    assert set(record.players) == set(names)
    assert record.protocols == ("clarkson",)
    for [result] in results:
        assert result.scores == record.result["scores"]
        assert result.refused == 0
    assert replay_gcg(record.record, CLARKSON) == record.result["scores"]
    best = max(record.result["scores"].values())
    assert record.result["winners"] == [n for n, s in record.result["scores"].items() if s == best]


async def test_two_bots_play_three_games_each_together(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """``--games 3 --players 2``: every game has both bots. The bot QUITs after WINNER
    (§3.17) and waits for the other at its next table; saying READY at once would have
    started a game alone (§3.8) and every game after the first was a solo one."""
    port = server.ports["clarkson"]
    results = await asyncio.wait_for(
        asyncio.gather(
            *(play_clarkson("127.0.0.1", port, n, gcide, players=2, games=3) for n in ("x", "y"))
        ),
        120,
    )
    store: Store = server.services.store
    records = store.games()
    assert len(records) == 3
    assert all(set(r.players) == {"x", "y"} for r in records)
    for bot in results:
        assert len(bot) == 3
        assert all(set(r.players) == {"x", "y"} and r.refused == 0 for r in bot)


async def test_client_library_plays_and_quits(server: MeepleServer) -> None:
    """ClarksonClient: connect with a name, READY alone, see the opening, QUIT → GOODBYE."""
    c = await ClarksonClient.connect("127.0.0.1", server.ports["clarkson"], "Lib")
    assert c.name == "Lib"
    assert c.server_hello is not None
    await c.ready()
    async for _message in c:
        if c.my_turn:
            break
    assert c.players == ["Lib"]
    assert len(c.rack) == 7
    assert c.scores == {"Lib": 0}
    await c.quit()
    last = None
    async for message in c:
        last = message
    assert last == Goodbye()
    await c.close()


def _garbage() -> st.SearchStrategy[bytes]:
    pieces = st.one_of(
        st.binary(max_size=64),
        st.sampled_from(
            [
                HELLO,
                b"PLACE (A,7,7)\r\n",
                b"READY\r\n",
                b"USERSET Ann\r\n",
                b"EXCHANGE\r\n",
                b"\x00" * 4096,
                b"\r\n",
                b"PASS\n",
                b"\xff\xfe\r\n",
            ]
        ),
    )
    return st.lists(pieces, max_size=12).map(b"".join)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=_garbage())
def test_garbage_never_disturbs_a_running_game(junk: bytes, gcide: Lexicon, tmp_path: Path) -> None:
    """Random bytes from a stranger get NOK or GOODBYE; the game next door plays on."""

    async def scenario() -> None:
        config = ServerConfig(database=":memory:").only("clarkson")
        config = config.with_overrides(listeners={"clarkson": config.listeners["clarkson"]})
        srv = MeepleServer(config, rng=random.Random(7))
        srv.services.lexicon = gcide
        await srv.start()
        try:
            a = await _joined(srv, "Ann")
            b = await _joined(srv, "Bob", ("Ann",))
            await a.line()
            await a.line()
            await _start({"Ann": a, "Bob": b})
            stranger = await Raw.open(srv)
            stranger.send(junk)
            await stranger.writer.drain()
            a.send(b"PASS\r\n")
            await a.expect(b"OK turn passed\r\n")
            assert (await a.line()).startswith(b"TILES ")
            for peer in (a, b):
                await peer.expect(b"SCORE 0 Ann\r\n")
                await peer.board()
                await peer.expect(b"TURN Bob\r\n")
            # The stranger heard only the protocol's own replies (and maybe a table's news).
            heard = b""
            try:
                while chunk := await asyncio.wait_for(stranger.reader.read(65536), 0.05):
                    heard += chunk
            except TimeoutError:
                pass
            allowed = (b"HELLO ", b"OK", b"NOK", b"GOODBYE", b"USER", b"STARTING", b"SCORE ")
            allowed += (b"BOARDPUSH", b"(", b"TILES ", b"TURN ", b"WINNER ", b"")
            for line in heard.split(b"\r\n"):
                assert line.startswith(allowed), line
            stranger.close()
            a.close()
            b.close()
        finally:
            await srv.stop()

    asyncio.run(scenario())


async def test_a_full_table_opens_the_next(server: MeepleServer) -> None:
    """A table holds 4; the 5th client sits alone at a new one and plays alone on READY."""
    names = ("Pa", "Pb", "Pc", "Pd")
    peers = []
    for i, name in enumerate(names):
        peer = await _joined(server, name, names[:i])
        for earlier in peers:
            await earlier.expect(b"USERJOIN 127.0.0.1\r\n")
            await earlier.expect(f"USERCHANGE 127.0.0.1 {name}\r\n".encode())
        peers.append(peer)
    fifth = await _joined(server, "Pe")  # told of nobody: a new table
    for peer in peers:
        await peer.quiet()
    fifth.send(b"READY\r\n")
    await fifth.expect(b"OK when everyone is ready the game will start\r\n")
    await fifth.expect(b"STARTING\r\n")
    await fifth.expect(b"SCORE 0 Pe\r\n")
    for peer in [*peers, fifth]:
        peer.close()


async def test_table_starts_when_the_unready_one_leaves(server: MeepleServer) -> None:
    """Ann READY waits for Bob; Bob leaving without READY lets Ann's game start."""
    a = await _joined(server, "Ann")
    b = await _joined(server, "Bob", ("Ann",))
    await a.line()
    await a.line()
    a.send(b"READY\r\n")
    await a.expect(b"OK when everyone is ready the game will start\r\n")
    a.send(b"READY\r\n")
    await a.expect(b"OK already ready: the game starts when everyone is ready\r\n")
    await a.quiet()
    b.send(b"QUIT\r\n")
    await b.expect(b"GOODBYE\r\n")
    await b.closed()
    await a.expect(b"STARTING\r\n")
    await a.expect(b"SCORE 0 Ann\r\n")
    a.close()


async def test_renaming_to_another_casing_keeps_the_name(server: MeepleServer) -> None:
    """USERSET to another casing of one's own name is one name to the registry (names
    compare by casefold): it stays taken, so another client asking for it gets NOK."""
    a = await _joined(server, "Ann")
    a.send(b"USERSET ANN\r\n")
    await a.expect(b"USERCHANGE Ann ANN\r\n")
    b = await _joined(server, "Bo", ("ANN",))
    await a.expect(b"USERJOIN 127.0.0.1\r\n")
    await a.expect(b"USERCHANGE 127.0.0.1 Bo\r\n")
    b.send(b"USERSET ann\r\n")
    await b.expect(b"NOK name already taken\r\n")
    for peer in (a, b):
        peer.send(b"QUIT\r\n")
        await peer.expect(b"GOODBYE\r\n")
        await peer.closed()

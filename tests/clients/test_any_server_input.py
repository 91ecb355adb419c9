"""Every client and bot survives whatever a server sends (issue 31, hypothesis).

Each protocol's client reads a game's valid opening, then a run of server messages
drawn from a corpus of real ones (many naming the bot itself), each kept as it is,
with a field replaced by random text, cut short, with a byte changed, or replaced by
random bytes; then the stream ends. After every message handed out the bot does what
it would do on it (choose and send a move). Nothing may raise but the client's own
"connection closed" at the end; what could not be taken is counted per kind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosedOK
from websockets.frames import Close

from meeple.games.scrabble.lexicon import Lexicon

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LEXICON = Lexicon.from_words(["CAT", "AT", "TA", "ACT", "CATS", "SAT", "TAD", "DOG", "GOD", "DO"])


class Sink:
    """A stand-in StreamWriter that keeps what is written (the server's side of it)."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        return None

    async def wait_closed(self) -> None:
        return None


def mutations(corpus: Sequence[bytes], sep: bytes, end: bytes) -> st.SearchStrategy[list[bytes]]:
    """Lists of server messages: corpus entries, as they are or mutated, and noise."""
    junk_text = st.one_of(
        st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.sampled_from([b"", b"-1", b"0", b"99999999999", b"IKUUIRISBAFYOE", b"!", b"null"]),
        st.binary(max_size=8),
    )

    @st.composite
    def one(draw: st.DrawFn) -> bytes:
        base = draw(st.sampled_from(corpus))
        body = base[: -len(end)] if end and base.endswith(end) else base
        kind = draw(st.sampled_from(["same", "field", "cut", "byte", "noise", "extra"]))
        if kind == "field":
            # A binary message (no separator) has its bytes for fields.
            fields = body.split(sep) if sep else [body[i : i + 1] for i in range(len(body))]
            i = draw(st.integers(0, max(0, len(fields) - 1)))
            fields[i : i + 1] = [draw(junk_text)]
            body = sep.join(fields)
        elif kind == "extra":
            body = body + sep + draw(junk_text)
        elif kind == "cut":
            body = body[: draw(st.integers(0, len(body)))]
        elif kind == "byte" and body:
            i = draw(st.integers(0, len(body) - 1))
            body = body[:i] + bytes([draw(st.integers(0, 255))]) + body[i + 1 :]
        elif kind == "noise":
            body = draw(st.binary(max_size=40))
        return body + end

    return st.lists(one(), max_size=25)


# --- Twente --------------------------------------------------------------------------------


def _tw(*fields: str) -> bytes:
    return "\x1f".join(fields).encode() + b"\x1e"


TWENTE = [
    _tw("STARTGAME", "bot", "rival"),
    _tw("NEWTILES", "CATSDOG"),
    _tw("NEWTILES", "QVJ!"),
    _tw("NOTIFYTURN", "1", "bot"),
    _tw("NOTIFYTURN", "0", "rival"),
    _tw("INFORMMOVE", "bot", "WORD", "H8", "H", "CAT"),
    _tw("INFORMMOVE", "rival", "WORD", "H7", "V", "DOG"),
    _tw("INFORMMOVE", "bot", "SWAP", "3"),
    _tw("INFORMMOVE", "bot", "SWAP", "IKUUIRI"),
    _tw("INFORMMOVE", "rival", "SWAP", "0"),
    _tw("ERROR", "E006"),
    _tw("ERROR", "E016", "Move not allowed"),
    _tw("GAMEOVER", "WIN", "bot", "10", "rival", "5"),
    _tw("PLAYERDISCONNECTED", "rival"),
    _tw("INFORMQUEUE", "1", "2"),
    _tw("NOTIFYCHAT", "rival", "hi"),
    _tw("WELCOME", "bot"),
]


@SETTINGS
@example(  # the swap announced with letters (issue 31)
    messages=[_tw("NEWTILES", "QVJ!"), _tw("INFORMMOVE", "bot", "SWAP", "IKUUIRI")]
)
@given(messages=mutations(TWENTE, b"\x1f", b"\x1e"))
def test_twente_bot_survives_any_server(messages: list[bytes]) -> None:
    """The Twente client and bot take any server messages without raising."""
    drive_twente(messages)


def drive_twente(messages: list[bytes]) -> bytes:
    """Play the opening and ``messages`` to the client and bot; what the bot wrote."""
    from meeple.clients.scrabble_bot import _move
    from meeple.clients.twente import TwenteClient, TwenteClientError
    from meeple.protocols.twente.messages import Announce, Welcome

    async def run() -> bytes:
        reader = asyncio.StreamReader()
        client = TwenteClient(reader, sink := Sink())  # type: ignore[arg-type]
        client.name = "bot"
        await client._send(Announce("bot"))
        reader.feed_data(_tw("WELCOME", "bot"))
        assert isinstance(await client.receive(), Welcome)
        await client.request_game(2)
        opening = _tw("STARTGAME", "bot", "rival") + _tw("NEWTILES", "CATSDOG")
        reader.feed_data(opening + _tw("NOTIFYTURN", "1", "bot") + b"".join(messages))
        reader.feed_eof()
        try:
            while True:
                await client.receive()
                if client.move_due:
                    await _move(client, LEXICON, client.session.refusals)
        except TwenteClientError:
            return sink.data

    return asyncio.run(run())


# --- Clarkson ------------------------------------------------------------------------------


def _board_push() -> bytes:
    from meeple.games.scrabble.board import Board
    from meeple.protocols.clarkson.messages import BoardPush

    board = Board()
    for x, letter in enumerate("CAT", start=6):
        board.place(x, 7, letter)
    return BoardPush.from_board(board).encode()


CLARKSON = [
    b"OK fine\r\n",
    b"NOK not your turn\r\n",
    b"USERJOIN rival\r\n",
    b"USERCHANGE 127.0.0.2 rival\r\n",
    b"STARTING\r\n",
    b"SCORE 0 bot\r\n",
    b"SCORE 12 rival\r\n",
    _board_push(),
    b"TILES CATSDOG\r\n",
    b"TILES CATSDOGCATSDOG\r\n",
    b"TURN bot\r\n",
    b"TURN rival\r\n",
    b"WINNER 12 rival\r\n",
    b"HELLO 1.0.1,Linux,Go,someone\r\n",
    b"\x00" * 40 + b"TURN bot\r\n",
    b"GOODBYE\r\n",
]


@SETTINGS
@example(messages=[b"TURN bot\r\n", b"WINNER 12 rival\r\n"])  # a move into the end
@given(messages=mutations(CLARKSON, b" ", b"\r\n"))
def test_clarkson_bot_survives_any_server(messages: list[bytes]) -> None:
    """The Clarkson client and bot take any server lines without raising."""
    drive_clarkson(messages)


def drive_clarkson(messages: list[bytes]) -> bytes:
    """Play the opening and ``messages`` to the client and bot; what the bot wrote."""
    from meeple.clients.clarkson import ClarksonClient, _play_one
    from meeple.protocols.clarkson.messages import UserSet, meeple_hello

    async def run() -> bytes:
        reader = asyncio.StreamReader()
        rest = b"OK ready\r\nSTARTING\r\nSCORE 0 bot\r\nSCORE 0 rival\r\n"
        rest += b"TILES CATSDOG\r\nTURN rival\r\n" + b"".join(messages)

        class Table(Sink):
            """The server's side: the game starts once the bot says READY."""

            started = False

            def write(self, data: bytes) -> None:
                super().write(data)
                if data.startswith(b"READY") and not self.started:
                    self.started = True
                    reader.feed_data(rest)
                    reader.feed_eof()

        client = ClarksonClient(reader, sink := Table())  # type: ignore[arg-type]
        reader.feed_data(b"HELLO 1.0.1,Linux,Go,someone\r\n")
        await client.receive()
        await client._send(meeple_hello("test"))
        reader.feed_data(b"OK send a name\r\n")
        await client.receive()
        await client._send(UserSet("bot"))
        reader.feed_data(b"USERCHANGE 127.0.0.1 bot\r\nUSERJOIN rival\r\n")
        while await _play_one(client, LEXICON, 2) is not None:
            pass  # the next game, as long as the server's lines go on
        return sink.data

    return asyncio.run(run())


# --- Santorini (AM27) ----------------------------------------------------------------------


def _am27_corpus() -> list[bytes]:
    from meeple.protocols.santorini.messages import (
        Cell,
        CellState,
        EndGame,
        God,
        GodList,
        Info,
        Ping,
        Players,
        ServerState,
        Update,
    )

    m, f = Cell(2, 2), Cell(0, 0)
    board = (
        (m, CellState((2, 1, 0), "bot", "M")),
        (f, CellState((0,), "bot", "F")),
        (Cell(2, 3), CellState((3, 2, 1, 0))),
        (Cell(4, 4), CellState((0,), "rival", "M")),
        (Cell(4, 0), CellState((4, 0))),
    )
    messages = [
        ServerState(open=True, active=False),
        GodList("bot", (God("Apollo"), God("Athena"), God("Pan"))),
        GodList("rival", (God("Apollo"),)),
        Players("bot", (("bot", "Apollo"), ("rival", "Athena"))),
        Players("rival", (("bot", "Atheist"), ("rival", "Atheist"))),
        Update("bot", (), can_place_worker=True),
        Update("bot", board, ((m, (Cell(2, 3), Cell(1, 1))), (f, (Cell(0, 1),)))),
        Update("bot", board, buildable=((m, ((Cell(1, 1), (1, 4)),)),), can_pass=True),
        Update("bot", board),
        Update("rival", board),
        Info("bot", "WAIT"),
        Info("bot", "NICKNAME"),
        EndGame("rival", True),
        EndGame("bot", None),
        Ping("ping"),
    ]
    # JSON lines (the client reads the group's Java object stream too).
    return [message.encode().encode() + b"\n" for message in messages]


AM27 = _am27_corpus()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 30) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def am27_mutated(draw: st.DrawFn) -> bytes:
    """A corpus message with one value of its inner message replaced by any JSON."""
    line = draw(st.sampled_from(AM27))
    try:
        envelope = json.loads(line)
        inner = json.loads(envelope["message"])
    except (ValueError, KeyError, TypeError):
        return line
    if isinstance(inner, dict) and inner:
        key = draw(st.sampled_from(sorted(inner)))
        inner[key] = draw(json_values)
    envelope["message"] = json.dumps(inner)
    return json.dumps(envelope).encode() + b"\n"


@SETTINGS
@given(messages=st.lists(am27_mutated() | mutations(AM27, b",", b"\n").map(b"".join), max_size=20))
def test_santorini_bot_survives_any_server(messages: list[bytes]) -> None:
    """The AM27 client and the bot's players take any server messages without raising."""
    drive_santorini(messages)


def drive_santorini(messages: list[bytes]) -> bytes:
    """Play the opening and ``messages`` to the client and bot; what the bot wrote."""
    import random

    from meeple.clients.santorini import (
        SantoriniClient,
        SantoriniClientError,
        SearchPlayer,
        choose,
    )
    from meeple.protocols.santorini.messages import Update

    async def run() -> bytes:
        reader = asyncio.StreamReader()
        client = SantoriniClient(reader, sink := Sink())  # type: ignore[arg-type]
        reader.feed_data(AM27[0])
        await client.receive()
        await client.register("bot", 2, True)
        reader.feed_data(AM27[4] + b"".join(messages))  # PLAYERSMESSAGE: the game is on
        reader.feed_eof()
        rng = random.Random(1)
        search = SearchPlayer()
        try:
            while True:
                message = await client.receive()
                if isinstance(message, Update) and client.my_turn(message):
                    for player in (search, choose):
                        command = player(client, message, rng)
                        if command is not None:
                            await client.send_if_allowed(command)
        except SantoriniClientError:
            return sink.data

    return asyncio.run(run())


# --- Spectrangle ---------------------------------------------------------------------------

SPECTRANGLE = [
    b"start with bot zed\n",
    b"order bot zed\n",
    b"tiles bot RRR6 GGG6 BBB6 YYY6 zed BBB6 PPP6 YYG5 GRP1 turn bot\n",
    b"tiles bot RRR6 GGG6 BBB6 YYY6 zed BBB6 PPP6 YYG5 GRP1 turn zed\n",
    b"tiles bot RRR6 zed BBB6 turn bot skip\n",
    b"move bot RRR6 10 6\n",
    b"move zed BBB6 1 6\n",
    b"move zed BBB6 99 6\n",
    b"skip bot\n",
    b"skip zed\n",
    b"replace bot RRR6 with GGG6\n",
    b"replace zed BBB6 with PPP6\n",
    b"game finished leaderboard bot 6 zed 0\n",
    b"player zed left\n",
    b"invalidMove\n",
    b"invalidCommand\n",
    b"chat zed hello there\n",
    b"welcome chat\n",
]


@SETTINGS
@example(messages=[SPECTRANGLE[3], b"move zed BBB6 99 6\n"])  # a field that is not there
@given(messages=mutations(SPECTRANGLE, b" ", b"\n"))
def test_spectrangle_bot_survives_any_server(messages: list[bytes]) -> None:
    """The Spectrangle client and bot take any server lines without raising."""
    drive_spectrangle(messages)


def drive_spectrangle(messages: list[bytes]) -> bytes:
    """Play the opening and ``messages`` to the client and bot; what the bot wrote."""
    from meeple.clients.spectrangle import SpectrangleClient, SpectrangleClientError, take_turn
    from meeple.protocols.spectrangle import Connect, ErrorReply, Request

    async def run() -> bytes:
        reader = asyncio.StreamReader()
        client = SpectrangleClient(reader, sink := Sink())  # type: ignore[arg-type]
        await client._send(Connect("bot", ("chat",)))
        reader.feed_data(b"welcome chat\n")
        await client.receive()
        client.name = "bot"
        await client._send(Request(2))
        reader.feed_data(b"".join(SPECTRANGLE[:3]) + b"".join(messages))
        reader.feed_eof()
        refusals = 0
        try:
            while True:
                message = await client.receive()
                refusals = refusals + 1 if isinstance(message, ErrorReply) else 0
                if client.my_turn and not client._pending:
                    await take_turn(client, refusals, exchange=True)
        except SpectrangleClientError:
            return sink.data

    return asyncio.run(run())


def test_the_openings_reach_the_bots() -> None:
    """Without noise each opening gives the bot its turn and it moves (the fuzz above
    is not vacuous)."""
    assert b"MAKEMOVE" in drive_twente([])
    assert any(w in drive_clarkson([b"TURN bot\r\n"]) for w in (b"PLACE", b"PASS", b"EXCHANGE"))
    assert b"MOVE" in drive_santorini([AM27[6]])
    assert any(w in drive_spectrangle([]) for w in (b"place", b"skip", b"exchange"))
    assert len(drive_cmpn402([])) == 2  # NAME, then the first move


# --- CMPN402 -------------------------------------------------------------------------------


def _cmpn402_corpus() -> list[bytes]:
    from meeple.protocols.cmpn402.messages import (
        ChallengeAccepted,
        ChallengeAcceptedTimes,
        ChallengeRejected,
        ChallengeRejectedTiles,
        EndMessage,
        EndReason,
        ExchangeNotice,
        ExchangeTiles,
        Invalid,
        NameRequest,
        NoChallengeTiles,
        NoChallengeTimes,
        PassNotice,
        PlayNotice,
        Start,
    )

    empty = tuple("." * 15 for _ in range(15))
    return [
        m.encode()
        for m in (
            NameRequest(),
            Start(1, "CATSDOG", empty, 0, 0, 600_000, 1_200_000),
            Start(2, "CATSDOG", empty, 0, 0, 600_000, 1_200_000),
            PassNotice(500_000, 1_100_000),
            ExchangeTiles("QVJ"),
            ExchangeNotice(3, 500_000, 1_100_000),
            PlayNotice(8, 8, 0, "DOG", 10, 10_000, 500_000, 1_100_000),
            PlayNotice(15, 15, 1, "CATS", 10, 10_000, 500_000, 1_100_000),
            NoChallengeTiles("EEE"),
            NoChallengeTimes(500_000, 1_100_000),
            ChallengeAccepted(),
            ChallengeAcceptedTimes(500_000, 1_100_000),
            ChallengeRejected(),
            ChallengeRejectedTiles("AB", 500_000, 1_100_000),
            Invalid(500_000, 1_100_000),
            EndMessage(EndReason.CONNECTION_ERROR, 0, 0),
        )
    ]


CMPN402 = _cmpn402_corpus()


class FakeSocket:
    """A stand-in WebSocket: the messages it yields, then a clean close; sends are kept."""

    def __init__(self, messages: list[bytes]) -> None:
        self.messages = messages
        self.sent: list[bytes] = []

    def __aiter__(self) -> Any:
        return self._iterate()

    async def _iterate(self) -> Any:
        for m in self.messages:
            yield m

    async def recv(self) -> bytes:
        if not self.messages:
            raise ConnectionClosedOK(Close(1000, ""), Close(1000, ""), True)
        return self.messages.pop(0)

    async def send(self, data: bytes) -> None:
        self.sent.append(data)


@SETTINGS
@example(messages=[CMPN402[8], CMPN402[6]])  # a play over our own tile
@given(messages=mutations(CMPN402, b"", b""))
def test_cmpn402_agent_survives_any_server(messages: list[bytes]) -> None:
    """The CMPN402 client and the built-in agent take any referee messages without raising."""
    drive_cmpn402(messages)


def drive_cmpn402(messages: list[bytes]) -> list[bytes]:
    """Play the opening and ``messages`` to the client and agent; what the agent sent."""
    from meeple.clients.cmpn402 import BuiltinAgent, GameResult, _Runner

    async def run() -> list[bytes]:
        ws = FakeSocket([CMPN402[0], CMPN402[1], *messages])
        results: list[GameResult] = []
        await _Runner(ws, "bot", BuiltinAgent(LEXICON)).run(99, results)  # type: ignore[arg-type]
        return ws.sent

    return asyncio.run(run())

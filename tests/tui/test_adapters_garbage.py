"""The connections under the apps survive whatever a server sends (hypothesis).

Bytes go through an in-memory StreamReader (WebSocket messages through a stand-in
socket) into each adapter exactly as a socket's would; after any garbage, a valid
line still comes out as its event and the end of the stream as ConnectionLost, never
an exception.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.clients.spectrangle import SpectrangleClient
from meeple.clients.twente import TwenteClient
from meeple.protocols.cmpn402.messages import Name, NameRequest, Start
from meeple.protocols.cmpn402.session import ClientSession as Cmpn402Session
from meeple.protocols.spectrangle.messages import CHAT_EXTENSION, Connect, Request, Welcome
from meeple.protocols.twente.messages import Announce, Flag
from meeple.tui.scrabble.cmpn402 import Cmpn402Scrabble
from meeple.tui.scrabble.events import ChatReceived as ScrabbleChat
from meeple.tui.scrabble.events import ConnectionLost as ScrabbleLost
from meeple.tui.scrabble.events import Started
from meeple.tui.scrabble.twente import TwenteScrabble
from meeple.tui.spectrangle.adapter import SpectrangleConnection
from meeple.tui.spectrangle.events import ChatReceived, ConnectionLost


class Sink:
    """A stand-in StreamWriter that keeps what is written."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        return None

    async def wait_closed(self) -> None:
        return None


async def _events(connection: Any) -> list[object]:
    return [e async for e in connection.events()]


garbage = st.binary(max_size=300).filter(lambda b: b"\n" not in b[-1:])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noise=garbage)
def test_spectrangle_stream_survives_garbage(noise: bytes) -> None:
    """Random bytes, then a chat line and EOF: the chat arrives, then ConnectionLost."""

    async def run() -> list[object]:
        reader = asyncio.StreamReader()
        client = SpectrangleClient(reader, Sink())  # type: ignore[arg-type]
        client.session.send(Connect("ann", (CHAT_EXTENSION,)))
        client.session.receive_data(Welcome((CHAT_EXTENSION,)).encode())
        client.session.send(Request(2))
        client.name, client.extensions = "ann", frozenset({CHAT_EXTENSION})
        reader.feed_data(noise + b"\nchat bob still here\n")
        reader.feed_eof()
        return await _events(SpectrangleConnection(client))

    events = asyncio.run(run())
    assert ChatReceived("bob", "still here") in events
    assert isinstance(events[-1], ConnectionLost)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noise=st.binary(max_size=300))
def test_twente_adapter_survives_garbage(noise: bytes) -> None:
    """Random bytes, then NOTIFYCHAT and EOF: the chat arrives, then ConnectionLost."""

    async def run() -> list[object]:
        reader = asyncio.StreamReader()
        client = TwenteClient(reader, Sink())  # type: ignore[arg-type]
        client.session.send(Announce("ann", frozenset({Flag.CHAT})))
        client.session.receive_data(b"WELCOME\x1fann\x1fCHAT\x1e")
        client.name = "ann"
        reader.feed_data(noise + b"\x1e" + b"NOTIFYCHAT\x1fbob\x1fstill here\x1e")
        reader.feed_eof()
        return await _events(TwenteScrabble(client))

    events = asyncio.run(run())
    assert isinstance(events[-1], ScrabbleLost)
    assert ScrabbleChat("bob", "still here") in events


class FakeSocket:
    """A stand-in WebSocket: the messages it yields, then a clean close; sends are kept."""

    def __init__(self, messages: list[bytes | str]) -> None:
        self.messages = messages
        self.sent: list[bytes] = []

    def __aiter__(self) -> Any:
        return self._iterate()

    async def _iterate(self) -> Any:
        for m in self.messages:
            yield m

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def close(self) -> None:
        return None


START = Start(2, "AEINRST", tuple("." * 15 for _ in range(15)), 0, 0, 600_000, 1_200_000)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    noise=st.lists(
        st.one_of(
            st.binary(max_size=40).filter(lambda b: b[:1] != b"\x01"),  # no START in the noise
            st.text(max_size=10),
        ),
        max_size=8,
    )
)
def test_cmpn402_adapter_survives_garbage(noise: list[bytes | str]) -> None:
    """Random messages, then a START and the end: the game starts, then ConnectionLost."""

    async def run() -> tuple[list[object], FakeSocket]:
        ws = FakeSocket([*noise, START.encode()])
        session = Cmpn402Session()
        session.receive(NameRequest().encode())
        session.send(Name("ann"))
        adapter = Cmpn402Scrabble(ws, "ann", session)  # type: ignore[arg-type]
        return await _events(adapter), ws

    events, ws = asyncio.run(run())
    assert (
        Started(("opponent", "ann"), board=START.board, scores=(("ann", 0), ("opponent", 0)))
        in events
    )
    assert isinstance(events[-1], ScrabbleLost)
    assert all(data == Name("ann").encode() for data in ws.sent)  # only NAME, when asked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noise=st.binary(max_size=300))
def test_clarkson_adapter_survives_garbage(noise: bytes) -> None:
    """Random bytes, then a TURN line and EOF: the turn arrives, then ConnectionLost."""
    from meeple.clients.clarkson import ClarksonClient
    from meeple.protocols.clarkson.session import State as ClarksonState
    from meeple.tui.scrabble.clarkson import ClarksonScrabble
    from meeple.tui.scrabble.events import TurnChanged

    async def run() -> list[object]:
        reader = asyncio.StreamReader()
        client = ClarksonClient(reader, Sink())  # type: ignore[arg-type]
        client.name = client.session.name = "ann"
        client.session.state = ClarksonState.GAME  # in a game, as after STARTING
        reader.feed_data(noise + b"\r\nTURN bob\r\n")
        reader.feed_eof()
        connection = ClarksonScrabble(client, players=2)
        connection._ready = True  # no READY written to the sink mid-test
        return await _events(connection)

    events = asyncio.run(run())
    assert isinstance(events[-1], ScrabbleLost)
    assert TurnChanged("bob", False) in events


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(noise=st.binary(max_size=300))
def test_am27_adapter_survives_garbage(noise: bytes) -> None:
    """Random bytes (either framing's decoder) then EOF: no exception, ConnectionLost last."""
    from meeple.clients.santorini import SantoriniClient
    from meeple.tui.santorini.am27 import Am27Connection
    from meeple.tui.santorini.events import ConnectionLost as SantoriniLost

    async def run() -> list[object]:
        reader = asyncio.StreamReader()
        client = SantoriniClient(reader, Sink())  # type: ignore[arg-type]
        reader.feed_data(noise)
        reader.feed_eof()
        return await _events(Am27Connection(client, "ann"))

    events = asyncio.run(run())
    assert isinstance(events[-1], SantoriniLost)

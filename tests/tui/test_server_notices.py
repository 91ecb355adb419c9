"""The terminal clients say on their status line what the bots say in their log (issue 31):
a server message they cannot take (once per kind), and a wait on an answer that does not
come, with what they do then. Real sockets on 127.0.0.1:0; waits in virtual time."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.clients.peers import serve
from tests.patience import PATIENCE

from meeple.clients.clarkson import ClarksonClient
from meeple.clients.twente import TwenteClient
from meeple.clients.watch import Patience
from meeple.protocols.clarkson.messages import Ok, UserChange, meeple_hello
from meeple.server.clock import VirtualClock
from meeple.tui.connection import ServerNotice
from meeple.tui.scrabble.clarkson import ClarksonScrabble
from meeple.tui.scrabble.events import ConnectionLost, ScrabbleEvent
from meeple.tui.scrabble.twente import TwenteScrabble


async def test_clarkson_ready_never_answered_on_the_status_line() -> None:
    """A server that takes READY and says nothing: the app is told it waits (10 s, 20 s,
    40 s), then that the client gives up, and the connection ends with that reason."""
    clock = VirtualClock()
    readied = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(meeple_hello("test").encode())
        await reader.readline()
        writer.write(Ok("send a username").encode())
        await reader.readline()
        writer.write(UserChange("127.0.0.1", "ann").encode())
        assert (await reader.readline()).startswith(b"READY")
        readied.set()
        while await reader.readline():
            pass

    events: list[ScrabbleEvent] = []
    async with serve(silent) as port:
        client = await ClarksonClient.connect(
            "127.0.0.1", port, "ann", patience=Patience(10, 60, clock)
        )
        connection = ClarksonScrabble(client, players=1)

        async def collect() -> None:
            async for event in connection.events():
                events.append(event)

        reading = asyncio.create_task(collect())
        await asyncio.wait_for(readied.wait(), PATIENCE)
        await clock.advance(10)
        assert events[-1] == ServerNotice(
            "waiting 10 s for OK to our READY; no answer yet, waiting until 60 s, then giving up"
        )
        await clock.advance(50)
        await asyncio.wait_for(reading, PATIENCE)
        await connection.close()
    notices = [e.text for e in events if isinstance(e, ServerNotice)]
    assert [n.split(";")[0] for n in notices] == [
        "waiting 10 s for OK to our READY",
        "waiting 20 s for OK to our READY",
        "waiting 40 s for OK to our READY",
        "waited 60 s for OK to our READY",
    ]
    assert events[-1] == ConnectionLost("waited 60 s for OK to our READY; no answer: giving up")


async def test_twente_unreadable_messages_once_per_kind() -> None:
    """Three INFORMMOVEs the client cannot read and one unknown command: two notices
    on the status line (one per kind, with the bytes), and the game goes on."""
    bad = b"INFORMMOVE\x1frival\x1fJUMP\x1f3\x1e"

    async def odd(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\x1e")  # ANNOUNCE
        writer.write(b"WELCOME\x1fann\x1e")
        await reader.readuntil(b"\x1e")  # REQUESTGAME
        writer.write(b"STARTGAME\x1fann\x1frival\x1eNEWTILES\x1fCATSDOG\x1e")
        writer.write(bad * 3 + b"SHOUT\x1fhello\x1e")
        writer.write(b"NOTIFYTURN\x1f0\x1frival\x1e")

    async with serve(odd) as port:
        client = await TwenteClient.connect("127.0.0.1", port, "ann")
        await client.request_game(2)
        connection = TwenteScrabble(client)
        events = [e async for e in connection.events()]
        await connection.close()
    notices = [e.text for e in events if isinstance(e, ServerNotice)]
    assert len(notices) == 2, notices
    assert "move type is WORD or SWAP" in notices[0]
    assert repr(bad)[2:30] in notices[0]
    assert "SHOUT" in notices[1]
    assert client.unreadable.total == 4
    assert isinstance(events[-1], ConnectionLost)


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


async def test_cmpn402_unreadable_referee_messages_once_per_kind() -> None:
    """Two messages of a type the spec lacks and a text message: two notices, then the
    game starts as usual."""
    from meeple.protocols.cmpn402.messages import Name, NameRequest, Start
    from meeple.protocols.cmpn402.session import ClientSession
    from meeple.tui.scrabble.cmpn402 import Cmpn402Scrabble
    from meeple.tui.scrabble.events import Started

    start = Start(2, "AEINRST", tuple("." * 15 for _ in range(15)), 0, 0, 600_000, 1_200_000)
    session = ClientSession()
    session.receive(NameRequest().encode())
    session.send(Name("ann"))
    ws = FakeSocket([b"\x63\x01", b"\x63\x02", "hello", start.encode()])
    connection = Cmpn402Scrabble(ws, "ann", session)  # type: ignore[arg-type]
    events = [e async for e in connection.events()]
    notices = [e.text for e in events if isinstance(e, ServerNotice)]
    assert len(notices) == 2, notices
    assert "b'c\\x01'" in notices[0]
    assert "text message" in notices[1]
    assert any(isinstance(e, Started) for e in events)

"""clients/connection.py: the stream plumbing every TCP client shares, once: reads within
patience, one note per kind of unreadable message, iteration ended by the client's own
error or a last message, and close."""

from __future__ import annotations

import asyncio
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.clients.clarkson import ClarksonClient
from meeple.clients.connection import ClientConnection, SessionClient
from meeple.clients.santorini import SantoriniClient
from meeple.clients.spectrangle import SpectrangleClient
from meeple.clients.twente import TwenteClient
from meeple.clients.watch import Expected, NoAnswer

logger = logging.getLogger("test.connection")


class _Ended(Exception):
    pass


class _Lines(ClientConnection[str]):
    """A client of no protocol: one message per line, ``BYE`` is the last, ``?`` lines
    cannot be taken."""

    ERROR = _Ended
    LOGGER = logger

    def _setup(self) -> None:
        self._held = b""
        self.name = self.unreadable.who = "lines"

    @property
    def expected(self) -> Expected | None:
        return Expected("a line")

    async def receive(self) -> str:
        while b"\n" not in self._held:
            data = await self._read()
            if not data:
                raise _Ended
            self._held += data
        line, _, self._held = self._held.partition(b"\n")
        if line.startswith(b"?"):
            self._note("question", "not a statement", line)
            return await self.receive()
        return line.decode()

    def _ends_stream(self, message: str) -> bool:
        return message == "BYE"

    def _who(self) -> str:
        return self.name


async def _client_of(payload: bytes) -> tuple[_Lines, asyncio.Server]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(payload)
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return _Lines(reader, writer), server


def test_every_tcp_client_is_one_connection() -> None:
    """Twente, Clarkson, Spectrangle and AM27 clients share ClientConnection."""
    for client in (TwenteClient, ClarksonClient, SpectrangleClient, SantoriniClient):
        assert issubclass(client, ClientConnection)


def test_the_session_clients_read_with_one_loop() -> None:
    """Twente, Clarkson and AM27 clients hand out messages with SessionClient's receive
    (Spectrangle reads line by line for the state after each message)."""
    for client in (TwenteClient, ClarksonClient, SantoriniClient):
        assert issubclass(client, SessionClient)
        assert client.receive is SessionClient.receive


async def test_iteration_stops_at_the_end_of_the_stream_and_notes_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Lines are handed out in order; unreadable ones are noted once per kind (with the
    client's name) and skipped; the stream's end ends the iteration, not an error."""
    client, server = await _client_of(b"one\n?a\n?b\ntwo\n")
    try:
        with caplog.at_level(logging.WARNING, logger="test.connection"):
            assert [m async for m in client] == ["one", "two"]
        assert client.unreadable.total == 2
        assert [r.getMessage()[:40] for r in caplog.records] == [
            "lines: cannot take the server's question"
        ]
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


@given(lines=st.lists(st.sampled_from(["x", "y", "BYE"]), max_size=8))
@settings(max_examples=20, deadline=None)
async def test_a_last_message_ends_the_iteration(lines: list[str]) -> None:
    """Whatever follows a last message (``_ends_stream``) is not handed out."""
    client, server = await _client_of(b"".join(line.encode() + b"\n" for line in lines))
    try:
        got = [m async for m in client]
    finally:
        await client.close()
        server.close()
        await server.wait_closed()
    upto = lines.index("BYE") + 1 if "BYE" in lines else len(lines)
    assert got == lines[:upto]


async def test_an_opening_gone_wrong_closes_the_connection() -> None:
    """No answer to the hello is the client's own error; any other failure is raised as it
    is; either way the connection is closed (no socket left behind)."""
    for raised, expected in ((NoAnswer("waited 120 s"), _Ended), (ValueError("bad"), ValueError)):
        client, server = await _client_of(b"")
        try:
            with pytest.raises(expected):
                async with client._opening():
                    raise raised
            assert client._writer.is_closing()
        finally:
            await client.close()
            server.close()
            await server.wait_closed()

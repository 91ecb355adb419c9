"""The TCP runtime over real loopback sockets: handlers, idle time-outs, shutdown, failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from tests.patience import PATIENCE

from meeple.server.clock import VirtualClock
from meeple.server.config import LimitsConfig
from meeple.server.edge.tcp import Connection, TcpListener


class LineEcho:
    """A test handler: greets, echoes each line upper-cased, fails on 'boom', QUIT closes."""

    def __init__(self, conn: Connection, lost: list[str]) -> None:
        self.conn = conn
        self.lost = lost
        self.buffer = b""

    def connection_made(self) -> None:
        self.conn.send(b"HELLO\n")

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line == b"boom":
                raise RuntimeError("handler bug")
            if line == b"QUIT":
                self.conn.send(b"BYE\n")
                self.conn.close("quit")
                return
            self.conn.send(line.upper() + b"\n")

    def connection_lost(self, reason: str) -> None:
        self.lost.append(reason)

    def farewell(self) -> bytes | None:
        return b"SHUTDOWN\n"


@pytest.fixture
def lost() -> list[str]:
    return []


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
async def listener(lost: list[str], clock: VirtualClock) -> AsyncIterator[TcpListener]:
    lis = TcpListener(
        "echo", "127.0.0.1", 0, lambda c: LineEcho(c, lost), clock=clock, idle_timeout=30
    )
    await lis.start()
    yield lis
    await lis.close(grace=1)


async def _open(lis: TcpListener) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", lis.port)
    assert await reader.readline() == b"HELLO\n"
    return reader, writer


async def _wait_for(predicate: object, timeout: float = 2.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():  # type: ignore[operator]
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def test_handler_sees_bytes_in_any_chunking(listener: TcpListener) -> None:
    """Bytes reach the handler however they are split; replies come back in order."""
    reader, writer = await _open(listener)
    for b in b"ab\ncd":
        writer.write(bytes([b]))
        await writer.drain()
    writer.write(b"\nef\n")
    assert [await reader.readline() for _ in range(3)] == [b"AB\n", b"CD\n", b"EF\n"]
    writer.close()


async def test_handler_may_close_and_hears_why(listener: TcpListener, lost: list[str]) -> None:
    """A handler closing the connection flushes its last bytes, and connection_lost follows."""
    reader, writer = await _open(listener)
    writer.write(b"QUIT\n")
    assert await reader.readline() == b"BYE\n"
    assert await reader.read() == b""
    await _wait_for(lambda: lost == ["quit"])
    writer.close()


async def test_peer_closing_is_reported(listener: TcpListener, lost: list[str]) -> None:
    """A peer that goes away frees its handler."""
    _, writer = await _open(listener)
    writer.close()
    await _wait_for(lambda: lost == ["closed by peer"])
    assert listener.connections == []


async def test_handler_bug_costs_one_connection_only(
    listener: TcpListener, lost: list[str]
) -> None:
    """An exception in a handler closes that connection; others and the listener go on."""
    r1, w1 = await _open(listener)
    r2, w2 = await _open(listener)
    w1.write(b"boom\n")
    assert await r1.read() == b""
    w2.write(b"still here\n")
    assert await r2.readline() == b"STILL HERE\n"
    r3, w3 = await _open(listener)
    w3.write(b"x\n")
    assert await r3.readline() == b"X\n"
    assert "internal error" in lost
    for w in (w1, w2, w3):
        w.close()


async def test_idle_connection_is_closed_on_the_injected_clock(
    listener: TcpListener, clock: VirtualClock, lost: list[str]
) -> None:
    """No bytes for idle_timeout (virtual) seconds closes the connection; activity resets it."""
    reader, writer = await _open(listener)
    await clock.advance(20)
    writer.write(b"ping\n")
    assert await reader.readline() == b"PING\n"
    await clock.advance(20)  # 20 s since the last byte: still open
    assert listener.connections
    await clock.advance(15)
    assert await reader.read() == b""
    await _wait_for(lambda: lost == ["idle timeout"])
    writer.close()


async def test_shutdown_sends_farewell_and_closes(lost: list[str], clock: VirtualClock) -> None:
    """Closing the listener tells each connected peer and stops accepting new ones."""
    lis = TcpListener("echo", "127.0.0.1", 0, lambda c: LineEcho(c, lost), clock=clock)
    await lis.start()
    port = lis.port
    reader, writer = await _open(lis)
    await lis.close(grace=1)
    assert await reader.read() == b"SHUTDOWN\n"
    assert lost == ["server shutting down"]
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)
    writer.close()


async def test_a_burst_of_connections_is_greeted_whole(
    lost: list[str], clock: VirtualClock
) -> None:
    """600 clients connect at once and each hears the server speak first. (asyncio's
    default backlog of 100 drops handshakes in such a burst; a client that waits for
    the server's greeting, as Clarkson's do, then hangs for ever.)"""
    lis = TcpListener(
        "echo",
        "127.0.0.1",
        0,
        lambda c: LineEcho(c, lost),
        clock=clock,
        limits=LimitsConfig(max_connections_per_address=0),
    )
    await lis.start()

    async def one() -> tuple[bytes, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection("127.0.0.1", lis.port)
        return await asyncio.wait_for(reader.readline(), PATIENCE), writer

    results = await asyncio.gather(*(one() for _ in range(600)))
    try:
        assert [line for line, _ in results] == [b"HELLO\n"] * 600
    finally:
        for _, writer in results:
            writer.close()
        await lis.close(grace=1)

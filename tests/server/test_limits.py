"""Connection limits on every listener: connections per address and the slowloris timer,
over real loopback sockets (TCP on the virtual clock; CMPN402 through ``websockets``)."""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.patience import PATIENCE, eventually
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import (
    Cmpn402Config,
    ConfigError,
    LimitsConfig,
    SantoriniConfig,
    ServerConfig,
    config_from_mapping,
)
from meeple.server.edge.limits import AddressLimiter, PartialMessageWatch
from meeple.server.edge.tcp import TcpListener

TIMEOUT = 5.0  # partial_message_timeout in these tests (virtual seconds for TCP)

# One unfinished message per TCP protocol: a command with its terminator missing.
PARTIAL = {
    "twente": b"ANNOUNCE\x1fann",
    "clarkson": b"HELLO 1.0.1,Linux,Python,test",
    "santorini": b'{"type":"REGISTER","message":"{\\"nickname\\":',
    "spectrangle": b"connect an",
}
# And one whole message each: the stream is back on a boundary.
WHOLE = {
    "twente": b"ANNOUNCE\x1fann\x1e",
    "clarkson": b"HELLO 1.0.1,Linux,Python,test\r\n",
    "santorini": b'{"type":"PING","message":"{\\"message\\":\\"ping\\"}"}\n',
    "spectrangle": b"connect ann\n",
}


def test_address_limiter_counts_per_address() -> None:
    """acquire takes a slot up to the limit, per address; release gives it back; 0: none."""
    limiter = AddressLimiter(2)
    assert limiter.acquire("a")
    assert limiter.acquire("a")
    assert not limiter.acquire("a")
    assert limiter.acquire("b")
    limiter.release("a")
    assert limiter.count("a") == 1
    assert limiter.acquire("a")
    unlimited = AddressLimiter(0)
    assert all(unlimited.acquire("a") for _ in range(1000))


async def test_partial_watch_fires_only_on_an_unfinished_message() -> None:
    """The timer runs while the stream is inside a message, stops at a boundary, and
    fires after ``timeout`` seconds however many bytes trickle in meanwhile."""
    clock = VirtualClock()
    fired: list[float] = []
    watch = PartialMessageWatch(clock, 10, fired.append)
    watch.update(3)
    await clock.advance(6)
    watch.update(0)  # the message ended
    await clock.advance(20)
    assert fired == []
    watch.update(1)
    for _ in range(9):
        await clock.advance(1)
        watch.update(2)  # a byte a second, never the end
    assert fired == []
    await clock.advance(1)
    assert fired == [10]


def test_limits_config_from_toml_table() -> None:
    """[limits] sets both keys; wrong types, unknown keys and bad values are errors."""
    config = config_from_mapping(
        {"limits": {"max_connections_per_address": 3, "partial_message_timeout": 2.5}}
    )
    assert config.limits == LimitsConfig(3, 2.5)
    assert ServerConfig().limits == LimitsConfig(64, 30.0)
    for bad in (
        {"max_connections_per_address": -1},
        {"partial_message_timeout": 0},
        {"max_connections_per_address": "64"},
        {"max_connections": 3},
    ):
        with pytest.raises(ConfigError):
            config_from_mapping({"limits": bad})


def _config(tmp_path: Path, *names: str, limit: int = 2) -> ServerConfig:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only(*names)
    # AM27's own heartbeat (5 s of silence) would drop both peers first.
    santorini = SantoriniConfig(heartbeat_timeout=600)
    return config.with_overrides(limits=LimitsConfig(limit, TIMEOUT), santorini=santorini)


@pytest.fixture
async def tcp_server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """The four TCP listeners, two connections per address, on the virtual clock."""
    names = ("twente", "clarkson", "santorini", "spectrangle")
    srv = MeepleServer(_config(tmp_path, *names), clock=VirtualClock(), rng=random.Random(1))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


async def _closed(reader: asyncio.StreamReader, wait: float = 1.0) -> bool:
    """True when the server closes the stream within ``wait`` seconds of real time."""
    try:
        while await asyncio.wait_for(reader.read(65536), wait):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


async def _settled(server: MeepleServer, name: str, count: int) -> None:
    listener = server.listeners[name]
    await eventually(
        lambda: len(listener.connections) == count,  # type: ignore[attr-defined]
        f"{name}: {count} connections",
        every=0.005,
    )


@pytest.mark.parametrize("name", ["twente", "clarkson", "santorini", "spectrangle"])
async def test_tcp_listener_limits_connections_per_address(
    tcp_server: MeepleServer, name: str
) -> None:
    """Two connections from 127.0.0.1 are served; a third is closed at once; once one
    leaves, a new one is served again."""
    port = tcp_server.ports[name]
    first = await asyncio.open_connection("127.0.0.1", port)
    second = await asyncio.open_connection("127.0.0.1", port)
    await _settled(tcp_server, name, 2)
    third_reader, third_writer = await asyncio.open_connection("127.0.0.1", port)
    assert await _closed(third_reader)
    third_writer.close()
    first[1].close()
    await _settled(tcp_server, name, 1)
    fourth_reader, fourth_writer = await asyncio.open_connection("127.0.0.1", port)
    await _settled(tcp_server, name, 2)
    assert not await _closed(fourth_reader, 0.3)
    for writer in (second[1], fourth_writer):
        writer.close()


@pytest.mark.parametrize("name", ["twente", "clarkson", "santorini", "spectrangle"])
async def test_tcp_listener_drops_a_slowloris(tcp_server: MeepleServer, name: str) -> None:
    """A peer that trickles an unfinished message is dropped after partial_message_timeout
    (virtual) seconds, though it sends bytes all along; a peer that ended its message is
    not, after the same time."""
    clock = tcp_server.services.clock
    assert isinstance(clock, VirtualClock)
    port = tcp_server.ports[name]
    slow_reader, slow_writer = await asyncio.open_connection("127.0.0.1", port)
    good_reader, good_writer = await asyncio.open_connection("127.0.0.1", port)
    await _settled(tcp_server, name, 2)
    data = PARTIAL[name]
    slow_writer.write(data[:3])
    good_writer.write(WHOLE[name])
    await slow_writer.drain()
    await good_writer.drain()
    await asyncio.sleep(0.05)
    for byte in data[3 : 3 + int(TIMEOUT) - 1]:
        await clock.advance(1)
        slow_writer.write(bytes([byte]))
        await slow_writer.drain()
        await asyncio.sleep(0.01)
    await _settled(tcp_server, name, 2)  # still unfinished after 4 s
    await clock.advance(1.5)
    assert await _closed(slow_reader)
    await _settled(tcp_server, name, 1)
    assert not await _closed(good_reader, 0.3)
    slow_writer.close()
    good_writer.close()


async def test_slowloris_inside_an_oversized_line_is_dropped_too(
    tcp_server: MeepleServer,
) -> None:
    """Past the size limit the framer drops bytes, yet the line is still unfinished: the
    timer keeps running and the peer is dropped."""
    clock = tcp_server.services.clock
    assert isinstance(clock, VirtualClock)
    reader, writer = await asyncio.open_connection("127.0.0.1", tcp_server.ports["spectrangle"])
    writer.write(b"x" * 20_000)  # over the 8 KiB line limit: answered, then skipped
    await writer.drain()
    await asyncio.sleep(0.05)
    await clock.advance(TIMEOUT + 0.5)
    assert await _closed(reader)
    writer.close()


async def test_listener_without_partial_bytes_is_not_timed() -> None:
    """A handler that cannot tell its unfinished message gets no slowloris timer."""

    class Sink:
        def connection_made(self) -> None: ...
        def data_received(self, data: bytes) -> None: ...
        def connection_lost(self, reason: str) -> None: ...
        def farewell(self) -> bytes | None:
            return None

    clock = VirtualClock()
    lis = TcpListener("sink", "127.0.0.1", 0, lambda c: Sink(), clock=clock)
    await lis.start()
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", lis.port)
        writer.write(b"half")
        await writer.drain()
        await asyncio.sleep(0.05)
        await clock.advance(60)
        assert len(lis.connections) == 1
        assert lis.connections[0].partial is None
        writer.close()
    finally:
        await lis.close(grace=1)


# --- CMPN402 over websockets (real time: websockets runs its own timers) -----------------


@pytest.fixture
async def ws_server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    config = _config(tmp_path, "cmpn402").with_overrides(
        limits=LimitsConfig(2, 0.5),
        cmpn402=Cmpn402Config(admin_token="t", ping_interval=0.2),
    )
    srv = MeepleServer(config, rng=random.Random(1))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


async def test_websocket_listener_limits_connections_per_address(ws_server: MeepleServer) -> None:
    """Two WebSocket connections from one address; the third handshake gets HTTP 503."""
    url = f"ws://127.0.0.1:{ws_server.ports['cmpn402']}/"
    async with connect(url) as a, connect(url) as b:
        with pytest.raises(InvalidStatus) as refused:
            await connect(url, open_timeout=2)
        assert refused.value.response.status_code == 503
        assert a.state.name == b.state.name == "OPEN"
    async with connect(url, open_timeout=2) as c:  # slots given back
        assert c.state.name == "OPEN"


def _raw_socket(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(3)
    return sock


def _until_closed(sock: socket.socket) -> bool:
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


async def test_websocket_slowloris_handshake_and_frame_are_dropped(
    ws_server: MeepleServer,
) -> None:
    """An unfinished HTTP handshake is dropped after partial_message_timeout; after the
    handshake an unfinished frame holds back the pong and the keepalive drops it."""
    port = ws_server.ports["cmpn402"]
    half_handshake = await asyncio.to_thread(_raw_socket, port)
    half_handshake.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
    assert await asyncio.to_thread(_until_closed, half_handshake)
    half_handshake.close()

    async with connect(f"ws://127.0.0.1:{port}/") as ws:
        transport = ws.transport
        transport.write(b"\x82\x85\x00\x00\x00\x00\x01")  # a masked binary frame, 1 of 5 bytes
        await asyncio.wait_for(ws.wait_closed(), PATIENCE)

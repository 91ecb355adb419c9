"""An in-memory connection to a server's TCP listener: bytes in, bytes out, no socket.

:func:`open_memory` hands a listener (:class:`meeple.server.edge.tcp.TcpListener`) a
transport of our own, as h11 and wsproto test their state machines: the listener runs
its real per-connection code (limits, framing, the dialect, the room), only the kernel
is gone. What the server writes is fed to an :class:`asyncio.StreamReader`; what the
test writes goes to the listener in the same turn of the loop. So a protocol test that
is not about sockets needs no port, no accept and no kernel buffers, and runs on a
:class:`~meeple.server.clock.VirtualClock` as well as on the real one.

Tests about sockets themselves (limits per address, floods, slow readers, half-closed
connections) stay on loopback (tests/server/test_limits.py, test_hostile.py, test_tcp.py).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from meeple.server.edge import tcp

__all__ = ["MemoryTransport", "MemoryWriter", "open_memory"]

# The server's reads are capped at this many bytes a call, like a socket's recv.
CHUNK = 65536
_ports = itertools.count(40000)


class MemoryTransport(asyncio.Transport):
    """The server's side of an in-memory connection: what it writes goes to ``peer``."""

    def __init__(self, peer: asyncio.StreamReader, peername: tuple[str, int]) -> None:
        super().__init__()
        self._peer = peer
        self._peername = peername
        self._closing = False
        self._reading = True
        self._pending = bytearray()  # written by the test while the server paused reading
        self.protocol: asyncio.Protocol | None = None

    # -- the server's calls --------------------------------------------------------------
    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": self._peername, "sockname": ("127.0.0.1", 0)}.get(name, default)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._peer.feed_data(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """What was written is already with the peer; then its EOF, then connection_lost."""
        self._shut(None)

    def abort(self) -> None:
        self._shut(None)

    def pause_reading(self) -> None:
        self._reading = False

    def resume_reading(self) -> None:
        self._reading = True
        asyncio.get_running_loop().call_soon(self._deliver)

    def is_reading(self) -> bool:
        return self._reading

    # -- the test's calls ----------------------------------------------------------------
    def receive(self, data: bytes) -> None:
        """Bytes from the test to the server (in CHUNK pieces, while it reads)."""
        if self._closing:
            raise ConnectionResetError("the server closed the connection")
        self._pending += data
        self._deliver()

    def receive_eof(self) -> None:
        keep_open = self._closing or self.protocol is None or self.protocol.eof_received()
        if not keep_open:
            self._shut(None)

    def _deliver(self) -> None:
        while self._pending and self._reading and not self._closing and self.protocol:
            chunk = bytes(self._pending[:CHUNK])
            del self._pending[:CHUNK]
            self.protocol.data_received(chunk)

    def _shut(self, exc: Exception | None) -> None:
        if self._closing:
            return
        self._closing = True
        self._peer.feed_eof()
        if self.protocol is not None:
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, exc)


class MemoryWriter:
    """The test's side, shaped like :class:`asyncio.StreamWriter` (write, drain, close)."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    def write(self, data: bytes) -> None:
        self.transport.receive(data)

    def write_eof(self) -> None:
        self.transport.receive_eof()

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        self.transport.abort()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    async def wait_closed(self) -> None:
        await asyncio.sleep(0)


async def open_memory(
    listener: object, host: str = "127.0.0.1"
) -> tuple[asyncio.StreamReader, MemoryWriter]:
    """Like ``asyncio.open_connection`` to ``listener``, in memory; ``host`` is the
    address the server sees (each connection gets a port of its own)."""
    assert isinstance(listener, tcp.TcpListener), listener
    reader = asyncio.StreamReader(limit=2**20)
    transport = MemoryTransport(reader, (host, next(_ports)))
    link = tcp._Link(listener)
    transport.protocol = link
    link.connection_made(transport)
    await asyncio.sleep(0)  # the greeting, if the protocol has one, is queued this turn
    return reader, MemoryWriter(transport)

"""The server lifecycle: listeners by name, start, ports, graceful stop."""

from __future__ import annotations

import asyncio

import pytest
from tests.patience import PATIENCE

from meeple.server.app import MeepleServer, Services
from meeple.server.config import ListenerConfig, ServerConfig
from meeple.server.edge.tcp import Connection, TcpListener


class Greeter:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def connection_made(self) -> None:
        self.conn.send(b"hi\n")

    def data_received(self, data: bytes) -> None:
        pass

    def connection_lost(self, reason: str) -> None:
        pass

    def farewell(self) -> bytes | None:
        return b"bye\n"


def create_greeter(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    return TcpListener(name, services.config.host, config.port, Greeter, clock=services.clock)


REGISTRY = {"twente": f"{__name__}:create_greeter"}


def _config() -> ServerConfig:
    # In memory: not the repo's var/meeple.sqlite3 (the default), which another test
    # process may be serving at the same time.
    return ServerConfig(database=":memory:").only("twente")


async def test_starts_registered_listeners_only() -> None:
    """Enabled listeners with an implementation start; the others are skipped."""
    server = MeepleServer(_config(), listeners=REGISTRY)
    await server.start()
    try:
        assert set(server.ports) == {"twente"}
        reader, writer = await asyncio.open_connection("127.0.0.1", server.ports["twente"])
        assert await reader.readline() == b"hi\n"
    finally:
        await server.stop()
    assert await reader.read() == b"bye\n"
    writer.close()


async def test_serve_forever_stops_gracefully_on_request() -> None:
    """request_stop (what SIGINT/SIGTERM call) ends serve_forever after closing listeners."""
    server = MeepleServer(_config(), listeners=REGISTRY)
    await server.start()
    task = asyncio.create_task(server.serve_forever())
    await asyncio.sleep(0)
    server.request_stop()
    await asyncio.wait_for(task, PATIENCE)
    assert server.listeners == {}


async def test_port_in_use_is_reported_with_the_listener_name() -> None:
    """Failing to bind names the listener and address, and leaves nothing running."""
    first = MeepleServer(_config(), listeners=REGISTRY)
    await first.start()
    try:
        taken = _config().with_port("twente", first.ports["twente"])
        second = MeepleServer(taken, listeners=REGISTRY)
        with pytest.raises(OSError, match="twente: cannot listen"):
            await second.start()
        assert second.listeners == {}
    finally:
        await first.stop()


def test_services_build_shared_resources_once() -> None:
    """A resource is built on first use and shared after that."""
    services = Services(ServerConfig())
    built: list[int] = []
    a = services.resource("x", lambda: built.append(1) or object())
    b = services.resource("x", lambda: built.append(2) or object())
    assert a is b
    assert built == [1]


async def test_a_stop_requested_during_start_up_is_a_clean_stop() -> None:
    """serve_forever(start=True): a signal while listeners start still closes them all."""
    server = MeepleServer(_config(), listeners=REGISTRY)
    server.request_stop()  # as if SIGTERM came while the lexicon was loading
    await asyncio.wait_for(server.serve_forever(start=True), PATIENCE)
    assert server.listeners == {}

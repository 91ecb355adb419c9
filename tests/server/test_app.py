"""The server lifecycle: listeners by name, start, ports, graceful stop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.patience import PATIENCE

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer, Services
from meeple.server.config import ListenerConfig, ServerConfig
from meeple.server.edge.attempts import admin_attempts
from meeple.server.edge.churn import server_churn
from meeple.server.edge.tcp import Connection, TcpListener
from meeple.server.ops import server_readiness
from meeple.server.rooms import scrabble as scrabble_room
from meeple.server.store.database import DatabaseClaim, open_store
from meeple.server.store.journal import server_journal, server_store


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


def test_services_build_each_shared_object_once_into_its_typed_field() -> None:
    """Issue 32.1: what listeners share is a typed field of ``Services``, filled by its
    accessor on first use and the same object after that (no string-keyed lookup)."""
    services = Services(ServerConfig(database=":memory:"))
    assert services.churn is None
    assert services.readiness is None
    churn = server_churn(services)
    assert services.churn is churn
    assert server_churn(services) is churn
    readiness = server_readiness(services)
    assert services.readiness is readiness
    assert server_readiness(services) is readiness
    limiter = admin_attempts(services)
    assert services.admin_attempts is limiter
    assert admin_attempts(services) is limiter
    store = server_store(services)
    assert services.store is store
    assert server_store(services) is store
    services.close()


def test_a_lexicon_put_in_first_is_the_one_every_scrabble_table_checks_with(
    gcide: Lexicon,
) -> None:
    """A test, the check kits or a node that loaded the word list already puts it in
    ``Services.lexicon``; the tables' accessor keeps it rather than loading the config's."""
    services = Services(ServerConfig(lexicon="no-such-word-list"))
    services.lexicon = gcide
    assert scrabble_room.table_lexicon(services) is gcide
    assert scrabble_room.lexicon_of(services, None) is gcide


async def test_closing_the_services_writes_the_journal_before_the_store_closes(
    tmp_path: Path,
) -> None:
    """``Services.close``: the journal writes what it holds, then the store closes, then
    the database claim goes (a second claim on the database succeeds)."""
    database = str(tmp_path / "db.sqlite3")
    services = Services(ServerConfig(database=database))
    services.database_claim = DatabaseClaim(database)
    journal = server_journal(services)
    journal.open("g1", "santorini", {"players": ["ann", "bob"]})  # not awaited: held
    assert services.close() == []
    claim = DatabaseClaim(database)  # DatabaseInUse while the first claim is held
    claim.close()
    again = open_store(database)
    try:
        assert again.open_logs() == ["g1"]
    finally:
        again.close()


async def test_a_stop_requested_during_start_up_is_a_clean_stop() -> None:
    """serve_forever(start=True): a signal while listeners start still closes them all."""
    server = MeepleServer(_config(), listeners=REGISTRY)
    server.request_stop()  # as if SIGTERM came while the lexicon was loading
    await asyncio.wait_for(server.serve_forever(start=True), PATIENCE)
    assert server.listeners == {}

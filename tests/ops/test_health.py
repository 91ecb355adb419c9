"""Health and draining (issue 35): /healthz and /readyz, the TCP health port, readiness
that follows a frozen PostgreSQL, and a SIGTERM that drains before it stops."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.ops.conftest import Raw, http_get, make_server, ops_port, play_out, two_players
from tests.patience import GAME_PATIENCE, PATIENCE, eventually
from tests.pg import own_postgres, postmaster_family, signal_all
from tests.services import close_services

from meeple.server.app import MeepleServer, Services
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store
from meeple.server.store.pgembed import EmbeddedPostgres
from meeple.web.app import create_app


async def health_line(server: MeepleServer) -> bytes | None:
    """What the TCP health port says to one connection (it reads nothing); None: the
    connection is refused (the port is closed while not ready)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", ops_port(server, "health"))
    except ConnectionRefusedError:
        return None
    line = await asyncio.wait_for(reader.read(-1), PATIENCE)
    writer.close()
    return line


async def until_health(server: MeepleServer, expected: bytes | None) -> None:
    """Ask the health port until it answers ``expected`` (None: refuses)."""
    said: list[bytes | None] = []

    async def answered() -> bool:
        said.append(await health_line(server))
        return said[-1] == expected

    await eventually(answered, f"the health port saying {expected!r}", every=0.05)


async def until_status(port: int, path: str, status: int) -> str:
    answers: list[tuple[int, str]] = []

    async def answered() -> bool:
        answers.append(await http_get(port, path))
        return answers[-1][0] == status

    await eventually(answered, f"{path} answering {status}", every=0.05)
    return answers[-1][1]


@pytest.fixture
def postgres() -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL of this test's own: the session's one is never frozen."""
    with own_postgres() as server:
        yield server


async def test_readiness_follows_a_frozen_postgresql(
    tmp_path: Path, postgres: EmbeddedPostgres
) -> None:
    """Ready on a live PostgreSQL; its processes SIGSTOPped: /readyz 503 naming the
    store, the health port refusing connections (a plain TCP check sees it down);
    SIGCONT: ready again, the health port open and saying ok. /healthz stays 200."""
    url = postgres.create_database("ready")
    server = make_server(tmp_path, health_port=0, database=url)
    await server.start()
    assert postgres.pid is not None
    frozen = postmaster_family(postgres.pid)
    port = ops_port(server)
    try:
        assert await until_status(port, "/readyz", 200) == "ready\n"
        await until_health(server, b"ok\n")
        signal_all(frozen, signal.SIGSTOP)
        body = await until_status(port, "/readyz", 503)
        assert "store: no answer" in body
        await until_health(server, None)
        assert await http_get(port, "/healthz") == (200, "ok\n")
        signal_all(frozen, signal.SIGCONT)
        assert await until_status(port, "/readyz", 200) == "ready\n"
        await until_health(server, b"ok\n")
    finally:
        signal_all(frozen, signal.SIGCONT)
        await server.stop()


async def test_a_draining_server_refuses_new_tables_and_lets_the_game_finish(
    tmp_path: Path, known_deal: list[list[str]]
) -> None:
    """SIGTERM with a game on: not ready at once, a new request is refused in the
    protocol's words, the game is played to its end, then the server stops by itself
    and the finished game is stored as finished."""
    server = make_server(tmp_path, health_port=0, drain_timeout=600)
    await server.start()
    peers = await two_players(server)
    serving = asyncio.ensure_future(server.serve_forever())
    port = ops_port(server)
    try:
        await until_status(port, "/readyz", 200)
        os.kill(os.getpid(), signal.SIGTERM)  # the handler serve_forever installed
        assert "draining" in await until_status(port, "/readyz", 503)
        await until_health(server, None)
        late = await Raw.connect(server, "late")
        late.send("request 2")
        assert await late.next() == "invalidCommand"
        late.close()
        await play_out(dict(zip(("p1", "p2"), peers, strict=True)), known_deal[0])
        await asyncio.wait_for(serving, GAME_PATIENCE)  # stopped once its game was over
    finally:
        for peer in peers:
            peer.close()
        if not serving.done():
            serving.cancel()
            await server.stop()
    store = Store(tmp_path / "meeple.sqlite3")
    try:
        [record] = store.games(game="spectrangle")
        assert record.end_reason == "finished"
    finally:
        store.close()


async def test_a_second_signal_stops_a_drain_at_once(
    tmp_path: Path, known_deal: list[list[str]]
) -> None:
    """A second SIGTERM while draining: the server stops without waiting for the game."""
    server = make_server(tmp_path, drain_timeout=600)
    await server.start()
    peers = await two_players(server)
    serving = asyncio.ensure_future(server.serve_forever())
    try:
        await asyncio.sleep(0)
        server.request_stop()
        await until_status(ops_port(server), "/readyz", 503)
        server.request_stop()
        await asyncio.wait_for(serving, GAME_PATIENCE)  # far less than the 600 s drain
    finally:
        for peer in peers:
            peer.close()
        if not serving.done():
            serving.cancel()
            await server.stop()


async def test_the_web_port_answers_probes_whatever_the_host(tmp_path: Path) -> None:
    """/metrics, /healthz, /readyz on the web port answer a scraper that names the
    machine by any address; the pages still refuse an unknown Host (issue 30.7)."""
    services = Services(ServerConfig(database=str(tmp_path / "w.sqlite3")))
    transport = httpx.ASGITransport(app=create_app(services))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://10.1.2.3:8000") as c:
            assert (await c.get("/healthz")).text == "ok\n"
            metrics = await c.get("/metrics")
            assert metrics.status_code == 200
            assert "meeple_rooms_running" in metrics.text
            assert (await c.get("/readyz")).status_code == 503  # no listener started here
            assert (await c.get("/")).status_code == 400
    finally:
        await close_services(services)  # the store's writer thread ends

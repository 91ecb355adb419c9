"""A PostgreSQL that stops answering mid-game (its processes frozen with SIGSTOP, as a
hung server or a network gone quiet looks to meeple): the game goes on from memory, the
lobby says so, and everything is written once PostgreSQL answers again
(docs/durability.md, Faults)."""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import Iterator

import httpx
import pytest
from tests.pg import own_postgres, postmaster_family, signal_all
from tests.serve import assert_stored_as_logged

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.lobby.tables import server_lobby
from meeple.server.store.journal import Health, server_journal, server_store
from meeple.server.store.pgembed import EmbeddedPostgres

pytestmark = pytest.mark.slow


@pytest.fixture
def postgres() -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL of this test's own: the session's one is never frozen."""
    with own_postgres() as server:
        yield server


async def _until(predicate: object, timeout: float = 30) -> None:
    for _ in range(int(timeout / 0.05)):
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def test_a_postgresql_that_stops_answering_costs_no_game(
    postgres: EmbeddedPostgres, gcide: Lexicon
) -> None:
    """PostgreSQL frozen before a Twente game: the players play it to its end (the first
    write waits its timeout, then the room goes on), the lobby shows the banner; pages
    that read the store wait in a worker thread, not on the event loop, so the game
    goes on meanwhile and the lobby page comes with the live tables and no recent games;
    thawed: the log and the finished game are written, once, and the banner goes."""
    url = postgres.create_database("outage")
    config = (
        ServerConfig(database=url).only("twente", "web").with_port("twente", 0).with_port("web", 0)
    )
    server = MeepleServer(config, rng=random.Random(11))
    server.services.lexicon = gcide
    await server.start()
    assert postgres.pid is not None
    frozen = postmaster_family(postgres.pid)
    try:
        journal = server_journal(server.services)
        journal.write_timeout = 0.5
        lobby = server_lobby(server.services)
        signal_all(frozen, signal.SIGSTOP)
        port = server.ports["twente"]
        web = httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.ports['web']}", timeout=30)
        async with web:
            # Both wait on the frozen database (the pool's timeout) while the game is played.
            pages = asyncio.gather(web.get("/"), web.get("/ratings"))
            results = await asyncio.wait_for(
                asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide) for n in ("ann", "bob"))),
                90,
            )
            assert all(r[0].reason == "WIN" for r in results)
            assert journal.health is Health.RETRYING
            assert "not taking writes" in (lobby.snapshot()["store"] or "")
            lobby_page, ratings_page = await pages
        assert lobby_page.status_code == 200
        assert "not taking writes" in lobby_page.text
        assert ratings_page.status_code == 503  # its read got no answer: said so, not a hang
        assert "not answering" in ratings_page.text
        signal_all(frozen, signal.SIGCONT)
        await _until(lambda: journal.health is Health.OK)
        assert lobby.snapshot()["store"] is None
        store = server_store(server.services)
        assert_stored_as_logged(store, dict(results[0][0].scores), gcide)
    finally:
        signal_all(frozen, signal.SIGCONT)
        await server.stop()

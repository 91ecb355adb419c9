"""What a one-process node serves is what ``meeple serve`` serves (issue 32.2, step 1):
the same listeners from the same ``ServerConfig``, the same pages and operations paths on
the web port, the same wire greetings. Each test runs against both, selected by name
(STYLE rule 10): ``serve`` (:class:`~meeple.server.app.MeepleServer`) and ``node`` (a
:class:`~meeple.node.node.Node` with every role over the local backplane)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import websockets
from tests.patience import PATIENCE, eventually

from meeple.clients.clarkson import ClarksonClient
from meeple.clients.spectrangle import SpectrangleClient
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node.node import Node, serve_config
from meeple.protocols.web import PROTOCOL
from meeple.server.app import LISTENERS, MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.store.database import DatabaseInUse

pytestmark = pytest.mark.slow

# Every page and path meeple serve's web port answers 200 without a game or an account.
PAGES = (
    "/",
    "/play",
    "/check",
    "/games",
    "/ratings",
    "/account",
    "/api/cluster",
    "/healthz",
    "/readyz",
    "/metrics",
    "/static/meeple.css",
)


@dataclass
class Running:
    """A server of either kind: its ports by listener name."""

    kind: str
    ports: dict[str, int]


def _config(tmp_path: Path) -> ServerConfig:
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"), lexicon="gcide")
    for name in config.listeners:
        config = config.with_port(name, 0)
    return config


@asynccontextmanager
async def _started(kind: str, tmp_path: Path, gcide: Lexicon) -> AsyncIterator[Running]:
    """``meeple serve``'s runtime of that kind on the files in ``tmp_path``."""
    config = _config(tmp_path)
    if kind == "serve":
        server = MeepleServer(config)
        server.services.lexicon = gcide
        try:
            await server.start()
            yield Running("serve", server.ports)
        finally:
            await server.stop()
        return
    node = Node(serve_config(config))
    try:
        await node.start()
        yield Running("node", {name: lst.port for name, lst in node.listeners.items()})
    finally:
        await node.stop()


@pytest.fixture(params=["serve", "node"])
async def running(
    request: pytest.FixtureRequest, tmp_path: Path, gcide: Lexicon
) -> AsyncIterator[Running]:
    async with _started(request.param, tmp_path, gcide) as started:
        yield started


async def test_the_same_listeners_as_meeple_serve(running: Running) -> None:
    """Every listener ``meeple serve`` runs is open, the web on a port of its own."""
    assert sorted(running.ports) == sorted(LISTENERS)
    assert all(port > 0 for port in running.ports.values())


async def test_the_same_pages_on_the_web_port(running: Running) -> None:
    """The lobby, play, the guide, the games, ratings, accounts, the cluster API and the
    operations paths (/healthz, /readyz, /metrics) answer 200 on the web port."""
    base = f"http://127.0.0.1:{running.ports['web']}"
    async with httpx.AsyncClient(base_url=base, timeout=PATIENCE) as client:
        for path in PAGES:
            response = await client.get(path)
            assert response.status_code == 200, (running.kind, path, response.status_code)


async def test_the_browser_protocol_and_the_lobby_topic(running: Running) -> None:
    """/ws: hello, welcome, then the lobby topic's snapshot."""
    url = f"ws://127.0.0.1:{running.ports['web']}/ws"
    async with websockets.connect(url, open_timeout=PATIENCE) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "subscribe", "topic": "lobby"}))
        while True:
            message = json.loads(await ws.recv())
            if message["type"] != "ack":
                break
        assert message["type"] == "lobby", message
        assert message["data"]["tables"] == []


async def test_wire_greetings(running: Running) -> None:
    """A Clarkson and a Spectrangle client are welcomed under their names."""
    clarkson = await ClarksonClient.connect("127.0.0.1", running.ports["clarkson"], "ann")
    try:
        assert clarkson.name == "ann"
    finally:
        await clarkson.close()
    spectrangle = await SpectrangleClient.connect("127.0.0.1", running.ports["spectrangle"], "bob")
    await spectrangle.close()


async def test_a_second_one_on_the_same_database_is_refused(
    running: Running, tmp_path: Path, gcide: Lexicon
) -> None:
    """One process per database: a second start on the same files is refused before it
    reads a log (it would take the first one's games over while they are played)."""
    with pytest.raises(DatabaseInUse):
        async with _started(running.kind, tmp_path, gcide):
            pass  # pragma: no cover - refused at the start


async def test_games_left_open_by_the_old_runtime_are_named_at_the_start(
    tmp_path: Path, gcide: Lexicon, caplog: pytest.LogCaptureFixture
) -> None:
    """A database whose ``room_logs`` hold a log ``--runtime server`` left open that the
    upgrade cannot move (its genesis is no room's: docs/server.md, "Upgrading"): the
    node's start names it and the runtime that finishes it, rather than leaving it
    unsaid."""
    from meeple.server.store.database import Store

    config = _config(tmp_path)
    store = Store(config.database)
    try:
        store.open_log("old-1", "scrabble", {"seed": 1})
    finally:
        store.close()
    with caplog.at_level("WARNING", logger="meeple.node.node"):
        async with _started("node", tmp_path, gcide):
            pass
    [line] = [r.getMessage() for r in caplog.records if "left open" in r.getMessage()]
    assert "old-1" in line
    assert "--runtime server" in line


async def test_names_are_checked_against_the_accounts_at_once(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """On the one-process node a name at HELLO is checked against the reserved names in
    memory, as ``meeple serve``'s (issue 32.2 item 2), not by an ask of the store role,
    which a thousand players' HELLOs at once queued behind a loaded event loop until
    each timed out and refused its name. With the store role's account answers gone,
    an account's name is still refused and any other given."""
    from meeple.clients.clarkson import NameRefused
    from meeple.server.store.database import Store

    config = _config(tmp_path)
    store = Store(config.database)
    try:
        assert store.add_account("Carol", b"h" * 32, b"s" * 16, "scrypt")
    finally:
        store.close()
    node = Node(serve_config(config))
    try:
        await node.start()
        assert node.store is not None
        await node.store.accounts.stop()  # no ask of the store would be answered now
        port = node.listeners["clarkson"].port
        ann = await ClarksonClient.connect("127.0.0.1", port, "ann")
        await ann.close()
        with pytest.raises(NameRefused):
            await ClarksonClient.connect("127.0.0.1", port, "carol")
    finally:
        await node.stop()


async def test_a_late_heartbeat_drops_no_seat_of_its_own_edge(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """In one process the edge cannot fall silent to its own rooms and lobby (issue 32.2
    item 2): under 1,000 games the loaded event loop heard its own heartbeat late and
    the rooms role made every seat leave ("edge serve is silent"). Here the heartbeat
    stops outright for several edge silences (``edge_silence`` of the config: 0.3 s):
    the seated players are still in their game and play on."""
    from meeple.server.config import ClusterConfig

    config = _config(tmp_path).with_overrides(
        cluster=ClusterConfig(heartbeat=0.1, edge_silence=0.3, node_silence=0.3)
    )
    node = Node(serve_config(config))
    try:
        await node.start()
        port = node.listeners["clarkson"].port
        ann = await ClarksonClient.connect("127.0.0.1", port, "ann")
        bob = await ClarksonClient.connect("127.0.0.1", port, "bob")
        try:
            await ann.ready()
            await bob.ready()
            assert node.rooms is not None
            await eventually(lambda: len(node.rooms.rooms) == 1, "the game started")
            beat = node._beat
            assert beat is not None
            beat.cancel()  # no heartbeat: as a loop too loaded to beat in time
            await asyncio.sleep(2.0)  # several silences (and the watchers' ticks) pass
            [owned] = node.rooms.rooms.values()
            assert not owned.room.finished
            assert not owned.room.departed()
        finally:
            await ann.close()
            await bob.close()
    finally:
        await node.stop()

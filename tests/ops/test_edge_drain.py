"""A draining edge waits for its players' games (issue 35): an edge node and a rooms and
lobby node in this process on the session's NATS, Spectrangle players on real sockets.
SIGTERM on the edge: not ready, the health port and the game port refuse connections, a
player connected before asks for a game in vain (in Spectrangle's words), the game on
is played to its end, and only then does the drain end."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.natsd import NatsEnv
from tests.ops.conftest import Raw, http_get, play_out

from meeple.bus.subjects import Namespace
from meeple.node.node import Node, NodeConfig
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

pytestmark = pytest.mark.slow

BOUND = 60.0  # a hang bound, not a timing assertion


def _config(env: NatsEnv, ns: Namespace, name: str, roles: set[str], **more: object) -> NodeConfig:
    server = ServerConfig().only("spectrangle").with_overrides(drain_timeout=600)
    return NodeConfig(
        name=name,
        roles=frozenset(roles),
        nats_url=env.url,
        nats_user=env.NODE_USER,
        nats_password=env.node_password,
        namespace=ns.root,
        server=server,
        listeners=("spectrangle",),
        # A machine under load must not lose the room's lease: no other rooms node here.
        lease_ttl=10,
        **more,  # type: ignore[arg-type]
    )


@pytest.fixture
async def cluster(
    nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path
) -> AsyncIterator[tuple[Node, Node]]:
    """(edge, rooms, lobby and store node), the lobby led before the edge starts."""
    database = str(tmp_path / "records.sqlite3")
    rooms = Node(
        _config(nats_env, nats_ns, "drain-r", {"rooms", "lobby", "store"}, database=database)
    )
    await rooms.start()
    edge = Node(_config(nats_env, nats_ns, "drain-e", {"edge"}, metrics_port=0, health_port=0))
    try:
        assert rooms.lobby is not None
        await asyncio.wait_for(rooms.lobby.leader.wait(), BOUND)
        await edge.start()
        yield edge, rooms
    finally:
        await edge.stop()
        await rooms.stop()


def _port(node: Node, name: str) -> int:
    if name in node.listeners:
        return node.listeners[name].port
    port: int = next(o.port for o in node.ops if o.name == name)
    return port


async def _connect(edge: Node, name: str) -> Raw:
    peer = Raw(*await asyncio.open_connection("127.0.0.1", _port(edge, "spectrangle")))
    peer.send(f"connect {name}")
    assert await peer.next() == "welcome"
    return peer


async def _refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return True
    writer.close()
    return False


async def _until(check: object) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while not await check():  # type: ignore[operator]
        assert loop.time() < deadline, "never"
        await asyncio.sleep(0.05)


async def test_a_draining_edge_waits_for_its_players_game(
    cluster: tuple[Node, Node], known_deal: list[list[str]]
) -> None:
    """See the module doc; a second player's game would have been refused the same."""
    edge, _ = cluster
    a, b = await _connect(edge, "p1"), await _connect(edge, "p2")
    late = await _connect(edge, "p3")
    peers = [a, b, late]
    try:
        a.send("request 2")
        await a.until("waiting")
        b.send("request 2")
        for peer in (a, b):
            await peer.until("tiles")
        metrics = _port(edge, "metrics")
        assert await http_get(metrics, "/readyz") == (200, "ready\n")
        edge.request_stop()  # what SIGTERM does (Node.run's handler)
        draining = asyncio.ensure_future(edge.drain())

        async def not_ready() -> bool:
            status, body = await http_get(metrics, "/readyz")
            return status == 503 and "draining" in body

        await _until(not_ready)
        assert await _refused(_port(edge, "spectrangle"))  # no new connection
        await _until(lambda: _refused(_port(edge, "health")))
        late.send("request 2")
        assert await late.next() == "invalidCommand"  # no new game
        await asyncio.sleep(0.5)  # turns of the loop: the drain still waits for the game
        assert not draining.done()
        await play_out({"p1": a, "p2": b}, known_deal[0])
        await asyncio.wait_for(draining, BOUND)  # over once the game is
        assert edge.edge is not None
        assert edge.edge.playing == 0
    finally:
        for peer in peers:
            peer.close()


async def test_a_second_signal_ends_an_edge_drain(
    cluster: tuple[Node, Node], known_deal: list[list[str]]
) -> None:
    """A second SIGTERM while the edge waits for a game: the drain ends at once."""
    edge, _ = cluster
    a, b = await _connect(edge, "q1"), await _connect(edge, "q2")
    try:
        a.send("request 2")
        await a.until("waiting")
        b.send("request 2")
        for peer in (a, b):
            await peer.until("tiles")
        edge.request_stop()
        draining = asyncio.ensure_future(edge.drain())
        await asyncio.sleep(0.3)
        assert not draining.done()
        edge.request_stop()
        await asyncio.wait_for(draining, BOUND)
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    "name", ["twente", "clarkson", "santorini", "spectrangle", "cmpn402", "web"]
)
async def test_a_listener_that_stops_accepting_keeps_its_connections(
    name: str, tmp_path: Path
) -> None:
    """Listener.stop_accepting, what a draining edge calls on each of its listeners: a
    new connection is refused, one open before stays open (it gets no EOF), and the
    listener still names its port."""
    config = ServerConfig(database=str(tmp_path / "m.sqlite3")).only(name)
    server = MeepleServer(config, rng=random.Random(1))
    await server.start()
    try:
        listener = server.listeners[name]
        port = listener.port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        listener.stop_accepting()
        assert listener.port == port
        assert await _refused(port)
        with contextlib.suppress(TimeoutError):  # a greeting, or nothing: not closed
            data = await asyncio.wait_for(reader.read(4096), 0.3)
            assert data != b""
        assert not reader.at_eof()
        writer.close()
    finally:
        await server.stop()

"""A node's readiness follows its NATS connection and its leases (issue 35): a rooms and
lobby node reaches the session's NATS through a TCP relay the test cuts, silences and
restores; /readyz and the TCP health port say so, both ways."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from tests.natsd import NatsEnv
from tests.ops.conftest import http_get, node_port, ops_node
from tests.relay import Relay

from meeple.bus import schema
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.node import Node
from meeple.node.rooms import OpenRoom
from meeple.server.config import ServerConfig
from meeple.server.lobby.tables import QueueKey

pytestmark = pytest.mark.slow

# How long a change may take to show (a hang bound, not a timing assertion).
BOUND = 60.0


@pytest.fixture
async def relay(nats_env: NatsEnv) -> AsyncIterator[Relay]:
    host, port = nats_env.url.removeprefix("nats://").rsplit(":", 1)
    relay = Relay(host, int(port))
    await relay.start()
    yield relay
    await relay.close()


@pytest.fixture
async def node(nats_env: NatsEnv, nats_ns: Namespace, relay: Relay) -> AsyncIterator[Node]:
    server = ServerConfig()
    server = replace(server, cluster=replace(server.cluster, nats_ping=0.5))
    node: Node = ops_node("nats-a", relay.url, nats_env, nats_ns, server)
    await node.start()
    yield node
    await node.stop()


async def _health(node: Node) -> bytes | None:
    """What the TCP health port says; None: the connection is refused."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", node_port(node, "health"))
    except ConnectionRefusedError:
        return None
    try:
        return await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()


async def _until(node: Node, status: int, health: bytes | None) -> str:
    """Poll /readyz and the health port until they say ``status`` and ``health``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while True:
        got, body = await http_get(node_port(node, "metrics"), "/readyz")
        said = await _health(node)
        if got == status and said == health:
            return body
        if loop.time() > deadline:
            raise AssertionError(f"/readyz {got} {body!r}, health {said!r}")
        await asyncio.sleep(0.1)


async def _open_room(node: Node, ns: Namespace, uid: str) -> None:
    seats = tuple(
        {"route": f"edge-{i}", "name": name, "protocol": "spectrangle", "bot": False}
        for i, name in enumerate(("ann", "bob"))
    )
    request = OpenRoom(uid, QueueKey("spectrangle", 2, "standard", ()), seats)
    assert await node.bus.request(ns.rooms_open, wire.dumps(request), timeout=10) == schema.OK


async def test_a_cut_connection_makes_the_node_not_ready_until_it_reconnects(
    node: Node, relay: Relay
) -> None:
    """NATS's connection closed and its port refusing: /readyz 503 naming NATS and the
    health port refusing connections; the port back: ready, the health port says ok."""
    await _until(node, 200, b"ok\n")
    await relay.cut()
    body = await _until(node, 503, None)
    assert "nats: not connected" in body
    await relay.restore()
    assert await _until(node, 200, b"ok\n") == "ready\n"


async def test_a_silent_network_and_leases_that_stop_renewing(
    node: Node, relay: Relay, nats_ns: Namespace
) -> None:
    """The node owns a room; the network goes silent (nothing forwarded, nothing
    closed): its leases stop renewing and its pings go unanswered, so it is not ready
    and the health port refuses. The network back: ready again, whatever became of the
    room's lease meanwhile (it lapsed: the node takes the room up again or lets it go)."""
    await _open_room(node, nats_ns, "4a5b6c7d8e9f")
    await _until(node, 200, b"ok\n")
    relay.freeze()
    body = await _until(node, 503, None)
    assert "nats: not connected" in body or "leases: room.4a5b6c7d8e9f" in body
    await relay.restore()
    assert await _until(node, 200, b"ok\n") == "ready\n"
    assert node.leases.failing is None

"""A cluster node's metrics and readiness (issue 35): a rooms and lobby node in this
process on the session's NATS, scraped on its own metrics port: it leads the lobby,
owns the room it opens, counts its bus requests; /readyz checks NATS and its leases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from tests.natsd import NatsEnv
from tests.ops.conftest import Samples, http_get, node_port, ops_node, scrape, value
from tests.patience import PATIENCE, eventually

from meeple.bus import schema
from meeple.bus.base import NoResponder
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.node import Node
from meeple.node.rooms import OpenRoom
from meeple.server.lobby.tables import QueueKey

pytestmark = pytest.mark.slow


@pytest.fixture
async def hub(nats_env: NatsEnv, nats_ns: Namespace) -> AsyncIterator[Node]:
    node: Node = ops_node("ops-a", nats_env.url, nats_env, nats_ns)
    await node.start()
    yield node
    await node.stop()


async def _until(port: int, done: object) -> Samples:
    found: list[Samples] = []

    async def moved() -> bool:
        found.append(await scrape(port))
        return bool(done(found[-1]))  # type: ignore[operator]

    await eventually(moved, "the metrics moving", every=0.05)
    return found[-1]


async def test_a_node_exports_its_roles_and_answers_readiness(
    hub: Node, nats_ns: Namespace
) -> None:
    """The node leads the lobby (gauge and change counter), owns the room it is asked
    to open (rooms owned, bus request latency), and is ready: NATS, leases."""
    port = node_port(hub, "metrics")
    samples = await _until(port, lambda s: value(s, "meeple_lobby_leader", node="ops-a") == 1)
    assert value(samples, "meeple_lobby_leader_changes_total", change="elected") >= 1
    assert value(samples, "meeple_rooms_owned", node="ops-a") == 0
    asked = value(samples, "meeple_bus_request_seconds_count")
    seats = tuple(
        {"route": f"edge-{i}", "name": name, "protocol": "spectrangle", "bot": False}
        for i, name in enumerate(("ann", "bob"))
    )
    request = OpenRoom("0a1b2c3d4e5f", QueueKey("spectrangle", 2, "standard", ()), seats)
    answer = await hub.bus.request(nats_ns.rooms_open, wire.dumps(request), timeout=10)
    assert answer == schema.OK
    samples = await _until(port, lambda s: value(s, "meeple_rooms_owned", node="ops-a") == 1)
    assert value(samples, "meeple_bus_request_seconds_count") > asked
    assert value(samples, "meeple_rooms_running", game="spectrangle") >= 1
    assert await http_get(port, "/readyz") == (200, "ready\n")
    # The health port opens within its period once the node is ready.
    opened: list[bytes] = []

    async def answered() -> bool:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", node_port(hub, "health"))
        except ConnectionRefusedError:
            return False
        opened.append(await asyncio.wait_for(reader.read(-1), PATIENCE))
        writer.close()
        return True

    await eventually(answered, "the health port opening", every=0.05)
    assert opened == [b"ok\n"]
    # NATS lost and leases that stop renewing: tests/ops/test_node_nats.py.


async def test_a_draining_rooms_node_waits_for_its_rooms(hub: Node, nats_ns: Namespace) -> None:
    """SIGTERM on a rooms node with a room: not ready at once, and it waits (its
    drain_timeout) while it owns the room; a second signal ends the wait."""
    hub.config = replace(hub.config, server=hub.config.server.with_overrides(drain_timeout=600))
    seats = tuple(
        {"route": f"edge-{i}", "name": name, "protocol": "spectrangle", "bot": False}
        for i, name in enumerate(("cy", "dee"))
    )
    request = OpenRoom("1a2b3c4d5e6f", QueueKey("spectrangle", 2, "standard", ()), seats)
    assert await hub.bus.request(nats_ns.rooms_open, wire.dumps(request), timeout=10) == schema.OK
    port = node_port(hub, "metrics")
    hub.request_stop()
    draining = asyncio.ensure_future(hub.drain())
    answers: list[tuple[int, str]] = []

    async def unready() -> bool:
        answers.append(await http_get(port, "/readyz"))
        return answers[-1][0] == 503

    await eventually(unready, "/readyz answering 503", every=0.05)
    assert "draining" in answers[-1][1]
    await asyncio.sleep(0.3)  # turns of the loop: the drain still waits for the room
    assert not draining.done()
    assert list(hub.rooms.rooms) == ["1a2b3c4d5e6f"]
    # Draining, it opens no new room (the lobby's request finds no rooms node left to
    # ask: here, no responder) and takes none over; its own room goes on.
    request = OpenRoom("2a3b4c5d6e7f", QueueKey("spectrangle", 2, "standard", ()), seats)
    with pytest.raises(NoResponder):
        await hub.bus.request(nats_ns.rooms_open, wire.dumps(request), timeout=2)
    assert not await hub.rooms.take_over("3a4b5c6d7e8f")
    assert list(hub.rooms.rooms) == ["1a2b3c4d5e6f"]
    hub.request_stop()  # the second signal
    await asyncio.wait_for(draining, PATIENCE)

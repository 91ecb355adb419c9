"""Opening a room across a rooms node's death (issue 21): the lobby's leader asks
``meeple.rooms.open``; a node answers only once the room's genesis is in the log, and an
ask again finds the room opened, or takes over the lease of a node that died opening it
(no log: nothing else would ever serve that room). A rooms node in this process, the
session's NATS; the dead node is a lease taken and never renewed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from nats.aio.client import Client
from tests.natsd import NatsEnv

from meeple.bus import schema
from meeple.bus.base import RemoteError
from meeple.bus.natsbus import NatsBus
from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.node import wire
from meeple.node.node import Node, NodeConfig
from meeple.node.rooms import OpenRoom
from meeple.server.lobby.tables import QueueKey
from meeple.server.store.database import Store


@pytest.fixture
async def rooms_node(nats_env: NatsEnv, nats_ns: Namespace) -> AsyncIterator[Node]:
    node = Node(
        NodeConfig(
            name="rooms-a",
            roles=frozenset({"rooms"}),
            nats_url=nats_env.url,
            nats_user=nats_env.NODE_USER,
            nats_password=nats_env.node_password,
            namespace=nats_ns.root,
        )
    )
    await node.start()
    yield node
    await node.stop()


def _request(uid: str) -> OpenRoom:
    seats = tuple(
        {"route": f"edge-{i}", "name": name, "protocol": "spectrangle", "bot": False}
        for i, name in enumerate(("ann", "bob"))
    )
    return OpenRoom(uid, QueueKey("spectrangle", 2, "standard", ()), seats)


async def test_a_room_whose_opener_died_is_opened_by_the_next_ask(
    rooms_node: Node, node: Client, nats_ns: Namespace, records: Store
) -> None:
    bus = NatsBus(node)
    log = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    uid = "0a1b2c3d4e5f"
    # A node took the room's lease and died before its genesis was logged.
    ghost = await Leases(JetStreamBackplane(node), nats_ns, ttl=1).acquire(room_key(uid), "ghost")
    assert ghost is not None
    first = _request(uid)
    with pytest.raises(RemoteError, match="owned already"):  # the leader's first ask
        await bus.request(nats_ns.rooms_open, wire.dumps(first), timeout=5)
    # The leader asks again: the dead node's lease lapses, this node takes it and opens
    # the room, and answers once its genesis is in the log.
    answer = await bus.request(
        nats_ns.rooms_open, wire.dumps(replace(first, attempt=1)), timeout=10
    )
    assert answer == schema.OK
    opened = await log.action_log(uid)
    assert opened is not None
    holder = await Leases(JetStreamBackplane(node), nats_ns).holder(room_key(uid))
    assert holder is not None
    assert holder.owner == "rooms-a"
    # Asked once more (an answer lost on the way): "ok", and the room is not opened twice.
    again = await bus.request(nats_ns.rooms_open, wire.dumps(replace(first, attempt=2)), timeout=10)
    assert again == schema.OK
    assert list(rooms_node.rooms.rooms) == [uid]
    after = await log.action_log(uid)
    assert after is not None
    assert after.genesis == opened.genesis

"""A room's lease lapses under the node that serves it (issue 33: a clean clone's CI,
loaded, stalled a web table after its takeover): the node was only late (a paused
process, a loop stalled past the lease's TTL), and it is the only rooms node. It hears
the lapse while the room is still its own, so no later event brings the room back; it
must take the room again from its log, and the game goes on to its end on the same
connections."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from nats.aio.client import Client
from tests.cluster.test_nodes import Bot, Nodes, _room_uid, nodes
from tests.patience import GAME_PATIENCE, eventually

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.server.store.database import open_store

__all__ = ["nodes"]

pytestmark = pytest.mark.slow


async def test_a_rooms_node_whose_lease_lapsed_while_it_was_paused_takes_its_room_again(
    nodes: Nodes, node: Client, nats_ns: Namespace, pg_url: str
) -> None:
    """rooms1 serves a Twente game and is SIGSTOPped longer than the lease's TTL (2 s)
    but shorter than an edge's silence (5 s): the lease lapses. On SIGCONT rooms1 learns
    it lost the lease and drops the room; nobody else serves rooms, so it takes the room
    back from its log (a new epoch) and the two bots finish their game."""
    hub = await nodes.start("hub", "edge,lobby,store", pg_url)
    rooms1 = await nodes.start("rooms1", "rooms")
    plane = JetStreamBackplane(node)
    reader = JetStreamLog(plane, nats_ns, open_store("sqlite:///:memory:"))
    leases = Leases(plane, nats_ns)
    # Two moves each, then none until the pause is over: the game is on when it lands.
    resumed = asyncio.Event()
    bots = [
        Bot(name, hub.listeners["twente"], pace=0.1, gate=resumed, free=2)
        for name in ("ann", "bob")
    ]
    games = [asyncio.ensure_future(bot.play()) for bot in bots]
    paused = False
    try:
        uid = await _room_uid(reader)
        first = await leases.holder(room_key(uid))
        assert first is not None
        assert first.owner == "rooms1"
        os.kill(rooms1.pid, signal.SIGSTOP)
        paused = True

        async def lapsed() -> bool:
            holder = await leases.holder(room_key(uid))
            return holder is None

        await eventually(lapsed, "the paused owner's lease lapsed", every=0.05)
        os.kill(rooms1.pid, signal.SIGCONT)
        paused = False
        resumed.set()

        async def taken_again() -> bool:
            holder = await leases.holder(room_key(uid))
            return holder is not None and holder.epoch > first.epoch

        await eventually(taken_again, "the room taken again", every=0.05)
        holder = await leases.holder(room_key(uid))
        assert holder is not None
        assert holder.owner == "rooms1"
        overs = await asyncio.wait_for(asyncio.gather(*games), GAME_PATIENCE)
    except BaseException:
        for game in games:
            game.cancel()
        print(nodes.logs())
        raise
    finally:
        if paused:
            os.kill(rooms1.pid, signal.SIGCONT)
    assert overs[0].scores == overs[1].scores
    assert sorted(name for name, _ in overs[0].scores) == ["ann", "bob"]
    log = rooms1.log.read_text()
    assert "lease of room" in log, nodes.logs()
    assert f"took room {uid} over" in log, nodes.logs()

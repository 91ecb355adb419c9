"""Names unique across edges (meeple.node.names): edges, each on a NATS connection of its
own, ask a lobby node's NameService, which keeps names in the real bucket. (An edge's
credentials may publish lobby requests: test_registry.py; the namespace here is the
test's own, which the permissions file does not name, so the node user connects.)"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from tests.natsd import NatsEnv
from tests.patience import PATIENCE, eventually

from meeple.bus import schema
from meeple.bus.natsbus import NatsBus, connect
from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.registry import Names
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node.names import ClusterNames, NameService
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

Edge = Callable[[str], Awaitable[ClusterNames]]


@pytest.fixture
async def edge(nats_env: NatsEnv, nats_ns: Namespace, node: Client) -> AsyncIterator[Edge]:
    """``await edge(name)``: an edge's registry on a connection of its own; a lobby
    node's NameService answers them all."""
    service = NameService(NatsBus(node), nats_ns, Names(JetStreamBackplane(node), nats_ns))
    await service.start()
    made: list[tuple[ClusterNames, NatsBus]] = []

    async def make(name: str) -> ClusterNames:
        nc = await connect(
            nats_env.url,
            user=nats_env.NODE_USER,
            password=nats_env.node_password,
        )
        bus = NatsBus(nc)
        names = ClusterNames(bus, nats_ns, name, ttl=1)
        made.append((names, bus))
        return names

    yield make
    for names, bus in made:
        await names.close()
        await bus.close()
    await service.stop()


async def _claim(names: ClusterNames, name: str, owner: object) -> bool:
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    names.claim_then(name, owner, answer.set_result)
    return await asyncio.wait_for(answer, PATIENCE)


async def test_a_name_taken_on_one_edge_is_refused_on_another_until_released(
    edge: Edge,
) -> None:
    """Any casing of a name another edge's connection holds is refused; released when
    that connection ends, the other edge gets it."""
    a, b = await edge("a"), await edge("b")
    ann, other = object(), object()
    assert await _claim(a, "Ann", ann)
    assert not await _claim(b, "ANN", other)
    assert b.holder("ann") is None  # a refused claim leaves nothing behind here
    assert not await _claim(a, "ann", other)  # the same edge answers at once
    assert await _claim(a, "ANN", ann)  # its holder may claim it again
    a.release("ann", ann)
    # The release crosses the bus in the background.
    await eventually(lambda: _claim(b, "ann", other), "ann released on edge b")
    assert b.holder("Ann") is other
    assert not await _claim(a, "Ann", ann)


async def test_a_dead_edge_s_names_come_free_after_the_ttl_and_a_live_one_s_do_not(
    edge: Edge,
) -> None:
    """A live edge renews its names past their TTL; one that stops (its connection
    gone, no release) loses them when the TTL passes."""
    a, b, c = await edge("a"), await edge("b"), await edge("c")
    assert await _claim(a, "cara", object())
    assert await _claim(c, "dan", object())
    await asyncio.sleep(1.6)  # past the 1 s TTL: renewed, still taken
    assert not await _claim(b, "cara", object())
    assert not await _claim(b, "dan", object())
    await a.bus.close()  # edge a dies: its connection is gone, no renewal, no release
    await eventually(lambda: _claim(b, "cara", object()), "cara free after the TTL", every=0.1)
    assert not await _claim(b, "dan", object())  # c lives


async def _clarkson_edge(names: ClusterNames, tmp_path: Path, lexicon: Lexicon) -> MeepleServer:
    """A Clarkson listener whose name registry is ``names`` (an edge's, in process)."""
    config = ServerConfig(database=str(tmp_path / f"{names.node}.sqlite3")).only("clarkson")
    server = MeepleServer(config, rng=random.Random(1))
    server.services.names = names
    server.services.lexicon = lexicon
    await server.start()
    return server


async def test_a_clarkson_client_s_next_lines_wait_for_the_cluster_s_answer(
    edge: Edge, tmp_path: Path, gcide: Lexicon
) -> None:
    """HELLO, USERSET of a name another edge has, USERSET of a free one and QUIT, all in
    one write: each answer comes in order (NOK, USERCHANGE, GOODBYE), though the
    cluster's answers come later than the lines."""
    a, b = await edge("a"), await edge("b")
    assert await _claim(a, "Zed", object())
    server = await _clarkson_edge(b, tmp_path, gcide)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.ports["clarkson"])
        assert (await reader.readline()).startswith(b"HELLO ")
        writer.write(b"HELLO 1.0.1,test,test\r\nUSERSET zed\r\nUSERSET Zoe\r\nQUIT\r\n")
        lines = (await asyncio.wait_for(reader.read(), PATIENCE)).decode().splitlines()
        writer.close()
    finally:
        await server.stop()
    default = lines[0].split()[-1]
    assert lines == [
        f"OK Please send a username, otherwise you will be known as {default}",
        "NOK name already taken",
        f"USERCHANGE {default} Zoe",
        "GOODBYE",
    ]
    # Zoe's connection ended: the name is free on every edge.
    await eventually(lambda: _claim(a, "zoe", object()), "Zoe released")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(holder=st.text(max_size=12), sender=st.sampled_from(["e1", "e2"]))
async def test_an_edge_claims_renews_and_releases_only_its_own_holders_names(
    node: Client, nats_ns: Namespace, holder: str, sender: str
) -> None:
    """The name service acts for the sending edge's holders (``<edge>.<n>``) only,
    whatever holder a request names: e2 cannot release, renew or claim under e1's
    holder, so it cannot free e1's player's name to take it (issue 30.1)."""
    names = Names(JetStreamBackplane(node), nats_ns)
    service = NameService(NatsBus(node, owns=False), nats_ns, names)
    assert await names.claim("ann", "e1.1")
    mine = holder.split(".", 1)[0] == sender
    for request in (
        schema.NamesRequest(op="release", claims=[("ann", holder)]),
        schema.NamesRequest(op="renew", claims=[("bob", holder)], ttl=5),
        schema.NamesRequest(op="claim", name="cy", holder=holder, ttl=5),
    ):
        payload = schema.encode(request)
        if mine:
            await service.handle(payload, sender)
        else:
            with pytest.raises(ValueError, match="holder"):
                await service.handle(payload, sender)
    expected = None if mine and holder == "e1.1" else "e1.1"
    assert await names.holder("ann") == expected
    for name in ("ann", "bob", "cy"):
        await names.release(name, await names.holder(name) or "")

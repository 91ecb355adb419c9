"""Names and rejoin tokens in the KV buckets, and what an edge may touch on NATS: the
repository's permissions file (deploy/nats/meeple-auth.conf) tried as an edge."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import nats.errors
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from tests.natsd import NatsEnv
from tests.patience import eventually

from meeple.bus import Namespace
from meeple.bus.base import BusError
from meeple.bus.natsbus import NatsBus
from meeple.bus.subjects import STORE_READS
from meeple.cluster.jetstream import JetStreamBackplane, connect_node, delete_namespace
from meeple.cluster.lobbystate import LobbyState
from meeple.cluster.log import JetStreamLog
from meeple.cluster.registry import Names, RejoinSeat, RejoinTokens, name_key
from meeple.server.store.database import Store


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def test_a_name_is_used_by_one_holder_whatever_its_casing(
    node: Client, nats_ns: Namespace
) -> None:
    """ "Ann" and "ANN" are one name: one holder at a time; released, it is free."""
    names = Names(JetStreamBackplane(node), nats_ns)
    assert await names.claim("Ann", "edge1/7")
    assert not await names.claim("ANN", "edge2/3")
    assert await names.claim("ann", "edge1/7")  # its holder again: fine
    assert await names.holder("aNN") == "edge1/7"
    assert not await names.release("Ann", "edge2/3")
    assert await names.release("Ann", "edge1/7")
    assert await names.holder("Ann") is None
    assert await names.claim("ANN", "edge2/3")


async def test_racing_claims_of_one_name_have_one_winner(node: Client, nats_ns: Namespace) -> None:
    """Ten holders claim one name at once: exactly one gets it."""
    names = Names(JetStreamBackplane(node), nats_ns)
    won = await asyncio.gather(*(names.claim("Zoë", f"h{i}") for i in range(10)))
    assert sum(won) == 1
    assert await names.holder("ZOË") == f"h{won.index(True)}"


async def test_a_claim_with_a_ttl_lapses(node: Client, nats_ns: Namespace) -> None:
    """A holder that dies without releasing frees its name after the TTL."""
    names = Names(JetStreamBackplane(node), nats_ns, ttl=1)
    assert await names.claim("bob", "edge1/1")

    async def lapsed() -> bool:
        return await names.holder("bob") is None

    await eventually(lapsed, "bob's claim lapsing")
    assert await names.claim("bob", "edge2/1")


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_name_keys_are_kv_keys_and_fold_case(name: str) -> None:
    """Any name maps to a valid KV key; names with one casefold share it."""
    key = name_key(name)
    assert key.replace("n", "", 1).isalnum() or key == "n"
    assert key == name_key(name.casefold())
    assert key.islower()


async def test_a_rejoin_token_is_found_by_its_hash_taken_once_and_lapses(
    node: Client, nats_ns: Namespace
) -> None:
    """The seat a token's hash takes back; two takers: one gets it; a put token lapses
    with its TTL; a raw token is refused as a key."""
    tokens = RejoinTokens(JetStreamBackplane(node), nats_ns)
    h = _hash("secret-token")
    await tokens.put(h, RejoinSeat("r1", 1), ttl=30)
    assert await tokens.find(h) == RejoinSeat("r1", 1)
    taken = await asyncio.gather(tokens.take(h), tokens.take(h))
    assert sorted(taken, key=lambda x: x is None) == [RejoinSeat("r1", 1), None]
    assert await tokens.find(h) is None
    # Where the seat is now (taken back through another edge): kept, then replaced.
    await tokens.put(h, RejoinSeat("r3", 2, "web2-7", held=True), ttl=30)
    assert await tokens.find(h) == RejoinSeat("r3", 2, "web2-7", held=True)
    await tokens.put(h, RejoinSeat("r2", 0), ttl=1)
    assert await tokens.find(h) == RejoinSeat("r2", 0)

    async def gone() -> bool:
        return await tokens.find(h) is None

    await eventually(gone, "the token lapsing")
    with pytest.raises(ValueError, match="SHA-256"):
        await tokens.find("secret-token")


# --- an edge's rights --------------------------------------------------------------------


@pytest.fixture
async def production(nats_env: NatsEnv) -> AsyncIterator[tuple[Namespace, Client]]:
    """The namespace ``meeple`` (the one the permissions file names) and a node's
    connection to it; deleted after the test."""
    ns = Namespace("meeple")
    nc = await connect_node(
        nats_env.url, ns, user=nats_env.NODE_USER, password=nats_env.node_password, name="n"
    )
    yield ns, nc
    await nc.close()
    await delete_namespace(
        nats_env.url, ns, user=nats_env.NODE_USER, password=nats_env.node_password
    )


async def test_an_edge_cannot_read_logs_or_buckets_but_can_do_its_job(
    nats_env: NatsEnv, production: tuple[Namespace, Client], tmp_path: object
) -> None:
    """Connected as an edge (``meeple-edge-edge-1``): subscribing to log, KV (the
    lobby's state included) or other nodes' inbox subjects is refused; reading a log or a
    bucket through the JetStream API gets nothing; while
    commands to rooms, lobby requests, seat, view and lobby subjects work."""
    ns, nc = production
    store = Store(":memory:")
    log = JetStreamLog(JetStreamBackplane(nc), ns, store)
    await log.open_log("r1", "scrabble", {"rack": "SECRET"})
    await RejoinTokens(JetStreamBackplane(nc), ns).put(_hash("t"), RejoinSeat("r1", 0), ttl=30)
    lobby_state = LobbyState(JetStreamBackplane(nc), ns)
    await lobby_state.claim("n", 1)
    await lobby_state.write("n", {"tables": [{"seats": [{"route": "e-1", "name": "ann"}]}]})
    node_bus = NatsBus(nc, owns=False)

    async def answer(payload: bytes) -> bytes:
        return b"ok " + payload

    await node_bus.serve(ns.room_commands("r1"), answer)
    await node_bus.serve(ns.lobby_requests("sit"), answer)
    for op in (*STORE_READS, "record_game"):
        await node_bus.serve(ns.store_request(op), answer)
    await nc.flush()

    errors: list[str] = []

    async def on_error(e: Exception) -> None:
        errors.append(str(e).lower())  # nats-py lowercases some of the server's -ERRs

    edge = await nats.connect(
        nats_env.url,
        user=nats_env.EDGE_USER,
        password=nats_env.edge_password,
        inbox_prefix=ns.edge_inbox_of(nats_env.EDGE).encode(),
        error_cb=on_error,
        max_reconnect_attempts=0,
    )
    try:
        heard: list[str] = []

        async def listen(msg: nats.aio.msg.Msg) -> None:
            heard.append(msg.subject)

        # What an edge may do.
        bus = NatsBus(edge, owns=False)
        mine = ns.for_node(nats_env.EDGE)  # its requests end in its name
        seat = f"{nats_env.EDGE}-1"  # one of its seats' routes
        assert await bus.request(mine.room_command("r1"), b"PLAY", timeout=2) == b"ok PLAY"
        assert await bus.request(mine.lobby_request("sit"), b"x", timeout=2) == b"ok x"
        # The store's reads (public records and ratings), each op the file names.
        for op in STORE_READS:
            assert await bus.request(ns.store_read(op), b"{}", timeout=2) == b"ok {}"
        await edge.subscribe(ns.seat(seat, "r1"), cb=listen)
        await edge.subscribe(ns.view("r1"), cb=listen)
        await edge.subscribe(ns.lobby_events, cb=listen)
        # Chat outside a game: an edge publishes it and hears every edge's.
        await edge.subscribe(ns.lobby_chat("spectrangle"), cb=listen)
        await edge.publish(ns.lobby_chat("spectrangle"), b"hi")
        # What it may not.
        lobby_kv = f"$KV.{ns.lobby_bucket}.>"
        for forbidden in (
            ns.logs,
            ns.log("r1"),
            "$KV.>",
            f"$KV.{ns.tokens_bucket}.>",
            lobby_kv,
            "_INBOX.>",
        ):
            await edge.subscribe(forbidden, cb=listen)
        await edge.flush()
        await asyncio.sleep(0.2)  # the server's -ERR for each refused subscription
        for forbidden in (ns.logs, ns.log("r1"), "$KV.>", lobby_kv, "_INBOX.>"):
            assert any(
                "permissions violation for subscription" in e and forbidden.lower() in e
                for e in errors
            ), (forbidden, errors)
        # Nodes write logs and KV, and answer each other, while the edge listens.
        await log.append_log("r1", 1, {"rack": "SECRET2"})
        await RejoinTokens(JetStreamBackplane(nc), ns).put(_hash("u"), RejoinSeat("r1", 1), ttl=30)
        await lobby_state.write("n", {"tables": []})
        assert await log.action_log("r1") is not None  # a read: its answer to a node inbox
        for subject in (ns.seat(seat, "r1"), ns.view("r1"), ns.lobby_events):
            await nc.publish(subject, b"fine")
        await nc.flush()
        await asyncio.sleep(0.2)
        chat = ns.lobby_chat("spectrangle")
        expected = [chat, ns.seat(seat, "r1"), ns.view("r1"), ns.lobby_events]
        assert sorted(heard) == sorted(expected)
        assert not any(chat in e for e in errors), errors
        # The JetStream API is closed to it: log reads, KV reads, stream info.
        js = edge.jetstream(timeout=0.5)
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.get_last_msg(ns.log_stream, ns.log("r1"), direct=True)
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.get_msg(ns.log_stream, seq=1)
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.stream_info(ns.log_stream)
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.get_last_msg(f"KV_{ns.tokens_bucket}", f"$KV.{ns.tokens_bucket}.t{_hash('t')}")
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.get_last_msg(f"KV_{ns.lobby_bucket}", f"$KV.{ns.lobby_bucket}.state")
        await asyncio.sleep(0.1)
        assert any("permissions violation for publish" in e and "$js.api" in e for e in errors)
        # Nor may it store a game (a store's write), nor write a log, nor pose as a
        # room's owner's answer to seats.
        with pytest.raises(BusError):
            await bus.request(ns.store_request("record_game"), b"forged", timeout=0.5)
        await asyncio.sleep(0.1)
        assert any(
            "permissions violation for publish" in e and ns.store_request("record_game") in e
            for e in errors
        ), errors
        await edge.publish(ns.log("r1"), b"forged")
        await edge.publish(ns.seat(seat, "r1"), b"forged")
        await edge.flush()
        await asyncio.sleep(0.1)
        assert any("permissions violation for publish" in e and ns.log("r1") in e for e in errors)
        entries = await log.action_log("r1")
        assert entries is not None
        assert [e.entry for e in entries.entries] == [{"rack": "SECRET2"}]
    finally:
        await edge.close()
        store.close()

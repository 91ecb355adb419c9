"""Junk on every subject a node serves (issue 30.1): random bytes, pickles that would run
a shell command, and MessagePack in the bus's own shape with tags and fields of the
wrong kinds, sent with the node credentials to a running cluster (``meeple node``
processes on loopback and the tests' NATS) while two Twente bots play. Nothing runs
(the marker file never appears), every node goes on, the game finishes, and each node
logs a refused message once per subject and kind of fault, not once per message."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from tests.cluster.test_nodes import Bot, Nodes, _room_uid
from tests.natsd import NatsEnv

from meeple.bus import schema
from meeple.bus.schema import SCHEMA
from meeple.bus.subjects import STORE_ACCOUNTS, STORE_READS, Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.log import JetStreamLog
from meeple.node import wire
from meeple.node.cmpn402 import FINDER
from meeple.node.lobby import CALLS
from meeple.server.store.database import open_store

pytestmark = pytest.mark.slow


class _Shell:
    """Unpickled, runs ``command`` (what the 60-byte payload of issue 30.1 did)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (self.command,))


def _pickles(marker: Path) -> list[bytes]:
    touch = f"touch {marker}"
    evil = [pickle.dumps(_Shell(touch), protocol=p) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    # The dotted name that passed the old unpickler: (meeple.node.launch, os.system).
    dotted = (
        b"\x80\x04\x8c\x12meeple.node.launch\x8c\tos.system\x93"
        + pickle.dumps(touch, protocol=4)[2:-1]
        + b"\x85R."
    )
    return [*evil, dotted]


def _junk_trees(tags: list[str]) -> st.SearchStrategy[object]:
    """Values in the bus's own shape (kind-first arrays), tags real or not, bodies
    anything: what gets past MessagePack and must be stopped by the schema."""
    scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=12)
    tag = st.sampled_from(tags) | st.text(max_size=20)

    def grow(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
        return (
            st.builds(
                lambda k, xs: [k, *xs], st.sampled_from("tlfsdm"), st.lists(inner, max_size=4)
            )
            | st.builds(
                lambda k, t, body: [k, t, body],
                st.sampled_from("oeax"),
                tag,
                st.dictionaries(st.text(max_size=10), inner, max_size=4) | inner,
            )
            | st.lists(inner, max_size=3)
        )

    return st.recursive(scalars, grow, max_leaves=20)


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = Nodes(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


async def test_junk_on_every_subject_runs_nothing_and_the_game_finishes(
    nodes: Nodes, node: Client, nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    store = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    hub = await nodes.start("hub", "edge,lobby,store", store)
    await nodes.start("rooms1", "rooms")
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, open_store(store))
    ann = Bot("ann", hub.listeners["twente"], pace=0.25)
    bob = Bot("bob", hub.listeners["twente"], pace=0.25)
    games = [asyncio.ensure_future(b.play()) for b in (ann, bob)]
    try:
        uid = await _room_uid(reader)
        served = [
            nats_ns.room_command(uid),
            nats_ns.room_command(FINDER),
            nats_ns.rooms_open,
            *(nats_ns.lobby_request(op) for op in (*sorted(CALLS), "roomdone", "tables")),
            nats_ns.lobby_request("names"),
            nats_ns.lobby_request("rejoin"),
            nats_ns.store_request("game_by_uid"),
            nats_ns.store_request("record_game"),
            *(nats_ns.store_read(op) for op in STORE_READS),
            *(nats_ns.store_account(op) for op in STORE_ACCOUNTS),
        ]
        heard = [
            nats_ns.lobby_events,
            nats_ns.node("mallory"),
            nats_ns.lobby_chat("spectrangle"),
            nats_ns.view(uid),
            nats_ns.seat("hub-1", "lobby"),
            nats_ns.seat("hub-2", uid),
        ]
        loop = asyncio.get_running_loop()
        tags = list(wire.registry().tags)
        crafted = _pickles(marker)
        sent = [0]

        async def send(subject: str, payload: bytes) -> None:
            if subject in heard:
                await node.publish(subject, payload)
                return
            # An error answer, no responder, no answer: all refusals.
            with contextlib.suppress(Exception):
                await node.request(subject, payload, timeout=1.0)

        @settings(
            max_examples=120,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(
            subject=st.sampled_from(served + heard),
            payload=st.sampled_from(crafted)
            | st.binary(max_size=200)
            | _junk_trees(tags).map(msgspec.msgpack.encode)
            # The same junk under this schema's version, so it reaches the tree's checks.
            | _junk_trees(tags).map(lambda tree: msgspec.msgpack.encode(["V", SCHEMA, tree]))
            # JSON messages of the schema, of other kinds and versions, on every subject.
            | st.sampled_from([schema.OK, schema.BUSY, schema.encode(schema.Beat(name="x"))])
            | st.sampled_from([b'{"t":"ack","say":"ok"}', b'{"t":"ack","say":"ok","v":99}']),
        )
        def fuzz(subject: str, payload: bytes) -> None:
            asyncio.run_coroutine_threadsafe(send(subject, payload), loop).result(timeout=10)
            sent[0] += 1

        await asyncio.to_thread(fuzz)
        for subject in served + heard:  # every crafted pickle on every subject
            for payload in crafted:
                await send(subject, payload)
        over = await asyncio.wait_for(asyncio.gather(*games), timeout=240)
        assert len(over) == 2
        assert not marker.exists()
        for started in nodes.started:
            assert started.proc.poll() is None, f"{started.name} died"
        logs = {n.name: n.log.read_text(errors="replace") for n in nodes.started}
        for name, text in logs.items():
            # Refused without a traceback (nor a line per message).
            assert "Traceback" not in text, name
            refused = text.count("refused a message on")
            # Once per subject and kind of fault: a bound, whatever the number sent.
            assert refused <= len(served + heard) * 7, (name, refused)
        assert sum(text.count("refused a message on") for text in logs.values()) > 0
        assert sent[0] > 0
        # The lobby still answers (its whole list of open tables, in the schema).
        answer = await node.request(nats_ns.lobby_request("tables"), b"", timeout=5)
        assert isinstance(wire.loads(answer.data), wire.TableNews)
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        for game in games:
            game.cancel()

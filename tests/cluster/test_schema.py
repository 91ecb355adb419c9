"""The one schema between nodes (meeple.bus.schema, issue 32.4): every message kind
round-trips; hostile bytes are a WireError, never another exception; a message of
another version is refused cleanly (logged, the node goes on), while a value an older
node stored still reads."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from tests.patience import PATIENCE, eventually

from meeple.bus import LocalBus, Namespace, RemoteError, schema
from meeple.bus.codec import WireError
from meeple.bus.natsbus import NatsBus
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.registry import Names
from meeple.node import wire
from meeple.node.ask import ask
from meeple.node.names import NameService
from meeple.node.status import ClusterView
from meeple.server.config import ClusterConfig

# One instance of every kind, as its writer makes it.
SAMPLES: list[schema.Message] = [
    schema.Ack(say="busy"),
    schema.Beat(name="rooms-1", roles=["rooms"], rooms=[schema.BeatRoom(uid="r1", game="g")]),
    schema.ChatLine(origin="e.1", sender="ann", text="hi"),
    schema.WatchChatLine(origin="e.1", uid="r1", sender="zed", text="nice move"),
    schema.NamesRequest(op="renew", claims=[("ann", "e.1")], ttl=6.0),
    schema.NamesLost(names=["bob"]),
    schema.RejoinAsk(hash="0" * 64),
    schema.SeatAt(room="r1", seat=1),
    schema.SeatAt(),
    schema.Rebound(name="ann", next=4),
    schema.ViewFrame(at=(3, 1, 7), data=msgspec.Raw(b'{"finished":false}')),
    schema.AdminAnswer(owner="rooms-1", epoch=2, view={"uid": "r1"}, result=[1, "x"]),
    schema.LeaseValue(owner="rooms-1", epoch=5),
    schema.LobbyStateValue(owner="lobby-1", epoch=3, state={"tables": []}),
    schema.NameValue(name="Ann", holder="e.1"),
    schema.TokenValue(room="r1", seat=0, route="e-1", held=True),
    schema.LogOwner(epoch=9, owner="rooms-2"),
    schema.LogEnd(game={"end_reason": "normal"}, end_reason="normal"),
]

KINDS = list(schema.KINDS.values())

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)


def test_every_kind_is_listed_once_and_has_a_sample() -> None:
    """KINDS names each message class by its tag; the tests cover each of them."""
    assert len(KINDS) == len(set(KINDS))
    assert {type(m) for m in SAMPLES} == set(KINDS)


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_every_kind_round_trips_with_its_tag_and_version(message: schema.Message) -> None:
    """A message decodes as what was sent, carrying its kind and this schema's version."""
    data = schema.encode(message)
    raw = json.loads(data)
    assert raw["t"] == type(message).__struct_config__.tag
    assert raw["v"] == schema.SCHEMA
    back = schema.decode(data, type(message))
    if isinstance(message, schema.ViewFrame):
        assert isinstance(back, schema.ViewFrame)
        assert (back.at, bytes(back.data)) == (message.at, bytes(message.data))
    else:
        assert back == message


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_a_message_is_refused_as_any_other_kind(message: schema.Message) -> None:
    """Its tag says what it is: read as another kind, it is refused (no field
    coincidence makes a lease out of a chat line)."""
    data = schema.encode(message)
    for kind in KINDS:
        if kind is not type(message):
            with pytest.raises(WireError):
                schema.decode(data, kind)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), data=st.binary(max_size=300))
def test_hostile_bytes_are_a_wire_error(kind: type[schema.Message], data: bytes) -> None:
    """Any bytes: a message of the kind asked for, or a WireError; nothing else."""
    try:
        found = schema.decode(data, kind)
    except WireError:
        return
    assert isinstance(found, kind)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    fields=st.dictionaries(st.text(max_size=10), _JSON, max_size=6),
    version=st.none() | st.integers(-3, 5) | st.text(max_size=3),
    tag=st.none() | st.sampled_from([*schema.KINDS, "x"]),
    take=st.lists(st.integers(0, 20), max_size=6),
)
def test_hostile_json_is_a_wire_error(
    kind: type[schema.Message],
    fields: dict[str, Any],
    version: object,
    tag: str | None,
    take: list[int],
) -> None:
    """JSON of the kind's own field names with any values, any tag and any version:
    a valid message of the kind (of this schema, or a stored value of an older one)
    or a WireError."""
    names = [f for f in kind.__struct_fields__ if f != "v"]
    body: dict[str, Any] = dict(fields)
    for i, n in enumerate(take):
        if names:
            body[names[n % len(names)]] = fields.get(str(i), n)
    if version is not None:
        body["v"] = version
    if tag is not None:
        body["t"] = tag
    try:
        found = schema.decode(json.dumps(body).encode(), kind)
    except WireError:
        return
    assert isinstance(found, kind)
    assert version in (None, schema.SCHEMA) or version == 1  # never another version
    assert version is not None or kind.KEPT  # schema 1's: a stored value only


def test_a_message_of_another_version_is_refused_as_version() -> None:
    """Schema 1's heartbeat (no version) and a later schema's are refused with kind
    ``version``, not read as if they were this schema's."""
    for data in (b'{"name":"old-node"}', b'{"t":"beat","name":"new-node","v":3}'):
        with pytest.raises(WireError) as refused:
            schema.decode(data, schema.Beat)
        assert refused.value.kind == "version"


def test_a_value_an_older_node_stored_still_reads() -> None:
    """KV and log values of schema 1 (the same fields, no tag, no version) read as they
    are: a cluster's leases, names, tokens, lobby state and logs survive the upgrade."""
    old = {
        schema.LeaseValue: b'{"owner":"rooms-1","epoch":null}',
        schema.NameValue: b'{"name":"Ann","holder":"e.1"}',
        schema.TokenValue: b'{"room":"r1","seat":1,"route":"e-1"}',
        schema.LobbyStateValue: b'{"owner":"lobby-1","epoch":4,"state":{"tables":[]}}',
        schema.LogOwner: b'{"owner":"rooms-1","epoch":7}',
        schema.LogEnd: b'{"end_reason":"normal","game":{"game":"scrabble"}}',
    }
    assert set(old) == {k for k in KINDS if k.KEPT}
    assert schema.decode(old[schema.LeaseValue], schema.LeaseValue).owner == "rooms-1"
    assert schema.decode(old[schema.NameValue], schema.NameValue).holder == "e.1"
    assert schema.decode(old[schema.TokenValue], schema.TokenValue).route == "e-1"
    assert schema.decode(old[schema.LobbyStateValue], schema.LobbyStateValue).epoch == 4
    assert schema.decode(old[schema.LogOwner], schema.LogOwner).epoch == 7
    assert schema.decode(old[schema.LogEnd], schema.LogEnd).game == {"game": "scrabble"}


def test_an_unversioned_room_value_is_refused_as_version() -> None:
    """A seat's command as a schema 1 node sent it (the registry's MessagePack without
    the version) is refused with kind ``version``; this schema's reads."""
    command = wire.Command(0, 1, wire.Leave())
    assert wire.loads(wire.dumps(command), wire.Command) == command
    body = msgspec.msgpack.decode(wire.dumps(command))
    assert body[:2] == ["V", schema.SCHEMA]
    for old in (msgspec.msgpack.encode(body[2]), msgspec.msgpack.encode(["V", 1, body[2]])):
        with pytest.raises(WireError) as refused:
            wire.loads(old, wire.Command)
        assert refused.value.kind == "version"


async def test_an_old_nodes_heartbeat_is_refused_and_logged_not_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A node of schema 1 publishing its heartbeat: refused with one logged line naming
    the version, not listed; this schema's node beside it is listed."""
    bus = LocalBus()
    ns = Namespace("schemaold")
    view = ClusterView(bus, ns)
    await view.start()
    try:
        with caplog.at_level(logging.WARNING, logger="meeple.bus.codec"):
            for _ in range(3):
                await bus.publish(ns.node("old"), b'{"name":"old","roles":["rooms"]}')
            await bus.publish(ns.node("new"), schema.encode(schema.Beat(name="new")))
            await eventually(lambda: [n["name"] for n in view.snapshot()["nodes"]] == ["new"])
        lines = [r.getMessage() for r in caplog.records if "schema 1" in r.getMessage()]
        assert len(lines) == 1, lines
        assert "this node reads schema 2" in lines[0]
    finally:
        await view.stop()
        await bus.close()


async def test_an_old_edges_request_is_answered_with_an_error_not_a_crash(
    node: Client, nats_ns: Namespace
) -> None:
    """A name claim as a schema 1 edge sent it (JSON with no version, over NATS) is
    refused: the asker hears an error at once, nothing is claimed, and the service goes
    on answering this schema's claims."""
    bus = NatsBus(node, owns=False)
    names = Names(JetStreamBackplane(node), nats_ns)
    service = NameService(bus, nats_ns, names)
    await service.start()
    try:
        subject = nats_ns.for_node("e").lobby_request("names")
        old = {"op": "claim", "name": "zoe", "holder": "e.1", "ttl": 5}
        with pytest.raises(RemoteError, match="version"):
            await bus.request(subject, json.dumps(old).encode(), timeout=PATIENCE)
        assert await names.holder("zoe") is None
        claim = schema.NamesRequest(op="claim", name="zoe", holder="e.1", ttl=5)
        answer = await ask(bus, subject, schema.encode(claim), ClusterConfig())
        assert answer == schema.OK
        assert await names.holder("zoe") == "e.1"
        await names.release("zoe", "e.1")
    finally:
        await service.stop()


async def test_a_busy_owner_is_asked_again_by_its_typed_answer() -> None:
    """``busy`` is the schema's Ack: ask asks again on it and returns the next answer."""
    bus = LocalBus()
    answers = [schema.BUSY, schema.BUSY, schema.OK]

    async def owner(payload: bytes) -> bytes:
        return answers.pop(0)

    sub = await bus.serve("owner.x", owner)
    try:
        assert await asyncio.wait_for(ask(bus, "owner.x", b"", ClusterConfig()), 10) == schema.OK
        assert answers == []
    finally:
        await sub.close()
        await bus.close()


def test_no_node_answers_with_a_bare_flag() -> None:
    """Issue 32.4: an answer between nodes is a message of the schema (``schema.OK``,
    ``schema.BUSY``…), never the bare bytes of schema 1: a node of this version refuses
    those (a contest console once got a bare ``b"busy"`` from its leader and failed)."""
    import ast
    from pathlib import Path

    import meeple

    flags = {b"ok", b"busy", b"done", b"taken", b"none", b"over"}
    root = Path(meeple.__file__).parent
    found = [
        f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
        for folder in ("node", "cluster", "bus")
        for path in sorted((root / folder).glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in flags
    ]
    assert found == []

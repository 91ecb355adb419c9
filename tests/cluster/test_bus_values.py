"""Values on the bus (issue 32.2): a :class:`~meeple.bus.base.Sealed` value crosses the
in-process bus by reference and NATS as its codec's bytes, exactly; a receiver that reads
values gets, in one process, the very object the NATS path would decode an equal copy
of; and the one-process node's rooms and edges hand each other their deliveries and
commands without encoding them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cluster.conftest import MakeBus
from tests.cluster.test_local_node import _config, _twente_bot
from tests.cluster.test_schema import SAMPLES
from tests.patience import GAME_PATIENCE, PATIENCE, eventually

from meeple.bus import LocalBus, Namespace, RemoteError, schema
from meeple.bus.base import Sealed, matches
from meeple.bus.codec import Registry, WireError
from meeple.bus.local import _Index, _Sub
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.node import wire
from meeple.node.chat import WATCH_CODEC, LobbyChat
from meeple.node.node import Node
from meeple.node.views import VIEW_CODEC, View, ViewRelay
from meeple.server.feed import FeedItem, game_topic


@pytest.fixture
def ns(request: pytest.FixtureRequest) -> Namespace:
    return Namespace(f"v{abs(hash(request.node.nodeid)) % 10**8}")


# --- the schema's message kinds -------------------------------------------------------------

_text = st.text(max_size=12)
_plain = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), _text)
_leaf = st.one_of(_plain, st.binary(max_size=8))
_nested = st.recursive(_leaf, lambda inner: st.tuples(inner, inner), max_leaves=6)
_inner = st.one_of(
    st.builds(wire.Leave),
    st.builds(wire.Rejoin, _text, _text),
    st.builds(wire.RoomOver, _text),
    _nested,
)
MESSAGES = st.one_of(
    st.builds(wire.Command, st.integers(0, 3), st.integers(0, 10**6), _inner),
    st.builds(wire.Dropped, st.integers(0, 3), _text),
    st.builds(wire.Rebind, st.integers(0, 3), _text, st.dictionaries(_text, _plain, max_size=3)),
    st.builds(wire.Watch),
    st.builds(wire.History),
    st.builds(wire.Admin, _text, _text),
    st.builds(
        wire.Delivery,
        _text,
        st.integers(0, 3),
        st.integers(0, 10**6),
        _inner,
        st.booleans(),
        _text,
        st.none() | _text,
    ),
    st.builds(wire.RoomOver, _text),
    st.builds(
        wire.TableNews,
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        _inner,
        st.none() | st.tuples(_inner),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=MESSAGES)
def test_the_local_path_hands_over_what_the_nats_path_decodes(message: object) -> None:
    """For each of the schema's message kinds: what a value reader gets on the local bus
    is the sender's own object, and it equals what the schema's bytes decode to; a
    bytes reader gets exactly those bytes."""
    sealed = wire.seal(message)
    assert sealed.encode() == wire.dumps(message)  # the NATS path's bytes, unchanged

    async def run() -> tuple[object, bytes]:
        bus = LocalBus()
        values: asyncio.Queue[object] = asyncio.Queue()
        raw: asyncio.Queue[bytes] = asyncio.Queue()

        async def value(_s: str, v: object) -> None:
            values.put_nowait(v)

        async def data(_s: str, b: bytes) -> None:
            raw.put_nowait(b)

        try:
            await bus.listen("t.>", value, wire.registry())
            await bus.subscribe("t.>", data)
            await bus.publish("t.one", sealed)
            async with asyncio.timeout(PATIENCE):
                return await values.get(), await raw.get()
        finally:
            await bus.close()

    handed, data = asyncio.run(run())
    assert handed is message  # by reference: nothing encoded
    assert wire.loads(wire.dumps(message)) == handed
    assert data == wire.dumps(message)


async def test_values_cross_each_bus_and_nats_carries_the_schemas_bytes(
    make_bus: MakeBus, ns: Namespace
) -> None:
    """A request and its answer as values, on both buses; over NATS a bytes reader sees
    the schema's bytes exactly (the wire format is the codec's)."""
    owner, edge = await make_bus(), await make_bus()
    asked: list[object] = []

    async def handle(_subject: str, request: wire.Command) -> Sealed:
        asked.append(request)
        return wire.seal(wire.RoomOver(f"over {request.n}"))

    subject = ns.room_command("r1")
    await owner.answer(ns.room_commands("r1"), handle, wire.registry(), wire.Command)
    raw: list[bytes] = []

    async def heard(_s: str, data: bytes) -> None:
        raw.append(data)

    await owner.subscribe(ns.seat("e-1", "r1"), heard)
    await edge.flush()
    command = wire.Command(0, 7, wire.Leave())
    answer = await edge.ask(subject, wire.seal(command), wire.registry(), wire.RoomOver)
    assert answer == wire.RoomOver("over 7")
    assert asked == [command]
    delivery = wire.Delivery("r1", 0, 3, wire.Leave(), False, "scrabble", '{"a": 1}')
    await edge.publish(ns.seat("e-1", "r1"), wire.seal(delivery))
    await eventually(lambda: raw == [wire.dumps(delivery)], "the schema's bytes")


async def test_a_value_of_another_kind_is_refused_on_each_bus(
    make_bus: MakeBus, ns: Namespace
) -> None:
    """A value reader that expects a kind refuses another, by reference as from bytes:
    the requester is told, a listener is not called."""
    owner, edge = await make_bus(), await make_bus()

    async def handle(_subject: str, request: wire.Command) -> bytes:
        return b"ok"

    await owner.answer(ns.room_commands("r2"), handle, wire.registry(), wire.Command)
    heard: list[object] = []

    async def listener(_s: str, v: object) -> None:
        heard.append(v)

    await owner.listen(ns.seat("e-1", "r2"), listener, wire.registry(), wire.Delivery)
    await edge.flush()
    with pytest.raises(RemoteError, match="refused"):
        await edge.request(ns.room_command("r2"), wire.seal(wire.Watch()))
    await edge.publish(ns.seat("e-1", "r2"), wire.seal(wire.RoomOver("r2")))
    good = wire.Delivery("r2", 0, 0, None)
    await edge.publish(ns.seat("e-1", "r2"), wire.seal(good))
    await eventually(lambda: heard == [good], "only the delivery")
    assert await edge.request(ns.room_command("r2"), wire.seal(wire.Command(0, 1, None))) == b"ok"


# --- the schema's control messages ---------------------------------------------------------


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
async def test_each_control_message_crosses_one_process_by_reference(
    message: schema.Message,
) -> None:
    """A control message sealed with the schema's codec reaches a value reader on the
    local bus as the sender's object, and a bytes reader as exactly the schema's bytes
    (what NATS carries), which decode to an equal message."""
    bus = LocalBus()
    values: asyncio.Queue[object] = asyncio.Queue()
    raw: asyncio.Queue[bytes] = asyncio.Queue()

    async def value(_s: str, v: object) -> None:
        values.put_nowait(v)

    async def data(_s: str, b: bytes) -> None:
        raw.put_nowait(b)

    try:
        await bus.listen("c.>", value, schema.CODEC, type(message))
        await bus.subscribe("c.>", data)
        await bus.publish("c.one", Sealed(message, schema.CODEC))
        async with asyncio.timeout(PATIENCE):
            handed, got = await values.get(), await raw.get()
    finally:
        await bus.close()
    assert handed is message
    assert got == schema.encode(message)
    assert schema.CODEC.decode(got, type(message)) == message
    assert schema.CODEC.decode(got) == message  # any kind: read by its tag


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=64) | st.builds(schema.encode, st.sampled_from(SAMPLES)))
def test_the_schema_codec_reads_any_bytes_as_a_message_or_a_wire_error(data: bytes) -> None:
    """Whatever bytes reach a value reader of the schema's codec (any kind, or one kind;
    a codec with a smaller limit), it gets a message of the schema or a WireError."""
    for codec in (schema.CODEC, schema.SchemaCodec(max_bytes=16)):
        for expect in (object, schema.Ack, schema.ChatLine):
            try:
                found = codec.decode(data, expect)
            except WireError:
                continue
            assert len(data) <= codec.max_bytes
            assert isinstance(found, schema.Message if expect is object else expect)
            assert codec.fits(found, expect)


async def test_a_spectator_view_and_a_chat_line_cross_one_process_by_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An owner's published snapshot reaches an edge's relay as the owner's own view
    (never encoded, never decoded), and a NATS reader as the ViewFrame's bytes; a lobby
    chat line reaches another edge's hub as the sender's object."""
    ns = Namespace("vv")
    bus = LocalBus()
    relay = ViewRelay(bus, ns)
    frames: list[bytes] = []

    async def frame(_s: str, b: bytes) -> None:
        frames.append(b)

    async def owner(_s: str, _request: object) -> bytes:
        return b""  # no snapshot yet: the relay waits for the published ones

    try:
        await bus.answer(ns.room_commands("r1"), owner, wire.registry())
        await bus.subscribe(ns.view("r1"), frame)
        relay.watch(game_topic("r1"))
        await eventually(lambda: "r1" in relay._rooms and relay._rooms["r1"].subscription, "sub")
        item = FeedItem(game_topic("r1"), 1, {"finished": False, "board": [[0] * 3] * 3})
        await bus.publish(ns.view("r1"), Sealed(View((2, 1, 1), item.data, item), VIEW_CODEC))
        await eventually(lambda: relay.feed.last(game_topic("r1")) is not None, "the view")
        last = relay.feed.last(game_topic("r1"))
        assert last is not None
        assert last.data is item.data  # by reference
        await eventually(lambda: len(frames) == 1, "the frame's bytes")
        assert VIEW_CODEC.decode(frames[0], View) == View((2, 1, 1), item.data)
        assert frames[0] == schema.encode(
            schema.ViewFrame(at=(2, 1, 1), data=msgspec.Raw(item.json().encode()))
        )
        relay.close()

        heard: list[object] = []
        encoded: list[object] = []
        encode = schema.encode

        def counted(message: schema.Message) -> bytes:
            encoded.append(message)
            return encode(message)

        monkeypatch.setattr(schema, "encode", counted)
        here, there = LobbyChat(bus, ns, "e1"), LobbyChat(bus, ns, "e2")
        await here.start()
        await there.start()
        try:
            await bus.listen(here.subject, lambda _s, v: _append(heard, v), schema.CODEC)
            here.lobby_chat("ann", "hello")
            await eventually(lambda: len(heard) == 1, "the line")
            assert isinstance(heard[0], schema.ChatLine)
            line = heard[0]
            assert (line.sender, line.text) == ("ann", "hello")
            assert encoded == []  # nobody read it as bytes: never encoded
        finally:
            await here.close()
            await there.close()
        assert WATCH_CODEC.max_bytes == 4096
    finally:
        await bus.close()


async def _append(into: list[object], value: object) -> None:
    into.append(value)


# --- the wildcard index ---------------------------------------------------------------------

_token = st.sampled_from(["a", "b", "c"])
_pattern_token = st.sampled_from(["a", "b", "*"])
_patterns = st.builds(
    lambda tokens, tail: ".".join([*tokens, *([">"] if tail else [])]),
    st.lists(_pattern_token, min_size=1, max_size=4),
    st.booleans(),
) | st.just(">")
_subjects = st.lists(_token, min_size=1, max_size=5).map(".".join)


@settings(max_examples=200, deadline=None)
@given(
    patterns=st.lists(_patterns, max_size=8), subjects=st.lists(_subjects, min_size=1, max_size=3)
)
def test_the_index_finds_the_subscriptions_nats_would_match(
    patterns: list[str], subjects: list[str]
) -> None:
    """Exact subjects and wildcard patterns by their literal prefix: the subscriptions
    found for a subject are those :func:`matches` says, each once, however subscriptions
    came and went since the subject was last matched (what it matched is remembered)."""
    bus = LocalBus()
    index = _Index()
    subs = [_Sub(bus, pattern, None) for pattern in patterns]

    def check(live: list[_Sub]) -> None:
        for subject in subjects:
            for _ in range(2):  # found, then remembered
                found = index.match(subject)
                want = sorted(id(s) for s in live if matches(s.pattern, subject))
                assert sorted(map(id, found)) == want

    for n, sub in enumerate(subs):
        index.add(sub)
        check(subs[: n + 1])
    for n, sub in enumerate(subs):
        index.remove(sub)
        check(subs[n + 1 :])
    assert index.all() == []


# --- the one-process node -------------------------------------------------------------------


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


@pytest.mark.slow
async def test_a_one_process_node_encodes_no_delivery_nor_command(
    tmp_path: Path, lexicon: Lexicon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two Twente bots play a whole game through one node on the local backplane: the
    room's deliveries and the seats' commands cross its bus by reference (the schema
    encodes and decodes none of them; it did each one twice: 2/3 of the node's CPU), and
    so do the finished game the rooms role has the store role keep and the edge's name
    claims (only what is kept in the file is encoded: leases, tokens, names, the log)."""
    coded: list[str] = []
    encode, decode = Registry.encode, Registry.decode

    def counted_encode(self: Registry, value: object) -> bytes:
        coded.append(type(value).__name__)
        return encode(self, value)

    def counted_decode(self: Registry, data: bytes, expect: object = object) -> Any:
        value = decode(self, data, expect)
        coded.append(type(value).__name__)
        return value

    monkeypatch.setattr(Registry, "encode", counted_encode)
    monkeypatch.setattr(Registry, "decode", counted_decode)
    # The schema's control messages (JSON): each message encoded, each kind decoded.
    json_encode, json_decode = msgspec.json.encode, msgspec.json.decode

    def schema_encode(value: object, **kw: Any) -> bytes:
        if isinstance(value, schema.Message):
            coded.append(type(value).__name__)
        return json_encode(value, **kw)

    def schema_decode(data: Any, **kw: Any) -> Any:
        kind = kw.get("type")
        if isinstance(kind, type) and issubclass(kind, schema.Message):
            coded.append(kind.__name__)
        return json_decode(data, **kw)

    monkeypatch.setattr(msgspec.json, "encode", schema_encode)
    monkeypatch.setattr(msgspec.json, "decode", schema_decode)
    node = Node(_config(tmp_path))
    await node.start()
    try:
        port = node.listeners["twente"].port
        overs = await asyncio.wait_for(
            asyncio.gather(_twente_bot(port, "ann", lexicon), _twente_bot(port, "bob", lexicon)),
            GAME_PATIENCE,
        )
        assert dict(overs[0].scores) == dict(overs[1].scores)
    finally:
        await node.stop()
    # By reference (issue 32.2): the room's deliveries and the seats' commands; the
    # finished game to the store role; the edge's names requests. (A renewal's or a
    # release's NamesLost answer is still read as bytes: meeple.node.ask reads bytes.)
    for kind in ("Delivery", "Command", "RecordGame", "NamesRequest"):
        assert kind not in coded, sorted(set(coded))

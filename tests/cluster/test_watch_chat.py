"""The spectators' chat between edges (issue 34.5, meeple.node.chat.WatchChatRelay) over
the in-process bus: what an edge hears on ``<ns>.watchchat.<uid>`` reaches its watchers
only when it is a line a browser could have sent, from another edge, for that game;
anything else (bytes that are not JSON, another shape, too long, a newline, a wrong uid)
is dropped and the relay goes on. Across real edges: tests/cluster/test_edge_web.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import eventually

from meeple.bus import schema
from meeple.bus.local import LocalBus
from meeple.bus.schema import SCHEMA
from meeple.bus.subjects import Namespace
from meeple.node.chat import WatchChatRelay
from meeple.protocols.web import MAX_CHAT_LENGTH
from meeple.server.feed import game_topic

NS = Namespace("t-watchchat")
UID = "abc123"


class Edge:
    """A relay with the frames it wrote to its watchers (decoded)."""

    def __init__(self, bus: LocalBus, name: str) -> None:
        self.frames: list[tuple[str, dict[str, Any]]] = []
        self.relay = WatchChatRelay(bus, NS, name, self._say)

    def _say(self, topic: str, frame: bytes) -> int:
        # A text frame: 0x81, a length (7 bits, or 126 and 2 bytes), the JSON.
        payload = frame[4:] if frame[1] == 126 else frame[2:]
        self.frames.append((topic, json.loads(payload)))
        return 1


@pytest.fixture
async def edges() -> AsyncIterator[tuple[LocalBus, Edge, Edge]]:
    bus = LocalBus()
    one, two = Edge(bus, "e1"), Edge(bus, "e2")
    for edge in (one, two):
        edge.relay.watch(game_topic(UID))
    await eventually(lambda: all(e.relay._subs[UID].done() for e in (one, two)), "subscribed")
    yield bus, one, two
    for edge in (one, two):
        await edge.relay.close()
    await bus.close()


async def _settled(bus: LocalBus, edge: Edge, n: int) -> None:
    """Wait until a sentinel line published after the others reached ``edge``."""
    await bus.publish(
        NS.watch_chat(UID),
        schema.encode(
            schema.WatchChatLine(origin="other.1", uid=UID, sender="zed", text=f"end {n}")
        ),
    )
    await eventually(lambda: any(f[1]["text"] == f"end {n}" for f in edge.frames), "sentinel")


async def test_a_line_reaches_the_other_edge_once_and_its_own_at_once(
    edges: tuple[LocalBus, Edge, Edge],
) -> None:
    """A browser's line on e1: e1's watchers have it at once, e2's once from the bus; the
    frame is the browser protocol's ``watch-chat``, the text as it was typed."""
    bus, one, two = edges
    one.relay.say(UID, "sam", "<i>hi</i>")
    line = {"type": "watch-chat", "uid": UID, "from": "sam", "text": "<i>hi</i>"}
    assert one.frames == [(game_topic(UID), line)]
    await eventually(lambda: two.frames == [(game_topic(UID), line)], "e2 hears it")
    await _settled(bus, one, 0)
    assert [f for f in one.frames if f[1]["from"] == "sam"] == [(game_topic(UID), line)]


async def test_an_edge_that_stops_watching_hears_no_more(
    edges: tuple[LocalBus, Edge, Edge],
) -> None:
    """After its last watcher leaves, e2 writes nothing more for the game."""
    bus, one, two = edges
    two.relay.unwatch(game_topic(UID))
    await eventually(lambda: not two.relay._closing, "unsubscribed")
    one.relay.say(UID, "sam", "anyone?")
    await _settled(bus, one, 1)
    assert two.frames == []


_BAD_LINES = st.one_of(
    st.binary(max_size=200),
    st.builds(
        lambda head, uid, sender, text: msgspec.json.encode(
            {**head, "origin": "x.1", "uid": uid, "sender": sender, "text": text}
        ),
        # The schema's own head, another version's, another kind's, none (schema 1).
        st.sampled_from(
            [{"t": "watchchat", "v": SCHEMA}, {"t": "watchchat", "v": 1}, {"t": "chat"}, {}]
        ),
        st.one_of(st.just(UID), st.text(max_size=40)),
        st.one_of(st.just("ann"), st.text(max_size=40)),
        st.one_of(
            st.text(max_size=60).map(lambda t: t + "\n"),
            st.just("x" * (MAX_CHAT_LENGTH + 1)),
            st.just("   "),
            st.text(max_size=60),
        ),
    ),
    st.just(b"x" * 5000),
    st.just(
        b'{"t": "watchchat", "v": 2, "origin": "x.1", "uid": "abc123", "sender": "ann", '
        b'"text": ["hi"]}'
    ),
)


def _valid(payload: bytes) -> bool:
    try:
        obj = json.loads(payload)
    except ValueError:
        return False
    # A reader ignores a field it does not know (the schema's version rule), so only
    # the schema's own fields must be there.
    if not isinstance(obj, dict) or not {"t", "v", "origin", "uid", "sender", "text"} <= set(obj):
        return False
    if (obj["t"], obj["v"]) != ("watchchat", SCHEMA):
        return False  # another kind, or a version this node does not read
    from meeple.protocols.web import watch_chat_problem

    return (
        len(payload) <= 4096
        and all(isinstance(obj[k], str) for k in ("t", "origin", "uid", "sender", "text"))
        and isinstance(obj["v"], int)
        and obj["uid"] == UID
        and watch_chat_problem(obj["uid"], obj["sender"], obj["text"]) is None
    )


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payloads=st.lists(_BAD_LINES, min_size=1, max_size=5))
async def test_hostile_lines_from_the_bus_reach_no_watcher(
    edges: tuple[LocalBus, Edge, Edge], payloads: list[bytes]
) -> None:
    """Whatever another process publishes on the game's chat subject, e2's watchers get
    only lines a browser could have sent for that game, and the relay goes on."""
    bus, _one, two = edges
    two.frames.clear()
    for payload in payloads:
        await bus.publish(NS.watch_chat(UID), payload)
    await _settled(bus, two, 2)
    written = [f[1] for f in two.frames if f[1]["text"] != "end 2"]
    expected = [json.loads(p) for p in payloads if _valid(p)]
    assert [(w["from"], w["text"]) for w in written] == [(e["sender"], e["text"]) for e in expected]

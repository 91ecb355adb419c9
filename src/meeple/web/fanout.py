"""Spectators at scale: one feed subscription per watched topic, one frame for all.

The web listener watches a topic (a game, the lobby, the console) through one
:class:`Fanout` per edge: the first browser that subscribes to a topic makes the edge
subscribe to it on the server's :class:`~meeple.server.feed.Feed` *once*; every
further browser only joins the edge's local list. When the topic's next snapshot
arrives, the edge makes its frames once and writes the same bytes to every watcher's
socket, in one synchronous loop, with no task, queue or encoder per spectator:

- the **whole snapshot** (``game``/``lobby``/``console`` message), as one WebSocket text
  frame, for a watcher that just subscribed, that did not ask for deltas, or that fell
  behind;
- the **delta** (the same type with ``base`` and ``patch``,
  :mod:`meeple.protocols.web.delta`), for a watcher that asked for deltas and holds the
  previous snapshot, when the patch is smaller than the snapshot.

Frames are never compressed per connection: the web listener offers no
permessage-deflate (docs/benchmarks.md, "Web fan-out": per-connection deflate was
about 40 % of the fan-out's CPU and more than half of a spectator's memory; a delta
is a few hundred bytes).

A watcher whose socket cannot take more (its transport paused writing: the peer reads
slower than the game moves) is skipped, never waited for; when the socket drains it
gets the topic's newest snapshot whole. So a watcher's frames only move forward, each
delta applies to the snapshot the watcher holds, and a slow spectator never slows the
game or the other spectators. In the cluster (issue 21) the edge's one subscription
per topic becomes one NATS subscription to the room's spectator subject; nothing else
here changes.

A WebSocket offers its frame writer to the app as the ASGI scope extension
``meeple.frames`` (:class:`FrameSink`; the web listener's uvicorn protocol,
:class:`meeple.web.listener.FrameProtocol`, does).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import struct
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from meeple.protocols import web as proto
from meeple.server.feed import Feed, FeedItem, Subscription

__all__ = ["EXTENSION", "Fanout", "FrameSink", "Spectator", "frame_sink", "text_frame"]

logger = logging.getLogger(__name__)

# The ASGI scope extension under which a WebSocket offers its FrameSink.
EXTENSION = "meeple.frames"


class FrameSink(Protocol):
    """A WebSocket that takes whole frames made elsewhere (see the module docstring)."""

    def write_frame(self, frame: bytes) -> bool:
        """Write ``frame`` now; False (nothing written) when the socket is closed or its
        buffer is full."""

    def on_drain(self, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` whenever the socket's full buffer has drained."""


def frame_sink(scope: Mapping[str, Any]) -> FrameSink | None:
    """The WebSocket's :class:`FrameSink` from its ASGI scope, if its server offers one."""
    sink: FrameSink | None = scope.get("extensions", {}).get(EXTENSION, {}).get("sink")
    return sink


def text_frame(payload: bytes) -> bytes:
    """One unmasked, final WebSocket text frame (RFC 6455 §5.2: a server never masks)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x81, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x81, 126, n)
    else:
        head = struct.pack("!BBQ", 0x81, 127, n)
    return head + payload


class Spectator:
    """One WebSocket's watching: its sink, and the last snapshot ``seq`` it holds per topic."""

    __slots__ = ("_fanout", "held", "sink", "topics")

    def __init__(self, fanout: Fanout, sink: FrameSink) -> None:
        self._fanout = fanout
        self.sink = sink
        self.held: dict[str, int] = {}  # topic -> seq of the last frame written
        self.topics: dict[str, _Topic] = {}
        sink.on_drain(self._drained)

    def _drained(self) -> None:
        for topic in list(self.topics.values()):
            topic.catch_up(self)


class _Topic:
    """One watched topic on this edge: the one feed subscription, and its watchers."""

    def __init__(self, fanout: Fanout, topic: str) -> None:
        self.topic = topic
        self.wire, self.uid = _wire_topic(topic)
        self.watchers: dict[Spectator, bool] = {}  # -> wants deltas
        self.item: FeedItem | None = None
        self.previous: FeedItem | None = None
        self._full: bytes | None = None
        self._delta: bytes | None = None
        self._delta_made = False
        self.subscription: Subscription = fanout.feed.subscribe(topic)
        first = self.subscription.get_nowait()  # the topic's last snapshot, if any
        if first is not None:
            self.item = first
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"fanout {topic}")

    async def _run(self) -> None:
        while True:
            try:
                item = await self.subscription.get()
            except EOFError:
                return
            self.advance(item)

    def advance(self, item: FeedItem) -> None:
        """The topic's next snapshot: write it (whole, or as a delta) to every watcher."""
        if self.item is not None and item.seq <= self.item.seq:
            return  # only forward
        self.previous, self.item = self.item, item
        self._full = self._delta = None
        self._delta_made = False
        for spectator, delta in list(self.watchers.items()):
            self._send(spectator, delta)

    def catch_up(self, spectator: Spectator) -> None:
        delta = self.watchers.get(spectator)
        if delta is not None:
            self._send(spectator, delta)

    def _send(self, spectator: Spectator, delta: bool) -> None:
        item = self.item
        if item is None:
            return
        held = spectator.held.get(self.topic, 0)
        if held >= item.seq:
            return
        frame = None
        if delta and self.previous is not None and held == self.previous.seq:
            frame = self._delta_frame()
        if frame is None:
            frame = self._full_frame()
        if spectator.sink.write_frame(frame):
            spectator.held[self.topic] = item.seq

    def _full_frame(self) -> bytes:
        if self._full is None:
            assert self.item is not None
            snapshot = proto.Snapshot(self.wire, self.uid, self.item.seq, self.item.json())
            self._full = text_frame(snapshot.encode().encode())
        return self._full

    def _delta_frame(self) -> bytes | None:
        """The delta from the previous snapshot to this one, once; None when not smaller."""
        if not self._delta_made:
            self._delta_made = True
            assert self.item is not None
            assert self.previous is not None
            ops = proto.diff(self.previous.data, self.item.data)
            if ops is not None:
                patch = _dump(ops)
                message = proto.Delta(self.wire, self.uid, self.item.seq, self.previous.seq, patch)
                self._delta = text_frame(message.encode().encode())
        return self._delta

    def close(self) -> None:
        self.subscription.close()
        self.task.cancel()


class Fanout:
    """The edge's watched topics; see the module docstring."""

    def __init__(
        self,
        feed: Feed,
        *,
        on_first: Callable[[str], None] | None = None,
        on_last: Callable[[str], None] | None = None,
    ) -> None:
        self.feed = feed
        self._topics: dict[str, _Topic] = {}
        # The edge's first watcher of a topic came, its last went (a cluster edge then
        # starts and stops hearing the room over the bus: meeple.node.views).
        self._on_first = on_first
        self._on_last = on_last

    def spectator(self, sink: FrameSink) -> Spectator:
        """A WebSocket that is going to watch (call once per connection)."""
        return Spectator(self, sink)

    def watch(self, spectator: Spectator, topic: str, *, delta: bool) -> None:
        """``spectator`` watches ``topic`` from now: the newest snapshot whole, at once if
        the feed has one, then every change (as deltas if ``delta``)."""
        entry = self._topics.get(topic)
        if entry is None:
            entry = self._topics[topic] = _Topic(self, topic)
            if self._on_first is not None:
                self._on_first(topic)
        entry.watchers[spectator] = delta
        spectator.topics[topic] = entry
        spectator.held.pop(topic, None)  # a new subscription starts with a whole snapshot
        entry.catch_up(spectator)

    def unwatch(self, spectator: Spectator, topic: str) -> None:
        entry = spectator.topics.pop(topic, None)
        spectator.held.pop(topic, None)
        if entry is None:
            return
        entry.watchers.pop(spectator, None)
        if not entry.watchers:
            # The last watcher on this edge left: the edge stops listening too.
            if self._topics.get(topic) is entry:
                del self._topics[topic]
            entry.close()
            if self._on_last is not None:
                self._on_last(topic)

    def leave(self, spectator: Spectator) -> None:
        """The WebSocket closed: it watches nothing any more."""
        for topic in list(spectator.topics):
            self.unwatch(spectator, topic)
        spectator.sink.on_drain(None)

    def say(self, topic: str, frame: bytes) -> int:
        """Write ``frame`` (a spectators' chat line, issue 34.5: no snapshot, so nothing
        to catch up on) to every watcher of ``topic`` on this edge now, in one loop like
        a snapshot's; a watcher whose socket cannot take more misses the line. Returns
        how many took it."""
        entry = self._topics.get(topic)
        if entry is None:
            return 0
        return sum(1 for spectator in list(entry.watchers) if spectator.sink.write_frame(frame))

    @property
    def spectators(self) -> int:
        """Watchers of every topic together (a socket watching two rooms counts twice)."""
        return sum(len(entry.watchers) for entry in self._topics.values())

    def watchers(self, topic: str) -> int:
        entry = self._topics.get(topic)
        return 0 if entry is None else len(entry.watchers)

    def close(self) -> None:
        for entry in self._topics.values():
            entry.close()
        self._topics.clear()

    async def aclose(self) -> None:
        tasks = [entry.task for entry in self._topics.values()]
        self.close()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


def _wire_topic(topic: str) -> tuple[str, str | None]:
    if topic.startswith("game:"):
        return "game", topic.removeprefix("game:")
    return topic, None


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))

"""The feed: one publish/subscribe channel from rooms and the lobby to every viewer.

Publishers (the room actor, the lobby) call :meth:`Feed.publish` with a topic and a
function that builds a JSON-safe snapshot; the snapshot is built once, only when
someone listens, and handed to every subscriber of the topic. Every item is a whole
snapshot (never a diff), so a viewer that fell behind needs only the newest one:

- publishing never blocks and never waits for a subscriber;
- each subscription holds at most ``limit`` items; when a slow viewer's queue is
  full its oldest items are dropped and the subscription is marked ``resync``,
  so a slow spectator can never slow a game down;
- the feed keeps each topic's last snapshot, which a new subscriber gets first.

Topics: ``"lobby"`` (queues and running rooms) and ``"game:<uid>"`` (one room).
Call :meth:`Subscription.get` to wait for the next item; :meth:`Subscription.close`
when done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meeple.server.ports import FeedPort

import asyncio
import collections
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_LIMIT", "Feed", "FeedItem", "Subscription", "game_topic"]

logger = logging.getLogger(__name__)

# Snapshots a viewer may lag behind before the oldest are dropped.
DEFAULT_LIMIT = 16


def game_topic(uid: str) -> str:
    """The topic a room with this uid publishes on."""
    return f"game:{uid}"


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One snapshot on one topic; ``seq`` counts the topic's snapshots from 1."""

    topic: str
    seq: int
    data: dict[str, Any]
    # What is made once for all subscribers on first use (see :meth:`json`, :meth:`memo`).
    _memo: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def json(self) -> str:
        """The snapshot as compact JSON text, made once."""
        return self.memo("json", lambda: json.dumps(self.data, separators=(",", ":")))

    def memo(self, key: str, make: Callable[[], str]) -> str:
        """``make()`` once per item and key (a protocol's frame for every subscriber)."""
        text = self._memo.get(key)
        if text is None:
            text = self._memo[key] = make()
        return text


class Subscription:
    """A viewer's bounded queue of feed items over one or more topics."""

    def __init__(self, feed: Feed, limit: int) -> None:
        self._feed = feed
        self.topics: set[str] = set()
        self._items: collections.deque[FeedItem] = collections.deque()
        self._limit = limit
        self._ready = asyncio.Event()
        self.dropped = 0
        self.resync = False
        self.closed = False

    def _put(self, item: FeedItem) -> None:
        # Same topic already queued: the newer snapshot replaces it (it says everything).
        for i, queued in enumerate(self._items):
            if queued.topic == item.topic:
                del self._items[i]
                self.dropped += 1
                self.resync = True
                break
        if len(self._items) >= self._limit:
            self._items.popleft()
            self.dropped += 1
            self.resync = True
        self._items.append(item)
        self._ready.set()

    def add(self, topic: str) -> None:
        """Listen on ``topic`` too; its last snapshot (if any) is queued at once."""
        if not self.closed and topic not in self.topics:
            self.topics.add(topic)
            self._feed._add(self, topic)

    def remove(self, topic: str) -> None:
        """Stop listening on ``topic``; its queued items are dropped."""
        if topic in self.topics:
            self.topics.discard(topic)
            self._feed._remove(self, topic)
            self._items = collections.deque(i for i in self._items if i.topic != topic)
            if not self._items:
                self._ready.clear()

    def pending(self) -> int:
        return len(self._items)

    def get_nowait(self) -> FeedItem | None:
        if not self._items:
            return None
        item = self._items.popleft()
        if not self._items:
            self._ready.clear()
        return item

    async def get(self) -> FeedItem:
        """The next item, waiting for one. Raises :class:`EOFError` once closed."""
        while True:
            if self.closed:
                raise EOFError("subscription closed")
            item = self.get_nowait()
            if item is not None:
                return item
            await self._ready.wait()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for topic in self.topics:
                self._feed._remove(self, topic)
            self.topics.clear()
            self._items.clear()
            self._ready.set()


class Feed:
    """Topics of snapshots; see the module docstring."""

    def __init__(self, *, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._subs: dict[str, set[Subscription]] = {}
        self._last: dict[str, FeedItem] = {}
        self._seq: dict[str, int] = {}

    def subscribe(self, *topics: str, limit: int | None = None) -> Subscription:
        """Listen on ``topics``; each topic's last snapshot (if any) is queued at once."""
        sub = Subscription(self, limit or self._limit)
        for topic in topics:
            sub.add(topic)
        return sub

    def _add(self, sub: Subscription, topic: str) -> None:
        self._subs.setdefault(topic, set()).add(sub)
        last = self._last.get(topic)
        if last is not None:
            sub._put(last)

    def _remove(self, sub: Subscription, topic: str) -> None:
        subs = self._subs.get(topic)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[topic]

    def subscribers(self, topic: str) -> int:
        return len(self._subs.get(topic, ()))

    def last(self, topic: str) -> FeedItem | None:
        return self._last.get(topic)

    def publish(self, topic: str, build: Callable[[], dict[str, Any]]) -> FeedItem | None:
        """Build and hand out a snapshot of ``topic``; never blocks.

        The snapshot is kept as the topic's last one, so it is built even with no
        subscriber (a page opened later shows it); an unchanged snapshot is not
        handed out again. Returns the item, or None when nothing changed.
        """
        try:
            data = build()
        except Exception:
            # A viewer's snapshot must never break the game that publishes it.
            logger.exception("%s: building the snapshot failed", topic)
            return None
        last = self._last.get(topic)
        if last is not None and last.data == data:
            return None
        seq = self._seq.get(topic, 0) + 1
        self._seq[topic] = seq
        item = FeedItem(topic, seq, data)
        self._last[topic] = item
        for sub in list(self._subs.get(topic, ())):
            sub._put(item)
        return item

    def forget(self, topic: str) -> None:
        """Drop a topic's last snapshot (a finished room's, once the store has it)."""
        self._last.pop(topic, None)


def _conforms(feed: Feed) -> FeedPort:
    """What mypy checks and nothing calls: the feed is the feed port."""
    return feed

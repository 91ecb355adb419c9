"""Spectators across the split: a room's spectator view from its owner to the edges.

The web's spectators watch a room through one :class:`~meeple.web.fanout.Fanout` per
edge (one subscription per watched topic, one frame for all its spectators). In the
cluster the room runs on a rooms node, so the edge's one subscription becomes one NATS
subscription to the room's view subject ``<ns>.view.<uid>``, which carries spectator
views only (no rack, no bag: the game's ``spectator_view``):

- **the owner** (:class:`ViewSource`, on every rooms node) publishes a room's snapshots
  on its view subject only while some edge watches it: an edge asks for them with a
  :class:`~meeple.node.wire.Watch` on the room's command subject (so the owner, and only
  the owner, answers, with the current snapshot), and asks again every
  ``watch_renew`` seconds while it has spectators; a room nobody asked for within
  ``watch_ttl`` seconds (:class:`~meeple.server.config.ClusterConfig`) is built no more.
  After a failover the next ask reaches the new owner, which starts publishing;
- **the edge** (:class:`ViewRelay`) puts what it hears into its own
  :class:`~meeple.server.feed.Feed`, which its fanout reads as ``meeple serve``'s does.

A snapshot crosses as a :class:`~meeple.bus.schema.ViewFrame` (the spectator view's JSON
carried as it is, encoded once per frame) between processes; in one process a published
snapshot is handed to the edge by reference (:data:`VIEW_CODEC`: the owner's view, never
encoded nor decoded; the copy rule of :mod:`meeple.bus.base`: nobody changes a feed's
snapshot). Every snapshot carries a *version* (its
``at``): the actions logged, the owner's lease epoch, and the
owner's count of snapshots. An edge keeps only what is newer than what it has, so a
spectator's frames only move forward, across a failover too (a new owner has a higher
epoch; a snapshot of the same logged actions from the old owner that arrives late is
older).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from meeple.bus.base import Bus, BusClosed, BusError, Sealed, Subscription
from meeple.bus.codec import WireError, refused
from meeple.bus.schema import ViewFrame, decode, encode
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.ask import ask
from meeple.server.config import ClusterConfig
from meeple.server.feed import Feed, FeedItem, game_topic

__all__ = ["VIEW_CODEC", "View", "ViewCodec", "ViewRelay", "ViewSource"]

logger = logging.getLogger(__name__)


Version = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class View:
    """A room's spectator snapshot on the bus: its version (module doc) and the view as
    the web pages read it; ``item``: the owner's feed item it is (its JSON made once),
    None for one decoded from bytes."""

    at: Version
    data: dict[str, Any]
    item: FeedItem | None = None


class ViewCodec:
    """:class:`View` as a :class:`~meeple.bus.schema.ViewFrame`'s bytes and back (a bus
    :class:`~meeple.bus.base.Codec`); a view sealed with it crosses one process as it
    is (:data:`VIEW_CODEC`)."""

    def encode(self, value: Any) -> bytes:
        view: View = value
        text = view.item.json() if view.item is not None else msgspec.json.encode(view.data)
        raw = text.encode() if isinstance(text, str) else text
        return encode(ViewFrame(at=view.at, data=msgspec.Raw(raw)))

    def decode(self, data: bytes, expect: Any = object) -> Any:
        frame = decode(data, ViewFrame)
        try:
            view = msgspec.json.decode(frame.data, type=dict[str, Any])
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise WireError("type", f"a view's data: {e}"[:200]) from None
        return View(frame.at, view)

    def fits(self, value: object, expect: Any) -> bool:
        return isinstance(value, View)


#: The views' codec (a view sealed with it is read by reference with it).
VIEW_CODEC = ViewCodec()


def _encode(version: Version, item: FeedItem) -> bytes:
    return VIEW_CODEC.encode(View(version, item.data, item))


def _sealed(version: Version, item: FeedItem) -> Sealed:
    return Sealed(View(version, item.data, item), VIEW_CODEC)


class _Watched:
    """A room whose views the owner publishes: its feed subscription and pump."""

    def __init__(self, subscription: Any, until: float) -> None:
        self.subscription = subscription
        self.until = until
        self.pump: asyncio.Task[None] | None = None


class ViewSource:
    """A rooms node's side: its rooms publish into :attr:`feed`; watched rooms' snapshots
    go out on their view subjects (module docstring)."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        *,
        clock: Callable[[], float] = time.monotonic,
        timing: ClusterConfig | None = None,
    ) -> None:
        self.bus = bus
        self.timing = timing or ClusterConfig()
        self.ns = ns
        self.clock = clock
        self.feed = Feed()
        self._watched: dict[str, _Watched] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def watch(self, room: Any, epoch: int) -> bytes:
        """An edge asks for room ``room``'s views: publish them for ``watch_ttl``
        seconds more; the answer is the current snapshot."""
        uid = room.uid
        topic = game_topic(uid)
        watched = self._watched.get(uid)
        if watched is None:
            watched = self._watched[uid] = _Watched(
                self.feed.subscribe(topic), self.clock() + self.timing.watch_ttl
            )
            watched.pump = asyncio.ensure_future(self._pump(room, epoch, watched))
            if self._sweeper is None:
                self._sweeper = asyncio.ensure_future(self._sweep())
        watched.until = self.clock() + self.timing.watch_ttl
        if self.feed.last(topic) is None:
            room.publish()  # stale while nobody watched: build it now
        item = self.feed.last(topic)
        if item is None:
            return b""
        return _encode((len(room.logged_actions), epoch, item.seq), item)

    async def _pump(self, room: Any, epoch: int, watched: _Watched) -> None:
        subject = self.ns.view(room.uid)
        while True:
            item = await watched.subscription.get()
            version = (len(room.logged_actions), epoch, item.seq)
            with contextlib.suppress(BusError):
                await self.bus.publish(subject, _sealed(version, item))

    async def _sweep(self) -> None:
        while self._watched:
            await asyncio.sleep(self.timing.watch_sweep)
            now = self.clock()
            for uid, watched in list(self._watched.items()):
                if now > watched.until:
                    self.forget(uid)
        self._sweeper = None

    def forget(self, uid: str) -> None:
        watched = self._watched.pop(uid, None)
        if watched is None:
            return
        watched.subscription.close()
        if watched.pump is not None:
            watched.pump.cancel()

    async def room_gone(self, room: Any, epoch: int) -> None:
        """The room left this node (closed, or moved): its last snapshots go out first."""
        watched = self._watched.get(room.uid)
        if watched is not None:
            while (item := watched.subscription.get_nowait()) is not None:
                version = (len(room.logged_actions), epoch, item.seq)
                with contextlib.suppress(BusError):
                    await self.bus.publish(self.ns.view(room.uid), _sealed(version, item))
        self.forget(room.uid)
        self.feed.forget(game_topic(room.uid))

    def close(self) -> None:
        for uid in list(self._watched):
            self.forget(uid)
        if self._sweeper is not None:
            self._sweeper.cancel()


class _Relayed:
    def __init__(self) -> None:
        self.subscription: Subscription | None = None
        self.asker: asyncio.Task[None] | None = None


class ViewRelay:
    """An edge's side: rooms watched by its spectators, from the bus into :attr:`feed`."""

    def __init__(self, bus: Bus, ns: Namespace, *, timing: ClusterConfig | None = None) -> None:
        self.bus = bus
        self.timing = timing or ClusterConfig()
        self.ns = ns
        self.feed = Feed()
        self._rooms: dict[str, _Relayed] = {}
        self._versions: dict[str, Version] = {}  # uid -> the newest snapshot's version
        self._closing: set[asyncio.Future[None]] = set()

    @staticmethod
    def uid_of(topic: str) -> str | None:
        return topic.removeprefix("game:") if topic.startswith("game:") else None

    async def exists(self, uid: str) -> bool:
        """Whether room ``uid`` runs: this edge relays it to its spectators and its last
        snapshot is of a game not over, or its owner answers with such a snapshot (then
        in the feed). A snapshot this edge only asked for once is not trusted later: the
        room may have ended since, and nothing would tell this edge (a finished game's
        page would stay "live" here for good instead of its replay)."""
        if uid in self._rooms and self.feed.last(game_topic(uid)) is not None:
            return not self._over(uid)
        try:
            answer = await self.bus.request(
                self.ns.room_command(uid), wire.dumps(wire.Watch()), timeout=self.timing.watch_wait
            )
        except (BusError, ValueError):
            return False
        self._answer(uid, answer)
        return self.feed.last(game_topic(uid)) is not None and not self._over(uid)

    def watch(self, topic: str) -> None:
        """The edge's first spectator of ``topic``: subscribe to the room's views."""
        uid = self.uid_of(topic)
        if uid is None or uid in self._rooms:
            return
        relayed = self._rooms[uid] = _Relayed()
        relayed.asker = asyncio.ensure_future(self._ask(uid, relayed))

    def unwatch(self, topic: str) -> None:
        """The edge's last spectator of ``topic`` left."""
        uid = self.uid_of(topic)
        relayed = None if uid is None else self._rooms.pop(uid, None)
        if uid is None or relayed is None:
            return
        if relayed.asker is not None:
            relayed.asker.cancel()
        if relayed.subscription is not None:
            closing = asyncio.ensure_future(_close(relayed.subscription))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)
        self._versions.pop(uid, None)
        self.feed.forget(topic)  # nobody here watches it: a stale snapshot helps nobody

    async def _ask(self, uid: str, relayed: _Relayed) -> None:
        async def heard(_subject: str, view: View) -> None:
            self._heard(uid, view)
            if self._over(uid) and relayed.asker is not None:
                relayed.asker.cancel()  # no more asks: the room is over

        try:
            relayed.subscription = await self.bus.listen(self.ns.view(uid), heard, VIEW_CODEC, View)
        except BusError as e:
            logger.warning("views: cannot subscribe to room %s: %r", uid, e)
            return
        while True:
            try:
                # No owner now (a takeover), or one that fails: asked again, for as
                # long as the edge has spectators of the room (unwatch cancels this).
                answer = await ask(
                    self.bus,
                    self.ns.room_command(uid),
                    wire.dumps(wire.Watch()),
                    self.timing,
                    wait=self.timing.watch_wait,
                    pause=self.timing.watch_pause,
                    forever=True,
                    again=_always,
                )
            except BusClosed:
                return
            self._answer(uid, answer)
            if self._over(uid):
                return  # its last snapshot is here; the room is gone from its owner
            await asyncio.sleep(self.timing.watch_renew)

    def _over(self, uid: str) -> bool:
        last = self.feed.last(game_topic(uid))
        return last is not None and bool(last.data.get("finished"))

    def _answer(self, uid: str, payload: bytes) -> None:
        """An owner's answer to a ``Watch``: its current snapshot (none: empty)."""
        if not payload:
            return
        try:
            view = VIEW_CODEC.decode(payload, View)
        except wire.WireError as e:
            refused(self.ns.view(uid), e)  # once per kind of fault, not per message
            return
        self._heard(uid, view)

    def _heard(self, uid: str, view: View) -> None:
        if view.at <= self._versions.get(uid, (-1, -1, -1)):
            return  # older than what the spectators have: frames only move forward
        self._versions[uid] = view.at
        data = view.data
        self.feed.publish(game_topic(uid), lambda: data)

    def close(self) -> None:
        for topic in [game_topic(uid) for uid in self._rooms]:
            self.unwatch(topic)


def _always(error: BusError) -> bool:
    """A view's ask: every error is asked again (the room may be moving)."""
    return True


async def _close(subscription: Subscription) -> None:
    with contextlib.suppress(BusError):
        await subscription.close()

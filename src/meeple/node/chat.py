"""Chat outside a game across a cluster's edges (Spectrangle's chat extension).

In ``meeple serve`` a Spectrangle line ``chat <message>`` from a player at no game goes
to every Spectrangle player at no game who agreed the chat extension, the sender
included (``chat <name> <message>``: spec 1.4, "Chat extension"; meeple's reading,
``meeple.server.edge.spectrangle``). On a cluster those players are spread over the
edges, so an edge's hub is a :class:`LobbyChat`: it tells its own players at once, as
``meeple serve``'s hub does, and publishes the line on ``<ns>.lobby.chat.<game>``; every
other edge hears it there and tells its own players. So each player hears a line once
(an edge drops its own lines coming back), and one sender's lines in the order sent (an
edge publishes them in order from one connection; NATS keeps one publisher's order, and
a subscription is read in order).

What crosses is the sender's name and the text it typed (a
:class:`~meeple.bus.schema.ChatLine`), nothing of any game:
no hidden information can be in it. A line that is not one (an edge of another version,
a newline in it) is dropped. Chat in a game goes through the game's room, as before.

**The spectators' chat of a game** (issue 34.5; docs/web.md, "Live game") works the same
way (:class:`WatchChatRelay`): a browser watching a game on one edge writes a line; its
edge writes it to its own watchers of the game at once (``meeple serve``'s path) and
publishes it on ``<ns>.watchchat.<uid>`` (:class:`~meeple.bus.schema.WatchChatLine`); each
edge with watchers of the game subscribes there (from its first watcher to its last,
as it does to the game's views) and writes what it hears to its own watchers. The edge
checks a browser's line (it watches the game, is within the chat rate, is no player of
the game while it runs, the name is one: ``meeple.web.app``) before it publishes; a
line heard from the bus is checked again against the same limits (a game's uid, a name,
one line of at most 500 characters, no control characters) and any other is dropped.
The players' seats never hear it: it goes only to the game's watchers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable

from meeple.bus.base import Bus, BusClosed, BusError, Sealed, Subscription
from meeple.bus.schema import CODEC, ChatLine, SchemaCodec, WatchChatLine
from meeple.bus.subjects import Namespace
from meeple.protocols import web as proto
from meeple.server.edge.spectrangle import SpectrangleHub
from meeple.server.feed import game_topic
from meeple.server.rooms.spectrangle import GAME
from meeple.web.fanout import text_frame

__all__ = ["LobbyChat", "WatchChatRelay"]

logger = logging.getLogger(__name__)

# Lines an edge holds to publish (beyond them, while the bus is stuck, it drops them).
OUTBOX = 1024


class LobbyChat(SpectrangleHub):
    """An edge's Spectrangle hub: see the module doc."""

    def __init__(self, bus: Bus, ns: Namespace, node: str, game: str = GAME) -> None:
        super().__init__()
        self.bus = bus
        self.subject = ns.lobby_chat(game)
        # This process's lines (a restarted edge is another origin).
        self.origin = f"{node}.{secrets.token_hex(4)}"
        self._outbox: asyncio.Queue[Sealed] = asyncio.Queue(OUTBOX)
        self._sender: asyncio.Task[None] | None = None
        self._sub: Subscription | None = None

    async def start(self) -> None:
        self._sub = await self.bus.listen(self.subject, self._heard, CODEC, ChatLine)
        self._sender = asyncio.get_running_loop().create_task(self._send(), name="lobby chat")

    def lobby_chat(self, sender: str, text: str) -> None:
        super().lobby_chat(sender, text)  # this edge's players, the sender among them
        line = ChatLine(origin=self.origin, sender=sender, text=text)
        try:
            self._outbox.put_nowait(Sealed(line, CODEC))  # frozen: by reference in one process
        except asyncio.QueueFull:
            logger.warning("lobby chat: %d lines not sent yet; %s's dropped", OUTBOX, sender)

    async def _send(self) -> None:
        while True:
            payload = await self._outbox.get()
            try:
                await self.bus.publish(self.subject, payload)
            except BusClosed:
                return
            except BusError as e:
                logger.warning("lobby chat: a line not sent: %s", e)

    async def _heard(self, subject: str, line: ChatLine) -> None:
        origin, sender, text = line.origin, line.sender, line.text
        if origin == self.origin or any(c in sender + text for c in "\r\n"):
            return  # this edge's own (its players heard it), or not one line
        super().lobby_chat(sender, text)

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
        if self._sub is not None:
            with contextlib.suppress(BusError):
                await self._sub.close()


#: The most bytes a spectators' chat line between edges may hold: the browser's line (500
#: characters of at most 4 bytes, a 24-character name, a uid) with room to spare.
WATCH_CHAT_BYTES = 4096

#: Where an edge writes a game's spectators' chat line: its fanout's ``say`` (the topic,
#: one encoded frame; meeple.web.fanout.Fanout.say).
Say = Callable[[str, bytes], object]

#: The spectators' chat lines' codec: the schema's, at most :data:`WATCH_CHAT_BYTES`.
WATCH_CODEC = SchemaCodec(WATCH_CHAT_BYTES)


class WatchChatRelay:
    """An edge's side of the spectators' chat across a cluster; read the module doc.

    :meth:`watch` and :meth:`unwatch` follow the edge's first and last watcher of a game
    (the fanout's ``on_first`` and ``on_last``, beside the views' relay); :meth:`say`
    writes a browser's line here and publishes it for the other edges."""

    def __init__(self, bus: Bus, ns: Namespace, node: str, say: Say | None = None) -> None:
        self.bus = bus
        self.ns = ns
        self.say_here: Say = say or (lambda _topic, _frame: 0)
        # This process's lines (a restarted edge is another origin).
        self.origin = f"{node}.{secrets.token_hex(4)}"
        self._outbox: asyncio.Queue[tuple[str, Sealed]] = asyncio.Queue(OUTBOX)
        self._sender: asyncio.Task[None] | None = None
        self._subs: dict[str, asyncio.Task[Subscription | None]] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def watch(self, topic: str) -> None:
        """The edge's first watcher of ``topic``: hear the game's spectators' chat."""
        uid = _uid_of(topic)
        if uid is None or uid in self._subs:
            return
        self._subs[uid] = asyncio.ensure_future(self._subscribe(uid))

    def unwatch(self, topic: str) -> None:
        """The edge's last watcher of ``topic`` left: hear it no more."""
        uid = _uid_of(topic)
        task = None if uid is None else self._subs.pop(uid, None)
        if task is None:
            return
        closing = asyncio.ensure_future(_unsubscribe(task))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    def say(self, uid: str, sender: str, text: str) -> None:
        """A browser's line (checked by its connection): to this edge's watchers of game
        ``uid`` now, and on the bus for the others'."""
        self.say_here(game_topic(uid), _frame(uid, sender, text))
        line = WatchChatLine(origin=self.origin, uid=uid, sender=sender, text=text)
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._send())
        try:
            self._outbox.put_nowait((self.ns.watch_chat(uid), Sealed(line, WATCH_CODEC)))
        except asyncio.QueueFull:
            logger.warning("watch chat: %d lines not sent yet; %s's dropped", OUTBOX, sender)

    async def _subscribe(self, uid: str) -> Subscription | None:
        async def heard(_subject: str, line: WatchChatLine) -> None:
            self._heard(uid, line)

        try:
            return await self.bus.listen(self.ns.watch_chat(uid), heard, WATCH_CODEC, WatchChatLine)
        except BusError as e:
            logger.warning("watch chat: cannot subscribe to game %s: %r", uid, e)
            return None

    def _heard(self, uid: str, line: WatchChatLine) -> None:
        """A line from the bus (bytes from another edge decoded by :data:`WATCH_CODEC`,
        at most :data:`WATCH_CHAT_BYTES`, else refused once per kind of fault; in one
        process the sender's own value), checked again as a browser's."""
        if line.origin == self.origin:
            return  # this edge's own: its watchers had it at once
        if line.uid != uid or proto.watch_chat_problem(line.uid, line.sender, line.text):
            logger.debug("watch chat: a line for game %s dropped", uid)
            return
        self.say_here(game_topic(uid), _frame(uid, line.sender, line.text))

    async def _send(self) -> None:
        while True:
            subject, payload = await self._outbox.get()
            try:
                await self.bus.publish(subject, payload)
            except BusClosed:
                return
            except BusError as e:
                logger.warning("watch chat: a line not sent: %s", e)

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
        for uid in list(self._subs):
            self.unwatch(game_topic(uid))
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


def _uid_of(topic: str) -> str | None:
    return topic.removeprefix("game:") if topic.startswith("game:") else None


def _frame(uid: str, sender: str, text: str) -> bytes:
    """The browser's frame of a line (the same as ``meeple serve``'s: its escaping too)."""
    return text_frame(proto.WatchChatLine(uid, sender, text).encode().encode())


async def _unsubscribe(task: asyncio.Task[Subscription | None]) -> None:
    try:
        subscription = await task
    except (asyncio.CancelledError, BusError):
        return
    if subscription is not None:
        with contextlib.suppress(BusError):
            await subscription.close()

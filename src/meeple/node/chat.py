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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

from meeple.bus.base import Bus, BusClosed, BusError, Subscription
from meeple.bus.schema import ChatLine, decode, encode
from meeple.bus.subjects import Namespace
from meeple.server.edge.spectrangle import SpectrangleHub
from meeple.server.rooms.spectrangle import GAME

__all__ = ["LobbyChat"]

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
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX)
        self._sender: asyncio.Task[None] | None = None
        self._sub: Subscription | None = None

    async def start(self) -> None:
        self._sub = await self.bus.subscribe(self.subject, self._heard)
        self._sender = asyncio.get_running_loop().create_task(self._send(), name="lobby chat")

    def lobby_chat(self, sender: str, text: str) -> None:
        super().lobby_chat(sender, text)  # this edge's players, the sender among them
        line = ChatLine(origin=self.origin, sender=sender, text=text)
        try:
            self._outbox.put_nowait(encode(line))
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

    async def _heard(self, subject: str, payload: bytes) -> None:
        line = decode(payload, ChatLine)  # else refused, once
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

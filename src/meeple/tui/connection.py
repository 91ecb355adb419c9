"""The interface between a game's terminal app and the network: events in, moves out.

An app never sees a protocol. It is given a :data:`Connector` (an async function that
takes :class:`ConnectOptions` and returns a :class:`Connection`), calls it once, then
reads :meth:`Connection.events` until it ends and calls :meth:`Connection.send` for
every move the player makes. Events and moves are the game package's own frozen
dataclasses (for Scrabble :mod:`meeple.tui.scrabble.events`), so the same app runs over
Twente, Clarkson or CMPN402 once each has an adapter.

An adapter raises :class:`ConnectFailed` from the connector when it cannot get in
(refused connection, name taken) and ends ``events()`` when the connection ends; a
move the protocol cannot even express (bad notation, a word off the board) raises
:class:`MoveError` from ``send`` with a sentence for the player.

What the client library says about the server while the app waits (a message it could
not take, a wait on an answer that does not come: issue 31) reaches the app as
:class:`ServerNotice` events, for its status line; :class:`StatusFeed` is how an
adapter collects those sentences while a read is still under way, and
:class:`ClientAdapter` the base of an adapter over one of meeple's client libraries.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from meeple.clients.connection import ClientConnection
from meeple.tui.table import ConnectionLost

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "ClientAdapter",
    "ConnectFailed",
    "ConnectOptions",
    "Connection",
    "Connector",
    "MoveError",
    "ServerNotice",
    "StatusFeed",
]

# Seconds an adapter waits to be let in (the server's welcome or first message) before
# the connector raises ConnectFailed.
HANDSHAKE_TIMEOUT = 10.0

EventT_co = TypeVar("EventT_co", covariant=True)
MoveT_contra = TypeVar("MoveT_contra", contravariant=True)
T = TypeVar("T")
E = TypeVar("E")
C = TypeVar("C", bound=ClientConnection[Any])


def _closed(error: Exception) -> str:
    return str(error) or "connection closed"


class ConnectFailed(Exception):
    """Could not connect or was not let in; the message is for the player."""


class MoveError(Exception):
    """A move that cannot be sent at all (the server was not asked); say why to the player."""


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """Where to connect and who to be. ``players`` is the table size asked for;
    ``gods`` asks for a game with god powers where the game has them (Santorini)."""

    host: str
    port: int
    name: str
    players: int = 2
    gods: bool = False


class Connection(Protocol[EventT_co, MoveT_contra]):
    """One player's link to a game server, as the app sees it."""

    def events(self) -> AsyncIterator[EventT_co]:
        """Every event in order; the iterator ends when the connection does."""
        ...

    async def send(self, move: MoveT_contra) -> None:
        """Send a move (or chat); raise :class:`MoveError` if it cannot be expressed."""
        ...

    async def close(self) -> None:
        """Leave: close the connection (safe to call twice)."""
        ...


Connector = Callable[[ConnectOptions], Awaitable[Connection[EventT_co, MoveT_contra]]]


@dataclass(frozen=True, slots=True)
class ServerNotice:
    """A sentence about the server for the status line: a message the client could not
    take (the first of each kind, with its bytes), or how long it has waited on an
    answer that does not come and what it does then."""

    text: str


class StatusFeed:
    """The sentences a client library says (its ``say`` callback) while the adapter
    waits on a read, handed to the adapter as they come."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._said = asyncio.Event()

    def say(self, text: str) -> None:
        self._texts.append(text)
        self._said.set()

    async def until(self, task: asyncio.Future[Any]) -> list[str]:
        """Wait until ``task`` is done or something is said; return what was said."""
        if not task.done() and not self._texts:
            said = asyncio.ensure_future(self._said.wait())
            either: set[asyncio.Future[Any]] = {task, said}
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                said.cancel()
        texts, self._texts = self._texts, []
        self._said.clear()
        return texts

    async def messages(
        self,
        receive: Callable[[], Awaitable[T]],
        errors: tuple[type[Exception], ...],
        reason: Callable[[Exception], str] = _closed,
    ) -> AsyncGenerator[T | ServerNotice | ConnectionLost, None]:
        """Every message of a client library, one ``receive()`` at a time, with what it
        says while a read is under way (:class:`ServerNotice`); the first of ``errors``
        ends them with :class:`~meeple.tui.table.ConnectionLost` (``reason`` of it: by
        default its text, else "connection closed"). What an adapter's ``events()``
        reads; close it (``contextlib.aclosing``) when stopping early."""
        while True:
            read = asyncio.ensure_future(receive())
            try:
                while not read.done():
                    for text in await self.until(read):
                        yield ServerNotice(text)
                message = read.result()
            except errors as e:
                yield ConnectionLost(reason(e))
                return
            finally:
                read.cancel()
            yield message

    async def relay(
        self,
        receive: Callable[[], Awaitable[T]],
        errors: tuple[type[Exception], ...],
        translate: Callable[[T], Awaitable[Sequence[E]]],
        reason: Callable[[Exception], str] = _closed,
    ) -> AsyncGenerator[E | ServerNotice | ConnectionLost, None]:
        """What an adapter's ``events()`` hands the app: :meth:`messages`, each message as
        the app's events ``translate`` makes of it. Notices and the end pass as they are;
        a :class:`~meeple.tui.table.ConnectionLost` that ``translate`` makes (the adapter
        saw the end in a message: a goodbye, a refused name) is the last event."""
        async with contextlib.aclosing(self.messages(receive, errors, reason)) as got:
            async for message in got:
                if isinstance(message, ServerNotice | ConnectionLost):
                    yield message
                    continue
                for event in await translate(message):
                    yield event
                    if isinstance(event, ConnectionLost):
                        return


class ClientAdapter(Generic[C]):
    """The base of an adapter over a client library (Twente, Clarkson, Spectrangle): it
    holds the client, sends what the client says about the server (a message it cannot
    take, a wait on an answer) to the status line as :class:`ServerNotice` rather than
    to a log (issue 31), and closes the client."""

    def __init__(self, client: C) -> None:
        self._client = client
        self._status = StatusFeed()
        client.say = self._status.say

    async def close(self) -> None:
        await self._client.close()

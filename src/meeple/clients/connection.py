"""The connection every TCP protocol client shares: the stream, the patience, the notes.

:class:`ClientConnection` holds what the Twente, Clarkson, Spectrangle and AM27 clients
do alike with their socket: read within :class:`~meeple.clients.watch.Patience` while
the server owes an answer (:meth:`~ClientConnection._read`), write a command and restart
the wait (:meth:`~ClientConnection._put`), close the connection when its opening goes
wrong (:meth:`~ClientConnection._opening`), log a server message it cannot take once per
kind (:meth:`~ClientConnection._note`), iterate over the server's messages until the
client's own error ends the stream, and close. A client subclasses it with its session,
what it tracks of the game, :attr:`~ClientConnection.expected` and
:meth:`~ClientConnection.receive`; :class:`SessionClient` is the :meth:`receive` of a
client whose session turns each read into events (Twente, Clarkson, AM27), and
:class:`WelcomedClient` the :meth:`~WelcomedClient.connect` of a client that names itself
in its first message and waits for the welcome (Twente, Spectrangle).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import ClassVar, Generic, Protocol, Self, TypeVar

from meeple.clients.watch import Expected, NoAnswer, Patience, Stopwatch, Unreadable, read_owed

__all__ = [
    "READ_SIZE",
    "ClientConnection",
    "EventSource",
    "SessionClient",
    "WelcomedClient",
]

READ_SIZE = 65536  # bytes asked of the socket per read

M = TypeVar("M")
E = TypeVar("E")
E_co = TypeVar("E_co", covariant=True)


class EventSource(Protocol[E_co]):
    """A client session as :class:`SessionClient` reads it: bytes in, events out."""

    def receive_data(self, data: bytes) -> Sequence[E_co]: ...

    def receive_eof(self) -> Sequence[E_co]: ...


class ClientConnection(Generic[M]):
    """One client's connection to a server; ``M`` is what :meth:`receive` hands out.

    ``ERROR`` is the client's own exception: :meth:`receive` raises it when the stream
    ends, and iterating over the client (``async for message in client``) stops there.
    ``LOGGER`` is where its notes go; :meth:`_setup` makes the rest of its state.
    """

    ERROR: ClassVar[type[Exception]]
    LOGGER: ClassVar[logging.Logger]  # the client module's log

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        patience: Patience | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.patience = patience or Patience()
        # Where notices go: the log by default, a status line in the terminal client.
        self.say: Callable[[str], None] = say or self._log
        self.unreadable = Unreadable("", self.LOGGER)
        self._stopwatch = Stopwatch(self.patience.clock)
        self._setup()

    def _setup(self) -> None:
        """The client's own state, set last by ``__init__``: its session and what it
        tracks of the game (by default nothing)."""

    @property
    def expected(self) -> Expected | None:
        """What the server owes us now, if anything (None: nothing is awaited)."""
        return None

    async def receive(self) -> M:
        """The next server message; :attr:`ERROR` at the end of the stream."""
        raise NotImplementedError

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()

    def __aiter__(self) -> AsyncIterator[M]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[M]:
        while True:
            try:
                message = await self.receive()
            except self.ERROR:
                return
            yield message
            if self._ends_stream(message):
                return

    @contextlib.asynccontextmanager
    async def _opening(self) -> AsyncIterator[None]:
        """Around a client's opening exchange (its hello, the server's welcome): whatever
        goes wrong closes the connection, and an answer the server never gives
        (:class:`~meeple.clients.watch.NoAnswer`) is raised as :attr:`ERROR`."""
        try:
            yield
        except NoAnswer as e:
            await self.close()
            raise self.ERROR(str(e)) from None
        except BaseException:
            await self.close()
            raise

    def _ends_stream(self, message: M) -> bool:
        """Whether nothing follows ``message`` (Clarkson's GOODBYE); by default no message."""
        return False

    async def _read(self) -> bytes:
        """One read of the socket, within :attr:`patience` while :attr:`expected` is owed
        (said through :attr:`say`); ``b""`` at the end of the stream."""
        return await read_owed(
            self._reader, READ_SIZE, self.expected, self.patience, self.say, self._stopwatch
        )

    def _put(self, data: bytes) -> None:
        """Write a command's bytes: what it awaits is awaited from now (drain after)."""
        self._writer.write(data)
        self._stopwatch.restart()

    def _who(self) -> str:
        """The name this client goes by, for its log lines."""
        return self.unreadable.who

    def _log(self, text: str) -> None:
        self.LOGGER.warning("%s: %s", self._who() or self.unreadable.who or "client", text)

    def _note(self, kind: str, reason: str, data: bytes) -> None:
        """A server message we cannot take: logged once per kind, never raised."""
        text = self.unreadable.note(kind, reason, data)
        if text is not None and self.say != self._log:
            self.say(text)


class WelcomedClient(ClientConnection[M]):
    """A client that names itself in its first message and waits for the welcome
    (Twente's ANNOUNCE and WELCOME, Spectrangle's connect and welcome).

    A subclass sends its hello in :meth:`_greet` and reads the answer in
    :meth:`_welcomed`; :meth:`connect` does the rest.
    """

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        name: str,
        *,
        chat: bool = False,
        patience: Patience | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Self:
        """Connect and send the hello naming ``name`` (asking for chat when ``chat``);
        returns once welcomed (:attr:`ERROR` if refused, or if no answer comes within
        ``patience``)."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer, patience=patience, say=say)
        client.unreadable.who = name
        async with client._opening():
            await client._greet(name, chat)
            reply = await client.receive()
        refusal = client._welcomed(name, reply)
        if refusal is not None:
            await client.close()
            raise cls.ERROR(refusal)
        return client

    async def _greet(self, name: str, chat: bool) -> None:
        """Send the hello that names ``name`` and asks for chat if ``chat``."""
        raise NotImplementedError

    def _welcomed(self, name: str, reply: M) -> str | None:
        """Take the server's answer to the hello: None when it welcomes us (what it says
        is noted), else why it did not, for :attr:`ERROR`."""
        raise NotImplementedError


class SessionClient(ClientConnection[M], Generic[E, M]):
    """A client whose :attr:`session` turns each read into events ``E``, of which the
    server's messages ``M`` are handed out one at a time by :meth:`receive`.

    A subclass sets :attr:`session` and says what each event is (:meth:`_take`: a message
    to hand out, or None for one it noted or ignored) and what it learns from a message
    when it hands it out (:meth:`_handed`).
    """

    session: EventSource[E]
    _pending: list[M]  # what was read and not yet handed out; set by the subclass

    async def receive(self) -> M:
        """The next server message (state updated first); :attr:`ERROR` at the end,
        :class:`~meeple.clients.watch.NoAnswer` when an answer the server owes does not
        come within :attr:`patience` (said through :attr:`say` as the wait goes on)."""
        while not self._pending:
            data = await self._read()
            events = self.session.receive_data(data) if data else self.session.receive_eof()
            for event in events:
                message = self._take(event, data)
                if message is not None:
                    self._pending.append(message)
            if not data and not self._pending:
                raise self.ERROR("connection closed by the server")
        # What the client knows is as of the message handed out, not of everything in
        # the same read: one read can hold a turn for the other player and, after their
        # move, a turn for us; acting on the first with the second's state played a move
        # twice (Clarkson: NOK, or a tile on an occupied square).
        message = self._pending.pop(0)
        self._handed(message)
        return message

    def _take(self, event: E, data: bytes) -> M | None:
        """What an event of the session is: a message to hand out, or None (noted with
        :meth:`_note`, or nothing to say); ``data`` is the read it came in."""
        raise NotImplementedError

    def _handed(self, message: M) -> None:
        """What the client learns from ``message`` as it hands it out (by default nothing)."""

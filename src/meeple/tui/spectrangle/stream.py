"""Spectrangle 1.4 for the terminal app: the sans-I/O
:class:`~meeple.protocols.spectrangle.session.ClientSession` in a thin asyncio stream loop.

This is deliberately small and private to the terminal client: the general async
client library for Spectrangle is ``meeple.clients.spectrangle`` (written separately);
when it lands, an adapter over it can replace this one in
:data:`meeple.tui.registry.GAMES` with a one-line change.

What it adds to the session: the handshake (``connect <name> chat``, then
``request <n>``), events in game terms, error words in sentences
(:data:`REFUSALS`), and lines the session refuses to send (a move out of turn)
turned into :class:`~meeple.tui.connection.MoveError` instead of bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from meeple.protocols.spectrangle.errors import ErrorWord, LocalProtocolError
from meeple.protocols.spectrangle.messages import (
    CHAT_EXTENSION,
    Chat,
    ChatFrom,
    ClientMessage,
    Connect,
    ErrorReply,
    Exchange,
    GameFinished,
    Move,
    Order,
    Place,
    PlayerSkipped,
    Replace,
    Request,
    ServerMessage,
    Skip,
    SkipNotice,
    StartWith,
    Tiles,
    Waiting,
    Welcome,
)
from meeple.protocols.spectrangle.messages import (
    PlayerLeft as PlayerLeftMessage,
)
from meeple.protocols.spectrangle.session import ClientSession, ProtocolViolation
from meeple.tui.connection import ConnectFailed, ConnectOptions, MoveError
from meeple.tui.spectrangle.events import (
    ChatReceived,
    ConnectionLost,
    Exchanged,
    ExchangeTile,
    GameEnded,
    HandsDealt,
    Placed,
    PlaceTile,
    PlayerLeft,
    Queued,
    Refused,
    Say,
    Skipped,
    SkipTurn,
    SpectrangleEvent,
    SpectrangleMove,
    Started,
    Welcomed,
)

__all__ = ["REFUSALS", "SpectrangleStream", "connect"]

logger = logging.getLogger(__name__)

READ_SIZE = 65536
HANDSHAKE_TIMEOUT = 10.0

REFUSALS: dict[ErrorWord, str] = {
    ErrorWord.INVALID_MOVE: "that tile cannot go there: it must touch a tile and match "
    "every touching side (white matches all), and the first tile may not go on a bonus field",
    ErrorWord.INVALID_COMMAND: "the server did not accept that now (not your turn, or not "
    "a command it knows)",
    ErrorWord.INVALID_NAME: "the name is taken or not allowed (no spaces); choose another "
    "with --name",
}


def refusal_text(word: ErrorWord) -> str:
    """``invalidMove: that tile cannot go there ...``."""
    return f"{word.value}: {REFUSALS[word]}"


class SpectrangleStream:
    """A :class:`~meeple.tui.connection.Connection` for Spectrangle over one TCP stream."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        session: ClientSession,
        name: str,
        pending: list[ServerMessage],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.session = session
        self.name = name
        self._pending = pending
        self._players: tuple[str, ...] = ()

    async def events(self) -> AsyncIterator[SpectrangleEvent]:
        yield Welcomed(self.name, self.session.chat_enabled)
        while True:
            while self._pending:
                event = self._translate(self._pending.pop(0))
                if event is not None:
                    yield event
            try:
                data = await self._reader.read(READ_SIZE)
            except OSError as e:
                yield ConnectionLost(str(e))
                return
            if not data:
                yield ConnectionLost("connection closed by the server")
                return
            for item in self.session.receive_data(data):
                if isinstance(item, ProtocolViolation):
                    logger.info("%s: ignored a server line: %s", self.name, item.error)
                else:
                    self._pending.append(item)

    def _translate(self, message: ServerMessage) -> SpectrangleEvent | None:
        if isinstance(message, Waiting):
            return Queued(message.names)
        if isinstance(message, StartWith):
            self._players = message.names
            return None  # reported with the order, which follows at once
        if isinstance(message, Order):
            return Started(self._players or message.names, message.names)
        if isinstance(message, Tiles):
            hands = tuple((h.name, h.held) for h in message.hands)
            mine = message.player == self.name
            return HandsDealt(hands, message.player, message.must_skip, mine)
        if isinstance(message, SkipNotice):  # 1.3 servers: "must skip" on its own line
            return None
        if isinstance(message, Move):
            return Placed(message.name, message.tile, message.index, message.points)
        if isinstance(message, PlayerSkipped):
            return Skipped(message.name)
        if isinstance(message, Replace):
            return Exchanged(message.name, message.tile, message.new_tile)
        if isinstance(message, ErrorReply):
            return Refused(message.word.value, refusal_text(message.word))
        if isinstance(message, ChatFrom):
            return ChatReceived(message.name, message.text)
        if isinstance(message, PlayerLeftMessage):
            return PlayerLeft(message.name)
        if isinstance(message, GameFinished):
            return GameEnded(message.leaderboard)
        return None

    async def send(self, move: SpectrangleMove) -> None:
        message: ClientMessage
        if isinstance(move, PlaceTile):
            message = Place(move.tile, move.index)
        elif isinstance(move, SkipTurn):
            message = Skip()
        elif isinstance(move, ExchangeTile):
            message = Exchange(move.tile)
        else:
            message = Chat(move.text)
        try:
            data = self.session.send(message)
        except LocalProtocolError:
            if isinstance(move, Say):
                raise MoveError("chat is not on: the server did not agree to it") from None
            raise MoveError("not now: wait for your turn") from None
        except ValueError as e:
            raise MoveError(str(e)) from None
        try:
            self._writer.write(data)
            await self._writer.drain()
        except OSError as e:
            raise MoveError(f"could not send: {e}") from None

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()


async def connect(options: ConnectOptions) -> SpectrangleStream:
    """Connect, ``connect <name> chat``, wait for welcome, then ``request <players>``."""
    try:
        reader, writer = await asyncio.open_connection(options.host, options.port)
    except OSError as e:
        raise ConnectFailed(
            f"cannot reach a Spectrangle server at {options.host}:{options.port} "
            f"({e.strerror or e})"
        ) from None
    session = ClientSession()
    pending: list[ServerMessage] = []
    try:
        writer.write(session.send(Connect(options.name, (CHAT_EXTENSION,))))
        await writer.drain()
        welcomed = False
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            while not welcomed:
                data = await reader.read(READ_SIZE)
                if not data:
                    raise ConnectFailed("the server closed the connection before welcome")
                for item in session.receive_data(data):
                    if isinstance(item, ErrorReply):
                        raise ConnectFailed(refusal_text(item.word))
                    if isinstance(item, Welcome):
                        welcomed = True
                    elif welcomed and not isinstance(item, ProtocolViolation):
                        pending.append(item)
        writer.write(session.send(Request(options.players)))
        await writer.drain()
    except ValueError:
        writer.close()
        raise ConnectFailed(refusal_text(ErrorWord.INVALID_NAME)) from None
    except (ConnectFailed, OSError, TimeoutError) as e:
        writer.close()
        if isinstance(e, ConnectFailed):
            raise
        raise ConnectFailed(f"no welcome from the server ({e or 'timed out'})") from None
    return SpectrangleStream(reader, writer, session, options.name, pending)

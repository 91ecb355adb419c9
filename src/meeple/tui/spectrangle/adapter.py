"""Spectrangle 1.4 for the terminal app: :class:`~meeple.clients.spectrangle.SpectrangleClient`
turned into :mod:`~meeple.tui.spectrangle.events`.

The client library does the handshake, the reading (sans-I/O
:class:`~meeple.protocols.spectrangle.session.ClientSession` under it) and keeps the
players; what the adapter adds:

- the lobby step: ``connect <name> chat`` (within
  :data:`~meeple.tui.connection.HANDSHAKE_TIMEOUT`), then ``request <players>``;
- events in game terms, error words in sentences (:data:`REFUSALS`);
- lines the session refuses to send (a move out of turn, chat the server did not
  agree to) turned into :class:`~meeple.tui.connection.MoveError` instead of bytes;
- a server that goes away (EOF or a reset) as :class:`ConnectionLost`, never an
  exception.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from meeple.clients.spectrangle import SpectrangleClient, SpectrangleClientError
from meeple.clients.watch import NoAnswer
from meeple.protocols.spectrangle.errors import ErrorWord, LocalProtocolError
from meeple.protocols.spectrangle.messages import (
    CHAT_EXTENSION,
    ChatFrom,
    ErrorReply,
    GameFinished,
    Move,
    Order,
    PlayerSkipped,
    Replace,
    ServerMessage,
    SkipNotice,
    Tiles,
    Waiting,
)
from meeple.protocols.spectrangle.messages import (
    PlayerLeft as PlayerLeftMessage,
)
from meeple.protocols.spectrangle.states import State
from meeple.tui.connection import (
    HANDSHAKE_TIMEOUT,
    ClientAdapter,
    ConnectFailed,
    ConnectOptions,
    MoveError,
)
from meeple.tui.spectrangle import events as ui

__all__ = ["REFUSALS", "SpectrangleConnection", "connect", "refusal_text"]

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


class SpectrangleConnection(ClientAdapter[SpectrangleClient]):
    """A :class:`~meeple.tui.connection.Connection` for Spectrangle over the client library."""

    async def events(self) -> AsyncIterator[ui.SpectrangleEvent]:
        client = self._client
        yield ui.Welcomed(client.name, CHAT_EXTENSION in client.extensions)
        got = self._status.relay(
            client.receive,
            (SpectrangleClientError, NoAnswer, OSError),
            self._events_of,
            lambda e: str(e) or "connection closed by the server",
        )
        async with contextlib.aclosing(got):
            async for event in got:
                yield event

    async def _events_of(self, message: ServerMessage) -> list[ui.SpectrangleEvent]:
        event = self._translate(message)
        return [] if event is None else [event]

    def _translate(self, message: ServerMessage) -> ui.SpectrangleEvent | None:
        client = self._client
        if isinstance(message, Waiting):
            return ui.Queued(message.names)
        if isinstance(message, Order):  # the client took the players from "start with"
            return ui.Started(client.players or message.names, message.names)
        if isinstance(message, Tiles):
            hands = tuple((h.name, h.held) for h in message.hands)
            mine = message.player == client.name
            return ui.HandsDealt(hands, message.player, message.must_skip, mine)
        if isinstance(message, Move):
            return ui.Placed(message.name, message.tile, message.index, message.points)
        if isinstance(message, PlayerSkipped):
            return ui.Skipped(message.name)
        if isinstance(message, SkipNotice):
            # 1.3: "skip <name>" alone. To us in MUST_SKIP it asks us to skip; right after
            # our own skip it is the server taking it (the session tells which).
            mine = client.state_after is State.MUST_SKIP
            if message.name == client.name and not mine:
                return ui.Skipped(message.name)
            return ui.SkipAnnounced(message.name, mine)
        if isinstance(message, Replace):
            return ui.Exchanged(message.name, message.tile, message.new_tile)
        if isinstance(message, ErrorReply):
            return ui.Refused(message.word.value, refusal_text(message.word))
        if isinstance(message, ChatFrom):
            return ui.ChatReceived(message.name, message.text)
        if isinstance(message, PlayerLeftMessage):
            return ui.PlayerLeft(message.name)
        if isinstance(message, GameFinished):
            return ui.GameEnded(message.leaderboard)
        # "start with" is reported with the order that follows at once.
        return None

    async def send(self, move: ui.SpectrangleMove) -> None:
        client = self._client
        try:
            if isinstance(move, ui.PlaceTile):
                await client.place(move.tile, move.index)
            elif isinstance(move, ui.SkipTurn):
                await client.skip()
            elif isinstance(move, ui.ExchangeTile):
                await client.exchange(move.tile)
            else:
                await client.chat(move.text)
        except LocalProtocolError:
            if isinstance(move, ui.Say):
                raise MoveError("chat is not on: the server did not agree to it") from None
            raise MoveError("not now: wait for your turn") from None
        except ValueError as e:
            raise MoveError(str(e)) from None
        except OSError as e:
            raise MoveError(f"could not send: {e}") from None


async def connect(options: ConnectOptions) -> SpectrangleConnection:
    """Connect, ``connect <name> chat``, wait for welcome, then ``request <players>``."""
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            client = await SpectrangleClient.connect(
                options.host, options.port, options.name, chat=True
            )
    except OSError as e:
        raise ConnectFailed(
            f"cannot reach a Spectrangle server at {options.host}:{options.port} "
            f"({e.strerror or e})"
        ) from None
    except ValueError:  # the session will not even send such a name
        raise ConnectFailed(refusal_text(ErrorWord.INVALID_NAME)) from None
    except SpectrangleClientError as e:
        # The only refusal of a first connect is invalidName; anything else, as it came.
        if ErrorWord.INVALID_NAME.value in str(e):
            raise ConnectFailed(refusal_text(ErrorWord.INVALID_NAME)) from None
        raise ConnectFailed(f"not let in: {e}") from None
    except TimeoutError:
        raise ConnectFailed("no welcome from the server (timed out)") from None
    try:
        await client.request_game(options.players)
    except OSError as e:
        await client.close()
        raise ConnectFailed(f"the server went away after welcome ({e})") from None
    return SpectrangleConnection(client)

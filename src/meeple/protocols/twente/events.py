"""What a Twente session hands to the layer above it.

The server session turns a client's messages into *requests* for the lobby and the
room (:class:`Join`, :class:`Enqueue`, :class:`PlayWord`, :class:`Exchange`,
:class:`Pass`, :class:`Chat`), reports an ``ERROR`` the client sent
(:class:`PeerError`), the end of the stream (:class:`ConnectionClosed`), and refuses
what the spec does not allow with a ready reply (:class:`Rejected`).

The client session hands on the server's messages themselves, plus
:class:`Rejected` (a reply the client should send back), :class:`Ignored` (a server
message that made no sense in the client's state) and :class:`ConnectionClosed`.

Coordinates are 0-based ``(x, y)`` as in the engine; directions are the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.games.scrabble.board import Direction
from meeple.protocols.twente.errors import ErrorCode
from meeple.protocols.twente.messages import Error, Flag, Message

__all__ = [
    "Chat",
    "ConnectionClosed",
    "Enqueue",
    "Exchange",
    "Ignored",
    "Join",
    "Pass",
    "PeerError",
    "PlayWord",
    "Rejected",
    "Request",
]


@dataclass(frozen=True, slots=True)
class Join:
    """ANNOUNCE: the client wants ``name``. Reply ``Welcome`` or ``Error(E001)`` next."""

    name: str
    flags: frozenset[Flag]


@dataclass(frozen=True, slots=True)
class Enqueue:
    """REQUESTGAME: put the player in the queue for a game of ``players`` (2 if not given).

    Reply ``InformQueue`` to everyone in that queue, or ``Error(E010)``/``Error(E015)`` to
    refuse; a refused player is in no queue (the session is back in the lobby).
    """

    players: int


@dataclass(frozen=True, slots=True)
class PlayWord:
    """MAKEMOVE WORD: the whole main word from ``(x, y)``, blanks in lower case (ERRATA)."""

    x: int
    y: int
    direction: Direction
    word: str


@dataclass(frozen=True, slots=True)
class Exchange:
    """MAKEMOVE SWAP with tiles: exchange these rack tiles (``!`` is a blank)."""

    tiles: str


@dataclass(frozen=True, slots=True)
class Pass:
    """MAKEMOVE SWAP with no tiles, or MAKEMOVE PASS: the player passes (ERRATA)."""


@dataclass(frozen=True, slots=True)
class Chat:
    """SENDCHAT from a client that announced CHAT: relay as NOTIFYCHAT to those that did."""

    text: str


@dataclass(frozen=True, slots=True)
class PeerError:
    """The peer sent ERROR (a reply to something we sent); for logs, never answered.
    ``code`` is None when the ERROR could not be read."""

    code: ErrorCode | None
    players: int | None = None


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer closed the stream (``receive_eof``). Partial data, if any, is dropped."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message the spec does not allow here: write :attr:`data` back, keep the connection.

    The session's state is unchanged by the refused message, and writing the reply does
    not change it either, so write ``data`` directly rather than through ``send``.
    """

    reply: Error
    reason: str

    @property
    def code(self) -> ErrorCode:
        return self.reply.code

    @property
    def data(self) -> bytes:
        return self.reply.encode()


@dataclass(frozen=True, slots=True)
class Ignored:
    """Client side: a well-formed server message that the client's state does not expect."""

    message: Message
    reason: str


Request = Join | Enqueue | PlayWord | Exchange | Pass | Chat

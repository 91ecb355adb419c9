"""The server side of the browser protocol: a state machine, sans-I/O.

The web listener makes one :class:`ServerSession` per WebSocket. It hands each
text message it receives to :meth:`ServerSession.receive`, which returns what the
browser asked for (a :class:`Request` the listener carries out) and the replies to
send; malformed or untimely messages come back as an ``error`` reply and the
session stays as it was. :meth:`ServerSession.send` encodes what the server sends
and refuses what the state does not allow (:class:`LocalProtocolError`).

The one transition table, :data:`TRANSITIONS`: a browser first says ``hello``,
then subscribes and pings as it likes. To play (issue 13) it creates a table, sits
at one or rejoins with a token; once the lobby has seated it the listener calls
:meth:`ServerSession.seated` and the session is ``SEATED``, where ``ready``,
``leave`` and ``play`` are allowed; :meth:`ServerSession.unseated` (it left the
table, or its game ended) takes it back to ``OPEN``. A seated player may also
``chat``, and a seated Scrabble player ask for a ``preview`` of a play, each within
its own rate limit (:class:`RateLimit`, a token bucket on a time the caller passes
in: this module reads no clock).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from meeple.protocols.web.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from meeple.protocols.web.messages import (
    DEFAULT_MAX_MESSAGE_SIZE,
    PROTOCOL,
    Abort,
    AddBot,
    Chat,
    ClientMessage,
    Command,
    CreateTable,
    Delta,
    Error,
    Hello,
    Leave,
    Ping,
    Play,
    Pong,
    Preview,
    Ready,
    Rejoin,
    ServerMessage,
    Sit,
    Snapshot,
    Subscribe,
    Unsubscribe,
    WatchChat,
    Welcome,
    decode,
)

__all__ = [
    "CHAT_BURST",
    "CHAT_RATE",
    "DEFAULT_MAX_SUBSCRIPTIONS",
    "PREVIEW_BURST",
    "PREVIEW_RATE",
    "TRANSITIONS",
    "RateLimit",
    "Request",
    "ServerSession",
    "State",
]

# A lobby, a console and a few games at once is plenty for one page.
DEFAULT_MAX_SUBSCRIPTIONS = 8


class State(enum.Enum):
    NEW = "new"  # connected; waiting for hello
    OPEN = "open"  # hello done: subscribe, unsubscribe, ping; create, sit, rejoin, bot
    SEATED = "seated"  # at a table or in a game: ready, leave, play, bot
    CLOSED = "closed"


# state -> message type -> next state. A message type missing from a state's row is
# answered with a not-now error.
TRANSITIONS: Mapping[State, Mapping[type, State]] = MappingProxyType(
    {
        State.NEW: {Hello: State.OPEN, Ping: State.NEW},
        State.OPEN: {
            Subscribe: State.OPEN,
            Unsubscribe: State.OPEN,
            Ping: State.OPEN,
            CreateTable: State.OPEN,  # SEATED once the lobby seats it (seated())
            Sit: State.OPEN,
            Rejoin: State.OPEN,
            AddBot: State.OPEN,
            WatchChat: State.OPEN,  # issue 34.5: a spectator's line (it must watch the game)
        },
        State.SEATED: {
            Subscribe: State.SEATED,
            Unsubscribe: State.SEATED,
            Ping: State.SEATED,
            AddBot: State.SEATED,
            Ready: State.SEATED,
            Leave: State.SEATED,
            Abort: State.SEATED,
            Play: State.SEATED,
            Chat: State.SEATED,
            WatchChat: State.SEATED,
            Preview: State.SEATED,  # issue 13: only a seated player has a rack to preview
        },
        State.CLOSED: {},
    }
)


@dataclass(frozen=True, slots=True)
class Request:
    """What the browser asked for, valid in the current state: the listener does it.

    ``message`` is None when there is nothing to do; ``replies`` go to the browser
    in order either way.
    """

    message: Command | None
    replies: tuple[ServerMessage, ...] = ()


# --- rate limits: chat lines and Scrabble previews (issue 13) ---------------------------

# A preview per keystroke is fine (the page waits 150 ms after the last change); a
# flood is not: past a burst of 20, 10 a second, and every extra one is answered
# ``too-fast`` (the connection stays).
PREVIEW_RATE = 10.0
PREVIEW_BURST = 20
# Chat: 5 lines at once, then one every 2 s.
CHAT_RATE = 0.5
CHAT_BURST = 5


@dataclass
class RateLimit:
    """A token bucket, sans-I/O: ``burst`` at once, ``rate`` a second after that.

    The caller passes the time (the server's injectable clock), so tests need no sleep.
    """

    rate: float = PREVIEW_RATE
    burst: int = PREVIEW_BURST
    tokens: float = -1.0  # -1: full (``burst``), set on creation
    last: float | None = None

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = float(self.burst)

    def allow(self, now: float) -> bool:
        """Take one token at time ``now``; False (nothing taken) when there is none."""
        if self.last is not None and now > self.last:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        if self.last is None or now > self.last:
            self.last = now
        if self.tokens < 1 - 1e-9:  # a tenth of a second is no exact float
            return False
        self.tokens -= 1
        return True


# ----------------------------------------------------------------------------------------


@dataclass
class ServerSession:
    """One browser connection's protocol state; see the module docstring."""

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS
    state: State = State.NEW
    subscriptions: set[tuple[str, str | None]] = field(default_factory=set)
    previews: RateLimit = field(default_factory=RateLimit)
    chats: RateLimit = field(default_factory=lambda: RateLimit(CHAT_RATE, CHAT_BURST))

    def receive(self, data: str | bytes) -> Request:
        """Take one WebSocket message from the browser; never raises for bad input."""
        if self.state is State.CLOSED:
            return Request(None)
        try:
            message = decode(data, self.max_message_size)
            return self._handle(message)
        except RemoteProtocolError as e:
            return Request(None, (Error(e.code, e.message),))

    def _handle(self, message: ClientMessage) -> Request:
        following = TRANSITIONS[self.state].get(type(message))
        if following is None:
            raise RemoteProtocolError(
                ErrorCode.NOT_NOW, f"{_name(message)} is not allowed in state {self.state.value}"
            )
        if isinstance(message, Hello):
            if message.protocol != PROTOCOL:
                raise RemoteProtocolError(
                    ErrorCode.BAD_MESSAGE, f"this server speaks {PROTOCOL}, not that"
                )
            self.state = following
            return Request(None, (Welcome(PROTOCOL, self.max_message_size),))
        self.state = following
        if isinstance(message, Ping):
            return Request(None, (Pong(message.id),))
        if not isinstance(message, Subscribe | Unsubscribe):
            return Request(message)
        key = (message.topic, message.uid)
        if isinstance(message, Subscribe):
            if key not in self.subscriptions and len(self.subscriptions) >= self.max_subscriptions:
                raise RemoteProtocolError(
                    ErrorCode.TOO_MANY, f"at most {self.max_subscriptions} subscriptions"
                )
            self.subscriptions.add(key)
        else:
            self.subscriptions.discard(key)
        return Request(message)

    def preview_refusal(self, now: float) -> Error | None:
        """None when a preview at time ``now`` is within the rate limit, else the reply."""
        return _too_fast(self.previews, "previews", now)

    def watch_chat_refusal(self, message: WatchChat, now: float) -> Error | None:
        """None when a spectators' chat line may go out: the browser watches that game
        (``subscribe`` ``game``) and is within the chat rate limit; else the reply."""
        if ("game", message.uid) not in self.subscriptions:
            return Error(ErrorCode.NOT_NOW, "watch the game to chat with its spectators")
        return self.chat_refusal(now)

    def chat_refusal(self, now: float) -> Error | None:
        """None when a chat line at time ``now`` is within the rate limit, else the reply."""
        return _too_fast(self.chats, "chat lines", now)

    def not_found(self, message: Subscribe) -> Error:
        """The listener found no such game: forget the subscription, and say so."""
        self.subscriptions.discard((message.topic, message.uid))
        return Error(ErrorCode.NOT_FOUND, f"no game {message.uid}")

    def seated(self) -> None:
        """The lobby seated this browser (it sat, created a table or rejoined)."""
        if self.state is State.OPEN:
            self.state = State.SEATED

    def unseated(self) -> None:
        """It left its table, or its game is over: back to the lobby."""
        if self.state is State.SEATED:
            self.state = State.OPEN

    def send(self, message: ServerMessage, encoded: str | None = None) -> str:
        """Encode a server message; a snapshot only for a topic the browser subscribed to.

        ``encoded`` is ``message.encode()`` made earlier (one snapshot's frame is the same
        for every browser watching it, so the listener encodes it once).
        """
        if self.state is State.CLOSED:
            raise LocalProtocolError(ErrorCode.NOT_NOW, "the session is closed")
        if (
            isinstance(message, Snapshot | Delta)
            and (message.topic, message.uid) not in self.subscriptions
        ):
            raise LocalProtocolError(ErrorCode.NOT_NOW, f"not subscribed to {message.topic}")
        return message.encode() if encoded is None else encoded

    def close(self) -> None:
        self.state = State.CLOSED
        self.subscriptions.clear()


# --- chat (issue 13) ---------------------------------------------------------------------


def _too_fast(limit: RateLimit, what: str, now: float) -> Error | None:
    if limit.allow(now):
        return None
    return Error(
        ErrorCode.TOO_FAST, f"at most {limit.burst} {what} at once, then {limit.rate:g} a second"
    )


def _name(message: ClientMessage) -> str:
    return type(message).__name__.lower()

"""Sans-I/O Spectrangle sessions: one per connection, server side and client side.

Server side, in the connection task::

    session = ServerSession()
    for event in session.receive_data(chunk):
        if isinstance(event, Rejected):
            write(event.data)               # the spec's error line, already decided
        else:
            handle(event)                   # a ClientMessage for the lobby or the room
    write(session.send(Welcome(...)))      # every server line goes through send()
    events = session.next_events()         # lines held back while a verdict was due

``receive_data`` returns the client's messages that are allowed now, in order, and a
:class:`Rejected` event (with the bytes of ``invalidCommand`` / ``invalidName`` /
``invalidMove``) for each line that is unreadable, oversized or not allowed in the
current state; the state does not change then. While a verdict on the client's last
request is due (after connect, request, place, skip or exchange;
:data:`~meeple.protocols.spectrangle.states.PAUSED_STATES`) further lines are held
back, at most ``max_held_lines`` of them, and come out of :meth:`next_events` once the
verdict was sent. ``send`` raises :class:`LocalProtocolError` for a message the state
does not allow.

Client side the same, mirrored: :class:`ClientSession` ``send`` for commands,
``receive_data`` for the server's lines; a server line that is unreadable or out of
order becomes a :class:`ProtocolViolation` event and changes nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from meeple.protocols.framing import FramedSession
from meeple.protocols.spectrangle.errors import (
    ErrorWord,
    LocalProtocolError,
    RemoteProtocolError,
)
from meeple.protocols.spectrangle.framing import (
    DEFAULT_MAX_LINE_SIZE,
    Line,
    LineFramer,
    OversizedLine,
)
from meeple.protocols.spectrangle.messages import (
    CHAT_EXTENSION,
    ClientCommand,
    ClientMessage,
    Connect,
    ErrorReply,
    ServerMessage,
    Welcome,
    client_command,
    decode_client,
    decode_server,
)
from meeple.protocols.spectrangle.states import (
    CHAT_STATES,
    ERROR_TRIGGERS,
    PAUSED_STATES,
    TRANSITIONS,
    State,
    Trigger,
    trigger_of,
)

__all__ = [
    "DEFAULT_MAX_HELD_LINES",
    "SUPPORTED_EXTENSIONS",
    "ClientEvent",
    "ClientSession",
    "PeerError",
    "ProtocolViolation",
    "Rejected",
    "ServerEvent",
    "ServerSession",
]

SUPPORTED_EXTENSIONS = (CHAT_EXTENSION,)
DEFAULT_MAX_HELD_LINES = 32

_COMMAND_TRIGGERS = {
    ClientCommand.CONNECT: Trigger.CONNECT,
    ClientCommand.REQUEST: Trigger.REQUEST,
    ClientCommand.PLACE: Trigger.PLACE,
    ClientCommand.SKIP: Trigger.SKIP,
    ClientCommand.EXCHANGE: Trigger.EXCHANGE,
    ClientCommand.CHAT: Trigger.CHAT,
}


@dataclass(frozen=True, slots=True)
class Rejected:
    """A client line refused by the session: write ``data`` (the error line) back."""

    error: RemoteProtocolError
    data: bytes


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """A server line the client session could not read or did not expect; ignored."""

    error: RemoteProtocolError
    message: ServerMessage | None = None


@dataclass(frozen=True, slots=True)
class PeerError:
    """The client sent one of the spec's error words (``invalidCommand``, ...) as a line.

    Log it and answer nothing: an error word is never a command, and answering it with
    one lets two peers that both do so bounce it between them for ever (issue 16)."""

    word: ErrorWord


ServerEvent = ClientMessage | Rejected | PeerError
ClientEvent = ServerMessage | ProtocolViolation


def _reject(reason: str, word: ErrorWord = ErrorWord.INVALID_COMMAND) -> Rejected:
    return _rejected(RemoteProtocolError(reason, word))


def _rejected(error: RemoteProtocolError) -> Rejected:
    return Rejected(error, ErrorReply(error.word).encode())


class _Session(FramedSession):
    """What both sides share: the state, the player's name and the agreed extensions."""

    def __init__(self, max_line_size: int) -> None:
        self._framer: LineFramer = LineFramer(max_line_size)
        self._state = State.CONNECTING
        self._name: str | None = None
        self._requested: tuple[str, ...] = ()
        self._extensions: frozenset[str] = frozenset()

    @property
    def state(self) -> State:
        return self._state

    @property
    def name(self) -> str | None:
        """The player's name once it was given with connect (None before or after refusal)."""
        return self._name

    @property
    def extensions(self) -> frozenset[str]:
        """The extensions in use: asked for by the client and named in the welcome."""
        return self._extensions

    @property
    def chat_enabled(self) -> bool:
        return CHAT_EXTENSION in self._extensions

    def _next(self, trigger: Trigger) -> State | None:
        """The state ``trigger`` leads to, or None when it is not allowed now."""
        if trigger in (Trigger.CHAT, Trigger.CHAT_FROM):
            return self._state if self._state in CHAT_STATES else None
        following = TRANSITIONS[self._state].get(trigger)
        if following is None and trigger in ERROR_TRIGGERS:
            return self._state  # an answer to a bad line: allowed, changes nothing
        return following

    def _encode(self, message: ClientMessage | ServerMessage, chat: Trigger) -> bytes:
        """The bytes of ``message`` this side sends, whose chat trigger is ``chat``;
        advances the state. LocalProtocolError if not allowed now."""
        trigger = trigger_of(message, self._name)
        following = self._next(trigger)
        if following is None or (trigger is chat and not self.chat_enabled):
            raise LocalProtocolError(
                f"cannot send {type(message).__name__} in state {self._state.value}"
            )
        data = message.encode()
        self._note(message, following)
        return data

    def _note(self, message: ClientMessage | ServerMessage, following: State) -> None:
        """Remember what the conversation established, then move to ``following``."""
        if isinstance(message, Connect):
            self._name = message.name
            self._requested = message.extensions
        elif isinstance(message, Welcome):
            self._extensions = frozenset(message.extensions) & frozenset(self._requested)
        elif isinstance(message, ErrorReply) and following is State.CONNECTING:
            self._name = None
        self._state = following


class ServerSession(_Session):
    """The server's end of one client connection. See the module docstring for the loop."""

    def __init__(
        self,
        *,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
        max_held_lines: int = DEFAULT_MAX_HELD_LINES,
        extensions: Iterable[str] = SUPPORTED_EXTENSIONS,
    ) -> None:
        super().__init__(max_line_size)
        self.supported_extensions = tuple(extensions)
        self.max_held_lines = max_held_lines
        self._held: deque[Line | OversizedLine] = deque()

    @property
    def held_lines(self) -> int:
        """Lines received but held back until the pending verdict is sent."""
        return len(self._held)

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Take bytes from the client; return its requests and the immediate rejections."""
        events: list[ServerEvent] = []
        for frame in self._framer.receive_data(data):
            # Each line is read as soon as the state allows, so only lines behind a
            # pending verdict count against max_held_lines.
            if len(self._held) >= self.max_held_lines:
                events.append(_reject("too many lines while a verdict was due"))
            else:
                self._held.append(frame)
                events.extend(self.next_events())
        return events

    def next_events(self) -> list[ServerEvent]:
        """Process held lines as far as the state allows (call after sending a verdict)."""
        events: list[ServerEvent] = []
        while self._held and self._state not in PAUSED_STATES:
            frame = self._held.popleft()
            if isinstance(frame, OversizedLine):
                events.append(_reject(f"line longer than {frame.limit} bytes"))
                continue
            events.append(self._receive_line(frame.text))
        return events

    def _receive_line(self, text: str) -> ServerEvent:
        command = client_command(text)
        if command is None:
            try:
                return PeerError(ErrorWord.from_wire(text))
            except ValueError:
                pass
            return _reject(f"unknown command: {text[:40]!r}")
        trigger = _COMMAND_TRIGGERS[command]
        following = self._next(trigger)
        if following is None or (trigger is Trigger.CHAT and not self.chat_enabled):
            return _reject(f"{command.value} is not allowed in state {self._state.value}")
        try:
            message = decode_client(text)
        except RemoteProtocolError as error:
            return _rejected(error)
        self._note(message, following)
        return message

    def welcome(self) -> Welcome:
        """The welcome for the pending connect: the extensions both sides know."""
        return Welcome(tuple(e for e in self._requested if e in self.supported_extensions))

    def send(self, message: ServerMessage) -> bytes:
        """The bytes of ``message``; advances the state. LocalProtocolError if not allowed."""
        return self._encode(message, Trigger.CHAT_FROM)


class ClientSession(_Session):
    """The client's end of a connection to a Spectrangle server."""

    def __init__(self, *, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        super().__init__(max_line_size)

    def send(self, message: ClientMessage) -> bytes:
        """The bytes of ``message``; advances the state. LocalProtocolError if not allowed
        (out of turn, before welcome, chat without the extension, ...)."""
        return self._encode(message, Trigger.CHAT)

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        """Take bytes from the server; return its messages and any violations."""
        events: list[ClientEvent] = []
        for frame in self._framer.receive_data(data):
            if isinstance(frame, OversizedLine):
                error = RemoteProtocolError(f"line longer than {frame.limit} bytes")
                events.append(ProtocolViolation(error))
                continue
            try:
                message = decode_server(frame.text)
            except RemoteProtocolError as error:
                events.append(ProtocolViolation(error))
                continue
            following = self._next(trigger_of(message, self._name))
            if following is None:
                reason = f"{type(message).__name__} not expected in state {self._state.value}"
                events.append(ProtocolViolation(RemoteProtocolError(reason), message))
                continue
            self._note(message, following)
            events.append(message)
        return events

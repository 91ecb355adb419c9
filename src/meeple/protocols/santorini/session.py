"""AM27 session state machines, one per side, with their transitions as data.

The flow (spec figures 1 and 2, ERRATA, transcript): the server greets with
SERVERSTATE → the client REGISTERs → (with gods) GODLISTMESSAGE / GODINIT in turn →
PLAYERSMESSAGE → the challenger's CHOSESTARTER → UPDATEs and the players' commands →
ENDGAME → SERVERSTATE again, and the client may register for another game on the
same connection. PING goes both ways in every state.

:data:`CLIENT_SENDS` and :data:`SERVER_SENDS` say which message types each side may
send in each state and where they lead; :class:`ServerSession` and
:class:`ClientSession` read the same tables from opposite ends. :data:`OUT_OF_STATE`
says how the server answers a client message the table does not allow: an INFO code,
or None for silence (the group's server ignores a second REGISTER; the transcript's
bots send one).

Server side, as the asyncio layer uses it::

    session = ServerSession(framing="object-stream")
    write(session.send(ServerState(open=True, active=False)))   # the header comes first
    for event in session.receive_data(chunk):
        match event:
            case Rejected(code=code):   write(session.send(Info(nick, code.value))) ...
            case Register() | Move() | ...:  hand to the lobby / room
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Generic, TypeVar

from meeple.protocols.framing import FramedSession
from meeple.protocols.santorini.events import ConnectionClosed, Ignored, Rejected
from meeple.protocols.santorini.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    AutoDecoder,
    BrokenStream,
    Encoder,
    FrameEvent,
    LineEncoder,
    ObjectStreamEncoder,
    OversizedMessage,
    Text,
)
from meeple.protocols.santorini.messages import (
    CLIENT_TYPES,
    SERVER_TYPES,
    ClientMessage,
    Info,
    InfoCode,
    Message,
    MessageError,
    MessageType,
    Register,
    ServerMessage,
    decode,
)

__all__ = [
    "CLIENT_SENDS",
    "DEFAULT_HEARTBEAT_TIMEOUT",
    "DEFAULT_PING_INTERVAL",
    "FRAMINGS",
    "OUT_OF_STATE",
    "SERVER_SENDS",
    "ClientEvent",
    "ClientSession",
    "Heartbeat",
    "LocalProtocolError",
    "ServerEvent",
    "ServerSession",
    "State",
]

# ERRATA: PING both ways every 0.5 s; 5 s of silence is a disconnect.
DEFAULT_PING_INTERVAL = 0.5
DEFAULT_HEARTBEAT_TIMEOUT = 5.0
FRAMINGS = ("object-stream", "lines")
# A client reads whole UPDATEs; the largest is a few KiB, so 1 MiB is generous.
CLIENT_MAX_MESSAGE_SIZE = 1024 * 1024


class LocalProtocolError(Exception):
    """We tried to send something the protocol does not allow now: a bug on our side."""


class State(enum.Enum):
    """Where a connection is in the flow; both sessions use the same states."""

    CONNECTED = "connected"  # greeted with SERVERSTATE (or back after a game); not registered
    REGISTERED = "registered"  # REGISTER sent; waiting for players or for the reply
    GODS = "gods"  # the players choose their gods in turn
    STARTER = "starter"  # PLAYERSMESSAGE seen; the challenger names the starter
    PLAYING = "playing"  # the starter is known: workers, moves, builds
    CLOSED = "closed"  # the stream ended


_S = State
_T = MessageType

# What the client may send in each state, and where it leads (PING everywhere, spec §1).
CLIENT_SENDS: dict[State, dict[MessageType, State]] = {
    _S.CONNECTED: {_T.REGISTER: _S.REGISTERED, _T.PING: _S.CONNECTED},
    _S.REGISTERED: {_T.PING: _S.REGISTERED},
    _S.GODS: {_T.GODINIT: _S.GODS, _T.PING: _S.GODS},
    _S.STARTER: {_T.CHOSESTARTER: _S.STARTER, _T.PING: _S.STARTER},
    _S.PLAYING: {
        _T.WORKERINIT: _S.PLAYING,
        _T.MOVE: _S.PLAYING,
        _T.BUILD: _S.PLAYING,
        _T.UNDO: _S.PLAYING,
        _T.PASS: _S.PLAYING,
        _T.LOSE: _S.PLAYING,
        _T.PING: _S.PLAYING,
    },
    _S.CLOSED: {},
}

# What the server may send in each state, and where it leads.
SERVER_SENDS: dict[State, dict[MessageType, State]] = {
    _S.CONNECTED: {_T.SERVERSTATE: _S.CONNECTED, _T.INFO: _S.CONNECTED, _T.PING: _S.CONNECTED},
    _S.REGISTERED: {
        # A SERVERSTATE the server sent before it read the REGISTER changes nothing.
        _T.SERVERSTATE: _S.REGISTERED,
        _T.INFO: _S.REGISTERED,  # but INFO NICKNAME / INVALID refuse it: REGISTRATION_REFUSALS
        _T.GODLISTMESSAGE: _S.GODS,
        _T.PLAYERSMESSAGE: _S.STARTER,
        _T.PING: _S.REGISTERED,
    },
    _S.GODS: {
        _T.GODLISTMESSAGE: _S.GODS,
        _T.PLAYERSMESSAGE: _S.STARTER,
        _T.INFO: _S.GODS,
        _T.ENDGAME: _S.CONNECTED,
        _T.PING: _S.GODS,
    },
    _S.STARTER: {
        _T.PLAYERSMESSAGE: _S.STARTER,  # again, fresh, after a refused CHOSESTARTER
        _T.UPDATE: _S.PLAYING,
        _T.INFO: _S.STARTER,
        _T.ENDGAME: _S.CONNECTED,
        _T.PING: _S.STARTER,
    },
    _S.PLAYING: {
        _T.UPDATE: _S.PLAYING,
        _T.INFO: _S.PLAYING,
        _T.ENDGAME: _S.CONNECTED,
        _T.PING: _S.PLAYING,
    },
    _S.CLOSED: {},
}

# INFO codes that answer a REGISTER by refusing it: the client is back to CONNECTED.
REGISTRATION_REFUSALS = frozenset({InfoCode.NICKNAME.value, InfoCode.INVALID.value})

# How the server answers a client message CLIENT_SENDS does not allow in a state:
# an INFO code, or None to ignore it. Anything not listed gets WAIT ("not now").
OUT_OF_STATE: Mapping[State, Mapping[MessageType, InfoCode | None]] = {
    # The group's server ignores REGISTER once registered (transcript, 185.354).
    _S.REGISTERED: {_T.REGISTER: None},
    _S.GODS: {_T.REGISTER: None},
    _S.STARTER: {_T.REGISTER: None},
    _S.PLAYING: {_T.REGISTER: None, _T.GODINIT: InfoCode.WAIT, _T.CHOSESTARTER: InfoCode.WAIT},
}

ServerEvent = ClientMessage | Rejected | Ignored | ConnectionClosed
ClientEvent = ServerMessage | Rejected | Ignored | ConnectionClosed


class Heartbeat:
    """ERRATA heartbeat bookkeeping on a clock the caller reads: a PING is due every
    ``interval``; a peer silent for ``timeout`` is gone. Any message counts as life."""

    __slots__ = ("interval", "last_heard", "timeout")

    def __init__(
        self,
        now: float,
        *,
        interval: float = DEFAULT_PING_INTERVAL,
        timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
    ) -> None:
        if interval <= 0 or timeout <= 0:
            raise ValueError("heartbeat interval and timeout must be positive")
        self.interval = interval
        self.timeout = timeout
        self.last_heard = now

    def heard(self, now: float) -> None:
        self.last_heard = max(self.last_heard, now)

    def expired(self, now: float) -> bool:
        """True once the peer has been silent for ``timeout`` seconds."""
        return now - self.last_heard >= self.timeout


def _frame_problem(event: FrameEvent, in_game: bool) -> Rejected:
    if isinstance(event, OversizedMessage):
        return Rejected(InfoCode.MALFORMED, f"message longer than {event.limit} bytes", in_game)
    assert not isinstance(event, Text)
    return Rejected(InfoCode.MALFORMED, event.reason, in_game)


def _encoder(framing: str) -> Encoder:
    if framing == "object-stream":
        return ObjectStreamEncoder()
    if framing == "lines":
        return LineEncoder()
    raise ValueError(f"framing is one of {', '.join(FRAMINGS)}, not {framing!r}")


EventT = TypeVar("EventT")


class _Session(FramedSession, Generic[EventT]):
    """What both sides share: the decoder, the encoder, the state and the nickname, and
    reading: a subclass says what each frame is (:meth:`_handle`, an ``EventT``)."""

    def __init__(self, max_message_size: int, framing: str) -> None:
        self._framer: AutoDecoder = AutoDecoder(max_message_size)
        self._encoder = _encoder(framing)
        self._header_sent = False
        self.state = State.CONNECTED
        self.nickname: str | None = None  # the client's nickname once it registered
        self.broken = False  # the peer's object stream cannot be read any further

    @property
    def framing(self) -> str:
        """How this side writes: ``object-stream`` or ``lines``."""
        return self._encoder.framing

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Where the first ``limit`` messages of ``data`` end, unread (for the server's
        message budget; :mod:`meeple.protocols.boundaries`); none once closed or broken."""
        if self.state is State.CLOSED or self.broken:
            return []
        return super().message_ends(data, limit)

    def skip_messages(self, data: bytes) -> None:
        """Step over whole messages refused unread (the framing stays in step); a stream
        found broken meanwhile makes the session :attr:`broken`."""
        if self.state is State.CLOSED or self.broken:
            return
        super().skip_messages(data)
        if self._framer.broken is not None:
            self.broken = True

    def _write(self, message: Message) -> bytes:
        data = self._encoder.encode(message.encode())
        if not self._header_sent:
            self._header_sent = True
            data = self._encoder.header() + data
        return data

    def _server_sent(self, message: Message, next_state: State) -> None:
        previous, self.state = self.state, next_state
        if (
            previous is State.REGISTERED
            and isinstance(message, Info)
            and message.information in REGISTRATION_REFUSALS
        ):
            self.state = State.CONNECTED
        if self.state is State.CONNECTED and previous is not State.CONNECTED:
            self.nickname = None

    def _check_closed(self, what: str) -> None:
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"{what} after the stream closed")

    def receive_data(self, data: bytes) -> list[EventT]:
        """Take bytes from the peer; return what to do about each message, in order."""
        if self.state is State.CLOSED or self.broken:
            return []
        return [self._handle(e) for e in self._framer.receive_data(data)]

    def receive_eof(self) -> list[ConnectionClosed]:
        """The peer's stream ended: the session is CLOSED."""
        if self.state is State.CLOSED:
            return []
        self.state = State.CLOSED
        return [ConnectionClosed()]

    def _handle(self, event: FrameEvent) -> EventT:
        raise NotImplementedError

    def _decode(self, event: FrameEvent, in_game: bool) -> Message | Rejected:
        """The message a frame holds, or the MALFORMED to answer; a stream found broken
        makes the session :attr:`broken` (nothing more is read)."""
        if isinstance(event, BrokenStream):
            self.broken = True
        if not isinstance(event, Text):
            return _frame_problem(event, in_game)
        try:
            return decode(event.text)
        except MessageError as exc:
            return Rejected(InfoCode.MALFORMED, str(exc), in_game)


class ServerSession(_Session[ServerEvent]):
    """One client connection, seen from the server: bytes in, client messages out;
    server messages in, bytes out (``framing``: ``object-stream`` by default, or
    ``lines``). Never raises for anything the client sends."""

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        framing: str = "object-stream",
    ) -> None:
        super().__init__(max_message_size, framing)

    def send(self, message: ServerMessage) -> bytes:
        """The bytes of ``message`` for this client (the stream header before the first);
        moves the state on. Raise LocalProtocolError if not allowed in this state."""
        self._check_closed("send")
        if message.TYPE not in SERVER_TYPES:
            raise LocalProtocolError(f"a server never sends {message.TYPE.value}")
        next_state = SERVER_SENDS[self.state].get(message.TYPE)
        if next_state is None:
            raise LocalProtocolError(f"{message.TYPE.value} not allowed in {self.state.name}")
        data = self._write(message)
        self._server_sent(message, next_state)
        return data

    def _handle(self, event: FrameEvent) -> ServerEvent:
        in_game = self.state is State.PLAYING
        message = self._decode(event, in_game)
        if isinstance(message, Rejected):
            return message
        kind = message.TYPE
        if kind is MessageType.INFO:
            # An error report from the peer is never answered with one: two peers that
            # both did so would bounce INFO between them for ever (issue 16).
            return Ignored(message, "INFO from a client")
        if not isinstance(message, ClientMessage):  # its kind is not in CLIENT_TYPES
            return Rejected(InfoCode.INVALID, f"{kind.value} is a server message", in_game)
        next_state = CLIENT_SENDS[self.state].get(kind)
        if next_state is None:
            code = OUT_OF_STATE.get(self.state, {}).get(kind, InfoCode.WAIT)
            if code is None:
                return Ignored(message, f"{kind.value} in {self.state.name}")
            return Rejected(code, f"{kind.value} in {self.state.name}", in_game)
        claimed = getattr(message, "player", "")
        if claimed and self.nickname is not None and claimed != self.nickname:
            # The sender is the connection, never the message's own claim.
            return Rejected(InfoCode.INVALID, f"player {claimed!r} is not this client", in_game)
        if isinstance(message, Register):
            self.nickname = message.nickname
        self.state = next_state
        return message


class ClientSession(_Session[ClientEvent]):
    """The connection to a server, seen from a client: reads either framing the server
    writes (detected from the first byte), writes JSON lines."""

    def __init__(self, *, max_message_size: int = CLIENT_MAX_MESSAGE_SIZE) -> None:
        super().__init__(max_message_size, "lines")

    @property
    def server_framing(self) -> str | None:
        """How the server writes, once its first byte arrived."""
        return self._framer.framing

    def send(self, message: ClientMessage) -> bytes:
        """The bytes of ``message`` for the server; moves the state on.

        Raise LocalProtocolError if it is not allowed now (e.g. MOVE before the game).
        """
        self._check_closed("send")
        next_state = CLIENT_SENDS[self.state].get(message.TYPE)
        if next_state is None or message.TYPE not in CLIENT_TYPES:
            raise LocalProtocolError(f"{message.TYPE.value} not allowed in {self.state.name}")
        data = self._write(message)
        if isinstance(message, Register):
            self.nickname = message.nickname
        self.state = next_state
        return data

    def _handle(self, event: FrameEvent) -> ClientEvent:
        message = self._decode(event, False)
        if isinstance(message, Rejected):
            return message
        if not isinstance(message, ServerMessage):  # its kind is not in SERVER_TYPES
            return Rejected(InfoCode.INVALID, f"{message.TYPE.value} is a client message")
        next_state = SERVER_SENDS[self.state].get(message.TYPE)
        if next_state is None:
            return Ignored(message, f"{message.TYPE.value} in {self.state.name}")
        self._server_sent(message, next_state)
        return message

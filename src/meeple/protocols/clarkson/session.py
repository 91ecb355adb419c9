"""Clarkson session state machines, one per side, with their transitions as data.

Both sides walk the RFC's conversation (§3.1, §3.8, §3.9, §3.17, §4.1)::

    CONNECTED --HELLO (server)--> GREETING --HELLO (client)--> WELCOMING
    WELCOMING --OK--> LOBBY           WELCOMING --NOK (unsupported version)--> GREETING
    LOBBY --READY--> READY --STARTING--> GAME --WINNER--> LOBBY
    any state --QUIT--> QUITTING (client side) --GOODBYE--> CLOSED
    any state --GOODBYE--> CLOSED

:data:`CLIENT_SENDS` says which client message each state allows and where it leads,
:data:`SERVER_SENDS` the same for server messages; :class:`ServerSession` and
:class:`ClientSession` read the same two tables from opposite ends, so they cannot
disagree. A client message a state does not allow is answered by the server session
itself: ``NOK <why>`` (:data:`OUT_OF_STATE`), except before the client's HELLO, where
the RFC says to end the connection with GOODBYE (§3.1).

Server side, as the asyncio layer uses it::

    session = ServerSession()
    write(session.send(meeple_hello(platform.platform())))  # §3.1: the server speaks first
    for event in session.receive_data(chunk):
        match event:
            case Reply():   write(event.data)                  # NOK answered by the session
            case Close():   write(event.data); close()         # GOODBYE: QUIT or a violation
            case Greeted(): write(event.data)                  # OK, version checked
            case UserSet(): ...   # claim the name: USERCHANGE to all, or NOK
            case Ready():   ...   # OK; STARTING once everyone is ready
            case Place() | Pass() | Exchange(): ...            # the player's turn: to the room
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from meeple.protocols.clarkson import replies
from meeple.protocols.clarkson.errors import (
    LocalProtocolError,
    RemoteProtocolError,
    UnrecognizedCommand,
)
from meeple.protocols.clarkson.framing import (
    DEFAULT_MAX_LINE_SIZE,
    LineFramer,
    OversizedLine,
)
from meeple.protocols.clarkson.messages import (
    BoardPush,
    ClientMessage,
    Exchange,
    Goodbye,
    Hello,
    Malformed,
    Nok,
    Ok,
    Pass,
    Place,
    Quit,
    Ready,
    Score,
    ServerMessage,
    ServerMessageReader,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
    decode_client,
    is_supported_version,
)
from meeple.protocols.framing import FramedSession

__all__ = [
    "CLIENT_SENDS",
    "OUT_OF_STATE",
    "SERVER_SENDS",
    "TURN_COMMANDS",
    "ClientEvent",
    "ClientSession",
    "Close",
    "ConnectionClosed",
    "Greeted",
    "Ignored",
    "PeerNok",
    "Reply",
    "ServerEvent",
    "ServerSession",
    "State",
]


class State(enum.Enum):
    """Where a connection is in the RFC's conversation; both sessions use the same states."""

    CONNECTED = "connected"  # the server has not said HELLO yet
    GREETING = "greeting"  # the server said HELLO; the client's HELLO is awaited
    WELCOMING = "welcoming"  # the client said HELLO; the server's OK or NOK is awaited
    LOBBY = "lobby"  # greeted, not ready (also after a game: WINNER)
    READY = "ready"  # READY sent; STARTING comes once everyone is ready
    GAME = "game"  # STARTING sent; until WINNER
    QUITTING = "quitting"  # QUIT sent; the client reads on until GOODBYE (§3.2)
    CLOSED = "closed"  # QUIT/GOODBYE, or the stream ended


_S = State
_ANY_TIME: dict[type[ServerMessage], State] = {Goodbye: _S.CLOSED}

# What the client may send in each state, and the state it leads to (§3.1–§3.16).
CLIENT_SENDS: Mapping[State, Mapping[type[ClientMessage], State]] = MappingProxyType(
    {
        _S.CONNECTED: {Quit: _S.QUITTING},
        _S.GREETING: {Hello: _S.WELCOMING, Quit: _S.QUITTING},
        _S.WELCOMING: {Quit: _S.QUITTING},
        # §3.5: USERSET "can be reset at any time" before the game (see OUT_OF_STATE).
        _S.LOBBY: {UserSet: _S.LOBBY, Ready: _S.READY, Quit: _S.QUITTING},
        # A second READY is answered OK again: being ready twice is still being ready.
        _S.READY: {UserSet: _S.READY, Ready: _S.READY, Quit: _S.QUITTING},
        _S.GAME: {Place: _S.GAME, Pass: _S.GAME, Exchange: _S.GAME, Quit: _S.QUITTING},
        _S.QUITTING: {},
        _S.CLOSED: {},
    }
)

# What the server may send in each state, and the state it leads to. OK and NOK answer
# a command in any greeted state; GOODBYE ends the connection from any state.
SERVER_SENDS: Mapping[State, Mapping[type[ServerMessage], State]] = MappingProxyType(
    {
        _S.CONNECTED: {Hello: _S.GREETING, **_ANY_TIME},
        # NOK: a command before HELLO that the server answers rather than closing on.
        _S.GREETING: {Nok: _S.GREETING, **_ANY_TIME},
        # §3.4: "NOK Unsupported version!" leaves the client to try again or QUIT.
        _S.WELCOMING: {Ok: _S.LOBBY, Nok: _S.GREETING, **_ANY_TIME},
        _S.LOBBY: {
            Ok: _S.LOBBY,
            Nok: _S.LOBBY,
            UserJoin: _S.LOBBY,
            UserChange: _S.LOBBY,
            # A tie has several winners, one WINNER line each (docs/protocols/clarkson.md).
            Winner: _S.LOBBY,
            **_ANY_TIME,
        },
        _S.READY: {
            Ok: _S.READY,
            Nok: _S.READY,
            UserJoin: _S.READY,
            UserChange: _S.READY,
            Starting: _S.GAME,
            **_ANY_TIME,
        },
        _S.GAME: {
            Ok: _S.GAME,
            Nok: _S.GAME,
            Score: _S.GAME,
            BoardPush: _S.GAME,
            Tiles: _S.GAME,
            Turn: _S.GAME,
            Winner: _S.LOBBY,
            **_ANY_TIME,
        },
        # The server answers QUIT with GOODBYE at once (§3.2); what it sent before the
        # QUIT arrived is still read (as Ignored) on the client side.
        _S.QUITTING: _ANY_TIME,
        _S.CLOSED: {},
    }
)

# The NOK text for a client message its state does not allow (None: GOODBYE, §3.1).
_NOT_STARTED = {
    Place: replies.NOT_STARTED,
    Pass: replies.NOT_STARTED,
    Exchange: replies.NOT_STARTED,
}
OUT_OF_STATE: Mapping[State, Mapping[type[ClientMessage], str] | None] = MappingProxyType(
    {
        _S.CONNECTED: None,
        _S.GREETING: None,
        _S.WELCOMING: None,
        _S.LOBBY: {Hello: replies.ALREADY_GREETED, **_NOT_STARTED},
        _S.READY: {Hello: replies.ALREADY_GREETED, **_NOT_STARTED},
        _S.GAME: {
            Hello: replies.ALREADY_GREETED,
            UserSet: replies.NAME_IN_GAME,
            Ready: replies.ALREADY_STARTED,
        },
        _S.QUITTING: None,
        _S.CLOSED: {},
    }
)

# The commands of a turn (§3.13: out of turn they get NOK).
TURN_COMMANDS = (Place, Pass, Exchange)


@dataclass(frozen=True, slots=True)
class Reply:
    """The session answered a line itself (a NOK); send ``data``. Nothing else changes."""

    data: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class PeerNok:
    """The client sent ``NOK``: a peer's error report. Log it; it is never answered, or
    two peers that both answer errors would bounce NOKs for ever (issue 16)."""

    description: str


@dataclass(frozen=True, slots=True)
class Close:
    """Send ``data`` (GOODBYE) and close: the client quit (§3.2) or broke §3.1."""

    data: bytes
    reason: str


@dataclass(frozen=True, slots=True)
class Greeted:
    """The client's HELLO had a supported version; ``data`` is the OK to send (§3.3).

    The session answers it itself, so lines pipelined after the HELLO are read in the
    greeted state; the handler sends ``data`` and seats the client (USERJOIN, §3.7).
    """

    hello: Hello
    data: bytes


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer's stream ended."""


@dataclass(frozen=True, slots=True)
class Ignored:
    """A server message that makes no sense in the client's state; ``reason`` says why."""

    message: ServerMessage
    reason: str


ServerEvent = (
    Greeted | UserSet | Ready | Place | Pass | Exchange | Reply | PeerNok | Close | ConnectionClosed
)
ClientEvent = ServerMessage | Malformed | Ignored | ConnectionClosed


class _Session(FramedSession):
    """What both sides share: the framer, the state, and what the server told the client."""

    def __init__(self, max_line_size: int) -> None:
        self._framer: LineFramer = LineFramer(max_line_size)
        self.state = State.CONNECTED
        self.name: str | None = None  # the client's name as the server uses it
        self.turn: str | None = None  # whose turn it is (last TURN), None outside a game

    @property
    def closed(self) -> bool:
        return self.state is State.CLOSED

    @property
    def your_turn(self) -> bool:
        """True when the last TURN named this client."""
        return self.state is State.GAME and self.turn is not None and self.turn == self.name

    def _check_open(self, what: str) -> None:
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"{what} after the connection closed")

    def _server_sent(self, message: ServerMessage, next_state: State) -> None:
        """Advance for a server message, sent (server side) or received (client side)."""
        self.state = next_state
        match message:
            case UserChange(old=old, new=new) if old == self.name:
                self.name = new
            case Starting() | Winner():
                self.turn = None
            case Turn(name=name):
                self.turn = name


class ServerSession(_Session):
    """One client connection, seen from the server: bytes in, requests out; messages in,
    bytes out.

    Call :meth:`send` with this server's HELLO first (§3.1), then :meth:`receive_data`
    with each chunk and act on the events; :meth:`send` every message for this client
    (it checks the message is allowed now and moves the state on); :meth:`receive_eof`
    when the socket closes. Set :attr:`name` to the client's default name (§3.5: its IP
    address) when the connection is made.
    """

    def __init__(self, *, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        super().__init__(max_line_size)

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Take bytes from the client; return what to do about each line, in order.

        Never raises for anything the client sends. After a :class:`Close` the session
        is CLOSED and later lines are dropped.
        """
        return list(self.events(data))

    def events(self, data: bytes) -> Iterator[ServerEvent]:
        """As :meth:`receive_data`, one line at a time: each line is read only once the
        caller has acted on the event before it, so what the server sends in answer to
        one command (USERCHANGE for a USERSET) goes out before a QUIT that came in the
        same read closes the session."""
        if self.state is State.CLOSED:
            return
        for line in self._framer.receive_data(data):
            if self.closed:  # lines after QUIT or a GOODBYE are not read
                return
            if isinstance(line, OversizedLine):
                yield self._refuse(replies.LINE_TOO_LONG.format(limit=line.limit))
            else:
                yield self._handle(line.text)

    def receive_eof(self) -> list[ServerEvent]:
        """The client closed the stream: the session is CLOSED; a partial line is dropped."""
        if self.state is State.CLOSED:
            return []
        self.state = State.CLOSED
        return [ConnectionClosed()]

    def send(self, message: ServerMessage) -> bytes:
        """The bytes of ``message`` for this client; moves the state on.

        Raise LocalProtocolError if the message is not allowed now (STARTING to a client
        that is not ready, TILES outside a game, anything after GOODBYE).
        """
        self._check_open("send")
        next_state = SERVER_SENDS[self.state].get(type(message))
        if next_state is None:
            raise LocalProtocolError(f"{message.command} not allowed in {self.state.name}")
        data = message.encode()  # checks the values; raises before the state moves
        self._server_sent(message, next_state)
        return data

    def _refuse(self, description: str) -> Reply | Close:
        """A bad line: NOK once greeted, GOODBYE before (§3.1 "SHOULD terminate")."""
        if OUT_OF_STATE[self.state] is None:
            return self._close(f"before HELLO: {description}")
        return Reply(self.send(Nok(description)), description)

    def _close(self, reason: str) -> Close:
        return Close(self.send(Goodbye()), reason)

    def _handle(self, line: str) -> ServerEvent:
        try:
            message = decode_client(line)
        except UnrecognizedCommand as exc:
            if exc.command == Nok.command:
                return PeerNok(line.strip()[len(Nok.command) :].strip())
            return self._refuse(exc.description)
        except RemoteProtocolError as exc:
            return self._refuse(exc.description)
        next_state = CLIENT_SENDS[self.state].get(type(message))
        if next_state is None:
            texts = OUT_OF_STATE[self.state]
            if texts is None:
                return self._close(f"{message.command} before HELLO")
            return self._refuse(texts.get(type(message), replies.UNRECOGNIZED))
        if isinstance(message, Quit):
            return self._close("QUIT")  # §3.2: GOODBYE, then both sides close
        if isinstance(message, TURN_COMMANDS) and not self.your_turn:
            return self._refuse(replies.NOT_YOUR_TURN)  # §3.13, §4.1's example
        self.state = next_state
        if isinstance(message, Hello):
            if not is_supported_version(message.version):
                # §3.4's example: NOK, and the client may say HELLO again or QUIT.
                return Reply(self.send(Nok(replies.UNSUPPORTED_VERSION)), message.version[:20])
            greeting = replies.GREETING.format(name=self.name or "your address")
            return Greeted(message, self.send(Ok(greeting)))
        return message


class ClientSession(_Session):
    """The connection to a server, seen from a client (library, bot, test).

    Call :meth:`receive_data` with bytes from the server: its messages come back in
    order (BOARDPUSH assembled from its 15 rows), with :class:`Malformed` for lines that
    cannot be read and :class:`Ignored` for messages that make no sense in the state.
    Call :meth:`send` with each message to send; it checks the message is allowed now.
    """

    def __init__(self, *, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        super().__init__(max_line_size)
        self._reader = ServerMessageReader()

    def send(self, message: ClientMessage) -> bytes:
        """The bytes of ``message`` for the server; moves the state on.

        Raise LocalProtocolError if it is not allowed now: READY before the server's OK,
        PLACE outside a game or when the last TURN named someone else.
        """
        self._check_open("send")
        next_state = CLIENT_SENDS[self.state].get(type(message))
        if next_state is None:
            raise LocalProtocolError(f"{message.command} not allowed in {self.state.name}")
        if isinstance(message, TURN_COMMANDS) and not self.your_turn:
            raise LocalProtocolError(f"{message.command} when it is not our turn")
        data = message.encode()
        self.state = next_state
        return data

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        """Take bytes from the server; return its messages and any problems, in order."""
        self._check_open("receive_data")
        events: list[ClientEvent] = []
        for line in self._framer.receive_data(data):
            for item in self._reader.feed(line):
                events.append(self._handle(item))
        return events

    def receive_eof(self) -> list[ClientEvent]:
        """The server closed the stream: the session is CLOSED."""
        if self.state is State.CLOSED:
            return []
        events: list[ClientEvent] = []
        for line in self._framer.finish():
            for item in self._reader.feed(line):
                events.append(self._handle(item))
        self.state = State.CLOSED
        return [*events, ConnectionClosed()]

    def _handle(self, item: ServerMessage | Malformed) -> ClientEvent:
        if isinstance(item, Malformed) or self.state is State.CLOSED:
            return item
        next_state = SERVER_SENDS[self.state].get(type(item))
        if next_state is None:
            return Ignored(item, f"{item.command} in {self.state.name}")
        self._server_sent(item, next_state)
        return item

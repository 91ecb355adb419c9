"""Twente session state machines, one per side, with their transitions as data.

Both sides walk the spec's flow (Happy Flow; ERRATA): announce → lobby → queue → game
→ game over → lobby again. The two tables below say which command each side may send
in each state and where it leads; :class:`ServerSession` and :class:`ClientSession`
read the same tables from opposite ends, so they cannot disagree.

Server side, as the asyncio layer uses it::

    session = ServerSession()
    for event in session.receive_data(chunk):      # bytes from the socket
        match event:
            case Rejected():  write(event.data)    # an ERROR reply; the state is unchanged
            case Join():      write(session.send(Welcome(event.name, flags)))
                              # then: session.receive_data(b"") for messages held meanwhile
            case Enqueue() | PlayWord() | ...:     # hand to the lobby / room
    write(session.send(StartGame(...)))            # sending moves the state on
    session.receive_eof()                          # → [ConnectionClosed()]

While an ANNOUNCE waits for its WELCOME or ERROR (state ANNOUNCING), later messages
are held (at most ``max_held``), because whether they are allowed depends on that
reply; ``receive_data(b"")`` after the reply hands them out.
"""

from __future__ import annotations

import enum
from collections import deque

from meeple.protocols.framing import FramedSession
from meeple.protocols.twente.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from meeple.protocols.twente.events import (
    Chat,
    ConnectionClosed,
    Enqueue,
    Exchange,
    Ignored,
    Join,
    Pass,
    PeerError,
    PlayWord,
    Rejected,
)
from meeple.protocols.twente.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    Frame,
    FrameEvent,
    Framer,
    OversizedFrame,
)
from meeple.protocols.twente.messages import (
    CLIENT_COMMANDS,
    DEFAULT_PLAYERS,
    EXTENSIONS,
    SERVER_COMMANDS,
    Announce,
    ClientMessage,
    Command,
    Error,
    Flag,
    GameOver,
    InformQueue,
    InformSwap,
    InformWord,
    MakeSwap,
    MakeWord,
    Message,
    NotifyTurn,
    RequestGame,
    SendChat,
    ServerMessage,
    StartGame,
    Welcome,
    decode_args,
)

__all__ = [
    "CLIENT_SENDS",
    "DEFAULT_MAX_HELD",
    "OUT_OF_STATE",
    "QUEUE_REFUSALS",
    "SERVER_SENDS",
    "ClientEvent",
    "ClientSession",
    "ServerEvent",
    "ServerSession",
    "State",
]


class State(enum.Enum):
    """Where a connection is in the spec's flow; both sessions use the same states."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    NEW = "new"  # connected, not (successfully) announced
    ANNOUNCING = "announcing"  # ANNOUNCE sent, WELCOME or ERROR not yet
    LOBBY = "lobby"  # welcomed, in no queue and no game
    QUEUED = "queued"  # REQUESTGAME sent; waiting for the game to start
    GAME = "game"  # STARTGAME sent; until GAMEOVER
    CLOSED = "closed"  # the stream ended


_S = State
_C = Command

# What the client may send in each state, and the state it leads to (spec "Commands",
# "Happy Flow"). ERROR goes both ways (spec "Errors") and never moves the state.
CLIENT_SENDS: dict[State, dict[Command, State]] = {
    _S.NEW: {_C.ANNOUNCE: _S.ANNOUNCING, _C.ERROR: _S.NEW},
    _S.ANNOUNCING: {_C.ERROR: _S.ANNOUNCING},
    _S.LOBBY: {_C.REQUESTGAME: _S.QUEUED, _C.SENDCHAT: _S.LOBBY, _C.ERROR: _S.LOBBY},
    # A second REQUESTGAME while queued goes to the lobby, which may move the player to
    # another queue (the spec is silent; see docs/protocols/twente.md).
    _S.QUEUED: {_C.REQUESTGAME: _S.QUEUED, _C.SENDCHAT: _S.QUEUED, _C.ERROR: _S.QUEUED},
    _S.GAME: {_C.MAKEMOVE: _S.GAME, _C.SENDCHAT: _S.GAME, _C.ERROR: _S.GAME},
    _S.CLOSED: {},
}

# What the server may send in each state, and the state it leads to.
SERVER_SENDS: dict[State, dict[Command, State]] = {
    _S.NEW: {_C.ERROR: _S.NEW},
    # spec E001: ERROR answers an ANNOUNCE whose name is taken; the client is not in.
    _S.ANNOUNCING: {_C.WELCOME: _S.LOBBY, _C.ERROR: _S.NEW},
    _S.LOBBY: {_C.NOTIFYCHAT: _S.LOBBY, _C.ERROR: _S.LOBBY},
    _S.QUEUED: {
        _C.INFORMQUEUE: _S.QUEUED,
        _C.STARTGAME: _S.GAME,
        _C.NOTIFYCHAT: _S.QUEUED,
        _C.ERROR: _S.QUEUED,  # but see QUEUE_REFUSALS
    },
    _S.GAME: {
        _C.NEWTILES: _S.GAME,
        _C.NOTIFYTURN: _S.GAME,
        _C.INFORMMOVE: _S.GAME,
        _C.PLAYERDISCONNECTED: _S.GAME,
        _C.NOTIFYCHAT: _S.GAME,
        _C.ERROR: _S.GAME,
        _C.GAMEOVER: _S.LOBBY,
    },
    _S.CLOSED: {},
}

# An ERROR with one of these codes, answering a REQUESTGAME not yet acknowledged by
# INFORMQUEUE, refuses the request: the client goes back to the lobby (spec E010, E015).
QUEUE_REFUSALS = frozenset({ErrorCode.WRONG_NUMBER_OF_PLAYERS, ErrorCode.GAME_ALREADY_STARTED})

# The reply to a client command that CLIENT_SENDS does not allow in a state.
OUT_OF_STATE: dict[State, dict[Command, ErrorCode]] = {
    _S.NEW: {
        _C.REQUESTGAME: ErrorCode.NOT_ANNOUNCED,  # spec E013
        _C.MAKEMOVE: ErrorCode.NOT_ANNOUNCED,
        _C.SENDCHAT: ErrorCode.NOT_ANNOUNCED,
    },
    _S.ANNOUNCING: {
        _C.ANNOUNCE: ErrorCode.ALREADY_ANNOUNCED,
        _C.REQUESTGAME: ErrorCode.NOT_ANNOUNCED,
        _C.MAKEMOVE: ErrorCode.NOT_ANNOUNCED,
        _C.SENDCHAT: ErrorCode.NOT_ANNOUNCED,
    },
    _S.LOBBY: {_C.ANNOUNCE: ErrorCode.ALREADY_ANNOUNCED, _C.MAKEMOVE: ErrorCode.NOT_IN_GAME},
    _S.QUEUED: {_C.ANNOUNCE: ErrorCode.ALREADY_ANNOUNCED, _C.MAKEMOVE: ErrorCode.NOT_IN_GAME},
    # A REQUESTGAME from a player in a game: "Game already started" (spec E015; meeple
    # seats a connection in one game at a time).
    _S.GAME: {
        _C.ANNOUNCE: ErrorCode.ALREADY_ANNOUNCED,
        _C.REQUESTGAME: ErrorCode.GAME_ALREADY_STARTED,
    },
    _S.CLOSED: {},
}

DEFAULT_MAX_HELD = 16  # messages kept while an ANNOUNCE awaits its reply

ServerEvent = (
    Join | Enqueue | PlayWord | Exchange | Pass | Chat | PeerError | ConnectionClosed | Rejected
)
ClientEvent = ServerMessage | PeerError | Rejected | Ignored | ConnectionClosed


def _reject(code: ErrorCode, reason: str) -> Rejected:
    return Rejected(Error(code), reason)


def _reject_frame(event: FrameEvent) -> Rejected:
    # The spec has no code for an unreadable message; E003 ("Invalid argument") is the
    # closest that says "this message, not the connection, was wrong".
    if isinstance(event, OversizedFrame):
        return _reject(ErrorCode.INVALID_ARGUMENT, f"message longer than {event.limit} bytes")
    assert not isinstance(event, Frame)
    return _reject(ErrorCode.INVALID_ARGUMENT, event.reason)


class _Session(FramedSession):
    """What both sides share: the framer, the state, names and flags."""

    def __init__(self, max_message_size: int) -> None:
        self._framer: Framer = Framer(max_message_size)
        self.state = State.NEW
        self.name: str | None = None  # the client's name, once welcomed
        self.client_flags: frozenset[Flag] = frozenset()  # announced by the client
        self.server_flags: frozenset[Flag] = frozenset()  # announced by the server
        self.players: tuple[str, ...] = ()  # the current game's players, in seat order
        self.your_turn = False  # the server told this client it may move
        self._queue_acknowledged = False  # INFORMQUEUE seen since the last REQUESTGAME

    def has_extension(self, flag: Flag) -> bool:
        """True if both sides announced ``flag``, so its commands may be used (ERRATA)."""
        return flag in self.client_flags and flag in self.server_flags

    def _check_closed(self, what: str) -> None:
        if self.state is State.CLOSED:
            raise LocalProtocolError(ErrorCode.UNKNOWN_COMMAND, f"{what} after the stream closed")

    def _server_sent(self, message: Message, next_state: State) -> None:
        """Advance the state for a server message, sent (server) or received (client)."""
        previous = self.state
        self.state = next_state
        match message:
            case Welcome(name=name, flags=flags):
                self.name = name
                self.server_flags = flags
            case Error() if previous is State.ANNOUNCING:
                self.client_flags = frozenset()  # not in: the announce did not count
            case Error(code=code) if (
                previous is State.QUEUED and code in QUEUE_REFUSALS and not self._queue_acknowledged
            ):
                self.state = State.LOBBY
            case InformQueue():
                self._queue_acknowledged = True
            case StartGame(players=players):
                self.players = players
                self.your_turn = False
            case NotifyTurn(your_turn=mine):
                self.your_turn = mine
            case InformWord(player=player) | InformSwap(player=player) if player == self.name:
                self.your_turn = False
            case GameOver():
                self.players = ()
                self.your_turn = False

    def _client_sent(self, message: Message, next_state: State) -> None:
        """Advance the state for a client message, sent (client) or received (server)."""
        self.state = next_state
        match message:
            case Announce(flags=flags):
                self.client_flags = flags
            case RequestGame():
                self._queue_acknowledged = False


class ServerSession(_Session):
    """One client connection, seen from the server. Bytes in, requests out; messages in,
    bytes out.

    Call :meth:`receive_data` with each chunk and act on the events; call :meth:`send`
    with each message for this client (it checks the message is allowed now and moves
    the state on); call :meth:`receive_eof` when the socket closes.
    """

    def __init__(
        self,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_held: int = DEFAULT_MAX_HELD,
    ) -> None:
        super().__init__(max_message_size)
        self.max_held = max_held
        self._held: deque[FrameEvent] = deque()
        self.dropped = 0  # messages dropped because too many were held

    @property
    def held(self) -> int:
        """Messages waiting for the reply to an ANNOUNCE; ``receive_data(b"")`` after it."""
        return len(self._held)

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Take bytes from the client; return what to do about each message, in order.

        Never raises for anything the client sends: every problem is a
        :class:`Rejected` event with the spec's error code. ``b""`` only hands out
        messages held while an ANNOUNCE waited for its reply.
        """
        self._check_closed("receive_data")
        self._held.extend(self._framer.receive_data(data))
        events: list[ServerEvent] = []
        while self._held and self.state is not State.ANNOUNCING:
            events.append(self._handle(self._held.popleft()))
        while len(self._held) > self.max_held:
            # Only a client that pipelines many messages after ANNOUNCE gets here; drop
            # its newest rather than grow without bound.
            self._held.pop()
            self.dropped += 1
        return events

    def receive_eof(self) -> list[ServerEvent]:
        """The client closed the stream: the session is CLOSED; a partial message is lost."""
        if self.state is State.CLOSED:
            return []
        self.state = State.CLOSED
        self._held.clear()
        return [ConnectionClosed()]

    def send(self, message: ServerMessage) -> bytes:
        """The bytes of ``message`` for this client; moves the state on.

        Raise LocalProtocolError if the message is not allowed in the current state
        (e.g. NOTIFYCHAT to a client that did not announce CHAT, STARTGAME outside a queue).
        """
        self._check_closed("send")
        command = message.command
        if command not in SERVER_COMMANDS:
            raise LocalProtocolError(ErrorCode.UNKNOWN_COMMAND, f"a server never sends {command}")
        next_state = SERVER_SENDS[self.state].get(command)
        if next_state is None:
            raise LocalProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"{command.value} not allowed in {self.state.name}"
            )
        self._check_extension(command)
        self._check_consistent(message)
        data = message.encode()  # checks the values; raises before the state moves
        self._server_sent(message, next_state)
        return data

    def _check_extension(self, command: Command) -> None:
        flag = EXTENSIONS.get(command)
        if flag is not None and not self.has_extension(flag):
            # spec E002 example: sending NOTIFYCHAT to a client without CHAT is the
            # server's mistake.
            raise LocalProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"{command.value} needs {flag.value} on both sides"
            )

    def _check_consistent(self, message: ServerMessage) -> None:
        match message:
            case StartGame(players=players) if self.name not in players:
                raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "STARTGAME without the client")
            case NotifyTurn(your_turn=mine, player=player) if mine != (player == self.name):
                raise LocalProtocolError(
                    ErrorCode.INVALID_ARGUMENT, "NOTIFYTURN flag disagrees with the name"
                )
            case Error(code=ErrorCode.NAME_TAKEN) if self.state is not State.ANNOUNCING:
                raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "E001 answers ANNOUNCE only")

    def _handle(self, event: FrameEvent) -> ServerEvent:
        if not isinstance(event, Frame):
            return _reject_frame(event)
        try:
            return self._handle_frame(event)
        except RemoteProtocolError as exc:
            if event.command.strip().upper() == Command.ERROR.value:
                # Even an unreadable ERROR is the peer's error report: answering it with
                # one lets two such peers bounce errors for ever (issue 16).
                return PeerError(None)
            return _reject(exc.code, exc.reason)

    def _handle_frame(self, frame: Frame) -> ServerEvent:
        # Order of checks: the command (E002), then the state (E012–E015), then the
        # extension (E002), then the arguments (E003, E004, ...): a message that is
        # wrong here anyway gets the state's error, which says more than a bad argument.
        command = Command.from_wire(frame.command)
        if command not in CLIENT_COMMANDS:
            raise RemoteProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"{command.value} is not a client command"
            )
        next_state = CLIENT_SENDS[self.state].get(command)
        if next_state is None:
            code = OUT_OF_STATE[self.state][command]
            raise RemoteProtocolError(code, f"{command.value} in {self.state.name}")
        flag = EXTENSIONS.get(command)
        if flag is not None and not self.has_extension(flag):
            raise RemoteProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"{command.value} without {flag.value} announced"
            )
        if command is Command.MAKEMOVE and not self.your_turn:
            # spec E009: also before this client got its NOTIFYTURN. The turn is judged
            # before the arguments, like the state. The room checks the turn too; this
            # catches what the session itself knows.
            raise RemoteProtocolError(ErrorCode.NOT_YOUR_TURN, "no NOTIFYTURN 1 for you")
        message = decode_args(command, frame.args)
        request = self._request_for(message)
        self._client_sent(message, next_state)
        return request

    def _request_for(self, message: Message) -> ServerEvent:
        """The request a valid client message makes, after the checks that need our state."""
        match message:
            case Announce(name=name, flags=flags):
                return Join(name, flags)
            case RequestGame() as request:
                players = request.player_count
                if players != DEFAULT_PLAYERS and Flag.TEAMPLAY not in self.server_flags:
                    # ERRATA: without TEAMPLAY only 2-player games exist; others are E003.
                    raise RemoteProtocolError(
                        ErrorCode.INVALID_ARGUMENT, "only 2-player games without TEAMPLAY"
                    )
                return Enqueue(players)
            case MakeWord(x=x, y=y, direction=direction, word=word):
                return PlayWord(x, y, direction, word)
            case MakeSwap(tiles=tiles):
                return Exchange(tiles) if tiles else Pass()
            case SendChat(text=text):
                return Chat(text)
            case Error(code=code, players=players):
                return PeerError(code, players)
        raise AssertionError(f"no request for {message!r}")  # pragma: no cover


class ClientSession(_Session):
    """The connection to a server, seen from a client (library, bot, test).

    Call :meth:`send` with each message to send (it checks the message is allowed now);
    call :meth:`receive_data` with bytes from the server and act on the events: server
    messages in order, :class:`Rejected` for a message the client should answer with
    ERROR (E002 for an unknown command or an extension not announced), :class:`Ignored`
    for a message that makes no sense in the current state, :class:`PeerError` for an
    ERROR the session could not read (never answered: issue 22).

    :attr:`your_turn` and :attr:`state` are as of the last byte received, so a caller
    that acts on a message should ask :meth:`may_move` first: a later message of the
    same read may already have ended the turn or the game.
    """

    def __init__(self, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        super().__init__(max_message_size)
        self._move_pending = False  # a MAKEMOVE sent, its INFORMMOVE or ERROR not seen
        self.refusals = 0  # our moves refused (ERROR) since the last NOTIFYTURN

    def may_move(self) -> bool:
        """Whether a MAKEMOVE is allowed now: in a game, our turn, no move awaiting its
        verdict. A bot asks this right before :meth:`send`, with no ``await`` between."""
        return self.state is State.GAME and self.your_turn and not self._move_pending

    def send(self, message: ClientMessage) -> bytes:
        """The bytes of ``message`` for the server; moves the state on.

        Raise LocalProtocolError if it is not allowed now: e.g. REQUESTGAME before
        WELCOME, MAKEMOVE when it is not our turn, SENDCHAT without CHAT on both sides.
        """
        self._check_closed("send")
        command = message.command
        next_state = CLIENT_SENDS[self.state].get(command)
        if next_state is None:
            code = OUT_OF_STATE[self.state].get(command, ErrorCode.UNKNOWN_COMMAND)
            raise LocalProtocolError(code, f"{command.value} not allowed in {self.state.name}")
        flag = EXTENSIONS.get(command)
        if flag is not None and not self.has_extension(flag):
            raise LocalProtocolError(
                ErrorCode.UNKNOWN_COMMAND, f"{command.value} needs {flag.value} on both sides"
            )
        match message:
            case MakeWord() | MakeSwap() if not self.your_turn:
                raise LocalProtocolError(ErrorCode.NOT_YOUR_TURN, "wait for NOTIFYTURN 1")
            case RequestGame() as request if (
                request.player_count != DEFAULT_PLAYERS and Flag.TEAMPLAY not in self.server_flags
            ):
                raise LocalProtocolError(
                    ErrorCode.INVALID_ARGUMENT, "the server did not announce TEAMPLAY"
                )
        data = message.encode()
        self._client_sent(message, next_state)
        if isinstance(message, MakeWord | MakeSwap):
            self.your_turn = False
            self._move_pending = True
        return data

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        """Take bytes from the server; return its messages and any problems, in order."""
        self._check_closed("receive_data")
        return [self._handle(event) for event in self._framer.receive_data(data)]

    def receive_eof(self) -> list[ClientEvent]:
        """The server closed the stream: the session is CLOSED."""
        if self.state is State.CLOSED:
            return []
        self.state = State.CLOSED
        return [ConnectionClosed()]

    def _handle(self, event: FrameEvent) -> ClientEvent:
        if not isinstance(event, Frame):
            return _reject_frame(event)
        try:
            command = Command.from_wire(event.command)
            if command not in SERVER_COMMANDS:
                raise RemoteProtocolError(
                    ErrorCode.UNKNOWN_COMMAND, f"{command.value} is not a server command"
                )
            flag = EXTENSIONS.get(command)
            if flag is not None and flag not in self.client_flags:
                # spec E002 example: NOTIFYCHAT to a client that did not announce CHAT.
                raise RemoteProtocolError(
                    ErrorCode.UNKNOWN_COMMAND, f"{command.value} but {flag.value} not announced"
                )
            message = decode_args(command, event.args)
        except RemoteProtocolError as exc:
            if event.command.strip().upper() == Command.ERROR.value:
                # spec "Errors": an ERROR reports a problem with what we sent. Even one
                # we cannot read (an unknown code, a description after it) is never
                # answered with an ERROR: two such peers would bounce them for ever
                # (issue 22). For our move it is a refusal like any other.
                return self._peer_error(_code_of(event.args))
            return _reject(exc.code, exc.reason)
        next_state = SERVER_SENDS[self.state].get(command)
        if next_state is None:
            return Ignored(message, f"{command.value} in {self.state.name}")
        assert isinstance(message, ServerMessage)
        if isinstance(message, Error) and self._move_pending:
            self.your_turn = True  # the move was refused; it is still our turn
            self.refusals += 1
        if isinstance(message, NotifyTurn | StartGame):
            self.refusals = 0
        if isinstance(message, Error | InformWord | InformSwap | NotifyTurn | GameOver):
            self._move_pending = False
        self._server_sent(message, next_state)
        return message

    def _peer_error(self, code: ErrorCode | None) -> PeerError:
        if self._move_pending and self.state is State.GAME:
            self.your_turn = True
            self.refusals += 1
        self._move_pending = False
        return PeerError(code)


def _code_of(args: tuple[str, ...]) -> ErrorCode | None:
    """The error code of an ERROR that did not decode, if its first field names one."""
    try:
        return ErrorCode.from_wire(args[0]) if args else None
    except ValueError:
        return None

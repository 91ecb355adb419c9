"""The CMPN402 state machines, both sides, with every transition as data in this one file.

Server (spec, "Server State Machine", Figure 1): one machine per referee, not per
connection — INIT → READY → IDLE ⇄ AWAIT_CHALLENGE, back to READY at a game's end and
to INIT when a client disconnects. :data:`SERVER_TRANSITIONS` is the spec's table of
inputs; :data:`SERVER_ACCEPTS` says which client message each state takes, and from
whom (any connected client, or only the player on turn). :class:`ServerMachine` reads
both::

    machine = ServerMachine()
    message = machine.receive(data, named=True, on_turn=True)  # or RemoteProtocolError
    machine.advance(ServerInput.PLAY_VALID)                    # the referee's verdict

Client (spec, "Client State Machine", Figure 2): :data:`CLIENT_RECEIVES` (server
message → next state) and :data:`CLIENT_SENDS` (client message → next state);
:class:`ClientSession` refuses what the table does not allow, on either side.

Where the spec has no reply (a move out of turn, a message in a state that does not
take it) the server ignores the message: :class:`RemoteProtocolError` with
``Answer.IGNORE``. The referee logs it and nothing changes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from meeple.protocols.cmpn402.errors import Answer, LocalProtocolError, RemoteProtocolError
from meeple.protocols.cmpn402.messages import (
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    ClientMessage,
    EndMessage,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    Name,
    NameRequest,
    NoChallenge,
    NoChallengeTiles,
    NoChallengeTimes,
    PassMove,
    PassNotice,
    PlayMove,
    PlayNotice,
    ServerMessage,
    Start,
    decode_client,
    decode_server,
)

__all__ = [
    "CLIENT_RECEIVES",
    "CLIENT_SENDS",
    "SERVER_ACCEPTS",
    "SERVER_TRANSITIONS",
    "ClientSession",
    "ClientState",
    "Sender",
    "ServerInput",
    "ServerMachine",
    "ServerState",
]


class ServerState(enum.Enum):
    """Spec, Table 1: Server States."""

    INIT = "INIT"
    READY = "READY"
    IDLE = "IDLE"
    AWAIT_CHALLENGE = "AWAIT_CHALLENGE"


class ServerInput(enum.Enum):
    """The inputs of the spec's server state machine (one per bullet "Input: …")."""

    CONNECT = "connection request"
    NAME = "received NAME"
    DISCONNECT = "a client disconnects"
    PLAYERS_READY = "number of ready players became 2"
    START = "start button or recovery from connection error"
    PASS = "received PASS"
    MOVE_INVALID = "received EXCHANGE or PLAY, invalid"
    EXCHANGE_VALID = "received EXCHANGE, valid"
    PLAY_VALID = "received PLAY, valid"
    NO_CHALLENGE = "received NO_CHALLENGE"
    CHALLENGE_UPHELD = "received CHALLENGE, valid (a word is not in the lexicon)"
    CHALLENGE_REJECTED = "received CHALLENGE, invalid (every word is good)"
    CHALLENGE_TIMEOUT = "challenge time out"
    GAME_OVER = "game ending condition occurred"


_S, _I = ServerState, ServerInput

SERVER_TRANSITIONS: Mapping[tuple[ServerState, ServerInput], ServerState] = {
    # State: INIT
    (_S.INIT, _I.CONNECT): _S.INIT,
    (_S.INIT, _I.NAME): _S.INIT,
    (_S.INIT, _I.DISCONNECT): _S.INIT,
    (_S.INIT, _I.PLAYERS_READY): _S.READY,
    # State: READY
    (_S.READY, _I.START): _S.IDLE,
    # State: IDLE
    (_S.IDLE, _I.PASS): _S.IDLE,
    (_S.IDLE, _I.MOVE_INVALID): _S.IDLE,
    (_S.IDLE, _I.EXCHANGE_VALID): _S.IDLE,
    (_S.IDLE, _I.PLAY_VALID): _S.AWAIT_CHALLENGE,
    # State: AWAIT_CHALLENGE
    (_S.AWAIT_CHALLENGE, _I.NO_CHALLENGE): _S.IDLE,
    (_S.AWAIT_CHALLENGE, _I.CHALLENGE_UPHELD): _S.IDLE,
    (_S.AWAIT_CHALLENGE, _I.CHALLENGE_REJECTED): _S.IDLE,
    (_S.AWAIT_CHALLENGE, _I.CHALLENGE_TIMEOUT): _S.IDLE,
    # State: * ANY — a game's end goes to READY, a disconnection to INIT.
    **{(s, _I.GAME_OVER): _S.READY for s in (_S.IDLE, _S.AWAIT_CHALLENGE)},
    **{(s, _I.DISCONNECT): _S.INIT for s in ServerState},
}


class Sender(enum.Enum):
    """Who may send a message the server state takes."""

    ANY = "any client"  # NAME, from a client that has not sent one yet
    ON_TURN = "the player on turn"  # C1 in the spec


SERVER_ACCEPTS: Mapping[ServerState, Mapping[type[ClientMessage], Sender]] = {
    # NAME is taken in every state from a client that has not named itself: a client
    # may reconnect while the other still waits (spec, "Disconnection").
    _S.INIT: {Name: Sender.ANY},
    _S.READY: {Name: Sender.ANY},
    _S.IDLE: {Name: Sender.ANY, PassMove: Sender.ON_TURN, ExchangeMove: Sender.ON_TURN,
              PlayMove: Sender.ON_TURN},
    _S.AWAIT_CHALLENGE: {Name: Sender.ANY, NoChallenge: Sender.ON_TURN,
                         ChallengeMove: Sender.ON_TURN},
}  # fmt: skip


class ServerMachine:
    """The referee's protocol state: what it accepts now, and where each input leads."""

    def __init__(self) -> None:
        self.state = ServerState.INIT

    def receive(self, data: bytes, *, named: bool, on_turn: bool) -> ClientMessage:
        """Decode a client's message and check the state takes it from that client.

        Raises RemoteProtocolError; its ``answer`` is INVALID only for a malformed
        EXCHANGE or PLAY from the player on turn in IDLE (spec: the one error reply).
        """
        accepted = SERVER_ACCEPTS[self.state]
        try:
            message = decode_client(data)
        except RemoteProtocolError as e:
            answerable = (
                e.answer is Answer.INVALID and on_turn and named and self.state is ServerState.IDLE
            )
            if e.answer is Answer.INVALID and not answerable:
                raise e.with_answer(Answer.IGNORE) from None
            if e.answer is Answer.CLOSE and named:
                raise e.with_answer(Answer.IGNORE) from None  # a bad second NAME
            raise
        sender = accepted.get(type(message))
        if sender is None:
            raise RemoteProtocolError(
                f"{type(message).__name__} is not taken in {self.state.value}", Answer.IGNORE
            )
        if sender is Sender.ANY and named:
            raise RemoteProtocolError("this client has sent its NAME already", Answer.IGNORE)
        if sender is Sender.ON_TURN and not (named and on_turn):
            raise RemoteProtocolError(
                f"{type(message).__name__} from a client not on turn", Answer.IGNORE
            )
        return message

    def can(self, event: ServerInput) -> bool:
        return (self.state, event) in SERVER_TRANSITIONS

    def advance(self, event: ServerInput) -> ServerState:
        """Take one input of the spec's machine; LocalProtocolError if the state has none."""
        try:
            self.state = SERVER_TRANSITIONS[(self.state, event)]
        except KeyError:
            raise LocalProtocolError(f"{event.name} in {self.state.value}") from None
        return self.state


class ClientState(enum.Enum):
    """Spec, Table 1: Client States (spelled correctly here; the spec has REPOSNSE)."""

    INIT = "INIT"
    READY = "READY"
    THINKING = "THINKING"
    IDLE = "IDLE"
    AWAIT_EXCHANGE_RESPONSE = "AWAIT_EXCHANGE_RESPONSE"
    AWAIT_PLAY_RESPONSE = "AWAIT_PLAY_RESPONSE"
    AWAIT_AGENT_CHALLENGE = "AWAIT_AGENT_CHALLENGE"
    AWAIT_CHALLENGE_RESPONSE = "AWAIT_CHALLENGE_RESPONSE"


_C = ClientState

# START goes to THINKING or IDLE by its order; the table holds order 1 and the session
# swaps in IDLE for order 2.
CLIENT_RECEIVES: Mapping[ClientState, Mapping[type[ServerMessage], ClientState]] = {
    _C.INIT: {NameRequest: _C.INIT},
    # meeple: a client asked again for its name (it reconnected) answers again.
    _C.READY: {NameRequest: _C.INIT, Start: _C.THINKING},
    _C.THINKING: {},
    _C.AWAIT_EXCHANGE_RESPONSE: {Invalid: _C.THINKING, ExchangeTiles: _C.IDLE},
    _C.AWAIT_PLAY_RESPONSE: {
        Invalid: _C.THINKING,
        ChallengeRejectedTiles: _C.THINKING,
        NoChallengeTiles: _C.IDLE,
        ChallengeAccepted: _C.IDLE,
    },
    _C.IDLE: {
        PassNotice: _C.THINKING,
        ExchangeNotice: _C.THINKING,
        PlayNotice: _C.AWAIT_AGENT_CHALLENGE,
    },
    _C.AWAIT_AGENT_CHALLENGE: {NoChallengeTimes: _C.THINKING},
    _C.AWAIT_CHALLENGE_RESPONSE: {
        NoChallengeTimes: _C.THINKING,
        ChallengeAcceptedTimes: _C.THINKING,
        ChallengeRejected: _C.IDLE,
    },
}

CLIENT_SENDS: Mapping[ClientState, Mapping[type[ClientMessage], ClientState]] = {
    _C.INIT: {Name: _C.READY},
    _C.THINKING: {PassMove: _C.IDLE, ExchangeMove: _C.AWAIT_EXCHANGE_RESPONSE,
                  PlayMove: _C.AWAIT_PLAY_RESPONSE},
    _C.AWAIT_AGENT_CHALLENGE: {NoChallenge: _C.THINKING,
                               ChallengeMove: _C.AWAIT_CHALLENGE_RESPONSE},
}  # fmt: skip


class ClientSession:
    """An agent's side of the protocol: decode, check against the table, move on.

    ``receive(data)`` returns the server's message (END from any state goes to READY,
    spec "State: * ANY"); ``send(message)`` returns the bytes to write. Both raise a
    ProtocolError for what the state does not allow; ``connection_lost()`` goes to INIT.
    """

    def __init__(self) -> None:
        self.state = ClientState.INIT

    def receive(self, data: bytes) -> ServerMessage:
        message = decode_server(data)
        if isinstance(message, EndMessage):
            self.state = ClientState.READY
            return message
        following = CLIENT_RECEIVES[self.state].get(type(message))
        if following is None:
            raise RemoteProtocolError(
                f"{type(message).__name__} in {self.state.value}", Answer.IGNORE
            )
        if isinstance(message, Start) and message.order == 2:
            following = ClientState.IDLE
        self.state = following
        return message

    def send(self, message: ClientMessage) -> bytes:
        following = CLIENT_SENDS.get(self.state, {}).get(type(message))
        if following is None:
            raise LocalProtocolError(f"{type(message).__name__} in {self.state.value}")
        data = message.encode()
        self.state = following
        return data

    def connection_lost(self) -> None:
        self.state = ClientState.INIT

"""The Spectrangle 1.4 conversation as a state machine: states, triggers, one table.

Both ends of a connection walk the same machine: the server session advances it on
the client messages it receives and the server messages it sends, the client session
on the ones it sends and receives. A message becomes a :class:`Trigger` relative to
the session's own player (a tiles line saying ``turn me`` is a different trigger from
``turn someone-else``), and :data:`TRANSITIONS` says where each trigger leads from
each state. A trigger missing from a state's row is not allowed there.

The phases follow the spec's "Tabular networking protocol"::

    CONNECTING --connect--> NAMING --welcome--> LOBBY --request--> REQUESTED
        ^                      |                  ^                   | waiting
        +-----invalidName------+                  |                   v
                                                  +-- finished/left - QUEUED --start with-->
    STARTING --order--> WATCHING <--tiles (other) / move, replace, skipped (other)
                          |  tiles turn me --> MY_TURN   --place/skip/exchange--> DECIDING_TURN
                          |  tiles skip me --> MUST_SKIP --place/skip/exchange--> DECIDING_SKIP
                          +<-- move/replace/player skipped (me) -- DECIDING_* (invalidMove: back)
    every in-game state --game finished / player left--> LOBBY

Error words may come at any time (an answer to a bad line changes nothing); where
they are the verdict on a request (invalidName after connect, invalidCommand after
request, invalidMove after a turn command) the table has the transition. Chat is
allowed from the lobby on, both ways, when the extension was agreed
(:data:`CHAT_STATES`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

from meeple.protocols.spectrangle.errors import ErrorWord
from meeple.protocols.spectrangle.messages import (
    Chat,
    ChatFrom,
    Connect,
    ErrorReply,
    Exchange,
    GameFinished,
    Message,
    Move,
    Order,
    Place,
    PlayerLeft,
    PlayerSkipped,
    Replace,
    Request,
    Skip,
    SkipNotice,
    StartWith,
    Tiles,
    Waiting,
    Welcome,
)

__all__ = [
    "CHAT_STATES",
    "ERROR_TRIGGERS",
    "PAUSED_STATES",
    "TRANSITIONS",
    "State",
    "Trigger",
    "trigger_of",
]


class State(enum.Enum):
    """Where a connection is in the conversation, seen from its player."""

    CONNECTING = "connecting"  # before connect (or after invalidName)
    NAMING = "naming"  # connect sent, awaiting welcome or invalidName
    LOBBY = "lobby"  # registered, not queued
    REQUESTED = "requested"  # request sent, awaiting waiting / start / invalidCommand
    QUEUED = "queued"  # in a queue
    STARTING = "starting"  # start with received, awaiting order
    WATCHING = "watching"  # in a game, another player's turn
    MY_TURN = "my-turn"  # tiles ... turn me
    MUST_SKIP = "must-skip"  # tiles ... skip me: skip or exchange
    DECIDING_TURN = "deciding-turn"  # turn command sent from MY_TURN, awaiting verdict
    DECIDING_SKIP = "deciding-skip"  # turn command sent from MUST_SKIP, awaiting verdict


class Trigger(enum.Enum):
    """A message, classified by what it means to this connection's player."""

    # client → server
    CONNECT = "connect"
    REQUEST = "request"
    PLACE = "place"
    SKIP = "skip"
    EXCHANGE = "exchange"
    CHAT = "chat"
    # server → client
    WELCOME = "welcome"
    WAITING = "waiting"
    START = "start with"
    ORDER = "order"
    TILES_MY_TURN = "tiles, turn me"
    TILES_MY_SKIP = "tiles, skip me"
    TILES_OTHER = "tiles, another player"
    SKIP_NOTICE_MINE = "skip me (1.3)"
    SKIP_NOTICE_OTHER = "skip another player (1.3)"
    MY_TURN_DONE = "move, replace or player skipped: me"
    OTHER_TURN_DONE = "move, replace or player skipped: another player"
    GAME_FINISHED = "game finished"
    PLAYER_LEFT = "player left"
    CHAT_FROM = "chat from"
    INVALID_MOVE = "invalidMove"
    INVALID_COMMAND = "invalidCommand"
    INVALID_NAME = "invalidName"


ERROR_TRIGGERS = frozenset({Trigger.INVALID_MOVE, Trigger.INVALID_COMMAND, Trigger.INVALID_NAME})

_S = State
_T = Trigger
_IN_GAME = (
    _S.STARTING,
    _S.WATCHING,
    _S.MY_TURN,
    _S.MUST_SKIP,
    _S.DECIDING_TURN,
    _S.DECIDING_SKIP,
)
_TILES = {
    _T.TILES_MY_TURN: _S.MY_TURN,
    _T.TILES_MY_SKIP: _S.MUST_SKIP,
    _T.TILES_OTHER: _S.WATCHING,
}
_TURN_COMMANDS = (_T.PLACE, _T.SKIP, _T.EXCHANGE)

# A game may end in every in-game state: a 1.3 server sends "skip <name>" and then
# "game finished" to a player who must skip, a server may end the game while a turn
# command is on its way (issue 22). The end is never refused, whatever the client did.
_GAME_ENDS = {_T.GAME_FINISHED: _S.LOBBY, _T.PLAYER_LEFT: _S.LOBBY}

# The one table: TRANSITIONS[state][trigger] -> next state.
TRANSITIONS: Mapping[State, Mapping[Trigger, State]] = MappingProxyType(
    {
        state: MappingProxyType(row)
        for state, row in {
            _S.CONNECTING: {_T.CONNECT: _S.NAMING},
            _S.NAMING: {_T.WELCOME: _S.LOBBY, _T.INVALID_NAME: _S.CONNECTING},
            _S.LOBBY: {_T.REQUEST: _S.REQUESTED},
            _S.REQUESTED: {
                _T.WAITING: _S.QUEUED,
                _T.START: _S.STARTING,
                _T.INVALID_COMMAND: _S.LOBBY,
            },
            _S.QUEUED: {
                _T.WAITING: _S.QUEUED,
                _T.START: _S.STARTING,
                _T.PLAYER_LEFT: _S.QUEUED,
            },
            _S.STARTING: {**_GAME_ENDS, _T.ORDER: _S.WATCHING},
            _S.WATCHING: {
                **_TILES,
                _T.OTHER_TURN_DONE: _S.WATCHING,
                _T.SKIP_NOTICE_MINE: _S.MUST_SKIP,
                _T.SKIP_NOTICE_OTHER: _S.WATCHING,
                **_GAME_ENDS,
            },
            _S.MY_TURN: {
                **_TILES,
                **dict.fromkeys(_TURN_COMMANDS, _S.DECIDING_TURN),
                _T.MY_TURN_DONE: _S.WATCHING,  # the server acted for the player (timeout)
                **_GAME_ENDS,
            },
            _S.MUST_SKIP: {
                **_TILES,
                **dict.fromkeys(_TURN_COMMANDS, _S.DECIDING_SKIP),
                _T.SKIP_NOTICE_MINE: _S.MUST_SKIP,
                _T.MY_TURN_DONE: _S.WATCHING,
                **_GAME_ENDS,
            },
            _S.DECIDING_TURN: {
                _T.MY_TURN_DONE: _S.WATCHING,
                _T.INVALID_MOVE: _S.MY_TURN,
                _T.INVALID_COMMAND: _S.MY_TURN,
                **_GAME_ENDS,
            },
            _S.DECIDING_SKIP: {
                _T.MY_TURN_DONE: _S.WATCHING,
                # A 1.3 server announces a chosen skip as "skip <name>" (transcript).
                _T.SKIP_NOTICE_MINE: _S.WATCHING,
                _T.INVALID_MOVE: _S.MUST_SKIP,
                _T.INVALID_COMMAND: _S.MUST_SKIP,
                **_GAME_ENDS,
            },
        }.items()
    }
)

# States where chat (both ways) is allowed once the extension was agreed.
CHAT_STATES = frozenset({_S.LOBBY, _S.REQUESTED, _S.QUEUED, *_IN_GAME})

# States that await the server's verdict on a request: a server session holds further
# lines back until the verdict is sent, so a client may pipeline.
PAUSED_STATES = frozenset({_S.NAMING, _S.REQUESTED, _S.DECIDING_TURN, _S.DECIDING_SKIP})

_ERRORS = {
    ErrorWord.INVALID_MOVE: _T.INVALID_MOVE,
    ErrorWord.INVALID_COMMAND: _T.INVALID_COMMAND,
    ErrorWord.INVALID_NAME: _T.INVALID_NAME,
}
_FIXED: dict[type[Message], Trigger] = {
    Connect: _T.CONNECT,
    Request: _T.REQUEST,
    Place: _T.PLACE,
    Skip: _T.SKIP,
    Exchange: _T.EXCHANGE,
    Chat: _T.CHAT,
    Welcome: _T.WELCOME,
    Waiting: _T.WAITING,
    StartWith: _T.START,
    Order: _T.ORDER,
    GameFinished: _T.GAME_FINISHED,
    PlayerLeft: _T.PLAYER_LEFT,
    ChatFrom: _T.CHAT_FROM,
}


def trigger_of(message: Message, me: str | None) -> Trigger:
    """The trigger ``message`` is for the connection whose player is called ``me``."""
    fixed = _FIXED.get(type(message))
    if fixed is not None:
        return fixed
    if isinstance(message, ErrorReply):
        return _ERRORS[message.word]
    if isinstance(message, Tiles):
        if message.player != me:
            return _T.TILES_OTHER
        return _T.TILES_MY_SKIP if message.must_skip else _T.TILES_MY_TURN
    if isinstance(message, SkipNotice):
        return _T.SKIP_NOTICE_MINE if message.name == me else _T.SKIP_NOTICE_OTHER
    if isinstance(message, Move | Replace | PlayerSkipped):
        return _T.MY_TURN_DONE if message.name == me else _T.OTHER_TURN_DONE
    raise TypeError(f"not a Spectrangle message: {message!r}")

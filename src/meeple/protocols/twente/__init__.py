"""The Twente Scrabble protocol (``scrabble-twente-v2.md``), sans-I/O.

- :mod:`.framing`: bytes ⇄ frames (US between fields, RS after each message);
- :mod:`.messages`: every command as a frozen dataclass with ``encode``/``decode``;
- :mod:`.session`: the server-side and client-side state machines;
- :mod:`.events`: what the sessions hand to the layer above (requests, rejections);
- :mod:`.errors`: error codes E001–E015, the exception tree, engine-error mapping.

The server layer makes a :class:`ServerSession` per connection, feeds it bytes with
``receive_data`` and writes what ``send`` returns. See ``docs/protocols/twente.md``.
"""

from __future__ import annotations

from meeple.protocols.twente.errors import (
    ErrorCode,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    TwenteError,
    error_code_for,
)
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
    Request,
)
from meeple.protocols.twente.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    RS,
    US,
    Frame,
    FrameEvent,
    Framer,
    OversizedFrame,
    UndecodableFrame,
    encode_frame,
)
from meeple.protocols.twente.messages import (
    Announce,
    ClientMessage,
    Command,
    Error,
    Flag,
    GameOver,
    GameOverReason,
    InformQueue,
    InformSwap,
    InformWord,
    MakeSwap,
    MakeWord,
    Message,
    NewTiles,
    NotifyChat,
    NotifyTurn,
    PlayerDisconnected,
    RequestGame,
    SendChat,
    ServerMessage,
    StartGame,
    Welcome,
    decode,
    parse,
)
from meeple.protocols.twente.session import (
    ClientEvent,
    ClientSession,
    ServerEvent,
    ServerSession,
    State,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "RS",
    "US",
    "Announce",
    "Chat",
    "ClientEvent",
    "ClientMessage",
    "ClientSession",
    "Command",
    "ConnectionClosed",
    "Enqueue",
    "Error",
    "ErrorCode",
    "Exchange",
    "Flag",
    "Frame",
    "FrameEvent",
    "Framer",
    "GameOver",
    "GameOverReason",
    "Ignored",
    "InformQueue",
    "InformSwap",
    "InformWord",
    "Join",
    "LocalProtocolError",
    "MakeSwap",
    "MakeWord",
    "Message",
    "NewTiles",
    "NotifyChat",
    "NotifyTurn",
    "OversizedFrame",
    "Pass",
    "PeerError",
    "PlayWord",
    "PlayerDisconnected",
    "ProtocolError",
    "Rejected",
    "RemoteProtocolError",
    "Request",
    "RequestGame",
    "SendChat",
    "ServerEvent",
    "ServerMessage",
    "ServerSession",
    "StartGame",
    "State",
    "TwenteError",
    "UndecodableFrame",
    "Welcome",
    "decode",
    "encode_frame",
    "error_code_for",
    "parse",
]

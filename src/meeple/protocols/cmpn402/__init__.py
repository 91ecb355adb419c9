"""The CMPN402 Scrabble contest protocol (``scrabble-cmpn402-websocket.md``), sans-I/O.

- :mod:`.tiles`: Tile-Format-1 and -2 ⇄ meeple tile characters;
- :mod:`.messages`: the eleven message types, both directions, byte for byte;
- :mod:`.session`: the server and client state machines, transitions as data;
- :mod:`.errors`: the exception tree and what the server answers to each error.

WebSocket itself (RFC 6455) is the server layer's business (the ``websockets``
library); here one WebSocket binary message is one ``bytes``. See
``docs/protocols/cmpn402.md``.
"""

from __future__ import annotations

from meeple.protocols.cmpn402.errors import (
    Answer,
    CloseCode,
    Cmpn402Error,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from meeple.protocols.cmpn402.messages import (
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    ClientMessage,
    EndMessage,
    EndReason,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    MessageType,
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
from meeple.protocols.cmpn402.session import (
    ClientSession,
    ClientState,
    ServerInput,
    ServerMachine,
    ServerState,
)

__all__ = [
    "Answer",
    "ChallengeAccepted",
    "ChallengeAcceptedTimes",
    "ChallengeMove",
    "ChallengeRejected",
    "ChallengeRejectedTiles",
    "ClientMessage",
    "ClientSession",
    "ClientState",
    "CloseCode",
    "Cmpn402Error",
    "EndMessage",
    "EndReason",
    "ExchangeMove",
    "ExchangeNotice",
    "ExchangeTiles",
    "Invalid",
    "LocalProtocolError",
    "MessageType",
    "Name",
    "NameRequest",
    "NoChallenge",
    "NoChallengeTiles",
    "NoChallengeTimes",
    "PassMove",
    "PassNotice",
    "PlayMove",
    "PlayNotice",
    "ProtocolError",
    "RemoteProtocolError",
    "ServerInput",
    "ServerMachine",
    "ServerMessage",
    "ServerState",
    "Start",
    "decode_client",
    "decode_server",
]

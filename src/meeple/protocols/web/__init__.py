"""meeple's own browser protocol: JSON over WebSocket, sans-I/O (docs/protocols/web.md).

- :mod:`.messages`: every message as a frozen dataclass; :func:`decode` with a size limit;
- :mod:`.session`: the server-side state machine (:data:`TRANSITIONS`, one table);
- :mod:`.errors`: the error codes and the exception tree.

The web listener makes a :class:`ServerSession` per WebSocket, feeds it each text
message with ``receive`` and sends what ``send`` returns.
"""

from __future__ import annotations

from meeple.protocols.web.delta import PatchError, apply_patch, diff
from meeple.protocols.web.errors import (
    ErrorCode,
    LocalProtocolError,
    RemoteProtocolError,
    WebProtocolError,
)
from meeple.protocols.web.messages import (
    DEFAULT_MAX_MESSAGE_SIZE,
    MAX_CHAT_LENGTH,
    PROTOCOL,
    TOPICS,
    AddBot,
    Chat,
    ChatLine,
    ClientMessage,
    CreateTable,
    Delta,
    Error,
    Hello,
    Leave,
    Ping,
    Play,
    Pong,
    Preview,
    PreviewReply,
    Ready,
    Rejoin,
    Seated,
    SeatView,
    ServerMessage,
    Sit,
    Snapshot,
    Subscribe,
    Unseated,
    Unsubscribe,
    Welcome,
    decode,
)
from meeple.protocols.web.session import (
    CHAT_BURST,
    CHAT_RATE,
    DEFAULT_MAX_SUBSCRIPTIONS,
    PREVIEW_BURST,
    PREVIEW_RATE,
    TRANSITIONS,
    RateLimit,
    Request,
    ServerSession,
    State,
)

__all__ = [
    "CHAT_BURST",
    "CHAT_RATE",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_SUBSCRIPTIONS",
    "MAX_CHAT_LENGTH",
    "PREVIEW_BURST",
    "PREVIEW_RATE",
    "PROTOCOL",
    "TOPICS",
    "TRANSITIONS",
    "AddBot",
    "Chat",
    "ChatLine",
    "ClientMessage",
    "CreateTable",
    "Delta",
    "Error",
    "ErrorCode",
    "Hello",
    "Leave",
    "LocalProtocolError",
    "PatchError",
    "Ping",
    "Play",
    "Pong",
    "Preview",
    "PreviewReply",
    "RateLimit",
    "Ready",
    "Rejoin",
    "RemoteProtocolError",
    "Request",
    "SeatView",
    "Seated",
    "ServerMessage",
    "ServerSession",
    "Sit",
    "Snapshot",
    "State",
    "Subscribe",
    "Unseated",
    "Unsubscribe",
    "WebProtocolError",
    "Welcome",
    "apply_patch",
    "decode",
    "diff",
]

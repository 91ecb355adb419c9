"""Every message of the browser protocol, as frozen dataclasses with encode/decode.

Every message is one WebSocket text message holding one JSON object with a
``"type"``. Browser → server: :class:`Hello`, :class:`Subscribe`,
:class:`Unsubscribe`, :class:`Ping`. Server → browser: :class:`Welcome`,
:class:`Snapshot` (``lobby``, ``game`` and ``console`` topics), :class:`Pong`,
:class:`Error`. :func:`decode` takes a size limit and raises
:class:`~.errors.RemoteProtocolError` for anything malformed, which the session
turns into an :class:`Error` reply. Issue 13 adds play messages (``join``,
``play``, ...) as new types, allowed in new session states; see ``session.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from meeple.protocols.web.errors import ErrorCode, RemoteProtocolError

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "PROTOCOL",
    "TOPICS",
    "ClientMessage",
    "Error",
    "Hello",
    "Ping",
    "Pong",
    "ServerMessage",
    "Snapshot",
    "Subscribe",
    "Unsubscribe",
    "Welcome",
    "decode",
]

PROTOCOL = "meeple-web/1"
# Browser messages are small (the largest is a subscribe); 4 KiB leaves room for issue 13.
DEFAULT_MAX_MESSAGE_SIZE = 4096
# What a browser may watch: the lobby, one game (by its uid), the CMPN402 console.
TOPICS = ("lobby", "game", "console")
_UID = re.compile(r"[0-9a-f]{1,32}")
_MAX_ID = 2**31 - 1
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Hello:
    """The browser's first message: the protocol it speaks."""

    protocol: str


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Watch a topic: ``lobby``, ``console``, or ``game`` with the game's ``uid``."""

    topic: str
    uid: str | None = None


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    topic: str
    uid: str | None = None


@dataclass(frozen=True, slots=True)
class Ping:
    """Answered by a :class:`Pong` with the same ``id`` (a liveness check from the page)."""

    id: int


ClientMessage = Hello | Subscribe | Unsubscribe | Ping


@dataclass(frozen=True, slots=True)
class Welcome:
    protocol: str
    max_message_size: int

    def encode(self) -> str:
        return _dump(
            {
                "type": "welcome",
                "protocol": self.protocol,
                "max_message_size": self.max_message_size,
            }
        )


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A whole view of a topic (never a diff); ``data`` is its JSON text, made once."""

    topic: str
    uid: str | None
    seq: int
    data: str

    def encode(self) -> str:
        # The snapshot's JSON is spliced in as made, so 1,000 spectators cost one dumps.
        head = _dump({"type": self.topic, "uid": self.uid, "seq": self.seq})
        return f'{head[:-1]},"data":{self.data}}}'


@dataclass(frozen=True, slots=True)
class Pong:
    id: int

    def encode(self) -> str:
        return _dump({"type": "pong", "id": self.id})


@dataclass(frozen=True, slots=True)
class Error:
    """The protocol's error reply; the connection stays open after it."""

    code: ErrorCode
    message: str

    def encode(self) -> str:
        return _dump({"type": "error", "code": self.code.value, "message": self.message})


ServerMessage = Welcome | Snapshot | Pong | Error


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _bad(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(ErrorCode.BAD_MESSAGE, message)


def _fields(
    obj: dict[str, Any], required: AbstractSet[str], optional: AbstractSet[str] = _NONE
) -> None:
    keys = set(obj) - {"type"}
    missing = required - keys
    extra = keys - required - optional
    if missing:
        raise _bad(f"missing field: {', '.join(sorted(missing))}")
    if extra:
        raise _bad(f"unknown field: {', '.join(sorted(extra))}")


def _topic(obj: dict[str, Any]) -> tuple[str, str | None]:
    _fields(obj, {"topic"}, {"uid"})
    topic, uid = obj["topic"], obj.get("uid")
    if topic not in TOPICS:
        raise _bad(f"topic must be one of {', '.join(TOPICS)}")
    if topic == "game":
        if not isinstance(uid, str) or not _UID.fullmatch(uid):
            raise _bad("a game topic needs the game's uid (hex digits)")
    elif uid is not None:
        raise _bad(f"the {topic} topic takes no uid")
    return topic, uid


def decode(data: str | bytes, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> ClientMessage:
    """One browser message; :class:`RemoteProtocolError` says what is wrong with it."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > max_size:
        raise RemoteProtocolError(
            ErrorCode.TOO_LARGE, f"message of {size} bytes; the limit is {max_size}"
        )
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise RemoteProtocolError(ErrorCode.BAD_JSON, "not a JSON text") from e
    if not isinstance(obj, dict):
        raise RemoteProtocolError(ErrorCode.BAD_JSON, "a message is a JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise _bad('a message needs a "type" string')
    if kind == "hello":
        _fields(obj, {"protocol"})
        if not isinstance(obj["protocol"], str):
            raise _bad("protocol must be a string")
        return Hello(obj["protocol"])
    if kind == "subscribe":
        return Subscribe(*_topic(obj))
    if kind == "unsubscribe":
        return Unsubscribe(*_topic(obj))
    if kind == "ping":
        _fields(obj, {"id"})
        ident = obj["id"]
        if not isinstance(ident, int) or isinstance(ident, bool) or not 0 <= ident <= _MAX_ID:
            raise _bad("id must be an integer 0 to 2147483647")
        return Ping(ident)
    raise RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, f"no message type {kind[:40]!r}")

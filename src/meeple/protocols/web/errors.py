"""The browser protocol's error codes and exception tree (docs/protocols/web.md).

::

    WebProtocolError                 anything wrong with a message on this protocol
    ├── RemoteProtocolError          the browser sent something we cannot accept;
    │                                answered with an ``error`` message, connection stays
    └── LocalProtocolError           the server tried to send what the protocol forbids
"""

from __future__ import annotations

import enum

__all__ = ["ErrorCode", "LocalProtocolError", "RemoteProtocolError", "WebProtocolError"]


class ErrorCode(enum.Enum):
    """The ``code`` of an ``error`` message; the value is what goes on the wire."""

    TOO_LARGE = "too-large"  # the message is over the size limit
    BAD_JSON = "bad-json"  # not UTF-8 JSON, or not a JSON object
    BAD_MESSAGE = "bad-message"  # a known type with missing, extra or mistyped fields
    UNKNOWN_TYPE = "unknown-type"  # no message of that type
    NOT_NOW = "not-now"  # a valid message the session's state does not allow
    NOT_FOUND = "not-found"  # no game with that id (running or recorded)
    TOO_MANY = "too-many"  # too many subscriptions on one connection
    REFUSED = "refused"  # the lobby says no: no such table, full, a reserved name, ...
    # The name is held by another connection: maybe this browser's page that is closing
    # (a reload, "Play X now" from a finished game), so the page may ask again shortly.
    NAME_TAKEN = "name-taken"
    ILLEGAL = "illegal"  # the game's rules refuse the move (the message says which rule)
    TOO_FAST = "too-fast"  # chat lines or previews past their rate limit (socket stays)


class WebProtocolError(Exception):
    """Base of the tree; ``code`` is the wire code, ``str(e)`` the human reason."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RemoteProtocolError(WebProtocolError):
    """The browser broke the protocol; the session answers and goes on."""


class LocalProtocolError(WebProtocolError):
    """The server broke the protocol (a bug on our side)."""

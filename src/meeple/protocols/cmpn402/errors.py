"""The CMPN402 protocol's exceptions, and what the server answers to each.

The spec has one error reply, ``INVALID`` (type 9, with the player's times), and only
for an ``EXCHANGE`` or ``PLAY`` that the player to move got wrong (spec, server state
IDLE). Every other broken message has no reply on the wire, so an error here says what
the server layer should do instead (:class:`Answer`)::

    Cmpn402Error
    └── ProtocolError            carries ``answer``, ``close_code`` and a reason
        ├── RemoteProtocolError  the peer sent something the spec forbids
        └── LocalProtocolError   we tried to send something the spec forbids: a bug on our side
"""

from __future__ import annotations

import enum

__all__ = [
    "Answer",
    "CloseCode",
    "Cmpn402Error",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
]


class Answer(enum.Enum):
    """What the server layer does about a message it cannot accept."""

    INVALID = "invalid"
    """Send ``INVALID`` with the player's remaining and total time (the session allows it)."""
    IGNORE = "ignore"
    """Drop the message and log it; send nothing (the spec has no reply for it)."""
    CLOSE = "close"
    """Close the WebSocket with :attr:`ProtocolError.close_code`."""


class CloseCode(enum.IntEnum):
    """The RFC 6455 §7.4.1 close codes meeple uses on a CMPN402 connection."""

    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003  # a text message: the spec sends binary messages only
    INVALID_PAYLOAD = 1007  # a NAME that is not UTF-8
    POLICY_VIOLATION = 1008  # a NAME meeple refuses (empty, control characters)
    MESSAGE_TOO_BIG = 1009
    TRY_AGAIN_LATER = 1013  # ERRATA: a third connection while two seats are taken


class Cmpn402Error(Exception):
    """Base of every exception this package raises."""


class ProtocolError(Cmpn402Error):
    """A message or a transition the spec does not allow.

    ``answer`` says what the server should do; ``close_code`` is set when it is
    :attr:`Answer.CLOSE`. ``message_type`` is the type byte when it was readable.
    """

    def __init__(
        self,
        reason: str,
        answer: Answer = Answer.CLOSE,
        close_code: CloseCode | None = None,
        message_type: int | None = None,
    ) -> None:
        if answer is Answer.CLOSE and close_code is None:
            close_code = CloseCode.PROTOCOL_ERROR
        self.reason = reason
        self.answer = answer
        self.close_code = close_code if answer is Answer.CLOSE else None
        self.message_type = message_type
        super().__init__(reason)


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol: do what :attr:`answer` says, and keep going unless CLOSE."""

    def with_answer(self, answer: Answer) -> RemoteProtocolError:
        """The same error with another answer (the session knows better than the decoder)."""
        return RemoteProtocolError(self.reason, answer, self.close_code, self.message_type)


class LocalProtocolError(ProtocolError):
    """We tried to send something the spec (or the session's state) does not allow: a bug."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, Answer.CLOSE, CloseCode.PROTOCOL_ERROR)

"""What an AM27 session hands to the layer above besides the messages themselves.

The server session hands on each acceptable client message (:class:`Register`,
:class:`GodInit`, :class:`Move`, ...) as it is, plus :class:`Rejected` (the client
gets an INFO with ``code``; in a game a fresh UPDATE follows), :class:`Ignored`
(a message that gets no answer, as the group's server ignores a second REGISTER) and
:class:`ConnectionClosed`. The client session hands on server messages, plus
:class:`Ignored`, :class:`Rejected` (a server message it could not read) and
:class:`ConnectionClosed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.protocols.santorini.messages import InfoCode, Message

__all__ = ["ConnectionClosed", "Ignored", "Rejected"]


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message was refused; answer INFO ``code`` (and, in a game, a fresh UPDATE)."""

    code: InfoCode
    reason: str
    in_game: bool = False


@dataclass(frozen=True, slots=True)
class Ignored:
    """A readable message that gets no answer in the current state."""

    message: Message
    reason: str


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The stream ended; the session is CLOSED."""

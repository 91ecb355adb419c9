"""The Clarkson package's exceptions.

The RFC has a single error reply, ``NOK <description>`` (§3.4), so every exception
carries the description the peer should read::

    ClarksonError
    └── ProtocolError            carries ``description``, the text of the NOK reply
        ├── RemoteProtocolError  the peer sent something the RFC forbids: answer NOK
        │   └── UnrecognizedCommand  a command this side does not know (§3.4's example)
        └── LocalProtocolError   we tried to send something the RFC forbids: a bug here

Sessions never let a RemoteProtocolError escape: they turn it into a reply. The
mapping of the Scrabble engine's rule errors to NOK texts is in
:mod:`meeple.protocols.clarkson.replies`.
"""

from __future__ import annotations

__all__ = [
    "ClarksonError",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "UnrecognizedCommand",
]


class ClarksonError(Exception):
    """Base of every exception of the Clarkson protocol package."""


class ProtocolError(ClarksonError):
    """A breach of the RFC; ``description`` is what a NOK reply should say."""

    def __init__(self, description: str) -> None:
        self.description = description
        super().__init__(description)


class RemoteProtocolError(ProtocolError):
    """The peer sent a line the RFC does not allow (malformed, or wrong for the state)."""


class UnrecognizedCommand(RemoteProtocolError):
    """A line whose command this side does not know (RFC §3.4: ``NOK unrecognized command``)."""

    def __init__(self, command: str) -> None:
        self.command = command
        super().__init__("unrecognized command")


class LocalProtocolError(ProtocolError):
    """This side tried to send something the RFC forbids, or in the wrong state: a bug."""

"""The bus: how the parts of meeple talk, whether they share a process or not.

Two patterns, on subjects named by :class:`~meeple.bus.subjects.Namespace`:

- **request/reply**: a seat's command to its room's owner, a request to the lobby's
  leader. :meth:`Bus.serve` answers a subject, :meth:`Bus.request` asks and waits for
  one answer (:class:`NoResponder` when nobody serves it, :class:`BusTimeout` when the
  answer does not come, :class:`RemoteError` when the responder failed).
- **publish/subscribe**: per-seat private events, spectator views, the lobby's events.
  :meth:`Bus.publish` sends to whoever listens now (nobody is fine);
  :meth:`Bus.subscribe` listens to a subject or a pattern (NATS wildcards: ``*`` one
  token, ``>`` the rest). A listener gets one publisher's messages in the order they
  were published.

Payloads are bytes (the caller encodes, JSON in meeple): the two implementations carry
exactly the same thing, so what works in one process works across machines.

- :class:`~meeple.bus.local.LocalBus`: in-process, for ``meeple serve``.
- :class:`~meeple.bus.natsbus.NatsBus`: NATS, for the cluster.

Exceptions::

    BusError
    ├── NoResponder     nobody serves the subject (a room without an owner now)
    ├── BusTimeout      no answer in time (the owner may be gone: ask again)
    ├── RemoteError     the responder's handler raised; its message
    └── BusClosed       the bus was closed
"""

from __future__ import annotations

import abc
import re
from collections.abc import Awaitable, Callable

__all__ = [
    "Bus",
    "BusClosed",
    "BusError",
    "BusTimeout",
    "Handler",
    "Listener",
    "NoResponder",
    "RemoteError",
    "SubjectHandler",
    "Subscription",
    "matches",
]

#: Answers one request: its payload in, the reply's out.
Handler = Callable[[bytes], Awaitable[bytes]]
#: Answers one request told its subject too (whose last token may name its sender).
SubjectHandler = Callable[[str, bytes], Awaitable[bytes]]
#: Gets one published message: its subject and payload.
Listener = Callable[[str, bytes], Awaitable[None]]

#: The header (NATS) that marks a reply as the responder's failure.
ERROR_HEADER = "Meeple-Error"


class BusError(Exception):
    """Something the bus could not carry; see the module doc for the tree."""


class NoResponder(BusError):
    """Nobody serves the subject of a request."""


class BusTimeout(BusError):
    """A request got no answer in time."""


class RemoteError(BusError):
    """The responder's handler raised; the message is its description."""


class BusClosed(BusError):
    """The bus is closed."""


_SUBJECT = re.compile(r"[^\s.*>]+(\.[^\s.*>]+)*")
_PATTERN = re.compile(r"([^\s.*>]+|\*)(\.([^\s.*>]+|\*))*(\.>)?|>")


def check_subject(subject: str) -> str:
    """``subject`` if it names one subject (no wildcard, no empty token)."""
    if not _SUBJECT.fullmatch(subject):
        raise ValueError(f"not a subject: {subject!r}")
    return subject


def check_pattern(pattern: str) -> str:
    """``pattern`` if it is a subject or a NATS wildcard pattern."""
    if not _PATTERN.fullmatch(pattern):
        raise ValueError(f"not a subject pattern: {pattern!r}")
    return pattern


def matches(pattern: str, subject: str) -> bool:
    """Whether ``subject`` matches ``pattern`` as NATS matches them."""
    want = pattern.split(".")
    have = subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(have) > i
        if i >= len(have) or (token != "*" and token != have[i]):
            return False
    return len(want) == len(have)


class Subscription(abc.ABC):
    """A :meth:`Bus.serve` or :meth:`Bus.subscribe`; :meth:`close` ends it."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop receiving; messages already delivered are not taken back."""


class Bus(abc.ABC):
    """Request/reply and publish/subscribe between meeple's parts; see the module doc."""

    @abc.abstractmethod
    async def request(self, subject: str, payload: bytes, *, timeout: float = 5.0) -> bytes:
        """Ask whoever serves ``subject``; their answer."""

    async def serve(
        self, subject: str, handler: Handler, *, queue: str | None = None
    ) -> Subscription:
        """Answer requests on ``subject`` (a pattern may have wildcards) with
        ``handler``; requests made after it returns reach it. Responders that share a
        ``queue`` name split the requests (one of them answers each); without one, one
        responder per subject is expected (a room's owner)."""

        async def answer(_subject: str, payload: bytes) -> bytes:
            return await handler(payload)

        return await self.serve_from(subject, answer, queue=queue)

    @abc.abstractmethod
    async def serve_from(
        self, pattern: str, handler: SubjectHandler, *, queue: str | None = None
    ) -> Subscription:
        """As :meth:`serve`, the handler told each request's subject as well: on
        ``<ns>.room.<uid>.cmd.*`` its last token is who sent it, which NATS permissions
        vouch for (:meth:`~meeple.bus.subjects.Namespace.sender_of`)."""

    @abc.abstractmethod
    async def publish(self, subject: str, payload: bytes) -> None:
        """Send ``payload`` to the listeners of ``subject`` now (none is fine)."""

    @abc.abstractmethod
    async def subscribe(self, pattern: str, listener: Listener) -> Subscription:
        """Call ``listener`` for each message published on a subject ``pattern`` matches
        after it returns, one at a time, in the order each publisher sent them."""

    async def flush(self) -> None:  # noqa: B027 (a default, not a stub)
        """Return when what was published before has reached the server (NATS); a
        subscription made after a flush sees only later messages. Nothing to wait for
        in one process."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close every subscription and the connection."""

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

Payloads are bytes, or a :class:`Sealed` value: a value and the :class:`Codec` that
turns it into bytes (issue 32.2). Over NATS a sealed value is encoded by its codec where
it is sent, so the bytes on the wire are the codec's, as if the caller had encoded it.
In one process (:class:`~meeple.bus.local.LocalBus`) it crosses **by reference**: a
receiver that asked for values (:meth:`Bus.listen`, :meth:`Bus.answer`) is handed the
very object the sender sealed, checked against the type it expects, never encoded; a
receiver that asked for bytes (:meth:`Bus.subscribe`, :meth:`Bus.serve_from`) gets the
codec's bytes. Either way what works in one process works across machines.

**The copy rule.** A value crosses by reference only as an immutable one: a frozen
dataclass (or msgspec Struct) whose fields are immutable too (tuples, frozensets,
strings, read-only mappings), or a value its sender built for this message and never
touches again (a seat's view of an event, a fresh dict of a reply). A receiver never
changes what it is handed: it is the sender's object.

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
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "Bus",
    "BusClosed",
    "BusError",
    "BusTimeout",
    "Codec",
    "Handler",
    "Listener",
    "NoResponder",
    "Payload",
    "RemoteError",
    "Sealed",
    "SubjectHandler",
    "Subscription",
    "ValueHandler",
    "ValueHearer",
    "ValueListener",
    "as_bytes",
    "matches",
    "opened",
]


class Codec(Protocol):
    """What turns a value into a bus message's bytes and back (the cluster's:
    :func:`meeple.node.wire.registry`, :data:`meeple.bus.schema.CODEC`)."""

    def encode(self, value: Any) -> bytes:
        """``value`` as bytes."""
        ...

    def decode(self, data: bytes, expect: Any = object) -> Any:
        """The value ``data`` holds, of the type ``expect``; a
        :class:`~meeple.bus.codec.WireError` if it does not decode."""
        ...

    def fits(self, value: object, expect: Any) -> bool:
        """Whether ``value`` (handed over by reference) is of the type ``expect``."""
        ...


@dataclass(frozen=True, slots=True)
class Sealed:
    """A value sent as it is where the bus allows (one process), else as ``codec``'s
    bytes (module doc: the copy rule)."""

    value: object
    codec: Codec

    def encode(self) -> bytes:
        """The bytes this value crosses a network as: its codec's, exactly."""
        return self.codec.encode(self.value)


#: What a message carries: bytes, or a value with its codec.
Payload = bytes | Sealed


def opened(payload: Payload, codec: Codec, expect: Any = object) -> Any:
    """The value ``payload`` holds for a receiver that reads it with ``codec`` as
    ``expect``: a value sealed with the same codec is itself (checked against
    ``expect``, never copied: the copy rule), any other payload is decoded from bytes.
    A payload that is not of ``expect`` is a :class:`~meeple.bus.codec.WireError`, as
    its bytes would be."""
    if isinstance(payload, Sealed):
        if payload.codec is codec:
            if not codec.fits(payload.value, expect):
                from meeple.bus.codec import WireError

                raise WireError("type", f"a {type(payload.value).__name__} not of {expect!r}")
            return payload.value
        payload = payload.encode()
    return codec.decode(payload, expect)


def as_bytes(payload: Payload) -> bytes:
    """``payload`` as the bytes it crosses a network as."""
    return payload.encode() if isinstance(payload, Sealed) else payload


#: Answers one request: its payload in, the reply's out.
Handler = Callable[[bytes], Awaitable[Payload]]
#: Answers one request told its subject too (whose last token may name its sender).
SubjectHandler = Callable[[str, bytes], Awaitable[Payload]]
#: Gets one published message: its subject and payload.
Listener = Callable[[str, bytes], Awaitable[None]]
#: Answers one request as a value (:meth:`Bus.answer`): its subject and value in.
ValueHandler = Callable[[str, Any], Awaitable[Payload]]
#: Gets one published message as a value (:meth:`Bus.listen`): its subject and value.
ValueListener = Callable[[str, Any], Awaitable[None]]
#: Gets one published message as a value without awaiting (:meth:`Bus.hear`).
ValueHearer = Callable[[str, Any], None]

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
    async def request(self, subject: str, payload: Payload, *, timeout: float = 5.0) -> bytes:
        """Ask whoever serves ``subject``; their answer (as bytes: see :meth:`ask`)."""

    async def ask(
        self,
        subject: str,
        payload: Payload,
        codec: Codec,
        expect: Any = object,
        *,
        timeout: float = 5.0,
    ) -> Any:
        """As :meth:`request`, the answer read with ``codec`` as ``expect`` (by reference
        in one process)."""
        return opened(await self.request(subject, payload, timeout=timeout), codec, expect)

    async def serve(
        self, subject: str, handler: Handler, *, queue: str | None = None
    ) -> Subscription:
        """Answer requests on ``subject`` (a pattern may have wildcards) with
        ``handler``; requests made after it returns reach it. Responders that share a
        ``queue`` name split the requests (one of them answers each); without one, one
        responder per subject is expected (a room's owner)."""

        async def answer(_subject: str, payload: bytes) -> Payload:
            return await handler(payload)

        return await self.serve_from(subject, answer, queue=queue)

    @abc.abstractmethod
    async def serve_from(
        self, pattern: str, handler: SubjectHandler, *, queue: str | None = None
    ) -> Subscription:
        """As :meth:`serve`, the handler told each request's subject as well: on
        ``<ns>.room.<uid>.cmd.*`` its last token is who sent it, which NATS permissions
        vouch for (:meth:`~meeple.bus.subjects.Namespace.sender_of`)."""

    async def answer(
        self,
        pattern: str,
        handler: ValueHandler,
        codec: Codec,
        expect: Any = object,
        *,
        queue: str | None = None,
        inline: bool = False,
    ) -> Subscription:
        """As :meth:`serve_from`, the handler handed each request as a value of
        ``expect`` read with ``codec`` (by reference in one process); a request that is
        not one is refused (:class:`RemoteError` to its sender).

        ``inline``: the handler may answer several requests at once and bounds its own
        wait (a room's owner: its ``command_wait``, then ``busy``), and a requester that
        stops waiting (cancelled) does not undo what it asked. In one process it then
        runs in the requester's own step, as a direct call: no queue, no task, no timer
        (the request's ``timeout`` is the handler's own bound); over NATS it changes
        nothing."""

        async def answer(subject: str, payload: bytes) -> Payload:
            return await handler(subject, opened(payload, codec, expect))

        return await self.serve_from(pattern, answer, queue=queue)

    def post(self, subject: str, payload: Payload) -> bool:
        """Publish ``payload`` now without awaiting, if this bus can (one process: a
        listener that hears at once, :meth:`hear`, is called here, the others are
        queued); False: it cannot, and the caller awaits :meth:`publish` (in a task of
        its own when it must not block: a room's delivery)."""
        return False

    @abc.abstractmethod
    async def publish(self, subject: str, payload: Payload) -> None:
        """Send ``payload`` to the listeners of ``subject`` now (none is fine)."""

    @abc.abstractmethod
    async def subscribe(self, pattern: str, listener: Listener) -> Subscription:
        """Call ``listener`` for each message published on a subject ``pattern`` matches
        after it returns, one at a time, in the order each publisher sent them."""

    async def listen(
        self, pattern: str, listener: ValueListener, codec: Codec, expect: Any = object
    ) -> Subscription:
        """As :meth:`subscribe`, the listener handed each message as a value of
        ``expect`` read with ``codec`` (by reference in one process); a message that is
        not one is dropped (logged once per subject and kind of fault)."""

        async def heard(subject: str, payload: bytes) -> None:
            await listener(subject, opened(payload, codec, expect))

        return await self.subscribe(pattern, heard)

    async def hear(
        self, pattern: str, listener: ValueHearer, codec: Codec, expect: Any = object
    ) -> Subscription:
        """As :meth:`listen`, with a listener that does not await. In one process it is
        called in the publisher's own step, as ``meeple serve``'s room calls its seat's
        ``deliver`` (no queue hop, no task): it must be quick, and what it raises is
        logged, not the publisher's. One publisher's messages still reach it in order.
        Over NATS it is called from the subscription's task, as :meth:`listen`'s."""

        async def heard(subject: str, value: Any) -> None:
            listener(subject, value)

        return await self.listen(pattern, heard, codec, expect)

    async def flush(self) -> None:  # noqa: B027 (a default, not a stub)
        """Return when what was published before has reached the server (NATS); a
        subscription made after a flush sees only later messages. Nothing to wait for
        in one process."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close every subscription and the connection."""

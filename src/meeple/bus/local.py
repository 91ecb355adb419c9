"""The in-process bus of ``meeple serve``: the :class:`~meeple.bus.base.Bus` contract
without a network, on the event loop.

Each subscription and each responder has its own queue and task, as a NATS
subscription has: a listener or a handler sees one message at a time, in order, and a
slow one delays only itself. Two kinds skip the hop, as a direct call in one process
does (issue 32.2, the seam's cost): a listener that hears at once
(:meth:`~meeple.bus.base.Bus.hear`: an edge's seat, which hands a room's event to its
dialect) is called in the publisher's step, and an inline responder
(:meth:`~meeple.bus.base.Bus.answer` ``inline``: a room's owner) runs in the
requester's step, bounded by its own wait rather than the request's timeout.

Payloads are passed as they are: bytes (immutable), and a
:class:`~meeple.bus.base.Sealed` value by reference to a receiver that reads values
(:meth:`~meeple.bus.base.Bus.listen`, :meth:`~meeple.bus.base.Bus.answer`,
:meth:`~meeple.bus.base.Bus.ask`), never encoded (the copy rule: meeple.bus.base). A
receiver that reads bytes gets the
value's codec's bytes, as over NATS.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from meeple.bus.base import (
    Bus,
    BusClosed,
    BusTimeout,
    Codec,
    Listener,
    NoResponder,
    Payload,
    RemoteError,
    Sealed,
    SubjectHandler,
    Subscription,
    ValueHandler,
    ValueHearer,
    ValueListener,
    as_bytes,
    check_pattern,
    check_subject,
    matches,
    opened,
)
from meeple.bus.codec import WireError, refused

__all__ = ["LocalBus"]

logger = logging.getLogger(__name__)


#: A responder as the bus calls it: the request as it was sent (bytes or sealed).
_Answers = Callable[[str, Payload], Awaitable[Payload]]
#: A listener as the bus calls it.
_Hears = Callable[[str, Payload], Awaitable[None]]
#: A listener called in the publisher's step (Bus.hear).
_HearsNow = Callable[[str, Payload], None]


@dataclass(eq=False)
class _Sub(Subscription):
    bus: LocalBus
    pattern: str
    queue: str | None
    handler: _Answers | None = None
    listener: _Hears | None = None
    # Called in the publisher's step, no inbox nor task (Bus.hear).
    now: _HearsNow | None = None
    # The handler runs in the requester's step (Bus.answer inline).
    inline: bool = False
    inbox: asyncio.Queue[tuple[str, Payload, asyncio.Future[Payload] | None]] = field(
        default_factory=asyncio.Queue
    )
    task: asyncio.Task[None] | None = None

    async def close(self) -> None:
        self.bus._drop(self)
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        # Requests still queued are answered: nobody will serve them here.
        while not self.inbox.empty():
            _, _, reply = self.inbox.get_nowait()
            if reply is not None and not reply.done():
                reply.set_exception(NoResponder(self.pattern))

    async def run(self) -> None:
        while True:
            subject, payload, reply = await self.inbox.get()
            if reply is None:
                assert self.listener is not None
                try:
                    await self.listener(subject, payload)
                except WireError as e:
                    refused(subject, e)
                except Exception:
                    logger.exception("bus: listener on %s failed", self.pattern)
                continue
            if reply.done():  # the requester gave up
                continue
            assert self.handler is not None
            try:
                answer = await self.handler(subject, payload)
            except WireError as e:
                refused(subject, e)
                if not reply.done():
                    reply.set_exception(RemoteError(f"refused: {e}"))
                continue
            except Exception as e:
                logger.exception("bus: handler of %s failed", self.pattern)
                if not reply.done():
                    reply.set_exception(RemoteError(str(e) or type(e).__name__))
                continue
            if not reply.done():
                reply.set_result(answer if isinstance(answer, Sealed) else bytes(answer))


#: The most subjects an index remembers the matches of.
_REMEMBERED = 65536


def _prefix(pattern: str) -> str | None:
    """The literal tokens of a wildcard pattern before its first wildcard (None: the
    pattern has no wildcard)."""
    tokens = pattern.split(".")
    for i, token in enumerate(tokens):
        if token in ("*", ">"):
            return ".".join(tokens[:i])
    return None


class _Index:
    """Subscriptions by subject: exact ones in a dict (one look-up per message, however
    many rooms), patterns with wildcards by their literal prefix (``ns.room.<uid>.cmd``
    for an owner's ``ns.room.<uid>.cmd.*``), so a message is matched against the
    patterns of its own prefixes only (one look-up per token of its subject), not
    against every room's. What a subject matched is remembered until a subscription
    that may match it comes or goes (a seat's subject, a room's command subject: each
    is matched once, then looked up; a game's seats and room coming and going forget
    their own subjects only, not every other game's)."""

    def __init__(self) -> None:
        self.exact: dict[str, list[_Sub]] = {}
        self.wild: dict[str, list[_Sub]] = {}
        self._found: dict[str, tuple[_Sub, ...]] = {}

    def _forget(self, pattern: str, prefix: str | None) -> None:
        """Forget what the subjects ``pattern`` may match matched."""
        if prefix is None:
            self._found.pop(pattern, None)
        elif not prefix:
            self._found.clear()  # a pattern that begins with a wildcard
        else:
            under = prefix + "."
            for subject in [s for s in self._found if s.startswith(under)]:
                del self._found[subject]

    def known(self, subject: str) -> bool:
        """Whether ``subject`` was matched before (so it was checked: a subject)."""
        return subject in self._found

    def add(self, sub: _Sub) -> None:
        prefix = _prefix(sub.pattern)
        self._forget(sub.pattern, prefix)
        into = self.exact if prefix is None else self.wild
        into.setdefault(sub.pattern if prefix is None else prefix, []).append(sub)

    def remove(self, sub: _Sub) -> None:
        prefix = _prefix(sub.pattern)
        self._forget(sub.pattern, prefix)
        into, key = (self.exact, sub.pattern) if prefix is None else (self.wild, prefix)
        group = into.get(key)
        if group is not None and sub in group:
            group.remove(sub)
            if not group:
                del into[key]

    def match(self, subject: str) -> tuple[_Sub, ...]:
        known = self._found.get(subject)
        if known is not None:
            return known
        found = list(self.exact.get(subject, ()))
        if self.wild:
            tokens = subject.split(".")
            for i in range(len(tokens)):
                group = self.wild.get(".".join(tokens[:i]))
                if group:
                    found.extend(sub for sub in group if matches(sub.pattern, subject))
        if len(self._found) >= _REMEMBERED:
            self._found.clear()  # many one-off subjects (reply inboxes): start again
        result = self._found[subject] = tuple(found)
        return result

    def all(self) -> list[_Sub]:
        return [sub for index in (self.wild, self.exact) for g in index.values() for sub in g]


class LocalBus(Bus):
    """The bus within one process; see the module doc."""

    def __init__(self) -> None:
        self._listeners = _Index()
        self._responders = _Index()
        self._turn = itertools.count()
        self._closed = False

    def _start(self, sub: _Sub, into: _Index) -> _Sub:
        if self._closed:
            raise BusClosed("the bus is closed")
        into.add(sub)
        if sub.now is None and not sub.inline:
            loop = asyncio.get_running_loop()
            sub.task = loop.create_task(sub.run(), name=f"bus {sub.pattern}")
        return sub

    def _drop(self, sub: _Sub) -> None:
        self._listeners.remove(sub)
        self._responders.remove(sub)

    async def request(self, subject: str, payload: Payload, *, timeout: float = 5.0) -> bytes:
        return as_bytes(await self._request(subject, payload, timeout))

    async def ask(
        self,
        subject: str,
        payload: Payload,
        codec: Codec,
        expect: Any = object,
        *,
        timeout: float = 5.0,
    ) -> Any:
        return opened(await self._request(subject, payload, timeout), codec, expect)

    async def _request(self, subject: str, payload: Payload, timeout: float) -> Payload:
        if not self._responders.known(subject):
            check_subject(subject)
        if self._closed:
            raise BusClosed("the bus is closed")
        candidates = self._responders.match(subject)
        if not candidates:
            raise NoResponder(subject)
        # NATS gives a request to every plain responder and to one member of each queue
        # group, and the first answer wins; here one responder answers, taken in turn.
        chosen = candidates[next(self._turn) % len(candidates)]
        if chosen.inline:
            return await self._inline(chosen, subject, payload)
        reply: asyncio.Future[Payload] = asyncio.get_running_loop().create_future()
        chosen.inbox.put_nowait((subject, payload, reply))
        try:
            async with asyncio.timeout(timeout):
                return await reply
        except TimeoutError:
            raise BusTimeout(f"no answer on {subject} in {timeout} s") from None

    @staticmethod
    async def _inline(sub: _Sub, subject: str, payload: Payload) -> Payload:
        """An inline responder's answer, in the requester's step (module doc): its
        failures are the requester's errors as a queued responder's are."""
        assert sub.handler is not None
        try:
            answer = await sub.handler(subject, payload)
        except WireError as e:
            refused(subject, e)
            raise RemoteError(f"refused: {e}") from None
        except (asyncio.CancelledError, BusClosed):
            raise
        except Exception as e:
            logger.exception("bus: handler of %s failed", sub.pattern)
            raise RemoteError(str(e) or type(e).__name__) from None
        return answer if isinstance(answer, Sealed) else bytes(answer)

    async def serve_from(
        self, pattern: str, handler: SubjectHandler, *, queue: str | None = None
    ) -> Subscription:
        async def answer(subject: str, payload: Payload) -> Payload:
            return await handler(subject, as_bytes(payload))

        return self._serve(pattern, answer, queue)

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
        async def answer(subject: str, payload: Payload) -> Payload:
            return await handler(subject, opened(payload, codec, expect))

        return self._serve(pattern, answer, queue, inline=inline)

    def _serve(
        self, pattern: str, handler: _Answers, queue: str | None, *, inline: bool = False
    ) -> Subscription:
        check_pattern(pattern)
        sub = _Sub(self, pattern, queue, handler=handler, inline=inline)
        return self._start(sub, self._responders)

    async def publish(self, subject: str, payload: Payload) -> None:
        self.post(subject, payload)

    def post(self, subject: str, payload: Payload) -> bool:
        if not self._listeners.known(subject):
            check_subject(subject)
        if self._closed:
            raise BusClosed("the bus is closed")
        for sub in self._listeners.match(subject):
            if sub.now is None:
                sub.inbox.put_nowait((subject, payload, None))
                continue
            try:
                sub.now(subject, payload)
            except WireError as e:
                refused(subject, e)
            except Exception:
                logger.exception("bus: listener on %s failed", sub.pattern)
        return True

    async def subscribe(self, pattern: str, listener: Listener) -> Subscription:
        async def heard(subject: str, payload: Payload) -> None:
            await listener(subject, as_bytes(payload))

        return self._listen(pattern, heard)

    async def listen(
        self, pattern: str, listener: ValueListener, codec: Codec, expect: Any = object
    ) -> Subscription:
        async def heard(subject: str, payload: Payload) -> None:
            await listener(subject, opened(payload, codec, expect))

        return self._listen(pattern, heard)

    async def hear(
        self, pattern: str, listener: ValueHearer, codec: Codec, expect: Any = object
    ) -> Subscription:
        def heard(subject: str, payload: Payload) -> None:
            listener(subject, opened(payload, codec, expect))

        check_pattern(pattern)
        return self._start(_Sub(self, pattern, None, now=heard), self._listeners)

    def _listen(self, pattern: str, listener: _Hears) -> Subscription:
        check_pattern(pattern)
        return self._start(_Sub(self, pattern, None, listener=listener), self._listeners)

    async def close(self) -> None:
        self._closed = True
        for sub in [*self._listeners.all(), *self._responders.all()]:
            await sub.close()

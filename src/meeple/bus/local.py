"""The in-process bus of ``meeple serve``: the :class:`~meeple.bus.base.Bus` contract
without a network, on the event loop.

Each subscription and each responder has its own queue and task, as a NATS
subscription has: a listener or a handler sees one message at a time, in order, and a
slow one delays only itself. Payloads are passed as they are (bytes are immutable), so
the only cost over a direct call is a queue hop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass, field

from meeple.bus.base import (
    Bus,
    BusClosed,
    BusTimeout,
    Listener,
    NoResponder,
    RemoteError,
    SubjectHandler,
    Subscription,
    check_pattern,
    check_subject,
    matches,
)
from meeple.bus.codec import WireError, refused

__all__ = ["LocalBus"]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Sub(Subscription):
    bus: LocalBus
    pattern: str
    queue: str | None
    handler: SubjectHandler | None = None
    listener: Listener | None = None
    inbox: asyncio.Queue[tuple[str, bytes, asyncio.Future[bytes] | None]] = field(
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
                reply.set_result(bytes(answer))


class _Index:
    """Subscriptions by subject: exact ones in a dict (one look-up per message, however
    many rooms), patterns with wildcards in a list scanned per message (few: an owner's
    ``room.<uid>.cmd.*``)."""

    def __init__(self) -> None:
        self.exact: dict[str, list[_Sub]] = {}
        self.wild: list[_Sub] = []

    def add(self, sub: _Sub) -> None:
        if "*" in sub.pattern.split(".") or sub.pattern.endswith(">"):
            self.wild.append(sub)
        else:
            self.exact.setdefault(sub.pattern, []).append(sub)

    def remove(self, sub: _Sub) -> None:
        if sub in self.wild:
            self.wild.remove(sub)
        group = self.exact.get(sub.pattern)
        if group is not None and sub in group:
            group.remove(sub)
            if not group:
                del self.exact[sub.pattern]

    def match(self, subject: str) -> list[_Sub]:
        found = list(self.exact.get(subject, ()))
        found.extend(sub for sub in self.wild if matches(sub.pattern, subject))
        return found

    def all(self) -> list[_Sub]:
        return [*self.wild, *(sub for group in self.exact.values() for sub in group)]


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
        sub.task = asyncio.get_running_loop().create_task(sub.run(), name=f"bus {sub.pattern}")
        return sub

    def _drop(self, sub: _Sub) -> None:
        self._listeners.remove(sub)
        self._responders.remove(sub)

    async def request(self, subject: str, payload: bytes, *, timeout: float = 5.0) -> bytes:
        check_subject(subject)
        if self._closed:
            raise BusClosed("the bus is closed")
        candidates = self._responders.match(subject)
        if not candidates:
            raise NoResponder(subject)
        # NATS gives a request to every plain responder and to one member of each queue
        # group, and the first answer wins; here one responder answers, taken in turn.
        chosen = candidates[next(self._turn) % len(candidates)]
        reply: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        chosen.inbox.put_nowait((subject, payload, reply))
        try:
            async with asyncio.timeout(timeout):
                return await reply
        except TimeoutError:
            raise BusTimeout(f"no answer on {subject} in {timeout} s") from None

    async def serve_from(
        self, subject: str, handler: SubjectHandler, *, queue: str | None = None
    ) -> Subscription:
        check_pattern(subject)
        return self._start(_Sub(self, subject, queue, handler=handler), self._responders)

    async def publish(self, subject: str, payload: bytes) -> None:
        check_subject(subject)
        if self._closed:
            raise BusClosed("the bus is closed")
        for sub in self._listeners.match(subject):
            sub.inbox.put_nowait((subject, payload, None))

    async def subscribe(self, pattern: str, listener: Listener) -> Subscription:
        check_pattern(pattern)
        return self._start(_Sub(self, pattern, None, listener=listener), self._listeners)

    async def close(self) -> None:
        self._closed = True
        for sub in [*self._listeners.all(), *self._responders.all()]:
            await sub.close()

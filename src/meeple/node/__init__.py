"""The cluster's node roles over NATS (docs/cluster.md): ``edge`` (:mod:`.edge`),
``rooms`` (:mod:`.rooms`), ``lobby`` (:mod:`.lobby`), ``store`` (:mod:`.store`), what
crosses between them (:mod:`.wire`) and the node that runs any mix (:mod:`.node`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from meeple.bus.base import BusError

if TYPE_CHECKING:
    from meeple.bus.base import Bus, Subscription

__all__ = ["Service", "spawn"]


def spawn(tasks: set[asyncio.Task[Any]], coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
    """Run ``coro`` as a named task kept in ``tasks`` until it ends (a role's background
    work, cancelled together when the role stops)."""
    task: asyncio.Task[Any] = asyncio.ensure_future(coro)
    task.set_name(name)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task


class Service:
    """A node's answer to one kind of request: :meth:`handle` serves ``subject`` in the
    queue group ``queue`` (one member answers each request) from :meth:`start` to
    :meth:`stop`. :meth:`handle` is told who sent each request (the subject's last
    token, :meth:`meeple.bus.subjects.Namespace.sender_of`)."""

    def __init__(self, bus: Bus, subject: str, queue: str) -> None:
        self.bus = bus
        self.subject = subject
        self.queue = queue
        self._sub: Subscription | None = None

    async def handle(self, payload: bytes, sender: str) -> bytes:
        raise NotImplementedError

    async def start(self) -> None:
        async def answer(subject: str, payload: bytes) -> bytes:
            return await self.handle(payload, subject.rsplit(".", 1)[1])

        self._sub = await self.bus.serve_from(self.subject, answer, queue=self.queue)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(BusError):
                await self._sub.close()
            self._sub = None

"""The cluster's bus: the :class:`~meeple.bus.base.Bus` contract over a NATS connection.

Requests are NATS requests (a reply inbox per request, nats-py's); a handler's failure
travels back as an empty reply with the ``Meeple-Error`` header, so the requester gets
:class:`~meeple.bus.base.RemoteError` rather than waiting for a timeout. NATS's "no
responders" status (the server knows nobody subscribes) becomes
:class:`~meeple.bus.base.NoResponder` at once.

Make the connection with :func:`connect`: an edge passes ``inbox_prefix`` =
:meth:`Namespace.edge_inbox_of(name) <meeple.bus.subjects.Namespace.edge_inbox_of>`, as
its NATS permissions expect (:mod:`meeple.cluster.auth`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import nats
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscription

from meeple.bus.base import (
    ERROR_HEADER,
    Bus,
    BusClosed,
    BusTimeout,
    Listener,
    NoResponder,
    Payload,
    RemoteError,
    SubjectHandler,
    Subscription,
    as_bytes,
    check_pattern,
    check_subject,
)
from meeple.bus.codec import WireError, refused
from meeple.server.metrics import METRICS

__all__ = ["NatsBus", "connect"]

logger = logging.getLogger(__name__)


async def connect(
    url: str,
    *,
    user: str | None = None,
    password: str | None = None,
    inbox_prefix: str | None = None,
    name: str | None = None,
    **options: Any,
) -> Client:
    """A NATS connection for meeple: reconnects forever, errors logged, not raised."""

    async def error(e: Exception) -> None:
        logger.warning("nats %s: %s", name or url, e)

    kw: dict[str, Any] = {
        "user": user,
        "password": password,
        "name": name,
        "error_cb": error,
        "max_reconnect_attempts": -1,
        **options,
    }
    if inbox_prefix is not None:
        kw["inbox_prefix"] = inbox_prefix.encode()
    return await nats.connect(url, **kw)


def _retrieved(task: asyncio.Future[None]) -> None:
    """A shielded flush's outcome, read so that nobody is told it was never retrieved."""
    if not task.cancelled():
        task.exception()


class _NatsSub(Subscription):
    def __init__(self, sub: NatsSubscription) -> None:
        self._sub = sub

    async def close(self) -> None:
        with contextlib.suppress(
            nats.errors.ConnectionClosedError, nats.errors.BadSubscriptionError
        ):
            await self._sub.unsubscribe()


class NatsBus(Bus):
    """The bus over one NATS connection (which it closes with :meth:`close` when
    ``owns`` is true); see the module doc."""

    def __init__(self, nc: Client, *, owns: bool = True) -> None:
        self.nc = nc
        self._owns = owns

    async def request(self, subject: str, payload: Payload, *, timeout: float = 5.0) -> bytes:
        check_subject(subject)
        began = time.perf_counter()
        try:
            msg = await self.nc.request(subject, as_bytes(payload), timeout=timeout)
        except nats.errors.NoRespondersError:
            raise NoResponder(subject) from None
        except nats.errors.TimeoutError:
            METRICS.bus_request(timeout, timed_out=True)
            raise BusTimeout(f"no answer on {subject} in {timeout} s") from None
        except nats.errors.ConnectionClosedError:
            raise BusClosed("the NATS connection is closed") from None
        METRICS.bus_request(time.perf_counter() - began)
        if msg.headers and ERROR_HEADER in msg.headers:
            raise RemoteError(msg.headers[ERROR_HEADER])
        return msg.data

    async def serve_from(
        self, subject: str, handler: SubjectHandler, *, queue: str | None = None
    ) -> Subscription:
        check_pattern(subject)

        async def answer(msg: Msg) -> None:
            if not msg.reply:
                return  # a publish, not a request: nobody to answer
            try:
                reply = await handler(msg.subject, msg.data)
            except WireError as e:
                # Not this schema (meeple.bus.codec): refused, logged once, no traceback.
                refused(msg.subject, e)
                text = f"refused: {e}".replace("\r", " ").replace("\n", " ")
                await self.nc.publish(msg.reply, b"", headers={ERROR_HEADER: text})
                return
            except Exception as e:
                logger.exception("bus: handler of %s failed", subject)
                # A header value is one line.
                text = (str(e) or type(e).__name__).replace("\r", " ").replace("\n", " ")
                await self.nc.publish(msg.reply, b"", headers={ERROR_HEADER: text})
                return
            # Not Msg.respond: it would send the request's headers back with the answer.
            await self.nc.publish(msg.reply, bytes(as_bytes(reply)))

        sub = await self.nc.subscribe(subject, queue=queue or "", cb=answer)
        await self.flush()
        return _NatsSub(sub)

    async def publish(self, subject: str, payload: Payload) -> None:
        check_subject(subject)
        try:
            await self.nc.publish(subject, as_bytes(payload))
        except nats.errors.ConnectionClosedError:
            raise BusClosed("the NATS connection is closed") from None

    async def subscribe(self, pattern: str, listener: Listener) -> Subscription:
        check_pattern(pattern)

        async def deliver(msg: Msg) -> None:
            try:
                await listener(msg.subject, msg.data)
            except WireError as e:
                refused(msg.subject, e)
            except Exception:
                logger.exception("bus: listener on %s failed", pattern)

        sub = await self.nc.subscribe(pattern, cb=deliver)
        await self.flush()
        return _NatsSub(sub)

    async def flush(self) -> None:
        # nats-py (2.16) writes a flush's PING straight to the socket, ahead of commands
        # still queued for its flusher task, such as the SUB just made: the PONG could
        # come back before the server had the subscription (seen: 1 request in 10 to a
        # just-served subject got "no responders"). Push the queue out first.
        await self.nc._flush_pending(force_flush=True)
        # Shielded: nats-py's flush waits on a future its read loop resolves at the PONG;
        # a flush cancelled in flight (a task cancelled at a close) leaves that future
        # cancelled, and the PONG then kills the read loop (InvalidStateError): every
        # later request on the connection times out. The flush itself runs to its end.
        flushing = asyncio.ensure_future(self.nc.flush())
        flushing.add_done_callback(_retrieved)
        await asyncio.shield(flushing)

    async def close(self) -> None:
        if self._owns and not self.nc.is_closed:
            await self.nc.drain()

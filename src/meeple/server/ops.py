"""What an operator's tools ask of a running process: metrics, liveness, readiness (issue 35).

- ``GET /metrics``: :data:`~meeple.server.metrics.METRICS` in Prometheus' text format;
- ``GET /healthz``: 200 ``ok`` while the process answers at all;
- ``GET /readyz``: 200 ``ready`` when every check of its :class:`Readiness` passes
  (listeners bound, store writable, NATS connected, leases renewing, not draining),
  else 503 and one line per failed check.

They are routes of the web (``meeple serve``) or api (``meeple node``) port
(:func:`ops_routes`), and of a port of their own, ``--metrics-port``
(:class:`OpsListener`), for a process without one. ``--health-port``
(:class:`HealthPort`) is for a TCP load balancer: open while ready, each connection
answered ``ok\\n`` and closed, nothing read; closed (connections refused) while not.

The checks are plain callables (a problem in words, or None); the store's is
:class:`StoreProbe`, one write transaction that changes nothing, run off the loop with a
timeout, one at a time (a hung database does not pile up threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from meeple.server.clock import Clock, SystemClock
from meeple.server.metrics import CONTENT_TYPE, METRICS, Sample

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from meeple.server.app import Services

__all__ = [
    "OPS_PATHS",
    "HealthPort",
    "OpsListener",
    "Readiness",
    "StoreProbe",
    "ops_routes",
    "server_readiness",
]

logger = logging.getLogger(__name__)

OPS_PATHS = frozenset({"/metrics", "/healthz", "/readyz"})
# A check that takes longer than this counts as failed (the answer must come in time
# for a load balancer's own timeout).
CHECK_TIMEOUT = 2.0
# The request head the ops port reads at most, and how long it waits for it.
MAX_REQUEST = 8192
REQUEST_TIMEOUT = 5.0
# How often the TCP health port asks the readiness, to close or open again.
HEALTH_EVERY = 1.0

Check = Callable[[], "str | Awaitable[str | None] | None"]


class Readiness:
    """Whether the process should get traffic: named checks, each a problem or None;
    :attr:`draining` (a stop under way) fails them all."""

    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}
        self.draining = False
        self.ready = False  # the last answer (meeple_ready; every scrape asks anew)
        METRICS.watch(self, _samples)

    def add(self, name: str, check: Check) -> None:
        """Check ``name`` from now on (a second ``add`` of a name replaces it)."""
        self._checks[name] = check

    async def problems(self) -> list[str]:
        """What stops the process from being ready now (empty: ready)."""
        found = ["draining: the process is stopping"] if self.draining else []
        if not self._checks:
            found.append("starting")
        for name, check in list(self._checks.items()):
            try:
                result = check()
                if inspect.isawaitable(result):
                    result = await asyncio.wait_for(result, CHECK_TIMEOUT)
            except TimeoutError:
                result = f"no answer in {CHECK_TIMEOUT:g} s"
            except Exception as e:
                result = f"{type(e).__name__}: {e}"
            if result:
                found.append(f"{name}: {result}")
        self.ready = not found
        return found


def _samples(readiness: Readiness) -> list[Sample]:
    return [
        ("meeple_ready", (), float(readiness.ready)),
        ("meeple_draining", (), float(readiness.draining)),
    ]


def server_readiness(services: Services) -> Readiness:
    """The process's one :class:`Readiness`."""
    if services.readiness is None:
        services.readiness = Readiness()
    return services.readiness


class StoreProbe:
    """The store answers a write transaction (``Store.ping``) within ``timeout`` seconds.

    One probe runs at a time, in a thread: while one has not come back (a database that
    was stopped, SIGSTOP), every check says so without starting another."""

    def __init__(self, ping: Callable[[], object], *, timeout: float = CHECK_TIMEOUT) -> None:
        self._ping = ping
        self.timeout = timeout
        self._running: asyncio.Future[object] | None = None
        self._since = 0.0

    async def __call__(self) -> str | None:
        if self._running is not None and not self._running.done():
            return f"no answer for {time.monotonic() - self._since:.0f} s"
        self._since = time.monotonic()
        self._running = asyncio.ensure_future(asyncio.to_thread(self._ping))
        done, _ = await asyncio.wait({self._running}, timeout=self.timeout)
        if not done:
            return f"no answer in {self.timeout:g} s"
        error = self._running.exception()
        return None if error is None else f"{type(error).__name__}: {error}"


def ops_routes(services: Services) -> list[BaseRoute]:
    """``/metrics``, ``/healthz`` and ``/readyz`` as Starlette routes (the web app's)."""
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    readiness = server_readiness(services)

    async def metrics(request: Request) -> Response:
        await readiness.problems()  # meeple_ready as of this scrape
        return PlainTextResponse(METRICS.exposition(), media_type=CONTENT_TYPE)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        found = await readiness.problems()
        if found:
            return PlainTextResponse("not ready\n" + "".join(f"{p}\n" for p in found), 503)
        return PlainTextResponse("ready\n")

    return [Route("/metrics", metrics), Route("/healthz", healthz), Route("/readyz", readyz)]


async def answer(readiness: Readiness, head: bytes) -> tuple[int, bytes, bytes]:
    """The ops port's answer to a request head: (status, content type, body)."""
    line = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        return 400, b"text/plain", b"bad request\n"
    method, target = parts[0], parts[1].split(b"?", 1)[0]
    if method not in (b"GET", b"HEAD"):
        return 405, b"text/plain", b"GET only\n"
    if target == b"/metrics":
        await readiness.problems()  # meeple_ready as of this scrape
        return 200, CONTENT_TYPE.encode(), METRICS.exposition()
    if target == b"/healthz":
        return 200, b"text/plain", b"ok\n"
    if target == b"/readyz":
        found = await readiness.problems()
        if found:
            return 503, b"text/plain", ("not ready\n" + "".join(f"{p}\n" for p in found)).encode()
        return 200, b"text/plain", b"ready\n"
    return 404, b"text/plain", b"not found\n"


async def _hang_up(writer: asyncio.StreamWriter) -> None:
    """Close a connection the ops or health port answered (or gave up on), whatever the
    peer did meanwhile."""
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


async def _stop_listening(server: asyncio.Server, grace: float) -> None:
    """Stop a port listening; its connections get ``grace`` seconds to finish."""
    server.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(server.wait_closed(), grace)


_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed"}


class OpsListener:
    """``--metrics-port``: ``/metrics``, ``/healthz``, ``/readyz`` over plain HTTP/1.x,
    one request a connection (a request head past :data:`MAX_REQUEST` bytes or
    :data:`REQUEST_TIMEOUT` seconds is dropped)."""

    name = "metrics"

    def __init__(self, readiness: Readiness, host: str, port: int) -> None:
        self.readiness = readiness
        self.host = host
        self.requested_port = port
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets:
            return self.requested_port
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, self.host, self.requested_port, limit=MAX_REQUEST
        )
        logger.info("metrics and health on http://%s:%d/metrics", self.host, self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
            status, kind, body = await answer(self.readiness, head)
            reason = _REASONS.get(status, b"Service Unavailable")
            writer.write(
                b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n" % (status, reason, kind, len(body))
            )
            if not head.startswith(b"HEAD "):
                writer.write(body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            pass
        except ValueError:  # the head past the reader's limit
            pass
        finally:
            await _hang_up(writer)

    async def close(self, grace: float = 1.0) -> None:
        if self._server is not None:
            await _stop_listening(self._server, grace)


class HealthPort:
    """``--health-port``: a TCP load balancer's check. While the process is ready it
    listens, and each connection gets ``ok\\n`` and is closed, nothing read; while it
    is not (starting, draining, a check failing) the port is closed, so a connection is
    refused: a load balancer that only connects (a plain TCP check) sees it down too.

    The readiness is asked every ``every`` seconds on ``clock`` (and at each connection:
    one that finds it not ready is told ``not ready\\n`` and the port closes at once);
    the port opens again on the same number when it is ready again."""

    name = "health"

    def __init__(
        self,
        readiness: Readiness,
        host: str,
        port: int,
        *,
        clock: Clock | None = None,
        every: float = HEALTH_EVERY,
    ) -> None:
        self.readiness = readiness
        self.host = host
        self.requested_port = port
        self.every = every
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._server: asyncio.Server | None = None
        self._bound = port  # the number it listens on, kept while closed
        self._watch: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self._bound

    @property
    def listening(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        await self._open()
        logger.info("TCP health check on %s:%d", self.host, self.port)
        self._watch = asyncio.get_running_loop().create_task(self._watching(), name="health")

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self._bound)
        self._bound = int(self._server.sockets[0].getsockname()[1])

    def _shut(self) -> None:
        if self._server is not None:
            self._server.close()  # the listening socket only: connections answered go on
            self._server = None
            logger.info("TCP health check %s:%d closed: not ready", self.host, self._bound)

    async def _watching(self) -> None:
        while True:
            found = await self.readiness.problems()
            if found:
                self._shut()
            elif self._server is None:
                try:
                    await self._open()
                    logger.info("TCP health check %s:%d open: ready", self.host, self._bound)
                except OSError as e:  # the number taken meanwhile: tried again next time
                    logger.warning("TCP health check %s:%d: %s", self.host, self._bound, e)
            await self._clock.sleep(self.every)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            found = await self.readiness.problems()
            if found:
                self._shut()
            writer.write(b"not ready\n" if found else b"ok\n")
            await writer.drain()
        except OSError:
            pass
        finally:
            await _hang_up(writer)

    async def close(self, grace: float = 1.0) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch
            self._watch = None
        if self._server is not None:
            server, self._server = self._server, None
            await _stop_listening(server, grace)

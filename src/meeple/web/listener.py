"""The web listener: the Starlette app served by uvicorn on the server's own event loop.

``meeple serve`` starts it like any protocol listener (``LISTENERS["web"]``). uvicorn's
:class:`~uvicorn.Server` runs as a task of the running loop, so pages and the
WebSocket feed see the lobby and rooms directly; its signal handling is left to
:class:`~meeple.server.app.MeepleServer`, which stops it with :meth:`WebListener.close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn._types import ASGISendEvent
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from meeple.protocols import web as proto
from meeple.server.clock import Clock, SystemClock
from meeple.server.config import LimitsConfig, ListenerConfig
from meeple.server.edge.churn import ChurnLog, server_churn
from meeple.server.edge.limits import AddressLimiter, ListenerShare, MessageBudget
from meeple.web.app import create_app
from meeple.web.fanout import EXTENSION

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from meeple.server.app import Services

__all__ = [
    "ConnectionGuard",
    "FrameProtocol",
    "WebListener",
    "create_listener",
    "guarded_protocols",
]

logger = logging.getLogger(__name__)

# A WebSocket message larger than this closes the connection (1009) in uvicorn itself;
# below it, the browser protocol's own limit answers with an error and keeps it open.
WS_TRANSPORT_LIMIT = 1024 * 1024
# Bytes of a WebSocket's read parsed in one turn of the loop (a few dozen small frames).
WS_SLICE = 4096
# The reply to browser messages past the rate limit (meeple-web/1 ``error``), stateless.
TOO_FAST = proto.Error(proto.ErrorCode.TOO_FAST, "too many messages").encode()

# The answer to a connection over the per-address cap or the server's connection budget.
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\nContent-Length: 25\r\n\r\ntoo many connections now\n"
)


class ConnectionGuard:
    """What the web port admits (issue 22): every TCP connection, plain HTTP, keep-alive
    or WebSocket, takes a place under ``[limits] max_connections_per_address`` and in the
    server's :class:`~meeple.server.edge.limits.ConnectionBudget`, from its accept to its
    close; a request's headers must arrive within ``header_timeout`` seconds.

    A trusted proxy (``[web] trusted_proxies``) carries many clients: it is not capped
    here; the app caps each forwarded client's WebSockets instead."""

    def __init__(
        self,
        addresses: AddressLimiter,
        budget: ListenerShare | None,
        header_timeout: float,
        trusted_proxies: tuple[str, ...] = (),
        churn: ChurnLog | None = None,
    ) -> None:
        self.addresses = addresses
        self.churn = churn
        self.trusted = tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)
        self.budget = budget
        self.header_timeout = header_timeout
        self._held: dict[int, str] = {}  # id(transport) -> its address
        # Connections with no request under way (before their first, or idle between
        # two), oldest first: when the budget is spent, the oldest of them makes room.
        self._waiting: dict[int, asyncio.Transport] = {}
        self.refused = 0
        self.timed_out = 0
        self.evicted = 0

    def waiting(self, transport: asyncio.Transport, waits: bool) -> None:
        """``transport`` has (True) or has not (False) a request under way."""
        if not waits:
            self._waiting.pop(id(transport), None)
        elif id(transport) in self._held:
            self._waiting.setdefault(id(transport), transport)

    def _make_room(self) -> bool:
        """Drop the connection that has waited longest without a request, if any."""
        while self._waiting:
            key = next(iter(self._waiting))
            victim = self._waiting.pop(key)
            if key not in self._held:
                continue
            self.release(victim)
            victim.abort()
            self.evicted += 1
            if self.evicted == 1 or self.evicted % 1000 == 0:
                logger.info(
                    "web: connection budget full: the longest-idle connections make room "
                    "(%d so far)",
                    self.evicted,
                )
            return True
        return False

    def admit(self, transport: asyncio.Transport) -> bool:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) else "unknown"
        if self._trusted(address):
            address = ""  # not counted per address
        elif not self.addresses.acquire(address):
            self.refused += 1
            if self.churn is not None:  # issue 30.7: counted, one line a period
                self.churn.refused("web", "too many from the address", address)
            return False
        budget = self.budget
        if (
            budget is not None
            and not budget.acquire()
            and not (self._make_room() and budget.acquire())
        ):
            if address:
                self.addresses.release(address)
            self.refused += 1
            if self.churn is not None:
                self.churn.refused("web", "connection budget spent", address)
            return False
        self._held[id(transport)] = address
        self._waiting[id(transport)] = transport
        return True

    def release(self, transport: asyncio.BaseTransport) -> None:
        self._waiting.pop(id(transport), None)
        address = self._held.pop(id(transport), None)
        if address is None:
            return
        if address:
            self.addresses.release(address)
        if self.budget is not None:
            self.budget.release()

    def _trusted(self, address: str) -> bool:
        if not self.trusted:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    @property
    def open(self) -> int:
        return len(self._held)


class FrameProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket, offering the app a writer of frames made once for many
    sockets (:class:`meeple.web.fanout.FrameSink`, the ASGI scope extension
    ``meeple.frames``): the spectator fan-out writes one frame's bytes straight to each
    transport, with no ASGI send, task or encoder per spectator."""

    _drained: Callable[[], None] | None = None
    # Why the server closed the socket on its own (the app's churn count says it).
    close_reason: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Issue 30.7: uvicorn's and websockets' line per connection ("[accepted]",
        # "connection open") at DEBUG; the app counts connections (ChurnLog). uvicorn
        # types its logger as a Logger and reads only its level and methods.
        self.logger = _PER_CONNECTION  # type: ignore[assignment]
        self.conn.logger = _PER_CONNECTION
        super().connection_made(transport)

    @property
    def closing(self) -> bool:
        """The close is sent or the socket is gone: nothing more may be sent on it."""
        return bool(self.close_sent or self.disconnected)

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:  # the handshake goes on: the app's task has not run yet
            scope["extensions"][EXTENSION] = {"sink": self}

    async def send(self, message: ASGISendEvent) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The handshake's request and response are done with: a spectator holds
            # its socket for hours, so it should not hold them (their headers: ~4 KiB).
            del self.request
            del self.response

    def write_frame(self, frame: bytes) -> bool:
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or self.transport.is_closing()
            or not self.writable.is_set()  # its buffer is full: the fan-out skips it
        ):
            return False
        # Between two whole frames of websockets' own (each written at once), so the
        # stream stays well formed; uncompressed (RSV1 clear), as no deflate is offered.
        self.transport.write(frame)
        return True

    def on_drain(self, callback: Callable[[], None] | None) -> None:
        self._drained = callback

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._drained is not None:
            self._drained()


def guarded_protocols(
    guard: ConnectionGuard, limits: LimitsConfig | None = None, clock: Clock | None = None
) -> tuple[type[H11Protocol], type[FrameProtocol]]:
    """uvicorn's h11 HTTP and sans-I/O WebSocket protocols under ``guard``: the classes
    to give ``uvicorn.Config(http=..., ws=...)``. (uvicorn has a keep-alive timeout but
    none for reading a request's headers, and no per-address cap.)"""

    class GuardedH11(H11Protocol):
        _admitted = False
        _upgraded = False
        _header_timer: asyncio.TimerHandle | None = None

        # uvicorn's H11Protocol takes a Transport where asyncio says BaseTransport (a
        # uvloop transport is no asyncio.Transport: no isinstance narrowing).
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if not guard.admit(transport):
                transport.write(REFUSED)  # before reading anything: cheap, and clear
                transport.close()
                return
            self._admitted = True
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            if self._admitted and not self._upgraded:
                guard.release(self.transport)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._admitted:
                return
            super().data_received(data)
            if self._upgraded or self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE:
                self._arm_header_timer()  # bytes of a request whose headers are not all in
            else:
                self._cancel_header_timer()
                guard.waiting(self.transport, False)  # a request is under way

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                guard.waiting(self.transport, True)  # idle between two requests

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._upgraded = True  # the WebSocket protocol releases the place
            guard.waiting(self.transport, False)
            self._cancel_header_timer()
            super().handle_websocket_upgrade(event)

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(guard.header_timeout, self._headers_late)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self._upgraded or self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE:
                guard.timed_out += 1
                self.transport.abort()  # no whole request in time: idle or slowloris

    class GuardedWebSocket(FrameProtocol):
        """Also reads a burst a slice at a time (issue 22: bounded work per read): uvicorn
        parses every frame of a read (up to 256 KiB: thousands of small messages) in
        one go; here at most ``WS_SLICE`` bytes a turn of the loop, the socket's reading
        paused meanwhile."""

        _backlog = b""
        _budget: MessageBudget | None = None

        def send_receive_event_to_app(self) -> None:
            # Issue 22: the connection's message budget, before the message is decoded or
            # even queued for the app. Past the soft limit it is dropped, and one in
            # ``messages_per_turn`` answered ``too-fast``; past the hard one: closed, 1008.
            if limits is None or not self.handshake_complete or self.close_sent:
                super().send_receive_event_to_app()
                return
            if self._budget is None:
                self._budget = MessageBudget(
                    clock or SystemClock(),
                    limits.message_rate,
                    limits.message_burst,
                    limits.hard_message_rate,
                    limits.hard_message_burst,
                )
            allowed, over = self._budget.charge(1)
            if allowed and not over:
                super().send_receive_event_to_app()
                return
            self.frames = []
            if over:
                self.close_reason = "message flood"
                # As uvicorn closes for the app: the app hears a disconnect, what comes
                # is dropped until the peer's close reply, or a close timeout. What the
                # app has not read yet is dropped too (issue 30.7): it would answer
                # on a closed socket.
                while not self.queue.empty():
                    self.queue.get_nowait()
                self.queue.put_nowait({"type": "websocket.disconnect", "code": 1008})
                self.conn.send_close(1008, "too many messages")
                self.transport.write(b"".join(self.conn.data_to_send()))
                self.close_sent = True
                if self.read_paused:
                    self.read_paused = False
                    self.transport.resume_reading()
                self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)
            elif self._budget.refused % limits.messages_per_turn == 1:
                self.conn.send_text(TOO_FAST.encode())
                self.transport.write(b"".join(self.conn.data_to_send()))

        def data_received(self, data: bytes) -> None:
            if self._backlog:
                self._backlog += data
                return
            self._slice(data)

        def _slice(self, data: bytes) -> None:
            super().data_received(data[:WS_SLICE])
            rest = data[WS_SLICE:]
            if rest and not self.transport.is_closing():
                self._backlog = rest
                self.transport.pause_reading()
                asyncio.get_running_loop().call_soon(self._next_slice)

        def _next_slice(self) -> None:
            rest, self._backlog = self._backlog, b""
            if not rest or self.transport.is_closing():
                return
            self._slice(rest)
            if not self._backlog and not self.read_paused:
                self.transport.resume_reading()

        def connection_lost(self, exc: Exception | None) -> None:
            self._backlog = b""
            guard.release(self.transport)
            super().connection_lost(exc)

    return GuardedH11, GuardedWebSocket


class _PerConnectionLog(logging.LoggerAdapter[logging.Logger]):
    """A logger whose INFO lines go out at DEBUG (uvicorn's and websockets' lines per
    WebSocket); warnings and errors stay as they are."""

    @property
    def level(self) -> int:  # uvicorn reads its logger's level
        return self.logger.level

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.debug(msg, *args, **kwargs)


_PER_CONNECTION = _PerConnectionLog(logging.getLogger("uvicorn.error"))


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the meeple server owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def create_listener(services: Services, name: str, config: ListenerConfig) -> WebListener:
    return WebListener(services, name, config)


class WebListener:
    """HTTP and WebSocket on one port; see the module docstring."""

    def __init__(
        self, services: Services, name: str, config: ListenerConfig, app: Starlette | None = None
    ) -> None:
        """``app``: another app than ``meeple serve``'s (a cluster edge's, meeple.node.web);
        it keeps its :class:`~meeple.web.app.Hub` in ``app.state.hub``."""
        self.name = name
        self.services = services
        self.app = app or create_app(
            services, max_message_size=services.config.web.max_message_size
        )
        web = services.config.web
        self.guard = ConnectionGuard(
            AddressLimiter(services.config.limits.max_connections_per_address),
            None if services.connections is None else services.connections.share(name),
            web.header_timeout,
            web.trusted_proxies,
            server_churn(services),
        )
        http_protocol, ws_protocol = guarded_protocols(
            self.guard, services.config.limits, services.clock
        )
        self._config = uvicorn.Config(
            self.app,
            host=services.config.host,
            port=config.port,
            lifespan="off",
            log_config=None,
            access_log=False,
            http=http_protocol,
            ws=ws_protocol,
            # No permessage-deflate: see meeple.web.fanout (one frame for every socket).
            ws_per_message_deflate=False,
            timeout_keep_alive=max(1, round(web.keep_alive_timeout)),
            # Issue 22: X-Forwarded-* only from the configured proxies (none by default;
            # uvicorn's own default believes any client on 127.0.0.1).
            proxy_headers=bool(web.trusted_proxies),
            forwarded_allow_ips=list(web.trusted_proxies),
            ws_max_size=WS_TRANSPORT_LIMIT,
            ws_ping_interval=20.0,
            ws_ping_timeout=20.0,
            timeout_graceful_shutdown=int(services.config.shutdown_grace) or 1,
        )
        self._server = _Server(self._config)
        self._task: asyncio.Task[None] | None = None
        self._port = config.port

    @property
    def port(self) -> int:
        return self._port

    async def start(self) -> None:
        """Bind and start serving; raises OSError when the port cannot be bound."""
        # Bound here, not by uvicorn, so a taken port is an OSError like every listener's.
        sock = socket.create_server((self._config.host, self._config.port))
        sock.setblocking(False)
        self._port = int(sock.getsockname()[1])
        self._task = asyncio.get_running_loop().create_task(
            self._server.serve(sockets=[sock]), name="web"
        )
        while not self._server.started:
            if self._task.done():
                sock.close()
                with contextlib.suppress(BaseException):
                    self._task.result()
                raise OSError(f"web: uvicorn did not start on port {self._port}")
            await asyncio.sleep(0.01)
        logger.info("web: listening on http://%s:%d/", self.services.config.host, self._port)

    def stop_accepting(self) -> None:
        """A drain (issue 35): the port closes; the pages and sockets open go on."""
        for server in self._server.servers:
            server.close()

    async def close(self, grace: float = 5.0) -> None:
        """Stop accepting, close the WebSockets (their feeds end), wait up to ``grace``."""
        if self._task is None:
            return
        self.app.state.hub.close()
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), grace + 1)
        except (TimeoutError, asyncio.CancelledError):
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        except BaseException:
            logger.exception("web: uvicorn stopped with an error")
        self._task = None

"""The web listener: the Starlette app served by uvicorn on the server's own event loop.

``meeple serve`` starts it like any protocol listener (``LISTENERS["web"]``). uvicorn's
:class:`~uvicorn.Server` runs as a task of the running loop, so pages and the
WebSocket feed see the lobby and rooms directly; its signal handling is left to
:class:`~meeple.server.app.MeepleServer`, which stops it with :meth:`WebListener.close`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import uvicorn
from uvicorn._types import ASGISendEvent
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

from meeple.server.config import ListenerConfig
from meeple.web.app import create_app
from meeple.web.fanout import EXTENSION

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = ["FrameProtocol", "WebListener", "create_listener"]

logger = logging.getLogger(__name__)

# A WebSocket message larger than this closes the connection (1009) in uvicorn itself;
# below it, the browser protocol's own limit answers with an error and keeps it open.
WS_TRANSPORT_LIMIT = 1024 * 1024


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the meeple server owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class FrameProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket, offering the app a writer of frames made once for many
    sockets (:class:`meeple.web.fanout.FrameSink`, the ASGI scope extension
    ``meeple.frames``): the spectator fan-out writes one frame's bytes straight to each
    transport, with no ASGI send, task or encoder per spectator."""

    _drained: Callable[[], None] | None = None

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


def create_listener(services: Services, name: str, config: ListenerConfig) -> WebListener:
    return WebListener(services, name, config)


class WebListener:
    """HTTP and WebSocket on one port; see the module docstring."""

    def __init__(self, services: Services, name: str, config: ListenerConfig) -> None:
        self.name = name
        self.services = services
        self.app = create_app(services, max_message_size=services.config.web.max_message_size)
        self._config = uvicorn.Config(
            self.app,
            host=services.config.host,
            port=config.port,
            lifespan="off",
            log_config=None,
            access_log=False,
            ws=FrameProtocol,
            # No permessage-deflate: see meeple.web.fanout (one frame for every socket).
            ws_per_message_deflate=False,
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

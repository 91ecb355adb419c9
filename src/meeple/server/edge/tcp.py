"""TCP listeners and connections: the socket side of every text/binary TCP protocol.

A :class:`TcpListener` accepts connections and gives each a :class:`Connection` (an id,
a logger, a send method, an idle watchdog on the injected clock) and a *handler*
made by the protocol's factory. It enforces the ``[limits]`` of the config
(:class:`~meeple.server.config.LimitsConfig`): at most so many connections per client
address (one more is closed at once), and a handler that reports its unfinished
message (``partial_bytes``, :class:`PartialMessages`) has its peer dropped once a
message stays unfinished for ``partial_message_timeout`` seconds (slowloris).

A handler whose framer finds its messages' ends unread (:class:`FramedMessages`:
``message_ends``, ``skip_messages``, ``too_fast``; every TCP protocol's handler is one,
whatever its framing: delimited lines or an AM27 Java object stream, see
:mod:`meeple.protocols.boundaries`) has its messages counted as they arrive, before its
session decodes any of them, against a
:class:`~meeple.server.edge.limits.MessageBudget`: past the soft limit a message is
stepped over unread and answered with the handler's ``too_fast()`` bytes (the
protocol's own error), past the hard limit the connection is closed. At most
``messages_per_turn`` messages of one read are handed over (or stepped over) in one
turn of the event loop; the rest wait (the socket's reading paused) while other
connections, timers and the web get theirs. Refusals are logged through
``Connection.refusals`` (the first few, then a count).

The handler is the protocol's asyncio-facing side: it receives bytes, feeds its
sans-I/O session, and sends bytes back. It holds no game logic; games live in rooms.

The socket side is an :class:`asyncio.Protocol` per connection, not a stream and a
task: bytes go from the event loop's read straight to ``handler.data_received``, and
what a connection is sent during one turn of the loop leaves in one write. On the
Twente turn path this removes a task wake-up per message and most system calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from meeple.protocols.boundaries import MessageBoundaries
from meeple.server.clock import Clock, SystemClock, Timer
from meeple.server.config import LimitsConfig, ListenerConfig
from meeple.server.edge.churn import ChurnLog, server_churn
from meeple.server.edge.limits import (
    AddressLimiter,
    ListenerShare,
    MessageBudget,
    PartialMessageWatch,
    RefusalLog,
)

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = [
    "Connection",
    "ConnectionHandler",
    "ConnectionLog",
    "FramedMessages",
    "HandlerFactory",
    "PartialMessages",
    "SessionFraming",
    "TcpListener",
]

logger = logging.getLogger(__name__)

# Connections the kernel queues before accept(). asyncio's default of 100 drops the
# handshakes of a burst (a class's bots, a load test): a client whose handshake was
# dropped that waits for the server to speak first (Clarkson's HELLO, §3.1) hangs.
# The kernel caps it at net.core.somaxconn.
BACKLOG = 4096

# A peer that does not read what we send is cut off once this much is buffered for it,
# so one stalled client cannot make the server hold unbounded memory.
MAX_WRITE_BUFFER = 1024 * 1024


class ConnectionHandler(Protocol):
    """A protocol's per-connection handler; the listener calls these in this order."""

    def connection_made(self) -> None:
        """The connection is open: send the greeting if the protocol has one."""

    def data_received(self, data: bytes) -> None:
        """Bytes arrived, in any chunking."""

    def connection_lost(self, reason: str) -> None:
        """The connection is gone (peer closed, idle, error, shutdown); free what it held."""

    def farewell(self) -> bytes | None:
        """The bytes to send when the server shuts down, or None."""


class PartialMessages(Protocol):
    """A handler that can say how many bytes of an unfinished message its session holds
    (the framer's buffer); the listener's slowloris timer needs it."""

    def partial_bytes(self) -> int: ...


@runtime_checkable
class FramedMessages(Protocol):
    """A handler that says where its messages end before they are decoded, so the
    listener can count them against the message budget and hand over only those it
    may read (:mod:`meeple.protocols.boundaries`); ``too_fast()`` is the protocol's
    error reply for one message refused that way."""

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Offsets just past each of the first ``limit`` messages that end in ``data``,
        from where the handler's framer stands; nothing decoded."""
        ...

    def skip_messages(self, data: bytes) -> None:
        """Step over ``data`` (whole messages, refused) without decoding it."""
        ...

    def too_fast(self) -> bytes: ...


class _Framing(MessageBoundaries, Protocol):
    @property
    def partial(self) -> int: ...


class SessionFraming:
    """:class:`FramedMessages` and :class:`PartialMessages` as a handler's sans-I/O
    ``session`` answers them (its framer finds the messages' ends unread, and holds the
    unfinished one): a handler inherits these and says its own ``too_fast`` reply."""

    session: _Framing

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Where the client's next messages end, unread (the listener's message budget)."""
        return self.session.message_ends(data, limit)

    def skip_messages(self, data: bytes) -> None:
        """Messages the listener refused unread: the framer steps over them."""
        self.session.skip_messages(data)

    def partial_bytes(self) -> int:
        """Bytes of the client's unfinished message (the listener's slowloris timer)."""
        return self.session.partial


HandlerFactory = Callable[["Connection"], ConnectionHandler]


class ConnectionLog(logging.LoggerAdapter[logging.Logger]):
    """A logger that starts every line with the connection's id (``extra["conn"]``)."""

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        # The id on the record too, for --log-format json (meeple.server.logfmt).
        kwargs["extra"] = {**(self.extra or {}), **kwargs.get("extra", {})}
        return f"[{self.extra['conn'] if self.extra else '?'}] {msg}", kwargs


class Connection:
    """One accepted socket: an id for the logs, ``send``, ``close``, and an idle watchdog."""

    def __init__(
        self,
        conn_id: str,
        transport: asyncio.Transport,
        clock: Clock,
        idle_timeout: float,
        protocol: str = "",
    ) -> None:
        self.id = conn_id
        self._transport = transport
        self._clock = clock
        self._idle_timeout = idle_timeout
        self._last_activity = clock.now()
        self._watchdog: Timer | None = None
        self.partial: PartialMessageWatch | None = None
        self._out: list[bytes] = []  # sent this loop iteration, written in one go
        self._loop = asyncio.get_running_loop()
        self._closing = False
        self.close_reason = ""
        self.done: asyncio.Future[None] = self._loop.create_future()
        peer = transport.get_extra_info("peername")
        self.peer_host: str = peer[0] if isinstance(peer, tuple) else "unknown"
        # The protocol too, for --log-format json (meeple.server.logfmt).
        self.log = ConnectionLog(logger, {"conn": conn_id, "protocol": protocol or None})
        self.refusals = RefusalLog(self.log)
        self.budget: MessageBudget | None = None

    @property
    def closing(self) -> bool:
        return self._closing

    def send(self, data: bytes) -> None:
        """Queue bytes for the peer; never blocks. A peer that stops reading is cut off.

        What is sent during one turn of the event loop goes out in one write at its end
        (a move makes several messages per player: one system call, not one each)."""
        if self._closing or not data:
            return
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(data)

    def _flush(self) -> bool:
        """Write what was queued; False if the peer is not reading (then closed)."""
        if not self._out or self._closing:
            return True
        data = b"".join(self._out) if len(self._out) > 1 else self._out[0]
        self._out.clear()
        self._transport.write(data)
        if self._transport.get_write_buffer_size() > MAX_WRITE_BUFFER:
            self.log.warning("peer is not reading; closing")
            self.close("write buffer full")
            return False
        return True

    def close(self, reason: str) -> None:
        """Close after flushing what was sent; the handler hears ``connection_lost(reason)``."""
        if self._closing:
            return
        flushed = True
        with contextlib.suppress(Exception):
            flushed = self._flush()
        if not flushed:  # the flush found the peer not reading, and closed
            return
        self._closing = True
        self.close_reason = reason
        self._stop_timers()
        self._transport.close()  # what was written still goes out, then the FIN

    def abort(self) -> None:
        """Drop the connection at once, unsent bytes and all (shutdown past its grace)."""
        self._closing = True
        self._stop_timers()
        self._transport.abort()

    def _stop_timers(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self.partial is not None:
            self.partial.cancel()

    def _touch(self) -> None:
        self._last_activity = self._clock.now()

    def _arm_watchdog(self, delay: float) -> None:
        self._watchdog = self._clock.call_later(delay, self._check_idle)

    def _check_idle(self) -> None:
        if self._closing:
            return
        idle = self._clock.now() - self._last_activity
        if idle >= self._idle_timeout:
            self.log.debug("idle for %.0f s; closing", idle)
            self.close("idle timeout")
        else:
            self._arm_watchdog(self._idle_timeout - idle)

    def _partial_expired(self, waited: float) -> None:
        if not self._closing:
            self.log.debug("a message unfinished for %.0f s; closing (slowloris)", waited)
            self.close("partial message timeout")


class _Link(asyncio.Protocol):
    """The event loop's side of one connection: hands bytes to the handler at once, at
    most ``messages_per_turn`` messages a turn, within the connection's message budget."""

    def __init__(self, listener: TcpListener) -> None:
        self.listener = listener
        self.conn: Connection | None = None
        self.handler: ConnectionHandler | None = None
        self.partial_bytes: Callable[[], int] | None = None
        self.framed: FramedMessages | None = None
        self.admitted = False
        self._transport: asyncio.Transport | None = None
        self._backlog = b""  # bytes of this read not yet handed over (reading paused)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        lis = self.listener
        self._transport = transport
        conn = Connection(
            f"{lis.name}-{next(lis._ids)}", transport, lis._clock, lis._idle_timeout, lis.name
        )
        self.conn = conn
        if not lis.addresses.acquire(conn.peer_host):
            # Over the per-address limit: no handler, no greeting; closed at once.
            lis.churn.refused(
                lis.name, "too many from the address", f"[{conn.id}] {conn.peer_host}"
            )
            conn.close("too many connections from the address")
            return
        if lis.budget is not None and not lis.budget.acquire():
            # Over the server's connection budget: the descriptors left are kept for
            # the store and the other listeners (server.limits.ConnectionBudget).
            conn.close("the server's connection budget is spent")
            lis.addresses.release(conn.peer_host)
            lis.churn.refused(lis.name, "connection budget spent", f"[{conn.id}] {conn.peer_host}")
            return
        self.admitted = True
        sock = transport.get_extra_info("socket")
        if sock is not None:
            _enable_keepalive(sock)
        # Issue 30.7: counted (one line a period), each connection at DEBUG only.
        lis.churn.opened(lis.name, f"[{conn.id}] from {conn.peer_host}")
        try:
            handler = lis._factory(conn)
            self.handler = handler
            lis._connections[conn] = handler
            conn._arm_watchdog(lis._idle_timeout)
            self.partial_bytes = getattr(handler, "partial_bytes", None)
            if self.partial_bytes is not None:
                conn.partial = PartialMessageWatch(
                    lis._clock, lis.limits.partial_message_timeout, conn._partial_expired
                )
            self.framed = handler if isinstance(handler, FramedMessages) else None
            limits = lis.limits
            conn.budget = MessageBudget(
                lis._clock,
                limits.message_rate,
                limits.message_burst,
                limits.hard_message_rate,
                limits.hard_message_burst,
            )
            handler.connection_made()
        except Exception:
            # A handler bug must cost one connection at most, never the listener.
            conn.log.exception("handler failed; closing the connection")
            conn.close("internal error")

    def data_received(self, data: bytes) -> None:
        conn, handler = self.conn, self.handler
        if conn is None or handler is None or conn.closing:
            return
        conn._touch()
        if self._backlog:  # arrived before the pause took effect: after the rest
            self._backlog += data
            return
        self._take(data)

    def _take(self, data: bytes) -> None:
        """Hand over at most ``messages_per_turn`` messages of ``data`` within the
        budget; drop (and answer) those past it; keep the rest for the next turn."""
        conn, handler = self.conn, self.handler
        assert conn is not None
        assert handler is not None
        framed = self.framed
        if framed is None or conn.budget is None:
            self._feed(data)
            return
        # Where the first messages end, by the framer, nothing decoded (a delimiter's
        # C search, or an object stream's item lengths).
        limit = self.listener.limits.messages_per_turn
        try:
            ends = framed.message_ends(data, limit)
        except Exception:
            conn.log.exception("handler failed; closing the connection")
            conn.close("internal error")
            return
        if not ends:
            self._feed(data)  # part of one message: the framer holds it
            return
        allowed, over = conn.budget.charge(len(ends))
        if allowed == 0 and self.partial_bytes is not None and self.partial_bytes() > 0:
            allowed = 1  # the first message began in an earlier read: its head was fed
        if allowed:
            self._feed(data[: ends[allowed - 1]])
        refused = len(ends) - allowed
        if refused and not conn.closing:
            self._skip(data[ends[allowed - 1] if allowed else 0 : ends[-1]])
            conn.refusals.add(refused)  # counted; the summary at the close says how many
            conn.send(b"".join(framed.too_fast() for _ in range(refused)))
        if over and not conn.closing:
            conn.close("message flood: past the hard rate limit")
        rest = data[ends[-1] :]
        if not rest or conn.closing:
            self._backlog = b""
            return
        if len(ends) < limit or not framed.message_ends(rest, 1):
            self._backlog = b""
            self._feed(rest)  # no whole message left: the start of the next one
            return
        # More whole messages than one turn may take: let the loop run others first.
        self._backlog = rest
        if self._transport is not None:
            self._transport.pause_reading()
        asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        rest, self._backlog = self._backlog, b""
        conn = self.conn
        if conn is None or conn.closing or not rest:
            return
        self._take(rest)
        if not self._backlog and not conn.closing and self._transport is not None:
            self._transport.resume_reading()

    def _skip(self, data: bytes) -> None:
        """Whole messages refused unread: the framer steps over them, undecoded."""
        conn, framed = self.conn, self.framed
        assert conn is not None
        assert framed is not None
        try:
            framed.skip_messages(data)
        except Exception:
            conn.log.exception("handler failed; closing the connection")
            conn.close("internal error")

    def _feed(self, data: bytes) -> None:
        conn, handler = self.conn, self.handler
        assert conn is not None
        assert handler is not None
        if conn.closing:
            return
        try:
            handler.data_received(data)
            if self.partial_bytes is not None and conn.partial is not None and not conn.closing:
                conn.partial.update(self.partial_bytes())
        except Exception:
            conn.log.exception("handler failed; closing the connection")
            conn.close("internal error")

    def eof_received(self) -> bool:
        return False  # the peer closed: close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        conn = self.conn
        if conn is None:
            return
        self._backlog = b""
        if conn.closing:
            reason = conn.close_reason or "closed"
        elif exc is None:
            reason = "closed by peer"
        else:
            reason = f"connection error: {exc.__class__.__name__}"
        conn._closing = True
        conn.close_reason = reason
        conn._stop_timers()
        handler = self.listener._connections.pop(conn, None)
        if handler is not None:
            try:
                handler.connection_lost(reason)
            except Exception:
                conn.log.exception("connection_lost failed")
        if self.admitted:
            self.listener.addresses.release(conn.peer_host)
            if self.listener.budget is not None:
                self.listener.budget.release()
            summary = conn.refusals.summary()
            if summary is not None:
                conn.log.debug("%s", summary)
            self.listener.churn.closed(self.listener.name, reason, f"[{conn.id}]")
        if not conn.done.done():
            conn.done.set_result(None)


class TcpListener:
    """Accepts TCP connections for one protocol and runs a handler per connection."""

    def __init__(
        self,
        name: str,
        host: str,
        port: int,
        handler_factory: HandlerFactory,
        *,
        clock: Clock | None = None,
        idle_timeout: float = 900.0,
        limits: LimitsConfig | None = None,
        budget: ListenerShare | None = None,
        churn: ChurnLog | None = None,
    ) -> None:
        self.name = name
        self.budget = budget
        self.limits = limits or LimitsConfig()
        self.addresses = AddressLimiter(self.limits.max_connections_per_address)
        self.host = host
        self.requested_port = port
        self._factory = handler_factory
        self._clock = clock or SystemClock()
        # Connections opened, closed, refused: counted, one line a period (issue 30.7).
        self._own_churn = churn is None
        self.churn = churn or ChurnLog(self._clock)
        self._idle_timeout = idle_timeout
        self._server: asyncio.Server | None = None
        self._bound = 0
        self._ids = itertools.count(1)
        self._connections: dict[Connection, ConnectionHandler] = {}

    @classmethod
    def serving(
        cls,
        services: Services,
        name: str,
        config: ListenerConfig,
        handler_factory: HandlerFactory,
    ) -> TcpListener:
        """The server's listener ``name``: its host and port, clock, idle timeout, limits,
        share of the connection budget and churn log are the server's (``services``)."""
        return cls(
            name,
            services.config.host,
            config.port,
            handler_factory,
            clock=services.clock,
            idle_timeout=services.config.idle_timeout,
            limits=services.config.limits,
            budget=None if services.connections is None else services.connections.share(name),
            churn=server_churn(services),
        )

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0), kept once it stops accepting."""
        if self._server is None or not self._server.sockets:
            return self._bound or self.requested_port
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def connections(self) -> list[Connection]:
        return list(self._connections)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Link(self), self.host, self.requested_port, backlog=BACKLOG
        )
        self._bound = self.port
        logger.info("%s listening on %s:%d", self.name, self.host, self.port)

    def stop_accepting(self) -> None:
        """A drain (issue 35): the port closes, a new connection is refused; the open
        ones go on until :meth:`close`."""
        if self._server is not None and self._server.sockets:
            self._server.close()
            logger.info("%s: draining: no new connection on %s:%d", self.name, self.host, self.port)

    async def close(self, grace: float = 5.0) -> None:
        """Stop accepting, send each connection the protocol's farewell, and close them all."""
        if self._server is not None:
            self._server.close()
        conns = list(self._connections.items())
        for conn, handler in conns:
            try:
                farewell = handler.farewell()
            except Exception:
                conn.log.exception("farewell failed")
                farewell = None
            if farewell:
                conn.send(farewell)
            conn.close("server shutting down")
        if conns:
            await asyncio.wait([c.done for c, _ in conns], timeout=grace)
            for conn, _ in conns:
                if not conn.done.done():
                    conn.abort()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), timeout=grace)
        if self._own_churn:
            self.churn.close()


def _enable_keepalive(sock: socket.socket) -> None:
    """Let the kernel find half-open connections (a peer that vanished without a FIN)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 60)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 15)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 4)

"""Connection limits shared by every listener: connections per client address, and how
long a peer may leave a message unfinished (slowloris).

:class:`AddressLimiter` counts open connections per address. A TCP listener calls
:meth:`~AddressLimiter.acquire` when it accepts and :meth:`~AddressLimiter.release`
when the connection ends; a ``websockets`` listener refuses the handshake in its
``process_request`` with :meth:`~AddressLimiter.refusal` and holds a slot for the
life of the connection with :meth:`~AddressLimiter.hold`::

    limiter = AddressLimiter(config.limits.max_connections_per_address)

    def process_request(connection, request):
        return limiter.refusal(connection) or ...   # HTTP 503 when the address is full

    async def handler(ws):
        with limiter.hold(ws) as admitted:
            if not admitted:
                await ws.close(1013, "too many connections from your address")
                return
            ...

:class:`PartialMessageWatch` is the slowloris timer, on the injected clock: tell it
after each chunk how many bytes of an unfinished message the session holds, and it
calls ``expire`` once one message has stayed unfinished for ``timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import http
import logging
from collections.abc import Callable, Iterator
from typing import Any

from meeple.server.clock import Clock, Timer

__all__ = ["AddressLimiter", "PartialMessageWatch", "peer_address"]

logger = logging.getLogger(__name__)


def peer_address(connection: Any) -> str:
    """The client's IP address of a ``websockets`` connection (or anything with
    ``remote_address``), ``"unknown"`` when the transport does not say."""
    address = getattr(connection, "remote_address", None)
    if isinstance(address, tuple) and address:
        return str(address[0])
    return "unknown"


class AddressLimiter:
    """Open connections per client address, at most ``limit`` each (0: no limit)."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("the limit must not be negative")
        self.limit = limit
        self._open: dict[str, int] = {}

    def count(self, address: str) -> int:
        return self._open.get(address, 0)

    def full(self, address: str) -> bool:
        return bool(self.limit) and self.count(address) >= self.limit

    def acquire(self, address: str) -> bool:
        """Take a slot for ``address``; False (nothing taken) when it has ``limit`` already."""
        if self.full(address):
            return False
        self._open[address] = self.count(address) + 1
        return True

    def release(self, address: str) -> None:
        """Give back a slot taken with :meth:`acquire`."""
        left = self.count(address) - 1
        if left > 0:
            self._open[address] = left
        else:
            self._open.pop(address, None)

    @contextlib.contextmanager
    def hold(self, connection: Any) -> Iterator[bool]:
        """A slot for a ``websockets`` connection's address while the block runs; yields
        False (and holds nothing) when the address is full."""
        address = peer_address(connection)
        admitted = self.acquire(address)
        try:
            yield admitted
        finally:
            if admitted:
                self.release(address)

    def refusal(self, connection: Any) -> Any:
        """For ``process_request``: an HTTP 503 response when the connection's address has
        ``limit`` connections open, else None (go on with the handshake)."""
        address = peer_address(connection)
        if not self.full(address):
            return None
        logger.info("refused %s: %d connections open from it", address, self.count(address))
        return connection.respond(
            http.HTTPStatus.SERVICE_UNAVAILABLE, "too many connections from your address\n"
        )


class PartialMessageWatch:
    """Calls ``expire`` once the peer's stream has stood inside an unfinished message for
    ``timeout`` seconds.

    After every chunk handed to the session, call :meth:`update` with the bytes of an
    unfinished message the session now holds (its framer's ``partial``: 0 only at a
    message boundary). The count starts when the stream leaves a boundary and stops
    when it reaches one again, so a peer that trickles bytes of a message without ever
    ending it (slowloris) is caught however busy it keeps the socket, while a client
    writing whole messages never is.
    """

    def __init__(self, clock: Clock, timeout: float, expire: Callable[[float], object]) -> None:
        if timeout <= 0:
            raise ValueError("the timeout must be positive")
        self._clock = clock
        self.timeout = timeout
        self._expire = expire
        self._since: float | None = None
        self._timer: Timer | None = None

    @property
    def since(self) -> float | None:
        """When the stream left the last message boundary (clock time), or None."""
        return self._since

    def update(self, pending: int) -> None:
        if pending <= 0:
            self._since = None
            self.cancel()
        elif self._since is None:
            self._since = self._clock.now()
            self._timer = self._clock.call_later(self.timeout, self._check)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._since is None:
            return
        waited = self._clock.now() - self._since
        if waited >= self.timeout:
            self._expire(waited)
        else:
            self._timer = self._clock.call_later(self.timeout - waited, self._check)

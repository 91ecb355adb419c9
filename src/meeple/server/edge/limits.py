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

:class:`MessageBudget` is the message rate of one connection (issue 22): charge it
with the number of messages a read holds *before* they are decoded; what is past its
soft limit gets the protocol's error without being read, and a connection past its
hard limit is closed. :class:`RefusalLog` logs the first few refusals of a connection
and counts the rest, so a flood of bad messages cannot fill the disk with log lines.
"""

from __future__ import annotations

import contextlib
import http
import logging
import resource
from collections.abc import Callable, Iterator
from typing import Any

from meeple.server.clock import Clock, Timer

# Refusals of one connection logged one by one; the rest are counted (RefusalLog).
REFUSALS_LOGGED = 3

__all__ = [
    "AddressLimiter",
    "ConnectionBudget",
    "ListenerShare",
    "MessageBudget",
    "PartialMessageWatch",
    "RefusalLog",
    "TokenBucket",
    "peer_address",
    "raise_descriptor_limit",
]

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


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; starts full."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a bucket needs a positive rate and a burst of at least 1")
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self._at = now

    def _refill(self, now: float) -> None:
        if now > self._at:
            self.tokens = min(self.burst, self.tokens + (now - self._at) * self.rate)
        self._at = now

    def take(self, n: int, now: float) -> int:
        """Take up to ``n`` whole tokens; how many were there."""
        self._refill(now)
        got = min(n, int(self.tokens))
        self.tokens -= got
        return got

    def spend(self, n: int, now: float) -> bool:
        """Take ``n`` tokens, into debt if need be; False once the bucket is in debt."""
        self._refill(now)
        self.tokens -= n
        return self.tokens >= 0


class MessageBudget:
    """How many messages one connection may send, checked before they are decoded.

    Every message is charged to two buckets. The *soft* one (``rate`` a second,
    ``burst`` at once) says how many are read; the rest get the protocol's error reply
    unread. The *hard* one (``hard_rate``, ``hard_burst``; larger) counts every message,
    read or not: once it is empty the connection is closed. A client that keeps to
    ``rate`` never meets either; a flood meets the soft limit at once and the hard one
    after ``hard_burst`` messages.
    """

    def __init__(
        self, clock: Clock, rate: float, burst: int, hard_rate: float, hard_burst: int
    ) -> None:
        now = clock.now()
        self._clock = clock
        self.soft = TokenBucket(rate, burst, now)
        self.hard = TokenBucket(hard_rate, hard_burst, now)
        self.refused = 0  # messages past the soft limit, in all

    def charge(self, n: int) -> tuple[int, bool]:
        """``n`` messages arrived: how many of them (the first ones) may be read, and
        whether the connection is past its hard limit (then close it)."""
        now = self._clock.now()
        allowed = self.soft.take(n, now)
        self.refused += n - allowed
        within = self.hard.spend(n, now)
        return allowed, not within


class RefusalLog:
    """The refusals of one connection: the first ``first`` logged, the rest counted.

    :meth:`note` for each refused message (lazy ``%s`` arguments, as ``logging``);
    :meth:`summary` once, when the connection ends: None if nothing went unlogged.
    """

    def __init__(
        self,
        log: logging.LoggerAdapter[logging.Logger] | logging.Logger,
        first: int = REFUSALS_LOGGED,
    ) -> None:
        self._log = log
        self.first = first
        self.count = 0

    def note(self, msg: str, *args: object) -> None:
        self.count += 1
        if self.count <= self.first:
            self._log.info(msg, *args)

    def add(self, n: int) -> None:
        """``n`` refusals not worth a line each (messages past the rate limit)."""
        self.count += n

    def summary(self) -> str | None:
        unlogged = self.count - min(self.count, self.first)
        if unlogged <= 0:
            return None
        return f"{self.count} messages refused ({unlogged} not logged one by one)"


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the new soft
    limit (the old one when it cannot be raised)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError) as e:
            logger.warning("cannot raise the open-file limit from %d to %d: %s", soft, wanted, e)
    return soft


class ConnectionBudget:
    """Client connections the whole server may hold, so that ``reserve`` file
    descriptors always remain for the store, the logs and accepting (no ``EMFILE``).

    ``limit`` is the open-file limit (see :func:`raise_descriptor_limit`). Each listener
    (``share(name)``) has a few places of its own (a quarter of the budget, split evenly)
    and shares the rest: idle clients that fill one listener's port cannot stop the
    others from taking new clients. A refused connection is closed at once."""

    def __init__(self, limit: int, reserve: int, listeners: int = 6) -> None:
        self.capacity = max(1, limit - reserve)
        self.own = max(1, self.capacity // (4 * max(1, listeners)))
        self.pool = max(0, self.capacity - self.own * max(1, listeners))
        self.pooled = 0  # places of the shared pool taken
        self.held: dict[str, int] = {}
        self.refused = 0
        self._warned = False

    @property
    def open(self) -> int:
        return sum(self.held.values())

    def share(self, name: str) -> ListenerShare:
        """The places of one listener: ``acquire()`` per connection, ``release()`` at its end."""
        self.held.setdefault(name, 0)
        return ListenerShare(self, name)

    def acquire(self, name: str) -> bool:
        held = self.held.get(name, 0)
        if held < self.own:
            self.held[name] = held + 1
            return True
        if self.pooled < self.pool:
            self.pooled += 1
            self.held[name] = held + 1
            return True
        self.refused += 1
        if not self._warned:
            self._warned = True
            logger.warning(
                "%s: connection budget spent (%d open in all, %d here): new connections "
                "are refused until some close (logged once)",
                name,
                self.open,
                held,
            )
        return False

    def release(self, name: str) -> None:
        held = self.held.get(name, 0)
        if held <= 0:
            return
        self.held[name] = held - 1
        if held > self.own:
            self.pooled -= 1
        if self.pooled < self.pool * 0.9:
            self._warned = False


class ListenerShare:
    """One listener's side of a :class:`ConnectionBudget`."""

    def __init__(self, budget: ConnectionBudget, name: str) -> None:
        self.budget = budget
        self.name = name

    def acquire(self) -> bool:
        return self.budget.acquire(self.name)

    def release(self) -> None:
        self.budget.release(self.name)

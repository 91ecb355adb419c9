"""Connection churn as counts (issue 30.7): opened, closed and refused connections per
protocol and reason, logged as one line per protocol per period, not one per connection.

A client in a reconnect loop made the log grow by a line or two per connection (660 B
a connection on Twente, 140 MB an hour); four of them flooding ``/ws`` added 536 KB in
20 s. Every listener tells the server's one :class:`ChurnLog` instead
(:func:`server_churn`): each event is logged at DEBUG with its connection's id (for
whoever needs them), and counted; every ``period`` seconds of the injected clock, the
counts of the period since the last line are logged at INFO, one line per protocol
that had any::

    web: connections in the last 60 s: 412 opened, 410 closed (400 by peer, 10 flood),
    3 refused (unknown host)

A quiet server logs nothing. The timer runs only while there is something to report.
"""

from __future__ import annotations

import collections
import logging
from typing import TYPE_CHECKING

from meeple.server.clock import Clock, Timer
from meeple.server.metrics import METRICS

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = ["PERIOD", "ChurnLog", "server_churn"]

logger = logging.getLogger(__name__)

PERIOD = 60.0  # seconds between two count lines
# Reasons kept apart per protocol and event; past these, "other" (a crafted reason,
# say an exception's text, must not grow the table).
_MAX_REASONS = 32


class ChurnLog:
    """Counts of connections opened, closed and refused; see the module docstring."""

    def __init__(self, clock: Clock, period: float = PERIOD) -> None:
        self._clock = clock
        self.period = period
        self._opened: collections.Counter[str] = collections.Counter()
        self._closed: dict[str, collections.Counter[str]] = {}
        self._refused: dict[str, collections.Counter[str]] = {}
        self._timer: Timer | None = None
        self._since: float | None = None  # the period's start (made outside a loop: none)
        self.lines = 0  # count lines logged so far

    def opened(self, protocol: str, who: str = "") -> None:
        """A connection of ``protocol`` is open (``who``: its id or address, for DEBUG)."""
        logger.debug("%s: %s connected", protocol, who or "a client")
        self._opened[protocol] += 1
        METRICS.connection_opened(protocol)
        self._arm()

    def closed(self, protocol: str, reason: str, who: str = "") -> None:
        """A connection of ``protocol`` is closed, for ``reason`` (a short fixed text)."""
        logger.debug("%s: %s disconnected (%s)", protocol, who or "a client", reason)
        _count(self._closed.setdefault(protocol, collections.Counter()), reason)
        METRICS.connection_closed(protocol, reason)
        self._arm()

    def refused(self, protocol: str, reason: str, who: str = "") -> None:
        """A connection (or request) of ``protocol`` is refused, for ``reason``."""
        logger.debug("%s: refused %s (%s)", protocol, who or "a client", reason)
        _count(self._refused.setdefault(protocol, collections.Counter()), reason)
        METRICS.connection_refused(protocol, reason)
        self._arm()

    def flush(self) -> None:
        """Log the counts since the last line now (a period's end, or the server's stop)."""
        self._timer = None
        now = self._clock.now()
        seconds = max(0.0, now - (now if self._since is None else self._since))
        self._since = now
        protocols = sorted(set(self._opened) | set(self._closed) | set(self._refused))
        for protocol in protocols:
            parts = []
            opened = self._opened.get(protocol, 0)
            if opened:
                parts.append(f"{opened} opened")
            for word, table in (("closed", self._closed), ("refused", self._refused)):
                counts = table.get(protocol)
                if counts:
                    why = ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
                    parts.append(f"{sum(counts.values())} {word} ({why})")
            logger.info(
                "%s: connections in the last %.0f s: %s", protocol, seconds, ", ".join(parts)
            )
            self.lines += 1
        self._opened.clear()
        self._closed.clear()
        self._refused.clear()

    def close(self) -> None:
        """Log what is counted and stop the timer (the server's resources close)."""
        if self._timer is not None:
            self._timer.cancel()
            self.flush()

    def _arm(self) -> None:
        if self._timer is None:
            self._since = self._clock.now()
            self._timer = self._clock.call_later(self.period, self.flush)


def _count(counts: collections.Counter[str], reason: str) -> None:
    if reason not in counts and len(counts) >= _MAX_REASONS:
        reason = "other"
    counts[reason] += 1


def server_churn(services: Services) -> ChurnLog:
    """The server's one :class:`ChurnLog` (every listener's, on the server's clock)."""
    if services.churn is None:
        services.churn = ChurnLog(services.clock)
    return services.churn

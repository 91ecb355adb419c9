"""Attempt limits: how many guesses of a secret a client address gets in a window.

:class:`AttemptLimiter` is one mechanism for every place a client offers a secret: the
web's account sign-in (:mod:`meeple.web.accounts`), the CMPN402 console's sign-in with
the admin token (:mod:`meeple.web.console`) and the referee's ``/admin/…`` endpoint
(:func:`meeple.server.edge.cmpn402.admin_gate`, on ``meeple serve`` and on cluster
edges). It runs on the injected clock, so tests step it in virtual time.

The admin token is one secret with two doors (the console's sign-in and ``/admin``): both
count in the one limiter of the process, :func:`admin_attempts`, so an address gets
:data:`ATTEMPTS` guesses a :data:`WINDOW` whichever door it knocks on.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from meeple.server.clock import Clock

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = ["ATTEMPTS", "WINDOW", "AttemptLimiter", "admin_attempts"]

# Guesses of the admin token per client address in any WINDOW seconds.
ATTEMPTS = 5
WINDOW = 60.0


class AttemptLimiter:
    """At most ``attempts`` per key in any ``window`` seconds of ``clock`` (a sliding log).

    Keys are client addresses; at most ``max_keys`` are remembered (the least recently
    seen go first), so a flood of addresses costs bounded memory. :meth:`allow` counts an
    attempt; :meth:`wait` only looks (for a door that counts failures alone).
    """

    def __init__(
        self, clock: Clock, attempts: int = ATTEMPTS, window: float = WINDOW, max_keys: int = 4096
    ) -> None:
        self._clock = clock
        self._attempts = attempts
        self._window = window
        self._max_keys = max_keys
        self._log: collections.OrderedDict[str, collections.deque[float]] = (
            collections.OrderedDict()
        )

    def _times(self, key: str, now: float) -> collections.deque[float]:
        times = self._log.pop(key, None) or collections.deque()
        while times and times[0] <= now - self._window:
            times.popleft()
        self._log[key] = times
        while len(self._log) > self._max_keys:
            self._log.popitem(last=False)
        return times

    def wait(self, key: str) -> float | None:
        """None when ``key`` may try now, else seconds until it may; counts nothing."""
        now = self._clock.now()
        times = self._times(key, now)
        if len(times) >= self._attempts:
            return max(0.0, times[0] + self._window - now)
        return None

    def allow(self, key: str) -> float | None:
        """Count an attempt by ``key``: None when allowed, else seconds until the next is."""
        wait = self.wait(key)
        if wait is None:
            self._log[key].append(self._clock.now())
        return wait

    def forget(self, key: str) -> None:
        """Clear ``key``'s attempts (its owner got in: the guessing before is moot)."""
        self._log.pop(key, None)


def admin_attempts(services: Services) -> AttemptLimiter:
    """The process's one limiter of admin-token guesses (see the module doc)."""
    if services.admin_attempts is None:
        services.admin_attempts = AttemptLimiter(services.clock)
    return services.admin_attempts

"""Clocks for the server: the real one, and a virtual one that tests advance by hand.

Every timer in the server (idle time-outs, turn clocks, heartbeats, challenge
windows) goes through a :class:`Clock`, so tests run in virtual time: they call
:meth:`VirtualClock.advance` and the timers due by then fire at once, in order.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "SystemClock", "Timer", "VirtualClock"]


class Timer(Protocol):
    """A scheduled callback that can be cancelled."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the server needs of time: read it, wait on it, and schedule callbacks."""

    def now(self) -> float:
        """Seconds on a monotonic scale (not wall time)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    def call_later(self, seconds: float, callback: Callable[[], object]) -> Timer: ...


class SystemClock:
    """The event loop's monotonic clock."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, seconds: float, callback: Callable[[], object]) -> Timer:
        return asyncio.get_running_loop().call_later(seconds, callback)


class _VirtualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """A clock that stands still until :meth:`advance` moves it.

    ``sleep`` and ``call_later`` register timers; ``advance(dt)`` fires every timer
    due within ``dt`` in time order, letting the event loop run the woken tasks
    between timers so that chains of timers (a task that sleeps again) behave as
    they would in real time.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_later(self, seconds: float, callback: Callable[[], object]) -> Timer:
        timer = _VirtualTimer(self._now + max(0.0, seconds), callback)
        heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await future
        finally:
            timer.cancel()

    async def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, firing due timers in order."""
        target = self._now + seconds
        await _settle()
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            timer.callback()
            await _settle()
        self._now = target
        await _settle()

    @property
    def pending(self) -> int:
        """How many live timers are scheduled (for tests)."""
        return sum(1 for _, _, t in self._timers if not t.cancelled)


async def _settle(rounds: int = 20) -> None:
    """Let woken tasks run: a few passes of the event loop with nothing else due."""
    for _ in range(rounds):
        await asyncio.sleep(0)

"""The virtual clock fires timers in order, only when advanced."""

from __future__ import annotations

import asyncio

from meeple.server.clock import SystemClock, VirtualClock


async def test_timers_fire_in_time_order_when_advanced() -> None:
    """call_later callbacks run at their due time, in order, and not before."""
    clock = VirtualClock()
    fired: list[tuple[str, float]] = []
    clock.call_later(2, lambda: fired.append(("b", clock.now())))
    clock.call_later(1, lambda: fired.append(("a", clock.now())))
    cancelled = clock.call_later(1.5, lambda: fired.append(("x", clock.now())))
    cancelled.cancel()
    await clock.advance(0.5)
    assert fired == []
    await clock.advance(2)
    assert fired == [("a", 1.0), ("b", 2.0)]
    assert clock.now() == 2.5


async def test_sleeping_tasks_wake_in_virtual_time() -> None:
    """A task that sleeps repeatedly wakes once per period as time advances."""
    clock = VirtualClock()
    ticks: list[float] = []

    async def ticker() -> None:
        for _ in range(3):
            await clock.sleep(10)
            ticks.append(clock.now())

    task = asyncio.create_task(ticker())
    await clock.advance(35)
    assert ticks == [10, 20, 30]
    await task


async def test_system_clock_is_monotonic() -> None:
    """The real clock reads the loop's time and sleeps for real."""
    clock = SystemClock()
    t0 = clock.now()
    await clock.sleep(0.001)
    assert clock.now() >= t0

"""Waiting on real time in tests: by a deadline, with limits a loaded machine still meets.

A test that polls for something another task, thread or process does (a log line
written, a listener up, a metric scraped) waits until a monotonic deadline, not for a
fixed number of short sleeps: CI runs on two cores shared with other work, where a
step of a few milliseconds can take seconds. :data:`PATIENCE` is a hang bound, not a
speed check: a test that passes waits only as long as the thing takes. Timers of the
code under test belong on the injectable clock (``meeple.server.clock``) instead.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

__all__ = ["GAME_PATIENCE", "PATIENCE", "PATIENCE_MS", "eventually"]

PATIENCE = 60.0
"""Seconds a test waits for something that should happen soon before it fails."""


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str = "the condition",
    *,
    limit: float = PATIENCE,
    every: float = 0.02,
) -> None:
    """Return once ``condition()`` (a function or a coroutine function) is true; fail
    with ``what`` when it is still false after ``limit`` seconds of real time."""
    deadline = time.monotonic() + limit
    while True:
        result = condition()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {limit:.0f} s")
        await asyncio.sleep(every)


GAME_PATIENCE = 300.0
"""Seconds a test waits for a whole game (bots and clients playing to the end), a hang
bound under pytest-timeout's 600 s: a game that takes 20 s on a quiet machine took over
60 s at load 20 (tests/tui/test_santorini_game.py, issue 33)."""

PATIENCE_MS = PATIENCE * 1000
""":data:`PATIENCE` in milliseconds, for Playwright's ``timeout=`` arguments."""

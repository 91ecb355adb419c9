"""What every client does with a server it cannot follow: say so once, wait within bounds.

Other teams' servers send messages meeple cannot read (letters where the spec has a
count, a command it does not know) and sometimes no answer at all (no OK to READY).
A client never dies of either (issue 31):

- :class:`Unreadable` keeps, per connection, the messages the client could not take:
  the first of each *kind* (the command and what was wrong with it) is logged with its
  bytes, the rest only counted, and :meth:`Unreadable.summary` sums them up at the end.
- :class:`Patience` is how long a client waits on an answer the server owes before
  it says so ("waiting 10 s for WELCOME; no answer yet"), and how long before it gives
  up; :func:`answered` applies it to one wait, on an injectable :class:`Clock`, so
  tests run the waits in virtual time.

The bots log through :mod:`logging`; the terminal clients show the same sentences on
their status line (each :meth:`Unreadable.note` and each notice returns its sentence).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from meeple.server.clock import Clock, SystemClock

__all__ = [
    "DEFAULT_GIVE_UP",
    "DEFAULT_NOTICE",
    "Expected",
    "NoAnswer",
    "Patience",
    "Stopwatch",
    "Unreadable",
    "answered",
    "read_owed",
    "show_bytes",
    "within",
]

T = TypeVar("T")

DEFAULT_NOTICE = 10.0  # seconds of silence before a client says it is still waiting
DEFAULT_GIVE_UP = 120.0  # seconds before it gives up on an answer the server owes at once
SHOWN_BYTES = 120  # how much of an unreadable message a log line shows
MAX_KINDS = 32  # kinds told apart per connection; a server cannot flood the log with more
MAX_KIND_LENGTH = 60  # characters of a kind's name (it may quote the server's bytes)
OTHER_KINDS = "other kinds"


@dataclass(frozen=True, slots=True)
class Patience:
    """How long a client waits on the server: ``notice`` s before it says it is waiting
    (then again each time the wait doubles), ``give_up`` s before it stops waiting on an
    answer the server owes at once (None: never). Waits run on ``clock``."""

    notice: float = DEFAULT_NOTICE
    give_up: float | None = DEFAULT_GIVE_UP
    clock: Clock = field(default_factory=SystemClock)

    def __post_init__(self) -> None:
        if not self.notice > 0:
            raise ValueError(f"notice must be positive: {self.notice}")
        if self.give_up is not None and not self.give_up >= self.notice:
            raise ValueError(f"give_up ({self.give_up}) must be at least notice ({self.notice})")


@dataclass(frozen=True, slots=True)
class Expected:
    """What a client waits for: ``what`` in words ("WELCOME to our ANNOUNCE"), and whether
    the server owes it at once (``owed``: give up after :attr:`Patience.give_up`) or
    it waits on other players (notices only: a table fills when it fills)."""

    what: str
    owed: bool = True


class NoAnswer(Exception):
    """The server did not answer within :attr:`Patience.give_up`; the message says what."""


def _seconds(value: float) -> str:
    """``10`` for 10.0013, ``0.2`` for 0.200477: a wait as a person reads it."""
    return f"{round(value, 1):g}"


def show_bytes(data: bytes, limit: int = SHOWN_BYTES) -> str:
    """``data`` as a Python bytes literal, cut at ``limit`` bytes with the total length."""
    if len(data) <= limit:
        return repr(data)
    return f"{data[:limit]!r}... ({len(data)} bytes)"


class Unreadable:
    """The server messages one connection could not take, logged once per kind.

    ``who`` starts every line (the bot's name). :meth:`note` returns the sentence it
    logged for the first of a kind (for a status line) and None for a repeat.
    """

    def __init__(self, who: str, logger: logging.Logger) -> None:
        self.who = who
        self._logger = logger
        self.counts: Counter[str] = Counter()

    def note(self, kind: str, reason: str, data: bytes) -> str | None:
        """Count one message of ``kind`` that could not be taken because ``reason``.

        At most :data:`MAX_KINDS` kinds are told apart (the rest count as one), so a
        server cannot write more than that many lines into our log."""
        kind = kind[:MAX_KIND_LENGTH]
        if kind not in self.counts and len(self.counts) >= MAX_KINDS:
            kind = OTHER_KINDS
        self.counts[kind] += 1
        if self.counts[kind] > 1:
            return None
        text = (
            f"cannot take the server's {kind}: {reason}; ignored: {show_bytes(data)} "
            "(more of this kind are counted, not logged)"
        )
        self._logger.warning("%s: %s", self.who or "client", text)
        return text

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str | None:
        """One line for the end of a connection ("3 server messages ignored: ..."), or None."""
        if not self.counts:
            return None
        kinds = ", ".join(f"{kind} x{n}" for kind, n in self.counts.most_common())
        return f"{self.total} server message(s) ignored: {kinds}"


class Stopwatch:
    """Since when a client has waited for what it waits for now.

    A read that brings something else (a PING, a chat line) does not restart the wait,
    so a server that pings but never answers is still reported; a change of what is
    awaited, or a command sent (:meth:`restart`), starts it again."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._expected: Expected | None = None
        self._since = 0.0

    def restart(self) -> None:
        """A command went out: what it awaits is awaited from now."""
        self._expected = None

    def since(self, expected: Expected | None) -> float:
        """The time the wait for ``expected`` began (now, if it is new)."""
        if expected is None or expected != self._expected:
            self._expected, self._since = expected, self._clock.now()
        return self._since


async def answered(
    read: Callable[[], Awaitable[T]],
    expected: Expected | None,
    patience: Patience,
    say: Callable[[str], None],
    *,
    since: float | None = None,
) -> T:
    """``read()`` (a socket read); while ``expected`` is not None, say each time the
    wait (counted from ``since``, else from now) passes :attr:`Patience.notice`, then
    twice as long, and so on, and raise :class:`NoAnswer` after
    :attr:`Patience.give_up` if the answer is owed.

    The read runs in the calling task, as :func:`asyncio.timeout` does it: a timer on
    the clock cancels it when a notice is due, and a fresh ``read()`` goes on after the
    notice. ``read`` must therefore be safe to cancel (``StreamReader.read`` and
    websockets' ``recv`` are: no data is lost), and when nothing is awaited the read
    costs no more than a bare ``await`` (no task, no timer: the timing of a client
    that waits on nothing is unchanged)."""
    if expected is None:
        return await read()
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - always inside a task under asyncio
        raise RuntimeError("answered() needs a running task")
    clock = patience.clock
    started = clock.now() if since is None else since
    next_notice = patience.notice
    while next_notice <= clock.now() - started:  # said during an earlier read
        next_notice *= 2
    while True:
        deadline = next_notice
        if expected.owed and patience.give_up is not None:
            deadline = min(deadline, patience.give_up)
        fired = False

        def wake() -> None:
            nonlocal fired
            fired = True
            task.cancel()

        timer = clock.call_later(max(0.0, deadline - (clock.now() - started)), wake)
        try:
            return await read()
        except asyncio.CancelledError:
            # Ours (the notice is due) unless someone else cancelled the task as well.
            if not fired or task.uncancel() > 0:
                raise
        finally:
            timer.cancel()
        waited = clock.now() - started
        if expected.owed and patience.give_up is not None and waited >= patience.give_up:
            text = f"waited {_seconds(waited)} s for {expected.what}; no answer: giving up"
            say(text)
            raise NoAnswer(text)
        if not expected.owed:
            then = "still waiting (other players may be slow)"
        elif patience.give_up is None:
            then = "still waiting"
        else:
            then = f"waiting until {_seconds(patience.give_up)} s, then giving up"
        say(f"waiting {_seconds(waited)} s for {expected.what}; no answer yet, {then}")
        next_notice *= 2


async def read_owed(
    reader: asyncio.StreamReader,
    size: int,
    expected: Expected | None,
    patience: Patience,
    say: Callable[[str], None],
    stopwatch: Stopwatch,
) -> bytes:
    """One read of a TCP client's socket through :func:`answered` (the wait for
    ``expected`` counted by ``stopwatch``); a connection the server reset reads as its
    end (``b""``), as far as the client is concerned."""
    try:
        return await answered(
            lambda: reader.read(size), expected, patience, say, since=stopwatch.since(expected)
        )
    except ConnectionError:
        return b""


async def within(waiting: Awaitable[T], seconds: float | None, clock: Clock) -> T:
    """``waiting``'s result, or TimeoutError after ``seconds`` on ``clock`` (None: no
    limit); like :func:`asyncio.wait_for`, but on the injectable clock."""
    if seconds is None:
        return await waiting
    task = asyncio.ensure_future(waiting)
    sleeper = asyncio.ensure_future(clock.sleep(max(0.0, seconds)))
    try:
        await asyncio.wait({task, sleeper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    if task.cancelled():
        raise TimeoutError(f"no result in {seconds:g} s")
    return task.result()

"""clients/watch.py: unreadable messages said once per kind; waits said and bounded on
the injectable clock (issue 31)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.clients.watch import (
    Expected,
    NoAnswer,
    Patience,
    Stopwatch,
    Unreadable,
    answered,
    show_bytes,
    within,
)
from meeple.server.clock import VirtualClock


def test_unreadable_logs_the_first_of_each_kind(caplog: pytest.LogCaptureFixture) -> None:
    """The first message of a kind is logged with its bytes; repeats are only counted."""
    log = logging.getLogger("test.watch")
    seen = Unreadable("bot", log)
    with caplog.at_level(logging.WARNING, logger="test.watch"):
        first = seen.note("INFORMMOVE", "count is not a number", b"INFORMMOVE\x1fa\x1e")
        again = seen.note("INFORMMOVE", "count is not a number", b"INFORMMOVE\x1fb\x1e")
        other = seen.note("SHOUT", "unknown command", b"SHOUT\x1e")
    assert first is not None
    assert "b'INFORMMOVE\\x1fa\\x1e'" in first
    assert again is None
    assert other is not None
    assert len(caplog.records) == 2
    assert caplog.records[0].getMessage().startswith("bot: cannot take the server's INFORMMOVE")
    assert seen.summary() == "3 server message(s) ignored: INFORMMOVE x2, SHOUT x1"
    assert Unreadable("x", log).summary() is None


@given(st.lists(st.text(max_size=200), max_size=200))
def test_unreadable_lines_are_bounded(kinds: list[str]) -> None:
    """Whatever kinds a server provokes, at most 33 lines are logged (32 kinds and one for
    all the others), each with a kind of at most 60 characters, and every message counts."""
    log = logging.getLogger("test.watch.bounded")
    seen = Unreadable("bot", log)
    lines = [t for t in (seen.note(k, "bad", k.encode()) for k in kinds) if t is not None]
    assert len(lines) <= 33
    assert len(seen.counts) <= 33
    assert all(len(k) <= 60 for k in seen.counts)
    assert seen.total == len(kinds)


@given(st.binary(max_size=400))
def test_show_bytes_is_bounded(data: bytes) -> None:
    """However long the message, a log line shows at most 120 bytes of it, and its length."""
    shown = show_bytes(data)
    assert len(shown) <= 4 * 120 + 40
    if len(data) > 120:
        assert shown.endswith(f"({len(data)} bytes)")
    else:
        assert shown == repr(data)


def test_patience_refuses_nonsense() -> None:
    """A notice must be positive and come before the give-up."""
    with pytest.raises(ValueError, match="positive"):
        Patience(0)
    with pytest.raises(ValueError, match="at least"):
        Patience(10, 5)
    assert Patience(10, None).give_up is None


async def _silence(
    patience: Patience, clock: VirtualClock, expected: Expected, until: float
) -> tuple[list[str], BaseException | None]:
    said: list[str] = []
    never = asyncio.Event()  # a read that never ends (and may be cancelled and redone)
    task = asyncio.ensure_future(answered(never.wait, expected, patience, said.append))
    await clock.advance(until)
    if not task.done():
        task.cancel()
    try:
        await task
    except (NoAnswer, asyncio.CancelledError) as e:
        return said, e
    return said, None


@given(notice=st.integers(1, 30), extra=st.integers(0, 200))
async def test_owed_answer_notices_double_then_give_up(notice: int, extra: int) -> None:
    """An owed answer: notices at notice, 2x, 4x ... before the give-up, then NoAnswer
    exactly at give_up, in virtual time."""
    clock = VirtualClock()
    give_up = notice + extra
    said, error = await _silence(
        Patience(notice, give_up, clock), clock, Expected("OK to our READY"), give_up + 1
    )
    expected_at = []
    at = notice
    while at < give_up:
        expected_at.append(at)
        at *= 2
    assert [s.split(" s ")[0] for s in said[:-1]] == [f"waiting {t:g}" for t in expected_at]
    assert said[-1] == f"waited {give_up:g} s for OK to our READY; no answer: giving up"
    assert isinstance(error, NoAnswer)


async def test_a_wait_on_others_is_only_said() -> None:
    """Not owed (the others' READY): said at 10, 20, 40, 80 s, never given up."""
    clock = VirtualClock()
    said, error = await _silence(
        Patience(10, 30, clock), clock, Expected("STARTING", owed=False), 100
    )
    assert [s.split(";")[0] for s in said] == [
        "waiting 10 s for STARTING",
        "waiting 20 s for STARTING",
        "waiting 40 s for STARTING",
        "waiting 80 s for STARTING",
    ]
    assert all("other players may be slow" in s for s in said)
    assert isinstance(error, asyncio.CancelledError)


async def test_an_answer_in_time_is_handed_back_quietly() -> None:
    """The answer comes before the notice: its value, and not a word said."""
    clock = VirtualClock()
    said: list[str] = []
    replies: asyncio.Queue[bytes] = asyncio.Queue()
    patience = Patience(10, 60, clock)
    task = asyncio.ensure_future(answered(replies.get, Expected("x"), patience, said.append))
    await clock.advance(9)
    replies.put_nowait(b"OK")
    assert await task == b"OK"
    assert said == []
    assert clock.pending == 0


async def test_within_times_out_on_the_clock() -> None:
    """within: the result if it comes in time, TimeoutError after the seconds otherwise."""
    clock = VirtualClock()
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(within(never, 5, clock))
    await clock.advance(4.9)
    assert not task.done()
    await clock.advance(0.1)
    with pytest.raises(TimeoutError):
        await task
    assert never.cancelled()

    async def quick() -> int:
        return 7

    assert await within(quick(), 5, clock) == 7
    assert await within(quick(), None, clock) == 7


async def test_reads_of_other_things_do_not_restart_the_wait() -> None:
    """A server that PINGs every 3 s but never answers: each read ends with the PING, yet
    the wait counts from the command, so the notices come at 10 and 20 s and the give-up
    at 30 s, as with a silent server."""
    clock = VirtualClock()
    patience = Patience(10, 30, clock)
    stopwatch = Stopwatch(clock)
    expected = Expected("OK to our READY")
    said: list[str] = []
    pings: asyncio.Queue[bytes] = asyncio.Queue()

    def ping() -> None:
        pings.put_nowait(b"PING")
        clock.call_later(3, ping)

    clock.call_later(3, ping)
    stopwatch.restart()  # READY sent
    outcome: BaseException | None = None

    async def client() -> None:
        nonlocal outcome
        while True:
            since = stopwatch.since(expected)
            try:
                await answered(pings.get, expected, patience, said.append, since=since)
            except NoAnswer as e:
                outcome = e
                return

    reading = asyncio.ensure_future(client())
    await clock.advance(40)
    await reading
    assert [s.split(";")[0] for s in said] == [
        "waiting 10 s for OK to our READY",
        "waiting 20 s for OK to our READY",
        "waited 30 s for OK to our READY",
    ]
    assert isinstance(outcome, NoAnswer)


async def test_stopwatch_restarts_on_a_command_and_on_a_new_wait() -> None:
    """The same wait keeps its start; a command sent or another wait starts it anew."""
    clock = VirtualClock()
    stopwatch = Stopwatch(clock)
    a, b = Expected("a"), Expected("b")
    assert stopwatch.since(a) == 0
    await clock.advance(5)
    assert stopwatch.since(a) == 0
    assert stopwatch.since(b) == 5
    await clock.advance(3)
    stopwatch.restart()
    assert stopwatch.since(b) == 8
    assert stopwatch.since(None) == 8
    await clock.advance(1)
    assert stopwatch.since(b) == 9

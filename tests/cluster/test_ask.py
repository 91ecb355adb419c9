"""The one "ask until an owner answers" rule of a node (issue 32.4: meeple.node.ask), on
the in-process bus and a virtual clock: asked again while nobody serves, while the
owner is busy and after a passing error, with the same payload; given up after the
patience; a refusal or a closed bus at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.bus.base import BusClosed, BusError, RemoteError
from meeple.bus.local import LocalBus
from meeple.node.ask import BUSY, NoAnswer, ask
from meeple.server.clock import VirtualClock
from meeple.server.config import ClusterConfig

SUBJECT = "t.room.r1.cmd.e1"
TIMING = ClusterConfig(ask_wait=1.0, ask_pause=0.25, ask_patience=2.0)


async def _drive(clock: VirtualClock, task: asyncio.Task[bytes], step: float) -> None:
    """Move the virtual clock on until ``task`` is done."""
    for _ in range(10_000):
        if task.done():
            return
        await clock.advance(step)
    raise AssertionError("the ask never ended")


def _run(
    body: Callable[[LocalBus, VirtualClock], Awaitable[None]],
) -> None:
    async def main() -> None:
        bus = LocalBus()
        try:
            await body(bus, VirtualClock())
        finally:
            await bus.close()

    asyncio.run(main())


def test_an_owner_that_comes_later_is_asked_until_it_answers() -> None:
    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        heard: list[bytes] = []

        async def owner(payload: bytes) -> bytes:
            heard.append(payload)
            return b"done"

        task = asyncio.ensure_future(ask(bus, SUBJECT, b"cmd 7", TIMING, clock=clock))
        await clock.advance(1.0)  # nobody serves the room for a second: a takeover
        assert not task.done()
        await bus.serve(SUBJECT, owner)
        await _drive(clock, task, 0.25)
        assert await task == b"done"
        assert heard == [b"cmd 7"]  # the owner hears it once

    _run(body)


def test_nobody_within_the_patience_is_no_answer() -> None:
    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        task = asyncio.ensure_future(ask(bus, SUBJECT, b"x", TIMING, clock=clock))
        await _drive(clock, task, 0.25)
        with pytest.raises(NoAnswer) as caught:
            await task
        # Asked at 0, 0.25, ... 2.0 s: the patience is 2 s, a pause 0.25 s.
        assert caught.value.asked == 9
        assert clock.now() >= TIMING.ask_patience
        assert isinstance(caught.value, BusError)

    _run(body)


def test_a_refusal_is_the_caller_s_at_once_and_a_closed_bus_too() -> None:
    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        asked = 0

        async def refusing(payload: bytes) -> bytes:
            nonlocal asked
            asked += 1
            raise ValueError("not a seat of this edge")

        await bus.serve(SUBJECT, refusing)
        with pytest.raises(RemoteError, match="not a seat of this edge"):
            await ask(bus, SUBJECT, b"x", TIMING, clock=clock)
        assert asked == 1
        await bus.close()
        with pytest.raises(BusClosed):
            await ask(bus, SUBJECT, b"x", TIMING, clock=clock, forever=True)

    _run(body)


def test_a_timeout_is_asked_again_with_the_same_payload() -> None:
    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        heard: list[bytes] = []
        first = asyncio.Event()

        async def slow_then_quick(payload: bytes) -> bytes:
            heard.append(payload)
            if not first.is_set():
                first.set()
                await asyncio.Event().wait()  # the owner died with the request
            return b"ok"

        await bus.serve(SUBJECT, slow_then_quick)
        await bus.serve(SUBJECT, slow_then_quick)  # the new owner, taken in turn
        quick = ClusterConfig(ask_wait=0.01, ask_pause=0.25, ask_patience=2.0)
        task = asyncio.ensure_future(ask(bus, SUBJECT, b"cmd 3", quick, clock=clock))
        while not task.done():
            await asyncio.sleep(0.05)  # the request's own wait is real time
            await clock.advance(0.25)
        assert await task == b"ok"
        assert heard == [b"cmd 3", b"cmd 3"]

    _run(body)


def test_forever_asks_until_the_asker_stops_caring() -> None:
    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        going = True
        task = asyncio.ensure_future(
            ask(bus, SUBJECT, b"x", TIMING, clock=clock, forever=True, going=lambda: going)
        )
        await clock.advance(60.0)  # far past the patience: still asking
        assert not task.done()
        going = False
        await _drive(clock, task, 0.25)
        with pytest.raises(NoAnswer):
            await task

    _run(body)


# What an owner does with one request: answers, says busy, or fails in passing (a room
# that moved to another node: asked again when the caller says so).
_BEHAVIOURS = st.lists(st.sampled_from(["ok", "busy", "moved"]), max_size=40)


def _model(behaviours: list[str]) -> tuple[bool, int]:
    """What the rule says of an owner that behaves so: whether an answer comes (the
    first "ok"; past the script the owner answers), and after how many requests."""
    now, asked = 0.0, 0
    for what in [*behaviours, "ok"]:
        asked += 1
        if what == "ok":
            return True, asked
        if what == "busy" and now < TIMING.ask_patience:
            continue  # asked again at once
        if now >= TIMING.ask_patience:
            return False, asked
        now += TIMING.ask_pause
    raise AssertionError("unreachable")


@settings(max_examples=80, deadline=None)
@given(behaviours=_BEHAVIOURS, numbered=st.booleans())
def test_the_first_real_answer_within_the_patience_wins(
    behaviours: list[str], numbered: bool
) -> None:
    """Whatever an owner does, ask returns its first answer that is not busy if it came
    within the patience, else gives up, as the rule says (:func:`_model`); each request
    carries the payload it was given, or ``payload(attempt)`` numbered from 0 in order."""

    async def body(bus: LocalBus, clock: VirtualClock) -> None:
        script = list(behaviours)
        heard: list[bytes] = []

        async def owner(payload: bytes) -> bytes:
            heard.append(payload)
            what = script.pop(0) if script else "ok"
            if what == "busy":
                return BUSY
            if what == "moved":
                raise RuntimeError("room r1 moved to another node")
            return b"answer"

        def moved(error: BusError) -> bool:
            return "moved to another node" in str(error)

        await bus.serve(SUBJECT, owner)
        payload: bytes | Callable[[int], bytes] = (lambda n: b"open %d" % n) if numbered else b"cmd"
        asked = asyncio.ensure_future(ask(bus, SUBJECT, payload, TIMING, clock=clock, again=moved))
        await _drive(clock, asked, TIMING.ask_pause)
        answered, requests = _model(behaviours)
        if answered:
            assert await asked == b"answer"
        else:
            with pytest.raises(NoAnswer) as caught:
                await asked
            assert caught.value.asked == requests
        assert len(heard) == requests
        if numbered:
            assert heard == [b"open %d" % n for n in range(requests)]
        else:
            assert set(heard) == {b"cmd"}

    _run(body)

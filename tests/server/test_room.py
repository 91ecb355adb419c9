"""The base Room's feed: a snapshot after every command, built only while watched."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest
from tests.patience import PATIENCE

from meeple.server.feed import Feed, game_topic
from meeple.server.rooms.room import Room, RoomClock, WriteAhead


class _Seat:
    def __init__(self, name: str) -> None:
        self.name = name
        self.protocol = "test"

    def deliver(self, event: object) -> None:
        pass


class _CountingRoom(Room):
    game_name = "counting"

    def __init__(self) -> None:
        super().__init__([_Seat("ann"), _Seat("bob")])
        self.count = 0
        self.views = 0

    def handle(self, seat: object, command: object) -> None:
        if command == "stop":
            self.finish()
        else:
            self.count += 1

    def spectator_view(self) -> dict[str, Any]:
        self.views += 1
        return {"count": self.count}


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_room_publishes_only_while_watched_and_ends_with_a_final_snapshot() -> None:
    """Unwatched: no view built. Watched: a snapshot per command, uid and seats in it,
    and a last one with finished true."""
    feed = Feed()
    room = _CountingRoom()
    room.feed = feed
    changed: list[Room] = []
    room.on_changed.append(changed.append)
    room.start()
    room.submit(None, "tick")
    await _settle()
    assert room.views == 0
    assert feed.last(game_topic(room.uid)) is None
    assert len(changed) >= 1  # the lobby hears of it either way

    sub = feed.subscribe(game_topic(room.uid))
    room.publish()
    first = await sub.get()
    assert first.data == {
        "uid": room.uid,
        "game": "counting",
        "players": ["ann", "bob"],
        "protocols": ["test", "test"],
        "finished": False,
        "view": {"count": 1},
        "clocks": None,
    }
    room.submit(None, "tick")
    await _settle()
    assert (await sub.get()).data["view"] == {"count": 2}
    room.submit(None, "stop")
    await room.wait_finished()
    last = await sub.get()
    assert last.data["finished"] is True
    assert len(room.uid) == 12
    assert room.uid != _CountingRoom().uid


# --- write-ahead -------------------------------------------------------------------------


async def test_write_ahead_holds_deliveries_behind_a_write_until_it_is_taken() -> None:
    """A delivery queued after a write runs only once that write is done; with nothing
    queued it runs at once; a failed write is reported and the queue goes on."""
    ahead = WriteAhead("test")
    heard: list[str] = []
    ahead.deliver(lambda: heard.append("first"))
    assert heard == ["first"]  # nothing to wait for
    gate = asyncio.Event()
    written: list[str] = []

    async def slow() -> None:
        await gate.wait()
        written.append("slow")

    async def refused() -> None:
        raise ValueError("no log")

    errors: list[BaseException] = []
    ahead.write(slow, "slow")
    ahead.deliver(lambda: heard.append("after slow"))
    ahead.write(refused, "refused", errors.append)
    ahead.write(lambda: written.append("inline") and None, "inline")
    ahead.deliver(lambda: heard.append("after all"))
    await _settle()
    assert heard == ["first"]
    assert ahead.waiting == 5
    gate.set()
    await ahead.drain()
    assert written == ["slow", "inline"]
    assert heard == ["first", "after slow", "after all"]
    assert [str(e) for e in errors] == ["no log"]
    assert ahead.waiting == 0


def test_write_ahead_with_an_inline_sink_needs_no_loop() -> None:
    """A sink that writes inline (returns None) leaves nothing to wait for."""
    ahead = WriteAhead("inline")
    done: list[str] = []
    ahead.write(lambda: done.append("write") and None, "w")
    ahead.deliver(lambda: done.append("deliver"))
    assert done == ["write", "deliver"]
    assert ahead.waiting == 0


async def test_a_seat_told_the_end_sends_nothing_more_that_counts() -> None:
    """A seat whose protocol already told its player the game's end (a shutdown's
    farewell) has what it sent before skipped: the stored end is the one it was told."""
    room = _CountingRoom()
    room.start()
    room.submit(room.seats[0], "tick")
    await _settle()
    room.seats[0].told_the_end = True  # type: ignore[attr-defined]
    room.submit(room.seats[0], "tick")
    room.submit(room.seats[1], "tick")
    await _settle()
    assert room.count == 2
    room.submit(None, "stop")
    await asyncio.wait_for(room.wait_finished(), PATIENCE)


class _Due:
    """A timer of :class:`_HandClock`: the test says when it is due."""

    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _HandClock:
    """A clock whose timers fall due when the test says (``due``), not by time."""

    def __init__(self) -> None:
        self.timers: list[_Due] = []

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - unused
        raise NotImplementedError

    def call_later(self, seconds: float, callback: Callable[[], object]) -> _Due:
        self.timers.append(_Due(callback))
        return self.timers[-1]

    def due(self, index: int) -> None:
        timer = self.timers[index]
        assert not timer.cancelled
        timer.callback()


async def test_a_room_clock_s_timers_run_as_the_room_s_commands() -> None:
    """A RoomClock's timer that is due runs in the room's task as a command of its own
    (``on_committed`` hears of it, viewers get a snapshot); one cancelled once due, while
    it waits in the inbox, does nothing."""
    clock = _HandClock()
    room = _CountingRoom()
    room.feed = Feed()
    viewer = room.feed.subscribe(game_topic(room.uid))
    steps: list[object] = []
    room.on_committed.append(lambda _seat, command: steps.append(command))
    timers = RoomClock(room, clock)
    inside: list[bool] = []

    def tick() -> None:
        inside.append(room.handling is not None)  # in a step of the room's task
        room.count += 1

    room.start()
    await _settle()
    timers.call_later(1.0, tick)
    late = timers.call_later(2.0, tick)
    timers.call_later(3.0, tick).cancel()
    assert clock.timers[2].cancelled  # cancelled before it is due: the clock's own timer
    clock.due(0)
    assert room.count == 0  # queued, not run: the room's task runs it
    await _settle()
    assert inside == [True]
    last = None
    while (item := viewer.get_nowait()) is not None:
        last = item
    assert last is not None
    assert last.data["view"] == {"count": 1}
    clock.due(1)  # due: queued in the inbox, then cancelled before its turn
    late.cancel()
    await _settle()
    assert room.count == 1
    assert len([s for s in steps if s is not None]) == 2  # each due timer was a step
    room.submit(None, "stop")
    await asyncio.wait_for(room.wait_finished(), PATIENCE)


def test_a_failing_game_over_watcher_neither_silences_the_others_nor_keeps_the_room(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Room.report_over: each watcher hears the end even when one before it raises; the
    failure is logged and the room is finished (the rule the three game rooms share)."""
    room = _CountingRoom()
    heard: list[Room] = []

    def broken(_: Room) -> None:
        raise RuntimeError("store down")

    with caplog.at_level(logging.ERROR):
        room.report_over([broken, heard.append])
    assert heard == [room]
    assert room.finished
    assert "recording the game failed" in caplog.text

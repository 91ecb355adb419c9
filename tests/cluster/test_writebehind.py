"""The one-process node's write-behind (meeple.node.writebehind, issue 32.2): while its
backplane file fails, the room logs' writes are held in memory, in order, their writers
go on, the log reads them back, and the file takes them all, in order, once it works
again; past the bound the rooms whose updates are held are named; a close names what it
drops. The file's failure is the transaction's (as a full disk's OperationalError)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.bus.subjects import Namespace
from meeple.cluster.local import LocalBackplane
from meeple.cluster.log import JetStreamLog
from meeple.node.writebehind import WriteBehind
from meeple.server.clock import VirtualClock
from meeple.server.store.database import Store
from meeple.server.store.journal import Health

NS = Namespace("meeple")


@dataclass
class Plane:
    plane: LocalBackplane
    behind: WriteBehind
    log: JetStreamLog
    clock: VirtualClock
    file: Path
    failing: list[bool]


def _failing(local: LocalBackplane, monkeypatch: pytest.MonkeyPatch, error: str) -> list[bool]:
    """A switch: while its one item is True, the file refuses every transaction with
    SQLite's ``error`` (as a full or failing disk does)."""
    failing = [False]
    real = local.transaction

    def transaction(
        statements: list[tuple[str, tuple[object, ...]]], counters: Mapping[str, int]
    ) -> None:
        if failing[0]:
            raise sqlite3.OperationalError(error)
        real(statements, counters)

    monkeypatch.setattr(local, "transaction", transaction)
    return failing


@pytest.fixture
async def plane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Plane]:
    clock = VirtualClock(1000.0)
    file = tmp_path / "plane.sqlite3"
    local = await LocalBackplane.open(file, NS, clock=clock)
    failing = _failing(local, monkeypatch, "database or disk is full")
    behind = WriteBehind(local, NS, max_backlog=4)
    store = Store(tmp_path / "records.sqlite3")
    try:
        yield Plane(local, behind, JetStreamLog(local, NS, store), clock, file, failing)
    finally:
        behind.close()
        await local.close()
        store.close()


def _in_file(file: Path) -> list[str]:
    """The kinds of the room messages the file holds, in order."""
    db = sqlite3.connect(file)
    try:
        rows = db.execute("SELECT headers FROM messages ORDER BY seq").fetchall()
    finally:
        db.close()
    return [json.loads(h)["Meeple-Kind"] for (h,) in rows]


async def test_a_failing_file_holds_the_writes_and_takes_them_in_order_when_back(
    plane: Plane,
) -> None:
    plane.failing[0] = True
    await plane.log.open_log("r1", "counting", {"seed": 1})
    for seq in (1, 2):
        await plane.log.append_log("r1", seq, {"action": {"n": seq}})  # told: done
    assert plane.behind.health is Health.RETRYING
    assert plane.behind.backlog == 3
    trouble = plane.behind.trouble()
    assert trouble is not None
    assert "not taking writes" in trouble
    assert _in_file(plane.file) == []
    log = await plane.log.action_log("r1")  # the reads see what is held
    assert log is not None
    assert [e.entry["action"] for e in log.entries] == [{"n": 1}, {"n": 2}]
    assert await plane.log.open_logs() == ["r1"]
    await plane.clock.advance(1.0)  # retried: still failing
    assert plane.behind.held
    plane.failing[0] = False
    await plane.clock.advance(3.0)
    assert not plane.behind.held
    assert plane.behind.health is Health.OK
    assert plane.behind.trouble() is None
    assert _in_file(plane.file) == ["genesis", "entry", "entry"]
    await plane.log.append_log("r1", 3, {"action": {"n": 3}})  # straight to the file
    assert _in_file(plane.file) == ["genesis", "entry", "entry", "entry"]


async def test_past_the_bound_the_rooms_held_are_named(plane: Plane) -> None:
    told: list[set[str]] = []
    plane.behind.on_overflow.append(told.append)
    plane.failing[0] = True
    await plane.log.open_log("r1", "counting", {"seed": 1})
    await plane.log.open_log("r2", "counting", {"seed": 2})
    for seq in (1, 2):
        await plane.log.append_log("r1", seq, {"action": {"n": seq}})
    assert told == []
    await plane.log.append_log("r2", 1, {"action": {"n": 1}})  # the fifth: past 4
    assert plane.behind.health is Health.OVERFLOWING
    assert told == [{"r1", "r2"}]
    trouble = plane.behind.trouble()
    assert trouble is not None
    assert "stopped" in trouble


async def test_a_close_while_failing_names_what_it_drops(plane: Plane) -> None:
    plane.failing[0] = True
    await plane.log.open_log("r1", "counting", {"seed": 1})
    await plane.log.append_logs("r1", 1, [{"action": {"n": 1}}, {"action": {"n": 2}}])
    await plane.log.append_log("r1", 3, {"action": {"n": 3}})
    dropped = plane.behind.close()
    assert dropped == ["open r1", "append r1#1-2", "append r1#3"]
    assert _in_file(plane.file) == []


async def test_a_close_once_the_file_works_again_drops_nothing(plane: Plane) -> None:
    plane.failing[0] = True
    await plane.log.open_log("r1", "counting", {"seed": 1})
    plane.failing[0] = False
    assert plane.behind.close() == []  # one last try took it
    assert _in_file(plane.file) == ["genesis"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(min_value=1, max_value=3)), min_size=1, max_size=12
    )
)
async def test_any_failures_keep_every_entry_once_and_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[bool, int]]
) -> None:
    """Whatever turns fail, and however many entries each writes, the file ends with
    every entry of the log once, in order, once it works again."""
    clock = VirtualClock(1000.0)
    file = tmp_path / f"plane-{len(list(tmp_path.iterdir()))}.sqlite3"
    local = await LocalBackplane.open(file, NS, clock=clock)
    failing = _failing(local, monkeypatch, "disk I/O error")
    behind = WriteBehind(local, NS, max_backlog=10_000)
    store = Store(":memory:")
    log = JetStreamLog(local, NS, store)
    try:
        await log.open_log("r1", "counting", {"seed": 1})
        seq = 1
        for fails, count in steps:
            failing[0] = fails
            entries = [{"action": {"n": seq + i}} for i in range(count)]
            await log.append_logs("r1", seq, entries)
            seq += count
            await clock.advance(0.5)
        failing[0] = False
        await clock.advance(5.0)
        assert not behind.held
        written = await log.action_log("r1")
        assert written is not None
        assert [e.seq for e in written.entries] == list(range(1, seq))
        assert [e.entry["action"]["n"] for e in written.entries] == list(range(1, seq))
    finally:
        behind.close()
        await local.close()
        store.close()

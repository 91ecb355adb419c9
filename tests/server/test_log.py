"""Every room is a log: the store's log tables, the journal's ordered and retried writes,
and the room's write-ahead (nobody hears of an action before its entry is written).

Each test runs on each store (the ``store`` fixture of tests/server/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.patience import PATIENCE, eventually

from meeple.server.rooms.room import Room
from meeple.server.store.database import (
    BatchRefused,
    DatabaseClaim,
    DatabaseInUse,
    LogConflict,
    Store,
    open_store,
)
from meeple.server.store.journal import Health, Journal, Written, _dropped_lines

GENESIS = {"version": 1, "game": "counting", "record": {"players": ["ann", "bob"]}}


def _game(uid: str, **extra: Any) -> dict[str, Any]:
    return {
        "game": "counting",
        "variant": "standard",
        "protocols": ["test", "test"],
        "players": ["ann", "bob"],
        "started_at": 1.0,
        "end_reason": "done",
        "result": {},
        "record": "",
        "data": {"uid": uid, **extra},
    }


# --- the store ---------------------------------------------------------------------------


def test_a_log_reads_back_in_order_and_is_open_until_finished(store: Store) -> None:
    """Genesis and entries come back as written; the log is listed open, then closed on
    the stored game."""
    store.open_log("r1", "counting", GENESIS)
    store.append_log("r1", 1, {"action": {"n": 1}, "clocks": None}, at=10.0)
    store.append_log("r1", 2, {"action": {"n": 2}, "clocks": [1.5, 2.0]}, at=11.0)
    assert store.open_logs() == ["r1"]
    log = store.action_log("r1")
    assert log is not None
    assert log.genesis == GENESIS
    assert [(e.seq, e.at, e.entry["action"]) for e in log.entries] == [
        (1, 10.0, {"n": 1}),
        (2, 11.0, {"n": 2}),
    ]
    assert log.entries[1].entry["clocks"] == [1.5, 2.0]
    assert not log.finished
    game_id = store.finish_log("r1", **_game("r1"))
    log = store.action_log("r1")
    assert log is not None
    assert log.game_id == game_id
    assert log.end_reason == "done"
    assert store.open_logs() == []
    assert store.game(game_id) is not None


def test_appends_are_fenced_and_a_retry_is_a_no_op(store: Store) -> None:
    """An append must follow the last entry; the same entry again is a retry; another
    entry at a written sequence, a gap, or an append to a finished log is refused."""
    store.open_log("r1", "counting", GENESIS)
    store.open_log("r1", "counting", GENESIS)  # a retried open
    with pytest.raises(LogConflict):
        store.open_log("r1", "counting", {**GENESIS, "game": "other"})
    store.append_log("r1", 1, {"action": 1})
    store.append_log("r1", 1, {"action": 1})  # a retried append
    with pytest.raises(LogConflict):
        store.append_log("r1", 1, {"action": "not the same"})
    with pytest.raises(LogConflict):
        store.append_log("r1", 3, {"action": 3})
    with pytest.raises(LogConflict):
        store.append_log("nobody", 1, {"action": 1})
    store.finish_log("r1", **_game("r1"))
    with pytest.raises(LogConflict):
        store.append_log("r1", 2, {"action": 2})
    log = store.action_log("r1")
    assert log is not None
    assert [e.entry for e in log.entries] == [{"action": 1}]


def test_several_entries_are_appended_together_or_not_at_all(store: Store) -> None:
    """``append_logs`` writes a run of entries in one transaction, fenced on the first:
    the same run again is a retry, a run that overlaps other entries or leaves a gap is
    refused whole, and nothing of a refused run is written."""
    store.open_log("r1", "counting", GENESIS)
    store.append_logs("r1", 1, [{"action": 1}, {"action": 2}])
    store.append_logs("r1", 1, [{"action": 1}, {"action": 2}])  # a retried run
    store.append_logs("r1", 2, [{"action": 2}])  # a retry of its last entry
    with pytest.raises(LogConflict):
        store.append_logs("r1", 2, [{"action": 2}, {"action": 3}])  # half old, half new
    with pytest.raises(LogConflict):
        store.append_logs("r1", 1, [{"action": 1}, {"action": "not the same"}])
    with pytest.raises(LogConflict):
        store.append_logs("r1", 4, [{"action": 4}, {"action": 5}])  # a gap
    store.append_logs("r1", 3, [{"action": 3}, {"action": 4}, {"action": 5}])
    log = store.action_log("r1")
    assert log is not None
    assert [(e.seq, e.entry) for e in log.entries] == [(n, {"action": n}) for n in range(1, 6)]


def test_a_batch_of_appends_is_fenced_for_every_log(store: Store) -> None:
    """``append_batch`` (the journal's group commit) writes many logs' entries at once,
    each log fenced as a single append: two runs of one log that follow each other are
    one fence; runs of one log that do not follow each other, or a fence that does not
    hold (here among 100 logs, past the first statement's 64), refuse the batch."""
    uids = [f"r{n:03d}" for n in range(100)]
    for uid in uids:
        store.open_log(uid, "counting", GENESIS)
    with store.batch():
        store.append_batch(
            [(uid, 1, [{"action": 1}], 1.0) for uid in uids]
            + [("r000", 2, [{"action": 2}, {"action": 3}], 2.0), ("r000", 4, [{"action": 4}], 3.0)]
        )
    log = store.action_log("r000")
    assert log is not None
    assert [(e.seq, e.at, e.entry) for e in log.entries] == [
        (1, 1.0, {"action": 1}),
        (2, 2.0, {"action": 2}),
        (3, 2.0, {"action": 3}),
        (4, 3.0, {"action": 4}),
    ]
    assert all(len(store.action_log(uid).entries) == 1 for uid in uids[1:])  # type: ignore[union-attr]
    with pytest.raises(BatchRefused), store.batch():
        store.append_batch([("r001", 2, [{"action": 2}], 4.0), ("r001", 4, [{"action": 4}], 4.0)])
    bad = [(uid, 2, [{"action": 2}], 5.0) for uid in uids[1:]]
    bad[70] = (uids[71], 3, [{"action": 3}], 5.0)  # a gap: r071 is at 1
    with pytest.raises(BatchRefused), store.batch():
        store.append_batch(bad)


def test_a_refused_batch_of_appends_writes_nothing_on_sqlite(tmp_path: Path) -> None:
    """On SQLite the group commit is one transaction: a batch refused by one fence leaves
    every log of it as it was."""
    store = Store(tmp_path / "db.sqlite3")
    try:
        for uid in ("a", "b"):
            store.open_log(uid, "counting", GENESIS)
        with pytest.raises(BatchRefused), store.batch():
            store.append_batch([("a", 1, [{"action": 1}], 1.0), ("b", 2, [{"action": 2}], 1.0)])
        assert [len(store.action_log(uid).entries) for uid in ("a", "b")] == [0, 0]  # type: ignore[union-attr]
    finally:
        store.close()


def test_an_entry_is_stored_as_sorted_compact_json(store: Store) -> None:
    """The log's text is ``json.dumps(entry, sort_keys=True, separators=(",", ":"))``,
    written by the store's own encoder: keys sorted at every level, no spaces, non-ASCII
    escaped, floats as Python writes them."""
    entry = {"z": [1.5, 0.1, 1e-07, -0.0, 10**20], "a": {"é": "ü", "b": None, "a": True}}
    store.open_log("r1", "counting", GENESIS)
    store.append_log("r1", 1, entry, at=1.0)
    (text,) = store._db.read("SELECT entry FROM room_log_entries WHERE uid = 'r1'")[0]
    assert text == json.dumps(entry, sort_keys=True, separators=(",", ":"))


def test_finishing_twice_stores_the_game_once(store: Store) -> None:
    """A retried finish answers the game stored the first time; nothing is stored twice."""
    store.open_log("r1", "counting", GENESIS)
    first = store.finish_log("r1", **_game("r1"))
    assert store.finish_log("r1", **_game("r1")) == first
    assert [g.id for g in store.games(game="counting")] == [first]


def test_logs_survive_a_reopen(store_url: str) -> None:
    """A log written by one process is there for the next one on the same database."""
    a = open_store(store_url)
    a.open_log("r1", "counting", GENESIS)
    a.append_log("r1", 1, {"action": 1})
    a.close()
    b = open_store(store_url)
    assert b.open_logs("counting") == ["r1"]
    assert b.open_logs("other") == []
    log = b.action_log("r1")
    assert log is not None
    assert [e.entry for e in log.entries] == [{"action": 1}]
    b.close()


# --- the journal -------------------------------------------------------------------------


class _Flaky:
    """A store whose appends fail (as a full disk does) until ``heal()``; a gate holds them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.failing = False
        self.gate = threading.Event()
        self.gate.set()

    def open_log(self, *a: Any, **kw: Any) -> None:
        self.store.open_log(*a, **kw)

    def append_log(self, *a: Any, **kw: Any) -> None:
        self.gate.wait(10)
        if self.failing:
            raise sqlite3.OperationalError("database or disk is full")
        self.store.append_log(*a, **kw)

    def finish_log(self, uid: str, **game: Any) -> int:
        return self.store.finish_log(uid, **game)


async def test_journal_writes_in_order_and_reports_durable(store: Store) -> None:
    """Writes go through in the order asked, and each caller hears they are durable."""
    journal = Journal(store)
    try:
        assert await journal.open("r1", "counting", GENESIS) is Written.DURABLE
        results = await asyncio.gather(
            *(journal.append("r1", n, {"action": n}, float(n)) for n in range(1, 21))
        )
        assert set(results) == {Written.DURABLE}
        log = store.action_log("r1")
        assert log is not None
        assert [e.entry["action"] for e in log.entries] == list(range(1, 21))
    finally:
        journal.close()


async def test_journal_keeps_failed_writes_retries_and_reports_each_change(store: Store) -> None:
    """A failing store: the caller is let go (deferred), later writes queue behind in
    order, health says retrying once; healed, everything is written and health is OK."""
    flaky = _Flaky(store)
    journal = Journal(flaky, sleep=lambda s: threading.Event().wait(0.005))  # type: ignore[arg-type]
    seen: list[Health] = []
    journal.on_health.append(seen.append)
    try:
        await journal.open("r1", "counting", GENESIS)
        flaky.failing = True
        assert await journal.append("r1", 1, {"action": 1}, 1.0) is Written.DEFERRED
        await eventually(lambda: journal.health is Health.RETRYING, "the journal retrying")
        assert journal.health is Health.RETRYING
        assert await journal.append("r1", 2, {"action": 2}, 2.0) is Written.DEFERRED
        assert journal.backlog == 2
        flaky.failing = False
        assert await journal.drain(PATIENCE)
        await eventually(lambda: journal.health is Health.OK, "the journal healthy again")
        assert seen == [Health.RETRYING, Health.OK]
        log = store.action_log("r1")
        assert log is not None
        assert [e.entry["action"] for e in log.entries] == [1, 2]
    finally:
        journal.close()


async def test_journal_overflow_is_told(store: Store) -> None:
    """More writes kept than the backlog allows: health says overflowing and the overflow
    callbacks run (the lobby stops the games that cannot be kept)."""
    flaky = _Flaky(store)
    journal = Journal(flaky, max_backlog=3, sleep=lambda s: threading.Event().wait(0.005))  # type: ignore[arg-type]
    overflows: list[int] = []
    journal.on_overflow.append(lambda: overflows.append(journal.backlog))
    try:
        await journal.open("r1", "counting", GENESIS)
        flaky.failing = True
        await journal.append("r1", 1, {"action": 1}, 1.0)
        await eventually(lambda: journal.health is Health.RETRYING, "the journal retrying")
        for n in range(2, 6):
            await journal.append("r1", n, {"action": n}, float(n))
        assert journal.health is Health.OVERFLOWING
        assert overflows
        flaky.failing = False
        assert await journal.drain(PATIENCE)
        log = store.action_log("r1")
        assert log is not None
        assert [e.entry["action"] for e in log.entries] == [1, 2, 3, 4, 5]
    finally:
        journal.close()


async def test_journal_passes_a_refused_append_to_its_caller(store: Store) -> None:
    """A fenced append that does not fit is not retried: the caller gets LogConflict."""
    journal = Journal(store)
    try:
        await journal.open("r1", "counting", GENESIS)
        with pytest.raises(LogConflict):
            await journal.append("r1", 5, {"action": 5}, 1.0)
        assert journal.health is Health.OK
    finally:
        journal.close()


async def test_a_refused_append_in_a_group_commit_leaves_the_others_durable(
    store: Store,
) -> None:
    """Appends of many logs asked for in one turn of the loop go to the store together;
    one of them that does not fit its log gets LogConflict, every other is durable and
    written, in order."""
    journal = Journal(store)
    try:
        uids = [f"r{n}" for n in range(20)]
        await asyncio.gather(*(journal.open(uid, "counting", GENESIS) for uid in [*uids, "x"]))
        asked = [journal.append(uid, 1, {"action": 1}, 1.0) for uid in uids]
        asked.insert(7, journal.append("x", 2, {"action": 2}, 1.0))  # x is at 0
        asked += [journal.append(uid, 2, {"action": 2}, 2.0) for uid in uids]
        answers = await asyncio.gather(*asked, return_exceptions=True)
        assert isinstance(answers[7], LogConflict)
        assert answers[:7] + answers[8:] == [Written.DURABLE] * 40
        for uid in uids:
            log = store.action_log(uid)
            assert log is not None
            assert [e.entry["action"] for e in log.entries] == [1, 2]
        assert store.action_log("x").entries == ()  # type: ignore[union-attr]
        assert journal.health is Health.OK
    finally:
        journal.close()


# --- the room: write-ahead -------------------------------------------------------------------


class _Seat:
    def __init__(self, name: str) -> None:
        self.name = name
        self.protocol = "test"
        self.heard: list[object] = []

    def deliver(self, event: object) -> None:
        self.heard.append(event)


class _CountingRoom(Room):
    """Each command is one action of the game's record; the game ends at ``stop``."""

    game_name = "counting"

    def __init__(self, seats: list[_Seat]) -> None:
        super().__init__(list(seats))
        self.actions: list[dict[str, Any]] = []

    def record_header(self) -> dict[str, Any]:
        return {"players": [s.name for s in self.seats], "setup": {}}

    def log_actions(self, start: int = 0) -> list[dict[str, Any]]:
        return self.actions[start:]

    def clocks(self) -> list[float]:
        return [float(len(self.actions)), 0.0]

    def handle(self, seat: object, command: object) -> None:
        if command == "refused":
            self.broadcast("refused")  # the engine said no: nothing to log
            return
        self.actions.append({"type": "count", "n": len(self.actions) + 1})
        if command == "stop":
            self.conclude(_game(self.uid))
            self.finish()
        self.broadcast(f"counted {len(self.actions)}")


async def _until(predicate: Any) -> None:
    await eventually(predicate, every=0.01)


async def test_nobody_hears_of_an_action_before_its_entry_is_written(store: Store) -> None:
    """With the store's appends held, the seats hear nothing of the command; released,
    they hear it, and the entry is in the log with the clocks."""
    flaky = _Flaky(store)
    journal = Journal(flaky)  # type: ignore[arg-type]
    ann, bob = _Seat("ann"), _Seat("bob")
    room = _CountingRoom([ann, bob])
    room.journal = journal
    try:
        room.start()
        await _until(lambda: store.action_log(room.uid) is not None)
        flaky.gate.clear()
        room.submit(ann, "count")
        await asyncio.sleep(0.1)
        assert ann.heard == bob.heard == []
        log = store.action_log(room.uid)
        assert log is not None
        assert log.entries == ()
        flaky.gate.set()
        await _until(lambda: ann.heard == ["counted 1"])
        assert bob.heard == ["counted 1"]
        log = store.action_log(room.uid)
        assert log is not None
        assert [e.entry for e in log.entries] == [
            {"action": {"type": "count", "n": 1}, "clocks": [1.0, 0.0]}
        ]
    finally:
        flaky.gate.set()
        journal.close()


async def test_a_refused_command_is_not_logged_and_the_end_is_stored_from_the_log(
    store: Store,
) -> None:
    """A refusal is told but leaves the log as it was; the finished game is stored in
    the log's closing transaction, its actions taken from the log."""
    journal = Journal(store)
    ann, bob = _Seat("ann"), _Seat("bob")
    room = _CountingRoom([ann, bob])
    room.journal = journal
    try:
        room.start()
        room.submit(ann, "count")
        room.submit(bob, "refused")
        room.submit(ann, "stop")
        await asyncio.wait_for(room.wait_finished(), PATIENCE)
        assert ann.heard == ["counted 1", "refused", "counted 2"]
        log = store.action_log(room.uid)
        assert log is not None
        assert [e.entry["action"]["n"] for e in log.entries] == [1, 2]
        assert log.genesis["seats"] == [
            {"name": "ann", "protocol": "test", "rejoin": None, "bot": None},
            {"name": "bob", "protocol": "test", "rejoin": None, "bot": None},
        ]
        assert log.finished
        assert log.game_id is not None
        stored = store.game(log.game_id)
        assert stored is not None
        assert stored.data is not None
        assert stored.data["actions"] == [e.entry["action"] for e in log.entries]
    finally:
        journal.close()


def test_one_meeple_serve_per_database(store_url: str) -> None:
    """The database claim (``DatabaseClaim``): a second claim on the same database is
    refused while the first is held, on SQLite (a flock) and PostgreSQL (an advisory
    lock); once the first lets go, it can be taken."""
    first = DatabaseClaim(store_url)
    try:
        with pytest.raises(DatabaseInUse, match="another meeple serve"):
            DatabaseClaim(store_url)
    finally:
        first.close()
    again = DatabaseClaim(store_url)
    again.close()


async def test_a_command_whose_entry_the_log_refuses_is_heard_by_nobody(store: Store) -> None:
    """Another writer took the room's log (its next entry is someone else's): the room's
    append is refused, the room stops, and nobody hears of the command it had run
    (write-ahead: an action nobody logged is not told)."""
    journal = Journal(store)
    ann, bob = _Seat("ann"), _Seat("bob")
    room = _CountingRoom([ann, bob])
    room.journal = journal
    try:
        room.start()
        room.submit(ann, "count")
        await _until(lambda: ann.heard == ["counted 1"])
        store.append_log(room.uid, 2, {"action": "another writer's"})
        room.submit(bob, "count")
        await asyncio.wait_for(room.wait_finished(), PATIENCE)
        assert ann.heard == bob.heard == ["counted 1"]
        log = store.action_log(room.uid)
        assert log is not None
        assert [e.entry["action"] for e in log.entries][1:] == ["another writer's"]
    finally:
        journal.close()


@given(
    st.lists(
        st.one_of(
            st.builds(
                lambda u, a, b: f"append g-{u}#{a}" + (f"-{a + b}" if b else ""),
                st.integers(0, 3),
                st.integers(1, 50),
                st.integers(0, 3),
            ),
            st.builds(lambda u: f"finish g-{u}", st.integers(0, 3)),
            st.builds(lambda u: f"open g-{u}", st.integers(0, 3)),
            st.text(alphabet="abcxyz-_", min_size=1, max_size=20),
        ),
        max_size=40,
    )
)
def test_dropped_writes_are_named_one_line_per_game(names: list[str]) -> None:
    """Issue 30.7: whatever a close drops, the log names every write: one line per game
    (``g-1: open, append #1-3, finish``), in order, each write once."""
    lines = _dropped_lines(names)
    games = {n.partition(" ")[2].partition("#")[0] for n in names if " " in n}
    games.discard("")
    assert len(lines) <= len(names)
    for uid in games:
        [line] = [x for x in lines if x.startswith(f"{uid}: ")]
        mine = [n for n in names if n.partition(" ")[2].partition("#")[0] == uid]
        assert line.count(",") == len(mine) - 1

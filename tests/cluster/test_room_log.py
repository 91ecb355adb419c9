"""One room log, three homes: the durable-rooms log's operations and guarantees hold the
same on SQLite, PostgreSQL and JetStream (the ``room_log`` fixture), and JetStream's
owners fence each other out (claim)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.aio.client import Client
from tests.cluster.conftest import records_of

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.log import JetStreamLog, RoomLog
from meeple.server.store.database import LogConflict, Store
from meeple.server.store.journal import Journal, Written

GENESIS = {"version": 1, "game": "counting", "record": {"players": ["ann", "bob"]}}


def _game(uid: str) -> dict[str, Any]:
    return {
        "game": "counting",
        "variant": "standard",
        "protocols": ["test", "test"],
        "players": ["ann", "bob"],
        "started_at": 1.0,
        "end_reason": "done",
        "result": {},
        "record": "",
        "data": {"uid": uid},
    }


def test_a_log_reads_back_in_order_and_is_open_until_finished(room_log: RoomLog) -> None:
    """Genesis and entries come back as written; listed open, then closed on the game."""
    assert room_log.action_log("r1") is None
    room_log.open_log("r1", "counting", GENESIS)
    room_log.append_log("r1", 1, {"action": {"n": 1}, "clocks": None}, at=10.0)
    room_log.append_log("r1", 2, {"action": {"n": 2}, "clocks": [1.5, 2.0]}, at=11.0)
    assert room_log.open_logs() == ["r1"]
    assert room_log.open_logs("counting") == ["r1"]
    assert room_log.open_logs("other") == []
    log = room_log.action_log("r1")
    assert log is not None
    assert log.game == "counting"
    assert log.genesis == GENESIS
    assert [(e.seq, e.at, e.entry["action"]) for e in log.entries] == [
        (1, 10.0, {"n": 1}),
        (2, 11.0, {"n": 2}),
    ]
    assert not log.finished
    game_id = room_log.finish_log("r1", **_game("r1"))
    log = room_log.action_log("r1")
    assert log is not None
    assert (log.game_id, log.end_reason) == (game_id, "done")
    assert room_log.open_logs() == []
    stored = records_of(room_log).game(game_id)
    assert stored is not None
    assert stored.data == {"uid": "r1"}


def test_appends_are_fenced_and_a_retry_is_a_no_op(room_log: RoomLog) -> None:
    """An append must follow the last entry; the same entry again is a retry; another
    entry at a written sequence, a gap, or an append to a finished log is refused."""
    room_log.open_log("r1", "counting", GENESIS)
    room_log.open_log("r1", "counting", GENESIS)  # a retried open
    with pytest.raises(LogConflict):
        room_log.open_log("r1", "counting", {**GENESIS, "game": "other"})
    room_log.append_log("r1", 1, {"action": 1})
    room_log.append_log("r1", 1, {"action": 1})  # a retried append
    with pytest.raises(LogConflict):
        room_log.append_log("r1", 1, {"action": "not the same"})
    with pytest.raises(LogConflict):
        room_log.append_log("r1", 3, {"action": 3})
    with pytest.raises(LogConflict):
        room_log.append_log("nobody", 1, {"action": 1})
    room_log.append_log("r1", 2, {"action": 2})
    room_log.append_log("r1", 1, {"action": 1})  # a late retry of an earlier entry
    room_log.finish_log("r1", **_game("r1"))
    with pytest.raises(LogConflict):
        room_log.append_log("r1", 3, {"action": 3})
    log = room_log.action_log("r1")
    assert log is not None
    assert [e.entry for e in log.entries] == [{"action": 1}, {"action": 2}]


def test_a_run_of_entries_is_written_whole_or_not_at_all(room_log: RoomLog) -> None:
    """``append_logs``: entries that belong together are one write, fenced on the first;
    the same run again is a retry; a run that overlaps other entries or leaves a gap is
    refused whole; single entries and runs read back as one sequence."""
    room_log.open_log("r1", "counting", GENESIS)
    room_log.append_logs("r1", 1, [{"action": 1}, {"action": 2}], at=5.0)
    room_log.append_logs("r1", 1, [{"action": 1}, {"action": 2}], at=5.0)  # a retry
    with pytest.raises(LogConflict):
        room_log.append_logs("r1", 2, [{"action": 2}, {"action": 3}])
    with pytest.raises(LogConflict):
        room_log.append_logs("r1", 4, [{"action": 4}, {"action": 5}])
    room_log.append_log("r1", 3, {"action": 3}, at=6.0)
    room_log.append_logs("r1", 4, [{"action": 4}, {"action": 5}], at=7.0)
    log = room_log.action_log("r1")
    assert log is not None
    assert [(e.seq, e.at, e.entry) for e in log.entries] == [
        (1, 5.0, {"action": 1}),
        (2, 5.0, {"action": 2}),
        (3, 6.0, {"action": 3}),
        (4, 7.0, {"action": 4}),
        (5, 7.0, {"action": 5}),
    ]
    with pytest.raises(LogConflict):
        room_log.append_log("r1", 5, {"action": "not the same"})


def test_finishing_twice_stores_the_game_once(room_log: RoomLog) -> None:
    """A retried finish answers the game stored the first time; nothing is stored twice."""
    room_log.open_log("r1", "counting", GENESIS)
    first = room_log.finish_log("r1", **_game("r1"))
    assert room_log.finish_log("r1", **_game("r1")) == first
    assert [g.id for g in records_of(room_log).games(game="counting")] == [first]


def test_open_logs_lists_the_oldest_first(room_log: RoomLog) -> None:
    """Several rooms: the open ones, in the order they were opened."""
    for uid in ("b2", "a1", "c3"):
        room_log.open_log(uid, "counting", {**GENESIS, "uid": uid})
    room_log.finish_log("a1", **_game("a1"))
    assert room_log.open_logs() == ["b2", "c3"]


# --- JetStream only: two writers of one room ------------------------------------------------


async def test_a_stale_owner_is_fenced_out_by_a_claim(
    node: Client, nats_ns: Namespace, records: Store
) -> None:
    """Owner A writes; B claims the room (a later lease) and replays what A wrote; every
    later append or finish of A is refused, even at the right sequence, and A's claim
    under its old lease too; B goes on."""
    a = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    b = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await a.open_log("r1", "counting", GENESIS)
    await a.claim("r1", "a", epoch=1)
    await a.append_log("r1", 1, {"action": 1})
    replay = await b.claim("r1", "b", epoch=2)
    assert [e.entry for e in replay.entries] == [{"action": 1}]
    with pytest.raises(LogConflict):
        await a.append_log("r1", 2, {"action": "from the stale owner"})
    with pytest.raises(LogConflict):  # refused for good, not re-read and let through
        await a.append_log("r1", 2, {"action": "again"})
    with pytest.raises(LogConflict):
        await a.finish_log("r1", **_game("r1"))
    with pytest.raises(LogConflict):
        await a.claim("r1", "a", epoch=1)
    await b.append_log("r1", 2, {"action": 2})
    await b.claim("r1", "b", epoch=2)  # a retried claim changes nothing
    await b.append_log("r1", 3, {"action": 3})
    log = await b.action_log("r1")
    assert log is not None
    assert [e.seq for e in log.entries] == [1, 2, 3]
    assert [e.entry["action"] for e in log.entries] == [1, 2, 3]


async def test_racing_writers_one_wins_each_sequence(
    node: Client, nats_ns: Namespace, records: Store
) -> None:
    """Two writers append the same sequences at the same time, each its own entries: each
    sequence is written once, by one of them; the other is told."""
    w = [JetStreamLog(JetStreamBackplane(node), nats_ns, records) for _ in range(2)]
    await w[0].open_log("r1", "counting", GENESIS)
    for seq in range(1, 11):
        results = await asyncio.gather(
            *(x.append_log("r1", seq, {"by": i, "seq": seq}) for i, x in enumerate(w)),
            return_exceptions=True,
        )
        assert sum(r is None for r in results) == 1, results
        assert all(r is None or isinstance(r, LogConflict) for r in results)
    log = await w[0].action_log("r1")
    assert log is not None
    assert [e.seq for e in log.entries] == list(range(1, 11))


async def test_a_retry_of_a_lost_acknowledgement_is_applied_once(
    node: Client, nats_ns: Namespace, records: Store
) -> None:
    """An append whose acknowledgement was lost is sent again by a writer that does not
    know it landed (a fresh writer, as after a reconnect): it is recognised by its
    message id, within JetStream's duplicate window and through the fence."""
    a = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await a.open_log("r1", "counting", GENESIS)
    await a.append_log("r1", 1, {"action": 1})
    again = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await again.append_log("r1", 1, {"action": 1})
    await again.append_log("r1", 2, {"action": 2})
    info = await node.jetstream().stream_info(nats_ns.log_stream)
    assert info.state.messages == 3


async def test_an_owner_whose_acknowledgement_was_lost_goes_on(
    node: Client, nats_ns: Namespace, records: Store
) -> None:
    """The owner's append lands but its acknowledgement never arrives (the journal then
    retries it): the retry is recognised, and the owner's next append is accepted, not
    taken for another writer's."""
    a = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await a.open_log("r1", "counting", GENESIS)
    await a.claim("r1", "a", epoch=1)
    await a.append_log("r1", 1, {"action": 1})
    # Entry 2 written as append_log writes it, but behind the writer's back: to the writer
    # this is an append whose acknowledgement was lost.
    shadow = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await shadow.append_log("r1", 2, {"action": 2})
    await a.append_log("r1", 2, {"action": 2})  # the retry
    await a.append_log("r1", 3, {"action": 3})
    assert await a.finish_log("r1", **_game("r1")) == await a.finish_log("r1", **_game("r1"))
    log = await a.action_log("r1")
    assert log is not None
    assert [e.entry["action"] for e in log.entries] == [1, 2, 3]


async def test_a_stale_owner_cannot_end_the_game_or_store_its_version(
    node: Client, nats_ns: Namespace, records: Store
) -> None:
    """After a takeover the old owner's finish is refused; the game stored is the new
    owner's, once."""
    a = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    b = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    await a.open_log("r1", "counting", GENESIS)
    await a.claim("r1", "a", epoch=1)
    await b.claim("r1", "b", epoch=2)
    game_id = await b.finish_log("r1", **{**_game("r1"), "end_reason": "by b"})
    with pytest.raises(LogConflict):
        await a.finish_log("r1", **{**_game("r1"), "end_reason": "by a"})
    stored = records.games(game="counting")
    assert [(g.id, g.end_reason) for g in stored] == [(game_id, "by b")]


async def test_the_journal_writes_ahead_to_each_log(room_log: RoomLog) -> None:
    """The server's journal (its writer thread, in order, durable before it answers)
    over each kind of log, JetStream's blocking one included."""
    journal = Journal(room_log)  # type: ignore[arg-type]
    try:
        assert await journal.open("r1", "counting", GENESIS) is Written.DURABLE
        results = await asyncio.gather(
            *(journal.append("r1", n, {"action": n}, float(n)) for n in range(1, 21))
        )
        assert set(results) == {Written.DURABLE}
        assert await journal.finish("r1", _game("r1")) is Written.DURABLE
    finally:
        journal.close()
    log = room_log.action_log("r1")
    assert log is not None
    assert [e.entry["action"] for e in log.entries] == list(range(1, 21))
    assert log.finished

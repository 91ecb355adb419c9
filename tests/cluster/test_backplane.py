"""The backplane's contract (meeple.cluster.backplane), the same tests on both of its
implementations: ``local`` (LocalBackplane: one SQLite file, TTLs on a virtual clock)
and ``nats`` (JetStreamBackplane on the session's NATS server). Fenced appends, message
ids, KV revisions and watches, leases taken, renewed, lapsed and stolen, and what a
restart finds again (local: the same file opened anew; NATS: a new connection)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import secrets
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.natsd import NatsEnv
from tests.patience import PATIENCE, eventually

from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import MSG_ID, Backplane, Fenced, KvEntry
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import LeaseEvent, LeaseLost, Leases, room_key
from meeple.cluster.lobbystate import LobbyState, StateFenced
from meeple.cluster.local import LocalBackplane
from meeple.cluster.registry import Names, RejoinSeat, RejoinTokens
from meeple.server.clock import VirtualClock

KINDS = ("local", "nats")
# The wall clock the local backplane keeps deadlines by, driven by the virtual clock.
EPOCH = 1.9e9


class Harness:
    """One backplane under test, and how to let time pass and restart it."""

    def __init__(
        self,
        kind: str,
        ns: Namespace,
        opener: Callable[[], Awaitable[Backplane]],
        clock: VirtualClock | None,
    ) -> None:
        self.kind = kind
        self.ns = ns
        self._open = opener
        self.clock = clock
        self.plane: Backplane
        self._planes: list[Backplane] = []

    async def start(self) -> Backplane:
        self.plane = await self._open()
        self._planes.append(self.plane)
        return self.plane

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass: the local clock moves; NATS keeps its own time (the
        test waits for what it expects)."""
        if self.clock is not None:
            await self.clock.advance(seconds)
        else:
            await asyncio.sleep(0.05)

    async def restart(self) -> Backplane:
        """Close the backplane and open it again: the same file, a new connection."""
        await self.plane.close()
        return await self.start()

    async def close(self) -> None:
        for plane in self._planes:
            await plane.close()


@pytest.fixture(params=KINDS)
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    if request.param == "local":
        clock = VirtualClock(1000.0)
        ns = Namespace("meeple")
        path = tmp_path / "plane.sqlite3"

        def wall() -> float:
            return EPOCH + clock.now()

        async def open_local() -> Backplane:
            return await LocalBackplane.open(path, ns, clock=clock, wall=wall)

        h = Harness("local", ns, open_local, clock)
    else:
        env: NatsEnv = request.getfixturevalue("nats_env")
        ns = request.getfixturevalue("nats_ns")

        async def open_nats() -> Backplane:
            nc = await connect_node(
                env.url, ns, user=env.NODE_USER, password=env.node_password, name="test"
            )
            return JetStreamBackplane(nc)

        h = Harness("nats", ns, open_nats, None)
    await h.start()
    yield h
    await h.close()


def _uid() -> str:
    return "r" + secrets.token_hex(4)


# --- the log stream ----------------------------------------------------------------------


async def test_an_append_on_a_wrong_last_sequence_is_refused(harness: Harness) -> None:
    """The fence: an append must name the subject's last sequence (0: none yet)."""
    logs = harness.plane.stream(harness.ns.log_stream)
    subject = harness.ns.log(_uid())
    first = await logs.append(subject, b"genesis", {"Meeple-Kind": "genesis"}, msg_id="a", expect=0)
    with pytest.raises(Fenced):
        await logs.append(subject, b"other", {}, msg_id="b", expect=0)
    with pytest.raises(Fenced):
        await logs.append(subject, b"other", {}, msg_id="b", expect=first + 1)
    second = await logs.append(subject, b"entry", {"Meeple-Seq": "1"}, msg_id="c", expect=first)
    assert second > first
    other = harness.ns.log(_uid())  # another room's subject has its own fence
    assert await logs.append(other, b"x", {}, msg_id="d", expect=0) > second
    read = await logs.read(subject)
    assert [(m.seq, m.data) for m in read] == [(first, b"genesis"), (second, b"entry")]
    assert read[0].headers["Meeple-Kind"] == "genesis"
    assert read[1].headers[MSG_ID] == "c"
    last = await logs.last(subject)
    assert last is not None
    assert (last.seq, last.data) == (second, b"entry")
    after = await logs.next(subject, first + 1)
    assert after is not None
    assert after.seq == second
    assert await logs.next(subject, second + 1) is None
    assert await logs.last(harness.ns.log(_uid())) is None
    assert await logs.read(harness.ns.log(_uid())) == []
    assert {subject, other} <= set(await logs.subjects())


async def test_a_message_id_seen_again_is_acknowledged_not_stored(harness: Harness) -> None:
    """The fence comes first: a retry that names the old end is refused (the writer then
    finds its message id in the subject); one past the fence within the duplicate window
    answers the first one's sequence and is not stored again."""
    logs = harness.plane.stream(harness.ns.log_stream)
    subject = harness.ns.log(_uid())
    first = await logs.append(subject, b"one", {}, msg_id="m1", expect=0)
    with pytest.raises(Fenced):
        await logs.append(subject, b"one", {}, msg_id="m1", expect=0)
    assert await logs.append(subject, b"one", {}, msg_id="m1", expect=first) == first
    second = await logs.append(subject, b"two", {}, msg_id="m2", expect=first)
    assert second > first
    assert await logs.append(subject, b"two", {}, msg_id="m2", expect=second) == second
    assert [m.data for m in await logs.read(subject)] == [b"one", b"two"]
    assert [m.headers[MSG_ID] for m in await logs.read(subject)] == ["m1", "m2"]


# --- KV ----------------------------------------------------------------------------------


async def test_kv_writes_are_compare_and_set_on_revisions(harness: Harness) -> None:
    """Create (expect 0), update and delete name the key's revision; a delete marker is
    an entry whose revision the next write names; revisions only grow."""
    kv = harness.plane.bucket(harness.ns.names_bucket)
    assert await kv.get("k") is None
    r1 = await kv.put("k", b"v1", expect=0)
    with pytest.raises(Fenced):
        await kv.put("k", b"again", expect=0)
    r2 = await kv.put("k", b"v2", expect=r1)
    assert r2 > r1
    assert await kv.get("k") == KvEntry("k", b"v2", r2, "put")
    with pytest.raises(Fenced):
        await kv.delete("k", expect=r1)
    r3 = await kv.delete("k", expect=r2)
    assert await kv.get("k") == KvEntry("k", b"", r3, "del")
    with pytest.raises(Fenced):
        await kv.put("k", b"v3", expect=0)
    r4 = await kv.put("other", b"x", expect=0)
    r5 = await kv.put("k", b"v3", expect=r3)
    assert r3 < r4 < r5


async def test_a_watch_tells_the_current_state_then_every_change(harness: Harness) -> None:
    """Latest entry of each key under the prefix first, then each write in order; keys
    outside the prefix are not told."""
    kv = harness.plane.bucket(harness.ns.leases_bucket)
    a1 = await kv.put("room.a", b"{}", expect=0)
    await kv.put("lobby", b"{}", expect=0)
    watch = kv.watch("room.")
    try:
        first = await asyncio.wait_for(anext(watch), PATIENCE)
        assert first == KvEntry("room.a", b"{}", a1, "put")
        b1 = await kv.put("room.b", b"{}", expect=0)
        await kv.put("lobby2", b"{}", expect=0)
        a2 = await kv.delete("room.a", expect=a1)
        told = [await asyncio.wait_for(anext(watch), PATIENCE) for _ in range(2)]
        assert told == [KvEntry("room.b", b"{}", b1, "put"), KvEntry("room.a", b"", a2, "del")]
    finally:
        await watch.aclose()


async def test_a_key_with_a_ttl_lapses(harness: Harness) -> None:
    """A names claim with a TTL is gone when it passes unrenewed; a write before keeps
    it."""
    names = Names(harness.plane, harness.ns)
    assert await names.claim("ann", "edge1", ttl=1)
    assert await names.claim("bob", "edge1", ttl=30)
    assert not await names.claim("ANN", "edge2")

    async def free() -> bool:
        await harness.advance(0.5)
        return await names.holder("ann") is None

    await eventually(free, "ann's claim lapsing")
    assert await names.claim("ann", "edge2")
    assert await names.holder("bob") == "edge1"


# --- leases ------------------------------------------------------------------------------


async def _next(events: AsyncIterator[LeaseEvent], harness: Harness) -> LeaseEvent:
    """The watch's next event, time passing meanwhile (a lapse needs it)."""
    waiting = asyncio.ensure_future(anext(events))
    try:
        async with asyncio.timeout(PATIENCE):
            while not waiting.done():
                await harness.advance(0.25)
                await asyncio.wait([waiting], timeout=0.05)
    finally:
        if not waiting.done():
            waiting.cancel()
    return waiting.result()


async def test_a_lease_is_taken_renewed_lapses_and_is_stolen(harness: Harness) -> None:
    """One owner at a time; renewals keep the epoch; an unrenewed lease lapses (watchers
    hear "lapsed"); the next owner's epoch is greater and the old owner's renewal is
    refused."""
    leases = Leases(harness.plane, harness.ns, ttl=1)
    key = room_key(_uid())
    lease = await leases.acquire(key, "a")
    assert lease is not None
    assert lease.owner == "a"
    assert await leases.acquire(key, "b") is None
    renewed = await leases.renew(lease)
    assert (renewed.epoch, renewed.owner) == (lease.epoch, "a")
    assert renewed.revision > lease.revision
    holder = await leases.holder(key)
    assert holder is not None
    assert (holder.owner, holder.epoch) == ("a", lease.epoch)
    events = leases.watch("room.")
    try:
        held = await _next(events, harness)
        assert (held.key, held.state, held.owner) == (key, "held", "a")
        lapsed = await _next(events, harness)
        assert (lapsed.key, lapsed.state, lapsed.owner) == (key, "lapsed", None)
        stolen = await leases.acquire(key, "b")
        assert stolen is not None
        assert stolen.epoch > lease.epoch
        with pytest.raises(LeaseLost):
            await leases.renew(renewed)
        taken = await _next(events, harness)
        assert (taken.state, taken.owner, taken.revision) == ("held", "b", stolen.epoch)
        await leases.release(renewed)  # no more a's: nothing to do
        assert (await leases.holder(key)) == stolen
        await leases.release(stolen)
        released = await _next(events, harness)
        assert (released.state, released.owner) == ("released", None)
        assert await leases.holder(key) is None
    finally:
        await events.aclose()


async def test_the_lobby_state_is_fenced_by_the_lease_epoch(harness: Harness) -> None:
    """A leader that claimed the state under a later epoch fences out an earlier one."""
    old, new = LobbyState(harness.plane, harness.ns), LobbyState(harness.plane, harness.ns)
    assert await old.claim("a", 5) == {}
    await old.write("a", {"tables": [1]})
    assert await new.claim("b", 9) == {"tables": [1]}
    with pytest.raises(StateFenced):
        await old.write("a", {"tables": [2]})
    with pytest.raises(StateFenced):
        await LobbyState(harness.plane, harness.ns).claim("a", 5)
    await new.write("b", {"tables": [3]})
    assert (await new.read())[:2] == ({"tables": [3]}, 9)


# --- restart -----------------------------------------------------------------------------


async def test_a_restart_finds_logs_names_tokens_state_and_leases_again(
    harness: Harness,
) -> None:
    """What was written is there after a restart (local: the SQLite file opened anew);
    revisions go on growing, the fences and the duplicate window still hold, and a lease
    held before the restart lapses when its TTL would have."""
    ns = harness.ns
    uid = _uid()
    logs = harness.plane.stream(ns.log_stream)
    s1 = await logs.append(
        ns.log(uid), b"genesis", {"Meeple-Kind": "genesis"}, msg_id="g", expect=0
    )
    s2 = await logs.append(ns.log(uid), b"entry", {}, msg_id="e1", expect=s1)
    assert await Names(harness.plane, ns).claim("ann", "edge1")
    token = secrets.token_hex(32)
    await RejoinTokens(harness.plane, ns).put(token, RejoinSeat(uid, 1, "e1.s3"), ttl=3600)
    state = LobbyState(harness.plane, ns)
    await state.claim("lobby1", 3)
    await state.write("lobby1", {"open": ["t1"]})
    leases = Leases(harness.plane, ns, ttl=1)
    lease = await leases.acquire(room_key(uid), "rooms1")
    assert lease is not None

    plane = await harness.restart()
    logs = plane.stream(ns.log_stream)
    assert [m.data for m in await logs.read(ns.log(uid))] == [b"genesis", b"entry"]
    assert ns.log(uid) in await logs.subjects()
    assert await logs.append(ns.log(uid), b"entry", {}, msg_id="e1", expect=s2) == s2
    with pytest.raises(Fenced):
        await logs.append(ns.log(uid), b"late", {}, msg_id="e2", expect=s1)
    assert await logs.append(ns.log(uid), b"next", {}, msg_id="e2", expect=s2) > s2
    assert await Names(plane, ns).holder("ann") == "edge1"
    assert await RejoinTokens(plane, ns).find(token) == RejoinSeat(uid, 1, "e1.s3")
    assert (await LobbyState(plane, ns).read())[:2] == ({"open": ["t1"]}, 3)
    leases = Leases(plane, ns, ttl=1)

    async def lapsed() -> bool:
        await harness.advance(0.5)
        return await leases.holder(room_key(uid)) is None

    await eventually(lapsed, "the lease held before the restart lapsing")
    taken = await leases.acquire(room_key(uid), "rooms2")
    assert taken is not None
    assert taken.epoch > lease.epoch


# --- any sequence of writes --------------------------------------------------------------

_KEYS = ("a", "b", "c")
_kv_ops = st.lists(
    st.tuples(
        st.sampled_from(("put", "delete")),
        st.sampled_from(_KEYS),
        st.sampled_from(("right", "zero", "wrong")),
        st.binary(max_size=8),
    ),
    max_size=25,
)
_log_ops = st.lists(
    st.tuples(
        st.sampled_from(("r1", "r2")),
        st.sampled_from(("right", "zero", "wrong")),
        st.integers(0, 12),  # message ids: a repeated one is a retry
    ),
    max_size=25,
)


@dataclass
class _Model:
    """What the backplane should hold after a sequence of writes."""

    kv: dict[str, tuple[int, bytes, str]]
    logs: dict[str, list[tuple[int, bytes]]]
    ids: dict[int, int]
    top: int = 0


def _expect(choice: str, current: int) -> int:
    return {"right": current, "zero": 0, "wrong": current + 7}[choice]


_KvOps = list[tuple[str, str, str, bytes]]
_LogOps = list[tuple[str, str, int]]


async def _run_ops(
    plane: Backplane, ns: Namespace, prefix: str, kv_ops: _KvOps, log_ops: _LogOps
) -> None:
    model = _Model({}, {}, {})
    kv = plane.bucket(ns.names_bucket)
    for op, key, choice, value in kv_ops:
        key = f"{prefix}{key}"
        current = model.kv.get(key, (0, b"", ""))[0]
        expect = _expect(choice, current)
        try:
            if op == "put":
                revision = await kv.put(key, value, expect=expect)
            else:
                revision = await kv.delete(key, expect=expect)
        except Fenced:
            assert expect != current
            continue
        assert expect == current
        assert revision > model.top
        model.top = revision
        model.kv[key] = (revision, value, "put") if op == "put" else (revision, b"", "del")
    for key in _KEYS:
        found = await kv.get(f"{prefix}{key}")
        want = model.kv.get(f"{prefix}{key}")
        if want is None:
            assert found is None
        else:
            assert found is not None
            assert (found.revision, found.value, found.op) == want
    logs = plane.stream(ns.log_stream)
    top = 0
    for room, choice, n in log_ops:
        subject = ns.log(f"{prefix}{room}")
        have = model.logs.setdefault(subject, [])
        current = have[-1][0] if have else 0
        expect = _expect(choice, current)
        body = f"m{n}".encode()
        msg_id = f"{prefix}{n}"
        try:
            seq = await logs.append(subject, body, {}, msg_id=msg_id, expect=expect)
        except Fenced:
            assert expect != current
            continue
        assert expect == current
        if n in model.ids:
            assert seq == model.ids[n]  # a retry: the first one's sequence
            continue
        assert seq > top
        top = seq
        model.ids[n] = seq
        have.append((seq, body))
    for subject, have in model.logs.items():
        assert [(m.seq, m.data) for m in await logs.read(subject)] == have


_counter = itertools.count()


@pytest.mark.parametrize("kind", KINDS)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(kv_ops=_kv_ops, log_ops=_log_ops)
def test_any_sequence_of_writes_keeps_the_fences(
    kind: str, kv_ops: _KvOps, log_ops: _LogOps, request: pytest.FixtureRequest
) -> None:
    """Random puts, deletes and appends, right, stale and retried, on both backplanes:
    each is refused exactly when its expected revision (last sequence) is not the
    key's (subject's), a repeated message id answers its first sequence, revisions only
    grow, and what is read back is what the model kept."""
    prefix = f"x{next(_counter)}"
    if kind == "local":
        ns = Namespace("meeple")

        async def run_local() -> None:
            plane = await LocalBackplane.open(":memory:", ns, clock=VirtualClock())
            try:
                await _run_ops(plane, ns, prefix, kv_ops, log_ops)
            finally:
                await plane.close()

        asyncio.run(run_local())
        return
    env: NatsEnv = request.getfixturevalue("nats_env")
    nats_ns: Namespace = request.getfixturevalue("nats_ns")

    async def run_nats() -> None:
        nc = await connect_node(
            env.url, nats_ns, user=env.NODE_USER, password=env.node_password, name="fuzz"
        )
        plane = JetStreamBackplane(nc)
        try:
            await _run_ops(plane, nats_ns, prefix, kv_ops, log_ops)
        finally:
            await plane.close()

    asyncio.run(run_nats())


# --- the local backplane only --------------------------------------------------------------


async def test_a_local_lease_kept_through_a_stalled_event_loop_does_not_lapse(
    tmp_path: Path,
) -> None:
    """In one process the holder and the leases' clock stall together: a lease whose
    keeper renews it lives through event-loop stalls longer than its TTL (a loaded
    machine; here the loop is blocked by hand), and lapses once nobody keeps it."""
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns)
    try:
        leases = Leases(plane, ns, ttl=1)
        key = room_key("r1")
        lease = await leases.acquire(key, "a")
        assert lease is not None
        lost: list[object] = []
        keeper = leases.keep(lease, lost.append)
        await asyncio.sleep(0)
        for _ in range(3):
            time.sleep(1.5)  # the event loop does nothing for longer than the TTL
            await asyncio.sleep(0.01)
        assert lost == []
        held = await leases.holder(key)
        assert held is not None
        assert (held.owner, held.epoch) == ("a", lease.epoch)
        await Leases.stop(keeper)

        async def lapsed() -> bool:
            return await leases.holder(key) is None

        await eventually(lapsed, "the lease nobody keeps lapsing")
    finally:
        await plane.close()


# --- group commit (the local backplane) ---------------------------------------------------


def _commits(plane: LocalBackplane) -> list[str]:
    """The COMMITs the plane's connection runs from now on."""
    seen: list[str] = []
    plane._db.set_trace_callback(lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


async def test_the_writes_of_one_turn_are_one_transaction(tmp_path: Path) -> None:
    """Writes made in one turn of the event loop (puts, deletes, appends of many rooms)
    are committed in one SQLite transaction, each writer told its own revision once it
    has committed; the next turn's writes are the next transaction."""
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns, clock=VirtualClock())
    try:
        kv, logs = plane.bucket(ns.names_bucket), plane.stream(ns.log_stream)
        commits = _commits(plane)
        revisions = await asyncio.gather(
            *(kv.put(f"k{i}", b"v", expect=0) for i in range(20)),
            *(logs.append(ns.log(f"r{i}"), b"m", {}, msg_id=f"m{i}", expect=0) for i in range(20)),
        )
        assert len(commits) == 1
        assert sorted(revisions[:20]) == list(range(1, 21))
        assert sorted(revisions[20:]) == list(range(1, 21))
        await asyncio.gather(*(kv.delete(f"k{i}", expect=revisions[i]) for i in range(20)))
        assert len(commits) == 2
        assert [(await kv.get(f"k{i}")).op for i in range(20)] == ["del"] * 20  # type: ignore[union-attr]
    finally:
        await plane.close()
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns, clock=VirtualClock())
    try:  # what the writers were told is in the file
        kv, logs = plane.bucket(ns.names_bucket), plane.stream(ns.log_stream)
        found = [await kv.get(f"k{i}") for i in range(20)]
        assert {(e.revision, e.op) for e in found if e is not None} == {
            (r, "del") for r in range(21, 41)
        }
        assert len(await logs.subjects()) == 20
        assert await kv.put("new", b"v", expect=0) == 41  # the counter went on
    finally:
        await plane.close()


async def test_a_staged_write_is_told_to_nobody_before_it_commits(tmp_path: Path) -> None:
    """Between a write's call and its turn's commit, readers see the committed state and
    a watcher hears nothing; a second writer with the same expected revision is refused
    (the staged write counts for the fence) once the first is durable, and so is a
    retried append on the old last sequence (JetStream's order: the fence first)."""
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns, clock=VirtualClock())
    try:
        kv, logs = plane.bucket(ns.leases_bucket), plane.stream(ns.log_stream)
        first = await kv.put("k", b"one", expect=0)
        heard: list[KvEntry] = []

        async def watch() -> None:
            async for entry in kv.watch("k"):
                heard.append(entry)

        watcher = asyncio.create_task(watch())
        await eventually(lambda: len(heard) == 1, "the current entry")
        writer = asyncio.create_task(kv.put("k", b"two", expect=first))
        subject = ns.log("r1")
        append = asyncio.create_task(logs.append(subject, b"m", {}, msg_id="m1", expect=0))
        await asyncio.sleep(0)  # both staged, not committed
        assert not writer.done()
        assert not append.done()
        found = await kv.get("k")
        assert found is not None
        assert found.value == b"one"
        assert await logs.last(subject) is None
        assert await logs.read(subject) == []
        assert len(heard) == 1
        events: list[str] = []

        async def second() -> None:
            try:
                await kv.put("k", b"three", expect=first)
            except Fenced:
                now = await kv.get("k")
                events.append(f"refused, seeing {now.value if now else None!r}")

        async def retry() -> None:
            try:
                await logs.append(subject, b"m", {}, msg_id="m1", expect=0)
            except Fenced:
                now = await logs.last(subject)
                events.append(f"retry refused, seeing {now.seq if now else None}")

        await asyncio.gather(second(), retry())
        assert sorted(events) == ["refused, seeing b'two'", "retry refused, seeing 1"]
        assert await writer == first + 1
        assert await append == 1
        await eventually(lambda: [e.value for e in heard] == [b"one", b"two"], "the write")
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    finally:
        await plane.close()


# The process SIGKILLed: writers on many keys and subjects, each line an acknowledged
# write (what a client of the node could have been told), flushed as soon as told.
_WRITER = """
import asyncio, sys
from meeple.bus.subjects import Namespace
from meeple.cluster.local import LocalBackplane

async def main(path: str) -> None:
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(path, ns)
    kv, logs = plane.bucket(ns.tokens_bucket), plane.stream(ns.log_stream)

    async def heard() -> None:
        async for entry in kv.watch(""):
            print("heard", entry.key, entry.revision, flush=True)

    async def writer(w: int) -> None:
        revision = seq = 0
        for i in range(10**6):
            seq = await logs.append(ns.log(f"r{w}"), str(i).encode(), {}, msg_id=f"{w}.{i}",
                                    expect=seq)
            print("log", w, i, seq, flush=True)
            revision = await kv.put(f"k{w}", str(i).encode(), expect=revision)
            print("kv", w, i, revision, flush=True)

    asyncio.create_task(heard())
    await asyncio.gather(*(writer(w) for w in range(8)))

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.parametrize("told", [40, 400])
async def test_a_crash_between_batched_writes_loses_nothing_anyone_was_told(
    tmp_path: Path, told: int
) -> None:
    """A process writing from many tasks at once (batched: one transaction a turn) is
    SIGKILLed: every write it acknowledged, and every change a watcher heard, is in the
    file when it is opened again, and each room's log has no gap."""
    path = tmp_path / "plane.sqlite3"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRITER,
        str(path),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdout is not None
    lines: list[list[str]] = []
    try:
        while len(lines) < told:
            line = await asyncio.wait_for(proc.stdout.readline(), PATIENCE)
            assert line, "the writer ended"
            lines.append(line.decode().split())
        proc.send_signal(signal.SIGKILL)
        # A line cut short by the kill (no newline yet) was not told: not counted.
        rest = (await proc.stdout.read()).split(b"\n")[:-1]
        lines.extend(line.decode().split() for line in rest)
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(path, ns, clock=VirtualClock())
    try:
        kv, logs = plane.bucket(ns.tokens_bucket), plane.stream(ns.log_stream)
        kept = {f"k{w}": await kv.get(f"k{w}") for w in range(8)}
        logged = {w: await logs.read(ns.log(f"r{w}")) for w in range(8)}
        for messages in logged.values():
            assert [m.data for m in messages] == [str(i).encode() for i in range(len(messages))]
        for line in lines:
            if line[0] == "log":
                w, i, seq = map(int, line[1:])
                assert (seq, str(i).encode()) in {(m.seq, m.data) for m in logged[w]}, line
            else:
                key, revision = (
                    (f"k{line[1]}", int(line[3]))
                    if line[0] == "kv"
                    else (
                        line[1],
                        int(line[2]),
                    )
                )
                entry = kept[key]
                assert entry is not None, line
                assert entry.revision >= revision, line
    finally:
        await plane.close()


# One statement of a turn's transaction: put key k with value v (None: remove it), or
# append a message with that body.
_Statement = tuple[str, int, bytes | None]
_statements = st.lists(
    st.tuples(st.sampled_from(["kv", "log"]), st.integers(0, 3), st.none() | st.binary(max_size=4)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(statements=_statements, fail_at=st.none() | st.integers(0, 24))
def test_a_transaction_runs_its_statements_in_order_all_or_none(
    statements: list[_Statement], fail_at: int | None
) -> None:
    """The local backplane's transaction (a turn's writes, runs of one statement sent to
    SQLite together): the file holds what running the statements one by one in their
    order gives (a key removed then written again in one turn is there), and a
    statement that fails leaves none of them."""
    from meeple.cluster.local import _DROP_KEY, _PUT_KEY, _PUT_MESSAGE

    async def run() -> None:
        plane = await LocalBackplane.open(":memory:", Namespace("meeple"), clock=VirtualClock())
        try:
            sql: list[tuple[str, tuple[object, ...]]] = []
            keys: dict[str, bytes] = {}
            bodies: list[bytes] = []
            for kind, n, value in statements:
                if kind == "log":
                    body = value or b""
                    row = ("s", len(bodies) + 1, f"s.{n}", "{}", body, f"m{len(sql)}", 0.0)
                    sql.append((_PUT_MESSAGE, row))
                    bodies.append(body)
                elif value is None:
                    sql.append((_DROP_KEY, ("b", f"k{n}")))
                    keys.pop(f"k{n}", None)
                else:
                    sql.append((_PUT_KEY, ("b", f"k{n}", len(sql) + 1, "put", value, None)))
                    keys[f"k{n}"] = value
            failing = fail_at is not None and fail_at < len(sql)
            if failing:  # the same stream sequence again: the primary key refuses it
                assert fail_at is not None
                again = (_PUT_MESSAGE, ("s", 1, "s.0", "{}", b"", "again", 0.0))
                sql.insert(fail_at, again)
                sql.insert(fail_at, again)
            try:
                plane.transaction(sql, {"kv:b": len(sql)})
            except sqlite3.IntegrityError:
                assert failing
                keys, bodies = {}, []
            else:
                assert not failing
            db = plane._db
            found = dict(db.execute("SELECT key, value FROM kv WHERE bucket = 'b'").fetchall())
            assert found == keys
            rows = db.execute("SELECT data FROM messages WHERE stream = 's' ORDER BY seq")
            assert [bytes(r[0]) for r in rows.fetchall()] == bodies
            counters = db.execute("SELECT name FROM counters WHERE name = 'kv:b'").fetchall()
            assert bool(counters) is not failing
        finally:
            await plane.close()

    asyncio.run(run())


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(entry=st.dictionaries(st.text(), _json, max_size=6))
def test_a_log_entry_is_written_as_the_logs_before_wrote_it(entry: dict[str, object]) -> None:
    """An entry's bytes (and so its message id's digest: a retry is known by it, also one
    across an upgrade) are the canonical JSON every version wrote: keys sorted, no
    spaces, ASCII."""
    from meeple.cluster.log import _body

    canonical = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
    assert _body(entry) == canonical
    assert _body([entry, entry]) == b"[" + canonical + b"," + canonical + b"]"


async def test_a_kept_lease_is_renewed_within_each_period(tmp_path: Path) -> None:
    """Leases taken at different moments, renewed on the ticks of the clock: none goes
    longer than its period (a third of the TTL) without a renewal, the first one
    included."""
    ns = Namespace("meeple")
    clock = VirtualClock()
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns, clock=clock)
    leases = Leases(plane, ns, ttl=3, now=clock.now)  # renewed every second
    lost: list[object] = []
    keepers: list[asyncio.Task[None]] = []
    kv = plane.bucket(ns.leases_bucket)
    written: dict[str, list[tuple[float, int]]] = {}
    try:
        for i in range(10):
            lease = await leases.acquire(room_key(f"r{i}"), "a")
            assert lease is not None
            written[lease.key] = [(clock.now(), lease.revision)]
            keepers.append(leases.keep(lease, lost.append, sleep=clock.sleep))
            await clock.advance(0.09)
        step = 0.05
        for _ in range(60):  # three seconds: three ticks
            await clock.advance(step)
            for key, seen in written.items():
                entry = await kv.get(key)
                assert entry is not None
                if entry.revision != seen[-1][1]:
                    seen.append((clock.now(), entry.revision))
        assert lost == []
        for key, seen in written.items():
            assert len(seen) >= 4, key  # taken, then renewed at each of the three ticks
            gaps = [b[0] - a[0] for a, b in itertools.pairwise(seen)]
            assert max(gaps) <= 1.0 + step + 1e-9, (key, gaps)
    finally:
        for keeper in keepers:
            await Leases.stop(keeper)
        await plane.close()


async def test_the_leases_a_node_keeps_renew_in_one_transaction_a_tick(tmp_path: Path) -> None:
    """Leases taken at different moments wake for their renewals in the same turn of the
    event loop (the virtual clock runs its timers one by one, so this one runs on the
    loop's own clock): each tick's renewals are one transaction of the local backplane,
    not one a lease."""
    ns = Namespace("meeple")
    plane = await LocalBackplane.open(tmp_path / "plane.sqlite3", ns)
    loop = asyncio.get_running_loop()
    leases = Leases(plane, ns, ttl=1, now=loop.time)
    period = 1 / 3
    lost: list[object] = []
    keepers: list[asyncio.Task[None]] = []
    try:
        for i in range(10):
            lease = await leases.acquire(room_key(f"r{i}"), "a")
            assert lease is not None
            keepers.append(leases.keep(lease, lost.append))
            await asyncio.sleep(period / 12)  # taken at ten moments of one period
        commits = _commits(plane)
        began = loop.time()
        await asyncio.sleep(3 * period)
        ticks = int(loop.time() // period) - int(began // period)
        assert lost == []
        assert 1 <= len(commits) <= ticks + 1, (len(commits), ticks)
    finally:
        for keeper in keepers:
            await Leases.stop(keeper)
        await plane.close()

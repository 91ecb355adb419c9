"""Room ownership: leases in the KV bucket (per-key TTL, compare-and-set) and the log's
fence, against the real NATS server: takeover after a lapse, and an old owner that wakes
up cannot append. A hypothesis state machine drives three nodes at random."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from nats.aio.client import Client
from tests.natsd import NatsEnv
from tests.patience import PATIENCE

from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import Lease, LeaseEvent, LeaseLost, Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.server.store.database import LogConflict, Store

GENESIS = {"version": 1, "game": "counting", "record": {"players": ["ann", "bob"]}}


async def _gone(leases: Leases, key: str, within: float = 5.0) -> float:
    """Wait until nobody holds ``key``; how long it took."""
    start = time.monotonic()
    while await leases.holder(key) is not None:
        assert time.monotonic() - start < within, f"{key} still held after {within} s"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def test_a_lease_is_exclusive_renewable_and_lapses(node: Client, nats_ns: Namespace) -> None:
    """One holder at a time; renewals keep it past its TTL; unrenewed, it lapses in about
    the TTL and another node takes it with a greater epoch; the old holder's renewal is
    then refused."""
    leases = Leases(JetStreamBackplane(node), nats_ns, ttl=2)
    a = await leases.acquire(room_key("r1"), "a")
    assert a is not None
    assert await leases.acquire(room_key("r1"), "b") is None
    assert await leases.acquire(room_key("r1"), "a") is None  # not even its own again
    for _ in range(5):  # 2.5 s of renewals every 0.5 s: past the TTL, still held
        await asyncio.sleep(0.5)
        a = await leases.renew(a)
    holder = await leases.holder(room_key("r1"))
    assert holder is not None
    assert (holder.owner, holder.epoch) == ("a", a.epoch)
    lapse = await _gone(leases, room_key("r1"))
    assert 1.5 < lapse < 3.5
    b = await leases.acquire(room_key("r1"), "b")
    assert b is not None
    assert b.epoch > a.epoch
    with pytest.raises(LeaseLost):
        await leases.renew(a)


async def test_a_released_lease_is_free_at_once_and_a_stale_release_does_nothing(
    node: Client, nats_ns: Namespace
) -> None:
    """Releasing frees the key for another node without waiting for the TTL; an old
    holder's release after that leaves the new holder's lease alone."""
    leases = Leases(JetStreamBackplane(node), nats_ns, ttl=5)
    a = await leases.acquire(room_key("r1"), "a")
    assert a is not None
    await leases.release(a)
    b = await leases.acquire(room_key("r1"), "b")
    assert b is not None
    await leases.release(a)
    holder = await leases.holder(room_key("r1"))
    assert holder is not None
    assert holder.owner == "b"


async def test_a_lease_renewed_since_is_released_from_an_older_copy(
    node: Client, nats_ns: Namespace
) -> None:
    """The holder's copy is the one it acquired; its keeper renewed the lease since
    (the revision moved on): releasing that copy still frees the key at once."""
    leases = Leases(JetStreamBackplane(node), nats_ns, ttl=5)
    a = await leases.acquire(room_key("r2"), "a")
    assert a is not None
    await leases.renew(await leases.renew(a))
    await leases.release(a)
    assert await leases.holder(room_key("r2")) is None
    b = await leases.acquire(room_key("r2"), "b")
    assert b is not None


async def test_keep_renews_until_the_lease_is_taken(node: Client, nats_ns: Namespace) -> None:
    """A kept lease outlives its TTL; when someone else writes the key, the keeper tells
    its owner once."""
    leases = Leases(JetStreamBackplane(node), nats_ns, ttl=1)
    a = await leases.acquire(room_key("r1"), "a")
    assert a is not None
    lost: list[Lease] = []
    task = leases.keep(a, lost.append, every=0.2)
    await asyncio.sleep(1.6)
    assert lost == []
    held = await leases.holder(room_key("r1"))
    assert held is not None
    assert held.owner == "a"
    # An operator's forced takeover: the key rewritten under the keeper's feet.
    await node.jetstream().publish(f"$KV.{nats_ns.leases_bucket}.{room_key('r1')}", b"{}")
    await asyncio.wait_for(task, PATIENCE)
    assert [x.key for x in lost] == [room_key("r1")]


async def test_a_watcher_hears_of_each_lease_held_released_and_lapsed(
    node: Client, nats_ns: Namespace
) -> None:
    """The current holders first, then each change as it happens: a release at once, a
    lapse about one TTL after the holder's last write (the server's marker), after which
    another node acquires the key."""
    leases = Leases(JetStreamBackplane(node), nats_ns, ttl=1)
    first = await Leases(JetStreamBackplane(node), nats_ns, ttl=30).acquire(room_key("r0"), "a")
    assert first is not None
    events: asyncio.Queue[LeaseEvent] = asyncio.Queue()

    async def watch() -> None:
        async for event in leases.watch():
            events.put_nowait(event)

    watcher = asyncio.get_running_loop().create_task(watch())

    async def next_event() -> LeaseEvent:
        return await asyncio.wait_for(events.get(), PATIENCE)

    try:
        e = await next_event()
        assert (e.key, e.state, e.owner) == (room_key("r0"), "held", "a")
        a = await leases.acquire(room_key("r1"), "a")
        assert a is not None
        e = await next_event()
        assert (e.key, e.state, e.owner) == (room_key("r1"), "held", "a")
        await leases.release(a)
        e = await next_event()
        assert (e.key, e.state, e.owner) == (room_key("r1"), "released", None)
        b = await leases.acquire(room_key("r1"), "b")
        assert b is not None
        written = time.monotonic()
        assert (await next_event()).owner == "b"
        e = await next_event()
        lapsed_at = time.monotonic() - written
        assert (e.key, e.state, e.owner) == (room_key("r1"), "lapsed", None)
        assert 0.9 < lapsed_at < 2.5
        c = await leases.acquire(room_key("r1"), "c")  # over the lapse's marker
        assert c is not None
        assert c.epoch > b.epoch
        e = await next_event()
        assert (e.key, e.state, e.owner) == (room_key("r1"), "held", "c")
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


def test_leases_refuse_a_ttl_the_server_cannot_keep(node: Client, nats_ns: Namespace) -> None:
    """TTLs are whole seconds, at least one."""
    for bad in (0, 0.5, 1.5):
        with pytest.raises(ValueError, match="TTL"):
            Leases(JetStreamBackplane(node), nats_ns, ttl=bad)  # type: ignore[arg-type]


# --- the state machine --------------------------------------------------------------------

NODES = ("a", "b")


@pytest.mark.slow
def test_lease_takeover_and_stale_owners_state_machine(
    nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Any
) -> None:
    """Two nodes acquire, renew, release and let lapse one room's lease, claim its log
    and append, in random order, some of them long after they lost the lease. Always:
    at most one node holds the lease; the log is every acknowledged append, in order,
    with no gap and no duplicate; an append is acknowledged only from the node that
    claimed the log last; a node whose claim was overtaken is refused."""
    rooms = itertools.count()
    stats: Counter[str] = Counter()
    records = Store(tmp_path / "records.sqlite3")

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.uid = f"sm{next(rooms)}"
            self.key = room_key(self.uid)
            self.conns: dict[str, Client] = {}
            self.logs: dict[str, JetStreamLog] = {}
            for name in NODES:
                nc = self.run(
                    connect_node(
                        nats_env.url,
                        nats_ns,
                        user=nats_env.NODE_USER,
                        password=nats_env.node_password,
                        name=name,
                    )
                )
                self.conns[name] = nc
                self.logs[name] = JetStreamLog(JetStreamBackplane(nc), nats_ns, records)
            self.leases = {
                n: Leases(JetStreamBackplane(self.conns[n]), nats_ns, ttl=1) for n in NODES
            }
            self.run(self.logs["a"].open_log(self.uid, "counting", GENESIS))
            # The model.
            self.held: dict[str, Lease] = {}  # what each node believes it holds
            self.holder: str | None = None  # who really holds it
            self.written = 0.0  # when the holder last wrote its lease (monotonic)
            self.stats = stats
            self.claimer: str | None = None  # who claimed the log last
            self.known: dict[str, int] = {}  # each claimer's idea of the last sequence
            self.epochs: dict[str, int] = {}  # the epoch each node last claimed under
            self.claimed_epoch = -1
            self.entries: list[dict[str, Any]] = []

        def run(self, coro: Any) -> Any:
            return self.loop.run_until_complete(coro)

        def lapsing(self) -> bool:
            """Whether the holder's lease may have lapsed by now (its TTL is 1 s, counted
            by the server from a write a little before ``written``)."""
            return self.holder is not None and time.monotonic() - self.written > 0.8

        def settle(self) -> None:
            """A lease near the end of its TTL may lapse during the next step: let it,
            so the model knows (the server's expiry is real time)."""
            if self.holder is not None and time.monotonic() - self.written > 0.6:
                self.run(_gone(self.leases["a"], self.key))
                self.holder = None

        def teardown(self) -> None:
            for nc in self.conns.values():
                self.run(nc.close())
            self.loop.close()

        @rule(node=st.sampled_from(NODES))
        def acquire(self, node: str) -> None:
            self.settle()
            lease = self.run(self.leases[node].acquire(self.key, node))
            if self.holder is not None:
                if lease is None:
                    return
                assert self.lapsing()  # it lapsed during this slow step: fine only then
                self.holder = None
            assert lease is not None
            if self.claimer not in (None, node):
                stats["takeovers"] += 1
            self.held[node] = lease
            self.holder = node
            self.written = time.monotonic()
            log = self.run(self.logs[node].claim(self.uid, node, lease.epoch))
            assert [e.entry for e in log.entries] == self.entries
            self.claimer = node
            self.claimed_epoch = lease.epoch
            self.epochs[node] = lease.epoch
            self.known[node] = len(log.entries)

        @rule(node=st.sampled_from(NODES))
        def renew(self, node: str) -> None:
            if node not in self.held:
                return
            self.settle()
            try:
                self.held[node] = self.run(self.leases[node].renew(self.held[node]))
            except LeaseLost:
                assert self.holder != node or self.lapsing()
                if self.holder == node:
                    self.holder = None
                del self.held[node]
            else:
                assert self.holder == node
                self.written = time.monotonic()

        @precondition(lambda self: self.holder is not None)
        @rule()
        def release(self) -> None:
            assert self.holder is not None
            self.run(self.leases[self.holder].release(self.held.pop(self.holder)))
            self.holder = None

        @precondition(lambda self: self.holder is not None)
        @rule()
        def lapse(self) -> None:
            # Real time: the server removes the key when its TTL passes.
            self.run(_gone(self.leases["a"], self.key))
            self.holder = None

        @rule(node=st.sampled_from(NODES))
        def claim_again(self, node: str) -> None:
            """A node claims under the lease it last had, maybe long lost."""
            if node not in self.epochs:
                return
            epoch = self.epochs[node]
            try:
                log = self.run(self.logs[node].claim(self.uid, node, epoch))
            except LogConflict:
                assert epoch < self.claimed_epoch
                stats["stale claims refused"] += 1
                self.known.pop(node, None)
            else:
                assert epoch == self.claimed_epoch
                assert [e.entry for e in log.entries] == self.entries
                self.known[node] = len(log.entries)

        @rule(node=st.sampled_from(NODES))
        def append(self, node: str) -> None:
            if node not in self.known:
                return  # never claimed: a node does not write a room it did not claim
            seq = self.known[node] + 1
            entry = {"action": {"by": node, "n": seq}}
            try:
                self.run(self.logs[node].append_log(self.uid, seq, entry))
            except LogConflict:
                assert node != self.claimer
                stats["stale appends refused"] += 1
                del self.known[node]  # fenced out until it claims again
            else:
                assert node == self.claimer
                assert seq == len(self.entries) + 1
                self.entries.append(entry)
                self.known[node] = seq
                if self.holder != node:
                    stats["appends after the lease lapsed, before a takeover"] += 1

        @invariant()
        def one_holder_and_the_log_is_the_acknowledged_appends(self) -> None:
            holder = self.run(self.leases["b"].holder(self.key))
            if self.holder is None:
                # A lapse the model has not seen yet is fine; a holder it does not know
                # is not.
                assert holder is None
            elif holder is not None:
                assert holder.owner == self.holder
            log = self.run(self.logs["b"].action_log(self.uid))
            assert log is not None
            assert [e.seq for e in log.entries] == list(range(1, len(self.entries) + 1))
            assert [e.entry for e in log.entries] == self.entries

    try:
        Machine.TestCase.settings = settings(
            max_examples=6,
            stateful_step_count=14,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        Machine.TestCase().runTest()
        print(dict(stats))
    finally:
        records.close()

"""Fixtures for the cluster's tests: a node's NATS connection in the test's namespace,
and a room log of each kind (SQLite, PostgreSQL, JetStream)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from nats.aio.client import Client
from tests.natsd import NatsEnv

from meeple.bus import Bus, LocalBus
from meeple.bus.natsbus import NatsBus, connect
from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.log import BlockingJetStreamLog, JetStreamLog, RoomLog
from meeple.server.store.database import Store, open_store

# Every room-log implementation, by name: each log test runs on each.
LOGS = ("sqlite", "postgresql", "jetstream")


@pytest.fixture
async def node(nats_env: NatsEnv, nats_ns: Namespace) -> AsyncIterator[Client]:
    """A rooms node's connection to the session's NATS, the test's namespace made."""
    nc = await connect_node(
        nats_env.url,
        nats_ns,
        user=nats_env.NODE_USER,
        password=nats_env.node_password,
        name="test-node",
    )
    yield nc
    await nc.close()


@pytest.fixture
def pg_reader(node: Client, nats_ns: Namespace, pg_url: str) -> Iterator[JetStreamLog]:
    """The test's own reader of the room logs, finished games in the test's PostgreSQL
    (its store closed at the end, whatever the test did)."""
    store = open_store(pg_url)
    try:
        yield JetStreamLog(JetStreamBackplane(node), nats_ns, store)
    finally:
        store.close()


@pytest.fixture
def records(tmp_path: Path) -> Iterator[Store]:
    """The store of finished games beside a JetStream log (PostgreSQL in production)."""
    s = Store(tmp_path / "records.sqlite3")
    yield s
    s.close()


@pytest.fixture(params=LOGS)
def room_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RoomLog]:
    """A fresh room log of each kind: the SQLite store, the PostgreSQL store, or
    JetStream with a SQLite store for the finished games."""
    if request.param == "jetstream":
        env: NatsEnv = request.getfixturevalue("nats_env")
        ns: Namespace = request.getfixturevalue("nats_ns")
        records: Store = request.getfixturevalue("records")
        log = BlockingJetStreamLog(
            env.url, ns, records, user=env.NODE_USER, password=env.node_password
        )
        yield log
        log.close()
        return
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
    else:
        url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = open_store(url)
    yield store
    store.close()


def records_of(log: RoomLog) -> Store:
    """Where ``log`` stores finished games: the store itself, or a JetStream log's."""
    return log.records if isinstance(log, BlockingJetStreamLog) else log  # type: ignore[return-value]


# Two sides of one bus: a room's owner and an edge, in one process or two connections
# (tests/cluster/test_bus.py, test_bus_values.py).
MakeBus = Callable[[], Awaitable[Bus]]


@pytest.fixture(params=("local", "nats"))
async def make_bus(request: pytest.FixtureRequest) -> AsyncIterator[MakeBus]:
    """``await make_bus()``: another side of the same bus."""
    made: list[Bus] = []
    local = LocalBus()

    async def make() -> Bus:
        if request.param == "local":
            return local
        env: NatsEnv = request.getfixturevalue("nats_env")
        nc = await connect(env.url, user=env.NODE_USER, password=env.node_password)
        bus = NatsBus(nc)
        made.append(bus)
        return bus

    yield make
    for bus in made:
        await bus.close()
    await local.close()

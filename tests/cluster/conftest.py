"""Fixtures for the cluster's tests: a node's NATS connection in the test's namespace,
a room log of each kind (SQLite, PostgreSQL, JetStream), and ``meeple node`` processes
that the tests of a module share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from nats.aio.client import Client
from tests.guard import session_processes
from tests.natsd import NatsEnv
from tests.pg import PgServer

from meeple.bus import Bus, LocalBus
from meeple.bus.natsbus import NatsBus, connect
from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane, connect_node, delete_namespace
from meeple.cluster.log import BlockingJetStreamLog, JetStreamLog, RoomLog
from meeple.node.launch import NodeProcess, start_node
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


def launch(
    env: NatsEnv,
    ns: Namespace,
    log_dir: Path,
    name: str,
    roles: str,
    database: str | None,
    extra: tuple[str, ...],
) -> NodeProcess:
    """A ``meeple node`` process ``name`` with ``roles`` (comma-separated) on the session's
    NATS in namespace ``ns``, its log in ``log_dir``."""
    return start_node(
        name,
        roles.split(","),
        env.url,
        user=env.NODE_USER,
        password=env.node_password,
        log_dir=log_dir,
        namespace=ns.root,
        database=database,
        extra_args=extra,
    )


class ModuleNodes:
    """``meeple node`` processes that the tests of one module share (issue 33.3): a
    node's start is 1–2 s of CPU and a test often starts three. In a namespace and a
    PostgreSQL database of the module's own; a test that kills or restarts a node keeps
    nodes of its own (tests/cluster/test_nodes.py ``Nodes``). The tests that share them
    play at tables of their own under names of their own, and assert nothing that another
    test's games could make true (a server bot's number, "the one room")."""

    def __init__(self, env: NatsEnv, ns: Namespace, pg_url: str, log_dir: Path) -> None:
        self.env, self.ns, self.pg_url, self.log_dir = env, ns, pg_url, log_dir
        self.started: dict[str, tuple[tuple[str, ...], NodeProcess]] = {}

    async def node(self, name: str, roles: str, *extra: str, store: bool = False) -> NodeProcess:
        """The module's node ``name`` with ``roles`` (and the module's database when
        ``store``), started by the first test that asks for it; the same ask each time."""
        asked = (roles, *extra, *(("store",) if store else ()))
        if name in self.started:
            had, running = self.started[name]
            assert had == asked, f"{name} was started as {had}, not {asked}"
            assert running.proc.poll() is None, f"the module's {name} died:\n" + self.logs()
            return running
        with session_processes():  # the module's, not the test's that asked first
            running = await asyncio.to_thread(
                launch,
                self.env,
                self.ns,
                self.log_dir,
                name,
                roles,
                self.pg_url if store else None,
                extra,
            )
        self.started[name] = (asked, running)
        return running

    def logs(self) -> str:
        return "\n".join(
            f"== {n.name}\n{n.log.read_text(errors='replace')[-3000:]}"
            for _, n in self.started.values()
        )

    def stop_all(self) -> None:
        for _, running in self.started.values():
            running.stop(timeout=10)


@pytest.fixture(scope="module")
def module_nodes(
    nats_env: NatsEnv, postgres: PgServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleNodes]:
    """The module's shared nodes (:class:`ModuleNodes`), stopped at its end, their
    namespace and database deleted."""
    ns = Namespace(nats_env.new_namespace())
    database, url = postgres.new_database()
    group = ModuleNodes(nats_env, ns, url, tmp_path_factory.mktemp("module-nodes"))
    try:
        yield group
    finally:
        group.stop_all()
        postgres.server.drop_database(database)
        asyncio.run(
            delete_namespace(
                nats_env.url, ns, user=nats_env.NODE_USER, password=nats_env.node_password
            )
        )

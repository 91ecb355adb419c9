"""``meeple node``: one process with any mix of the roles ``edge``, ``rooms``, ``lobby``,
``store`` (docs/cluster.md), over one backplane (:mod:`meeple.cluster.backplane`): a NATS
connection (:class:`~meeple.cluster.jetstream.JetStreamBackplane`), or, with
``NodeConfig.local``, the in-process one (:class:`~meeple.cluster.local.LocalBackplane`:
every role in this process, their state in one SQLite file, no NATS).

A node prints one line when it is ready — ``node <name> ready roles=… pid=…`` and, for
an edge, ``<protocol>=<host>:<port>`` per listener — so whoever started it (``meeple
cluster up``, the tests) knows its addresses; and publishes a heartbeat
(``<ns>.node.<name>``, JSON: name, roles, pid, address, the rooms it owns, whether it
leads the lobby) every second, which ``meeple cluster status`` and ``GET /api/cluster``
read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import signal
import time
from collections.abc import Awaitable, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import msgspec

from meeple.bus import schema
from meeple.bus.base import Bus
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import Backplane
from meeple.cluster.lease import Leases
from meeple.cluster.log import JetStreamLog, LogEnds
from meeple.node.contest import cluster_contest
from meeple.node.names import ClusterNames
from meeple.server.app import LISTENERS, Listener, Services
from meeple.server.config import ServerConfig
from meeple.server.lobby.tables import Lobby

if TYPE_CHECKING:
    from meeple.node.accounts import BusAccounts
    from meeple.node.chat import LobbyChat, WatchChatRelay
    from meeple.node.cmpn402 import SeatFinder
    from meeple.node.edge import EdgeLobby
    from meeple.node.lobby import LobbyRole
    from meeple.node.names import NameService
    from meeple.node.rejoin import RejoinService
    from meeple.node.rooms import RoomsRole
    from meeple.node.status import ClusterView
    from meeple.node.store import StoreRole
    from meeple.node.views import ViewRelay
    from meeple.node.writebehind import WriteBehind
    from meeple.server.lobby.names import StoreReservations
    from meeple.server.store.database import DatabaseClaim, Store
    from meeple.web.listener import WebListener

__all__ = [
    "EDGE_LISTENERS",
    "ROLES",
    "SERVE_LISTENERS",
    "Node",
    "NodeConfig",
    "backplane_file",
    "serve_config",
]

logger = logging.getLogger(__name__)

ROLES = ("edge", "rooms", "lobby", "store")
# The listeners an edge runs through the split (their dialects only use what
# meeple.node.edge.EdgeLobby carries); the others need more of the lobby over the bus.
EDGE_LISTENERS = ("twente", "clarkson", "santorini", "spectrangle", "cmpn402")
# Every listener ``meeple serve`` opens: the protocols' and the web on its own port
# (``[web] port``, the edge's web app: meeple.node.web). A one-process node opens these
# (issue 32.2).
SERVE_LISTENERS = (*EDGE_LISTENERS, "web")
# An edge's own listener where meeple serve's is more than a dialect (the CMPN402
# referee runs on the rooms nodes: meeple.node.cmpn402).
EDGE_TARGETS = {"cmpn402": "meeple.node.cmpn402_edge:create_listener"}


@dataclass(frozen=True)
class NodeConfig:
    name: str
    roles: frozenset[str]
    # The NATS server's URL; unused with ``local``.
    nats_url: str
    nats_user: str | None = None
    nats_password: str | None = None
    namespace: str = "meeple"
    database: str | None = None
    server: ServerConfig = field(default_factory=ServerConfig)
    lease_ttl: int = 2
    # The listeners an edge opens, each on its ``server.listeners`` port when enabled
    # there; "web" is the edge's web app (as ``api_port``, which wins when set).
    listeners: Collection[str] = EDGE_LISTENERS
    # An edge's web port: its pages, /ws and GET /api/cluster (None: the "web" listener's
    # port if ``listeners`` has it, else none; 0: a free port).
    api_port: int | None = None
    # Benchmarks only: every room seeds its game with this, so every game deals the same.
    same_game_seed: int | None = None
    # Seconds an edge's names stay claimed unless renewed (a dead edge's come free).
    name_ttl: int = 6
    # /metrics, /healthz, /readyz on a port of their own, and the TCP health check
    # (None: ``server``'s, as ``meeple serve``'s; the web port serves the first three
    # too). Issue 35.
    metrics_port: int | None = None
    health_port: int | None = None
    # The in-process backplane's SQLite file (issue 32.2): the bus in this process, the
    # leases, names, tokens, lobby state and room logs in this file; no NATS. Every
    # role this node needs runs here (a role elsewhere cannot reach it).
    local: str | None = None


def backplane_file(database: str) -> str:
    """The local backplane's SQLite file for ``meeple serve``'s ``database``: beside a
    SQLite database (``var/meeple.sqlite3`` -> ``var/meeple-backplane.sqlite3``), in
    ``var/`` for PostgreSQL. The same database, the same file: a restart takes its rooms
    over."""
    from pathlib import Path

    from meeple.server.store.database import sqlite_path

    path = sqlite_path(database)
    if path is None:
        return "var/meeple-backplane.sqlite3"
    if path == ":memory:":
        return ":memory:"
    file = Path(path)
    return str(file.with_name(f"{file.stem}-backplane{file.suffix or '.sqlite3'}"))


def serve_config(server: ServerConfig, *, name: str = "serve") -> NodeConfig:
    """``meeple serve``: one node with every role over the local backplane, every
    listener of ``server`` on its port, finished games in ``server.database``."""
    # One process: its edge and its node cannot fall silent to its own roles while it
    # runs (a loaded event loop only hears its own heartbeat late), so no silence is
    # judged: under 1,000 games a late heartbeat made the rooms and the lobby drop every
    # seat of the process's own edge (issue 32.2 item 2). A crash is a restart.
    # (A week: the longest silence ClusterConfig takes, so one no process lives to see.)
    never = 7 * 24 * 3600
    one = replace(server.cluster, edge_silence=never, node_silence=never)
    return NodeConfig(
        name=name,
        roles=frozenset(ROLES),
        nats_url="",
        database=server.database,
        server=server.with_overrides(cluster=one),
        listeners=SERVE_LISTENERS,
        local=backplane_file(server.database),
    )


class _SameSeed(random.Random):
    """A rooms node's RNG when every game must deal the same (benchmarks/cluster.py)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.same = seed

    def getrandbits(self, k: int) -> int:
        return self.same if k == 64 else super().getrandbits(k)


class Node:
    """One node; ``await start()``, then ``await stop()``."""

    def __init__(self, config: NodeConfig) -> None:
        unknown = set(config.roles) - set(ROLES)
        if unknown or not config.roles:
            raise ValueError(f"roles are any of {', '.join(ROLES)}: not {sorted(unknown)}")
        if config.local is not None and config.roles != frozenset(ROLES):
            # Nothing outside this process reaches an in-process backplane.
            raise ValueError("a local backplane is one process's: it runs every role")
        if "store" in config.roles and not config.database:
            raise ValueError("the store role needs --database")
        if {"edge", "rooms"} <= config.roles and config.server.cmpn402.admin_token is None:
            # One process, one admin token: the edge's referee admin and the rooms role
            # that checks it again (issue 30.1) must agree on the random one.
            token = secrets.token_urlsafe(16)
            server = replace(
                config.server, cmpn402=replace(config.server.cmpn402, admin_token=token)
            )
            config = replace(config, server=server)
            logger.warning(
                "%s: admin token (--admin-token, or cmpn402.admin_token): %s",
                config.name,
                token,
            )
        self.config = config
        # Its requests end in its name (Namespace.sender): an edge's NATS user may send
        # no other (meeple.cluster.auth).
        self.ns = Namespace(config.namespace).for_node(config.name)
        self.services = Services(config.server, rng=random.Random())
        self.listeners: dict[str, Listener] = {}
        self.rooms: RoomsRole | None = None
        self.lobby: LobbyRole | None = None
        self.store: StoreRole | None = None
        self.accounts: BusAccounts | None = None  # an edge's, from the store nodes
        self.edge: EdgeLobby | None = None
        self.chat: LobbyChat | None = None  # an edge's Spectrangle chat outside a game
        self.name_service: NameService | None = None  # a lobby node answers name claims
        self.rejoin_service: RejoinService | None = None  # where a rejoin token leads
        self.seat_finder: SeatFinder | None = None  # finds dropped CMPN402 agents' seats
        self._stopping = asyncio.Event()
        self._stop_now = False
        self._beat: asyncio.Task[None] | None = None
        self.view: ClusterView | None = None
        self.web: WebListener | None = None
        self.relay: ViewRelay | None = None
        self.watch_chat: WatchChatRelay | None = None  # an edge's spectators' chat
        self.api_port: int | None = None
        self.ops: list[Any] = []
        self._lag: Any = None
        self.plane: Backplane | None = None
        self._claim: DatabaseClaim | None = None  # a local backplane's file, held
        # A local backplane's writes held while its file fails (meeple serve's journal).
        self.behind: WriteBehind | None = None
        self.dropped: list[str] = []  # the game updates a stop went without (named)
        # One process with a store and an edge (meeple serve): the reserved names in
        # memory, as MeepleServer's (its edge's names are checked against them at once).
        self.reservations: StoreReservations | None = None
        self.log: JetStreamLog | None = None  # the rooms role's
        # This start's id in its edge's seat routes (meeple.node.edge.EdgeLobby.start_id).
        self._start_id = secrets.token_hex(3)

    async def _connect(self) -> Backplane:
        """The node's backplane: the local one (``local``), or NATS."""
        c = self.config
        if c.local is not None:
            from meeple.cluster.local import LocalBackplane
            from meeple.node.writebehind import WriteBehind

            local = await LocalBackplane.open(
                c.local, self.ns, clock=self.services.clock, timing=c.server.cluster
            )
            # A file that fails: the games go on from memory (meeple.node.writebehind).
            self.behind = WriteBehind(
                local, self.ns, max_backlog=c.server.log_backlog, timing=c.server.cluster
            )
            self.behind.on_overflow.append(self._halt_unwritten)
            self.behind.on_health.append(lambda _health: self._health_changed())
            return local
        from meeple.bus.natsbus import connect
        from meeple.cluster.jetstream import JetStreamBackplane, connect_node

        # A silent network (no FIN, no RST) is noticed by pings: nats_ping apart, two
        # unanswered (the connection then reconnects and /readyz says so meanwhile).
        pings: dict[str, Any] = {
            "ping_interval": c.server.cluster.nats_ping,
            "max_outstanding_pings": 2,
        }
        if c.roles & {"rooms", "lobby"}:
            nc = await connect_node(
                c.nats_url,
                self.ns,
                user=c.nats_user,
                password=c.nats_password,
                name=c.name,
                timing=c.server.cluster,
                **pings,
            )
        else:
            # An edge or a store uses no stream nor bucket: it makes sure of none (its
            # NATS user may not: meeple.cluster.auth). An edge's answers come to its own
            # inbox, the only one its user may hear.
            inbox = self.ns.edge_inbox_of(c.name) if c.roles == {"edge"} else None
            nc = await connect(
                c.nats_url,
                user=c.nats_user,
                password=c.nats_password,
                name=c.name,
                inbox_prefix=inbox,
                **pings,
            )
        # One JetStream call's wait.
        return JetStreamBackplane(nc, timeout=c.server.cluster.jetstream_wait)

    async def start(self) -> None:
        c = self.config
        await self._start_ops()
        if c.local is not None and self._claim is None:
            from meeple.server.store.database import DatabaseClaim

            # Before any log is read: one process per local backplane (a second one would
            # take the first one's rooms over while it plays them).
            self._claim = DatabaseClaim(c.local)
        store = None
        if "store" in c.roles:
            from meeple.server.store.database import open_store

            assert c.database is not None
            store = await asyncio.to_thread(open_store, c.database)
            if c.local is not None:
                # Before the backplane opens: the earlier runtime's open games move in.
                await self._upgrade(c.local, store)
        try:
            self.plane = plane = await self._connect()
        except BaseException:
            if store is not None:
                await asyncio.to_thread(store.close)
            raise
        self.bus: Bus = plane.bus
        self.leases = Leases(plane, self.ns, ttl=c.lease_ttl, now=self.services.clock.now)
        if store is not None:
            from meeple.node.store import StoreRole

            if c.local is not None and "edge" in c.roles:
                from meeple.server.lobby.names import StoreReservations

                self.reservations = await asyncio.to_thread(StoreReservations.load, store)
            self.store = StoreRole(
                self.bus,
                self.ns,
                store,
                clock=self.services.clock,
                reservations=self.reservations,
            )
            await self.store.start()
            if c.local is not None:
                await self._legacy_logs()
        if "lobby" in c.roles:
            from meeple.cluster.lobbystate import LobbyState
            from meeple.cluster.registry import Names
            from meeple.node import cmpn402
            from meeple.node.lobby import LobbyRole
            from meeple.server.rooms import santorini, scrabble, spectrangle

            tables = Lobby(clock=self.services.clock, grace=0)
            spectrangle.name_rule(tables)  # as its listener sets it in meeple serve
            self.lobby = LobbyRole(
                c.name,
                self.bus,
                self.ns,
                self.leases,
                tables,
                {
                    scrabble.GAME: scrabble.TABLE_VARIANTS,
                    santorini.GAME: santorini.TABLE_VARIANTS,
                    spectrangle.GAME: spectrangle.TABLE_VARIANTS,
                    cmpn402.GAME: cmpn402.TABLE_VARIANTS,
                },
                LobbyState(plane, self.ns),
                timing=c.server.cluster,
                # Server bots' names, claimed where the edges' names are (meeple.node.names).
                names=Names(plane, self.ns),
                # A CMPN402 contest ([cmpn402.contest]) or a two-agent series (games N,
                # manual_start): its results are the rooms' logs' ends.
                contest=cluster_contest(c.server.cmpn402),
                admin_token=c.server.cmpn402.admin_token,
                log_ends=LogEnds(plane, self.ns).end,
            )
            await self.lobby.start()
            from meeple.node.names import NameService

            # Every lobby node answers edges' name claims (the bucket decides, not a leader).
            self.name_service = NameService(self.bus, self.ns, Names(plane, self.ns))
            await self.name_service.start()
            from meeple.cluster.registry import RejoinTokens
            from meeple.node.rejoin import RejoinService

            # Where a browser's token takes it back, for any edge (meeple.node.rejoin).
            self.rejoin_service = RejoinService(self.bus, self.ns, RejoinTokens(plane, self.ns))
            await self.rejoin_service.start()
        if "rooms" in c.roles:
            from meeple.node.rooms import RoomsRole
            from meeple.node.store import RemoteRecords
            from meeple.server.rooms.santorini import santorini_lobby
            from meeple.server.rooms.scrabble import scrabble_lobby
            from meeple.server.rooms.spectrangle import spectrangle_lobby

            games = Lobby(clock=self.services.clock, grace=0)
            # Services of the rooms' own: an edge in this process has its lobby there.
            rng = random.Random() if c.same_game_seed is None else _SameSeed(c.same_game_seed)
            services = Services(self.config.server, self.services.clock, rng=rng)
            services.lobby = games
            scrabble_lobby(services)  # the lexicon and the factories, as meeple serve
            santorini_lobby(services)
            spectrangle_lobby(services)
            records = RemoteRecords(
                self.bus,
                self.ns,
                asyncio.get_running_loop(),
                timeout=c.server.cluster.command_wait,
            )
            log = JetStreamLog(
                plane,
                self.ns,
                records,
                store_retry=(c.server.cluster.store_retry, c.server.cluster.store_retry_max),
                # One process: a finished game waits for its store in a task of its own,
                # its players told the end at once (as meeple serve's journal).
                store_later=c.local is not None,
            )
            self.log = log
            # The CMPN402 referee's games (meeple.node.cmpn402), their seats kept in KV.
            from meeple.cluster.registry import RejoinTokens
            from meeple.node.cmpn402 import SeatFinder, referee_rooms
            from meeple.server.rooms.scrabble import table_lexicon

            tokens = RejoinTokens(plane, self.ns)
            self.seat_finder = SeatFinder(
                self.bus, self.ns, tokens, closed=log.closed, ttl=c.server.cluster.token_ttl
            )
            referee_rooms(services, games, table_lexicon(services), self.seat_finder)
            await self.seat_finder.start()
            self.rooms = RoomsRole(
                c.name,
                self.bus,
                self.ns,
                log,
                self.leases,
                games,
                # Browser seats held for their rejoin token, found by it through any edge.
                grace=c.server.rejoin_grace,
                tokens=tokens,
                admin_token=c.server.cmpn402.admin_token,
                timing=c.server.cluster,
                # Server bots play here, in their rooms (their lexicons, their threads).
                services=services,
                # This process's edge, if it runs one: its earlier starts' seats are gone.
                edge_name=c.name if "edge" in c.roles else None,
                edge_start=self._start_id,
            )
            await self.rooms.start()
        if "edge" in c.roles:
            await self._start_edge()
        self._ready_checks()
        self._beat = asyncio.get_running_loop().create_task(self._heartbeat(), name="heartbeat")

    async def _start_ops(self) -> None:
        """Issue 35: the metrics switch, the loop-lag tick, the node's gauges, the
        metrics and health ports (not ready until every role has started)."""
        from meeple.server.metrics import METRICS, LoopLag
        from meeple.server.ops import HealthPort, OpsListener, server_readiness

        METRICS.enabled = self.config.server.metrics
        self._lag = LoopLag(self.services.clock)
        if METRICS.enabled:
            self._lag.start()
        METRICS.watch(self, _node_samples)
        readiness = server_readiness(self.services)
        host = self.config.server.host
        server = self.config.server
        metrics_port = self.config.metrics_port
        health_port = self.config.health_port
        for port, kind in (
            (server.metrics_port if metrics_port is None else metrics_port, OpsListener),
            (server.health_port if health_port is None else health_port, HealthPort),
        ):
            if port is not None:
                listener = (
                    HealthPort(readiness, host, port, clock=self.services.clock)
                    if kind is HealthPort
                    else OpsListener(readiness, host, port)
                )
                try:
                    await listener.start()
                except OSError as e:
                    await self.stop()
                    raise OSError(e.errno, f"{kind.name}: cannot listen on {host}:{port}") from e
                self.ops.append(listener)

    def _ready_checks(self) -> None:
        """What a node's /readyz asks: NATS, its listeners, its leases, its database."""
        from meeple.server.ops import StoreProbe, server_readiness

        readiness = server_readiness(self.services)
        plane = self.plane
        assert plane is not None
        # A node on NATS: its connection; the local backplane: open.
        readiness.add("nats", lambda: None if plane.connected else "not connected")
        if self.edge is not None:
            wanted = [n for n in self.config.listeners if self.config.server.listeners[n].enabled]
            readiness.add(
                "listeners",
                lambda: None if all(n in self.listeners for n in wanted) else "not listening",
            )
        if self.rooms is not None:
            readiness.add("leases", lambda: self.leases.failing)
        if self.store is not None:
            probe = StoreProbe(self.store.store.ping)
            behind = self.behind

            async def store_check() -> str | None:
                from meeple.server.store.journal import Health

                if behind is not None and behind.health is not Health.OK:
                    return f"{behind.health.value} ({behind.backlog} writes held)"
                return await probe()

            readiness.add("store", store_check)

    async def drain(self) -> None:
        """Issue 35: not ready first (the health port closes); then, for up to
        ``drain_timeout`` seconds, a rooms node lets its games finish (those still running
        move to another rooms node when its leases are released at the stop), and an
        edge, its listeners closed to new connections and no new table for its players,
        lets the games its players are in finish (each hears at the stop, in its
        protocol's words where the spec has them, that the server goes: the listeners'
        farewell). A second signal ends the wait."""
        from meeple.server.ops import server_readiness

        server_readiness(self.services).draining = True
        if self.rooms is not None:
            await self.rooms.stop_opening()  # new tables go to the other rooms nodes
        edge = self.edge
        if edge is not None:
            edge.draining = True  # the dialects refuse new tables in their own words
            for name, listener in self.listeners.items():
                if name == "web" and self.config.local is not None:
                    # One process (meeple serve): nowhere else to go; its pages say it
                    # stops (and, while it waits for a failing store, why).
                    continue
                listener.stop_accepting()  # a load balancer's next client goes elsewhere
        bound = self.config.server.drain_timeout
        if bound <= 0:
            return
        rooms = self.rooms

        def busy() -> int:
            return (len(rooms.rooms) if rooms is not None else 0) + (
                edge.playing if edge is not None else 0
            )

        if busy():
            logger.warning(
                "%s: draining: waiting up to %g s for %d games", self.config.name, bound, busy()
            )
        clock = self.services.clock
        deadline = clock.now() + bound
        while busy() and clock.now() < deadline and not self._stop_now:
            await clock.sleep(min(0.25, max(0.0, deadline - clock.now())))
        if busy():
            logger.warning("%s: draining: %d games still on; stopping", self.config.name, busy())

    async def _upgrade(self, local: str, store: Store) -> None:
        """The upgrade from ``meeple serve --runtime server`` (docs/server.md,
        "Upgrading"): the games it left open on ``database`` go into the backplane file
        ``local`` (opened on its own, no write-behind: each copy is on disk before the
        store's goes), then the takeover resumes them as this node's own. Idempotent and
        crash-safe (:func:`meeple.node.logfile.import_store_logs`)."""
        from meeple.cluster.local import LocalBackplane
        from meeple.node.logfile import import_store_logs

        try:
            if not await asyncio.to_thread(store.open_logs):
                return  # nothing to move: the file is not even opened here
        except Exception:  # the database's trouble is the store check's to report
            return
        plane = await LocalBackplane.open(
            local, self.ns, clock=self.services.clock, timing=self.config.server.cluster
        )
        try:
            moved = await import_store_logs(store, plane, self.ns, edge=self.config.name)
        finally:
            await plane.close()
        if moved:
            logger.warning(
                "%s: %d games left open by `meeple serve --runtime server` moved into %s;"
                " they resume here (%s)",
                self.config.name,
                len(moved),
                local,
                ", ".join(moved[:10]) + (", …" if len(moved) > 10 else ""),
            )

    async def _legacy_logs(self) -> None:
        """Games left open by ``meeple serve --runtime server`` on this database that
        the upgrade did not move (a CMPN402 referee's, a log that does not fit): named,
        so that the operator runs that runtime once more to finish them."""
        assert self.store is not None
        try:
            open_logs = await asyncio.to_thread(self.store.store.open_logs)
        except Exception:  # the database's trouble is the store check's to report
            return
        if open_logs:
            logger.warning(
                "%s: %d games left open by `meeple serve --runtime server` on this database"
                " not moved (%s); this runtime does not resume them: run that one to finish them",
                self.config.name,
                len(open_logs),
                ", ".join(open_logs[:10]) + (", …" if len(open_logs) > 10 else ""),
            )

    def _halt_unwritten(self, uids: set[str]) -> None:
        """The write-behind overflows: stop every running game whose updates it holds
        (each tells its seats in its protocol), stored when the file is back."""
        from meeple.server.rooms.room import END_STORE_UNAVAILABLE

        rooms = self.rooms.rooms if self.rooms is not None else {}
        for uid in uids:
            owned = rooms.get(uid)
            if owned is not None and not owned.room.finished:
                owned.room.log.error("halted: the store cannot keep this game's log")
                owned.room.halt(END_STORE_UNAVAILABLE)

    def _health_changed(self) -> None:
        """The store's health changed: the lobby's live banner follows."""
        if self.web is not None:
            with contextlib.suppress(Exception):
                self.web.app.state.ctx.publish_lobby()

    def _storing(self) -> bool:
        """Game updates not yet in the store: held by the write-behind, or a finished
        game its room is still storing."""
        if self.behind is not None and self.behind.held:
            return True
        if self.log is not None and self.log.storing:
            return True
        rooms = self.rooms.rooms if self.rooms is not None else {}
        return any(owned.room.finished for owned in rooms.values())

    async def wait_for_store(self) -> bool:
        """Issue 30.7, as ``meeple serve``: a stop while the store has not taken every
        game update waits for it, up to ``store_wait`` seconds (0: no bound) or a second
        signal, and says so (the log, every page's banner). True when the store took
        them all (or had nothing to take)."""
        behind = self.behind
        if behind is None or not self._storing():
            return True
        from meeple.server.store.journal import Health

        clock = self.services.clock
        if behind.health is Health.OK:
            deadline = clock.now() + self.config.server.shutdown_grace
            while self._storing() and clock.now() < deadline and not self._stop_now:
                await clock.sleep(self.config.server.cluster.stop_poll)
            if not self._storing():
                return True  # a healthy store's last writes: no fuss
        bound = self.config.server.store_wait
        behind.stopping(bound)
        self._health_changed()
        logger.warning(
            "stopping: the store has not taken %d game updates (%s); waiting %s for it "
            "(a second SIGINT/SIGTERM stops without them)",
            behind.backlog,
            behind.last_error or "no answer",
            f"up to {bound:g} s" if bound else "until it is back",
        )
        deadline = clock.now() + bound
        while self._storing() and not self._stop_now and (not bound or clock.now() < deadline):
            await clock.sleep(self.config.server.cluster.stop_poll)
        if not self._storing():
            logger.warning("stopping: the store took every game update; nothing is lost")
            return True
        logger.error(
            "stopping without the %d game updates the store did not take (%s)",
            behind.backlog,
            "second signal" if self._stop_now else f"{bound:g} s passed",
        )
        return False

    async def _start_edge(self) -> None:
        from meeple.node.edge import EdgeLobby
        from meeple.server.app import _create, budget_connections

        timing = self.config.server.cluster
        # As meeple serve's listeners: a connection budget under the open-file limit.
        serving = self.config.server.listeners
        budget_connections(
            self.services,
            sum(1 for n in self.config.listeners if n in serving and serving[n].enabled),
        )
        self.edge = EdgeLobby(
            self.bus, self.ns, self.config.name, timing=timing, start=self._start_id
        )
        await self.edge.start()
        self.services.lobby = self.edge
        # Names unique across every edge (the dialects' registry, meeple.node.names).
        from meeple.node.accounts import BusAccounts

        # Accounts from any store node (no database here): the web's pages and seats, and
        # the reserved names every protocol's names are checked against (fail closed).
        self.accounts = BusAccounts(self.bus, self.ns, timing.store_wait)
        # One process (meeple serve): the store's reserved names in memory, checked at
        # once, as MeepleServer's, so no name waits on an ask behind a loaded loop.
        here = self.reservations
        self.services.names = ClusterNames(
            self.bus,
            self.ns,
            self.config.name,
            ttl=self.config.name_ttl,
            timing=timing,
            reserved=self.accounts.reserved if here is None else None,
            reserved_now=None if here is None else here.reserved,
            one_process=self.config.local is not None,
        )
        self.edge.names = self.services.names
        # An edge plays no word (the rooms nodes check them), but loads the word lists
        # for the Scrabble preview and a finished game's analysis (issue 32.6), as
        # meeple serve: its Twente listener at its start, else the first browser that
        # needs them (meeple.web.seat.games_ready).
        # Spectrangle chat outside a game reaches every edge's players (meeple.node.chat).
        from meeple.node.chat import LobbyChat

        self.chat = LobbyChat(self.bus, self.ns, self.config.name)
        await self.chat.start()
        self.services.chat_hub = self.chat
        for name in self.config.listeners:
            listener_config = self.config.server.listeners[name]
            if not listener_config.enabled or name == "web":
                continue  # the web: below, with the edge's app
            target = EDGE_TARGETS.get(name, LISTENERS[name])
            listener = _create(target, self.services, name, listener_config)
            try:
                await listener.start()
            except OSError as e:
                host = self.config.server.host
                raise OSError(
                    e.errno, f"{name}: cannot listen on {host}:{listener_config.port}"
                ) from e
            self.listeners[name] = listener
            self.services.listening[name] = listener.port
        web_port = self.config.api_port
        web = self.config.server.listeners.get("web")
        if web_port is None and "web" in self.config.listeners and web is not None and web.enabled:
            web_port = web.port  # meeple serve's web port (issue 32.2)
        if web_port is not None:
            # The edge's web port: GET /api/cluster, and spectators on /ws (their rooms'
            # views heard over the bus once per watched room: meeple.node.views).
            from meeple.node.status import ClusterView
            from meeple.node.views import ViewRelay
            from meeple.node.web import edge_web_app
            from meeple.server.config import ListenerConfig
            from meeple.web.listener import WebListener

            self.view = ClusterView(self.bus, self.ns, timing=timing)
            await self.view.start()
            self.relay = ViewRelay(self.bus, self.ns, timing=timing)
            from meeple.node.store import BusRecords

            # Finished games and ratings for its pages, from any store node (no database).
            records = BusRecords(self.bus, self.ns, timing.store_wait)
            # The spectators' chat of a game, across the edges (issue 34.5).
            from meeple.node.chat import WatchChatRelay

            self.watch_chat = WatchChatRelay(self.bus, self.ns, self.config.name)
            app = edge_web_app(
                self.services,
                self.view,
                self.relay,
                self.edge,
                records,
                self.accounts,
                self.watch_chat,
                trouble=self.behind.trouble if self.behind is not None else lambda: None,
            )
            self.web = WebListener(self.services, "web", ListenerConfig(port=web_port), app)
            try:
                await self.web.start()
            except OSError as e:
                host = self.config.server.host
                raise OSError(e.errno, f"web: cannot listen on {host}:{web_port}") from e
            self.api_port = self.web.port
            if "web" in self.config.listeners:  # a listener as the protocols' (drain, readyz)
                self.listeners["web"] = self.web
                self.services.listening["web"] = self.web.port

    def info(self) -> dict[str, Any]:
        host = self.config.server.host
        return {
            "name": self.config.name,
            "roles": [r for r in ROLES if r in self.config.roles],
            "pid": os.getpid(),
            "address": [f"{host}:{listener.port}" for listener in self.listeners.values()],
            "listeners": {n: f"{host}:{lst.port}" for n, lst in self.listeners.items()},
            "lobby_leader": bool(self.lobby is not None and self.lobby.leader.is_set()),
            "rooms": [
                {
                    "uid": uid,
                    "game": owned.room.game_name,
                    # For the edges' lobby pages: who plays it, on which protocols.
                    "players": [s.name for s in owned.room.seats],
                    "protocols": [getattr(s, "protocol", "?") for s in owned.room.seats],
                }
                for uid, owned in (self.rooms.rooms.items() if self.rooms is not None else ())
            ],
            "at": time.time(),
        }

    def ready_line(self) -> str:
        parts = [f"node {self.config.name} ready", "roles=" + ",".join(self.info()["roles"])]
        parts.append(f"pid={os.getpid()}")
        parts.extend(f"{n}={a}" for n, a in self.info()["listeners"].items())
        if self.api_port is not None:
            parts.append(f"api={self.config.server.host}:{self.api_port}")
        parts.extend(f"{o.name}={self.config.server.host}:{o.port}" for o in self.ops)
        return " ".join(parts)

    async def _heartbeat(self) -> None:
        while True:
            with contextlib.suppress(Exception):
                beat = msgspec.convert(self.info(), schema.Beat)
                await self.bus.publish(self.ns.node(self.config.name), schema.encode(beat))
            await asyncio.sleep(self.config.server.cluster.heartbeat)

    def request_stop(self) -> None:
        """SIGINT/SIGTERM: drain, then stop; a second one: stop without draining."""
        if self._stopping.is_set():
            if not self._stop_now:
                logger.warning("%s: second signal: stopping now", self.config.name)
            self._stop_now = True
        else:
            logger.info("%s: shutting down", self.config.name)
        self._stopping.set()

    async def run(self) -> None:
        """Start, print the ready line, serve until SIGINT/SIGTERM, stop cleanly."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
        try:
            await self.start()
        except BaseException:
            await self.stop()  # what did start closes again: ports, leases, the file
            raise
        print(self.ready_line(), flush=True)
        try:
            await self._stopping.wait()
            await self.drain()
            with contextlib.suppress(Exception):
                await self.wait_for_store()
        finally:
            await self.stop()

    async def stop(self, timeout: float | None = None) -> None:
        """Stop every role (each within ``timeout`` seconds, ``cluster.stop_wait`` unless
        told: NATS may be gone)."""
        if timeout is None:
            timeout = self.config.server.cluster.stop_wait
        if self._beat is not None:
            self._beat.cancel()
        if self._lag is not None:
            self._lag.stop()
        for ops in self.ops:
            await ops.close()
        self.ops = []
        if self.web is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.web.close(0.5), timeout)
        if self.relay is not None:
            self.relay.close()
        if self.view is not None:
            await self.view.stop()
        steps: list[Awaitable[object]] = [
            listener.close(self.config.server.shutdown_grace)
            for listener in self.listeners.values()
            if listener is not self.web  # closed above
        ]
        names = self.services.names
        if self.edge is not None and isinstance(names, ClusterNames):
            steps.append(names.close())
        for closing in (self.edge, self.chat, self.watch_chat):
            if closing is not None:
                steps.append(closing.close())
        for role in (
            self.rooms,
            self.lobby,
            self.name_service,
            self.rejoin_service,
            self.seat_finder,
            self.store,
        ):
            if role is not None:
                steps.append(role.stop())
        for step in steps:
            try:
                await asyncio.wait_for(step, timeout)
            except Exception as e:
                logger.warning("%s: a role did not stop cleanly: %r", self.config.name, e)
        if self.log is not None and self.log.storing:
            # Their ends are in the log: the next start stores them (the takeover).
            logger.warning(
                "%s: %d finished games not stored yet; the next start stores them from their logs",
                self.config.name,
                len(self.log.storing),
            )
            for task in list(self.log.storing.values()):
                task.cancel()
        if self.behind is not None:
            self.dropped = self.behind.close()
        if self.store is not None:
            self.store.store.close()
        if self.plane is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.plane.close(), timeout)
        if self._claim is not None:
            self._claim.close()
            self._claim = None


def _node_samples(node: Node) -> list[tuple[str, tuple[str, ...], float]]:
    """A node's gauges at a scrape (:mod:`meeple.server.metrics`)."""
    from meeple.server.metrics import bounded

    name = bounded("node", "node", node.config.name)
    samples: list[tuple[str, tuple[str, ...], float]] = []
    if node.rooms is not None:
        samples.append(("meeple_rooms_owned", (name,), float(len(node.rooms.rooms))))
    if node.lobby is not None:
        samples.append(("meeple_lobby_leader", (name,), float(node.lobby.leader.is_set())))
    if node.web is not None:
        hub = node.web.app.state.hub
        samples.append(("meeple_spectators", (name,), float(hub.fanout.spectators)))
    return samples

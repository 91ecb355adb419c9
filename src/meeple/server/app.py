"""The server's lifecycle: start every enabled listener, serve, shut down gracefully.

Listeners are found by name in :data:`LISTENERS` (``name -> "module:function"``,
imported only when enabled, as uvicorn resolves its implementations). The function
is called as ``create(services, name, listener_config)`` and returns a
:class:`Listener`. A protocol joins the server by adding one line there.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import importlib
import logging
import random
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from meeple.server.clock import Clock, SystemClock
from meeple.server.config import ListenerConfig, ServerConfig
from meeple.server.edge.limits import ConnectionBudget, raise_descriptor_limit
from meeple.server.lobby.names import NameRegistry
from meeple.server.metrics import METRICS, LoopLag
from meeple.server.ops import HealthPort, OpsListener, StoreProbe, server_readiness

if TYPE_CHECKING:
    from meeple.games.scrabble.lexicon import Lexicon
    from meeple.server.edge.attempts import AttemptLimiter
    from meeple.server.edge.churn import ChurnLog
    from meeple.server.edge.spectrangle import SpectrangleHub
    from meeple.server.lobby.cmpn402_console import Console
    from meeple.server.lobby.names import StoreReservations
    from meeple.server.ops import Readiness
    from meeple.server.ports import LobbyPort
    from meeple.server.rooms.recovery import Recovered
    from meeple.server.store.database import DatabaseClaim, Store
    from meeple.server.store.journal import Journal

__all__ = ["LISTENERS", "Listener", "MeepleServer", "Services", "budget_connections"]

logger = logging.getLogger(__name__)


class Listener(Protocol):
    """One protocol's network endpoint."""

    name: str

    @property
    def port(self) -> int: ...

    async def start(self) -> None: ...

    def stop_accepting(self) -> None:
        """Accept no new connection (the port closes); those open go on (a drain)."""

    async def close(self, grace: float = 5.0) -> None: ...


# Implemented listeners. A protocol not listed here is not served yet; `meeple serve`
# says so at start-up rather than pretending.
LISTENERS: Mapping[str, str] = {
    "twente": "meeple.server.edge.twente:create_listener",
    "clarkson": "meeple.server.edge.clarkson:create_listener",
    "cmpn402": "meeple.server.edge.cmpn402:create_listener",
    "santorini": "meeple.server.edge.santorini:create_listener",
    "spectrangle": "meeple.server.edge.spectrangle:create_listener",
    "web": "meeple.web.listener:create_listener",
}


@dataclass
class Services:
    """What every listener shares: config, clock, names, the lobby, and the objects built
    once per process on first use, each a typed field (issue 32.1: no string-keyed
    lookup). A field is filled by its accessor in the module that owns the type
    (``server_store``, ``server_journal``, ``table_lexicon``, ``server_churn``, …); a test
    or a cluster node may fill one first (a lexicon already loaded, a node's chat hub)
    and the accessor then keeps it. :meth:`close` closes what was built."""

    config: ServerConfig
    clock: Clock = field(default_factory=SystemClock)
    names: NameRegistry = field(default_factory=NameRegistry)
    # The lobby this process's dialects sit their seats in (issue 32.1): meeple serve's
    # own (made at first use: meeple.server.lobby.tables.server_lobby), a rooms node's
    # (its games' factories), or a cluster edge's (meeple.node.edge.EdgeLobby).
    lobby: LobbyPort | None = None
    # Rooms seed their own RNG from this one, so a test that seeds it replays exactly.
    rng: random.Random = field(default_factory=random.Random)
    # Bound port per running listener, filled in as they start (the web lobby shows them).
    listening: dict[str, int] = field(default_factory=dict)
    # Client connections of every listener together (set by MeepleServer.start): the
    # descriptors below the open-file limit minus ``[limits] descriptor_reserve``.
    connections: ConnectionBudget | None = None
    # /readyz and the health port (meeple.server.ops.server_readiness).
    readiness: Readiness | None = None
    # One meeple serve per database, held from before the logs are read until the stop.
    database_claim: DatabaseClaim | None = None
    # The store and the journal over it (meeple.server.store.journal.server_store, …).
    store: Store | None = None
    journal: Journal | None = None
    # The names accounts reserved (meeple.server.lobby.names.server_reservations).
    reservations: StoreReservations | None = None
    # Connections opened, closed and refused (meeple.server.edge.churn.server_churn).
    churn: ChurnLog | None = None
    # The word list Scrabble tables check with, and those a table may choose, by name
    # (meeple.server.rooms.scrabble.table_lexicon, table_lexicons), and their loads in a
    # worker thread while the web serves (meeple.web.seat.games_ready).
    lexicon: Lexicon | None = None
    table_lexicons: Mapping[str, Lexicon] | None = None
    lexicon_loading: asyncio.Future[Lexicon] | None = None
    table_lexicons_loading: asyncio.Future[dict[str, Lexicon]] | None = None
    # The CMPN402 console (the listener's, or a cluster edge's RemoteConsole) the web's
    # /cmpn402 page drives, and the limiter of admin-token guesses.
    console: Console | None = None
    admin_attempts: AttemptLimiter | None = None
    # The Spectrangle listeners' players, for chat outside a game (a cluster edge puts
    # its meeple.node.chat.LobbyChat here first, so the chat reaches every edge).
    chat_hub: SpectrangleHub | None = None

    def close(self, journal_grace: float = 5.0) -> list[str]:
        """Close what was built, each after what is built on it: the journal (it writes
        what it holds, for up to ``journal_grace`` seconds), the churn log, the store,
        then the database claim. Returns the writes the journal dropped (named)."""
        dropped: list[str] = []
        if self.journal is not None:
            dropped = self.journal.close(journal_grace)
        for resource in (self.churn, self.store, self.database_claim):
            if resource is not None:
                resource.close()
        return dropped


class MeepleServer:
    """Runs the enabled listeners: ``await start()``, then ``serve_forever()`` or ``stop()``."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        clock: Clock | None = None,
        listeners: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.services = Services(config, clock or SystemClock(), rng=rng or random.Random())
        self._registry = LISTENERS if listeners is None else listeners
        self.listeners: dict[str, Listener] = {}
        self.recovered: Recovered | None = None
        self._stopping = asyncio.Event()
        # A second SIGINT/SIGTERM: stop without waiting for the store (issue 30.7).
        self._stop_now = asyncio.Event()
        # The writes the stop dropped (named in the log), once stopped.
        self.dropped: list[str] = []
        # Issue 35: /metrics, /readyz on a port of their own, the TCP health check, and
        # the event loop's lag (docs/operations.md).
        self.ops: list[OpsListener | HealthPort] = []
        self._lag = LoopLag(self.services.clock)

    @property
    def ports(self) -> dict[str, int]:
        """Bound port per running listener."""
        return {name: listener.port for name, listener in self.listeners.items()}

    async def start(self) -> None:
        """Build every enabled, implemented listener, restore the games the last process
        left unfinished (docs/durability.md), then start the listeners; fail fast if one
        cannot bind."""
        # Issue 22: the soft open-file limit up to the hard one, and a connection budget
        # below it, so that idle clients can never take the descriptors the store, the
        # logs and accept() need; an EMFILE that happens all the same is logged once.
        budget_connections(
            self.services, sum(1 for c in self.config.listeners.values() if c.enabled)
        )
        await self._start_ops()
        built: list[tuple[str, ListenerConfig, Listener]] = []
        for name, listener_config in self.config.listeners.items():
            if not listener_config.enabled:
                continue
            target = self._registry.get(name)
            if target is None:
                logger.info("%s: protocol not implemented yet; not listening", name)
                continue
            built.append(
                (name, listener_config, _create(target, self.services, name, listener_config))
            )
        if built:
            from meeple.server.rooms.recovery import recover  # imports every game's room
            from meeple.server.store.database import DatabaseClaim, DatabaseInUse

            # Before any log is read: one meeple serve per database (DatabaseClaim).
            database = self.config.database
            try:
                if self.services.database_claim is None:
                    self.services.database_claim = DatabaseClaim(database)
            except DatabaseInUse:
                await self.stop()
                raise
            self.recovered = recover(self.services)
            self._reserve_names()
        for name, listener_config, listener in built:
            try:
                await listener.start()
            except OSError as e:
                await self.stop()
                raise OSError(
                    e.errno, f"{name}: cannot listen on {self.config.host}:{listener_config.port}"
                ) from e
            self.listeners[name] = listener
            self.services.listening[name] = listener.port
        self._ready_checks([name for name, _, _ in built])

    def _reserve_names(self) -> None:
        """Issue 32.6: a wire client's name (Twente, Clarkson, AM27, Spectrangle) is
        refused when an account reserved it at ``/account``, as on a cluster's edges
        (:class:`~meeple.server.lobby.names.StoreReservations`, read here once)."""
        from meeple.server.lobby.names import server_reservations

        names = self.services.names
        if names.reserved is None and names.reserved_now is None:
            names.reserved_now = server_reservations(self.services).reserved

    async def _start_ops(self) -> None:
        """The metrics switch, the loop-lag tick, ``metrics_port`` and ``health_port``
        (not ready until the listeners are up: the health port closes meanwhile)."""
        METRICS.enabled = self.config.metrics
        if self.config.metrics:
            self._lag.start()
        readiness = server_readiness(self.services)
        host = self.config.host
        for port, kind in (
            (self.config.metrics_port, OpsListener),
            (self.config.health_port, HealthPort),
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

    def _ready_checks(self, names: list[str]) -> None:
        """What /readyz asks of ``meeple serve``: its listeners, its store."""
        readiness = server_readiness(self.services)
        readiness.add(
            "listeners",
            lambda: None if names and all(n in self.listeners for n in names) else "not listening",
        )
        store = self.services.store
        if store is not None:
            probe = StoreProbe(store.ping)

            async def store_check() -> str | None:
                from meeple.server.store.journal import Health

                journal = self.services.journal
                if journal is not None and journal.health is not Health.OK:
                    return f"{journal.health.value} ({journal.backlog} writes held)"
                return await probe()

            readiness.add("store", store_check)

    async def drain(self) -> None:
        """Issue 35: turn not ready, refuse new tables, and let the running games finish,
        for up to ``drain_timeout`` seconds (or until a second signal)."""
        from meeple.server.lobby.tables import Lobby

        server_readiness(self.services).draining = True
        lobby = self.services.lobby
        if not isinstance(lobby, Lobby):  # none made yet: no table, no game to wait for
            return
        lobby.draining = True
        bound = self.config.drain_timeout
        clock = self.services.clock
        deadline = clock.now() + bound
        if bound > 0 and lobby.rooms:
            logger.warning(
                "draining: no new table; waiting up to %g s for %d games to finish",
                bound,
                len(lobby.rooms),
            )
        while lobby.rooms and clock.now() < deadline and not self._stop_now.is_set():
            await clock.sleep(min(0.25, max(0.0, deadline - clock.now())))
        if bound > 0 and lobby.rooms:
            logger.warning("draining: %d games still running; stopping them", len(lobby.rooms))

    async def serve_forever(self, *, start: bool = False) -> None:
        """Serve until SIGINT/SIGTERM (or :meth:`request_stop`), then shut down gracefully.

        With ``start=True`` the listeners are started here, after the signal handlers
        are in place, so that a signal during start-up (the lexicon loading, a listener
        binding) is a clean stop too rather than the process dying mid-start.
        """
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
        try:
            if start:
                await self.start()
                if not self.listeners:
                    logger.warning(
                        "no listener is running (implemented: %s)", ", ".join(self._registry)
                    )
                    return
            await self._stopping.wait()
            await self.drain()
        finally:
            # The handlers stay while stopping: a second signal is "stop now" (issue
            # 30.7), not the default action that would drop the journal's writes unsaid.
            try:
                await self.stop()
            finally:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    with contextlib.suppress(NotImplementedError, RuntimeError):
                        loop.remove_signal_handler(sig)

    def request_stop(self) -> None:
        """SIGINT/SIGTERM: stop; a second one while the stop waits for the store: stop
        without the writes it has not taken (named in the log)."""
        if self._stopping.is_set():
            if not self._stop_now.is_set():
                logger.warning("second signal: stopping without waiting for the store")
            self._stop_now.set()
            return
        logger.info("shutting down")
        self._stopping.set()

    async def _wait_for_store(self) -> bool:
        """Issue 30.7: a stop while the journal holds writes the store has not taken
        waits for them, up to ``store_wait`` seconds (0: no bound) or a second signal,
        and says so: the log, and the banner of every page and of the lobby's and the
        console's live view. True when the store took them all (or had nothing to take).
        """
        journal = self.services.journal
        if journal is None or journal.backlog == 0:
            return True
        from meeple.server.store.journal import Health

        if journal.health is Health.OK and await journal.drain(self.config.shutdown_grace):
            return True  # a healthy store's last writes: no fuss
        bound = self.config.store_wait
        journal.stopping(bound)
        from meeple.server.lobby.tables import Lobby

        lobby = self.services.lobby
        if isinstance(lobby, Lobby):
            lobby.publish()  # the live banner (the lobby snapshot's ``store``)
        logger.warning(
            "stopping: the store has not taken %d game updates (%s); waiting %s for it "
            "(a second SIGINT/SIGTERM stops without them)",
            journal.backlog,
            journal.last_error or "no answer",
            f"up to {bound:g} s" if bound else "until it is back",
        )
        drained = asyncio.ensure_future(journal.drain(bound or None))
        now = asyncio.ensure_future(self._stop_now.wait())
        try:
            await asyncio.wait({drained, now}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            now.cancel()
            if not drained.done():
                drained.cancel()
        took = drained.done() and not drained.cancelled() and drained.result()
        if took:
            logger.warning("stopping: the store took every game update; nothing is lost")
        else:
            logger.error(
                "stopping without the %d game updates the store did not take (%s)",
                journal.backlog,
                "second signal" if self._stop_now.is_set() else f"{bound:g} s passed",
            )
        return bool(took)

    async def stop(self) -> None:
        """Wait for a failing store (:meth:`_wait_for_store`), stop accepting, tell every
        player, close every connection, then close resources."""
        server_readiness(self.services).draining = True
        self._lag.stop()
        stored = True
        with contextlib.suppress(Exception):
            stored = await self._wait_for_store()
        listeners, self.listeners = [*self.listeners.values(), *self.ops], {}
        self.ops = []
        await asyncio.gather(
            *(listener.close(self.config.shutdown_grace) for listener in listeners),
            return_exceptions=True,
        )
        # Last built, first closed: the journal (built on the store) writes what it
        # holds before the store closes; if the stop gave up on the store, it has a
        # moment only, then names what it drops.
        await self.services.names.close()  # the name checks under way: nobody waits
        self.dropped = self.services.close(5.0 if stored else 0.5)


def budget_connections(services: Services, listeners: int) -> None:
    """Issue 22: the soft open-file limit up to the hard one, and a connection budget
    below it shared by ``listeners`` listeners (``services.connections``), so that idle
    clients can never take the descriptors the store, the logs and accept() need; an
    EMFILE that happens all the same is logged once (:class:`_QuietEmfile`). Called by
    whatever starts listeners: :class:`MeepleServer`, a node's edge."""
    limit = raise_descriptor_limit()
    services.connections = ConnectionBudget(
        limit, services.config.limits.descriptor_reserve, listeners=listeners
    )
    logger.info(
        "open-file limit %d: up to %d client connections", limit, services.connections.capacity
    )
    _quiet_emfile(asyncio.get_running_loop())


def _create(target: str, services: Services, name: str, config: ListenerConfig) -> Listener:
    module_name, _, function = target.partition(":")
    factory = getattr(importlib.import_module(module_name), function)
    listener: Listener = factory(services, name, config)
    return listener


_DESCRIPTOR_ERRORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class _QuietEmfile:
    """asyncio reports every accept() that found no free descriptor (and retries a second
    later, per listener): this exception handler logs the first one, then a count every
    minute at most, and passes anything else to the handler it replaced."""

    def __init__(
        self, previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None
    ) -> None:
        self.previous = previous
        self.count = 0
        self.logged_at = -1e9

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _DESCRIPTOR_ERRORS:
            self.count += 1
            now = loop.time()
            if now - self.logged_at >= 60:
                logger.error(
                    "accept() failed: %s (%d times so far; accepting again in a moment)",
                    exc.strerror,
                    self.count,
                )
                self.logged_at = now
            return
        if self.previous is not None:
            self.previous(loop, context)
        else:
            loop.default_exception_handler(context)


def _quiet_emfile(loop: asyncio.AbstractEventLoop) -> None:
    """Install :class:`_QuietEmfile` on ``loop`` (once)."""
    previous = loop.get_exception_handler()
    if not isinstance(previous, _QuietEmfile):
        loop.set_exception_handler(_QuietEmfile(previous))

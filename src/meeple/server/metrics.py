"""Prometheus metrics: every metric's name, help and labels, in one place (issue 35).

Every ``meeple serve`` and ``meeple node`` exports :data:`METRICS` at ``/metrics``
(the web or api port, or ``--metrics-port``; :mod:`meeple.server.ops`), in the text
format Prometheus scrapes. The code that sees an event calls one method here (a
connection refused, a command delivered, a log write made); values that are a state
rather than an event (the journal's queue, the store's health, the rooms a node owns)
are read at scrape time from the objects registered with :meth:`Metrics.watch`.

Labels are bounded: ``protocol``, ``game``, ``reason``, ``state``, ``node`` take values
the code chooses (a listener's name, a game's name, a fixed reason), never a player's
name, a room's uid or an address. A label that nevertheless sees more than
:data:`MAX_LABEL_VALUES` values keeps the first ones and counts the rest as ``other``
(a reason made from an exception's text must not grow the table).

``METRICS.enabled = False`` (``[metrics] enabled = false``; benchmarks/server_load.py
``--no-metrics``) makes every event method return at once: the cost of metrics is
measured against that.

The metrics (names as exported, the ``meeple_`` prefix included) and what each means are
listed in docs/operations.md.
"""

from __future__ import annotations

import bisect
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from meeple.server.clock import Clock, Timer

__all__ = [
    "CONTENT_TYPE",
    "MAX_LABEL_VALUES",
    "METRICS",
    "LoopLag",
    "Metrics",
    "Sample",
    "bounded",
]

# The *_created samples double the exposition for nothing an alert or a graph uses.
cast(Callable[[], None], disable_created_metrics)()

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Distinct values one label of one metric may take before the rest count as "other".
MAX_LABEL_VALUES = 32
# Characters of a label value kept (a longer reason is cut).
_MAX_LABEL_LENGTH = 48

# Command to delivery, log writes: from 0.5 ms to 10 s.
_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
# How late a periodic tick of the event loop runs: from 1 ms to 5 s.
_LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

_seen_lock = threading.Lock()


class _Bounds:
    """The values each label has taken, per metric (the journal's thread counts too)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], set[str]] = {}

    def __call__(self, metric: str, label: str, value: str) -> str:
        value = value[:_MAX_LABEL_LENGTH] or "none"
        key = (metric, label)
        seen = self._seen.get(key)
        if seen is not None and value in seen:
            return value
        with _seen_lock:
            seen = self._seen.setdefault(key, set())
            if value in seen:
                return value
            if len(seen) >= MAX_LABEL_VALUES:
                return "other"
            seen.add(value)
            return value


bounded = _Bounds()


class _Watched(Collector):
    """Gauges read at scrape time from the objects registered with :meth:`Metrics.watch`
    (summed per label set over every object alive: one server per process in production,
    several in a test run)."""

    def __init__(self) -> None:
        self._sources: weakref.WeakKeyDictionary[Any, list[Callable[[Any], Iterable[Sample]]]]
        self._sources = weakref.WeakKeyDictionary()
        self._help: dict[str, tuple[str, tuple[str, ...]]] = {}

    def family(self, name: str, documentation: str, labels: tuple[str, ...] = ()) -> None:
        self._help[name] = (documentation, labels)

    def add(self, owner: Any, read: Callable[[Any], Iterable[Sample]]) -> None:
        reads = self._sources.setdefault(owner, [])
        if read not in reads:
            reads.append(read)

    def remove(self, owner: Any) -> None:
        self._sources.pop(owner, None)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        totals: dict[str, dict[tuple[str, ...], float]] = {name: {} for name in self._help}
        for owner, reads in list(self._sources.items()):
            for read in reads:
                try:
                    samples = list(read(owner))
                except Exception:  # a source that cannot say now: left out of this scrape
                    continue
                for name, labels, value in samples:
                    table = totals.setdefault(name, {})
                    table[labels] = table.get(labels, 0.0) + value
        for name, (documentation, label_names) in self._help.items():
            family = GaugeMetricFamily(name, documentation, labels=list(label_names))
            for labels, value in sorted(totals.get(name, {}).items()):
                family.add_metric(list(labels), value)
            yield family


class _Histogram:
    """Counts per bucket and a sum, for one writer thread (the event loop)."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: past every bound (+Inf)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value


class _Commands(Collector):
    """``meeple_commands_total`` and ``meeple_command_seconds`` from the hand-kept
    histograms of :meth:`Metrics.command`, per protocol."""

    def __init__(self, histograms: dict[str, _Histogram]) -> None:
        self._histograms = histograms

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        commands = CounterMetricFamily(
            "meeple_commands", "Players' commands handled by rooms.", labels=["protocol"]
        )
        seconds = HistogramMetricFamily(
            "meeple_command_seconds",
            "From a command's arrival in its room to its deliveries (its log entry durable).",
            labels=["protocol"],
        )
        for protocol, histogram in sorted(self._histograms.items()):
            buckets, cumulative = _buckets(histogram)
            commands.add_metric([protocol], float(cumulative))
            seconds.add_metric([protocol], buckets, histogram.total)
        yield commands
        yield seconds


def _buckets(histogram: _Histogram) -> tuple[list[tuple[str, float]], int]:
    """Prometheus' cumulative buckets of ``histogram``, and its count."""
    cumulative, buckets = 0, []
    for bound, count in zip((*histogram.bounds, float("inf")), list(histogram.counts), strict=True):
        cumulative += count
        buckets.append(("+Inf" if bound == float("inf") else repr(bound), float(cumulative)))
    return buckets, cumulative


class _LogWrites(Collector):
    """``meeple_log_write_seconds`` and ``meeple_log_writes_total``, kept by hand."""

    def __init__(self, histogram: _Histogram, writes: list[int]) -> None:
        self._histogram = histogram
        self._writes = writes

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        seconds = HistogramMetricFamily(
            "meeple_log_write_seconds",
            "One log write to the store (a group commit of the journal, a JetStream append).",
        )
        buckets, _ = _buckets(self._histogram)
        seconds.add_metric([], buckets, self._histogram.total)
        yield seconds
        yield CounterMetricFamily(
            "meeple_log_writes", "Log writes made durable.", value=float(self._writes[0])
        )


# One value of a watched gauge: (metric name, label values, value).
Sample = tuple[str, tuple[str, ...], float]


class Metrics:
    """Every metric of the process, in its own registry (see the module doc)."""

    def __init__(self) -> None:
        self.enabled = True
        r = self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=r)  # CPU, memory, open descriptors (Linux)
        PlatformCollector(registry=r)
        # --- connections (every listener's ChurnLog) ---
        self.connections_open = Gauge(
            "meeple_connections_open", "Client connections open now.", ["protocol"], registry=r
        )
        self.connections_opened = Counter(
            "meeple_connections_opened", "Client connections accepted.", ["protocol"], registry=r
        )
        self.connections_closed = Counter(
            "meeple_connections_closed",
            "Client connections closed, by reason (peer, idle, flood, shutdown...).",
            ["protocol", "reason"],
            registry=r,
        )
        self.connections_refused = Counter(
            "meeple_connections_refused",
            "Connections or requests refused, by reason (address limit, budget, origin, host).",
            ["protocol", "reason"],
            registry=r,
        )
        # --- games (every Room) ---
        self.rooms_running = Gauge(
            "meeple_rooms_running", "Rooms (games) running in this process.", ["game"], registry=r
        )
        self.games_started = Counter(
            "meeple_games_started",
            "Games started (or resumed from their log) in this process.",
            ["game"],
            registry=r,
        )
        self.games_finished = Counter(
            "meeple_games_finished",
            "Games finished, by end reason (the stored record's end_reason).",
            ["game", "reason"],
            registry=r,
        )
        # On every turn: counted by hand, exported at scrape time (_Commands).
        self._commands: dict[str, _Histogram] = {}
        r.register(_Commands(self._commands))
        # --- the log (the journal; a cluster's JetStream appends) ---
        # Kept by hand too (one writer: the journal's thread, or the loop on a node).
        self._log = _Histogram(_LATENCY_BUCKETS)
        self._log_writes = [0]
        r.register(_LogWrites(self._log, self._log_writes))
        self.log_retries = Counter(
            "meeple_log_retries",
            "Log writes that failed and will be tried again (the store failing).",
            registry=r,
        )
        # --- the cluster ---
        self.bus_request_seconds = Histogram(
            "meeple_bus_request_seconds",
            "A request over the bus (NATS) to its answer.",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.bus_timeouts = Counter(
            "meeple_bus_timeouts", "Bus requests that got no answer in time.", registry=r
        )
        self.lease_takeovers = Counter(
            "meeple_lease_takeovers",
            "Rooms this node took over from an owner whose lease lapsed.",
            registry=r,
        )
        self.leader_changes = Counter(
            "meeple_lobby_leader_changes",
            "Times this node became or stopped being the lobby's leader.",
            ["change"],
            registry=r,
        )
        # --- the process ---
        self.loop_lag = Histogram(
            "meeple_event_loop_lag_seconds",
            "How late a periodic tick of the event loop runs (a blocked loop shows here).",
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self.watched = _Watched()
        w = self.watched
        w.family("meeple_journal_queue", "Log writes queued for the store, not yet durable.")
        w.family(
            "meeple_store_state",
            "1 for the store's state (ok, retrying, overflowing, closed), 0 for the others.",
            ("state",),
        )
        w.family("meeple_ready", "1 when the process is ready for traffic (/readyz).")
        w.family("meeple_draining", "1 while the process drains before it stops.")
        w.family("meeple_rooms_owned", "Rooms this node owns (holds the lease of).", ("node",))
        w.family("meeple_lobby_leader", "1 on the lobby's leader node.", ("node",))
        w.family("meeple_spectators", "Viewers watching rooms through this edge.", ("node",))
        r.register(w)

    # --- events: one call at each site ---------------------------------------------

    def connection_opened(self, protocol: str) -> None:
        if self.enabled:
            protocol = bounded("connections", "protocol", protocol)
            self.connections_opened.labels(protocol).inc()
            self.connections_open.labels(protocol).inc()

    def connection_closed(self, protocol: str, reason: str) -> None:
        if self.enabled:
            protocol = bounded("connections", "protocol", protocol)
            reason = bounded("connections_closed", "reason", reason)
            self.connections_closed.labels(protocol, reason).inc()
            self.connections_open.labels(protocol).dec()

    def connection_refused(self, protocol: str, reason: str) -> None:
        if self.enabled:
            protocol = bounded("connections", "protocol", protocol)
            reason = bounded("connections_refused", "reason", reason)
            self.connections_refused.labels(protocol, reason).inc()

    def room_started(self, game: str) -> None:
        if self.enabled:
            game = bounded("games", "game", game)
            self.games_started.labels(game).inc()
            self.rooms_running.labels(game).inc()

    def room_finished(self, game: str, reason: str) -> None:
        if self.enabled:
            game = bounded("games", "game", game)
            self.games_finished.labels(game, bounded("games", "reason", reason)).inc()
            self.rooms_running.labels(game).dec()

    def command(self, protocol: str, arrived: float) -> None:
        """A command that arrived at ``arrived`` (:func:`time.perf_counter`) is delivered.

        The turn path: a dict lookup and a bisect, no lock (rooms run on the event loop,
        and so does a scrape); prometheus_client's labels() and observe() cost several
        times that (docs/operations.md, the cost figure)."""
        if self.enabled:
            histogram = self._commands.get(protocol)
            if histogram is None:
                label = bounded("commands", "protocol", protocol)
                histogram = self._commands.setdefault(label, _Histogram(_LATENCY_BUCKETS))
                if label != protocol:  # an "other": looked up through bounded() each time
                    histogram.observe(time.perf_counter() - arrived)
                    return
            histogram.observe(time.perf_counter() - arrived)

    def log_written(self, seconds: float, writes: int = 1) -> None:
        if self.enabled:
            self._log.observe(seconds)
            self._log_writes[0] += writes

    def log_retry(self) -> None:
        if self.enabled:
            self.log_retries.inc()

    def bus_request(self, seconds: float, *, timed_out: bool = False) -> None:
        if self.enabled:
            if timed_out:
                self.bus_timeouts.inc()
            else:
                self.bus_request_seconds.observe(seconds)

    def takeover(self) -> None:
        if self.enabled:
            self.lease_takeovers.inc()

    def leader_change(self, leader: bool) -> None:
        if self.enabled:
            self.leader_changes.labels("elected" if leader else "lost").inc()

    def watch(self, owner: Any, read: Callable[[Any], Iterable[Sample]]) -> None:
        """Read ``read(owner)``'s samples at every scrape while ``owner`` lives."""
        self.watched.add(owner, read)

    def unwatch(self, owner: Any) -> None:
        self.watched.remove(owner)

    def exposition(self) -> bytes:
        """The text Prometheus scrapes."""
        return generate_latest(self.registry)


METRICS = Metrics()


class LoopLag:
    """A tick every ``interval`` seconds on ``clock``; how late each runs goes into
    ``meeple_event_loop_lag_seconds``. ``start()`` on the running loop, ``stop()``."""

    def __init__(self, clock: Clock, interval: float = 0.5, metrics: Metrics = METRICS) -> None:
        self._clock = clock
        self.interval = interval
        self._metrics = metrics
        self._timer: Timer | None = None
        self._due = 0.0

    def start(self) -> None:
        if self._timer is None:
            self._arm()

    def _arm(self) -> None:
        self._due = self._clock.now() + self.interval
        self._timer = self._clock.call_later(self.interval, self._tick)

    def _tick(self) -> None:
        if self._metrics.enabled:
            self._metrics.loop_lag.observe(max(0.0, self._clock.now() - self._due))
        self._arm()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

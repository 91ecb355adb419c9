"""Server settings: defaults, a TOML file, then command-line flags, in that order.

A config file looks like this (every key optional)::

    host = "0.0.0.0"
    lexicon = "wordnik"          # a name, or a path to a word list
    table_lexicons = ["gcide"]   # more word lists a browser's Scrabble table may choose
    database = "var/meeple.sqlite3"
    idle_timeout = 900           # seconds without a byte from a peer before it is closed
    max_message_size = 8192      # bytes; larger messages get the protocol's error reply
    shutdown_grace = 5           # seconds to say goodbye on SIGINT/SIGTERM
    rejoin_grace = 30            # seconds a dropped browser seat is held for its rejoin
    log_backlog = 10000          # log writes kept in memory while the database fails
    store_wait = 60              # seconds a stop waits for a failing database (0: no bound)
    drain_timeout = 0            # seconds a stop waits for running games (docs/operations.md)
    bot_think_time = 1.0         # seconds a server bot thinks a move at its hardest level
    metrics = true               # Prometheus metrics at /metrics (false: none counted)
    metrics_port = 9100          # /metrics, /healthz, /readyz on a port of their own
    health_port = 9101           # a TCP load balancer's check (open and "ok" while ready)

    [listeners.twente]
    port = 7777
    enabled = true

    [cmpn402]                    # the CMPN402 contest referee (docs/protocols/cmpn402.md)
    manual_start = false         # true: the admin starts each game
    games = 1                    # games per series, first player alternating
    ping_interval = 1.0          # seconds between WebSocket pings (ERRATA)
    admin_token = "s3cret"       # for the admin HTTP endpoint; unset: a random one, logged
    player_time = 600            # seconds on each player's clock
    total_time = 1200            # seconds on the game clock
    challenge_time = 10          # seconds of a challenge window
    [cmpn402.contest]            # contest mode: many agents, one schedule (docs/contests.md)
    format = "round-robin"       # or "swiss"
    games = 2                    # games per pairing, first player alternating
    rounds = 3                   # Swiss rounds (default: enough to rank, log2 of the field)
    boards = 2                   # games at once
    agents = 8                   # start once this many agents have sent NAME (0: the admin starts)
    resume_window = 120          # seconds a dropped agent has to come back to its game
    show_timeout = 60            # seconds a game waits for an absent agent before a forfeit
    [web]                        # pages and the browser's WebSocket (docs/web.md)
    port = 8000                  # same as [listeners.web] port
    enabled = true
    max_message_size = 4096      # bytes of one browser message; larger: an error reply
    trusted_proxies = []         # addresses whose X-Forwarded-For is believed (none)
    origins = []                 # more origins allowed to open /ws (its own always are)
    hosts = []                   # more Host names answered ("name" or "name:port"; "*": any)
    header_timeout = 10          # seconds to send a request's headers (slowloris)
    keep_alive_timeout = 5       # seconds an idle keep-alive connection is kept
    [santorini]                  # the AM27 listener (see docs/protocols/santorini.md)
    framing = "object-stream"    # server → client: "object-stream" (ERRATA) or "lines"
    ping_interval = 0.5          # seconds between the server's PINGs
    heartbeat_timeout = 5        # seconds of silence before a client counts as gone
    [limits]                     # every listener (see docs/server.md, "Limits")
    max_connections_per_address = 64  # open connections from one IP address; 0: no limit
    partial_message_timeout = 30 # seconds a message may stay unfinished (slowloris)
    message_rate = 200           # messages a second one connection may send (soft) ...
    message_burst = 500          # ... and at once; past it: the protocol's error, unread
    hard_message_rate = 1000     # every message counts here: past this rate ...
    hard_message_burst = 2500    # ... and burst, the connection is closed
    messages_per_turn = 32       # messages read from one socket before others get a turn
    descriptor_reserve = 128     # file descriptors kept for the store, logs and listeners
    max_tables_per_address = 16  # open tables one IP address may have opened; 0: no limit
    max_tables_per_connection = 4 # ... and one connection
    [cluster]                    # the timings of meeple node (docs/cluster.md, "Timings")
    heartbeat = 1.0              # seconds between a node's heartbeats
    ask_wait = 1.0               # seconds one ask between nodes waits for its answer ...
    ask_pause = 0.05             # ... the pause before asking again when nobody answers ...
    ask_patience = 10.0          # ... and how long it asks before it gives up

Unknown keys are an error, so a typo does not silently fall back to a default.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from meeple.games.scrabble.lexicon import DEFAULT_LEXICON
from meeple.server.edge.hosts import split_host

__all__ = [
    "CONTEST_FORMATS",
    "DEFAULT_PORTS",
    "ClusterConfig",
    "Cmpn402Config",
    "ConfigError",
    "ContestConfig",
    "LimitsConfig",
    "ListenerConfig",
    "SantoriniConfig",
    "ServerConfig",
    "WebConfig",
    "load_config",
]

# Ports from ARCHITECTURE.md: the specs name 9000 (Clarkson) and 4000 (Spectrangle).
DEFAULT_PORTS: Mapping[str, int] = {
    "twente": 7777,
    "clarkson": 9000,
    "cmpn402": 8765,
    "santorini": 7778,
    "spectrangle": 4000,
    "web": 8000,  # HTTP and WebSocket for browsers (docs/web.md)
}


class ConfigError(ValueError):
    """A config file or flag that cannot be used, with the reason."""


@dataclass(frozen=True, slots=True)
class ListenerConfig:
    """One protocol listener: where it listens, and whether it runs at all."""

    port: int
    enabled: bool = True


CONTEST_FORMATS = ("round-robin", "swiss")


@dataclass(frozen=True, slots=True)
class ContestConfig:
    """Contest mode of the CMPN402 referee (the ``[cmpn402.contest]`` table); times in seconds."""

    format: str = "round-robin"
    games: int = 1
    rounds: int = 0  # Swiss rounds; 0: ceil(log2(agents))
    boards: int = 1
    agents: int = 0  # start when this many agents have named themselves; 0: the admin starts
    resume_window: float = 120.0
    show_timeout: float = 60.0

    def validate(self) -> None:
        if self.format not in CONTEST_FORMATS:
            raise ConfigError(f"cmpn402.contest.format must be one of {', '.join(CONTEST_FORMATS)}")
        if not 1 <= self.games <= 1000:
            raise ConfigError("cmpn402.contest.games must be 1–1000")
        if not 0 <= self.rounds <= 1000:
            raise ConfigError("cmpn402.contest.rounds must be 0–1000")
        if not 1 <= self.boards <= 256:
            raise ConfigError("cmpn402.contest.boards must be 1–256")
        if not (self.agents == 0 or 2 <= self.agents <= 1024):
            raise ConfigError("cmpn402.contest.agents must be 0 or 2–1024")
        for key in ("resume_window", "show_timeout"):
            if not 0 < getattr(self, key) <= 86_400:
                raise ConfigError(f"cmpn402.contest.{key} must be positive (seconds, ≤ a day)")


_CONTEST_TYPES: Mapping[str, tuple[type, ...]] = {
    "format": (str,),
    "games": (int,),
    "rounds": (int,),
    "boards": (int,),
    "agents": (int,),
    "resume_window": (int, float),
    "show_timeout": (int, float),
}


def _contest(raw: object, base: ContestConfig | None) -> ContestConfig:
    if not isinstance(raw, dict):
        raise ConfigError("[cmpn402.contest] must be a table")
    unknown = set(raw) - set(_CONTEST_TYPES)
    if unknown:
        raise ConfigError(f"unknown keys in [cmpn402.contest]: {', '.join(sorted(unknown))}")
    for key, value in raw.items():
        if not isinstance(value, _CONTEST_TYPES[key]) or isinstance(value, bool):
            raise ConfigError(f"cmpn402.contest.{key} has the wrong type: {value!r}")
    config = replace(base or ContestConfig(), **raw)
    config.validate()
    return config


@dataclass(frozen=True, slots=True)
class Cmpn402Config:
    """The CMPN402 contest referee's settings (the ``[cmpn402]`` table); times in seconds."""

    manual_start: bool = False
    games: int = 1
    ping_interval: float = 1.0
    admin_token: str | None = None
    player_time: float = 600.0
    total_time: float = 1200.0
    challenge_time: float = 10.0
    contest: ContestConfig | None = None  # None: today's two agents and a series
    # The organiser's file of ``name#secret`` lines (meeple.server.rooms.cmpn402_names):
    # an agent's NAME must be its line. None: names are not checked.
    agent_secrets: str | None = None

    def validate(self) -> None:
        if self.contest is not None:
            self.contest.validate()
        if self.games < 1:
            raise ConfigError("cmpn402.games must be at least 1")
        for key in ("ping_interval", "player_time", "total_time", "challenge_time"):
            value = getattr(self, key)
            if not 0 < value <= 2**31 / 1000:
                raise ConfigError(f"cmpn402.{key} must be positive and fit an int32 of ms")
        if self.agent_secrets is not None:
            from meeple.server.rooms.cmpn402_names import AgentSecrets, SecretsError

            try:
                AgentSecrets.load(self.agent_secrets)
            except SecretsError as e:
                raise ConfigError(f"cmpn402.agent_secrets: {e}") from None


_CMPN402_TYPES: Mapping[str, tuple[type, ...]] = {
    "manual_start": (bool,),
    "games": (int,),
    "ping_interval": (int, float),
    "admin_token": (str,),
    "player_time": (int, float),
    "total_time": (int, float),
    "challenge_time": (int, float),
    "agent_secrets": (str,),
}


def _cmpn402(raw: object, base: Cmpn402Config) -> Cmpn402Config:
    if not isinstance(raw, dict):
        raise ConfigError("[cmpn402] must be a table")
    raw = dict(raw)
    contest = raw.pop("contest", None)
    unknown = set(raw) - set(_CMPN402_TYPES)
    if unknown:
        raise ConfigError(f"unknown keys in [cmpn402]: {', '.join(sorted(unknown))}")
    if contest is not None:
        raw["contest"] = _contest(contest, base.contest)
    for key, value in raw.items():
        if key == "contest":
            continue
        wanted = _CMPN402_TYPES[key]
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            raise ConfigError(f"cmpn402.{key} has the wrong type: {value!r}")
    config = replace(base, **raw)
    config.validate()
    return config


@dataclass(frozen=True, slots=True)
class SantoriniConfig:
    """The AM27 listener's options: the server → client framing and the heartbeat (ERRATA)."""

    framing: str = "object-stream"
    ping_interval: float = 0.5
    heartbeat_timeout: float = 5.0

    def validate(self) -> None:
        if self.framing not in ("object-stream", "lines"):
            raise ConfigError('santorini.framing must be "object-stream" or "lines"')
        if self.ping_interval <= 0 or self.heartbeat_timeout <= self.ping_interval:
            raise ConfigError("santorini: 0 < ping_interval < heartbeat_timeout")


def _santorini(raw: object, base: SantoriniConfig) -> SantoriniConfig:
    if not isinstance(raw, dict):
        raise ConfigError("[santorini] must be a table")
    unknown = set(raw) - {"framing", "ping_interval", "heartbeat_timeout"}
    if unknown:
        raise ConfigError(f"unknown keys in [santorini]: {', '.join(sorted(unknown))}")
    framing = raw.get("framing", base.framing)
    numbers = {k: raw.get(k, getattr(base, k)) for k in ("ping_interval", "heartbeat_timeout")}
    if not isinstance(framing, str):
        raise ConfigError("santorini.framing must be a string")
    for key, value in numbers.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"santorini.{key} must be a number")
    return SantoriniConfig(
        framing, float(numbers["ping_interval"]), float(numbers["heartbeat_timeout"])
    )


@dataclass(frozen=True, slots=True)
class WebConfig:
    """The web listener's own options (its port and switch are ``listeners["web"]``).

    ``trusted_proxies``: client addresses (IPs or CIDR networks) whose
    ``X-Forwarded-For`` / ``X-Forwarded-Proto`` headers are believed; empty (the
    default): none, every client is the address it connects from. ``origins``: more
    origins (``https://example.org``) allowed to open ``/ws`` besides the server's own.
    """

    max_message_size: int = 4096
    trusted_proxies: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    header_timeout: float = 10.0
    keep_alive_timeout: float = 5.0

    def validate(self) -> None:
        if not 256 <= self.max_message_size <= 1024 * 1024:
            raise ConfigError("web.max_message_size must be between 256 bytes and 1 MiB")
        for key in ("header_timeout", "keep_alive_timeout"):
            if not 0 < getattr(self, key) <= 3600:
                raise ConfigError(f"web.{key} must be positive (seconds, at most 3600)")
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError as e:
                raise ConfigError(f"web.trusted_proxies: {proxy!r} is no address") from e
        for origin in self.origins:
            if not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
                raise ConfigError(f"web.origins: {origin!r} is no origin (scheme://host[:port])")
        if len(self.hosts) > 256:
            raise ConfigError("web.hosts: at most 256 names")
        for host in self.hosts:
            if host != "*" and split_host(host) is None:
                raise ConfigError(f"web.hosts: {host!r} is no host name (name or name:port)")


_WEB_TYPES: Mapping[str, tuple[type, ...]] = {
    "max_message_size": (int,),
    "trusted_proxies": (list,),
    "origins": (list,),
    "hosts": (list,),
    "header_timeout": (int, float),
    "keep_alive_timeout": (int, float),
}


def _web(
    raw: object, base: WebConfig, listener: ListenerConfig
) -> tuple[WebConfig, ListenerConfig]:
    """The ``[web]`` table: ``port`` and ``enabled`` go to the listener, the rest here."""
    if not isinstance(raw, dict):
        raise ConfigError("[web] must be a table")
    unknown = set(raw) - {"port", "enabled", *_WEB_TYPES}
    if unknown:
        raise ConfigError(f"unknown keys in [web]: {', '.join(sorted(unknown))}")
    own = {k: v for k, v in raw.items() if k in _WEB_TYPES}
    for key, value in own.items():
        if not isinstance(value, _WEB_TYPES[key]) or isinstance(value, bool):
            raise ConfigError(f"web.{key} has the wrong type: {value!r}")
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                raise ConfigError(f"web.{key} must be a list of strings")
            own[key] = tuple(value)
    listener = _listener("web", {k: v for k, v in raw.items() if k not in _WEB_TYPES}, listener)
    config = replace(base, **own)
    config.validate()
    return config, listener


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """Limits every listener applies (the ``[limits]`` table).

    ``max_connections_per_address``: open connections from one client IP address (0: no
    limit); one more is closed at once (TCP) or refused with HTTP 503 (WebSocket).
    ``partial_message_timeout``: seconds a client may leave a message unfinished before
    the connection is dropped (slowloris); the idle timeout covers a silent client.
    """

    max_connections_per_address: int = 64
    partial_message_timeout: float = 30.0
    message_rate: float = 200.0
    message_burst: int = 500
    hard_message_rate: float = 1000.0
    hard_message_burst: int = 2500
    messages_per_turn: int = 32
    descriptor_reserve: int = 128
    # Open tables (not started yet) one client address, and one connection, may have
    # opened (issue 30.7); one more is the protocol's refusal. 0: no limit.
    max_tables_per_address: int = 16
    max_tables_per_connection: int = 4

    def validate(self) -> None:
        if self.max_connections_per_address < 0:
            raise ConfigError("limits.max_connections_per_address must not be negative")
        if self.partial_message_timeout <= 0:
            raise ConfigError("limits.partial_message_timeout must be positive")
        if not 0 < self.message_rate <= self.hard_message_rate:
            raise ConfigError("limits: 0 < message_rate <= hard_message_rate")
        if not 1 <= self.message_burst <= self.hard_message_burst:
            raise ConfigError("limits: 1 <= message_burst <= hard_message_burst")
        if not 1 <= self.messages_per_turn <= 10_000:
            raise ConfigError("limits.messages_per_turn must be 1–10000")
        if not 16 <= self.descriptor_reserve <= 100_000:
            raise ConfigError("limits.descriptor_reserve must be 16–100000")
        for key in ("max_tables_per_address", "max_tables_per_connection"):
            if not 0 <= getattr(self, key) <= 100_000:
                raise ConfigError(f"limits.{key} must be 0–100000 (0: no limit)")


def _limits(raw: object, base: LimitsConfig) -> LimitsConfig:
    if not isinstance(raw, dict):
        raise ConfigError("[limits] must be a table")
    types: dict[str, tuple[type, ...]] = {
        "max_connections_per_address": (int,),
        "partial_message_timeout": (int, float),
        "message_rate": (int, float),
        "message_burst": (int,),
        "hard_message_rate": (int, float),
        "hard_message_burst": (int,),
        "messages_per_turn": (int,),
        "descriptor_reserve": (int,),
        "max_tables_per_address": (int,),
        "max_tables_per_connection": (int,),
    }
    unknown = set(raw) - set(types)
    if unknown:
        raise ConfigError(f"unknown keys in [limits]: {', '.join(sorted(unknown))}")
    for key, value in raw.items():
        if not isinstance(value, types[key]) or isinstance(value, bool):
            raise ConfigError(f"limits.{key} has the wrong type: {value!r}")
    config = replace(base, **raw)
    config.validate()
    return config


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """The timings of ``meeple node`` (the ``[cluster]`` table; docs/cluster.md,
    "Timings"), in seconds. Every wait, pause, silence and lifetime a node's roles use is
    here, none in their modules (issue 32.4).

    One rule for every ask between nodes (:func:`meeple.node.ask.ask`): each request
    waits ``ask_wait`` for its answer; when nobody answers (no responder, a timeout, or
    a ``busy`` answer: the owner is being replaced) it pauses ``ask_pause`` and asks
    again, for ``ask_patience`` in all (a name claim: ``names_patience``), then gives
    up. A command of a seat is asked again until its room is over (the same number: the
    owner applies it once).
    """

    # A node's heartbeat on <ns>.node.<name> (GET /api/cluster, the lobby pages).
    heartbeat: float = 1.0
    # A node not heard of for this long is gone from GET /api/cluster and the edges'
    # lobby pages, and its CMPN402 games are no more "running" for the admin.
    node_silence: float = 3.0
    # An edge not heard of for this long: its seats leave their rooms and the lobby.
    edge_silence: float = 5.0
    # One ask between nodes: its wait, the pause before asking again, how long in all.
    ask_wait: float = 1.0
    ask_pause: float = 0.05
    ask_patience: float = 10.0
    # How long an edge asks the lobby nodes for a name (one may be taking over).
    names_patience: float = 5.0
    # The pause between an edge's asks for the lobby leader's open tables while nobody
    # leads (the next leader publishes them anyway).
    sync_pause: float = 0.5
    # How long a rooms node waits for its room to apply a command before "busy".
    command_wait: float = 10.0
    # How long the leader waits for one rooms node to open a room (its log's claim).
    open_wait: float = 5.0
    # How long a browser's rejoin token, and a dropped CMPN402 agent's seat, stay findable.
    token_ttl: float = 24 * 3600.0
    # Spectators: an owner publishes a room's views this long after an edge last asked;
    # an edge asks again this often while it has spectators.
    # An edge's ask for a room's views waits watch_wait for the owner, and pauses
    # watch_pause before asking again while nobody serves the room (a takeover).
    watch_ttl: float = 15.0
    watch_renew: float = 5.0
    watch_wait: float = 2.0
    watch_pause: float = 0.5
    # An edge's pages: lobby snapshots this often while watched; a store node's answer
    # and a running game's history within these.
    lobby_refresh: float = 2.0
    store_wait: float = 3.0
    history_wait: float = 3.0
    # The CMPN402 admin on an edge: how long an action is asked again while its room is
    # taken over, how long a game whose owner fell silent is still looked for, an
    # owner's answer to a status request and to an action (the rooms node's
    # command_wait and a margin).
    admin_act_for: float = 10.0
    admin_moving_for: float = 30.0
    admin_status_wait: float = 2.0
    admin_act_wait: float = 12.0
    # A node pings its NATS server this often; two pings unanswered and the connection
    # counts as lost (/readyz not ready; it reconnects): a silent network is noticed in
    # two or three of these, not in nats-py's four minutes (issue 35).
    nats_ping: float = 5.0
    # One JetStream API call (a KV read or compare-and-set, a log append or read) waits
    # this long for NATS's answer.
    jetstream_wait: float = 5.0
    # A finished game whose store node does not answer is asked again after store_retry
    # seconds, doubling up to store_retry_max (its end is in the log meanwhile).
    store_retry: float = 0.5
    store_retry_max: float = 10.0
    # A room asked again of a rooms node while another node's lease on it may still
    # lapse: checked this often for its log or a free lease (for 3 lease TTLs and 1 s).
    open_poll: float = 0.2
    # An owner looks this often for the rooms no edge watches any more (watch_ttl).
    watch_sweep: float = 1.0
    # The log stream's de-duplication window (a retried append within it is known by
    # its message id; a later one by the fence), and how long a lapsed lease's marker
    # stays in the leases bucket (a watcher learns of the lapse). Applied when a
    # namespace's stream and buckets are created; existing ones keep their settings.
    duplicate_window: float = 120.0
    lapse_marker: float = 60.0
    # A node's stop: each role's close waits this long (NATS may be gone).
    stop_wait: float = 3.0
    # The one-process node's backplane file (meeple serve --runtime node): a write it
    # refuses is held and tried again after file_retry seconds, doubling up to
    # file_retry_max; a stopping node looks this often whether the file took them.
    file_retry: float = 0.05
    file_retry_max: float = 2.0
    stop_poll: float = 0.05

    def validate(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not 0 < value <= 7 * 24 * 3600:
                raise ConfigError(f"cluster.{f.name} must be above 0 and at most 604800")
        if self.ask_pause > self.ask_patience:
            raise ConfigError("cluster: ask_pause must not exceed ask_patience")
        if self.admin_act_wait < self.command_wait:
            raise ConfigError("cluster: admin_act_wait must be at least command_wait")
        if self.store_retry > self.store_retry_max:
            raise ConfigError("cluster: store_retry must not exceed store_retry_max")
        if self.file_retry > self.file_retry_max:
            raise ConfigError("cluster: file_retry must not exceed file_retry_max")


def _cluster(raw: object, base: ClusterConfig) -> ClusterConfig:
    if not isinstance(raw, dict):
        raise ConfigError("[cluster] must be a table")
    known = {f.name for f in fields(ClusterConfig)}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"unknown keys in [cluster]: {', '.join(sorted(unknown))}")
    for key, value in raw.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"cluster.{key} has the wrong type: {value!r}")
    config = replace(base, **{k: float(v) for k, v in raw.items()})
    config.validate()
    return config


def _default_listeners() -> dict[str, ListenerConfig]:
    return {name: ListenerConfig(port) for name, port in DEFAULT_PORTS.items()}


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``meeple serve`` needs to know. Immutable: derive with :meth:`with_overrides`."""

    # Like uvicorn, listen on loopback unless told otherwise: exposing a game server
    # to a network is a choice the operator makes with --host 0.0.0.0.
    host: str = "127.0.0.1"
    listeners: Mapping[str, ListenerConfig] = field(default_factory=_default_listeners)
    lexicon: str = DEFAULT_LEXICON
    # Word lists loaded at start besides ``lexicon`` that a browser's Scrabble table may
    # choose (docs/web.md, "Word lists"); none by default: a word list is compiled once
    # per machine (seconds), so a server loads only those it is told to.
    table_lexicons: tuple[str, ...] = ()
    database: str = "var/meeple.sqlite3"
    idle_timeout: float = 900.0
    max_message_size: int = 8192
    shutdown_grace: float = 5.0
    rejoin_grace: float = 30.0
    # Log writes the journal keeps in memory while the database fails; past it the games
    # it cannot keep are stopped (docs/durability.md, Faults).
    log_backlog: int = 10_000
    # Seconds a stop (SIGINT/SIGTERM) waits for a failing store to take the writes the
    # journal still holds (issue 30.7); 0: no bound. A second signal stops at once; what
    # is dropped is named in the log (docs/durability.md, "Stopping"). Below systemd's
    # 90 s TimeoutStopSec, whose SIGKILL would drop them unsaid.
    store_wait: float = 60.0
    # Issue 35 (docs/operations.md). A stop (SIGTERM) first turns the process not
    # ready (/readyz, the health port) and refuses new tables, then waits up to this
    # many seconds for the games running to finish; 0: no wait (they are stopped, and
    # resumed from their logs by the next process).
    drain_timeout: float = 0.0
    # The most seconds a server bot (the lobby's "add a bot", "Play X now") thinks a move:
    # the hard level's time (Scrabble's simulation, Santorini's search); the lower
    # levels think less (docs/server.md, Bots). Tests set it low.
    bot_think_time: float = 1.0
    # Prometheus metrics (/metrics); false: none are counted (the benchmarks' baseline).
    metrics: bool = True
    # A port of its own for /metrics, /healthz, /readyz (None: only on the web port).
    metrics_port: int | None = None
    # A TCP load balancer's check: open and "ok\n" while ready, closed while not (None: none).
    health_port: int | None = None
    cmpn402: Cmpn402Config = field(default_factory=Cmpn402Config)
    santorini: SantoriniConfig = field(default_factory=SantoriniConfig)
    web: WebConfig = field(default_factory=WebConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)

    def with_overrides(self, **changes: Any) -> ServerConfig:
        """A copy with the given fields replaced; ``None`` values are ignored (unset flags)."""
        config = replace(self, **{k: v for k, v in changes.items() if v is not None})
        config.validate()
        return config

    def with_port(self, listener: str, port: int) -> ServerConfig:
        if listener not in self.listeners:
            raise ConfigError(f"no listener named {listener!r}")
        listeners = dict(self.listeners)
        listeners[listener] = replace(listeners[listener], port=port)
        return replace(self, listeners=listeners)

    def only(self, *names: str) -> ServerConfig:
        """Only the listeners named, each on a free port (0); the others off.

        For tests, benchmarks and embedding: nothing binds a default port that a real
        ``meeple serve`` on the same machine may hold.
        """
        unknown = set(names) - set(self.listeners)
        if unknown:
            raise ConfigError(f"no listener named {', '.join(sorted(unknown))}")
        listeners = {n: ListenerConfig(0, enabled=n in names) for n in self.listeners}
        return replace(self, listeners=listeners)

    def validate(self) -> None:
        if self.idle_timeout <= 0:
            raise ConfigError("idle_timeout must be positive")
        if not 64 <= self.max_message_size <= 16 * 1024 * 1024:
            raise ConfigError("max_message_size must be between 64 bytes and 16 MiB")
        if self.shutdown_grace < 0:
            raise ConfigError("shutdown_grace must not be negative")
        if not 0 <= self.rejoin_grace <= 24 * 3600:
            raise ConfigError("rejoin_grace must be between 0 and 86400 seconds")
        if not 1 <= self.log_backlog <= 10_000_000:
            raise ConfigError("log_backlog must be between 1 and 10000000")
        if not 0 <= self.store_wait <= 7 * 24 * 3600:
            raise ConfigError("store_wait must be between 0 (no bound) and 604800 seconds")
        if not 0 <= self.drain_timeout <= 24 * 3600:
            raise ConfigError("drain_timeout must be between 0 and 86400 seconds")
        if not 0 < self.bot_think_time <= 60:
            raise ConfigError("bot_think_time must be more than 0 and at most 60 seconds")
        for key in ("metrics_port", "health_port"):
            port = getattr(self, key)
            if port is not None and not 0 <= port <= 65535:
                raise ConfigError(f"{key} must be 0–65535")
        self.santorini.validate()
        self.web.validate()
        for name, listener in self.listeners.items():
            if not 0 <= listener.port <= 65535:
                raise ConfigError(f"listeners.{name}.port must be 0–65535")
        self.cmpn402.validate()
        self.limits.validate()
        self.cluster.validate()


_TYPES: Mapping[str, tuple[type, ...]] = {
    "host": (str,),
    "lexicon": (str,),
    "table_lexicons": (list,),
    "database": (str,),
    "idle_timeout": (int, float),
    "max_message_size": (int,),
    "shutdown_grace": (int, float),
    "rejoin_grace": (int, float),
    "log_backlog": (int,),
    "store_wait": (int, float),
    "drain_timeout": (int, float),
    "bot_think_time": (int, float),
    "metrics": (bool,),
    "metrics_port": (int,),
    "health_port": (int,),
}


def _listener(name: str, raw: object, base: ListenerConfig | None) -> ListenerConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"[listeners.{name}] must be a table")
    unknown = set(raw) - {"port", "enabled"}
    if unknown:
        raise ConfigError(f"unknown keys in [listeners.{name}]: {', '.join(sorted(unknown))}")
    port = raw.get("port", base.port if base else None)
    enabled = raw.get("enabled", base.enabled if base else True)
    if not isinstance(port, int) or isinstance(port, bool):
        raise ConfigError(f"listeners.{name}.port must be an integer")
    if not isinstance(enabled, bool):
        raise ConfigError(f"listeners.{name}.enabled must be true or false")
    return ListenerConfig(port, enabled)


def config_from_mapping(data: Mapping[str, Any], base: ServerConfig | None = None) -> ServerConfig:
    """Apply a parsed TOML document to ``base`` (the defaults when None)."""
    base = base or ServerConfig()
    unknown = (
        set(data) - set(_TYPES) - {"listeners", "cmpn402", "santorini", "web", "limits", "cluster"}
    )
    if unknown:
        raise ConfigError(f"unknown config keys: {', '.join(sorted(unknown))}")
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("listeners", "cmpn402", "santorini", "web", "limits", "cluster"):
            continue
        if not isinstance(value, _TYPES[key]) or isinstance(value, bool) != (key == "metrics"):
            raise ConfigError(f"{key} has the wrong type: {value!r}")
        if key == "table_lexicons":
            assert isinstance(value, list)
            if not all(isinstance(v, str) and v for v in value) or len(value) > 8:
                raise ConfigError("table_lexicons must be a list of up to 8 word-list names")
            value = tuple(value)
        changes[key] = value
    listeners = dict(base.listeners)
    raw_listeners = data.get("listeners", {})
    if not isinstance(raw_listeners, dict):
        raise ConfigError("[listeners] must be a table")
    for name, raw in raw_listeners.items():
        if name not in DEFAULT_PORTS:
            raise ConfigError(f"no listener named {name!r} (known: {', '.join(DEFAULT_PORTS)})")
        listeners[name] = _listener(name, raw, listeners.get(name))
    if "cmpn402" in data:
        changes["cmpn402"] = _cmpn402(data["cmpn402"], base.cmpn402)
    if "santorini" in data:
        changes["santorini"] = _santorini(data["santorini"], base.santorini)
    if "web" in data:
        changes["web"], listeners["web"] = _web(data["web"], base.web, listeners["web"])
    if "limits" in data:
        changes["limits"] = _limits(data["limits"], base.limits)
    if "cluster" in data:
        changes["cluster"] = _cluster(data["cluster"], base.cluster)
    config = replace(base, listeners=listeners, **changes)
    config.validate()
    return config


def load_config(path: str | Path | None) -> ServerConfig:
    """The defaults, with the TOML file at ``path`` applied when one is given."""
    if path is None:
        return ServerConfig()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path} is not valid TOML: {e}") from e
    return config_from_mapping(data)

"""``meeple serve``: run every listener, configured by defaults, a TOML file, then flags."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from dataclasses import replace
from typing import Any

from meeple.server.app import MeepleServer
from meeple.server.config import (
    CONTEST_FORMATS,
    DEFAULT_PORTS,
    ConfigError,
    ContestConfig,
    ServerConfig,
    load_config,
)

__all__ = ["RUNTIMES", "config_from_args", "register"]

# What runs the listeners (issue 32.2): ``server``, MeepleServer (today's default);
# ``node``, one Node with every role over the local backplane beside the database
# (docs/server.md, "One node"). The default comes from $MEEPLE_SERVE_RUNTIME, so a test
# suite that starts ``meeple serve`` runs against either.
RUNTIMES = ("server", "node")

logger = logging.getLogger(__name__)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the game server (every protocol listener)",
        description="Run the meeple server: every enabled protocol listener in one process.",
    )
    p.add_argument("--config", metavar="FILE", help="TOML config file (flags override it)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    for name, port in DEFAULT_PORTS.items():
        p.add_argument(f"--{name}-port", type=int, metavar="PORT", help=f"default {port}")
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        choices=sorted(DEFAULT_PORTS),
        metavar="LISTENER",
        help="do not run this listener (repeatable)",
    )
    p.add_argument("--lexicon", help="lexicon name or word-list path (default enable)")
    p.add_argument(
        "--table-lexicon",
        action="append",
        metavar="LEXICON",
        help="another word list a browser's Scrabble table may choose (repeatable;"
        " docs/web.md, Word lists)",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="SQLite file, sqlite:///PATH or postgresql://user@host:port/db"
        " (default var/meeple.sqlite3; docs/server.md, Database)",
    )
    p.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default=os.environ.get("MEEPLE_SERVE_RUNTIME") or "server",
        help="server: today's runtime; node: the cluster's roles in this process over the"
        " local backplane (a restart takes the games over; default $MEEPLE_SERVE_RUNTIME,"
        " else server)",
    )
    p.add_argument("--idle-timeout", type=float, metavar="SECONDS")
    p.add_argument("--max-message-size", type=int, metavar="BYTES")
    p.add_argument("--shutdown-grace", type=float, metavar="SECONDS")
    p.add_argument(
        "--store-wait",
        type=float,
        metavar="SECONDS",
        help="how long a stop waits for a failing database to take the game updates still"
        " held (default 60; 0: no bound; a second signal stops without them)",
    )
    o = p.add_argument_group("operations (docs/operations.md)")
    o.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="/metrics, /healthz, /readyz on a port of their own (they are on the web port too)",
    )
    o.add_argument(
        "--health-port",
        type=int,
        metavar="PORT",
        help="a TCP load balancer's check: open and 'ok' while ready, closed while not",
    )
    o.add_argument(
        "--drain-timeout",
        type=float,
        metavar="SECONDS",
        help="on SIGTERM: not ready, no new table, and up to this long for the games running"
        " to finish before they are stopped (default 0)",
    )
    o.add_argument(
        "--no-metrics",
        dest="metrics",
        action="store_false",
        default=None,
        help="count no metrics (a benchmark's baseline)",
    )
    c = p.add_argument_group("CMPN402 contest referee")
    c.add_argument(
        "--manual-start",
        action="store_true",
        default=None,
        help="the admin starts each game (default: start when two agents have sent NAME)",
    )
    c.add_argument("--games", type=int, metavar="N", help="games per series (default 1)")
    c.add_argument("--ping-interval", type=float, metavar="SECONDS", help="default 1")
    c.add_argument("--admin-token", metavar="TOKEN", help="default: a random one, logged")
    c.add_argument("--player-time", type=float, metavar="SECONDS", help="default 600")
    c.add_argument("--total-time", type=float, metavar="SECONDS", help="default 1200")
    c.add_argument("--challenge-time", type=float, metavar="SECONDS", help="default 10")
    c.add_argument(
        "--agent-secrets",
        metavar="FILE",
        help="the organiser's name#secret lines: an agent's NAME must be its line"
        " (docs/protocols/cmpn402.md, What protects a seat)",
    )
    t = p.add_argument_group("CMPN402 contest mode (docs/contests.md)")
    t.add_argument(
        "--contest",
        choices=CONTEST_FORMATS,
        help="any number of agents play a round robin or a Swiss (default: two agents)",
    )
    t.add_argument("--contest-games", type=int, metavar="N", help="games per pairing (default 1)")
    t.add_argument("--contest-rounds", type=int, metavar="K", help="Swiss rounds")
    t.add_argument("--boards", type=int, metavar="B", help="games at once (default 1)")
    t.add_argument(
        "--contest-agents",
        type=int,
        metavar="N",
        help="start when N agents have sent NAME (default: the admin starts)",
    )
    p.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """Defaults, then the config file, then flags."""
    config = load_config(args.config).with_overrides(
        host=args.host,
        lexicon=args.lexicon,
        table_lexicons=tuple(args.table_lexicon) if args.table_lexicon else None,
        database=args.database,
        idle_timeout=args.idle_timeout,
        max_message_size=args.max_message_size,
        shutdown_grace=args.shutdown_grace,
        store_wait=args.store_wait,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
        drain_timeout=args.drain_timeout,
        metrics=args.metrics,
    )
    cmpn402 = {
        key: getattr(args, key)
        for key in (
            "manual_start",
            "games",
            "ping_interval",
            "admin_token",
            "player_time",
            "total_time",
            "challenge_time",
            "agent_secrets",
        )
        if getattr(args, key, None) is not None
    }
    contest = {
        key: getattr(args, flag)
        for key, flag in (
            ("format", "contest"),
            ("games", "contest_games"),
            ("rounds", "contest_rounds"),
            ("boards", "boards"),
            ("agents", "contest_agents"),
        )
        if getattr(args, flag, None) is not None
    }
    if contest:
        if config.cmpn402.contest is None and "format" not in contest:
            raise ConfigError("--contest-games, --contest-rounds, --boards need --contest")
        cmpn402["contest"] = replace(config.cmpn402.contest or ContestConfig(), **contest)
    if cmpn402:
        config = config.with_overrides(cmpn402=replace(config.cmpn402, **cmpn402))
    for name in DEFAULT_PORTS:
        port = getattr(args, f"{name}_port")
        if port is not None:
            config = config.with_port(name, port)
    if args.disable:
        listeners = dict(config.listeners)
        for name in args.disable:
            listeners[name] = type(listeners[name])(listeners[name].port, enabled=False)
        config = config.with_overrides(listeners=listeners)
    config.validate()
    return config


def run(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ConfigError as e:
        print(f"meeple serve: {e}", file=sys.stderr)
        return 2
    from meeple.server.store.database import DatabaseInUse

    if args.runtime not in RUNTIMES:  # from the environment
        print(f"meeple serve: no runtime {args.runtime!r} ({', '.join(RUNTIMES)})", file=sys.stderr)
        return 2
    try:
        dropped = asyncio.run(_serve_node(config) if args.runtime == "node" else _serve(config))
    except DatabaseInUse as e:
        print(f"meeple serve: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"meeple serve: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # pragma: no cover - a third Ctrl-C during shutdown
        return 130
    if dropped:
        print(
            f"meeple serve: stopped without {dropped} game updates the database did not"
            " take (the log names them)",
            file=sys.stderr,
        )
        return 1
    return 0


async def _serve(config: ServerConfig) -> int:
    """Serve until stopped; how many writes the stop dropped."""
    server = MeepleServer(config)
    await server.serve_forever(start=True)
    return len(server.dropped)


async def _serve_node(config: ServerConfig) -> int:
    """``--runtime node``: serve until stopped as one node with every role over the
    local backplane (:func:`meeple.node.node.serve_config`); how many game updates the
    stop dropped (its file failed: :mod:`meeple.node.writebehind`)."""
    from meeple.node.node import Node, serve_config

    node = Node(serve_config(config))
    await node.run()
    return len(node.dropped)

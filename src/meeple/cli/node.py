"""``meeple node``: one cluster node with any mix of roles (docs/cluster.md)."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from meeple.server.config import DEFAULT_PORTS, ConfigError, load_config

__all__ = ["register"]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "node",
        help="run one cluster node (roles edge, rooms, lobby, store) over NATS, or every "
        "role in one process (--local)",
        description="Run one meeple cluster node: any mix of the roles edge (the protocol "
        "listeners), rooms (room actors), lobby (tables; one leader) and store (finished "
        "games and ratings in PostgreSQL), talking over NATS JetStream; or, with --local, "
        "every role in this process over the in-process backplane (one SQLite file).",
    )
    p.add_argument(
        "--roles", help="comma-separated: edge,rooms,lobby,store (with --local: all of them)"
    )
    p.add_argument(
        "--local",
        metavar="FILE",
        help="no NATS: every role in this process over the in-process backplane, its "
        "leases, names, tokens, lobby state and room logs in this SQLite file (a restart "
        "on the same file takes its games over); finished games go to --database, by "
        "default FILE's name with -records",
    )
    p.add_argument(
        "--nats",
        default=os.environ.get("MEEPLE_NATS_URL", "nats://127.0.0.1:4222"),
        metavar="URL",
        help="the NATS server (default $MEEPLE_NATS_URL or nats://127.0.0.1:4222)",
    )
    p.add_argument("--nats-user", default=os.environ.get("MEEPLE_NATS_USER"))
    p.add_argument(
        "--nats-password-env",
        default="MEEPLE_NATS_PASSWORD",
        metavar="VAR",
        help="the environment variable holding the NATS password (not a flag: ps shows flags)",
    )
    p.add_argument("--namespace", default="meeple", help="subjects' prefix (default meeple)")
    p.add_argument(
        "--database",
        default=os.environ.get("MEEPLE_DATABASE"),
        metavar="URL",
        help="postgresql://… for the store role (default $MEEPLE_DATABASE)",
    )
    p.add_argument("--name", help="the node's name (default: host name and pid)")
    p.add_argument(
        "--config", metavar="FILE", help="meeple serve's TOML file (limits, timeouts, lexicon)"
    )
    p.add_argument("--host", help="an edge's listening address (default 127.0.0.1)")
    p.add_argument("--twente-port", type=int, default=DEFAULT_PORTS["twente"], metavar="PORT")
    p.add_argument("--clarkson-port", type=int, default=DEFAULT_PORTS["clarkson"], metavar="PORT")
    p.add_argument("--santorini-port", type=int, default=DEFAULT_PORTS["santorini"], metavar="PORT")
    p.add_argument(
        "--spectrangle-port", type=int, default=DEFAULT_PORTS["spectrangle"], metavar="PORT"
    )
    p.add_argument("--cmpn402-port", type=int, default=DEFAULT_PORTS["cmpn402"], metavar="PORT")
    p.add_argument(
        "--web-port",
        type=int,
        metavar="PORT",
        help="with --local: the web (pages, /ws), as meeple serve's (default"
        f" {DEFAULT_PORTS['web']}; --api-port wins)",
    )
    p.add_argument(
        "--name-ttl",
        type=int,
        default=6,
        metavar="SECONDS",
        help="an edge's names stay taken this long after it dies (default 6)",
    )
    p.add_argument(
        "--api-port",
        type=int,
        metavar="PORT",
        help="an edge's web port: the lobby and play pages, the browser's /ws (playing and "
        "watching), GET /api/cluster (0: a free port; default: none)",
    )
    p.add_argument(
        "--admin-token",
        default=os.environ.get("MEEPLE_CMPN402_TOKEN"),
        metavar="TOKEN",
        help="an edge's CMPN402 admin token (/admin/… on its CMPN402 port; default "
        "$MEEPLE_CMPN402_TOKEN, else the config's cmpn402.admin_token, else a random one, "
        "logged): the same on every edge",
    )
    p.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="/metrics, /healthz, /readyz on this port (docs/operations.md; default: none)",
    )
    p.add_argument(
        "--health-port",
        type=int,
        metavar="PORT",
        help="a TCP load balancer's check: open and 'ok' while ready, closed while not",
    )
    p.add_argument(
        "--drain-timeout",
        type=float,
        metavar="SECONDS",
        help="on SIGTERM: not ready, then up to this long for a rooms node's games to"
        " finish before the rest move to another node (default 0)",
    )
    p.add_argument("--lexicon", help="the rooms' word list (default enable)")
    p.add_argument("--lease", type=int, default=2, metavar="SECONDS", help="room lease TTL")
    p.add_argument("--same-game-seed", type=int, help=argparse.SUPPRESS)  # benchmarks only
    p.set_defaults(handler=run)
    register_cluster(sub)


def run(args: argparse.Namespace) -> int:
    from meeple.node.node import EDGE_LISTENERS, ROLES, SERVE_LISTENERS, Node, NodeConfig

    if args.roles is None and args.local is None:
        print("meeple node: --roles is needed (or --local)", file=sys.stderr)
        return 2
    roles = frozenset(
        ROLES if args.roles is None else (r.strip() for r in args.roles.split(",") if r.strip())
    )
    database = args.database
    if args.local is not None and database is None:
        local = Path(args.local)
        database = f"sqlite:///{local.with_name(local.stem + '-records' + local.suffix)}"
    name = args.name or f"{socket.gethostname().split('.')[0]}-{os.getpid()}"
    try:
        server = (
            load_config(args.config)
            .with_overrides(host=args.host, lexicon=args.lexicon, drain_timeout=args.drain_timeout)
            .with_port("twente", args.twente_port)
            .with_port("clarkson", args.clarkson_port)
            .with_port("santorini", args.santorini_port)
            .with_port("spectrangle", args.spectrangle_port)
            .with_port("cmpn402", args.cmpn402_port)
        )
        if args.web_port is not None:
            server = server.with_port("web", args.web_port)
        if args.admin_token:
            cmpn402 = replace(server.cmpn402, admin_token=args.admin_token)
            server = server.with_overrides(cmpn402=cmpn402)
        node = Node(
            NodeConfig(
                name=name,
                roles=roles,
                nats_url=args.nats,
                nats_user=args.nats_user,
                nats_password=os.environ.get(args.nats_password_env),
                namespace=args.namespace,
                database=database,
                server=server,
                lease_ttl=args.lease,
                same_game_seed=args.same_game_seed,
                api_port=args.api_port,
                # One process: every listener meeple serve opens, the web on its port.
                listeners=SERVE_LISTENERS if args.local is not None else EDGE_LISTENERS,
                name_ttl=args.name_ttl,
                metrics_port=args.metrics_port,
                health_port=args.health_port,
                local=args.local,
            )
        )
    except (ValueError, ConfigError) as e:
        print(f"meeple node: {e}", file=sys.stderr)
        return 2
    try:
        asyncio.run(node.run())
    except OSError as e:
        print(f"meeple node: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    return 0


def register_cluster(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "cluster",
        help="a whole cluster on this machine: NATS, PostgreSQL, N nodes",
        description="Start (up) or stop (down) NATS, an embedded PostgreSQL and N meeple "
        "nodes with every role on this machine (docs/cluster.md).",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    u = actions.add_parser("up", help="start the cluster and supervise it (Ctrl-C stops it)")
    u.add_argument("--nodes", type=int, default=3)
    u.add_argument(
        "--base-port",
        type=int,
        metavar="P",
        help="NATS on P, node i's Twente listener on P+i, its Clarkson listener on "
        "P+20+i, AM27 Santorini on P+40+i, Spectrangle on P+60+i, CMPN402 on P+80+i, its "
        "/api/cluster on P+100+i (default: free ports)",
    )
    u.add_argument("--dir", type=Path, default=Path("var/cluster"), help="default var/cluster")
    u.add_argument("--lease", type=int, default=2, metavar="SECONDS")
    u.set_defaults(handler=run_up)
    d = actions.add_parser("down", help="stop the cluster started by up")
    d.add_argument("--dir", type=Path, default=Path("var/cluster"), help="default var/cluster")
    d.set_defaults(handler=run_down)
    a = actions.add_parser(
        "auth",
        help="print the NATS users and permissions for a cluster's edges and nodes",
        description="Print the authorization block of a cluster's NATS server (include it "
        "from nats-server.conf): a user per edge, which may read and write only its own "
        "seats' subjects, and one per mix of the roles rooms, lobby, store, each with "
        "the least rights it needs. Passwords are read from nats-server's environment: "
        "MEEPLE_NATS_<USER>_PASSWORD, listed at the end (docs/cluster.md, Permissions).",
    )
    a.add_argument(
        "--edge",
        action="append",
        default=[],
        metavar="NAME",
        help="an edge's node name (meeple node --name NAME --roles edge); repeatable",
    )
    a.add_argument(
        "--node",
        action="append",
        default=[],
        metavar="ROLES",
        help="a node user's roles, e.g. rooms or lobby,store (default rooms,lobby,store); "
        "repeatable",
    )
    a.add_argument("--namespace", default="meeple", help="default meeple")
    a.add_argument(
        "--admin",
        action="store_true",
        help="add meeple-admin, every right (an operator's tools; no node runs with it)",
    )
    a.add_argument("--out", type=Path, metavar="FILE", help="write it here (default: stdout)")
    a.set_defaults(handler=run_auth)


def run_auth(args: argparse.Namespace) -> int:
    from meeple.bus.subjects import Namespace
    from meeple.cluster.auth import auth_config, users

    try:
        ns = Namespace(args.namespace)
        nodes = [tuple(r.strip() for r in roles.split(",")) for roles in args.node] or None
        text = auth_config(ns, args.edge, *([nodes] if nodes else []), admin=args.admin)
        names = users(args.edge, *([nodes] if nodes else []), admin=args.admin)
    except ValueError as e:
        print(f"meeple cluster auth: {e}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    for user, variable in names.items():
        print(f"{user}: password from {variable}", file=sys.stderr)
    return 0


def run_up(args: argparse.Namespace) -> int:
    from meeple.node.cluster import up

    try:
        return up(args.nodes, directory=args.dir, base_port=args.base_port, lease=args.lease)
    except (RuntimeError, ValueError, OSError) as e:
        print(f"meeple cluster up: {e}", file=sys.stderr)
        return 1


def run_down(args: argparse.Namespace) -> int:
    from meeple.node.cluster import down

    return down(args.dir)

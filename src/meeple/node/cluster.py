"""``meeple cluster up`` / ``down``: a whole cluster on one machine, for a developer or a
small host: a NATS server (JetStream, a user per role and per edge with random
passwords: :mod:`meeple.cluster.auth`), an embedded PostgreSQL (SCRAM-SHA-256 with a
random password, on 127.0.0.1 only) and N pairs of nodes: ``node<i>`` with the roles
rooms, lobby and store (so any node can lose its rooms to the others, and a lobby
standby is ready on each), and ``edge<i>`` with the listeners, as NATS user
``meeple-edge-edge<i>``, which may read and write only its own seats' subjects.

Its directory is private (``0700``) and so is every file in it (``0600``): the
``cluster.json``, which holds the database's URL with its password and the CMPN402 admin
token, the NATS configuration and the nodes' logs (issue 30.3).

``up`` stays in the foreground as the cluster's supervisor: it prints every address and
pid, writes them to ``<dir>/cluster.json``, and on SIGINT/SIGTERM (or ``meeple cluster
down``, which signals it) stops the nodes (cleanly: their leases released), then
PostgreSQL, then NATS. NATS keeps its streams in ``<dir>/nats`` across runs; the
embedded PostgreSQL is a fresh one each time (its data goes with ``down``).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meeple.bus.subjects import Namespace
from meeple.cluster.auth import NODE_ROLES, auth_config, edge_user, node_user, password_variable
from meeple.node.launch import NodeProcess, start_node
from meeple.private import private_dir, write_private

__all__ = ["ROLES_EACH", "down", "up"]

#: The roles of each ``node<i>`` (each ``edge<i>`` has the role edge alone).
ROLES_EACH = NODE_ROLES


def _password() -> str:
    # NATS reads a variable's value as a configuration value: a letter first.
    return f"pw{secrets.token_hex(16)}"


def up(
    nodes: int,
    *,
    directory: Path,
    base_port: int | None = None,
    lease: int = 2,
    out: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> int:
    """Run the cluster until SIGINT/SIGTERM (or ``stop`` is set); see the module doc."""
    from meeple.cluster.natsserver import NatsServer
    from meeple.server.store.pgembed import EmbeddedPostgres

    if nodes < 1:
        raise ValueError("a cluster needs at least one node")
    private_dir(directory)
    state = directory / "cluster.json"
    if state.exists():
        pid = json.loads(state.read_text()).get("pid")
        if isinstance(pid, int) and _alive(pid):
            raise RuntimeError(f"a cluster runs already (pid {pid}): meeple cluster down")
    stop = stop or threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    # A NATS user per edge, one for the other nodes (meeple.cluster.auth), each with a
    # password of its own, in nats-server's environment and its node's.
    edges = [f"edge{i}" for i in range(1, nodes + 1)]
    users = [node_user(ROLES_EACH), *(edge_user(e) for e in edges)]
    passwords = {user: _password() for user in users}
    env = {password_variable(user): pw for user, pw in passwords.items()}
    auth = directory / "meeple-auth.conf"
    write_private(auth, auth_config(Namespace("meeple"), edges, (ROLES_EACH,)))
    # The CMPN402 admin's token, the same on every edge (in the nodes' environment: ps
    # shows flags).
    admin_token = secrets.token_urlsafe(16)
    started: list[NodeProcess] = []
    nats = NatsServer(
        directory=directory / "nats",
        port=base_port or 0,
        include=auth,
        environment=env,
    )
    # Another local user must not connect to it as its superuser (issue 30.3).
    pg = EmbeddedPostgres(durable=True, password=secrets.token_urlsafe(24))
    try:
        nats.start()
        pg.start()
        database = pg.create_database("meeple")
        out(f"nats      {nats.url}  pid {nats.pid}")
        out(f"postgres  {_without_password(database)}  pid {pg.pid}")
        logs = private_dir(directory / "logs")
        for i in range(1, nodes + 1):
            node = start_node(
                f"node{i}",
                ROLES_EACH,
                nats.url,
                user=node_user(ROLES_EACH),
                password=passwords[node_user(ROLES_EACH)],
                log_dir=logs,
                database=database,
                lease=lease,
                extra_env={"MEEPLE_CMPN402_TOKEN": admin_token},
            )
            started.append(node)
            out(f"node{i}     {','.join(node.roles)}  pid {node.pid}")
        for i, edge in enumerate(edges, 1):
            node = start_node(
                edge,
                ("edge",),
                nats.url,
                user=edge_user(edge),
                password=passwords[edge_user(edge)],
                log_dir=logs,
                twente_port=0 if base_port is None else base_port + i,
                clarkson_port=0 if base_port is None else base_port + 20 + i,
                santorini_port=0 if base_port is None else base_port + 40 + i,
                spectrangle_port=0 if base_port is None else base_port + 60 + i,
                cmpn402_port=0 if base_port is None else base_port + 80 + i,
                lease=lease,
                extra_env={"MEEPLE_CMPN402_TOKEN": admin_token},
                extra_args=["--api-port", "0" if base_port is None else str(base_port + 100 + i)],
            )
            started.append(node)
            listeners = "  ".join(
                f"{k} http://127.0.0.1:{v}/api/cluster" if k == "api" else f"{k} 127.0.0.1:{v}"
                for k, v in node.listeners.items()
            )
            out(f"{edge}     {','.join(node.roles)}  pid {node.pid}  {listeners}")
        out(
            "web       the lobby and playing from a browser: http://<an edge's api address>/ "
            "(/play; /api/cluster; spectators on /ws)"
        )
        out(
            f"admin     CMPN402 /admin on any edge's cmpn402 port: Authorization: Bearer "
            f"{admin_token}  (meeple cmpn402 status --port P --token {admin_token})"
        )
        out(f"logs      {logs}")
        write_private(
            state,
            json.dumps(
                {
                    "pid": os.getpid(),
                    "nats": {"url": nats.url, "pid": nats.pid},
                    "postgres": {"url": database, "pid": pg.pid},
                    "cmpn402_admin_token": admin_token,
                    "nodes": [
                        {"name": n.name, "roles": list(n.roles), "pid": n.pid, **n.listeners}
                        for n in started
                    ],
                },
                indent=2,
            ),
        )
        out(f"cluster up: {nodes} nodes, {nodes} edges; meeple cluster down --dir {directory}")
        sys.stdout.flush()
        while not stop.wait(0.5):
            for node in started:
                if node.proc.poll() is not None:
                    out(f"{node.name} exited ({node.proc.returncode}); see {node.log}")
                    started.remove(node)
                    break
        return 0
    finally:
        for node in reversed(started):  # the edges first: their players leave cleanly
            node.stop()
        pg.stop()
        nats.stop()
        state.unlink(missing_ok=True)
        out("cluster down")


def down(directory: Path, *, timeout: float = 60.0) -> int:
    """Signal the supervisor of the cluster in ``directory`` and wait for it to stop."""
    state = directory / "cluster.json"
    if not state.exists():
        print(f"no cluster runs from {directory}", file=sys.stderr)
        return 1
    info: dict[str, Any] = json.loads(state.read_text())
    pid = int(info["pid"])
    if not _alive(pid):
        state.unlink(missing_ok=True)
        print(f"the cluster's supervisor (pid {pid}) is gone; state removed", file=sys.stderr)
        return 1
    os.kill(pid, signal.SIGTERM)
    until = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < until:
        time.sleep(0.1)
    if _alive(pid):
        print(f"the cluster's supervisor (pid {pid}) did not stop in {timeout} s", file=sys.stderr)
        return 1
    print(f"cluster stopped (supervisor pid {pid})")
    return 0


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def _without_password(url: str) -> str:
    """A database URL to print: its password is in cluster.json (0600), not on a screen."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"

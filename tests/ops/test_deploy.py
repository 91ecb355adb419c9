"""deploy/ tested (issue 35): the alert rules and the scrape config load in Prometheus'
own tools, and a real Prometheus (Debian's ``prometheus``) scrapes a real ``meeple
serve`` while two bots play: ``meeple_rooms_running`` and the command latency series
are there, and the rules are loaded and evaluated without error."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.natsd import NatsEnv
from tests.serve import Serve

from meeple.bus.subjects import Namespace
from meeple.clients.spectrangle import play_spectrangle
from meeple.node.launch import NodeProcess, start_node

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "meeple-rules.yml"

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _prometheus_installed() -> None:
    """These tests never skip (as the browser tests): without Debian's prometheus
    package they fail, saying so (``.ci/run`` installs it)."""
    if shutil.which("prometheus") is None or shutil.which("promtool") is None:
        pytest.fail("needs Debian's prometheus package with promtool (see .ci/run)")


def test_the_alert_rules_and_the_scrape_config_load() -> None:
    """promtool accepts deploy/'s rules and its Prometheus config."""
    for args in (
        ["check", "rules", str(RULES)],
        ["check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")],
    ):
        done = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "11 rules found"
        in subprocess.run(
            ["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
        ).stdout
    )


def test_the_dashboard_asks_only_for_metrics_meeple_exports() -> None:
    """Every meeple_ series the Grafana dashboard and the alerts name is one of ours."""
    from meeple.server.metrics import METRICS

    families = {f.name for f in METRICS.registry.collect()}
    exported = set()
    for family in METRICS.registry.collect():
        exported |= {s.name for s in family.samples} | {family.name}
    for suffix in ("_total", "_bucket", "_count", "_sum"):
        exported |= {name + suffix for name in families}
    dashboard = json.loads((DEPLOY / "grafana" / "meeple-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs.append(RULES.read_text())
    import re

    named = {m for e in exprs for m in re.findall(r"\bmeeple_[a-z_]+", e)}
    assert named
    assert named <= exported, named - exported


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    server = Serve(tmp_path / "meeple.sqlite3")
    yield server
    server.stop()


def _query(port: int, query: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as answer:
        body = json.loads(answer.read())
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def _rules(port: int) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules", timeout=10) as answer:
        body = json.loads(answer.read())
    return [rule for group in body["data"]["groups"] for rule in group["rules"]]


async def test_a_real_prometheus_scrapes_meeple_serve(serve: Serve, tmp_path: Path) -> None:
    """Prometheus scrapes meeple serve's web port every second while two bots play:
    rooms_running and the command latency histogram arrive, and every alert rule is
    loaded and evaluated with no error."""
    await _scraped(tmp_path, [serve.ports["web"]], serve.ports["spectrangle"])


def _config(tmp_path: Path, targets: list[int]) -> Path:
    """A Prometheus config of deploy/'s rules over these meeple ports, every second."""
    rules = tmp_path / "meeple-rules.yml"
    shutil.copy(RULES, rules)
    config = tmp_path / "prometheus.yml"
    listed = ", ".join(f"'127.0.0.1:{port}'" for port in targets)
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{rules}]\n"
        "scrape_configs:\n"
        "  - job_name: meeple\n"
        f"    static_configs: [{{targets: [{listed}]}}]\n"
    )
    return config


async def _scraped(
    tmp_path: Path, targets: list[int], spectrangle: int, **more: str
) -> dict[str, list[dict[str, Any]]]:
    """Prometheus scrapes ``targets`` while two bots play a game on ``spectrangle``:
    what the queries of ``more`` found (once every one found something)."""
    config = _config(tmp_path, targets)
    port = _free_port()
    with (tmp_path / "prometheus.log").open("w") as log:
        return await _scrape_with(config, port, tmp_path, log, spectrangle, len(targets), more)


async def _scrape_with(
    config: Path,
    port: int,
    tmp_path: Path,
    log: Any,
    spectrangle: int,
    targets: int,
    more: dict[str, str],
) -> dict[str, list[dict[str, Any]]]:
    prometheus = subprocess.Popen(
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        players = [
            play_spectrangle("127.0.0.1", spectrangle, name, pace=0.2) for name in ("ann", "bob")
        ]
        playing = asyncio.ensure_future(asyncio.gather(*players))
        found: dict[str, list[dict[str, Any]]] = {}
        wanted = {
            "rooms": 'meeple_rooms_running{game="spectrangle"}',
            "latency": 'meeple_command_seconds_bucket{protocol="spectrangle"}',
            "up": f'count(up{{job="meeple"}} == 1) == {targets}',
            **more,
        }
        for _ in range(300):
            await asyncio.sleep(0.2)
            try:
                found = {k: await asyncio.to_thread(_query, port, q) for k, q in wanted.items()}
            except OSError:
                continue  # Prometheus not listening yet
            if all(found.values()):
                break
        assert all(found.values()), (found, prometheus.poll())
        assert float(found["rooms"][0]["value"][1]) >= 0
        rules_seen = await asyncio.to_thread(_rules, port)
        assert len(rules_seen) == 11
        await asyncio.wait_for(playing, 120)
        for _ in range(100):  # every rule evaluated at least once, none in error
            rules_seen = await asyncio.to_thread(_rules, port)
            if all(r.get("lastEvaluation", "").startswith("20") for r in rules_seen):
                break
            await asyncio.sleep(0.2)
        assert all(r["health"] == "ok" for r in rules_seen), rules_seen
        return found
    finally:
        prometheus.terminate()
        try:
            prometheus.wait(30)
        except subprocess.TimeoutExpired:
            prometheus.kill()


@pytest.fixture
def cluster(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[list[NodeProcess]]:
    """Three ``meeple node`` processes, each with its metrics port: an edge with the
    lobby and the store, and two rooms nodes."""
    started: list[NodeProcess] = []
    try:
        for name, roles, database in (
            ("hub", ["edge", "lobby", "store"], str(tmp_path / "records.sqlite3")),
            ("rooms1", ["rooms"], None),
            ("rooms2", ["rooms"], None),
        ):
            started.append(
                start_node(
                    name,
                    roles,
                    nats_env.url,
                    user=nats_env.NODE_USER,
                    password=nats_env.node_password,
                    log_dir=tmp_path,
                    namespace=nats_ns.root,
                    database=database,
                    extra_args=("--metrics-port", "0", "--health-port", "0"),
                )
            )
        yield started
    finally:
        for node in started:
            node.stop(timeout=10)


async def test_a_real_prometheus_scrapes_a_three_node_cluster(
    cluster: list[NodeProcess], tmp_path: Path
) -> None:
    """Prometheus scrapes the three nodes' metrics ports while two bots play through the
    edge: every node is up, one leads the lobby, a rooms node runs the game and times
    its commands, and every rule evaluates without error."""
    hub = cluster[0]
    found = await _scraped(
        tmp_path,
        [node.listeners["metrics"] for node in cluster],
        hub.listeners["spectrangle"],
        leader="sum(meeple_lobby_leader) == 1",
        owned="meeple_rooms_owned",
        ready="count(meeple_ready == 1) == 3",
    )
    assert len(found["owned"]) == 2  # one series per rooms node

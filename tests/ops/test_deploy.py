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
from tests.serve import Serve

from meeple.clients.spectrangle import play_spectrangle

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "meeple-rules.yml"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("prometheus") is None or shutil.which("promtool") is None,
        reason="needs Debian's prometheus package (.ci/run installs it)",
    ),
]


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
    rules = tmp_path / "meeple-rules.yml"
    shutil.copy(RULES, rules)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{rules}]\n"
        "scrape_configs:\n"
        "  - job_name: meeple\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{serve.ports['web']}']}}]\n"
    )
    port = _free_port()
    with (tmp_path / "prometheus.log").open("w") as log:
        await _scrape_with(serve, config, port, tmp_path, log)


async def _scrape_with(serve: Serve, config: Path, port: int, tmp_path: Path, log: Any) -> None:
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
            play_spectrangle("127.0.0.1", serve.ports["spectrangle"], name, pace=0.2)
            for name in ("ann", "bob")
        ]
        playing = asyncio.ensure_future(asyncio.gather(*players))
        found: dict[str, list[dict[str, Any]]] = {}
        wanted = {
            "rooms": 'meeple_rooms_running{game="spectrangle"}',
            "latency": 'meeple_command_seconds_bucket{protocol="spectrangle"}',
            "up": 'up{job="meeple"} == 1',
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
    finally:
        prometheus.terminate()
        try:
            prometheus.wait(30)
        except subprocess.TimeoutExpired:
            prometheus.kill()

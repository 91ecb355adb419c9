"""The --cputime plugin (tests/cputime.py): each test's CPU in its process, in the
processes it started, and in the session's servers, apart (issue 33)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.cputime import ServerCpu, TreeCpu, folder_of, report, session_growth

ROOT = Path(__file__).resolve().parents[1]
BURN = 0.3  # tests/guards/cpu.py's burners
SMALL = 0.15  # well under BURN: what an idle test or an idle part may spend


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The plugin's lines for a pytest run over tests/guards/cpu.py, by test name."""
    target = tmp_path_factory.mktemp("cputime") / "cpu.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-q", f"--cputime={target}", "tests/guards/cpu.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    return {row["nodeid"].rsplit("::", 1)[-1]: row for row in lines}


def test_cpu_in_the_test_process_counts_as_its_own(rows: dict[str, dict[str, Any]]) -> None:
    for name in ("test_burns_in_its_process", "test_burns_in_a_thread"):
        row = rows[name]
        assert row["own"] >= BURN * 0.9, row
        assert row["children"] < SMALL, row
        assert row["session"] < SMALL, row


def test_cpu_in_a_reaped_child_counts_as_the_tests(rows: dict[str, dict[str, Any]]) -> None:
    row = rows["test_burns_in_a_child"]
    assert row["children"] >= BURN * 0.9, row
    assert row["session"] < SMALL, row


def test_a_session_servers_cpu_is_apart(rows: dict[str, dict[str, Any]]) -> None:
    """What a session's server spends for a test is the session's, and its stop in the
    last test's teardown (it is reaped with its whole CPU then) is not that test's."""
    row = rows["test_asks_the_session_server"]
    assert row["session"] >= BURN * 0.9, row
    assert row["children"] < SMALL, row
    last = rows["test_waits"]
    assert last["session_ended"], last
    assert last["own"] < SMALL, last
    assert last["children"] < SMALL, last
    assert last["wall"] >= BURN * 0.9, last


def test_a_session_servers_child_reaped_by_it_counts_once(
    rows: dict[str, dict[str, Any]],
) -> None:
    """A child of a session's server (a renderer of Chromium's zygote) that ends in the
    test's teardown: its CPU is in its last reading and then in its reaper's, counted
    once, under the reaper's kind (its name: python)."""
    row = rows["test_a_session_servers_child_ends_in_the_teardown"]
    assert BURN * 0.9 <= row["session"] <= BURN * 1.5, row
    assert row["children"] < SMALL, row
    assert sum(row["session_kinds"].values()) == pytest.approx(row["session"], abs=0.01)


def _tree(**servers: ServerCpu) -> TreeCpu:
    return TreeCpu(0.0, 0.0, {int(pid[1:]): server for pid, server in servers.items()})


def test_a_dead_chromiums_processes_count_at_their_last_reading() -> None:
    """A renderer that ended under its live zygote is in the zygote's reaped CPU; when
    the whole browser died (reaped by this process, its children left to init) each
    counts what it had spent by its last reading, and the browser is returned."""
    me = os.getpid()
    browser = ServerCpu(own=1.0, reaped=0.0, kind="chromium:browser", parent=me)
    zygote = ServerCpu(own=0.1, reaped=0.0, kind="chromium:zygote", parent=10)
    renderer = ServerCpu(own=0.5, reaped=0.0, kind="chromium:renderer", parent=11)
    start = _tree(p10=browser, p11=zygote, p12=renderer)
    closed = _tree(p10=browser, p11=ServerCpu(0.1, 2.0, "chromium:zygote", 10))
    kinds, ended = session_growth(start, closed, [_tree(p10=browser, p11=zygote, p12=renderer)])
    assert kinds == {"chromium:renderer": pytest.approx(1.5)}
    assert ended == []
    later = ServerCpu(own=1.5, reaped=0.0, kind="chromium:renderer", parent=11)
    seen = _tree(p10=ServerCpu(1.4, 0.0, "chromium:browser", me), p11=zygote, p12=later)
    kinds, ended = session_growth(start, _tree(), [seen])
    assert kinds == {
        "chromium:browser": pytest.approx(0.4),
        "chromium:renderer": pytest.approx(1.0),
    }
    assert ended == [10]


def test_collection_has_a_line_of_its_own(rows: dict[str, dict[str, Any]]) -> None:
    assert rows["<collection>"]["items"] == 6


def test_the_report_lists_the_top_tests_and_the_folders() -> None:
    lines = [
        {"nodeid": "<collection>", "own": 3.0, "children": 0.0, "session": 0.0, "wall": 0.0},
        {"nodeid": "tests/web/a.py::t", "own": 1.0, "children": 4.0, "session": 2.0, "wall": 9.0},
        {"nodeid": "tests/web/b.py::t", "own": 0.5, "children": 0.0, "session": 0.0, "wall": 1.0},
        {"nodeid": "tests/x.py::t[1]", "own": 2.0, "children": 0.0, "session": 0.0, "wall": 2.0},
    ]
    out = io.StringIO()
    report(lines, top=2, out=out)
    text = out.getvalue()
    top, folders = text.split("\n\n")
    assert [line.split()[-1] for line in top.splitlines()[1:]] == [
        "tests/web/a.py::t",
        "tests/x.py::t[1]",
    ]
    assert folders.splitlines()[1].split() == ["2", "1.5", "4.0", "2.0", "10.0", "tests/web"]
    assert folder_of("tests/x.py::t[1]") == "tests"
    assert folder_of("tests/cluster/sub/y.py::t") == "tests/cluster"

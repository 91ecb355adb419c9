"""CPU per test, not wall time: where `make test`'s two cores go (issue 33).

Off by default. ``pytest --cputime=FILE`` (or ``MEEPLE_TEST_CPUTIME=FILE``) appends one
JSON line per test to ``FILE`` (``FILE.gwN`` under an xdist worker) with, for setup,
call and teardown together:

- ``own``: the test process's CPU (:func:`time.process_time`: every thread of it);
- ``children``: the CPU of the processes the test started (``meeple serve``, node
  processes, the CLIs it runs), reaped or still running: the growth of this process's
  descendant tree, which is ``RUSAGE_CHILDREN`` (every reaped descendant, transitively)
  plus each live descendant's own and reaped-children times from ``/proc`` (psutil);
- ``session``: the part of that growth spent by the session's servers (NATS,
  PostgreSQL, the worker's Chromium and what they fork: tests/guard.py's
  ``SESSION_PIDS``) while this test ran; reported apart, since they serve every test;
- ``session_kinds``: ``session`` split by kind of process: a Chromium process by its
  ``--type`` (``chromium:browser``, ``chromium:renderer``, ``chromium:gpu-process``,
  ``chromium:utility:network``...), any other by its name (``nats-server``,
  ``postgres``, ``node``: the Playwright driver); what a server reaped is its children's
  kind (a Chromium zygote reaps renderers);
- ``wall``: the test's wall time, for comparison.

Collection is one more line (``"nodeid": "<collection>"``). A process that left this
process's tree (a daemon re-parented to init) is lost: none of the tests' processes do.

``python -m tests.cputime FILE...`` prints the top consumers and the totals per folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import psutil
import pytest
from tests.guard import SESSION_PIDS

__all__ = [
    "CpuRecorder",
    "ServerCpu",
    "TreeCpu",
    "kind_of",
    "pytest_addoption",
    "pytest_configure",
    "report",
    "session_growth",
    "tree_cpu",
]

OPTION = "--cputime"
ENVIRONMENT = "MEEPLE_TEST_CPUTIME"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        metavar="FILE",
        default=os.environ.get(ENVIRONMENT, ""),
        help="append each test's CPU (own, children, session servers) to FILE as JSON lines",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption(OPTION)
    if not path:
        return
    # An xdist worker's id (not from the environment: a pytest that a test runs in a
    # subprocess inherits PYTEST_XDIST_WORKER but is no worker).
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is None and config.pluginmanager.hasplugin("dsession"):
        return  # xdist's controller runs no test: its workers write
    target = Path(f"{path}.{worker}" if worker else path)
    config.pluginmanager.register(CpuRecorder(target), "meeple-cputime")


@dataclass(frozen=True)
class ServerCpu:
    """One live session server process's CPU seconds: its own, and its reaped
    children's; its kind (:func:`kind_of`); its parent's pid (its reaper)."""

    own: float
    reaped: float
    kind: str
    parent: int

    @property
    def cpu(self) -> float:
        return self.own + self.reaped

    @property
    def reaped_kind(self) -> str:
        """The kind of what this process reaps: a Chromium zygote forks the renderers."""
        return "chromium:renderer" if self.kind == "chromium:zygote" else self.kind


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds of this process's descendants so far: those reaped (by this process,
    transitively), and each live one's (its own and its reaped children's), the
    session's apart, by pid."""

    reaped: float
    others: float
    session: dict[int, ServerCpu]


def _cpu(times: Any) -> float:
    return float(times.user + times.system + times.children_user + times.children_system)


_KINDS: dict[tuple[int, float], str] = {}


def kind_of(process: psutil.Process) -> str:
    """``chromium:<--type>`` (``browser`` without one; a utility's service after a
    colon) for a Chromium process, else the process's name; kept per process."""
    key = (process.pid, process.create_time())
    kind = _KINDS.get(key)
    if kind is None:
        args = process.cmdline()
        kind = process.name()
        if args and Path(args[0]).name in ("chromium", "chrome"):
            flags = dict(a[2:].split("=", 1) for a in args[1:] if a.startswith("--") and "=" in a)
            kind = "chromium:" + flags.get("type", "browser")
            if "utility-sub-type" in flags:  # network.mojom.NetworkService -> network
                kind += ":" + flags["utility-sub-type"].split(".", 1)[0]
        _KINDS[key] = kind
    return kind


def tree_cpu() -> TreeCpu:
    """This process's descendant tree's CPU now (zombies included, from /proc)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    others = 0.0
    session: dict[int, ServerCpu] = {}
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
            parents = process.parents()
            if process.pid in SESSION_PIDS or any(p.pid in SESSION_PIDS for p in parents):
                session[process.pid] = ServerCpu(
                    own=times.user + times.system,
                    reaped=times.children_user + times.children_system,
                    kind=kind_of(process),
                    parent=parents[0].pid if parents else 0,
                )
            else:
                others += _cpu(times)
        except psutil.Error:
            continue  # gone between the listing and the read: counted once reaped
    return TreeCpu(usage.ru_utime + usage.ru_stime, others, session)


def session_growth(
    start: TreeCpu, end: TreeCpu, readings: Iterable[TreeCpu] = ()
) -> tuple[dict[str, float], list[int]]:
    """The session servers' CPU from ``start`` to ``end``, by kind, and the servers this
    process reaped meanwhile (their pids).

    The servers' tree spends what its live members' CPU (own and reaped) grew by, and
    what its members that ended in between had spent. One whose parent lives on was
    reaped by it (a renderer by its zygote) with its whole CPU, which the parent's count
    has now; any other (a server this process stopped, or what a dead Chromium left to
    init) counts at its last reading (``readings``, in order), and the pids of those
    whose parent was this process are returned. Counting an ended member at its last
    reading and in its reaper too counted a closed page's renderer twice."""
    kinds: dict[str, float] = defaultdict(float)
    for now in end.session.values():
        kinds[now.kind] += now.own
        kinds[now.reaped_kind] += now.reaped
    for then in start.session.values():
        kinds[then.kind] -= then.own
        kinds[then.reaped_kind] -= then.reaped
    last: dict[int, ServerCpu] = {}
    for reading in (start, *readings):
        last.update(reading.session)
    for pid, server in last.items():
        if pid not in end.session and server.parent not in end.session:
            kinds[server.kind] += server.own
            kinds[server.reaped_kind] += server.reaped
    me = os.getpid()
    ended = sorted(pid for pid, s in last.items() if pid not in end.session and s.parent == me)
    return {kind: cpu for kind, cpu in kinds.items() if abs(cpu) >= 5e-4}, ended


class CpuRecorder:
    """The plugin's state in a test process: where the lines go, and the CPU of the
    session's servers this process has reaped (not a test's)."""

    def __init__(self, target: Path) -> None:
        self._target = target
        self._out: TextIO | None = None
        self._collect_start = time.process_time()
        self._session_reaped = 0.0
        self._readings: list[TreeCpu] = []

    def _write(self, row: dict[str, object]) -> None:
        if self._out is None:
            self._target.parent.mkdir(parents=True, exist_ok=True)
            self._out = self._target.open("a", encoding="utf-8")
        self._out.write(json.dumps(row) + "\n")
        self._out.flush()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._write(
            {
                "nodeid": "<collection>",
                "own": round(time.process_time() - self._collect_start, 4),
                "children": 0.0,
                "session": 0.0,
                "wall": 0.0,
                "items": len(session.items),
            }
        )

    def _tests_children(self, tree: TreeCpu) -> float:
        """The CPU of every process a test started, reaped or live, so far."""
        return tree.reaped - self._session_reaped + tree.others

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        own0, wall0, tree0 = time.process_time(), time.monotonic(), tree_cpu()
        children0 = self._tests_children(tree0)
        self._readings = [tree0]
        yield
        own1, wall1, tree1 = time.process_time(), time.monotonic(), tree_cpu()
        # A session server that this process reaped in this test (the last one tears the
        # session's fixtures down; a dead Chromium is replaced) was reaped with its whole
        # CPU, which is not a test's: its last reading (before the teardown at the
        # latest) counts as the session's. What it left behind went to init: not counted.
        kinds, ended = session_growth(tree0, tree1, self._readings[1:])
        last: dict[int, ServerCpu] = {}
        for reading in self._readings:
            last.update(reading.session)
        self._session_reaped += sum(last[pid].cpu for pid in ended)
        self._write(
            {
                "nodeid": item.nodeid,
                "own": round(own1 - own0, 4),
                "children": round(self._tests_children(tree1) - children0, 4),
                "session": round(sum(kinds.values()), 4),
                "wall": round(wall1 - wall0, 4),
                "session_kinds": {kind: round(cpu, 4) for kind, cpu in sorted(kinds.items())},
                **({"session_ended": ended} if ended else {}),
            }
        )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        """A reading before the teardown, which may stop the session's servers."""
        self._readings.append(tree_cpu())
        yield

    def pytest_unconfigure(self) -> None:
        if self._out is not None:
            self._out.close()


# --- the report -------------------------------------------------------------------------


def _rows(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        with path.open(encoding="utf-8") as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def folder_of(nodeid: str, depth: int = 2) -> str:
    """``tests/web/x.py::t`` -> ``tests/web``; a top-level file is its own folder."""
    parts = nodeid.split("::", 1)[0].split("/")
    return "/".join(parts[: min(depth, len(parts) - 1)]) or parts[0]


def report(rows: list[dict[str, Any]], top: int = 30, out: TextIO | None = None) -> None:
    """Print the ``top`` tests by CPU (own + children), the totals per folder and the
    session servers' CPU by kind of process."""
    import sys

    out = out or sys.stdout
    tests = [r for r in rows if not r["nodeid"].startswith("<")]
    tests.sort(key=lambda r: r["own"] + r["children"], reverse=True)
    print(f"{'own':>8} {'children':>8} {'session':>8} {'wall':>8}  test", file=out)
    for r in tests[:top]:
        print(
            f"{r['own']:8.2f} {r['children']:8.2f} {r['session']:8.2f} {r['wall']:8.2f}  "
            f"{r['nodeid']}",
            file=out,
        )
    folders: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0.0])
    for r in rows:
        folder = "<collection>" if r["nodeid"] == "<collection>" else folder_of(r["nodeid"])
        totals = folders[folder]
        totals[0] += 1
        for i, key in enumerate(("own", "children", "session", "wall"), 1):
            totals[i] += r[key]
    print(f"\n{'tests':>6} {'own':>8} {'children':>8} {'session':>8} {'wall':>8}  folder", file=out)
    for folder, (n, own, children, session, wall) in sorted(
        folders.items(), key=lambda kv: kv[1][1] + kv[1][2], reverse=True
    ):
        print(
            f"{int(n):6d} {own:8.1f} {children:8.1f} {session:8.1f} {wall:8.1f}  {folder}",
            file=out,
        )
    kinds: dict[str, float] = defaultdict(float)
    for r in rows:
        for kind, cpu in r.get("session_kinds", {}).items():
            kinds[kind] += cpu
    if kinds:
        print(f"\n{'session':>8}  kind of session process", file=out)
        for kind, cpu in sorted(kinds.items(), key=lambda kv: kv[1], reverse=True):
            print(f"{cpu:8.1f}  {kind}", file=out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    report(_rows(args.files), args.top)


if __name__ == "__main__":
    main()

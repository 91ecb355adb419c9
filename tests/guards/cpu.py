"""Tests whose CPU tests/test_cputime.py checks the --cputime plugin's lines against (not
collected by the suite: the file name has no ``test_`` prefix)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from tests.guard import session_processes

BURN = 0.3  # CPU seconds each burner spends

# A child that waits for a line, burns BURN seconds of CPU, says so, and waits again.
BURNER = (
    "import sys, time\n"
    "while sys.stdin.readline():\n"
    "    t = time.process_time()\n"
    f"    while time.process_time() - t < {BURN}: pass\n"
    "    print('done', flush=True)\n"
)

# A session's server that forks a child of its own (as Chromium's zygote forks a
# renderer): on "spawn" a child that burns BURN seconds and stays, on "reap" its end.
FORKER = (
    "import subprocess, sys\n"
    "CHILD = 'import sys, time\\nt = time.process_time()\\n"
    f"while time.process_time() - t < {BURN}: pass\\n"
    "print(1, flush=True)\\nsys.stdin.read()\\n'\n"
    "child = None\n"
    "for line in sys.stdin:\n"
    "    if line == 'spawn\\n':\n"
    "        child = subprocess.Popen([sys.executable, '-c', CHILD], stdin=subprocess.PIPE,\n"
    "                                 stdout=subprocess.PIPE, text=True)\n"
    "        child.stdout.readline()\n"
    "    elif child is not None:\n"
    "        child.stdin.close(); child.wait(); child.stdout.close(); child = None\n"
    "    print('ok', flush=True)\n"
)


def burn() -> None:
    start = time.process_time()
    while time.process_time() - start < BURN:
        pass


def _session_server(script: str) -> Iterator[subprocess.Popen[str]]:
    """A session's server running ``script`` (as NATS or Chromium are), stopped at the
    session's end."""
    with session_processes():
        process = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
    yield process
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.close()
    process.wait(60)
    process.stdout.close()


@pytest.fixture(scope="session")
def server() -> Iterator[subprocess.Popen[str]]:
    """A session's server that burns on each line (:data:`BURNER`)."""
    yield from _session_server(BURNER)


@pytest.fixture(scope="session")
def forker() -> Iterator[subprocess.Popen[str]]:
    """A session's server that forks (:data:`FORKER`)."""
    yield from _session_server(FORKER)


def _ask(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(line)
    process.stdin.flush()
    assert process.stdout.readline() == "ok\n"


@pytest.fixture
def spawned(forker: subprocess.Popen[str]) -> Iterator[None]:
    """The forker's child burns during the test and is reaped in its teardown (as a
    test's page's renderer, closed with its context)."""
    _ask(forker, "spawn\n")
    yield
    _ask(forker, "reap\n")


def test_burns_in_its_process() -> None:
    burn()


def test_burns_in_a_child() -> None:
    subprocess.run([sys.executable, "-c", BURNER], input="go\n", text=True, check=True,
                   capture_output=True, timeout=120)  # fmt: skip


def test_burns_in_a_thread() -> None:
    thread = threading.Thread(target=burn)
    thread.start()
    thread.join()


def test_asks_the_session_server(server: subprocess.Popen[str]) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write("go\n")
    server.stdin.flush()
    assert server.stdout.readline() == "done\n"


def test_a_session_servers_child_ends_in_the_teardown(spawned: None) -> None:
    """The child's CPU is the session's once, though it ends after the reading taken
    before the teardown and its reaper then has it too."""


def test_waits(server: subprocess.Popen[str]) -> None:
    """Last: the session's server stops in its teardown, which is not this test's CPU."""
    threading.Event().wait(BURN)

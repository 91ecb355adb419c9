"""The suite's own guards (tests/conftest.py): a test that leaves a child process, a thread
or a socket behind fails, naming it, and its process is killed (issue 33)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def leaky_run() -> str:
    """The output of a pytest run over tests/guards/leaky.py, in a process of its own.

    Its three leaks never go by themselves, so the guard's grace is short there (each
    leak waited the whole 5 s: 15 s of this run); the grace itself is not under test."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MEEPLE_TEST_LEAK_GRACE": "0.2"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-q", "-rA", "tests/guards/leaky.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("test", "leftover"),
    [
        ("test_leaves_a_process", "process pid"),
        ("test_leaves_a_thread", "thread 'leaky'"),
        ("test_leaves_a_socket", "socket "),
    ],
)
def test_a_test_that_leaks_fails_naming_the_leftover(
    leaky_run: str, test: str, leftover: str
) -> None:
    """The leaking test errors at teardown and the report names what it left."""
    assert f"ERROR tests/guards/leaky.py::{test}" in leaky_run, leaky_run
    section = leaky_run.split(f"at teardown of {test} ", 1)[1].split("\n", 1)[1]
    section = section.split("\n___", 1)[0]
    assert "the test left behind" in section, leaky_run
    assert leftover in section, leaky_run


@pytest.mark.parametrize("test", ["test_may_leave_a_thread", "test_cleans_up"])
def test_a_test_that_cleans_up_or_is_marked_passes(leaky_run: str, test: str) -> None:
    assert f"PASSED tests/guards/leaky.py::{test}" in leaky_run, leaky_run
    assert f"ERROR tests/guards/leaky.py::{test}" not in leaky_run, leaky_run


def test_a_leaked_process_is_killed(leaky_run: str) -> None:
    """The leaked ``sleep(60)`` does not outlive its test (nor its run)."""
    sleepers = [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and "import time; time.sleep(60)" in " ".join(p.info["cmdline"])
    ]
    assert not sleepers, sleepers

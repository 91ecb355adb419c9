"""Tests that leak, run by tests/test_guards.py in a pytest of their own (the name does not
match ``test_*.py``, so the suite never collects them itself)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

# Kept alive past the test on purpose: the guard must see them, not the collector.
KEPT: list[object] = []


def test_leaves_a_process() -> None:
    KEPT.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))


def test_leaves_a_thread() -> None:
    stop = threading.Event()
    KEPT.append(stop)
    thread = threading.Thread(target=stop.wait, args=(60,), name="leaky", daemon=True)
    thread.start()


def test_leaves_a_socket() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    KEPT.append(listener)


@pytest.mark.leaks_ok
def test_may_leave_a_thread() -> None:
    stop = threading.Event()
    KEPT.append(stop)
    threading.Thread(target=stop.wait, args=(60,), name="allowed", daemon=True).start()


def test_cleans_up() -> None:
    with subprocess.Popen([sys.executable, "-c", "pass"]) as child:
        child.wait()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))


def test_finish() -> None:
    """Lets the kept threads end, so that this run itself exits promptly."""
    for kept in KEPT:
        if isinstance(kept, threading.Event):
            kept.set()
        elif isinstance(kept, socket.socket):
            kept.close()

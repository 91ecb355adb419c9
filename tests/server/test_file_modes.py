"""What meeple writes is its user's alone, whatever the umask (issue 30.5): the data
directory 0700, the SQLite database, its -wal and -shm, the CMPN402 game logs (both
agents' racks, written during play) 0600."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import GAME_PATIENCE

from meeple.clients.cmpn402 import BuiltinAgent, play
from meeple.games.scrabble.lexicon import Lexicon
from meeple.private import private_dir, private_file, write_private
from meeple.protocols.cmpn402 import EndReason
from meeple.server.app import MeepleServer
from meeple.server.clock import SystemClock
from meeple.server.config import ListenerConfig, ServerConfig
from meeple.server.store.database import Store


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    """Every path under ``root`` (``root`` too): its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def loose(root: Path) -> dict[str, str]:
    """The paths under ``root`` that anyone but their owner may read, write or enter."""
    return {
        name: oct(mode)
        for name, mode in modes(root).items()
        if mode != (0o700 if (root / name).is_dir() else 0o600)
    }


async def test_a_serve_data_directory_is_private_after_a_cmpn402_game(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """With umask 022, a meeple serve whose data directory did not exist plays a CMPN402
    game: the directory, the SQLite file with its -wal and -shm, the lock beside it and
    the game's log and GCG are 0700 and 0600; the log is 0600 while the game runs."""
    data = tmp_path / "var" / "data"
    base = ServerConfig(database=str(data / "meeple.sqlite3"))
    listeners = {name: ListenerConfig(0, enabled=(name == "cmpn402")) for name in base.listeners}
    config = replace(base, listeners=listeners, cmpn402=replace(base.cmpn402, admin_token="t0ken"))
    with umask(0o022):
        server = MeepleServer(config, clock=SystemClock(), rng=random.Random(7))
        server.services.lexicon = gcide
        await server.start()
        during: dict[str, str] = {}
        try:
            uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
            game = asyncio.gather(
                play(uri, "alice", BuiltinAgent(gcide)), play(uri, "bob", BuiltinAgent(gcide))
            )
            while not list((data / "cmpn402").glob("*.log")) and not game.done():
                await asyncio.sleep(0.01)
            during = loose(data)
            ra, _rb = await asyncio.wait_for(game, GAME_PATIENCE)
            assert ra[0].reason is EndReason.ALL_TILES_USED
            files = set(modes(data))
            assert {"meeple.sqlite3", "meeple.sqlite3-wal", "meeple.sqlite3-shm"} <= files
            assert [f for f in files if f.endswith(".log")], files
            assert [f for f in files if f.endswith(".gcg")], files
            assert loose(data) == {}
        finally:
            await server.stop()
    assert during == {}
    assert loose(data) == {}
    assert stat.S_IMODE((tmp_path / "var").stat().st_mode) == 0o700  # made by meeple too
    assert len(Store(config.database).games()) == 1


def test_a_database_from_an_older_meeple_is_narrowed(tmp_path: Path) -> None:
    """A SQLite file and -wal that an older meeple left 0644 are 0600 once a store
    opens them."""
    path = tmp_path / "meeple.sqlite3"
    with umask(0o022):
        Store(str(path)).close()
        for name in (path, Path(f"{path}-wal")):
            name.touch()
            name.chmod(0o644)
        store = Store(str(path))
        try:
            assert loose(tmp_path) == {}
        finally:
            store.close()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mask=st.integers(0, 0o777),
    depth=st.integers(1, 3),
    text=st.text(max_size=50),
    before=st.sampled_from([None, 0o644, 0o666, 0o400]),
)
def test_private_paths_whatever_the_umask(
    tmp_path_factory: pytest.TempPathFactory,
    mask: int,
    depth: int,
    text: str,
    before: int | None,
) -> None:
    """Whatever the umask, private_dir makes each missing directory 0700 and leaves an
    existing one alone; private_file and write_private leave the file 0600, a file that
    was there before (of any mode) included."""
    root = tmp_path_factory.mktemp("private")
    root.chmod(0o755)
    leaf = root.joinpath(*(f"d{i}" for i in range(depth)))
    target = leaf / "secret"
    with umask(mask):
        private_dir(leaf)
        if before is not None:
            target.write_text("old")
            target.chmod(before)
        write_private(target, text)
        private_file(leaf / "empty")
    assert stat.S_IMODE(root.stat().st_mode) == 0o755
    assert {n: m for n, m in modes(root).items() if n != "."} == {
        **{str(Path(*(f"d{i}" for i in range(k + 1)))): 0o700 for k in range(depth)},
        str(target.relative_to(root)): 0o600,
        str((leaf / "empty").relative_to(root)): 0o600,
    }
    assert target.read_bytes() == text.encode("utf-8")

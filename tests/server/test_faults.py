"""A database that stops taking writes: a real `meeple serve` whose files may not grow (the
kernel's file-size limit, RLIMIT_FSIZE, set on the running process: every write past it
fails as on a full disk). Games go on from memory, every page says so, and everything is
written when space is back; past the journal's bound the games it cannot keep are stopped
in their protocol's words (docs/durability.md, Faults)."""

from __future__ import annotations

import asyncio
import resource
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.serve import Serve, assert_stored_as_logged

from meeple.clients.scrabble_bot import play_twente
from meeple.games import records
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node.logfile import room_logs
from meeple.server.store.database import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit is Linux's"),
]

_UNLIMITED = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)


@pytest.fixture(params=["server", "node"])
def runtime(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Either runtime of ``meeple serve`` (issue 32.2): MeepleServer's journal, or the
    one-process node's write-behind over its backplane file (meeple.node.writebehind);
    the same behaviour when the store fails."""
    return ("--runtime", str(request.param))


def _disk_full(server: Serve, database: Path) -> None:
    """No file of the server may grow past its size now (SQLite: "disk is full")."""
    files = [database, Path(f"{database}-wal")]
    limit = max(f.stat().st_size for f in files if f.exists())
    resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def _space_back(server: Serve) -> None:
    resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, _UNLIMITED)


def _page(server: Serve) -> str:
    url = f"http://127.0.0.1:{server.ports['web']}/"
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def _games(database: Path) -> list[object]:
    store = Store(database)
    try:
        return list(store.games())
    finally:
        store.close()


async def _until(predicate: object, timeout: float = 30) -> None:
    for _ in range(int(timeout / 0.05)):
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def _banner(page: str) -> bool:
    return 'id="store-trouble" role="alert">' in page


async def test_a_full_disk_keeps_games_going_and_writes_them_when_space_is_back(
    tmp_path: Path, gcide: Lexicon, runtime: tuple[str, str]
) -> None:
    """Disk full: a whole Twente game is played to its end from memory, the lobby page
    shows the banner, nothing is stored; space back: the finished game and its log are
    written, once, and the banner goes."""
    database = tmp_path / "db.sqlite3"
    server = Serve(database, *runtime)
    try:
        assert not _banner(_page(server))
        _disk_full(server, database)
        port = server.ports["twente"]
        results = await asyncio.wait_for(
            asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide) for n in ("ann", "bob"))),
            90,
        )
        assert all(r[0].reason == "WIN" for r in results)  # the players saw the whole game
        page = _page(server)
        assert _banner(page)
        assert "not taking writes" in page
        assert _games(database) == []
        _space_back(server)
        await _until(lambda: len(_games(database)) == 1 and not _banner(_page(server)))
    finally:
        server.stop()
    store = Store(database)
    try:
        with room_logs(database) as logs:
            assert_stored_as_logged(store, dict(results[0][0].scores), gcide, logs)
    finally:
        store.close()
    assert "the store takes writes again" in server.log


async def test_past_the_bound_a_game_that_cannot_be_kept_is_stopped_in_its_protocol(
    tmp_path: Path, gcide: Lexicon, runtime: tuple[str, str]
) -> None:
    """The journal keeps at most 6 writes: the running Twente game is stopped (GAMEOVER
    to both players, Twente's one way to end a game) and stored as store-unavailable
    once space is back."""
    database = tmp_path / "db.sqlite3"
    config = tmp_path / "meeple.toml"
    config.write_text("log_backlog = 6\n")
    server = Serve(database, "--config", str(config), *runtime)
    try:
        _disk_full(server, database)
        port = server.ports["twente"]
        results = await asyncio.wait_for(
            asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide) for n in ("ann", "bob"))),
            90,
        )
        assert {r[0].reason for r in results} == {"WIN"}
        assert "stopped" in _page(server)
        _space_back(server)
        await _until(lambda: len(_games(database)) == 1)
    finally:
        server.stop()
    store = Store(database)
    try:
        [stored] = store.games()
        assert stored.end_reason == "store-unavailable", server.log[-3000:]
        assert stored.data is not None
        assert stored.data["actions"][-1]["type"] == "end"
        assert stored.data["result"]["reason"] == "admin"
        steps = list(records.replay(stored.data, lexicon=gcide))
        assert steps[-1].game.is_over
        assert len(steps) < 20  # stopped early, not played out
    finally:
        store.close()


# --- issue 30.7: a stop while the store fails ------------------------------------------


def _signal(server: Serve) -> None:
    server.proc.send_signal(signal.SIGTERM)


async def _full_disk_game(server: Serve, database: Path, gcide: Lexicon) -> list[Any]:
    """A whole Twente game played while the disk is full: its log and record are queued."""
    _disk_full(server, database)
    port = server.ports["twente"]
    return await asyncio.wait_for(
        asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide) for n in ("ann", "bob"))), 90
    )


async def test_a_stop_waits_for_the_store_and_says_so_then_loses_nothing(
    tmp_path: Path, gcide: Lexicon, runtime: tuple[str, str]
) -> None:
    """Disk full, a game finished, SIGTERM: the server does not exit; the log and the
    page's banner say it waits for the database; space back: the game is stored, the
    server exits 0 and the log says nothing was lost (before: 'N writes still queued at
    close; they are lost', and the finished game was)."""
    database = tmp_path / "db.sqlite3"
    server = Serve(database, *runtime)
    try:
        results = await _full_disk_game(server, database, gcide)
        _signal(server)
        await _until(
            lambda: "waiting until it is back" in server.log or "waiting up to" in server.log
        )
        page = _page(server)
        assert _banner(page)
        assert "The server is stopping" in page
        await asyncio.sleep(1.5)
        assert server.proc.poll() is None, server.log[-2000:]
        _space_back(server)
        code = await asyncio.to_thread(server.proc.wait, 30)
    finally:
        server.stop()
    assert code == 0, server.log[-3000:]
    assert "the store took every game update; nothing is lost" in server.log
    assert "dropped" not in server.log
    store = Store(database)
    try:
        with room_logs(database) as logs:
            assert_stored_as_logged(store, dict(results[0][0].scores), gcide, logs)
    finally:
        store.close()


@pytest.mark.parametrize("how", ["second signal", "bound"])
async def test_a_stop_without_the_store_names_what_it_drops(
    tmp_path: Path, gcide: Lexicon, how: str, runtime: tuple[str, str]
) -> None:
    """Disk full, a game finished, SIGTERM: a second SIGTERM (or ``--store-wait 2``
    passing) stops the server without the store; the log names every write dropped, by
    game (the finished game's ``finish``), and the exit code is 1."""
    database = tmp_path / "db.sqlite3"
    extra = ("--store-wait", "2") if how == "bound" else ()
    server = Serve(database, *extra, *runtime)
    try:
        await _full_disk_game(server, database, gcide)
        _signal(server)
        await _until(lambda: "waiting " in server.log and "stopping: the store" in server.log)
        if how == "second signal":
            await asyncio.sleep(0.5)
            assert server.proc.poll() is None
            _signal(server)
        code = await asyncio.to_thread(server.proc.wait, 30)
    finally:
        server.stop()
    assert code == 1, server.log[-3000:]
    reason = "second signal" if how == "second signal" else "2 s passed"
    assert "stopping without the" in server.log
    assert reason in server.log
    dropped = [line for line in server.lines if "journal: dropped" in line]
    assert len(dropped) == 1, server.log[-3000:]  # one game: one line
    assert "finish" in dropped[0]
    assert "did not take" in server.log
    assert _games(database) == []

"""The upgrade from ``meeple serve --runtime server`` to the one-process node (issue 32.2
item 1, docs/server.md "Upgrading"): the games the earlier runtime left open in its
store go on under the node, each moved into the backplane file once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.serve import Serve, web_client
from tests.server.test_recovery import (
    _begin_against_a_bot,
    _my_turn,
    _rejoin_and_finish,
    _stored_games,
)

from meeple.bus.subjects import Namespace
from meeple.cluster.local import LocalBackplane
from meeple.cluster.log import JetStreamLog
from meeple.games import records
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node.logfile import import_store_logs, room_logs, upgraded_genesis
from meeple.server.store.database import Store

NS = Namespace("meeple")


@pytest.mark.slow
async def test_a_game_left_open_by_the_server_runtime_goes_on_under_the_node(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """A browser against a server bot on ``--runtime server``; SIGKILL; the node
    runtime on the same files: the browser's token takes its seat back, board
    and rack as they were, the game is played to its end, and its record, logged across
    both runtimes, is whole and replays. A second start moves nothing again."""
    database = tmp_path / "var" / "meeple.sqlite3"
    database.parent.mkdir()
    first = Serve(database, "--runtime", "server")
    try:
        ws = await web_client(first.ports["web"])
        seated = await _begin_against_a_bot(ws, gcide)
        before = await _my_turn(ws)
        assert not before["over"]
    finally:
        first.kill()
    with room_logs(database) as logs:
        [uid] = logs.open_logs()
        old = logs.action_log(uid)
    assert old is not None
    assert len(old.entries) >= 3
    second = Serve(database, "--runtime", "node")
    try:
        await _rejoin_and_finish(second, seated, before, gcide)
    finally:
        second.stop()
    assert "1 games left open by `meeple serve --runtime server` moved" in second.log
    [stored] = _stored_games(database, "scrabble")
    assert stored.protocols == ("bot", "web")
    assert stored.data is not None
    assert stored.data["uid"] == uid
    steps = list(records.replay(stored.data, lexicon=gcide))
    assert steps[-1].game.is_over
    with room_logs(database) as logs:
        log = logs.action_log(uid)
        assert logs.store.action_log(uid) is None  # moved, not copied
        assert logs.open_logs() == []
    assert log is not None
    assert log.game_id == stored.id
    # The record is whole: the earlier runtime's entries, then the node's, each once.
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    assert [e.entry for e in log.entries[: len(old.entries)]] == [e.entry for e in old.entries]
    assert [e.at for e in log.entries[: len(old.entries)]] == [e.at for e in old.entries]
    assert len(log.entries) == len(stored.data["actions"]) > len(old.entries)
    third = Serve(database)  # the default runtime: nothing left to move
    third.stop()
    assert "moved" not in third.log
    [again_stored] = _stored_games(database, "scrabble")
    assert again_stored.id == stored.id


def _open_game(store: Store, uid: str, entries: int) -> None:
    """An open log as ``meeple serve --runtime server`` leaves one: a browser and a bot."""
    genesis: dict[str, Any] = {
        "version": 1,
        "game": "scrabble",
        "record": {"game": "scrabble"},
        "seats": [
            {"name": "wes", "protocol": "web", "rejoin": "ab" * 16, "bot": None},
            {"name": "easybot1", "protocol": "bot", "rejoin": None, "bot": "easy"},
        ],
        "table": {"variant": "twente"},
        "clocks": None,
    }
    store.open_log(uid, "scrabble", genesis)
    for seq in range(1, entries + 1):
        store.append_log(uid, seq, {"action": {"kind": "pass", "n": seq}, "clocks": None})


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(entries=st.integers(0, 12), crash_after=st.integers(-1, 13), second_game=st.booleans())
def test_an_import_cut_anywhere_and_run_again_copies_each_entry_once(
    tmp_path_factory: pytest.TempPathFactory, entries: int, crash_after: int, second_game: bool
) -> None:
    """The import is cut after any of its writes (the process died: the genesis and some
    entries in the file, the store's copy still there), then runs again, twice: each
    room's log in the file is the store's, every entry once, in order, and the store
    holds none of them open any more."""
    base = tmp_path_factory.mktemp("upgrade")
    store = Store(base / "db.sqlite3")
    uids = ["r1", "r2"] if second_game else ["r1"]
    for uid in uids:
        _open_game(store, uid, entries)
    olds = {uid: store.action_log(uid) for uid in uids}

    async def crash_then_import() -> list[str]:
        plane = await LocalBackplane.open(base / "plane.sqlite3", NS)
        try:
            if crash_after >= 0:  # what a start that died halfway through r1 wrote
                old = olds["r1"]
                assert old is not None
                log = JetStreamLog(plane, NS, store)
                await log.open_log("r1", "scrabble", upgraded_genesis(old.genesis, "serve"))
                for e in old.entries[:crash_after]:
                    await log.append_log("r1", e.seq, e.entry, at=e.at)
            moved = await import_store_logs(store, plane, NS, edge="serve")
            again = await import_store_logs(store, plane, NS, edge="serve")
            assert again == []
            return moved
        finally:
            await plane.close()

    moved = asyncio.run(crash_then_import())
    assert moved == uids
    assert store.open_logs() == []

    async def read(uid: str) -> Any:
        plane = await LocalBackplane.open(base / "plane.sqlite3", NS)
        try:
            return await JetStreamLog(plane, NS, store).action_log(uid)
        finally:
            await plane.close()

    for uid in uids:
        old = olds[uid]
        new = asyncio.run(read(uid))
        assert old is not None
        assert new is not None
        assert [(e.seq, e.at, e.entry) for e in new.entries] == [
            (e.seq, e.at, e.entry) for e in old.entries
        ]
        assert new.genesis == upgraded_genesis(old.genesis, "serve")
        assert new.genesis["seats"][0]["route"] == "serve-upgrade_0"
        assert "route" not in new.genesis["seats"][1]  # a server bot sits again by itself
        assert not new.finished
    store.close()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(genesis=st.dictionaries(st.sampled_from(["seats", "table", "record", "x"]), _JSON))
def test_a_log_that_is_no_room_s_stays_in_the_store(
    tmp_path_factory: pytest.TempPathFactory, genesis: dict[str, Any]
) -> None:
    """Whatever a store's open log holds, the import does not fail the start: a genesis
    it cannot read as a room's stays in the store (named at the start), a room's moves."""
    base = tmp_path_factory.mktemp("odd")
    store = Store(base / "db.sqlite3")
    store.open_log("odd", "scrabble", genesis)
    _open_game(store, "good", 2)

    async def run() -> list[str]:
        plane = await LocalBackplane.open(base / "plane.sqlite3", NS)
        try:
            return await import_store_logs(store, plane, NS, edge="serve")
        finally:
            await plane.close()

    moved = asyncio.run(run())
    seats = genesis.get("seats")
    readable = isinstance(seats, list) and all(isinstance(s, dict) for s in seats)
    table = genesis.get("table")
    if isinstance(table, dict) and "referee" in table:
        readable = False
    assert moved == (["odd", "good"] if readable else ["good"])
    assert store.open_logs() == ([] if readable else ["odd"])
    store.close()

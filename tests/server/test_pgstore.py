"""The PostgreSQL store where it differs from SQLite: several processes and connections
on one database at once (migrations, fenced appends, finishes), dropped connections, and
a schema that matches SQLite's. The store's other tests run on both (test_store.py,
test_log.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.pg import PgServer

from meeple.server.store.database import SCHEMA_VERSION, LogConflict, SqliteBackend, Store
from meeple.server.store.postgres import PgBackend, PgStore

GENESIS = {"version": 1, "game": "counting"}


def _game(uid: str) -> dict[str, Any]:
    return {
        "game": "counting",
        "variant": "standard",
        "protocols": ["test"],
        "players": ["ann", "bob"],
        "started_at": 1.0,
        "end_reason": "done",
        "result": {},
        "record": "",
        "data": {"uid": uid},
    }


@pytest.fixture
def two(pg_url: str) -> Iterator[tuple[Store, Store]]:
    """Two stores on one database, as two server processes would have."""
    a, b = PgStore(pg_url), PgStore(pg_url)
    yield a, b
    a.close()
    b.close()


def _waiting(url: str, count: int, kind: str) -> None:
    """Wait until ``count`` other sessions of the database wait for a lock of ``kind``
    (``advisory`` or ``tuple``, a row)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(3000):
            (n,) = conn.execute(
                "SELECT count(*) FROM pg_locks AS l JOIN pg_database AS d ON d.oid = l.database"
                " WHERE d.datname = current_database() AND NOT l.granted AND l.locktype = %s",
                (kind,),
            ).fetchone() or (0,)
            if n >= count:
                return
            time.sleep(0.01)
    raise AssertionError(f"never saw {count} sessions waiting for a {kind} lock")


def _race(url: str, calls: list[Callable[[], Any]], *, hold_row: str | None = None) -> list[object]:
    """Run ``calls`` in threads at once while a transaction holds the log ``hold_row``'s
    row; release it once all of them wait for it. Each call's result or exception."""
    results: list[object] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as e:
            results[i] = e

    holder = PgBackend(url)
    try:
        with holder.transaction() as tx:
            tx.execute("SELECT 1 FROM room_logs WHERE uid = ? FOR UPDATE", (hold_row,))
            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
            for t in threads:
                t.start()
            # Each call's first statement waits for the row: the first in line for the
            # holder's transaction, the others behind it for the row's tuple lock.
            _waiting(url, len(calls) - 1, "tuple")
    finally:
        holder.close()
    for t in threads:
        t.join(10)
    return results


def test_two_processes_opening_a_new_database_migrate_it_once(postgres: PgServer) -> None:
    """Two processes open an empty database at the same moment: both wait for the
    migration lock, then one migrates and the other finds the schema current."""
    name, url = postgres.new_database(migrated=False)
    opener = (
        "import sys; from meeple.server.store.database import open_store;"
        " s = open_store(sys.argv[1]); print(s.schema_version); s.close()"
    )
    holder = PgBackend(url)
    try:
        with holder.transaction() as tx:
            tx.lock("schema")  # what a migration takes first
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", opener, url],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                for _ in range(2)
            ]
            _waiting(url, 2, "advisory")
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        holder.close()
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        assert out.decode().split() == [str(SCHEMA_VERSION)]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM meeple_schema").fetchall() == [(SCHEMA_VERSION,)]
    postgres.server.drop_database(name)


def test_threads_opening_a_new_database_at_once_all_succeed(postgres: PgServer) -> None:
    """Four stores opened at once on an empty database, without help: all open it."""
    name, url = postgres.new_database(migrated=False)
    stores: list[Store] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            stores.append(PgStore(url))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert [s.schema_version for s in stores] == [SCHEMA_VERSION] * 4
    for s in stores:
        s.close()
    postgres.server.drop_database(name)


def test_two_writers_of_the_same_entry_one_wins_the_other_is_refused(
    two: tuple[Store, Store], pg_url: str
) -> None:
    """Two stores append different entries as number 1 of one log at the same moment:
    one is written, the other gets LogConflict, and the log holds the winner's."""
    a, b = two
    a.open_log("r1", "counting", GENESIS)
    results = _race(
        pg_url,
        [lambda: a.append_log("r1", 1, {"by": "a"}), lambda: b.append_log("r1", 1, {"by": "b"})],
        hold_row="r1",
    )
    assert sorted(type(r).__name__ for r in results) == ["LogConflict", "NoneType"]
    winner = "a" if results[0] is None else "b"
    log = a.action_log("r1")
    assert log is not None
    assert [e.entry for e in log.entries] == [{"by": winner}]


def test_a_retried_append_racing_the_first_is_a_no_op(
    two: tuple[Store, Store], pg_url: str
) -> None:
    """The same entry appended twice at once (a retry that overtook its first try):
    both calls succeed and the log holds it once."""
    a, b = two
    a.open_log("r1", "counting", GENESIS)
    results = _race(
        pg_url,
        [lambda: a.append_log("r1", 1, {"n": 1}), lambda: b.append_log("r1", 1, {"n": 1})],
        hold_row="r1",
    )
    assert results == [None, None]
    a.append_log("r1", 1, {"n": 1})  # and once more, later
    log = a.action_log("r1")
    assert log is not None
    assert [e.entry for e in log.entries] == [{"n": 1}]


def test_two_finishes_at_once_store_the_game_once(two: tuple[Store, Store], pg_url: str) -> None:
    """Two stores finish one log at the same moment: one game is stored, and both are
    told its id."""
    a, b = two
    a.open_log("r1", "counting", GENESIS)
    a.append_log("r1", 1, {"n": 1})
    results = _race(
        pg_url,
        [lambda: a.finish_log("r1", **_game("r1")), lambda: b.finish_log("r1", **_game("r1"))],
        hold_row="r1",
    )
    assert isinstance(results[0], int)
    assert results == [results[0], results[0]]
    assert [g.id for g in a.games()] == [results[0]]
    log = b.action_log("r1")
    assert log is not None
    assert log.game_id == results[0]


def test_writers_racing_down_one_log_never_interleave(two: tuple[Store, Store]) -> None:
    """Two writers each append what they believe is the next entry, as fast as they can:
    each append is written or refused, and the log is gapless, each entry whole."""
    stores = two
    stores[0].open_log("r1", "counting", GENESIS)
    written: list[list[int]] = [[], []]

    def writer(i: int) -> None:
        store = stores[i]
        seq = 1
        while seq <= 100:
            try:
                store.append_log("r1", seq, {"writer": i, "seq": seq})
                written[i].append(seq)
            except LogConflict:
                pass
            seq += 1

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    log = stores[0].action_log("r1")
    assert log is not None
    assert [e.seq for e in log.entries] == list(range(1, 101))
    assert sorted(written[0] + written[1]) == list(range(1, 101))
    for e in log.entries:
        assert e.entry["seq"] == e.seq
        assert e.seq in written[e.entry["writer"]]


def test_games_finishing_at_once_all_count_in_the_ratings(pg_url: str) -> None:
    """Rated games between the same players, stored by several stores at once: each
    game moves the ratings from where the last one left them (none is lost)."""
    stores = [PgStore(pg_url) for _ in range(3)]
    start = threading.Barrier(len(stores))

    def play(store: Store) -> None:
        start.wait()
        for _ in range(5):
            store.record_game(
                game="scrabble",
                variant="twente",
                protocols=["twente"],
                players=["ann", "bob"],
                started_at=0.0,
                end_reason="went-out",
                result={},
                record="",
                data={
                    "format": "meeple.record",
                    "game": "scrabble",
                    "version": 1,
                    "players": ["ann", "bob"],
                    "actions": [],
                    "result": {"reason": "went-out", "scores": [2, 1], "winners": [0]},
                },
            )

    threads = [threading.Thread(target=play, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    board = stores[0].leaderboard("scrabble")
    assert [(r.player, r.games) for r in board] == [("ann", 15), ("bob", 15)]
    assert [h.games for h in stores[0].rating_history("scrabble", "ann")] == list(range(1, 16))
    for s in stores:
        s.close()


def test_connections_the_server_dropped_are_replaced_unseen(pg_url: str) -> None:
    """The server ends every session of the store (as a restart does): the next reads
    and writes go through on new connections."""
    store = PgStore(pg_url)
    store.open_log("r1", "counting", GENESIS)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    time.sleep(0.2)
    assert store.open_logs() == ["r1"]
    store.append_log("r1", 1, {"n": 1})
    store.save_checkpoint("k", {"a": 1})
    assert store.load_checkpoint("k") == {"a": 1}
    store.close()


def test_both_backends_have_the_same_migrations_tables_and_columns(
    tmp_path: Path, pg_url: str
) -> None:
    """Schema version N is the same tables with the same columns, in the same order, in
    SQLite and in PostgreSQL."""
    assert len(PgBackend.migrations) == len(SqliteBackend.migrations) == SCHEMA_VERSION
    Store(tmp_path / "db.sqlite3").close()
    lite = sqlite3.connect(tmp_path / "db.sqlite3")
    tables = [r[0] for r in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    in_sqlite = {t: [r[1] for r in lite.execute(f"PRAGMA table_info({t})")] for t in tables}
    lite.close()
    in_postgres: dict[str, list[str]] = {}
    with psycopg.connect(pg_url) as conn:
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name <> 'meeple_schema'"
            " ORDER BY table_name, ordinal_position"
        ):
            in_postgres.setdefault(table, []).append(column)
    assert in_postgres == in_sqlite


def test_a_wrong_url_fails_at_open_in_the_servers_words(postgres: PgServer) -> None:
    """A database that does not exist: opening the store says so at once."""
    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        PgStore(postgres.server.url("no_such_database"))

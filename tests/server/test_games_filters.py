"""Finished games by result and by day (issue 34), on both stores: the search against a
model of it, the indexes it uses, the outcomes filled in for games stored before them,
and replays' analyses kept beside the records."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from meeple.server.store.database import (
    _MIGRATIONS,
    OUTCOMES,
    SqliteBackend,
    Store,
    _search_sql,
    open_store,
    outcomes,
)
from meeple.server.store.postgres import _pg

NAMES = ("ann", "bob", "cy")
DAY = 86400.0
# Each kind of end: (end_reason, the JSON record's result, seat outcomes).
ENDS: tuple[tuple[str, dict[str, Any], tuple[str, str]], ...] = (
    ("went_out", {"reason": "went_out", "player": 0, "scores": [300, 200], "winners": [0]},
     ("won", "lost")),
    ("finished", {"reason": "finished", "player": None, "scores": [90, 90], "winners": [0, 1]},
     ("drawn", "drawn")),
    ("aborted", {"reason": "aborted", "player": 1, "scores": [0, 0], "winners": []},
     ("aborted", "aborted")),
    ("resigned", {"reason": "resigned", "player": 0, "scores": [0, 1], "winners": [1]},
     ("resigned", "won")),
    ("win", {"reason": "win", "player": 1, "scores": [0, 1], "winners": [1]}, ("lost", "won")),
)  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = 1_767_225_600.0  # 2026-01-01 00:00 UTC

    def __call__(self) -> float:
        return self.now


Made = list[tuple[int, float, tuple[str, str], tuple[str, str], str]]


def _fill(store: Store, clock: Clock, count: int) -> Made:
    """``count`` games, about three a day, each of one kind of end."""
    made: Made = []
    for i in range(count):
        clock.now += DAY / 3 + 7
        reason, result, seats = ENDS[i % len(ENDS)]
        players = (NAMES[i % 3], NAMES[(i + 1) % 3])
        n = store.record_game(
            game="scrabble", variant="standard", protocols=["web"], players=list(players),
            started_at=clock.now - 60, end_reason=reason, result={}, record="",
            data={"format": "meeple.record", "version": 1, "uid": f"g{i}",
                  "players": list(players), "result": result},
        )  # fmt: skip
        overall = {"won": "won", "lost": "won", "drawn": "drawn", "aborted": "aborted"}
        game_outcome = "resigned" if "resigned" in seats else overall[seats[0]]
        made.append((n, clock.now, players, seats, game_outcome))
    return made


def _want(
    made: Made,
    player: str | None,
    result: str | None,
    since: float | None,
    until: float | None,
    before: int | None,
) -> list[int]:
    seat_ok = {"lost": ("lost", "resigned")}
    game_ok = {"won": ("won", "resigned"), "lost": ("won", "resigned")}
    found = []
    for n, at, players, seats, overall in reversed(made):
        if player is not None and player not in players:
            continue
        if result is not None:
            if player is not None:
                if seats[players.index(player)] not in seat_ok.get(result, (result,)):
                    continue
            elif overall not in game_ok.get(result, (result,)):
                continue
        if since is not None and at < since:
            continue
        if until is not None and at >= until:
            continue
        if before is not None and n >= before:
            continue
        found.append(n)
    return found


@pytest.fixture
def clocked(store_url: str) -> Iterator[tuple[Store, Clock]]:
    clock = Clock()
    store = open_store(store_url, wall_clock=clock)
    yield store, clock
    store.close()


def test_the_search_by_result_and_day_matches_its_model(clocked: tuple[Store, Clock]) -> None:
    """Every player, result, day range and cursor against the games filtered in Python:
    with a player, how the game ended for them ("lost" includes resigning); without one,
    how it ended."""
    store, clock = clocked
    made = _fill(store, clock, 40)
    start = made[0][1]
    ranges = [(None, None), (start + DAY, None), (None, start + 5 * DAY),
              (start + 2 * DAY, start + 3 * DAY), (start + 9 * DAY, start + 4 * DAY)]  # fmt: skip
    for player in (None, *NAMES):
        for result in (None, *OUTCOMES):
            for since, until in ranges:
                for before in (None, made[25][0]):
                    found = store.search_games(
                        player=player, result=result, ended_from=since, ended_to=until,
                        before=before, limit=6,
                    )  # fmt: skip
                    want = _want(made, player, result, since, until, before)[:6]
                    assert [r.id for r in found] == want, (player, result, since, until, before)
    with pytest.raises(ValueError, match="no such result"):
        store.search_games(result="won'; DROP TABLE games; --")


def test_outcomes_from_the_stored_result_of_games_without_a_record() -> None:
    """Games stored before JSON records name their winners in the stored result."""
    assert outcomes(["a", "b"], "finished", {"winners": ["b"]}, None) == ("won", ["lost", "won"])
    assert outcomes(["a", "b"], "resigned", {"winner": "a"}, None) == (
        "resigned",
        ["won", "resigned"],
    )
    assert outcomes(["a", "b"], "server-restart", {"winner": None}, None) == (
        "aborted",
        ["aborted", "aborted"],
    )
    assert outcomes(["a", "b"], "finished", {"winners": ["a", "b"]}, None)[0] == "drawn"


def _query(search: dict[str, Any]) -> tuple[str, list[Any]]:
    every: dict[str, Any] = {
        "game": None, "player": None, "result": None, "ended_from": None,
        "ended_to": None, "before": None, "limit": 50,
    }  # fmt: skip
    return _search_sql(**{**every, **search})


def _sqlite_plan(path: Path, **search: Any) -> str:
    sql, args = _query(search)
    db = sqlite3.connect(path)
    try:
        return " | ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, args))
    finally:
        db.close()


def test_sqlite_searches_through_the_indexes(tmp_path: Path) -> None:
    """A player's results come from (player, outcome, game_id); a result without a
    player from (outcome, id); a game's from (game, id): no scan of all games."""
    path = tmp_path / "s.sqlite3"
    store = Store(path, wall_clock=Clock())
    _fill(store, Clock(), 30)
    store.close()
    db = sqlite3.connect(path)
    db.execute("ANALYZE")
    db.commit()
    db.close()
    mine = _sqlite_plan(path, player="ann", result="lost", ended_from=1.0, ended_to=2e9)
    assert "USING COVERING INDEX game_players_outcome" in mine or (
        "USING INDEX game_players_outcome" in mine
    ), mine
    theirs = _sqlite_plan(path, result="drawn", before=20)
    assert "USING INDEX games_outcome" in theirs, theirs
    assert "SCAN g" not in theirs, theirs
    days = _sqlite_plan(path, ended_from=Clock().now + DAY, ended_to=Clock().now + 2 * DAY)
    assert "USING INDEX games_ended" in days, days
    kind = _sqlite_plan(path, game="scrabble", before=20)
    # One kind of game only here: the planner may walk the ids down instead.
    assert "USING INDEX games_game_id" in kind or "USING INTEGER PRIMARY KEY" in kind, kind
    assert "SCAN" not in kind, kind


def test_postgresql_searches_through_the_indexes(pg_url: str) -> None:
    """The same queries, explained by PostgreSQL (sequential scans off, as a table of
    thirty rows would have them): an index each."""
    store = open_store(pg_url, wall_clock=Clock())
    try:
        _fill(store, Clock(), 30)
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        for search, index in (
            ({"player": "ann", "result": "lost"}, "game_players_outcome"),
            ({"result": "drawn"}, "games_outcome"),
            ({"game": "scrabble", "before": 20}, "games_game_id"),
            ({"ended_from": Clock().now + DAY, "ended_to": Clock().now + 2 * DAY}, "games_ended"),
        ):
            sql, args = _query(search)
            plan = "\n".join(r[0] for r in conn.execute(_pg("EXPLAIN " + sql), args))
            assert index in plan, (search, plan)
            assert "Seq Scan" not in plan, (search, plan)


class _Schema6(SqliteBackend):
    migrations = _MIGRATIONS[:6]


def test_games_stored_before_schema_7_get_their_outcomes(tmp_path: Path) -> None:
    """Opening a schema 6 file fills each stored game's outcomes: the search finds them."""
    path = tmp_path / "old.sqlite3"
    old = _Schema6(str(path))
    old.migrate()
    with old.transaction() as tx:
        for gid, (reason, result, players) in enumerate(
            [("resigned", '{"winner": "bob"}', '["ann", "bob"]'),
             ("finished", '{"winners": ["ann"]}', '["ann", "cy"]'),
             ("aborted", "{}", '["cy", "bob"]')],
            start=1,
        ):  # fmt: skip
            tx.execute(
                "INSERT INTO games (id, game, variant, protocols, players, started_at,"
                " ended_at, end_reason, result, record) VALUES (?, 'santorini', 'standard',"
                " '[]', ?, 1, 2, ?, ?, '')",
                (gid, players, reason, result),
            )
            tx.execute(
                "INSERT INTO game_players (game_id, seat, player)"
                " SELECT ?, CAST(p.key AS INTEGER), p.value FROM json_each(?) AS p",
                (gid, players),
            )
    old.close()
    store = Store(path)
    try:
        assert [r.id for r in store.search_games(player="ann", result="lost")] == [1]
        assert [r.id for r in store.search_games(player="ann", result="won")] == [2]
        assert [r.id for r in store.search_games(result="aborted")] == [3]
        assert [r.id for r in store.search_games(result="resigned")] == [1]
        assert [r.id for r in store.search_games(player="bob", result="won")] == [1]
    finally:
        store.close()


def test_an_analysis_is_kept_by_uid_and_version(store: Store) -> None:
    """Kept once per (uid, version): read back the same, another version not found, and
    a second keep of the same version leaves the first."""
    steps = {"steps": [None, {"best": "QI", "equity": 12.5}]}
    assert store.analysis("u1", 1) is None
    store.keep_analysis("u1", 1, steps)
    store.keep_analysis("u1", 1, {"steps": []})
    assert store.analysis("u1", 1) == steps
    assert store.analysis("u1", 2) is None
    assert store.analysis("u2", 1) is None


def test_the_store_nodes_search_read_takes_the_filters(tmp_path: Path) -> None:
    """A cluster edge's ``search_games`` read (meeple.node.store): the new filters by
    their wire names, 0 and "" for none; a result that is no outcome is refused."""
    from meeple.node.store import _check, _read

    clock = Clock()
    store = Store(tmp_path / "s.sqlite3", wall_clock=clock)
    try:
        made = _fill(store, clock, 12)
        args: dict[str, Any] = {
            "game": "", "player": "ann", "result": "lost", "ended_from": 0,
            "ended_to": int(made[6][1]), "before": 0, "limit": 50,
        }  # fmt: skip
        _check("search_games", args)
        found = _read(store, "search_games", args)
        assert isinstance(found, list)
        assert [r.id for r in found] == _want(made, "ann", "lost", None, made[6][1], None)
        with pytest.raises(ValueError, match="result"):
            _read(store, "search_games", {**args, "result": "maybe"})
        with pytest.raises(ValueError, match="takes"):
            _check("search_games", {k: v for k, v in args.items() if k != "result"})
        with pytest.raises(ValueError, match="ended_to"):
            _check("search_games", {**args, "ended_to": -1})
    finally:
        store.close()


def test_the_store_node_keeps_an_edges_analysis_only_of_a_stored_game(
    tmp_path: Path,
) -> None:
    """``keep_analysis`` (meeple.node.store): kept for a game the store holds, then read
    back by ``read_analysis``; nothing for an unknown uid; junk, a wrong shape or too
    many bytes refused as a wire error, nothing kept."""
    import asyncio
    import json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from meeple.bus.subjects import Namespace
    from meeple.node import wire
    from meeple.node.store import MAX_ANALYSIS, StoreRole, _read

    store = Store(tmp_path / "s.sqlite3", wall_clock=Clock())
    try:
        _fill(store, Clock(), 2)
        role = StoreRole(None, Namespace("meeple"), store)  # type: ignore[arg-type]

        def keep(payload: bytes) -> bytes:
            """The answer as the bytes it crosses a network as (sealed in one process)."""
            return asyncio.run(role._keep(payload)).encode()

        steps = [None, {"best": "GGG6 on 0", "equity_lost": 0.0}]
        body = {"uid": "g1", "version": 3, "steps": steps}
        assert wire.loads(keep(json.dumps(body).encode()), bool) is True
        assert _read(store, "read_analysis", {"uid": "g1", "version": 3}) == {"steps": steps}
        unknown = {**body, "uid": "nosuchgame"}
        assert wire.loads(keep(json.dumps(unknown).encode()), bool) is False
        assert store.analysis("nosuchgame", 3) is None
        refused = [
            b"not json",
            json.dumps({**body, "extra": 1}).encode(),
            json.dumps({**body, "version": -1}).encode(),
            json.dumps({**body, "steps": "x"}).encode(),
            json.dumps({**body, "uid": "g1\x00"}).encode(),
            json.dumps({**body, "steps": ["x" * MAX_ANALYSIS]}).encode(),
        ]
        for payload in refused:
            with pytest.raises(wire.WireError):
                keep(payload)

        @settings(max_examples=150, deadline=None)
        @given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
        def junk(payload: bytes) -> None:
            try:
                answer = keep(payload)
            except wire.WireError:
                return
            assert wire.loads(answer, bool) in (True, False)

        junk()
        assert store.analysis("g0", 3) is None
        assert _read(store, "read_analysis", {"uid": "g1", "version": 3}) == {"steps": steps}
    finally:
        store.close()

"""The store, on each backend (the ``store``/``store_url`` fixtures): migrations, game
records, ratings, accounts and checkpoints survive a reopen. SQLite's own upgrade from
its first schema is tested on SQLite only."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from random import Random
from typing import Any

import pytest

from meeple import ratings
from meeple.games.records import replay
from meeple.games.spectrangle import Game as SpectrangleGame
from meeple.games.spectrangle.record import to_record
from meeple.server.store.database import SCHEMA_VERSION, Store, open_store

# The schema as version 1 of the store created it (migration 1, verbatim).
_VERSION_1 = """
CREATE TABLE games (
    id INTEGER PRIMARY KEY, game TEXT NOT NULL, variant TEXT NOT NULL,
    protocols TEXT NOT NULL, players TEXT NOT NULL, started_at REAL NOT NULL,
    ended_at REAL NOT NULL, end_reason TEXT NOT NULL, result TEXT NOT NULL,
    record TEXT NOT NULL);
CREATE INDEX games_ended ON games (ended_at);
CREATE TABLE checkpoints (key TEXT PRIMARY KEY, saved_at REAL NOT NULL, state TEXT NOT NULL);
PRAGMA user_version = 1;
"""


def test_new_file_is_migrated_and_reopens_without_change(tmp_path: Path) -> None:
    """A fresh file (in a folder made for it) gets the current schema; reopening it
    applies nothing twice."""
    path = tmp_path / "sub" / "meeple.sqlite3"
    Store(path).close()
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION
    store.close()


def test_a_new_store_is_migrated_and_reopens_without_change(store_url: str) -> None:
    """A fresh database gets the current schema; reopening it applies nothing twice."""
    open_store(store_url).close()
    store = open_store(store_url)
    assert store.schema_version == SCHEMA_VERSION
    store.close()


def test_game_records_round_trip_newest_first(store_url: str) -> None:
    """Recorded games come back whole, newest first, filterable by game."""
    now = iter([100.0, 200.0, 300.0])
    store = open_store(store_url, wall_clock=lambda: next(now))
    first = store.record_game(
        game="scrabble",
        variant="twente",
        protocols=["twente", "twente"],
        players=["alice", "bob"],
        started_at=50.0,
        end_reason="normal",
        result={"scores": {"alice": 300, "bob": 250}},
        record="#player1 alice alice\n",
    )
    store.record_game(
        game="spectrangle",
        variant="standard",
        protocols=["spectrangle"],
        players=["c", "d"],
        started_at=60.0,
        end_reason="normal",
        result={},
        record="",
    )
    store.close()
    store = open_store(store_url)
    assert [g.game for g in store.games()] == ["spectrangle", "scrabble"]
    rec = store.games(game="scrabble")[0]
    assert rec.id == first
    assert rec.protocols == ("twente",)
    assert rec.players == ("alice", "bob")
    assert rec.ended_at == 100.0
    assert rec.result == {"scores": {"alice": 300, "bob": 250}}
    assert rec.record.startswith("#player1")
    assert store.game(first) == rec
    assert store.game(9999) is None
    store.close()


def test_checkpoints_replace_and_persist(store_url: str) -> None:
    """A checkpoint is replaced by the next under the same key and survives a reopen;
    keys list in byte order."""
    store = open_store(store_url)
    store.save_checkpoint("cmpn402:1", {"turn": 1})
    store.save_checkpoint("cmpn402:1", {"turn": 2, "board": ["." * 15] * 15})
    store.save_checkpoint("Z", {})
    store.close()
    store = open_store(store_url)
    assert store.load_checkpoint("cmpn402:1") == {"turn": 2, "board": ["." * 15] * 15}
    assert store.checkpoint_keys() == ["Z", "cmpn402:1"]
    store.delete_checkpoint("cmpn402:1")
    store.delete_checkpoint("Z")
    assert store.load_checkpoint("cmpn402:1") is None
    assert store.checkpoint_keys() == []
    store.close()


def _version_1_file(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(_VERSION_1)
    rows = [
        ("scrabble", "twente", "#character-encoding UTF-8\n>a: ABC 8H CAB +14 14\n"),
        ("santorini", "gods", json.dumps(["Move(player=0, src=1, dst=2)"])),
        ("spectrangle", "standard", json.dumps({"players": ["a", "b"], "bag": [], "actions": []})),
    ]
    for i, (game, variant, record) in enumerate(rows):
        db.execute(
            "INSERT INTO games (game, variant, protocols, players, started_at, ended_at,"
            " end_reason, result, record) VALUES (?, ?, '[]', ?, ?, ?, 'x', '{}', ?)",
            (game, variant, '["a", "b"]', float(i), float(i + 1), record),
        )
    db.execute("INSERT INTO checkpoints VALUES ('cmpn402:x', 1.0, '{\"turn\": 3}')")
    db.commit()
    db.close()


def test_a_version_1_file_upgrades_and_keeps_its_old_rows(tmp_path: Path) -> None:
    """Old rows keep their record text, have no JSON record and are not replayable;
    checkpoints survive; new rows store a record that replays."""
    path = tmp_path / "old.sqlite3"
    _version_1_file(path)
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION
    old = {g.game: g for g in store.games()}
    assert set(old) == {"scrabble", "santorini", "spectrangle"}
    assert old["scrabble"].record.startswith("#character-encoding")
    assert old["santorini"].record == json.dumps(["Move(player=0, src=1, dst=2)"])
    assert all(g.data is None and not g.replayable for g in old.values())
    # Schema 3 knows who sat where in the old games, and rates none of them.
    assert {g.game for g in store.player("a").games} == set(old)
    assert store.leaderboard("scrabble") == []
    assert store.load_checkpoint("cmpn402:x") == {"turn": 3}

    game = SpectrangleGame(["a", "b"], Random(3))
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        game.apply(game.legal_actions(turn)[0])
    new_id = store.record_game(
        game="spectrangle",
        variant="standard",
        protocols=["spectrangle"],
        players=["a", "b"],
        started_at=10.0,
        end_reason="finished",
        result={},
        record="",
        data=to_record(game),
    )
    store.close()
    store = Store(path)
    stored = store.game(new_id)
    assert stored is not None
    assert stored.replayable
    assert stored.data == json.loads(json.dumps(to_record(game)))
    assert [s.game.state() for s in replay(stored.data)][-1] == game.state()
    assert store.schema_version == SCHEMA_VERSION
    store.close()


def _rated_record(players: list[str], scores: list[int], winners: list[int]) -> dict[str, Any]:
    return {
        "format": "meeple.record",
        "game": "scrabble",
        "version": 1,
        "players": players,
        "actions": [],
        "result": {"reason": "went-out", "player": None, "scores": scores, "winners": winners},
    }


def _store_game(store: Store, players: list[str], scores: list[int], winners: list[int]) -> int:
    return store.record_game(
        game="scrabble",
        variant="twente",
        protocols=["twente"],
        players=players,
        started_at=0.0,
        end_reason="went-out",
        result={},
        record="",
        data=_rated_record(players, scores, winners),
    )


def test_finished_games_update_ratings_with_history(store_url: str) -> None:
    """Each stored game rates its players: leaderboard, history per game, profile."""
    clock = iter(float(t) for t in range(100, 200))
    store = open_store(store_url, wall_clock=lambda: next(clock))
    first = _store_game(store, ["ann", "bob"], [300, 200], [0])
    second = _store_game(store, ["ann", "bob", "cat"], [250, 260, 100], [1])
    board = store.leaderboard("scrabble", 10)
    # ann won 300-200, then bob won the three-player game: ann's first win still counts.
    assert [(r.player, r.games) for r in board] == [("ann", 2), ("bob", 2), ("cat", 1)]
    assert board[0].rating >= board[1].rating >= board[2].rating
    assert all(r.rd < 350 for r in board)
    history = store.rating_history("scrabble", "ann")
    assert [h.game_id for h in history] == [first, second]
    assert [h.games for h in history] == [1, 2]
    assert history[0].rating > 1500  # won the first game
    assert history[-1].rating == next(r.rating for r in board if r.player == "ann")
    profile = store.player("cat")
    assert [r.game for r in profile.ratings] == ["scrabble"]
    assert [g.id for g in profile.games] == [second]
    assert [g.id for g in store.player("ann").games] == [second, first]
    assert store.leaderboard("santorini", 10) == []
    assert store.player("nobody").ratings == ()
    store.close()


def test_unrated_games_leave_ratings_alone(store: Store) -> None:
    """No record, a lone player or a game without a result: stored, not rated."""
    store.record_game(
        game="scrabble",
        variant="twente",
        protocols=["twente"],
        players=["ann", "bob"],
        started_at=0.0,
        end_reason="x",
        result={},
        record="",
    )
    _store_game(store, ["solo"], [10], [0])
    assert store.leaderboard("scrabble", 10) == []
    assert len(store.games()) == 2


def test_a_failing_rating_update_stores_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game row and the ratings are one transaction: both or neither."""

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(ratings, "rate_game", broken)
    with pytest.raises(RuntimeError):
        _store_game(store, ["ann", "bob"], [1, 0], [0])
    assert store.games() == []
    assert store.player("ann").games == ()
    assert store.leaderboard("scrabble") == []


def test_ties_on_the_leaderboard_go_in_byte_order(store: Store) -> None:
    """Equal ratings list by name in byte order (capitals first) on every backend."""
    _store_game(store, ["bob", "Bob"], [10, 10], [0, 1])
    _store_game(store, ["ann", "Ann"], [10, 10], [0, 1])
    board = store.leaderboard("scrabble")
    assert len({(r.rating, r.rd) for r in board}) == 1
    assert [r.player for r in board] == ["Ann", "Bob", "ann", "bob"]


def test_a_game_is_found_by_its_records_uid(store: Store) -> None:
    """game_by_uid finds the newest game whose JSON record carries the uid; a game
    without a record, or with another uid, is not it."""
    store.record_game(
        game="scrabble",
        variant="twente",
        protocols=["twente"],
        players=["a", "b"],
        started_at=0.0,
        end_reason="x",
        result={},
        record="",
    )
    first = _store_game(store, ["a", "b"], [1, 0], [0])
    data = {**_rated_record(["a", "b"], [1, 0], [0]), "uid": "room-7"}
    found = store.record_game(
        game="scrabble",
        variant="twente",
        protocols=["twente"],
        players=["a", "b"],
        started_at=0.0,
        end_reason="x",
        result={},
        record="",
        data=data,
    )
    assert first != found
    stored = store.game_by_uid("room-7")
    assert stored is not None
    assert stored.id == found
    assert stored.data == data
    assert store.game_by_uid("room-8") is None


def test_a_rooms_game_is_stored_once_by_its_uid(store: Store) -> None:
    """record_game_once stores room r1's game the first time, and gives that game's id
    back after (a takeover's second writer); another uid is another game."""
    data = {**_rated_record(["a", "b"], [1, 0], [0]), "uid": "r1"}
    game: dict[str, Any] = {
        "game": "scrabble",
        "variant": "twente",
        "protocols": ["twente"],
        "players": ["a", "b"],
        "started_at": 0.0,
        "end_reason": "x",
        "result": {},
        "record": "",
        "data": data,
    }
    first = store.record_game_once("r1", **game)
    assert store.record_game_once("r1", **game) == first
    other = store.record_game_once("r2", **{**game, "data": {**data, "uid": "r2"}})
    assert other != first
    assert [g.id for g in store.games(limit=10)] == [other, first]


def test_a_sqlite_look_up_by_uid_searches_an_index(tmp_path: Path) -> None:
    """game_by_uid on SQLite is an index search (schema 8), not a read of every game's
    JSON (119 ms a look-up at 20,000 games): the query as the store runs it."""
    from meeple.server.store.database import SqliteBackend

    path = tmp_path / "meeple.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    try:
        plan = db.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM games WHERE {SqliteBackend.uid_matches}"
            " ORDER BY id DESC LIMIT 1",
            ("room-7",),
        ).fetchall()
    finally:
        db.close()
    assert any("USING INDEX games_uid" in row[-1] for row in plan), plan


def test_records_that_are_odd_json_are_stored_and_the_rest_still_found(store: Store) -> None:
    """A record with NaN (Python writes it, JSON has none) is stored and read back but
    found by no uid; one with an escaped NUL in a string is found; lookups go on."""

    def store_record(data: dict[str, Any]) -> int:
        return store.record_game(
            game="spectrangle",
            variant="standard",
            protocols=["spectrangle"],
            players=["a"],
            started_at=0.0,
            end_reason="x",
            result={},
            record="",
            data=data,
        )

    odd = store_record({"uid": "nan", "clock": float("nan")})
    nul = store_record({"uid": "nul", "chat": "a\x00b"})
    plain = store_record({"uid": "plain"})
    stored = store.game(odd)
    assert stored is not None
    assert stored.data is not None
    assert stored.data["clock"] != stored.data["clock"]  # NaN came back
    assert store.game_by_uid("nan") is None
    found = store.game_by_uid("nul")
    assert found is not None
    assert found.id == nul
    assert found.data == {"uid": "nul", "chat": "a\x00b"}
    found = store.game_by_uid("plain")
    assert found is not None
    assert found.id == plain


def test_a_name_is_reserved_once_per_casefold(store: Store) -> None:
    """An account reserves a name and its casefold; the hash and salt come back as bytes."""
    assert store.add_account("Ann", b"\x00hash\xff", b"salt", "scrypt:16384:8:1")
    assert not store.add_account("ANN", b"other", b"salt", "scrypt:16384:8:1")
    account = store.account("aNN")
    assert account is not None
    assert (account.name, account.password_hash, account.salt) == ("Ann", b"\x00hash\xff", b"salt")
    assert account.kdf == "scrypt:16384:8:1"
    assert store.account("bob") is None

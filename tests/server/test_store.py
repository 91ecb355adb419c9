"""The SQLite store: migrations, game records and checkpoints survive a reopen."""

from __future__ import annotations

from pathlib import Path

from meeple.server.store import Store


def test_new_file_is_migrated_and_reopens_without_change(tmp_path: Path) -> None:
    """A fresh file gets the current schema; reopening it applies nothing twice."""
    path = tmp_path / "sub" / "meeple.sqlite3"
    Store(path).close()
    store = Store(path)
    assert store.schema_version == 1
    store.close()


def test_game_records_round_trip_newest_first(tmp_path: Path) -> None:
    """Recorded games come back whole, newest first, filterable by game."""
    now = iter([100.0, 200.0, 300.0])
    store = Store(tmp_path / "db.sqlite3", wall_clock=lambda: next(now))
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
    store = Store(tmp_path / "db.sqlite3")
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


def test_checkpoints_replace_and_persist(tmp_path: Path) -> None:
    """A checkpoint is replaced by the next under the same key and survives a reopen."""
    store = Store(tmp_path / "db.sqlite3")
    store.save_checkpoint("cmpn402:1", {"turn": 1})
    store.save_checkpoint("cmpn402:1", {"turn": 2, "board": ["." * 15] * 15})
    store.close()
    store = Store(tmp_path / "db.sqlite3")
    assert store.load_checkpoint("cmpn402:1") == {"turn": 2, "board": ["." * 15] * 15}
    assert store.checkpoint_keys() == ["cmpn402:1"]
    store.delete_checkpoint("cmpn402:1")
    assert store.load_checkpoint("cmpn402:1") is None
    store.close()

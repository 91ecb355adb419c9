"""`meeple ratings`: the leaderboard of a real server's database after bot games."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from meeple.cli.main import main
from meeple.server.app import MeepleServer
from meeple.server.store.database import open_store


def test_two_bots_play_and_the_leaderboard_counts_their_games(
    threaded_server: Callable[..., MeepleServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two `meeple bot spectrangle --games 2` over a socket: both rated, 2 games each."""
    server = threaded_server("spectrangle")
    port = server.ports["spectrangle"]
    codes: list[int] = []

    def bot(name: str) -> None:
        args = ["bot", "spectrangle", "--port", str(port), "--name", name, "--games", "2"]
        codes.append(main(args))

    threads = [threading.Thread(target=bot, args=(n,)) for n in ("ann", "ben")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [0, 0]
    capsys.readouterr()
    assert main(["ratings", "--database", server.config.database]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "spectrangle"
    assert out[1].split() == ["#", "player", "rating", "RD", "games"]
    rows = [line.split() for line in out[2:]]
    assert sorted(r[1] for r in rows) == ["ann", "ben"]
    assert [r[0] for r in rows] == ["1", "2"]
    assert [r[4] for r in rows] == ["2", "2"]
    assert int(rows[0][2]) >= int(rows[1][2])
    assert main(["ratings", "--game", "santorini", "--database", server.config.database]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "santorini",
        "   #  player  rating    RD  games",
    ]


def test_a_missing_database_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No file is created for a mistyped path."""
    missing = tmp_path / "nope.sqlite3"
    assert main(["ratings", "--database", str(missing)]) == 1
    assert "no database" in capsys.readouterr().err
    assert not missing.exists()
    assert main(["ratings", "--database", str(missing), "--limit", "0"]) == 2


def test_the_leaderboard_reads_a_postgresql_store(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A postgresql:// URL is a --database like a file: its rated games are listed."""
    store = open_store(pg_url)
    assert main(["ratings", "--database", pg_url]) == 0
    assert capsys.readouterr().out == "no rated games yet\n"
    store.record_game(
        game="spectrangle",
        variant="standard",
        protocols=["spectrangle"],
        players=["ann", "ben"],
        started_at=0.0,
        end_reason="finished",
        result={},
        record="",
        data={
            "format": "meeple.record",
            "game": "spectrangle",
            "version": 1,
            "players": ["ann", "ben"],
            "actions": [],
            "result": {"reason": "finished", "scores": [30, 20], "winners": [0]},
        },
    )
    store.close()
    assert main(["ratings", "--database", pg_url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "spectrangle"
    assert [line.split()[1] for line in out[2:]] == ["ann", "ben"]

"""The crash test's sample in `make test` (the harness is tests/crash.py; `make crash` runs it
with 50 kills): `meeple serve` killed with SIGKILL at random moments while games of every
protocol run, started again on the same database each time (docs/crash.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.crash import crash_run

from meeple.games.scrabble.lexicon import Lexicon

pytestmark = pytest.mark.slow

# MEEPLE_CRASH_SEED=N replays another schedule (a failure prints its seed).
SEED = int(os.environ.get("MEEPLE_CRASH_SEED", "1126"))


async def test_no_game_is_lost_when_the_server_is_killed(tmp_path: Path, gcide: Lexicon) -> None:
    """Three kills while Twente, Clarkson, AM27, Spectrangle, CMPN402 and browser games run:
    every game a client saw end is stored once with the scores it saw, every room's log
    is closed on a stored game whose record replays its actions, ratings count the stored
    games, the file is sound; browsers that took their seat back played on to the end."""
    report = await crash_run(
        f"sqlite:///{tmp_path / 'db.sqlite3'}",
        kills=3,
        seed=SEED,
        workdir=tmp_path,
        lexicon=gcide,
        kill_after=(1.0, 4.0),
        rejoin=0.9,
    )
    assert report.ok, report.summary()
    assert report.ended() > 0, report.summary()
    assert report.restored > 0, report.summary()
    assert any(s.rejoins and s.ended for s in report.seen), report.summary()

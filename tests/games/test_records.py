"""What every game's record shares: loading JSON with limits, the envelope, dispatch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games import records
from meeple.games.records import RecordError


def test_load_limits_size_and_refuses_non_records() -> None:
    with pytest.raises(RecordError, match="limit"):
        records.load(" " * (records.MAX_RECORD_SIZE + 1))
    with pytest.raises(RecordError, match="JSON"):
        records.load("[" * 100_000)
    with pytest.raises(RecordError):
        records.load(b"\xff\xfe")
    with pytest.raises(RecordError):
        records.load('{"format": "meeple.record", "game": "chess"}')
    with pytest.raises(RecordError):
        records.replay({"game": "chess"})


def test_a_record_error_carries_the_failing_action() -> None:
    """RecordError is a ValueError that says which action failed, if one did."""
    error = RecordError("bad move", index=3)
    assert isinstance(error, ValueError)
    assert error.index == 3
    assert str(error) == "action 3: bad move"
    assert RecordError("bad").index is None


@pytest.mark.parametrize("game", records.GAMES)
def test_the_header_is_checked_for_every_game(game: str) -> None:
    """Format, game name and version are checked before anything else."""
    good = {"format": "meeple.record", "game": game, "version": 1}
    with pytest.raises(RecordError, match="version"):
        records.replay({**good, "version": 2})
    with pytest.raises(RecordError, match="version"):
        records.replay({**good, "version": True})
    with pytest.raises(RecordError, match="record"):
        records.replay({**good, "format": "other"})
    with pytest.raises(RecordError, match="players"):
        records.replay({**good, "players": "ab"})


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200) | st.binary(max_size=200))
def test_load_raises_record_error_only(text: str | bytes) -> None:
    """Arbitrary text or bytes: a record envelope or RecordError, nothing else."""
    try:
        data = records.load(text)
    except RecordError:
        return
    assert data["game"] in records.GAMES

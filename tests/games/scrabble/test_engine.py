"""Choosing a move generator by name, and the log line that says which one runs."""

from __future__ import annotations

import logging

import pytest

import meeple.games.scrabble.engine as engine
from meeple.games.scrabble.engine import EngineUnavailable, get_generator, sort_leave


def test_auto_logs_the_engine_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """'auto' says once, at INFO, which generator it picked; later calls say nothing."""
    monkeypatch.setattr(engine, "_announced", False)
    with caplog.at_level(logging.INFO, logger="meeple.games.scrabble.engine"):
        first = get_generator("auto")
        second = get_generator("auto")
    assert first is second
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [f"scrabble move generator: {first.name}"] or (
        len(lines) == 1 and lines[0].startswith("scrabble move generator: python (")
    )


def test_auto_falls_back_to_python_when_native_is_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without the extension, 'native' raises EngineUnavailable and 'auto' is python, logged."""
    monkeypatch.setattr(engine, "_generators", {})
    monkeypatch.setattr(engine, "_native_error", EngineUnavailable("not built (test)"))
    monkeypatch.setattr(engine, "_announced", False)
    with pytest.raises(EngineUnavailable):
        get_generator("native")
    with caplog.at_level(logging.INFO, logger="meeple.games.scrabble.engine"):
        assert get_generator("auto").name == "python"
    assert "python (not built (test))" in caplog.text


def test_unknown_engine_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="native, python"):
        get_generator("rust")


def test_leaves_are_written_letters_then_blanks() -> None:
    assert sort_leave("S?EA?") == "AES??"

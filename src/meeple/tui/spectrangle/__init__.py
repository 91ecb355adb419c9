"""Spectrangle in the terminal: events and moves, typed notation, the stream connection, the app."""

from __future__ import annotations

from meeple.tui.spectrangle.notation import CommandError, CommandSuggester, parse_command
from meeple.tui.spectrangle.table import Phase, Table

__all__ = ["CommandError", "CommandSuggester", "Phase", "Table", "parse_command"]

"""Scrabble in the terminal: events and moves, typed notation, protocol adapters, the app."""

from __future__ import annotations

from meeple.tui.scrabble import events, notation
from meeple.tui.scrabble.events import *  # noqa: F403
from meeple.tui.scrabble.notation import *  # noqa: F403

__all__ = [*events.__all__, *notation.__all__]

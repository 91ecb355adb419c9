"""Scrabble in the terminal: events and moves, typed notation, protocol adapters, the app."""

from __future__ import annotations

from meeple.tui.scrabble.events import (
    ChatReceived,
    ConnectionLost,
    GameEnded,
    Pass,
    PlayerLeft,
    PlayWord,
    Queued,
    RackChanged,
    Refused,
    Say,
    ScrabbleEvent,
    ScrabbleMove,
    Started,
    Swap,
    Swapped,
    TurnChanged,
    Welcomed,
    WordPlayed,
)
from meeple.tui.scrabble.notation import CommandError, CommandSuggester, parse_command

__all__ = [
    "ChatReceived",
    "CommandError",
    "CommandSuggester",
    "ConnectionLost",
    "GameEnded",
    "Pass",
    "PlayWord",
    "PlayerLeft",
    "Queued",
    "RackChanged",
    "Refused",
    "Say",
    "ScrabbleEvent",
    "ScrabbleMove",
    "Started",
    "Swap",
    "Swapped",
    "TurnChanged",
    "Welcomed",
    "WordPlayed",
    "parse_command",
]

"""Which games ``meeple play`` knows, over which protocols, and where their code lives.

Name -> implementation, uvicorn style: a game is playable over a protocol when its
entry names an adapter for it. References are ``"module:attribute"`` strings so that
choosing a game imports only that game's app and that protocol's adapter. To plug in
a new protocol's client library, write an adapter (a :data:`~meeple.tui.connection.Connector`
yielding the game's events) and add one line to the game's ``protocols``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["GAMES", "GameEntry", "load"]


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One game: its app class and, per protocol name, the adapter's connector."""

    title: str
    app: str
    protocols: Mapping[str, str]
    default_protocol: str


GAMES: Mapping[str, GameEntry] = {
    "scrabble": GameEntry(
        title="Scrabble",
        app="meeple.tui.scrabble.app:ScrabbleApp",
        protocols={
            "twente": "meeple.tui.scrabble.twente:connect",
            "cmpn402": "meeple.tui.scrabble.cmpn402:connect",
            "clarkson": "meeple.tui.scrabble.clarkson:connect",
        },
        default_protocol="twente",
    ),
    "spectrangle": GameEntry(
        title="Spectrangle",
        app="meeple.tui.spectrangle.app:SpectrangleApp",
        protocols={"spectrangle": "meeple.tui.spectrangle.adapter:connect"},
        default_protocol="spectrangle",
    ),
    "santorini": GameEntry(
        title="Santorini",
        app="meeple.tui.santorini.app:SantoriniGameApp",
        protocols={"santorini": "meeple.tui.santorini.am27:connect"},
        default_protocol="santorini",
    ),
}


def load(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names (imports the module)."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)

"""Terminal clients for people: one Textual app per game, any protocol plugged in by name.

The layout, from the bottom up:

- :mod:`meeple.tui.connection`: the one interface an app talks to. A connection is
  asynchronous, game-level and protocol-free: an iterator of *events* in (a word was
  played, it is your turn, the server refused your move and why) and ``send(move)``
  out. Each protocol gets a small adapter that turns its client library into one.
- :mod:`meeple.tui.registry`: which games exist, which protocols each can be played
  over, and where the app and each adapter live (``"module:attribute"`` strings, so
  ``meeple play`` imports only what it runs).
- one package per game (:mod:`meeple.tui.scrabble`, :mod:`meeple.tui.spectrangle`):
  the events and moves, the notation players type, the adapters and the app.

``meeple play GAME [--protocol NAME] [--host H] [--port P] [--name N]`` (in
:mod:`meeple.cli.play`) puts them together.
"""

from __future__ import annotations

from meeple.tui.connection import ConnectFailed, Connection, ConnectOptions, Connector
from meeple.tui.registry import GAMES, GameEntry, load

__all__ = [
    "GAMES",
    "ConnectFailed",
    "ConnectOptions",
    "Connection",
    "Connector",
    "GameEntry",
    "load",
]

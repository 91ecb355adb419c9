"""Santorini in the terminal: a view over plain data and the screen that draws it.

The Santorini engine and the AM27 client are not on this branch yet, so this package
stops at the view: :class:`~meeple.tui.santorini.view.SantoriniView` holds what an
AM27 ``UPDATE`` tells a player (cells with building levels, domes and workers, the
active player, reachable and buildable cells, the flags) and
:class:`~meeple.tui.santorini.app.SantoriniApp` draws it and reports the cells the
player picks. Wiring it to a protocol means an adapter yielding views (see
``docs/play.md``).
"""

from __future__ import annotations

from meeple.tui.santorini.view import SIZE, Cell, SantoriniView, Square, Worker

__all__ = ["SIZE", "Cell", "SantoriniView", "Square", "Worker"]

"""What the Santorini app receives and sends, protocol-free.

Events carry whole :class:`~meeple.tui.santorini.view.SantoriniView` values (the
adapter folds the protocol's partial updates into them) plus lines for the player;
moves are the player's picks in game terms (cells as ``(row, column)``, 0–4).
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.tui.connection import ServerNotice
from meeple.tui.santorini.view import SantoriniView, Square
from meeple.tui.table import ConnectionLost

__all__ = [
    "BuildOn",
    "ChooseGod",
    "ChooseStarter",
    "Concede",
    "ConnectionLost",
    "GameOver",
    "MoveWorker",
    "Notice",
    "PassTurn",
    "PlaceWorker",
    "Prompt",
    "Refused",
    "SantoriniEvent",
    "SantoriniMove",
    "ServerNotice",
    "UndoStep",
    "ViewChanged",
]


@dataclass(frozen=True, slots=True)
class ViewChanged:
    """The board, players, whose turn or the options changed: draw ``view``."""

    view: SantoriniView


@dataclass(frozen=True, slots=True)
class Notice:
    """A line for the log (registered, players seated, a god taken …)."""

    text: str


@dataclass(frozen=True, slots=True)
class Prompt:
    """Something the player must answer by command (a god, the starter)."""

    text: str


@dataclass(frozen=True, slots=True)
class Refused:
    """The server refused the player's last command; ``text`` says why in words."""

    text: str


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game ended (``winner`` None: someone left or the player was knocked out)."""

    winner: str | None
    text: str


SantoriniEvent = ViewChanged | Notice | Prompt | Refused | GameOver | ConnectionLost | ServerNotice


@dataclass(frozen=True, slots=True)
class PlaceWorker:
    """Put one of the player's workers on an empty cell (set-up)."""

    cell: Square


@dataclass(frozen=True, slots=True)
class MoveWorker:
    """Move the worker on ``source`` to ``destination``."""

    source: Square
    destination: Square


@dataclass(frozen=True, slots=True)
class BuildOn:
    """Build with the worker on ``source`` on ``destination``; ``level`` None: the usual one."""

    source: Square
    destination: Square
    level: int | None = None


@dataclass(frozen=True, slots=True)
class PassTurn:
    """End the turn (when it is complete)."""


@dataclass(frozen=True, slots=True)
class UndoStep:
    """Take back the last step, or (``all``) the whole turn so far."""

    all: bool = False


@dataclass(frozen=True, slots=True)
class Concede:
    """Give up: the player cannot (or will not) complete the turn."""


@dataclass(frozen=True, slots=True)
class ChooseGod:
    """Offer (challenger) or take a god by name."""

    name: str


@dataclass(frozen=True, slots=True)
class ChooseStarter:
    """The challenger names the player who starts."""

    name: str


SantoriniMove = (
    PlaceWorker | MoveWorker | BuildOn | PassTurn | UndoStep | Concede | ChooseGod | ChooseStarter
)

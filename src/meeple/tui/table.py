"""What every game's table has in common, free of Textual: the phases, the events every
game's connection sends alike, and the part of the view model they keep up to date.

A game's table (:class:`meeple.tui.scrabble.table.Table`,
:class:`meeple.tui.spectrangle.table.Table`) subclasses :class:`BaseTable` with its own
board and events and hands the shared ones to :meth:`BaseTable.apply_shared`: a refusal,
a chat line and the end of the connection mean the same at every table.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = [
    "MAX_LOG",
    "BaseTable",
    "ChatReceived",
    "ConnectionLost",
    "Phase",
    "Refused",
    "Say",
    "SharedEvent",
    "Welcomed",
    "standings",
]

E = TypeVar("E")

MAX_LOG = 500  # lines kept in the move log and in the chat


class Phase(enum.Enum):
    """Where the player is: the app shows a different status line for each."""

    CONNECTING = "connecting"
    QUEUED = "queued"
    PLAYING = "playing"
    OVER = "over"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Welcomed:
    """The server let us in under ``name`` (and the game was asked for); ``chat`` when
    chat is on."""

    name: str
    chat: bool


@dataclass(frozen=True, slots=True)
class Refused:
    """The server refused our last message: ``code`` as on the wire, ``message`` in words."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ChatReceived:
    """A chat line to the table; our own lines come back too (adapters make sure of it)."""

    player: str
    text: str


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """The connection ended (the last event)."""

    reason: str


SharedEvent = Welcomed | Refused | ChatReceived | ConnectionLost


@dataclass(frozen=True, slots=True)
class Say:
    """The move that sends a chat line to the table."""

    text: str


def standings(scores: Sequence[tuple[str, int]]) -> str:
    """``Alice 312, Bob 280: Alice wins`` (or ``: a tie``) from final scores, best first."""
    text = ", ".join(f"{n} {s}" for n, s in scores)
    best = [n for n, s in scores if s == scores[0][1]] if scores else []
    return f"{text}: {best[0]} wins" if len(best) == 1 else f"{text}: a tie"


@dataclass
class BaseTable(Generic[E]):
    """One player's view of one game (and of the lobby before it): what every game keeps.

    ``E`` is the game's event type; :meth:`apply` takes each of them."""

    name: str = ""
    chat: bool = False
    phase: Phase = Phase.CONNECTING
    players: tuple[str, ...] = ()
    turn: str | None = None
    my_turn: bool = False
    log: list[str] = field(default_factory=list)
    chat_lines: list[tuple[str, str]] = field(default_factory=list)
    refusal: str | None = None  # the last refusal, until the next move is accepted
    closed_reason: str = ""

    def apply(self, event: E) -> None:
        """Take one event into account."""
        raise NotImplementedError

    def apply_shared(self, event: SharedEvent) -> None:
        """Take one of the events every game sends alike into account."""
        if isinstance(event, Welcomed):
            self.name, self.chat = event.name, event.chat
            self.phase = Phase.QUEUED
        elif isinstance(event, Refused):
            self.refusal = event.message
            self._log(f"refused: {event.message}")
        elif isinstance(event, ChatReceived):
            self.chat_lines.append((event.player, event.text))
            del self.chat_lines[:-MAX_LOG]
        else:
            self.phase = Phase.CLOSED
            self.closed_reason = event.reason
            self.my_turn = False

    def _log(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-MAX_LOG]

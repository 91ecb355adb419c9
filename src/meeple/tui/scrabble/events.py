"""What a Scrabble connection tells the app (events) and what the app asks of it (moves).

Protocol-free on purpose: an adapter per protocol (Twente, CMPN402; Clarkson when its
client library lands) turns its wire messages into these. Coordinates are
the engine's 0-based ``(x, y)``, words are whole words with blanks in lower case, and
racks use ``?`` for a blank, as everywhere in :mod:`meeple.games.scrabble`.
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.games.scrabble.board import Direction
from meeple.tui.connection import ServerNotice
from meeple.tui.table import ChatReceived, ConnectionLost, Refused, Say, Welcomed

__all__ = [
    "AnswerChallenge",
    "BagCount",
    "ChallengeClosed",
    "ChallengeOffered",
    "ChatReceived",
    "Clocks",
    "ConnectionLost",
    "GameEnded",
    "Noted",
    "Pass",
    "PlayWord",
    "PlayerLeft",
    "Queued",
    "RackChanged",
    "Refused",
    "Say",
    "ScrabbleEvent",
    "ScrabbleMove",
    "ServerNotice",
    "Started",
    "Swap",
    "Swapped",
    "TurnChanged",
    "Welcomed",
    "WordPlayed",
]


@dataclass(frozen=True, slots=True)
class Queued:
    """Waiting for a table: ``waiting`` of ``required`` players are there."""

    waiting: int
    required: int


@dataclass(frozen=True, slots=True)
class Started:
    """A game began with these players, in seat order.

    A game resumed from a checkpoint (CMPN402) starts from ``board`` (15 rows, ``.``
    empty, a blank in lower case) and ``scores``; both are empty for a new game.
    """

    players: tuple[str, ...]
    board: tuple[str, ...] = ()
    scores: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class RackChanged:
    """Our rack is now ``rack`` (``?`` for a blank)."""

    rack: str


@dataclass(frozen=True, slots=True)
class BagCount:
    """``count`` tiles are left in the bag."""

    count: int


@dataclass(frozen=True, slots=True)
class TurnChanged:
    """It is ``player``'s turn; ``mine`` when that is us."""

    player: str
    mine: bool


@dataclass(frozen=True, slots=True)
class WordPlayed:
    """``player`` played ``word`` from ``(x, y)``; ``score`` as the adapter knows it."""

    player: str
    x: int
    y: int
    direction: Direction
    word: str
    score: int


@dataclass(frozen=True, slots=True)
class Swapped:
    """``player`` exchanged ``count`` tiles; 0 is a pass."""

    player: str
    count: int


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """``player`` disconnected; the game may go on or end, as the server decides."""

    player: str


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over: ``reason`` in words and the final scores, best first."""

    reason: str
    scores: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Clocks:
    """Our clocks as of this event, in milliseconds: our own time and the game's total
    time, and whether each is running now (the app counts a running one down)."""

    player_ms: int
    total_ms: int
    player_running: bool
    total_running: bool


@dataclass(frozen=True, slots=True)
class ChallengeOffered:
    """``player``'s play awaits our verdict: challenge it or let it stand.

    ``words`` are the words it forms (main word first), ``score`` its claimed score and
    ``window_ms`` the time left to decide, as of this event.
    """

    player: str
    x: int
    y: int
    direction: Direction
    words: tuple[str, ...]
    score: int
    window_ms: int


@dataclass(frozen=True, slots=True)
class ChallengeClosed:
    """The challenge window is over (we answered, or the time ran out)."""


@dataclass(frozen=True, slots=True)
class Noted:
    """A line for the move log that no other event carries (a challenge's outcome)."""

    text: str


ScrabbleEvent = (
    ServerNotice
    | Welcomed
    | Queued
    | Started
    | RackChanged
    | BagCount
    | TurnChanged
    | WordPlayed
    | Swapped
    | Refused
    | ChatReceived
    | PlayerLeft
    | GameEnded
    | Clocks
    | ChallengeOffered
    | ChallengeClosed
    | Noted
    | ConnectionLost
)


@dataclass(frozen=True, slots=True)
class PlayWord:
    """Lay ``word`` (the whole word, blanks lower case) from ``(x, y)``."""

    x: int
    y: int
    direction: Direction
    word: str


@dataclass(frozen=True, slots=True)
class Swap:
    """Exchange these rack tiles (``?`` for a blank)."""

    tiles: str


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass the turn."""


@dataclass(frozen=True, slots=True)
class AnswerChallenge:
    """Our verdict on the play offered for challenge: ``True`` challenges it."""

    challenge: bool


ScrabbleMove = PlayWord | Swap | Pass | Say | AnswerChallenge

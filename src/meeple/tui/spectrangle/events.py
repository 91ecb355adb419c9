"""What a Spectrangle connection tells the app (events) and what the app asks (moves).

Protocol-free like :mod:`meeple.tui.scrabble.events`; tiles are the engine's
:class:`~meeple.games.spectrangle.tiles.Tile` values and fields its indices 0–35.
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.games.spectrangle.tiles import Tile
from meeple.tui.connection import ServerNotice
from meeple.tui.table import ChatReceived, ConnectionLost, Refused, Say, Welcomed

__all__ = [
    "ChatReceived",
    "ConnectionLost",
    "ExchangeTile",
    "Exchanged",
    "GameEnded",
    "HandsDealt",
    "PlaceTile",
    "Placed",
    "PlayerLeft",
    "Queued",
    "Refused",
    "Say",
    "ServerNotice",
    "SkipAnnounced",
    "SkipTurn",
    "Skipped",
    "SpectrangleEvent",
    "SpectrangleMove",
    "Started",
    "Welcomed",
]


@dataclass(frozen=True, slots=True)
class Queued:
    """The queue for our table size holds these players."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Started:
    """A game began; ``order`` is the order of turns."""

    players: tuple[str, ...]
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HandsDealt:
    """Every player's hand (Spectrangle hands are open) and whose turn it is.

    ``must_skip``: the server found no legal placement for ``player``, who must skip or
    exchange a tile.
    """

    hands: tuple[tuple[str, tuple[Tile, ...]], ...]
    player: str
    must_skip: bool
    mine: bool


@dataclass(frozen=True, slots=True)
class SkipAnnounced:
    """The server says ``player`` has no legal placement and must skip or exchange (the
    1.3 stand-alone ``skip <name>``, no tiles line); ``mine`` when that is us."""

    player: str
    mine: bool


@dataclass(frozen=True, slots=True)
class Placed:
    """``player`` laid ``tile`` (in the rotation it lies in) on field ``index``."""

    player: str
    tile: Tile
    index: int
    points: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """``player`` skipped a turn without exchanging."""

    player: str


@dataclass(frozen=True, slots=True)
class Exchanged:
    """``player`` gave back ``tile`` and drew ``new_tile``."""

    player: str
    tile: Tile
    new_tile: Tile


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """``player`` disconnected: the game is over, without scores (spec)."""

    player: str


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The final leaderboard, best first."""

    leaderboard: tuple[tuple[str, int], ...]


SpectrangleEvent = (
    ServerNotice
    | Welcomed
    | Queued
    | Started
    | HandsDealt
    | SkipAnnounced
    | Placed
    | Skipped
    | Exchanged
    | Refused
    | ChatReceived
    | PlayerLeft
    | GameEnded
    | ConnectionLost
)


@dataclass(frozen=True, slots=True)
class PlaceTile:
    """Lay ``tile`` (this rotation) on field ``index``."""

    tile: Tile
    index: int


@dataclass(frozen=True, slots=True)
class SkipTurn:
    """Skip the turn without exchanging."""


@dataclass(frozen=True, slots=True)
class ExchangeTile:
    """Give back ``tile`` for a new one; that ends the turn."""

    tile: Tile


SpectrangleMove = PlaceTile | SkipTurn | ExchangeTile | Say

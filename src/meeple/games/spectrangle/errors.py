"""The Spectrangle engine's exceptions, one class per broken rule.

Protocols map these to their own error replies (Spectrangle 1.4 ``invalidMove`` /
``invalidCommand``), so every rule gets its own class and carries the facts a reply or
a log line needs::

    SpectrangleError
    ├── NotationError            text that is not a tile or a field index at all
    └── RuleError                a well-formed action that the rules forbid
        ├── NotYourTurn          a player acting out of turn
        ├── GameIsOver           an action after the end of the game
        ├── TileNotInHand        a tile (in any rotation) the player does not hold
        ├── NoSuchField          a field index outside 0–35
        ├── FieldOccupied        a tile on a field that already holds one
        ├── BonusFieldFirst      the first tile of the game on a bonus field
        ├── NotTouching          a later tile that touches no tile on the board
        ├── ColourMismatch       a side whose colour differs from the side it touches
        ├── MustPlace            skip or exchange while a legal placement exists
        └── BagEmpty             an exchange with no tile left in the bag
"""

from __future__ import annotations

__all__ = [
    "BagEmpty",
    "BonusFieldFirst",
    "ColourMismatch",
    "FieldOccupied",
    "GameIsOver",
    "MustPlace",
    "NoSuchField",
    "NotTouching",
    "NotYourTurn",
    "NotationError",
    "RuleError",
    "SpectrangleError",
    "TileNotInHand",
]


class SpectrangleError(Exception):
    """Base of every error the Spectrangle engine raises."""


class NotationError(SpectrangleError, ValueError):
    """Text that cannot be read as a tile (``RGB4``) or a field index."""


class RuleError(SpectrangleError):
    """A well-formed action that the rules of the game forbid."""


class NotYourTurn(RuleError):
    """A player acting when it is not their turn."""

    def __init__(self, player: int, turn: int) -> None:
        self.player = player
        self.turn = turn
        super().__init__(f"player {player} acted on player {turn}'s turn")


class GameIsOver(RuleError):
    """An action on a game that has ended (or was abandoned)."""


class TileNotInHand(RuleError):
    """The player holds no rotation of the tile the action names."""

    def __init__(self, tile: str) -> None:
        self.tile = tile
        super().__init__(f"tile {tile} is not in the hand (in any rotation)")


class NoSuchField(RuleError):
    """A field index that is not on the 36-field board."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(f"there is no field {index}")


class FieldOccupied(RuleError):
    """A tile placed on a field that already holds a tile."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(f"field {index} is taken")


class BonusFieldFirst(RuleError):
    """The first tile of the game placed on a bonus field (ERRATA: not allowed)."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(f"the first tile may not go on bonus field {index}")


class NotTouching(RuleError):
    """A tile after the first that shares no edge with a tile on the board."""

    def __init__(self, index: int) -> None:
        self.index = index
        super().__init__(f"field {index} touches no tile")


class ColourMismatch(RuleError):
    """A side of the new tile whose colour differs from the neighbour's side it touches."""

    def __init__(self, index: int, neighbour: int, colour: str, other: str) -> None:
        self.index = index
        self.neighbour = neighbour
        self.colour = colour
        self.other = other
        super().__init__(
            f"side {colour} on field {index} touches side {other} of field {neighbour}"
        )


class MustPlace(RuleError):
    """A skip or an exchange by a player who has a legal placement."""


class BagEmpty(RuleError):
    """An exchange when the bag holds no tile to exchange with."""

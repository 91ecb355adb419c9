"""The Scrabble engine's exceptions, one class per broken rule.

Protocols map these to their own error replies (Twente E0xx, Clarkson NOK,
CMPN402 INVALID), so every rule gets its own class and carries the facts the
reply needs::

    ScrabbleError
    ├── NotationError            text that is not a move at all (bad coordinate, bad letters)
    └── RuleError                a well-formed move that the rules forbid
        ├── OffBoard             a tile would fall off the board
        ├── SquareOccupied       a new tile on a taken square, or a letter clashing with the board
        ├── NotInLine            new tiles not all in one row or one column
        ├── Gap                  the tiles and the board do not form one unbroken word
        ├── NotConnected         a later play touching no tile on the board
        ├── NotThroughCentre     the first play misses the centre square
        ├── NoWordFormed         the play forms no word of two letters or more
        ├── EmptyPlay            a play (or an exchange) of no tiles
        ├── TilesNotOnRack       tiles the player does not hold
        ├── BlankWithoutLetter   a blank placed without the letter it stands for
        ├── WordsNotInLexicon    words not in the lexicon (in void challenge)
        ├── ExchangeNotAllowed   too few tiles in the bag to exchange
        ├── NotYourTurn          a player acting out of turn
        ├── GameIsOver           an action after the end of the game
        ├── ChallengeError       a challenge with nothing to challenge, or in a variant without one
        └── AwaitingChallenge    a turn taken while a game-ending play awaits Accept/Challenge
"""

from __future__ import annotations

__all__ = [
    "AwaitingChallenge",
    "BlankWithoutLetter",
    "ChallengeError",
    "EmptyPlay",
    "ExchangeNotAllowed",
    "GameIsOver",
    "Gap",
    "NoWordFormed",
    "NotConnected",
    "NotInLine",
    "NotThroughCentre",
    "NotYourTurn",
    "NotationError",
    "OffBoard",
    "RuleError",
    "ScrabbleError",
    "SquareOccupied",
    "TilesNotOnRack",
    "WordsNotInLexicon",
]


class ScrabbleError(Exception):
    """Base of every error the Scrabble engine raises."""


class NotationError(ScrabbleError, ValueError):
    """Text that cannot be read as a coordinate, a word or a rack."""


class RuleError(ScrabbleError):
    """A well-formed action that the rules of the game forbid."""


class OffBoard(RuleError):
    """A tile of the play would lie outside the board."""


class SquareOccupied(RuleError):
    """A new tile on a square that holds a tile, or a letter that clashes with it."""

    def __init__(self, x: int, y: int, message: str = "") -> None:
        self.x = x
        self.y = y
        super().__init__(message or f"square ({x}, {y}) is already taken")


class NotInLine(RuleError):
    """The new tiles are not all in one row or all in one column."""


class Gap(RuleError):
    """The new tiles, with the tiles already on the board, leave a gap in the word."""


class NotConnected(RuleError):
    """A play after the first that touches no tile already on the board."""


class NotThroughCentre(RuleError):
    """The first play of the game does not cover the centre square."""


class NoWordFormed(RuleError):
    """The play forms no word of two or more letters (a lone tile on an empty board)."""


class EmptyPlay(RuleError):
    """A play that places no tile, or an exchange of no tiles."""


class TilesNotOnRack(RuleError):
    """The player does not hold the tiles the action uses."""

    def __init__(self, missing: str) -> None:
        self.missing = missing
        super().__init__(f"tiles not on the rack: {missing}")


class BlankWithoutLetter(RuleError):
    """A blank tile placed without naming the letter it stands for."""


class WordsNotInLexicon(RuleError):
    """Words formed by the play that the lexicon does not hold."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words
        super().__init__("not in the lexicon: " + ", ".join(words))


class ExchangeNotAllowed(RuleError):
    """An exchange with too few tiles in the bag."""

    def __init__(self, in_bag: int, needed: int) -> None:
        self.in_bag = in_bag
        self.needed = needed
        super().__init__(f"exchange needs {needed} tiles in the bag, it holds {in_bag}")


class NotYourTurn(RuleError):
    """A player acting when it is not their turn."""


class GameIsOver(RuleError):
    """An action on a game that has ended."""


class ChallengeError(RuleError):
    """A challenge where there is nothing to challenge, or the variant has no challenges."""


class AwaitingChallenge(RuleError):
    """A turn taken while the previous play, which ends the game, awaits a challenge.

    In a challengeable variant a play that empties the rack with the bag empty ends
    the game once accepted, so the next player may only Accept or Challenge it.
    """

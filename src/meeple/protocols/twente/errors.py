"""The Twente protocol's error codes and this package's exceptions.

Every error the spec knows (section "Errors", E001–E015) is an :class:`ErrorCode`.
Exceptions carry the code the peer should get, so a decoding or state error turns
into an ``ERROR`` reply without a lookup table in the server layer::

    TwenteError
    └── ProtocolError            carries ``code`` (an ErrorCode) and a human-readable reason
        ├── RemoteProtocolError  the peer sent something the spec forbids: answer ERROR(code)
        └── LocalProtocolError   we tried to send something the spec forbids: a bug on our side

:func:`error_code_for` maps the Scrabble engine's rule errors to the code a Twente
peer should get; the server layer calls it when a room refuses a move.
"""

from __future__ import annotations

import enum

from meeple.games.scrabble import errors as rules

__all__ = [
    "ErrorCode",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "TwenteError",
    "error_code_for",
]


class ErrorCode(enum.Enum):
    """An error code of the spec's "Errors" section; the value is the code on the wire."""

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    NAME_TAKEN = "E001"
    UNKNOWN_COMMAND = "E002"
    INVALID_ARGUMENT = "E003"
    INVALID_COORDINATE = "E004"
    WORD_DOES_NOT_FIT = "E005"
    UNKNOWN_WORD = "E006"
    TOO_FEW_TILES_IN_BAG = "E007"
    TILES_NOT_ON_RACK = "E008"
    NOT_YOUR_TURN = "E009"
    WRONG_NUMBER_OF_PLAYERS = "E010"
    NOT_CONNECTED = "E011"
    ALREADY_ANNOUNCED = "E012"
    NOT_ANNOUNCED = "E013"
    NOT_IN_GAME = "E014"
    GAME_ALREADY_STARTED = "E015"

    @property
    def description(self) -> str:
        """The spec's one-line title of the error."""
        return _DESCRIPTIONS[self]

    @classmethod
    def from_wire(cls, text: str) -> ErrorCode:
        """``E006`` (any case) to the code; raise ValueError for anything else."""
        return cls(text.strip().upper())


_DESCRIPTIONS = {
    ErrorCode.NAME_TAKEN: "Name already taken",
    ErrorCode.UNKNOWN_COMMAND: "Unknown command",
    ErrorCode.INVALID_ARGUMENT: "Invalid argument",
    ErrorCode.INVALID_COORDINATE: "Invalid coordinate",
    ErrorCode.WORD_DOES_NOT_FIT: "Word does not fit on board",
    ErrorCode.UNKNOWN_WORD: "Unknown word",
    ErrorCode.TOO_FEW_TILES_IN_BAG: "Too few letters left in tilebag to swap",
    ErrorCode.TILES_NOT_ON_RACK: "You do not have the required tiles",
    ErrorCode.NOT_YOUR_TURN: "It is not your turn",
    ErrorCode.WRONG_NUMBER_OF_PLAYERS: "Wrong number of players",
    ErrorCode.NOT_CONNECTED: "Word not connected to other tiles",
    ErrorCode.ALREADY_ANNOUNCED: "Client has already announced themselves",
    ErrorCode.NOT_ANNOUNCED: "Client has not yet announced themselves",
    ErrorCode.NOT_IN_GAME: "Client is not in a game",
    ErrorCode.GAME_ALREADY_STARTED: "Game already started",
}


class TwenteError(Exception):
    """Base of every exception this package raises."""


class ProtocolError(TwenteError):
    """A message or a transition the spec does not allow; ``code`` says which reply fits."""

    def __init__(self, code: ErrorCode, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"{code.value} ({code.description}): {reason}")


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol. Answer with ``ERROR`` carrying :attr:`code`; keep going."""


class LocalProtocolError(ProtocolError):
    """We tried to send something the spec (or our state) does not allow: a bug in the caller."""


# The engine's rule errors, most specific first: the first isinstance match wins.
# Why each: E005 covers "falls off the board" and "overwrites a different letter" (spec
# E005 and ERRATA); E011 covers "not connected" and "first word misses the centre"
# (spec E011). A gap cannot happen with Twente's whole-word moves, but if the engine
# reports one the word does not join the board, so E011.
_RULE_CODES: tuple[tuple[type[rules.ScrabbleError], ErrorCode], ...] = (
    (rules.OffBoard, ErrorCode.WORD_DOES_NOT_FIT),
    (rules.SquareOccupied, ErrorCode.WORD_DOES_NOT_FIT),
    (rules.NotConnected, ErrorCode.NOT_CONNECTED),
    (rules.NotThroughCentre, ErrorCode.NOT_CONNECTED),
    (rules.Gap, ErrorCode.NOT_CONNECTED),
    (rules.WordsNotInLexicon, ErrorCode.UNKNOWN_WORD),
    (rules.NoWordFormed, ErrorCode.UNKNOWN_WORD),
    (rules.TilesNotOnRack, ErrorCode.TILES_NOT_ON_RACK),
    (rules.ExchangeNotAllowed, ErrorCode.TOO_FEW_TILES_IN_BAG),
    (rules.NotYourTurn, ErrorCode.NOT_YOUR_TURN),
    (rules.GameIsOver, ErrorCode.NOT_IN_GAME),
    (rules.NotInLine, ErrorCode.INVALID_ARGUMENT),
    (rules.EmptyPlay, ErrorCode.INVALID_ARGUMENT),
    (rules.BlankWithoutLetter, ErrorCode.INVALID_ARGUMENT),
    (rules.ChallengeError, ErrorCode.INVALID_ARGUMENT),
    (rules.NotationError, ErrorCode.INVALID_ARGUMENT),
)


def error_code_for(error: rules.ScrabbleError) -> ErrorCode:
    """The code to send a Twente player whose action the Scrabble engine refused."""
    for kind, code in _RULE_CODES:
        if isinstance(error, kind):
            return code
    return ErrorCode.INVALID_ARGUMENT

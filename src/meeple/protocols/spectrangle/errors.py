"""The Spectrangle 1.4 error words and this package's exceptions.

The spec ("Errors to be defined") knows three error lines, :class:`ErrorWord`.
Exceptions carry the word the peer should get, so a decoding or state error turns
into a reply without a lookup table in the server layer::

    SpectrangleProtocolError    carries ``word`` (an ErrorWord) and a readable reason
    ├── RemoteProtocolError     the peer sent something the spec forbids: answer ``word``
    └── LocalProtocolError      we tried to send something the spec forbids: a bug here

:func:`error_word_for` maps the engine's rule errors to the word a client should get;
the server layer calls it when a room refuses an action.
"""

from __future__ import annotations

import enum

from meeple.games.spectrangle import errors as rules

__all__ = [
    "ErrorWord",
    "LocalProtocolError",
    "RemoteProtocolError",
    "SpectrangleProtocolError",
    "error_word_for",
]


class ErrorWord(enum.Enum):
    """An error of the spec; the value is the whole line on the wire (without ``\\n``)."""

    INVALID_MOVE = "invalidMove"
    INVALID_COMMAND = "invalidCommand"
    INVALID_NAME = "invalidName"

    @classmethod
    def from_wire(cls, text: str) -> ErrorWord:
        """The word in any letter case; raise ValueError for anything else."""
        folded = text.strip().casefold()
        for word in cls:
            if word.value.casefold() == folded:
                return word
        raise ValueError(f"not an error word: {text!r}")


class SpectrangleProtocolError(Exception):
    """A breach of the Spectrangle protocol; ``word`` is the reply it deserves."""

    def __init__(self, reason: str, word: ErrorWord = ErrorWord.INVALID_COMMAND) -> None:
        self.reason = reason
        self.word = word
        super().__init__(reason)


class RemoteProtocolError(SpectrangleProtocolError):
    """The peer sent something the spec forbids (garbage, wrong state, bad argument)."""


class LocalProtocolError(SpectrangleProtocolError):
    """We tried to send something the spec forbids in the current state: a bug here."""


def error_word_for(error: rules.SpectrangleError) -> ErrorWord:
    """The reply to an engine error.

    Acting out of turn or after the end is a command the state does not allow
    (``invalidCommand``, as the reference server answers an out-of-turn ``skip`` in the
    transcript); every other rule error is an ``invalidMove``.
    """
    if isinstance(error, rules.NotYourTurn | rules.GameIsOver):
        return ErrorWord.INVALID_COMMAND
    if isinstance(error, rules.NotationError):
        return ErrorWord.INVALID_COMMAND
    return ErrorWord.INVALID_MOVE

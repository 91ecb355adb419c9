"""What the games' typed notations share: the error a command that is no move raises, its
length limit, and completion of the command keywords.

Each game's notation (:mod:`meeple.tui.scrabble.notation`,
:mod:`meeple.tui.spectrangle.notation`) parses its own moves and completes what follows
a keyword; :class:`KeywordSuggester` completes the keyword first.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.suggester import Suggester

__all__ = ["MAX_COMMAND_LENGTH", "CommandError", "KeywordSuggester"]

MAX_COMMAND_LENGTH = 1000  # characters of one typed command; longer is refused unread


class CommandError(ValueError):
    """A typed command that is not a move; the message says what is wrong, for the player."""


class KeywordSuggester(Suggester):
    """Completes a command keyword (``pa`` → ``pass``), else what :meth:`complete` says."""

    def __init__(self, keywords: Sequence[str]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._keywords = keywords

    async def get_suggestion(self, value: str) -> str | None:
        lowered = value.lower()
        if not lowered.strip():
            return None
        for keyword in self._keywords:
            if keyword.startswith(lowered) and keyword != lowered:
                return value + keyword[len(value) :]
        return self.complete(value)

    def complete(self, value: str) -> str | None:
        """The game's completion of ``value`` once no keyword completes it (None: none)."""
        return None

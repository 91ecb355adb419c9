"""The commands a Scrabble player types, read into moves, and completion while typing.

Accepted (keywords in any case)::

    H8 across WORD     square (column letter, row) then across/down (a, d, h, v too)
    8H WORD            GCG position: row first = across, column first = down
    swap ABC?          exchange tiles, ? for a blank (also: exchange)
    pass
    say TEXT           chat to the table (also: chat)
    challenge          challenge the play offered in a challenge window (CMPN402)
    accept             let it stand (also: ok)

Blanks in a word follow GCG: a lower-case letter is a blank standing for that letter
(``H8 across CaT``). People often type everything in lower case, so a word with no
capital at all is read as plain letters (meeple's decision; a word made only of
blanks would need two blanks in a two-letter word, which nobody plays on purpose).
"""

from __future__ import annotations

from meeple.games.scrabble.board import Direction, parse_gcg_position, parse_square
from meeple.games.scrabble.errors import NotationError
from meeple.tui.notation import MAX_COMMAND_LENGTH, CommandError, KeywordSuggester
from meeple.tui.scrabble.events import AnswerChallenge, Pass, PlayWord, Say, ScrabbleMove, Swap

__all__ = ["KEYWORDS", "CommandError", "CommandSuggester", "parse_command"]

# "accept" is not completed: "A" starts a square in column A far more often.
KEYWORDS = ("pass", "swap ", "exchange ", "say ", "chat ", "challenge")
_DIRECTIONS = {
    "across": Direction.ACROSS,
    "a": Direction.ACROSS,
    "h": Direction.ACROSS,
    "down": Direction.DOWN,
    "d": Direction.DOWN,
    "v": Direction.DOWN,
}
USAGE = "type 'H8 across WORD', '8H WORD', 'swap ABC', 'pass' or 'say hello'"


def _word(text: str) -> str:
    if not text.isascii() or not text.isalpha():
        raise CommandError(f"{text!r} is not a word: letters only (lower case = a blank)")
    return text.upper() if text.islower() else text


def parse_command(text: str) -> ScrabbleMove:
    """Read one typed command; raise :class:`CommandError` saying what is wrong."""
    if len(text) > MAX_COMMAND_LENGTH:
        raise CommandError(f"too long (at most {MAX_COMMAND_LENGTH} characters)")
    stripped = text.strip()
    head, _, rest = stripped.partition(" ")
    keyword = head.lower()
    rest = rest.strip()
    if not stripped:
        raise CommandError(USAGE)
    if keyword in ("say", "chat"):
        if not rest:
            raise CommandError("say what? 'say hello'")
        return Say(rest)
    if keyword == "pass":
        if rest:
            raise CommandError("'pass' takes nothing after it")
        return Pass()
    if keyword in ("challenge", "accept", "ok"):
        if rest:
            raise CommandError(f"'{keyword}' takes nothing after it")
        return AnswerChallenge(keyword == "challenge")
    if keyword in ("swap", "exchange"):
        tiles = rest.replace(" ", "").upper()
        if not tiles:
            raise CommandError("swap which tiles? 'swap ABC' (? for a blank), or 'pass'")
        if not all(c == "?" or ("A" <= c <= "Z") for c in tiles):
            raise CommandError(f"{rest!r}: tiles are letters A-Z, ? for a blank")
        return Swap(tiles)
    fields = stripped.split()
    if len(fields) == 3:
        square, direction_text, word = fields
        direction = _DIRECTIONS.get(direction_text.lower())
        if direction is None:
            raise CommandError(f"{direction_text!r}: the direction is 'across' or 'down'")
        try:
            x, y = parse_square(square)
        except NotationError:
            raise CommandError(f"{square!r} is not a square: column A-O, row 1-15 (H8)") from None
        return PlayWord(x, y, direction, _word(word))
    if len(fields) == 2:
        position, word = fields
        try:
            x, y, direction = parse_gcg_position(position)
        except NotationError:
            raise CommandError(
                f"{position!r} is not a position: 8H (across) or H8 (down); {USAGE}"
            ) from None
        return PlayWord(x, y, direction, _word(word))
    raise CommandError(f"{stripped[:40]!r} is not a command; {USAGE}")


class CommandSuggester(KeywordSuggester):
    """Completes keywords (``pa`` → ``pass``) and directions (``H8 a`` → ``H8 across ``)."""

    def __init__(self) -> None:
        super().__init__(KEYWORDS)

    def complete(self, value: str) -> str | None:
        fields = value.split(" ")
        if len(fields) == 2 and fields[0]:
            try:
                parse_square(fields[0])
            except NotationError:
                return None
            for word in ("across ", "down "):
                if word.startswith(fields[1].lower()) and word != fields[1].lower():
                    return value + word[len(fields[1]) :]
        return None

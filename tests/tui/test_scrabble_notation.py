"""Typed Scrabble commands: every form read into the right move, every mistake explained."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Direction
from meeple.tui.scrabble.events import AnswerChallenge, Pass, PlayWord, Say, Swap
from meeple.tui.scrabble.notation import CommandError, CommandSuggester, parse_command


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("H8 across WORD", PlayWord(7, 7, Direction.ACROSS, "WORD")),
        ("h8 DOWN word", PlayWord(7, 7, Direction.DOWN, "WORD")),
        ("A1 a CaT", PlayWord(0, 0, Direction.ACROSS, "CaT")),
        ("O15 v QI", PlayWord(14, 14, Direction.DOWN, "QI")),
        ("8H WORD", PlayWord(7, 7, Direction.ACROSS, "WORD")),
        ("H8 WORD", PlayWord(7, 7, Direction.DOWN, "WORD")),
        ("  12d  zEBRA ", PlayWord(3, 11, Direction.ACROSS, "zEBRA")),
        ("swap abc?", Swap("ABC?")),
        ("exchange A B", Swap("AB")),
        ("PASS", Pass()),
        ("say good game, all", Say("good game, all")),
        ("chat hi", Say("hi")),
        ("challenge", AnswerChallenge(True)),
        ("Accept", AnswerChallenge(False)),
        ("ok", AnswerChallenge(False)),
    ],
)
def test_commands_read_into_moves(text: str, move: object) -> None:
    """Square + direction, GCG positions, blanks in lower case, swap, pass and chat."""
    assert parse_command(text) == move


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "type 'H8 across WORD'"),
        ("P8 across WORD", "not a square"),
        ("H16 across WORD", "not a square"),
        ("H8 sideways WORD", "direction is 'across' or 'down'"),
        ("H8 across WO-RD", "letters only"),
        ("99Z WORD", "not a position"),
        ("swap", "swap which tiles"),
        ("swap 12", "tiles are letters"),
        ("pass now", "takes nothing"),
        ("challenge QI", "takes nothing"),
        ("say", "say what"),
        ("hello there you all", "is not a command"),
        ("x" * 2000, "too long"),
    ],
)
def test_mistakes_are_explained(text: str, says: str) -> None:
    """A bad command raises CommandError with a sentence that names the problem."""
    with pytest.raises(CommandError, match=says):
        parse_command(text)


@settings(max_examples=300)
@given(st.text(max_size=60))
def test_any_text_is_a_move_or_an_explanation(text: str) -> None:
    """Whatever is typed, the reader returns a move or raises CommandError, nothing else."""
    try:
        parse_command(text)
    except CommandError as e:
        message = str(e)
    else:
        message = "a move"
    assert message


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("pa", "pass"),
        ("chal", "challenge"),
        ("A", None),
        ("sw", "swap "),
        ("S", "Swap "),
        ("H8 ", "H8 across "),
        ("H8 a", "H8 across "),
        ("H8 d", "H8 down "),
        ("h8 DO", "h8 DOwn "),
        ("Z9 a", None),
        ("pass", None),
        ("", None),
        ("8H WORD", None),
    ],
)
async def test_completion(typed: str, suggested: str | None) -> None:
    """Keywords and directions complete; finished or unknown input gets no suggestion."""
    assert await CommandSuggester().get_suggestion(typed) == suggested

"""CGP: reading and writing positions the way Macondo and wolges do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.games.scrabble.board import Board
from meeple.games.scrabble.cgp import MAX_CGP_LENGTH, CgpPosition, format_cgp, parse_cgp
from meeple.games.scrabble.errors import NotationError

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
MIDGAME = (
    "15/15/15/15/15/15/8P6/7BATIK2F/8Q2EH1A/8U2SOWN/8E1CAGE1/10ER1A1/10L2N1/9XL4/9IO4"
    " AENRS??/ 144/100 0"
)


def test_empty_board() -> None:
    """The standard empty-board CGP: no tiles, rack AEINRST, no opponent rack."""
    pos = parse_cgp(EMPTY)
    assert pos.board.is_empty
    assert pos.rack == "AEINRST"
    assert pos.opponent_rack == ""
    assert pos.scores == (0, 0)
    assert pos.zero_turns == 0
    assert pos.opcodes == ()


def test_tiles_blanks_and_runs() -> None:
    """Digits are runs of empty squares, upper case tiles, lower case blanks."""
    pos = parse_cgp("15/15/15/15/15/15/15/3HOUsE7/15/15/15/15/15/15/15 AB?/CD 12/-3 2")
    assert pos.board.rows()[7] == "...HOUsE......."
    assert pos.board.tile(6, 7) == "s"
    assert (pos.rack, pos.opponent_rack, pos.scores, pos.zero_turns) == ("AB?", "CD", (12, -3), 2)


def test_opcodes_are_tolerated_and_kept() -> None:
    """Trailing `key value;` operations are read and written back."""
    text = EMPTY + " lex CSW21; ld english; bdn;"
    pos = parse_cgp(text)
    assert pos.opcodes == (("lex", "CSW21"), ("ld", "english"), ("bdn", ""))
    assert format_cgp(pos) == text


@pytest.mark.parametrize("text", [EMPTY, MIDGAME])
def test_round_trip(text: str) -> None:
    """format_cgp(parse_cgp(x)) == x for canonical input."""
    assert format_cgp(parse_cgp(text)) == text


@given(
    st.lists(
        st.text(alphabet="..........ABCxyz", min_size=15, max_size=15), min_size=15, max_size=15
    ),
    st.text(alphabet="ABZ?", max_size=7),
)
def test_any_board_round_trips(rows: list[str], rack: str) -> None:
    """Any board and rack survive a format/parse round trip."""
    pos = CgpPosition(Board.from_rows(rows), rack, "", (3, 4), 1)
    assert parse_cgp(format_cgp(pos)) == pos


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "needs board"),
        ("15/15 AB/ 0/0 0", "rows"),
        (EMPTY.replace("15/15 ", "15/16 ", 1), "squares"),
        (EMPTY.replace("15/", "14/", 1), "squares"),
        (EMPTY.replace("15/", "7X8X/", 1), "squares"),
        (EMPTY.replace("15/", "0ABCDEFGHIJKLMNO/", 1), "run"),
        (EMPTY.replace("15/", "0015/", 1), "run"),
        (EMPTY.replace("15/", "7!7/", 1), "unexpected"),
        (EMPTY.replace("AEINRST/", "AEINRST"), "RACK/OPPONENT"),
        (EMPTY.replace("AEINRST/", "aeinrst/"), "rack"),
        (EMPTY.replace("AEINRST/", "AEINRSTX/"), "more than"),
        (EMPTY.replace(" 0/0 ", " 0-0 "), "scores"),
        (EMPTY.replace(" 0/0 ", " a/0 "), "scores"),
        (EMPTY[:-1] + "x", "scoreless"),
        (EMPTY + " lex", "operation"),
        (EMPTY + " " + "x" * MAX_CGP_LENGTH, "longer"),
    ],
)
def test_bad_cgp_is_a_notation_error(text: str, complaint: str) -> None:
    """Malformed CGP raises NotationError with a message that says what is wrong."""
    with pytest.raises(NotationError, match=complaint):
        parse_cgp(text)


def test_trailing_whitespace_and_extra_spaces() -> None:
    """Runs of spaces between fields and a trailing newline are accepted."""
    pos = parse_cgp(EMPTY.replace(" ", "   ") + "\n")
    assert pos.rack == "AEINRST"

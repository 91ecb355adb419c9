"""Typed Spectrangle commands: every form read into the right move, every mistake explained."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.spectrangle.tiles import Tile
from meeple.tui.spectrangle.events import ExchangeTile, PlaceTile, Say, SkipTurn
from meeple.tui.spectrangle.notation import CommandError, CommandSuggester, parse_command

RGB4 = Tile.parse("RGB4")


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("place RGB4 on 11", PlaceTile(RGB4, 11)),
        ("PLACE rgb4 ON 0", PlaceTile(RGB4, 0)),
        ("place RGB4 35", PlaceTile(RGB4, 35)),
        ("  skip ", SkipTurn()),
        ("exchange RGB4", ExchangeTile(RGB4)),
        ("say hello  there", Say("hello  there")),
        ("chat hi", Say("hi")),
    ],
)
def test_commands_read_into_moves(text: str, move: object) -> None:
    """place (with or without 'on'), skip, exchange and chat; any letter case."""
    assert parse_command(text) == move


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "type 'place RGB4 on 11'"),
        ("place RGB4 on 36", "not a field"),
        ("place RGB4 on -1", "not a field"),
        ("place RGX4 on 3", "not a tile"),
        ("place RGB9 on 3", "not a tile"),
        ("place RGB4", "place which tile where"),
        ("exchange", "exchange which tile"),
        ("skip now", "takes nothing"),
        ("say", "say what"),
        ("hello", "is not a command"),
        ("p" * 2000, "too long"),
    ],
)
def test_mistakes_are_explained(text: str, says: str) -> None:
    """A bad command raises CommandError with a sentence that names the problem."""
    with pytest.raises(CommandError, match=says):
        parse_command(text)


@settings(max_examples=300)
@given(st.text(max_size=40))
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
        ("pl", "place "),
        ("ex", "exchange "),
        ("place ", "place RGB4 on "),
        ("place B", "place BRG4 on "),
        ("place g", "place gBR4 on "),
        ("exchange W", "exchange WWW1"),
        ("place Y", None),
        ("place RGB4 on 1", None),
        ("", None),
    ],
)
async def test_completion_from_the_hand(typed: str, suggested: str | None) -> None:
    """Keywords complete, then tiles in hand in any of their rotations."""
    hand = (RGB4, Tile.parse("WWW1"))
    assert await CommandSuggester(lambda: hand).get_suggestion(typed) == suggested

"""clients/scrabble_bot.py choose_or_pass: the one rule by which the Twente and Clarkson
bots choose a move: the AI's choice, or a pass said in the log when what the server
told them does not add up to a position (issue 31)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.scrabble import PassChoice
from meeple.clients.scrabble_bot import choose_or_pass
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON, ENGLISH

LEXICON = Lexicon.from_words(["CAT", "AT", "TA", "ACT"])


def test_a_playable_rack_gets_the_ai_move() -> None:
    choice = choose_or_pass("bot", Board(), "CATQQQQ", LEXICON, 80, 0)
    assert not isinstance(choice, PassChoice)


@given(rack=st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ?", min_size=8, max_size=20))
@settings(max_examples=30, deadline=None)
def test_a_rack_that_cannot_be_passes_and_never_raises(rack: str) -> None:
    """More than 7 tiles (a swap the bot could not follow): a pass, for either tile set."""
    for tile_set in (ENGLISH, CLARKSON):
        choice = choose_or_pass("bot", Board(), rack, LEXICON, 80, 0, tile_set=tile_set)
        assert choice == PassChoice()


def test_the_pass_is_said_under_the_bot_name(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="meeple.clients.scrabble_bot"):
        choose_or_pass("ann", Board(), "CATXXXXXXX", LEXICON, 80, 0)
    assert caplog.records[0].getMessage().startswith("ann: no move from rack 'CATXXXXXXX'")

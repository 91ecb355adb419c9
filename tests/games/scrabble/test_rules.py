"""Play validation and scoring: one test per rule, hand-computed scores, and properties."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import (
    BlankWithoutLetter,
    EmptyPlay,
    Gap,
    NotationError,
    NotConnected,
    NotInLine,
    NotThroughCentre,
    NoWordFormed,
    OffBoard,
    RuleError,
    SquareOccupied,
    TilesNotOnRack,
    WordsNotInLexicon,
)
from meeple.games.scrabble.game import Game, Pass, Play
from meeple.games.scrabble.moves import Placement, tiles_from_word
from meeple.games.scrabble.rules import missing_tiles, validate_play
from meeple.games.scrabble.tiles import CLARKSON, ENGLISH

ACROSS, DOWN = Direction.ACROSS, Direction.DOWN


def word_at(board: Board, x: int, y: int, direction: Direction, word: str) -> list[Placement]:
    return list(tiles_from_word(board, x, y, direction, word))


def with_cat() -> Board:
    """CAT across from the centre square H8 (x 7–9, y 7)."""
    board = Board()
    for p in word_at(board, 7, 7, ACROSS, "CAT"):
        board.place(p.x, p.y, p.tile)
    return board


# -- scoring, computed by hand


def test_first_play_doubles_on_the_centre_star() -> None:
    """CAT on H8–J8: (3 + 1 + 1) x 2 for the double-word centre = 10."""
    result = validate_play(Board(), word_at(Board(), 7, 7, ACROSS, "CAT"))
    assert result.score == 10
    assert result.main_word.text == "CAT"
    assert result.main_word.position == "8H"
    assert not result.bingo


def test_premiums_count_only_under_new_tiles() -> None:
    """Adding S to CAT scores 6: the centre star under C was used by the earlier play."""
    board = with_cat()
    result = validate_play(board, [Placement(7, 10, "S")])
    assert result.score == 6
    assert result.main_word.text == "CATS"
    assert [w.letters for w in result.words] == ["CATS"]


def test_every_cross_word_scores() -> None:
    """AX under CA of CAT: AX 1 + 8x2 = 17, CA 3 + 1 = 4, AX down 1 + 16 = 17; total 38."""
    board = with_cat()
    result = validate_play(board, [Placement(8, 7, "A"), Placement(8, 8, "X")])
    assert [(w.letters, w.score) for w in result.words] == [("AX", 17), ("CA", 4), ("AX", 17)]
    assert result.score == 38


def test_bingo_adds_fifty() -> None:
    """RETAINS from the centre: (1+1+1+1+2+1+1) x 2 = 16, plus 50 for using 7 tiles."""
    result = validate_play(Board(), word_at(Board(), 7, 7, ACROSS, "RETAINS"))
    assert result.bingo
    assert result.score == 66


def test_bingo_size_and_bonus_are_parameters() -> None:
    """A variant may define another bingo: here 3 tiles for 20 points."""
    result = validate_play(
        Board(), word_at(Board(), 7, 7, ACROSS, "CAT"), bingo_size=3, bingo_bonus=20
    )
    assert result.bingo
    assert result.score == 30


def test_blank_scores_zero_but_its_word_premium_still_doubles() -> None:
    """cAT with the blank on the centre star: (0 + 1 + 1) x 2 = 4."""
    result = validate_play(Board(), word_at(Board(), 7, 7, ACROSS, "cAT"))
    assert result.score == 4
    assert result.main_word.text == "cAT"
    assert result.rack_tiles == "?AT"


def test_blank_on_a_letter_premium_scores_zero() -> None:
    """A blank x on the double-letter square under the A of CAT: Ax scores 1 + 0 = 1."""
    board = with_cat()
    result = validate_play(board, [Placement(8, 8, "x")])
    assert result.main_word.letters == "AX"
    assert result.score == 1


def test_triple_word_in_the_corner() -> None:
    """CAT down from A1 after a column reaches it: only the new tiles' premiums count."""
    board = Board()
    for p in word_at(board, 0, 3, DOWN, "CAT"):  # A4 is a DL (l) square
        board.place(p.x, p.y, p.tile)
    board.place(0, 6, "S")
    board.place(0, 7, "O")  # a column of tiles from A4 to A8, ignoring words
    result = validate_play(board, word_at(board, 0, 0, DOWN, "ABACATSO"))
    # new: A(A1, TW) B(A2) A(A3); old: C A T S O -> (1+3+1 + 3+1+1+1+1) x 3
    assert result.score == 12 * 3


def test_single_tile_main_word_is_across_when_there_is_one() -> None:
    """A lone tile making only a down word has that down word as its main word."""
    board = with_cat()
    result = validate_play(board, [Placement(8, 7, "A")])
    assert result.main_word.direction is DOWN
    assert result.main_word.text == "CA"
    assert result.to_move().position == "H8"


def test_to_move_carries_the_whole_main_word() -> None:
    board = with_cat()
    move = validate_play(board, [Placement(7, 10, "S")]).to_move()
    assert (move.x, move.y, move.direction, move.word, move.score) == (7, 7, ACROSS, "CATS", 6)


# -- one error per rule


def test_empty_play() -> None:
    with pytest.raises(EmptyPlay):
        validate_play(Board(), [])


def test_blank_without_letter() -> None:
    with pytest.raises(BlankWithoutLetter):
        validate_play(Board(), [Placement(7, 7, "?"), Placement(7, 8, "A")])


def test_not_a_tile() -> None:
    with pytest.raises(NotationError):
        validate_play(Board(), [Placement(7, 7, "1"), Placement(7, 8, "A")])


def test_off_board() -> None:
    with pytest.raises(OffBoard):
        validate_play(Board(), [Placement(7, 14, "A"), Placement(7, 15, "T")])


def test_square_taken() -> None:
    with pytest.raises(SquareOccupied) as info:
        validate_play(with_cat(), [Placement(7, 7, "X"), Placement(8, 7, "A")])
    assert (info.value.x, info.value.y) == (7, 7)


def test_two_tiles_on_one_square() -> None:
    with pytest.raises(SquareOccupied):
        validate_play(Board(), [Placement(7, 7, "A"), Placement(7, 7, "B")])


def test_not_in_line() -> None:
    with pytest.raises(NotInLine):
        validate_play(Board(), [Placement(7, 7, "A"), Placement(8, 8, "B")])


def test_gap() -> None:
    with pytest.raises(Gap):
        validate_play(Board(), [Placement(7, 7, "A"), Placement(7, 9, "B")])


def test_gap_bridged_by_board_tiles_is_fine() -> None:
    """Tiles on both sides of CAT in one row make one word through it."""
    result = validate_play(with_cat(), [Placement(7, 6, "S"), Placement(7, 10, "S")])
    assert result.main_word.text == "SCATS"


def test_clash_is_reported_before_the_gap() -> None:
    """The more specific rule wins: a tile on a taken square, even if there is also a gap."""
    with pytest.raises(SquareOccupied):
        validate_play(with_cat(), [Placement(7, 8, "O"), Placement(7, 12, "S")])


def test_tiles_not_on_rack() -> None:
    with pytest.raises(TilesNotOnRack) as info:
        validate_play(Board(), word_at(Board(), 7, 7, ACROSS, "CAT"), rack="CAXYZ")
    assert info.value.missing == "T"


def test_blank_comes_from_the_rack_blank() -> None:
    """A lower-case tile uses a ``?`` from the rack, not the letter."""
    tiles = word_at(Board(), 7, 7, ACROSS, "cAT")
    assert validate_play(Board(), tiles, rack="?ATQ").score == 4
    with pytest.raises(TilesNotOnRack):
        validate_play(Board(), tiles, rack="CAT")


def test_no_blanks_in_a_tile_set_without_them() -> None:
    with pytest.raises(TilesNotOnRack):
        validate_play(Board(), word_at(Board(), 7, 7, ACROSS, "cAT"), tile_set=CLARKSON)


def test_first_play_must_cover_the_centre() -> None:
    with pytest.raises(NotThroughCentre):
        validate_play(Board(), word_at(Board(), 0, 0, ACROSS, "CAT"))


def test_a_lone_first_tile_forms_no_word() -> None:
    with pytest.raises(NoWordFormed):
        validate_play(Board(), [Placement(7, 7, "A")])


def test_later_play_must_connect() -> None:
    with pytest.raises(NotConnected):
        validate_play(with_cat(), word_at(with_cat(), 0, 0, ACROSS, "DOG"))


def test_words_not_in_lexicon_are_named(words: frozenset[str]) -> None:
    """Every phony is named once, main word first; good words are not listed."""
    board = with_cat()
    # Q under the A and X under the T: QX across, AQ and TX down.
    with pytest.raises(WordsNotInLexicon) as info:
        validate_play(board, [Placement(8, 8, "Q"), Placement(8, 9, "X")], lexicon=words)
    assert info.value.words == ("QX", "AQ", "TX")


def test_good_words_pass_the_lexicon(words: frozenset[str]) -> None:
    result = validate_play(with_cat(), [Placement(7, 10, "S")], lexicon=words)
    assert result.main_word.letters == "CATS"


def test_rack_is_checked_after_the_board_rules() -> None:
    """Structure errors come first: a gap is reported even with tiles missing from the rack."""
    with pytest.raises(Gap):
        validate_play(Board(), [Placement(7, 7, "A"), Placement(7, 9, "B")], rack="")


def test_missing_tiles() -> None:
    assert missing_tiles("AAB?", "AAAB?") == "A"
    assert missing_tiles("AB", "BA") == ""


# -- properties


@given(st.permutations(range(7)))
def test_tile_order_does_not_matter(order: list[int]) -> None:
    """The same tiles in any order make the same play with the same score."""
    tiles = word_at(Board(), 7, 7, ACROSS, "RETaINS")
    result = validate_play(Board(), [tiles[i] for i in order])
    assert result.score == 16 - 2 + 50  # the blank A scores 0 (x2 for the centre)
    assert result.main_word.text == "RETaINS"


@given(
    st.lists(
        st.tuples(st.integers(-1, 15), st.integers(-1, 15), st.sampled_from("AEQZ?e")),
        max_size=8,
    )
)
def test_validation_never_changes_the_board(raw: list[tuple[int, int, str]]) -> None:
    """Accepted or refused, a play leaves the board as it was; refusals are RuleErrors."""
    board = with_cat()
    before = board.copy()
    tiles = [Placement(y, x, t) for x, y, t in raw]
    try:
        result = validate_play(board, tiles)
    except RuleError:
        pass
    else:
        assert result.score == sum(w.score for w in result.words) + (50 if result.bingo else 0)
    assert board == before


def reference_score(board: Board, tiles: list[Placement]) -> int:
    """A naive scorer: every run of 2+ tiles in any row or column that holds a new tile."""
    after = board.copy()
    for p in tiles:
        after.place(p.x, p.y, p.tile)
    new = {(p.x, p.y) for p in tiles}
    total = 0
    size = board.size
    for across in (True, False):
        for line in range(size):
            run: list[tuple[int, int, str]] = []
            for i in range(size + 1):
                x, y = (i, line) if across else (line, i)
                tile = after.tile(x, y) if i < size else None
                if tile is not None:
                    run.append((x, y, tile))
                    continue
                if len(run) >= 2 and any((rx, ry) in new for rx, ry, _ in run):
                    word_multiplier, letters = 1, 0
                    for rx, ry, t in run:
                        value = ENGLISH.value(t)
                        if (rx, ry) in new:
                            premium = board.layout.premium(rx, ry)
                            value *= premium.letter_multiplier
                            word_multiplier *= premium.word_multiplier
                        letters += value
                    total += letters * word_multiplier
                run = []
    return total + (50 if len(tiles) == 7 else 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 2**32 - 1), max_size=60))
def test_scores_match_a_naive_scorer_through_random_games(
    helpers: Any, seed: int, choices: list[int]
) -> None:
    """Every play the rules accept in a random game scores what a brute-force scan says."""
    game = Game(["a", "b"], Random(seed))
    for choice in choices:
        if game.is_over:
            break
        action = helpers.random_action(game, choice)
        if isinstance(action, Play):
            result = validate_play(game.board, action.tiles, rack=game.rack(action.player))
            assert result.score == reference_score(game.board, list(action.tiles))
        try:
            game.apply(action)
        except RuleError:
            game.apply(Pass(game.turn or 0))

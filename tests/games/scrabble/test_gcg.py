"""GCG export (exact text for scripted games) and the reader (round trips of random games)."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.game import (
    STANDARD_VARIANT,
    Challenge,
    ChallengeRule,
    End,
    EndReason,
    Exchange,
    Game,
    Pass,
    Play,
    PlayMade,
    Variant,
)
from meeple.games.scrabble.gcg import GcgEventKind, gcg_nicknames, parse_gcg, to_gcg

ACROSS = Direction.ACROSS


def stacked(*racks: str, then: str = "") -> list[str]:
    return list(reversed("".join(racks) + then))


def play_word(game: Game, player: int, x: int, y: int, word: str) -> None:
    game.apply(Play.from_word(game.board, player, x, y, ACROSS, word))


def test_a_scripted_game_exports_exactly(words: frozenset[str]) -> None:
    """Phony withdrawn, five-point challenge bonus, exchange, pass, and an admin stop."""
    variant = STANDARD_VARIANT.but(
        challenge=ChallengeRule.FIVE_POINT, exchange_minimum=1, lexicon="TEST"
    )
    game = Game(
        ["Alice Smith", "Bob"],
        Random(0),
        variant=variant,
        lexicon=words,
        bag=stacked("CATSQXZ", "DOGEAIR", then="EEEEEEE"),
    )
    play_word(game, 0, 7, 7, "QXZ")
    game.apply(Challenge(1))
    play_word(game, 1, 7, 7, "DOG")
    game.apply(Challenge(0))
    game.apply(Exchange(0, "QXZ"))
    game.apply(Pass(1))
    game.apply(End(EndReason.ADMIN))
    assert to_gcg(game, title="test game") == (
        "#character-encoding UTF-8\n"
        "#player1 Alice_Smith Alice Smith\n"
        "#player2 Bob Bob\n"
        "#title test game\n"
        "#lexicon TEST\n"
        ">Alice_Smith: ACQSTXZ 8H QXZ +56 56\n"
        ">Alice_Smith: ACQSTXZ -- -56 0\n"
        ">Bob: ADEGIOR 8H DOG +10 10\n"
        ">Bob: ADEGIOR (challenge) +5 15\n"
        ">Alice_Smith: ACQSTXZ -QXZ +0 0\n"
        ">Bob: AEEEEIR - +0 15\n"
        "#note game ended: admin\n"
    )


def test_going_out_writes_the_rack_lines() -> None:
    """The player out gets the others' racks; the others lose their own (no doubling)."""
    game = Game(["alice", "bob"], Random(0), bag=stacked("RETAINS", "QZXJKVW"))
    play_word(game, 0, 7, 7, "RETaINS".upper())
    lines = to_gcg(game).splitlines()
    assert lines[-3:] == [
        ">alice: AEINRST 8H RETAINS +66 66",
        ">alice: (JKQVWXZ) +49 115",
        ">bob: JKQVWXZ (JKQVWXZ) -49 -49",
    ]


def test_blanks_are_lower_case_and_sorted_last_in_the_rack() -> None:
    game = Game(["a", "b"], Random(0), bag=stacked("?ATQQQQ", "QQQQQQQ", then="EEEEEEE"))
    play_word(game, 0, 7, 7, "cAT")
    assert ">a: AQQQQT? 8H cAT +4 4" in to_gcg(game).splitlines()


def test_six_scoreless_turns_write_penalty_lines() -> None:
    game = Game(["a", "b"], Random(0), bag=stacked("AAAAAAA", "ZZZZZZZ", then="E" * 10))
    for i in range(6):
        game.apply(Pass(i % 2))
    lines = to_gcg(game).splitlines()
    assert lines[-2:] == [">a: AAAAAAA (AAAAAAA) -7 -7", ">b: ZZZZZZZ (ZZZZZZZ) -70 -70"]


def test_play_through_letters_can_be_dots() -> None:
    game = Game(["a", "b"], Random(0), bag=stacked("CATQQQQ", "SQQQQQQ", then="E" * 10))
    play_word(game, 0, 7, 7, "CAT")
    play_word(game, 1, 7, 7, "CATS")
    assert to_gcg(game).splitlines()[-1] == ">b: QQQQQQS 8H CATS +6 6"
    assert to_gcg(game, play_through=".").splitlines()[-1] == ">b: QQQQQQS 8H ...S +6 6"


def test_nicknames_have_no_spaces_and_are_unique() -> None:
    assert gcg_nicknames(["a b", "a_b", "", "x:y"]) == ("a_b", "a_b_2", "player3", "x_y")


def test_id_pragma_and_reader_pragmas() -> None:
    game = Game(["a", "b"], Random(0))
    record = parse_gcg(to_gcg(game, game_id=("meeple", "42")))
    assert record.pragma("id") == "meeple 42"
    assert record.pragma("character-encoding") == "UTF-8"
    assert record.players == (("a", "a"), ("b", "b"))


def test_reader_refuses_what_is_not_gcg() -> None:
    with pytest.raises(NotationError):
        parse_gcg(">a: this is not a move\n")
    with pytest.raises(NotationError):
        parse_gcg("#player1 a a\n" * 10, max_size=20)


def test_reader_reads_every_event_form() -> None:
    text = (
        "#player1 a A\n#player2 b B\n"
        ">a: ACQSTXZ 8H QXZ +56 56\n"
        ">a: ACQSTXZ -- -56 0\n"
        ">b: ADEGIOR H8 D.G +10 10\n"
        "#note a comment\n"
        ">b: ADEGIOR (challenge) +5 15\n"
        ">a: ACQSTXZ -QXZ +0 0\n"
        ">b: AEEEEIR - +0 15\n"
        ">a: AEEE (time) -10 -10\n"
        ">b: (AEEE) +4 19\n"
        ">a: AEEE (AEEE) -4 -14\n"
    )
    events = parse_gcg(text).events
    assert [e.kind for e in events] == [
        GcgEventKind.PLAY,
        GcgEventKind.PHONY_WITHDRAWN,
        GcgEventKind.PLAY,
        GcgEventKind.CHALLENGE_BONUS,
        GcgEventKind.EXCHANGE,
        GcgEventKind.PASS,
        GcgEventKind.TIME_PENALTY,
        GcgEventKind.END_RACK_POINTS,
        GcgEventKind.END_RACK_PENALTY,
    ]
    assert (events[2].position, events[2].word, events[2].note) == ("H8", "D.G", "a comment")
    assert events[4].tiles == "QXZ"
    assert [e.score for e in events[-3:]] == [-10, 4, -4]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rule=st.sampled_from(list(ChallengeRule)),
    players=st.integers(1, 4),
)
def test_export_reads_back_with_the_same_scores(
    helpers: Any, seed: int, rule: ChallengeRule, players: int
) -> None:
    """Every line parses; one play line per play; the last totals and the board match the game."""
    variant = Variant(challenge=rule, min_players=1)
    game = Game([f"p {i}" for i in range(players)], Random(seed), variant=variant)
    game.lexicon = helpers.ParityLexicon()
    helpers.play_random_game(game, [seed + i for i in range(300)], lambda g: None)
    record = parse_gcg(to_gcg(game))
    nicks = gcg_nicknames(game.players)
    assert record.final_scores() == dict(zip(nicks, game.scores, strict=True))
    plays = [e for e in record.events if e.kind == GcgEventKind.PLAY]
    assert len(plays) == sum(isinstance(e, PlayMade) for e in game.events)
    assert record.board() == game.board


def test_board_from_a_record_takes_back_withdrawn_phonies() -> None:
    text = ">a: CATQXZS 8H QXZ +56 56\n>a: CATQXZS -- -56 0\n>b: DOGSEEE 8G DOG +10 10\n"
    text += ">a: ACQSTXZ H7 T.T +3 3\n"
    board = parse_gcg("#player1 a a\n#player2 b b\n" + text).board()
    assert board.rows()[6:9] == [".......T.......", "......DOG......", ".......T......."]
    with pytest.raises(NotationError):
        parse_gcg(">a: QQ 8H .Q +2 2\n").board()

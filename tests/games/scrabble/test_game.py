"""The game engine: turns, actions and events, exchanges, challenges, the end, replay."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.errors import (
    AwaitingChallenge,
    ChallengeError,
    EmptyPlay,
    ExchangeNotAllowed,
    GameIsOver,
    NotYourTurn,
    RuleError,
    TilesNotOnRack,
    WordsNotInLexicon,
)
from meeple.games.scrabble.game import (
    CLARKSON_VARIANT,
    CMPN402_VARIANT,
    STANDARD_VARIANT,
    TWENTE_VARIANT,
    Accept,
    Challenge,
    ChallengeFailed,
    ChallengeRule,
    ChallengeUpheld,
    End,
    EndReason,
    Event,
    Exchange,
    Exchanged,
    Game,
    GameEnded,
    GameRecord,
    GameStatus,
    Leave,
    Pass,
    Passed,
    Play,
    PlayAccepted,
    PlayerDropped,
    PlayMade,
    PlayWithdrawn,
    TilesDrawn,
    TurnLost,
    TurnPassedTo,
    Variant,
    replay,
)

ACROSS = Direction.ACROSS
FILLER = "EEEEEEEEEEEEEEEEEEEE"


def stacked(*racks: str, then: str = "") -> list[str]:
    return list(reversed("".join(racks) + then))


def new_game(
    *racks: str,
    then: str = "",
    variant: Variant = STANDARD_VARIANT,
    lexicon: Any = None,
) -> Game:
    names = ["alice", "bob", "carol", "dave"][: len(racks)]
    return Game(names, Random(0), variant=variant, lexicon=lexicon, bag=stacked(*racks, then=then))


def play_word(game: Game, player: int, x: int, y: int, word: str) -> list[Event]:
    return game.apply(Play.from_word(game.board, player, x, y, ACROSS, word))


# -- setup and turns


def test_opening_deals_seven_each_and_gives_the_first_turn() -> None:
    game = Game(["alice", "bob"], Random(3))
    events = game.opening_events()
    assert [type(e) for e in events] == [TilesDrawn, TilesDrawn, TurnPassedTo]
    assert all(len(r) == 7 for r in game.racks)
    assert len(game.bag) == 86
    assert game.turn == 0
    assert game.status is GameStatus.PLAYING


@pytest.mark.parametrize(
    ("variant", "count", "ok"),
    [
        (STANDARD_VARIANT, 1, False),
        (STANDARD_VARIANT, 4, True),
        (STANDARD_VARIANT, 5, False),
        (CLARKSON_VARIANT, 1, True),
        (CMPN402_VARIANT, 3, False),
    ],
)
def test_player_counts_follow_the_variant(variant: Variant, count: int, ok: bool) -> None:
    names = [f"p{i}" for i in range(count)]
    if ok:
        assert len(Game(names, Random(0), variant=variant).players) == count
    else:
        with pytest.raises(ValueError, match="players"):
            Game(names, Random(0), variant=variant)


def test_variants_are_values() -> None:
    """Variants compare and hash by their fields, so they can key a dict or a queue."""
    double = STANDARD_VARIANT.but(challenge=ChallengeRule.DOUBLE)
    assert double == Variant(challenge=ChallengeRule.DOUBLE)
    assert {double: 1}[Variant(challenge=ChallengeRule.DOUBLE)] == 1
    assert double != STANDARD_VARIANT


def test_turns_go_round_in_seat_order() -> None:
    game = Game(["a", "b", "c"], Random(0))
    seen = []
    for _ in range(4):
        events = game.apply(Pass(game.turn or 0))
        seen.append(events[-1])
    assert seen == [TurnPassedTo(1), TurnPassedTo(2), TurnPassedTo(0), TurnPassedTo(1)]


def test_acting_out_of_turn_is_refused_and_changes_nothing() -> None:
    game = Game(["a", "b"], Random(0))
    before = game.state()
    with pytest.raises(NotYourTurn):
        game.apply(Pass(1))
    assert game.state() == before
    assert game.log == ()


# -- plays


def test_a_play_scores_draws_and_passes_the_turn(words: frozenset[str]) -> None:
    game = new_game("CATQQQQ", "DOGQQQQ", then="ABC", lexicon=words)
    events = play_word(game, 0, 7, 7, "CAT")
    made, drawn, turn = events
    assert isinstance(made, PlayMade)
    assert (made.score, made.total, made.words, made.rack, made.pending) == (
        10,
        10,
        ("CAT",),
        "CATQQQQ",
        False,
    )
    assert made.move.position == "8H"
    assert drawn == TilesDrawn(0, "ABC", 0)
    assert turn == TurnPassedTo(1)
    assert game.rack(0) == "QQQQABC"


def test_phony_in_void_is_refused_naming_it(words: frozenset[str]) -> None:
    game = new_game("CAXQQQQ", "DOGQQQQ", lexicon=words)
    before = game.state()
    with pytest.raises(WordsNotInLexicon) as info:
        play_word(game, 0, 7, 7, "CAX")
    assert info.value.words == ("CAX",)
    assert game.state() == before


def test_tiles_not_on_rack_are_refused() -> None:
    game = new_game("CATQQQQ", "DOGQQQQ")
    with pytest.raises(TilesNotOnRack):
        play_word(game, 0, 7, 7, "DOG")


# -- exchanges


def test_exchange_swaps_tiles_and_conserves_them() -> None:
    game = Game(["a", "b"], Random(5))
    rack = game.rack(0)
    events = game.apply(Exchange(0, rack[:3]))
    exchanged, drawn, turn = events
    assert isinstance(exchanged, Exchanged)
    assert exchanged.count == 3
    assert isinstance(drawn, TilesDrawn)
    assert len(drawn.tiles) == 3
    assert turn == TurnPassedTo(1)
    assert len(game.bag) == 86
    assert game.scoreless_turns == 1


def test_standard_exchange_needs_seven_in_the_bag() -> None:
    game = new_game("ABCDEFG", "HIJKLMN", then="OPQ")
    with pytest.raises(ExchangeNotAllowed) as info:
        game.apply(Exchange(0, "A"))
    assert (info.value.in_bag, info.value.needed) == (3, 7)


def test_twente_exchange_no_more_than_the_bag_holds() -> None:
    """Twente E007: swapping 3 with 3 in the bag is fine, 4 is not."""
    game = new_game("ABCDEFG", "HIJKLMN", then="OPQ", variant=TWENTE_VARIANT)
    with pytest.raises(ExchangeNotAllowed) as info:
        game.apply(Exchange(0, "ABCD"))
    assert (info.value.in_bag, info.value.needed) == (3, 4)
    game.apply(Exchange(0, "ABC"))
    assert sorted(game.rack(0)) == sorted("DEFGOPQ")


def test_exchange_of_nothing_or_of_missing_tiles() -> None:
    game = Game(["a", "b"], Random(5))
    with pytest.raises(EmptyPlay):
        game.apply(Exchange(0, ""))
    with pytest.raises(TilesNotOnRack):
        game.apply(Exchange(0, "ZZZZZZZ"))


# -- the end


def test_going_out_takes_the_other_racks() -> None:
    """Bag empty, rack emptied: alice gets bob's 49, bob loses 49."""
    game = new_game("RETAINS", "QZXJKVW")
    events = play_word(game, 0, 7, 7, "RETAINS")
    assert isinstance(events[0], PlayMade)
    assert events[0].bingo
    assert events[1] == TilesDrawn(0, "", 0)
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    result = ended.result
    assert result.reason is EndReason.WENT_OUT
    assert result.player == 0
    assert result.adjustments == (49, -49)
    assert result.scores == (66 + 49, -49)
    assert result.winners == (0,)
    assert game.is_over
    assert game.turn is None
    with pytest.raises(GameIsOver):
        game.apply(Pass(1))


def test_six_scoreless_turns_end_the_game_with_rack_penalties() -> None:
    game = Game(["a", "b"], Random(2))
    values = [sum(STANDARD_VARIANT.tile_set.value(t) for t in r) for r in game.racks]
    for i in range(6):
        events = game.apply(Pass(i % 2))
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.reason is EndReason.SCORELESS_TURNS
    assert ended.result.adjustments == (-values[0], -values[1])
    assert game.scores == (-values[0], -values[1])


def test_scoreless_limit_is_variant_data() -> None:
    game = Game(["a", "b"], Random(2), variant=STANDARD_VARIANT.but(scoreless_turns=None))
    for i in range(20):
        game.apply(Pass(i % 2))
    assert not game.is_over


def test_clarkson_lone_player_passing_twice_ends_the_game() -> None:
    """Clarkson RFC §3.15: two passes in a row by one player end it, no rack adjustment."""
    game = Game(["solo"], Random(1), variant=CLARKSON_VARIANT)
    assert game.apply(Pass(0))[-1] == TurnPassedTo(0)
    ended = game.apply(Pass(0))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.reason is EndReason.PASSES
    assert ended.result.player == 0
    assert ended.result.adjustments == (0,)


def test_clarkson_passes_must_be_in_a_row_by_the_same_player() -> None:
    game = Game(["a", "b"], Random(1), variant=CLARKSON_VARIANT)
    game.apply(Pass(0))
    game.apply(Pass(1))
    game.apply(Exchange(0, game.rack(0)[0]))
    game.apply(Pass(1))  # b's second pass in a row ends it
    assert game.result is not None
    assert game.result.reason is EndReason.PASSES
    assert game.result.player == 1


def test_disconnect_ends_the_game_and_the_others_may_win() -> None:
    game = new_game("CATQQQQ", "DOGQQQQ", then=FILLER)
    play_word(game, 0, 7, 7, "CAT")
    ended = game.apply(End(EndReason.DISCONNECT, 0))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.reason is EndReason.DISCONNECT
    assert ended.result.player == 0
    assert ended.result.scores == (10, 0)
    assert ended.result.winners == (1,)
    assert ended.result.adjustments == (0, 0)


def test_time_and_admin_ends_keep_the_scores() -> None:
    game = new_game("CATQQQQ", "DOGQQQQ", then=FILLER)
    play_word(game, 0, 7, 7, "CAT")
    ended = game.apply(End(EndReason.ADMIN))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.winners == (0,)


def test_end_takes_only_external_reasons() -> None:
    game = Game(["a", "b"], Random(0))
    with pytest.raises(ValueError, match="rules"):
        game.apply(End(EndReason.WENT_OUT))


def test_a_player_who_leaves_is_skipped_and_cannot_win() -> None:
    """Clarkson: the others play on; when the last player leaves the game ends."""
    game = Game(["a", "b", "c"], Random(4), variant=CLARKSON_VARIANT)
    assert game.apply(Leave(1)) == [PlayerDropped(1)]
    assert game.apply(Pass(0))[-1] == TurnPassedTo(2)
    game.apply(Leave(2))  # on turn: the turn moves on
    assert game.turn == 0
    ended = game.apply(Leave(0))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.reason is EndReason.DISCONNECT


def test_leavers_are_not_winners() -> None:
    game = new_game("CATQQQQ", "DOGQQQQ", "EEEEEEE", then=FILLER)
    play_word(game, 0, 7, 7, "CAT")
    game.drop_player(0)
    ended = game.apply(End(EndReason.ADMIN))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.winners == (1, 2)


# -- challenges


def double(
    lexicon: frozenset[str], *racks: str, rule: ChallengeRule = ChallengeRule.DOUBLE
) -> Game:
    return new_game(
        *racks, then=FILLER, variant=STANDARD_VARIANT.but(challenge=rule), lexicon=lexicon
    )


def test_challengeable_play_is_pending_and_draws_nothing_yet(words: frozenset[str]) -> None:
    game = double(words, "QXZCATS", "DOGAIRE")
    events = play_word(game, 0, 7, 7, "QXZ")
    assert [type(e) for e in events] == [PlayMade, TurnPassedTo]
    assert isinstance(events[0], PlayMade)
    assert events[0].pending
    assert game.pending is not None
    assert game.pending.player == 0
    assert game.status is GameStatus.CHALLENGE_WINDOW
    assert game.rack(0) == "CATS"
    assert game.scores == (game.pending.score, 0)


def test_phony_withdrawn_restores_board_rack_bag_and_score(words: frozenset[str]) -> None:
    game = double(words, "QXZCATS", "DOGAIRE")
    before = game.state()
    play_word(game, 0, 7, 7, "QXZ")
    events = game.apply(Challenge(1))
    assert events[0] == ChallengeUpheld(1, 0, ("QXZ",))
    assert isinstance(events[1], PlayWithdrawn)
    after = game.state()
    assert (after.board, after.racks, after.bag, after.scores) == (
        before.board,
        before.racks,
        before.bag,
        before.scores,
    )
    assert game.turn == 1  # the phony's player lost the turn
    assert game.pending is None


def test_double_wrong_challenge_loses_the_challengers_turn(words: frozenset[str]) -> None:
    game = double(words, "CATQQQQ", "DOGAIRE")
    play_word(game, 0, 7, 7, "CAT")
    events = game.apply(Challenge(1))
    assert [type(e) for e in events] == [
        ChallengeFailed,
        PlayAccepted,
        TilesDrawn,
        TurnLost,
        TurnPassedTo,
    ]
    assert events[2] == TilesDrawn(0, "EEE", len(FILLER) - 3)
    assert events[-1] == TurnPassedTo(0)


@pytest.mark.parametrize(
    ("rule", "bonus"),
    [(ChallengeRule.SINGLE, 0), (ChallengeRule.FIVE_POINT, 5), (ChallengeRule.TEN_POINT, 10)],
)
def test_other_wrong_challenges(words: frozenset[str], rule: ChallengeRule, bonus: int) -> None:
    """Single: no penalty; 5/10 points: the challenged player gains them. The turn stays."""
    game = double(words, "CATQQQQ", "DOGAIRE", rule=rule)
    play_word(game, 0, 7, 7, "CAT")
    events = game.apply(Challenge(1))
    failed = events[0]
    assert isinstance(failed, ChallengeFailed)
    assert (failed.bonus, failed.turn_lost, failed.total) == (bonus, False, 10 + bonus)
    assert game.scores == (10 + bonus, 0)
    assert game.turn == 1
    assert not any(isinstance(e, TurnLost | TurnPassedTo) for e in events)


def test_accept_draws_the_tiles(words: frozenset[str]) -> None:
    """CMPN402 NO_CHALLENGE: the play stands, its player draws, the turn stays."""
    game = double(words, "CATQQQQ", "DOGAIRE")
    play_word(game, 0, 7, 7, "CAT")
    events = game.apply(Accept(1))
    assert events == [PlayAccepted(0, 10), TilesDrawn(0, "EEE", len(FILLER) - 3)]
    assert game.turn == 1


def test_the_next_action_accepts_the_pending_play(words: frozenset[str]) -> None:
    game = double(words, "CATQQQQ", "DOGAIRE")
    play_word(game, 0, 7, 7, "CAT")
    events = game.apply(Pass(1))
    assert [type(e) for e in events] == [PlayAccepted, TilesDrawn, Passed, TurnPassedTo]


def test_refused_action_does_not_accept_the_pending_play(words: frozenset[str]) -> None:
    game = double(words, "CATQQQQ", "DOGAIRE")
    play_word(game, 0, 7, 7, "CAT")
    before = game.state()
    with pytest.raises(RuleError):
        game.apply(Exchange(1, "ZZ"))
    assert game.state() == before


def test_challenge_rules_errors(words: frozenset[str]) -> None:
    void = new_game("CATQQQQ", "DOGAIRE", then=FILLER, lexicon=words)
    with pytest.raises(ChallengeError):
        void.apply(Challenge(1))
    game = double(words, "CATQQQQ", "DOGAIRE")
    with pytest.raises(ChallengeError):
        game.apply(Challenge(1))  # nothing to challenge
    with pytest.raises(ChallengeError):
        game.apply(Accept(0))  # nothing to accept
    play_word(game, 0, 7, 7, "CAT")
    with pytest.raises(ChallengeError):
        game.apply(Challenge(0))  # one's own play


def test_a_game_ending_play_must_be_accepted_or_challenged(words: frozenset[str]) -> None:
    game = new_game("RETAINS", "QZXJKVW", variant=CMPN402_VARIANT, lexicon=words | {"RETAINS"})
    play_word(game, 0, 7, 7, "RETAINS")
    with pytest.raises(AwaitingChallenge):
        game.apply(Pass(1))
    ended = game.apply(Accept(1))[-1]
    assert isinstance(ended, GameEnded)
    assert ended.result.reason is EndReason.WENT_OUT


def test_a_wrong_challenge_by_a_later_opponent_skips_their_next_turn(
    words: frozenset[str],
) -> None:
    """Any opponent may challenge; under double challenge a wrong one costs their next turn."""
    game = double(words, "CATQQQQ", "DOGAIRE", "EEEEEEE")
    play_word(game, 0, 7, 7, "CAT")
    game.apply(Challenge(2))
    assert game.turn == 1
    events = game.apply(Pass(1))
    assert events[-2:] == [TurnLost(2, 0, "EEEEEEE"), TurnPassedTo(0)]


def test_end_lets_a_pending_play_stand(words: frozenset[str]) -> None:
    game = double(words, "CATQQQQ", "DOGAIRE")
    play_word(game, 0, 7, 7, "CAT")
    events = game.apply(End(EndReason.TIME, 1))
    assert [type(e) for e in events] == [PlayAccepted, TilesDrawn, GameEnded]
    assert game.scores == (10, 0)


# -- log and replay


def test_replay_rebuilds_the_same_game(helpers: Any) -> None:
    game = Game(["a", "b", "c"], Random(11), lexicon=helpers.ParityLexicon())
    helpers.play_random_game(game, list(range(60)), lambda g: None)
    record = game.record()
    assert len(record.actions) == len(game.log) > 0
    again = replay(record, Random(12345), lexicon=helpers.ParityLexicon())
    assert again.state() == game.state()
    assert again.events == game.events


def test_a_record_survives_json_and_replays(helpers: Any) -> None:
    """A record written as JSON (a checkpoint) reads back equal and replays the same game."""
    variant = CLARKSON_VARIANT.but(challenge=ChallengeRule.TEN_POINT)
    game = Game(["a", "b", "c"], Random(5), variant=variant, lexicon=helpers.ParityLexicon())
    helpers.play_random_game(game, list(range(300, 380)), lambda g: None)
    record = game.record()
    text = json.dumps(record.to_dict())
    again = GameRecord.from_dict(json.loads(text))
    assert again == record
    assert replay(again, Random(), lexicon=helpers.ParityLexicon()).state() == game.state()
    with pytest.raises(ValueError, match="not a game record"):
        GameRecord.from_dict({"players": []})


# -- properties over random games


def _expected_scores(game: Game) -> list[int]:
    scores = [0] * len(game.players)
    for e in game.events:
        if isinstance(e, PlayMade):
            scores[e.player] += e.score
        elif isinstance(e, PlayWithdrawn):
            scores[e.player] -= e.score
        elif isinstance(e, ChallengeFailed):
            scores[e.player] += e.bonus
        elif isinstance(e, GameEnded):
            scores = [s + a for s, a in zip(scores, e.result.adjustments, strict=True)]
        if isinstance(e, PlayMade | PlayWithdrawn | ChallengeFailed | Exchanged | Passed):
            assert e.total == scores[e.player]
    return scores


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    choices=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=150),
    rule=st.sampled_from(list(ChallengeRule)),
    players=st.integers(2, 4),
)
# A challenge upheld on the sixth scoreless turn in a row: it also ends the game.
@example(seed=1, choices=[0, 1, 1, 1, 1, 1, 0, 1], rule=ChallengeRule.DOUBLE, players=2)
def test_random_games_keep_every_invariant(
    helpers: Any, seed: int, choices: list[int], rule: ChallengeRule, players: int
) -> None:
    """Tiles are conserved, scores add up, a withdrawn phony restores everything, replay matches."""
    lexicon = helpers.ParityLexicon()
    variant = STANDARD_VARIANT.but(challenge=rule)
    game = Game([f"p{i}" for i in range(players)], Random(seed), variant=variant, lexicon=lexicon)
    all_tiles = helpers.tile_counter(game)
    before_pending: Any = None
    for choice in choices:
        if game.is_over:
            break
        action = helpers.random_action(game, choice)
        before = game.state()
        try:
            events = game.apply(action)
        except RuleError:
            assert game.state() == before
            continue
        if isinstance(action, Play) and game.pending is not None:
            # Compare with the state just before this play; when the play first accepted
            # an earlier pending one (whose player drew), there is no such state to compare.
            before_pending = before if before.pending is None else None
        if any(isinstance(e, ChallengeUpheld) for e in events) and before_pending is not None:
            after = game.state()
            assert (after.board, after.racks, after.bag) == (
                before_pending.board,
                before_pending.racks,
                before_pending.bag,
            )
            # The withdrawn play may have been the sixth scoreless turn in a row: the game
            # ends, and the racks' end adjustments come on top of the restored scores.
            ended = [e.result for e in events if isinstance(e, GameEnded)]
            adjust = ended[0].adjustments if ended else (0,) * players
            restored = tuple(a + b for a, b in zip(before_pending.scores, adjust, strict=True))
            assert after.scores == restored
        assert helpers.tile_counter(game) == all_tiles
        assert list(game.scores) == _expected_scores(game)
        assert all(len(r) <= variant.rack_size for r in game.racks)
    again = replay(game.record(), Random(), lexicon=lexicon)
    assert again.state() == game.state()

"""The game: dealing, the starting player, turns, skip and exchange, the end, replay."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from meeple.games.spectrangle import (
    TILE_SET,
    Abandon,
    BagEmpty,
    Exchange,
    Exchanged,
    FieldOccupied,
    Game,
    GameAbandoned,
    GameEnded,
    GameIsOver,
    GameStatus,
    MustPlace,
    NotYourTurn,
    Place,
    Rules,
    Skip,
    Skipped,
    Tile,
    TileNotInHand,
    TilePlaced,
    TilesDrawn,
    TurnStarted,
    replay,
    starting_player,
)


def t(code: str) -> Tile:
    return Tile.parse(code)


def tiles(codes: str) -> list[Tile]:
    return [t(c) for c in codes.split()]


def bag_for(hands: Sequence[str], draws: str = "") -> list[Tile]:
    """A bag that deals ``hands`` (seat order) and then yields ``draws`` in order."""
    dealt = [tile for hand in hands for tile in tiles(hand)]
    return list(reversed(tiles(draws))) + list(reversed(dealt))


def test_deal_four_tiles_each_from_a_shuffled_bag() -> None:
    """Each player gets 4 tiles; the bag keeps the rest; the same seed deals the same."""
    game = Game(["a", "b", "c"], random.Random(7))
    assert [len(game.hand(p)) for p in range(3)] == [4, 4, 4]
    assert game.bag_size == 36 - 12
    dealt = [tile for p in range(3) for tile in game.hand(p)]
    assert sorted(map(str, dealt + list(game.state().bag))) == sorted(map(str, TILE_SET))
    assert Game(["a", "b", "c"], random.Random(7)).state() == game.state()
    opening = game.opening_events
    assert [type(e) for e in opening] == [TilesDrawn, TilesDrawn, TilesDrawn, TurnStarted]


@pytest.mark.parametrize("count", [1, 5])
def test_two_to_four_players(count: int) -> None:
    """Spectrangle takes 2–4 players."""
    with pytest.raises(ValueError, match="2–4"):
        Game(["p"] * count, random.Random(1))


def test_transcript_hands_give_p3_the_first_turn() -> None:
    """p2 and p3 both hold a 6 and a 5; p3's third tile (5 > 4) decides, as in the log."""
    dealt = ["YYR4 RRB4 BRP2 YBP3", "WWW1 RRG4 GGB5 RRR6", "BBR5 RGY3 YYG5 GGG6"]
    assert starting_player([tiles(hand) for hand in dealt]) == 2
    game = Game(["p1", "p2", "p3"], bag=bag_for(dealt, "PPP6"))
    assert game.turn == 2
    assert game.order == (2, 0, 1)


def test_equal_hands_go_to_the_earlier_seat() -> None:
    """A full tie is broken by seat order (meeple's decision)."""
    assert starting_player([tiles("RRR6 YYB5"), tiles("GGG6 PPY5")]) == 0


def opening_game() -> Game:
    """The transcript's deal, with the tiles it drew next."""
    return Game(
        ["p1", "p2", "p3"],
        bag=bag_for(
            ["YYR4 RRB4 BRP2 YBP3", "WWW1 RRG4 GGB5 RRR6", "BBR5 RGY3 YYG5 GGG6"],
            "PPP6 PPR4 BBB6 PPB4 GRP1",
        ),
    )


def test_place_scores_draws_and_passes_the_turn() -> None:
    """The first tile scores its value; the player draws; the next player cannot move."""
    game = opening_game()
    events = game.apply(Place(2, t("GGG6"), 0))
    assert events == [
        TilePlaced(2, t("GGG6"), 0, 6, 6, t("GGG6")),
        TilesDrawn(2, (t("PPP6"),), game.bag_size),
        TurnStarted(0, must_skip=True),
    ]
    assert game.hand(2) == tuple(tiles("BBR5 RGY3 YYG5 PPP6"))
    assert game.must_skip()


def test_a_player_with_no_placement_may_skip_or_exchange() -> None:
    """p1 holds no green tile: skip or exchange one tile; the exchanged tile leaves the game."""
    game = opening_game()
    game.apply(Place(2, t("GGG6"), 0))
    assert set(game.legal_actions(0)) == {Skip(0)} | {Exchange(0, x) for x in game.hand(0)}
    bag_before = game.bag_size
    events = game.apply(Exchange(0, t("RYY4")))  # any rotation names the held YYR4
    assert events[0] == Exchanged(0, t("YYR4"), t("PPR4"), bag_before - 1)
    assert game.hand(0) == tuple(tiles("RRB4 BRP2 YBP3 PPR4"))
    assert game.state().set_aside == (t("YYR4"),)
    assert game.turn == 1


def test_skip_and_exchange_are_refused_while_a_placement_exists() -> None:
    """A player who can place must place."""
    game = opening_game()
    with pytest.raises(MustPlace):
        game.apply(Skip(2))
    with pytest.raises(MustPlace):
        game.apply(Exchange(2, t("GGG6")))


def test_rotated_placement_uses_the_held_tile() -> None:
    """Placing RBB5 takes BBR5 out of the hand (the reference server forgot to)."""
    game = opening_game()
    game.apply(Place(2, t("GGG6"), 0))
    game.apply(Skip(0))
    game.apply(Place(1, t("GGB5"), 2))
    events = game.apply(Place(2, t("RBB5"), 1))
    assert events[0] == TilePlaced(2, t("RBB5"), 1, 5, 11, t("BBR5"))
    assert t("BBR5") not in game.hand(2)


def test_errors_change_nothing() -> None:
    """Out of turn, a tile not held, an occupied field: refused, state unchanged."""
    game = opening_game()
    before = game.state()
    with pytest.raises(NotYourTurn):
        game.apply(Place(0, t("YYR4"), 0))
    with pytest.raises(TileNotInHand):
        game.apply(Place(2, t("RRR6"), 0))
    game.apply(Place(2, t("GGG6"), 0))
    game.apply(Skip(0))
    mid = game.state()
    with pytest.raises(FieldOccupied):
        game.apply(Place(1, t("GGB5"), 0))
    assert game.state() == mid
    assert before != mid
    assert len(game.log) == 2


def test_exchange_needs_a_tile_in_the_bag() -> None:
    """With the bag empty, a blocked player may only skip."""
    game = Game(["a", "b"], bag=bag_for(["RRR6 RRY5 RRP5 RRB4", "BBB6 BBP5 BBG4 YYB5"]))
    game.apply(Place(0, t("RRR6"), 0))  # b holds no red: blocked, and the bag is empty
    assert game.must_skip()
    assert game.legal_actions(1) == [Skip(1)]
    with pytest.raises(BagEmpty):
        game.apply(Exchange(1, t("BBB6")))


def test_end_and_deductions() -> None:
    """Bag empty and no placement for anyone: the game ends and hands are deducted."""
    game = Game(["a", "b"], bag=bag_for(["GGG6 PPP6 YYY6 BBB6", "RRR6 WWW1 RRY5 RRP5"]))
    assert game.turn == 0
    game.apply(Place(0, t("GGG6"), 0))  # only field 2 is open now; it needs green
    assert game.turn == 1
    assert not game.must_skip()  # b has the white joker
    events = game.apply(Place(1, t("WWW1"), 2))
    # Fields 1 and 3 now touch white on one side and are open to any tile: play on.
    assert isinstance(events[-1], TurnStarted)
    while not game.is_over:
        actions = game.legal_actions(game.turn or 0)
        game.apply(actions[0])
    ended = game.events[-1]
    assert isinstance(ended, GameEnded)
    result = ended.result
    assert result.deductions == tuple(sum(x.value for x in h) for h in game.hands)
    pairs = zip(game.scores, result.deductions, strict=True)
    assert result.scores == tuple(s - d for s, d in pairs)
    assert result.ranking[0] in result.winners
    assert game.status is GameStatus.FINISHED
    with pytest.raises(GameIsOver):
        game.apply(Skip(0))


def test_abandon_ends_without_result() -> None:
    """A player leaving ends the game with no points (spec, General information)."""
    game = opening_game()
    assert game.apply(Abandon(1)) == [GameAbandoned(1)]
    assert game.status is GameStatus.ABANDONED
    assert game.result is None
    assert game.turn is None
    with pytest.raises(GameIsOver):
        game.apply(Place(2, t("GGG6"), 0))


def test_skip_rounds_limit_ends_a_blocked_game() -> None:
    """With the optional limit, one full round of plain skips ends the game."""
    hands = ["GGG6 YYB5 RRY5 BBY4", "RRP5 BBR5 BBP5 PPY5"]
    limited = Game(
        ["a", "b"], bag=bag_for(hands, "RRB4 PPB4 RRG4"), rules=Rules(skip_rounds_limit=1)
    )
    plain = Game(["a", "b"], bag=bag_for(hands, "RRB4 PPB4 RRG4"))
    for game in (limited, plain):
        game.apply(Place(0, t("GGG6"), 0))  # field 2 needs green; nobody holds any
        assert game.must_skip()
        assert game.apply(Skip(1))[0] == Skipped(1)
        assert game.must_skip()
        game.apply(Skip(0))
    assert isinstance(limited.events[-1], GameEnded)
    assert limited.bag_size == 2
    # Without the limit (the ERRATA game) the skips may go on while the bag has tiles.
    assert not plain.is_over
    assert plain.turn == 1


def test_replay_rebuilds_the_same_game() -> None:
    """A record replays to an equal state."""
    rng = random.Random(3)
    game = Game(["a", "b", "c", "d"], rng)
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        game.apply(rng.choice(game.legal_actions(turn)))
    again = replay(game.record())
    assert again.state() == game.state()
    assert again.events == game.events

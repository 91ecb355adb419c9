"""The Scrabble spectator view: everything public, never a rack's letters or the bag's order."""

from __future__ import annotations

import json
import random

from tests.games.scrabble.test_game import double, play_word

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games.scrabble.game import (
    Accept,
    Challenge,
    End,
    EndReason,
    Exchange,
    Game,
    Pass,
    Play,
    TimePenalty,
)
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.view import seat_view, spectator_view

PUBLIC_KEYS = {
    "game", "variant", "players", "size", "premiums", "board", "pending", "scores",
    "rack_sizes", "bag", "turn", "status", "moves", "result",
}  # fmt: skip


def _play_out(game: Game, lexicon: Lexicon, limit: int = 200) -> None:
    for _ in range(limit):
        if game.is_over:
            return
        player = game.turn
        assert player is not None
        choice = choose(game.board, game.rack(player), lexicon, bag_count=len(game.bag))
        if isinstance(choice, ExchangeChoice):
            game.apply(Exchange(player, choice.tiles))
        elif isinstance(choice, PassChoice):
            game.apply(Pass(player))
        else:
            game.apply(Play.from_move(player, choice))


def test_view_has_only_public_fields_and_is_json(gcide: Lexicon) -> None:
    """The view is JSON-safe and has exactly the public keys; scores match the engine."""
    game = Game(["ann", "bob"], random.Random(3), lexicon=gcide)
    _play_out(game, gcide, limit=6)
    view = spectator_view(game)
    assert set(view) == PUBLIC_KEYS
    assert json.loads(json.dumps(view)) == view
    assert view["scores"] == list(game.scores)
    assert view["board"] == game.board.rows()
    assert view["bag"] == len(game.bag)
    assert view["rack_sizes"] == [len(r) for r in game.racks]


def test_exchanges_show_the_count_not_the_tiles(gcide: Lexicon) -> None:
    """An exchange appears in the log as a count; the tiles given back are not in the view."""
    game = Game(["ann", "bob"], random.Random(5), lexicon=gcide)
    rack = game.rack(0)
    game.apply(Exchange(0, rack))
    entry = spectator_view(game)["moves"][-1]
    assert entry["kind"] == "exchange"
    assert entry["text"] == "exchange 7"
    assert rack not in json.dumps(spectator_view(game))


def test_no_rack_or_bag_order_anywhere_in_a_whole_game(gcide: Lexicon) -> None:
    """At every turn of a bot game, no value in the view is a rack or the bag's tile order."""
    game = Game(["ann", "bob"], random.Random(11), lexicon=gcide)
    for _ in range(60):
        if game.is_over:
            break
        text = json.dumps(spectator_view(game))
        for rack in game.racks:
            assert f'"{rack}"' not in text
        if len(game.bag) >= 10:  # shorter runs of letters turn up in words by chance
            assert "".join(game.bag.tiles)[:10] not in text
        _play_out(game, gcide, limit=1)
    assert set(spectator_view(game)) == PUBLIC_KEYS


def test_seat_view_adds_only_the_seats_own_rack(gcide: Lexicon) -> None:
    """A seat sees its rack (issue 13) and nothing of the other racks."""
    game = Game(["ann", "bob"], random.Random(7), lexicon=gcide)
    view = seat_view(game, 1)
    assert set(view) - PUBLIC_KEYS == {"you", "rack", "unseen"}
    assert view["rack"] == game.rack(1)


def test_unseen_is_the_set_less_the_board_and_own_rack(gcide: Lexicon) -> None:
    """Unseen tiles (issue 24) are the bag and the other racks, counted per letter."""
    game = Game(["ann", "bob"], random.Random(11), lexicon=gcide)
    _play_out(game, gcide, limit=8)
    for seat in (0, 1):
        unseen = seat_view(game, seat)["unseen"]
        other = game.rack(1 - seat)
        hidden = sorted([*game.bag.tiles, *other])
        assert unseen["count"] == len(game.bag) + len(other)
        assert sum(unseen["tiles"].values()) == unseen["count"]  # English: no random letters
        for letter in set(other):
            assert unseen["tiles"][letter] >= other.count(letter)
        assert sorted(t for t, n in unseen["tiles"].items() for _ in range(n)) == hidden


def test_move_log_totals_end_at_the_final_scores(gcide: Lexicon) -> None:
    """The end's rack adjustments are lines of the log, so its totals end at the scores."""
    for seed in (3, 5, 8):
        game = Game(["ann", "bob"], random.Random(seed), lexicon=gcide)
        _play_out(game, gcide)
        assert game.is_over
        view = spectator_view(game)
        last: dict[int, int] = {}
        for m in view["moves"]:
            if m["total"] is not None:
                last[m["player"]] = m["total"]
        assert [last.get(i, 0) for i in range(2)] == view["scores"], seed
        assert any(m["kind"] == "end-rack" for m in view["moves"]), seed
        end = view["moves"][-1]
        assert end["kind"] == "end"
        assert "_" not in end["text"]
        assert "-" not in end["text"]


def test_the_game_over_line_comes_after_an_overtime_penalty(gcide: Lexicon) -> None:
    """Out of time: the penalty is taken off the final score after the end, but the log
    reads as it happened to the player, penalty first and "game over" last (issue 24)."""
    game = Game(["kim", "hal"], random.Random(4), lexicon=gcide)
    _play_out(game, gcide, limit=4)
    game.apply(End(EndReason.TIME, 0))
    game.apply(TimePenalty(0, 100))
    moves = spectator_view(game)["moves"]
    assert [m["kind"] for m in moves[-2:]] == ["time", "end"]
    assert moves[-2]["score"] == -100
    assert moves[-2]["total"] == spectator_view(game)["scores"][0]


def test_a_play_in_its_challenge_window_is_marked_undecided(words: frozenset[str]) -> None:
    """The play awaiting its verdict is the one line marked pending (no log holds it yet:
    a viewer does not count it among the moves that stay); its verdict decides it, and
    one challenged off leaves its lines decided too."""
    for verdict in (Accept(1), Challenge(1)):
        game = double(words, "CATQQQQ", "DOGAIRE")
        play_word(game, 0, 7, 7, "CAT")
        lines = spectator_view(game)["moves"]
        assert [m.get("pending", False) for m in lines] == [True]
        assert lines[0]["text"].endswith("CAT")
        game.apply(verdict)
        assert not any(m.get("pending") for m in spectator_view(game)["moves"])
    game = double(words, "QXZCATS", "DOGAIRE")
    play_word(game, 0, 7, 7, "QXZ")
    game.apply(Challenge(1))  # upheld: withdrawn
    assert not any(m.get("pending") for m in spectator_view(game)["moves"])
    play_word(game, 1, 7, 7, "DOG")
    assert [m.get("pending", False) for m in spectator_view(game)["moves"]][-1] is True

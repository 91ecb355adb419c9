"""The Scrabble preview (issue 13): the engine's verdict on a play, never applied."""

from __future__ import annotations

import json
import random

from meeple.ai.scrabble import ranked_moves
from meeple.games.scrabble.game import (
    CMPN402_VARIANT,
    TWENTE_VARIANT,
    End,
    EndReason,
    Game,
    Play,
    PlayMade,
)
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import ENGLISH
from meeple.games.scrabble.view import preview


def _phony(game: Game, player: int) -> tuple[Placement, ...]:
    """Two tiles of the player's rack across the centre that make no word."""
    rack = game.rack(player).replace("?", "")
    for a in rack:
        for b in rack.replace(a, "", 1):
            if a + b not in (game.lexicon or ()):
                return (Placement(7, 7, a), Placement(7, 8, b))
    raise AssertionError(f"every pair of {rack} is a word")


def test_a_legal_play_previews_its_score_and_words_and_changes_nothing(gcide: Lexicon) -> None:
    """The preview is the engine's own score and words; the game is the same after it."""
    game = Game(["ann", "bob"], random.Random(5), variant=TWENTE_VARIANT, lexicon=gcide)
    best = ranked_moves(game.board, game.rack(0), gcide, ENGLISH)[0]
    before = game.state()
    seen = preview(game, 0, best.tiles)
    assert game.state() == before
    assert json.loads(json.dumps(seen)) == seen
    events = game.apply(Play(0, best.tiles))
    made = next(e for e in events if isinstance(e, PlayMade))
    assert seen["score"] == made.score == best.score
    assert [w["word"] for w in seen["words"]] == list(made.words)
    assert seen["bingo"] == made.bingo


def test_a_preview_names_the_rule_a_play_breaks(gcide: Lexicon) -> None:
    """Off the centre on the first move, or tiles the seat does not hold: the engine's words."""
    game = Game(["ann", "bob"], random.Random(5), variant=TWENTE_VARIANT, lexicon=gcide)
    rack = game.rack(0)
    assert preview(game, 0, (Placement(0, 0, rack[0]), Placement(0, 1, rack[1]))) == {
        "refusal": "the first play must cover the centre square"
    }
    missing = next(c for c in "ZQXJKVWYBCDFGHLMNPRST" if c not in rack)
    refusal = preview(game, 0, (Placement(7, 7, missing), Placement(7, 8, missing)))["refusal"]
    assert refusal == f"tiles not on the rack: {missing}{missing}"


def test_only_the_previewing_seats_own_rack_counts(gcide: Lexicon) -> None:
    """Player 1's preview of player 0's best play is judged against player 1's rack."""
    game = Game(["ann", "bob"], random.Random(5), variant=TWENTE_VARIANT, lexicon=gcide)
    best = ranked_moves(game.board, game.rack(0), gcide, ENGLISH)[0]
    mine = preview(game, 0, best.tiles)
    theirs = preview(game, 1, best.tiles)
    assert "score" in mine
    own = game.rack(1)
    needed = [p.rack_tile for p in best.tiles]
    if any(needed.count(t) > own.count(t) for t in needed):
        assert theirs["refusal"].startswith("tiles not on the rack: ")
    else:
        assert theirs == mine


def test_where_words_are_checked_on_play_a_phony_is_refused(gcide: Lexicon) -> None:
    """Twente checks words on play (void challenge): the preview says what sending would."""
    game = Game(["ann", "bob"], random.Random(5), variant=TWENTE_VARIANT, lexicon=gcide)
    tiles = _phony(game, 0)
    word = "".join(p.tile for p in tiles)
    assert preview(game, 0, tiles) == {"refusal": f"not in the lexicon: {word}"}


def test_where_words_are_checked_on_challenge_a_phony_previews_like_a_word(
    gcide: Lexicon,
) -> None:
    """Double challenge: a phony gets a score and its words, the same shape as a good
    play, so a preview reveals nothing a challenge would; the engine scores it alike."""
    game = Game(["ann", "bob"], random.Random(5), variant=CMPN402_VARIANT, lexicon=gcide)
    tiles = _phony(game, 0)
    best = ranked_moves(game.board, game.rack(0), gcide, ENGLISH)[0]
    phony, good = preview(game, 0, tiles), preview(game, 0, best.tiles)
    assert set(phony) == set(good) == {"score", "words", "bingo"}
    events = game.apply(Play(0, tiles))
    made = next(e for e in events if isinstance(e, PlayMade))
    assert phony["score"] == made.score


def test_no_preview_once_the_game_is_over(gcide: Lexicon) -> None:
    """A finished game previews nothing."""
    game = Game(["ann", "bob"], random.Random(5), variant=TWENTE_VARIANT, lexicon=gcide)
    best = ranked_moves(game.board, game.rack(0), gcide, ENGLISH)[0]
    game.apply(End(EndReason.ADMIN))
    assert preview(game, 0, best.tiles) == {"refusal": "the game is over"}

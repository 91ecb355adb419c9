"""benchmarks/scrabble_endgame_ab.py: the endgame A/B driver plays positions out both ways."""

from __future__ import annotations

from random import Random

import pytest
from tests.scripts import ROOT, load_script

from meeple.games.scrabble.lexicon import load_lexicon
from meeple.games.scrabble.moves import Move

ab = load_script("benchmarks/scrabble_endgame_ab.py")


@pytest.mark.parametrize("bag", [0, 1])
def test_a_position_starts_with_that_many_tiles_in_the_bag(bag: int) -> None:
    """The greedy game stops at the first turn with ``bag`` tiles left, or is passed over."""
    lexicon = load_lexicon("enable")
    found = [g for g in (ab.start(seed, bag, lexicon) for seed in range(1, 21)) if g is not None]
    assert found
    assert all(len(g.bag) == bag and not g.over for g in found)


@pytest.mark.parametrize("flags", [[], ["--no-by-wins", "--no-prune", "--close", "400"]])
def test_the_driver_plays_a_position_both_ways_and_prints_the_gain(
    capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    """Against itself (this tree's src as the "old" one): one position, two games, a line."""
    ab.main(["--old-src", str(ROOT / "src"), "--positions", "1", "--think-time", "0", *flags])
    out = capsys.readouterr().out
    assert out.startswith("position 1 (seed ")
    assert "gain" in out
    assert "games won +0.000" in out  # the same player both ways: one game, seats swapped


def test_a_game_won_counts_one_a_draw_half() -> None:
    """The games-won gain: a win 1, a draw 0.5, a loss 0."""
    assert (ab._won(5), ab._won(0), ab._won(-3)) == (1.0, 0.5, 0.0)


def test_either_modules_choices_are_applied_by_kind() -> None:
    """An exchange or pass of another module's classes is applied by its class name."""
    lexicon = load_lexicon("enable")
    game = ab.start(1, 0, lexicon)
    assert game is not None
    before = game.scoreless

    class PassChoice:
        pass

    ab.apply(game, PassChoice(), Random(0))
    assert game.scoreless == before + 1
    assert not isinstance(PassChoice(), Move)

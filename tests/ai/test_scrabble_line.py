"""The simulation's line in C (issue 37) against the pure-Python line it replaces.

``StrongPlayer._run_once`` with a candidate's board (``cells``) and the compiled
generator plays the opponent's reply and our answer in C
(:meth:`NativeGenerator.line`); without them it plays them in Python with the
generator's ``best``. On random self-play positions, racks and bags, both leave models
and both kinds of line (from a full bag, and from 7 or fewer tiles, where the plies with
the bag empty are endgame plies), the compiled line returns the same value, to the last
bit, the same unseen count and the same end as the Python line over the Python
generator. The test fails, rather than skips, when the extension is missing, unless
the build was turned off on purpose (``MEEPLE_NO_NATIVE=1``).
"""

from __future__ import annotations

import functools
import os
from random import Random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from meeple.ai.leaves import LeaveModel, LeaveValues, default_leaves, leaves_for
from meeple.ai.scrabble import Position, StrongPlayer, unseen_tiles
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.engine import EngineUnavailable, NativeGenerator, get_generator
from meeple.games.scrabble.lexicon import LEXICONS, Lexicon, normalize_words


def _native() -> NativeGenerator:
    try:
        native = get_generator("native")
    except EngineUnavailable:
        if os.environ.get("MEEPLE_NO_NATIVE"):
            pytest.skip("the compiled generator was not built (MEEPLE_NO_NATIVE set)")
        raise
    assert isinstance(native, NativeGenerator)
    return native


@functools.cache
def _lexicon() -> Lexicon:
    """GCIDE's words of up to 4 letters and every fifth longer one: varied yet quick."""
    words = normalize_words(LEXICONS["gcide"]())
    keep = [w for i, w in enumerate(words) if len(w) <= 4 or (len(w) <= 8 and i % 5 == 0)]
    return Lexicon.from_words(keep, name="gcide-part")


def _leaves(kind: str) -> LeaveModel:
    if kind == "features":
        return default_leaves()
    if kind == "table":
        return leaves_for("wordnik")
    # a feature model with values that are not whole hundredths (ties and rounding)
    return LeaveValues({"tile:?": 24.37, "tile:S": 7.913, "tile:Q": -6.5, "dup:E": -2.1})


def _position(seed: int, plies: int, blanks: int) -> tuple[SimGame, str]:
    """A self-play game after ``plies`` turns (random among the 10 best plays) and the
    rack of the player to move, with ``blanks`` of its tiles made blanks."""
    rng = Random(seed)
    native = _native()
    lexicon = _lexicon()
    game = SimGame.new(rng)
    for _ in range(plies):
        if game.over:
            break
        best = native.best(game.board, game.racks[game.turn], lexicon, n=10)
        if best:
            game.play(rng.choice(best))
        else:
            game.pass_()
    rack = game.racks[game.turn]
    blanks = min(blanks, len(rack))
    return game, "?" * blanks + rack[blanks:]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    plies=st.integers(0, 24),
    blanks=st.sampled_from((0, 0, 1, 2)),
    bag_left=st.sampled_from((None, 0, 1, 2, 5, 7)),
    leaves=st.sampled_from(("features", "table", "odd")),
    draws=st.integers(0, 1000),
)
@example(seed=1, plies=0, blanks=0, bag_left=None, leaves="table", draws=0)
@example(seed=2, plies=14, blanks=1, bag_left=2, leaves="features", draws=3)
def test_the_compiled_line_gives_the_python_lines_numbers(
    seed: int, plies: int, blanks: int, bag_left: int | None, leaves: str, draws: int
) -> None:
    """Every candidate's line (plays and the exchange), several draws each: the C line's
    (value, unseen after, game over) equals the pure-Python line's exactly."""
    native = _native()
    lexicon = _lexicon()
    game, rack = _position(seed, plies, blanks)
    if game.over or not rack:
        return
    unseen = unseen_tiles(game.board, rack)
    if len(unseen) <= 7:  # the bag is empty: the endgame solver's case, not a line's
        return
    bag_count = len(unseen) - 7 if bag_left is None else max(1, min(bag_left, len(unseen) - 7))
    position = Position(game.board, rack, bag_count, exchange_minimum=1, unseen=unseen)
    model = _leaves(leaves)
    reference = StrongPlayer(lexicon, model, get_generator("python"), exchange_margin=1000.0)
    compiled = StrongPlayer(lexicon, model, native, exchange_margin=1000.0)
    candidates = compiled._candidates(position, 0)
    assert candidates
    rng = Random(draws)
    for _ in range(2):
        tiles = list(unseen)
        rng.shuffle(tiles)
        opp_rack, bag = "".join(tiles[:7]), tiles[7 : 7 + bag_count]
        for c in candidates:
            want = reference._run_once(position, c, opp_rack, bag)
            cells = compiled._cells_after(position, c, native)
            got = compiled._run_once(position, c, opp_rack, bag, cells)
            assert got == want, f"{c.choice} rack {rack} v {opp_rack}, bag {bag}\n{game.board}"
            assert compiled._run_once(position, c, opp_rack, bag) == want


def test_the_line_reads_each_leave_once() -> None:
    """The C line asks the leave model for a leave only the first time it meets it."""
    native = _native()
    lexicon = _lexicon()
    asked: list[str] = []
    model = default_leaves()

    class Counting:
        def get(self, leave: str, default: float = 0.0, /) -> float:
            asked.append(leave)
            return model.get(leave, default)

    game, rack = _position(5, 6, 0)
    cells = native.cells(game.board)
    counting = Counting()
    args = (game.board, cells, lexicon, game.tile_set, counting, 0.0, rack, "AEINRST", "EEE", False)
    first = native.line(*args)
    n = len(asked)
    assert n > 0
    assert len(set(asked)) == n
    assert native.line(*args) == first
    assert len(asked) == n


def test_the_line_refuses_what_is_not_a_rack() -> None:
    """Lower-case letters, digits and over-long racks are refused, not read past."""
    native = _native()
    lexicon = _lexicon()
    game, _ = _position(3, 2, 0)
    cells = native.cells(game.board)
    model = default_leaves()
    cases = (("abc", "AEI", "", "not a tile"), ("AE1", "AEI", "", "not a tile"))
    for mine, theirs, bag, why in (*cases, ("A" * 13, "E", "", "more than 12 tiles")):
        with pytest.raises(ValueError, match=why):
            native.line(
                game.board, cells, lexicon, game.tile_set, model, 0.0, mine, theirs, bag, False
            )
    with pytest.raises(ValueError, match="bag: not a tile"):
        native.line(game.board, cells, lexicon, game.tile_set, model, 0.0, "AEI", "EIO", "a", False)
    with pytest.raises(ValueError, match="board must be 225 bytes"):
        native.line(game.board, cells[:-1], lexicon, game.tile_set, model, 0.0, "A", "E", "", False)

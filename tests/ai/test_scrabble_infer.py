"""Inference of the opponent's rack from its last play (issue 37, meeple.ai.scrabble_infer)."""

from __future__ import annotations

from collections import Counter
from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.words import WORDS as SMALL_WORDS

from meeple.ai.leaves import default_leaves
from meeple.ai.scrabble import Budget, Position, StrongPlayer, ranked_moves
from meeple.ai.scrabble_infer import (
    INFER_TRIES,
    Inference,
    board_before,
    draw_rack,
    infer,
)
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import get_generator, leave_of, sort_leave
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH

# The small word list of tests/ai/words.py up to RISE: small enough for the brute force.
_ALL = SMALL_WORDS.split()
WORDS = _ALL[: _ALL.index("RISE") + 1]
LEXICON = Lexicon.from_words(WORDS, name="small")
LEAVES = default_leaves()
GEN = get_generator()


def _board(word: str) -> Board:
    board = Board()
    for i, c in enumerate(word):
        board.place(6 + i, 7, c)
    return board


def _played(before: Board, rack: str, pick: int) -> tuple[Board, Move]:
    """The board after the ``pick``-th play (by score, worst last) of ``rack``, and it."""
    plays = ranked_moves(before, rack, LEXICON, ENGLISH)
    m = plays[pick % len(plays)]
    after = before.copy()
    for t in m.tiles:
        after.place(t.x, t.y, t.tile)
    return after, m


def _best_equity(board: Board, rack: str) -> float:
    """The best equity of ``rack`` on ``board``, over every play (brute force)."""
    return max(
        m.score + LEAVES.value(sort_leave(leave_of(rack, m)))
        for m in GEN.plays(board, rack, LEXICON, ENGLISH)
    )


racks = st.text(alphabet="AEIOSTRNZXQJ?", min_size=7, max_size=7)
pools = st.text(alphabet="AEIOUSTRNLZXQJBCDH?", min_size=8, max_size=20)


@settings(max_examples=25, deadline=None)
@given(
    word=st.sampled_from(["CATS", "ZA", "OX", "QI"]),
    rack=racks,
    pick=st.integers(0, 40),
    unseen=pools,
    seed=st.integers(0, 2**16),
    margin=st.sampled_from([0.0, 3.0, 6.0]),
)
def test_each_leave_drawn_is_kept_exactly_when_the_play_was_near_best(
    word: str, rack: str, pick: int, unseen: str, seed: int, margin: float
) -> None:
    before = _board(word)
    if not ranked_moves(before, rack, LEXICON, ENGLISH):
        return
    after, m = _played(before, rack, pick)
    found = infer(GEN, LEXICON, LEAVES, after, m, unseen, Random(seed), tries=12, margin=margin)
    keep = 7 - len(m.tiles)
    if keep == 0 or len(unseen) < keep:
        assert found == Inference((), 0)
        return
    assert found.tries == 12 == len(found.leaves) + len(found.rejected)
    assert board_before(after, m) == before
    for leave in found.leaves + found.rejected:
        assert len(leave) == keep
        assert not Counter(leave) - Counter(unseen)
        own = m.score + LEAVES.value(leave)
        near = own >= _best_equity(before, m.rack_tiles + leave) - margin
        assert near == (leave in found.leaves), leave


class _Zero:
    """Leaves worth nothing: equity is the score."""

    def value(self, leave: str) -> float:
        return 0.0

    def get(self, leave: str, default: float = 0.0, /) -> float:
        return 0.0


def _weak() -> tuple[Board, Move]:
    """CAT on the board; the opponent played the E of AE down from the A, for 2."""
    before = _board("CAT")
    weak = next(m for m in ranked_moves(before, "E", LEXICON, ENGLISH) if m.score == 2)
    after = before.copy()
    for t in weak.tiles:
        after.place(t.x, t.y, t.tile)
    return after, weak


def test_a_weak_play_rules_out_the_leaves_that_had_a_far_better_one() -> None:
    # Holding a Z it would have played ZA for 11: every leave with a Z is refused; with
    # six Es (nothing better than AE there) it is kept.
    after, weak = _weak()
    found = infer(GEN, LEXICON, _Zero(), after, weak, "ZEEEEEEEEE", Random(5), margin=3.0)
    assert found.tries == INFER_TRIES == len(found.leaves) + len(found.rejected)
    assert found.rejected
    assert set(found.rejected) <= {"EEEEEZ"}
    assert found.leaves
    assert set(found.leaves) == {"EEEEEE"}


@settings(max_examples=50, deadline=None)
@given(
    leaves=st.lists(st.text(alphabet="ABE?", min_size=1, max_size=4), min_size=1, max_size=5),
    extra=st.text(alphabet="ABCDE?", max_size=20),
    seed=st.integers(0, 2**16),
)
def test_a_drawn_rack_is_a_kept_leave_filled_from_the_rest(
    leaves: list[str], extra: str, seed: int
) -> None:
    unseen = "".join(leaves) + extra
    found = Inference(tuple(sort_leave(x) for x in leaves), len(leaves))
    rack, bag = draw_rack(found, unseen, Random(seed))
    assert Counter(rack) + Counter(bag) == Counter(unseen)
    assert len(rack) == min(7, len(unseen))
    assert any(not Counter(x) - Counter(rack) for x in found.leaves)


def test_the_strong_player_infers_from_the_last_play_only_when_told() -> None:
    after, weak = _weak()
    unseen = "ZEEEEEEEEEIIIIIAAAAAOOOOO"
    base = Position(after, "AEINRST", bag_count=len(unseen) - 7, unseen=unseen)
    player = StrongPlayer(LEXICON, _Zero())
    player.choose(base, Budget(1.0, max_rounds=2), Random(1))
    assert player.last_method.startswith("simulation")
    assert player.last_inference is None
    told = Position(after, "AEINRST", bag_count=len(unseen) - 7, unseen=unseen, last_play=weak)
    player.choose(told, Budget(1.0, max_rounds=2), Random(1))
    found = player.last_inference
    assert found is not None
    assert found.tries == INFER_TRIES
    assert found.usable
    assert all("Z" not in leave for leave in found.leaves)
    off = StrongPlayer(LEXICON, _Zero(), inference=False)
    off.choose(told, Budget(1.0, max_rounds=2), Random(1))
    assert off.last_inference is None

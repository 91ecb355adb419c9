"""Move generation and the rules engine agree: every generated move is legal, same score.

The generator (a GADDAG walk with its own fast scoring) and the validator
(:func:`validate_play`, which the server uses on every move) are written apart; here
each checks the other on positions reached by real play.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.movegen import legal_moves
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import BLANK, ENGLISH


def _position(seed: int, plays: int, lexicon: Lexicon) -> tuple[Board, str]:
    """A board after ``plays`` random legal plays from a shuffled bag, and a fresh rack."""
    rng = random.Random(seed)
    bag = [t for t, n in ENGLISH.counts.items() for _ in range(n)]
    rng.shuffle(bag)
    board = Board()
    rack = [bag.pop() for _ in range(7)]
    for _ in range(plays):
        moves = legal_moves(board, "".join(rack), lexicon)
        if not moves:
            break
        move = rng.choice(moves)
        for p in move.tiles:
            board.place(p.x, p.y, p.tile)
            rack.remove(p.rack_tile)
        while len(rack) < 7 and bag:
            rack.append(bag.pop())
    return board, "".join(rack)


# 8 positions in make test (each lists and validates hundreds of moves), 80 in make test-deep.
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), plays=st.integers(0, 8), blanks=st.integers(0, 2))
def test_every_generated_move_is_accepted_by_the_validator_with_its_score(
    seed: int, plays: int, blanks: int, gcide: Lexicon
) -> None:
    """On positions from real play, validate_play accepts each generated move and agrees on
    the score, the main word and its position."""
    board, rack = _position(seed, plays, gcide)
    rack = BLANK * blanks + rack[blanks:]
    moves = legal_moves(board, rack, gcide)
    seen = set()
    for move in moves:
        result = validate_play(board, move.tiles, rack=rack, lexicon=gcide)
        assert result.score == move.score, move
        assert result.to_move() == move, move
        key = tuple(sorted(move.tiles))
        assert key not in seen, f"listed twice: {move}"
        seen.add(key)


def test_a_midgame_position_has_moves_and_all_are_valid(gcide: Lexicon) -> None:
    """A fixed mid-game position (8 plays in) with two blanks: many moves, all valid."""
    board, rack = _position(2024, 8, gcide)
    rack = "??" + rack[2:]
    moves = legal_moves(board, rack, gcide)
    assert len(moves) > 1000
    for move in moves:
        assert validate_play(board, move.tiles, rack=rack, lexicon=gcide).score == move.score

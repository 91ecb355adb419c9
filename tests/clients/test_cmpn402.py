"""The CMPN402 built-in agent: real moves in the wire format, challenges of phonies only."""

from __future__ import annotations

from meeple.clients.cmpn402 import BuiltinAgent, View
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import tiles_from_new_tiles
from meeple.games.scrabble.rules import validate_play
from meeple.protocols.cmpn402 import ExchangeMove, PassMove, PlayMove, PlayNotice


def _notice(word: str) -> PlayNotice:
    return PlayNotice(8, 8, 0, word, 0, 10_000, 1, 2)


def test_challenges_phonies_and_only_phonies(gcide: Lexicon) -> None:
    """A play forming a word not in the lexicon is challenged; a good one is not."""
    agent = BuiltinAgent(gcide)
    view = View(board=Board())
    assert agent.want_challenge(view, _notice("QXZ")) is True
    assert agent.want_challenge(view, _notice("CAT")) is False
    # Through a tile already on the board: the whole word counts.
    board = Board()
    board.place(8, 7, "A")  # column 9, row 8
    view = View(board=board)
    assert agent.want_challenge(view, PlayNotice(8, 8, 0, "CT", 0, 1, 1, 1)) is False
    assert agent.want_challenge(view, PlayNotice(8, 8, 0, "CQ", 0, 1, 1, 1)) is True


def test_choose_move_is_a_legal_play_with_its_true_score(gcide: Lexicon) -> None:
    """The agent's PLAY starts on its first new tile and claims the engine's score."""
    agent = BuiltinAgent(gcide)
    view = View(order=1, board=Board(), rack="RETAINS")
    move = agent.choose_move(view)
    assert isinstance(move, PlayMove)
    d = Direction.ACROSS if move.direction == 0 else Direction.DOWN
    tiles = tiles_from_new_tiles(Board(), move.column - 1, move.row - 1, d, move.tiles)
    result = validate_play(Board(), tiles, rack="RETAINS", lexicon=gcide)
    assert result.score == move.score
    assert move.score >= 50 + 7  # a bingo exists in RETAINS


def test_after_refusals_it_exchanges_or_passes(gcide: Lexicon) -> None:
    """Refused too often, the agent gives up the play: exchange if the bag allows, else pass."""
    agent = BuiltinAgent(gcide)
    view = View(order=1, board=Board(), rack="RETAINS", refused=6)
    assert isinstance(agent.choose_move(view), ExchangeMove)
    full = Board.from_rows(["A" * 15] * 15)  # no tile left in the bag by the estimate
    view = View(order=1, board=full, rack="RETAINS", refused=6)
    assert isinstance(agent.choose_move(view), PassMove)

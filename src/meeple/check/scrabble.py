"""What the Scrabble kits share: legal moves from meeple's engine, racks and scores.

The kit plays with :func:`meeple.ai.scrabble.ranked_moves` (every move it sends is
legal by meeple's rules and lexicon) and keeps its own board, racks and scores with the
engine's :func:`~meeple.games.scrabble.rules.validate_play`, so it can grade the
target's NEWTILES/TILES, INFORMMOVE/BOARDPUSH and SCORE/GAMEOVER.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from meeple.ai.scrabble import ranked_moves
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move, Placement
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import BLANK, TileSet

__all__ = ["Table", "best_move", "non_word", "remove_tiles", "two_letter_word"]


def best_move(board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet) -> Move | None:
    """The engine's best-scoring legal move for ``rack``, or None if there is none."""
    moves = ranked_moves(board, rack, lexicon, tile_set)
    return moves[0] if moves else None


def two_letter_word(rack: str, lexicon: Lexicon) -> str | None:
    letters = [c for c in rack if c != BLANK]
    for i, x in enumerate(letters):
        for j, y in enumerate(letters):
            if i != j and (x + y) in lexicon:
                return x + y
    return None


def non_word(rack: str, lexicon: Lexicon) -> str | None:
    """Two or three rack letters that make no word (for the "unknown word" errors)."""
    letters = [c for c in rack if c != BLANK]
    for i, x in enumerate(letters):
        for j, y in enumerate(letters):
            if i != j and (x + y) not in lexicon:
                return x + y
    return None


def remove_tiles(rack: str, tiles: str) -> str:
    left = Counter(rack)
    left.subtract(tiles)
    return "".join(sorted(left.elements()))


@dataclass
class Table:
    """The kit's own record of a game it plays every seat of."""

    tile_set: TileSet
    lexicon: Lexicon
    players: list[str]
    board: Board = field(default_factory=Board)
    racks: dict[str, str] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    total_tiles: int = 100

    @property
    def bag(self) -> int:
        on_board = sum(1 for _ in self.board.tiles())
        return self.total_tiles - on_board - sum(len(r) for r in self.racks.values())

    def play(self, player: str, tiles: tuple[Placement, ...]) -> int:
        """Lay ``tiles`` for ``player``; the engine's score of the play (added to theirs)."""
        result = validate_play(self.board, tiles, tile_set=self.tile_set)
        for t in tiles:
            self.board.place(t.x, t.y, t.tile)
        self.racks[player] = remove_tiles(self.racks[player], "".join(t.rack_tile for t in tiles))
        self.scores[player] = self.scores.get(player, 0) + result.score
        return result.score

    def final_scores(self) -> dict[str, int]:
        """The standard end: everyone loses their rack's value; one who went out gains it all."""
        final = dict(self.scores)
        left = {p: sum(self.tile_set.value(t) for t in r) for p, r in self.racks.items()}
        out = [p for p, r in self.racks.items() if not r]
        for p in self.players:
            final[p] = final.get(p, 0) - left.get(p, 0)
        if out and self.bag <= 0:
            final[out[0]] += sum(left.values())
        return final

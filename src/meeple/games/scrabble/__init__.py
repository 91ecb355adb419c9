"""Scrabble as a pure library: board, tiles, rules, scoring, games, lexicons, move generation.

Start with :class:`Game` (one game: apply actions, read events), :func:`validate_play`
(check and score a play on any board), :func:`load_lexicon` and :func:`legal_moves`.
The submodules hold the rest; everything public is re-exported here.
"""

from __future__ import annotations

from meeple.games.scrabble import bag, board, cgp, errors, game, gcg, lexicon, moves, rules, tiles
from meeple.games.scrabble.bag import *  # noqa: F403
from meeple.games.scrabble.board import *  # noqa: F403
from meeple.games.scrabble.cgp import *  # noqa: F403
from meeple.games.scrabble.errors import *  # noqa: F403
from meeple.games.scrabble.game import *  # noqa: F403
from meeple.games.scrabble.gcg import *  # noqa: F403
from meeple.games.scrabble.lexicon import *  # noqa: F403
from meeple.games.scrabble.movegen import exchanges, legal_moves
from meeple.games.scrabble.moves import *  # noqa: F403
from meeple.games.scrabble.rules import *  # noqa: F403
from meeple.games.scrabble.tiles import *  # noqa: F403

__all__ = ["exchanges", "legal_moves"]
for _module in (bag, board, cgp, errors, game, gcg, lexicon, moves, rules, tiles):
    __all__ += _module.__all__

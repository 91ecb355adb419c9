"""Spectrangle as a pure library: the triangular board, tiles, rules, scoring and replay."""

from __future__ import annotations

from meeple.games.spectrangle import board, errors, game, tiles
from meeple.games.spectrangle.board import *  # noqa: F403
from meeple.games.spectrangle.errors import *  # noqa: F403  (the error tree is public as a whole)
from meeple.games.spectrangle.game import *  # noqa: F403
from meeple.games.spectrangle.tiles import *  # noqa: F403

__all__ = ["errors", *board.__all__, *errors.__all__, *game.__all__, *tiles.__all__]

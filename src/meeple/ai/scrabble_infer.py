"""Inference of the opponent's rack from its last play (issue 37).

A player who plays ``n`` tiles keeps ``7 - n``: the tiles it kept are among those we
cannot see, but not any of them: a player holding a blank and an S rarely plays a
6-point two-tile word. As Macondo does, the kept leave is guessed by rejection: draw a
leave of ``7 - n`` tiles from the unseen tiles (the prior: every leave as likely as
the bag makes it), give the opponent the tiles it played plus that leave on the board
before its play, and keep the leave when the play it made is within ``margin`` points
of equity of the best play it then had (by our leave values: the opponent's own are
unknown, hence the margin). The leaves kept, with their multiplicity, are the
posterior the simulation draws the opponent's racks from
(:meth:`~meeple.ai.scrabble.StrongPlayer._simulate`): a kept leave, then the rest of
the rack from the remaining unseen tiles.

Nothing is inferred from a play of all seven tiles (nothing was kept), from an
exchange or a pass (the last play is then ``None``), nor when the unseen tiles cannot
hold the leave.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from meeple.ai.leaves import LeaveModel
from meeple.games.rng import Random
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import MoveGenerator, leave_of, sort_leave
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH, TileSet

__all__ = [
    "INFER_MARGIN",
    "INFER_MIN",
    "INFER_TRIES",
    "Inference",
    "board_before",
    "draw_rack",
    "infer",
]

RACK_SIZE = 7
INFER_TRIES = 48  # leaves drawn and tested, at most
INFER_MARGIN = 6.0  # equity points the opponent's play may be short of its best
INFER_MIN = 4  # fewer leaves kept than this: no inference (too little to draw from)


@dataclass(frozen=True, slots=True)
class Inference:
    """The leaves kept (sorted tiles, each as often as it was accepted) of ``tries`` drawn,
    and those refused."""

    leaves: tuple[str, ...]
    tries: int
    rejected: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return len(self.leaves) >= INFER_MIN


def board_before(board: Board, play: Move) -> Board:
    """``board`` without the tiles ``play`` put down (the board its player saw)."""
    before = board.copy()
    for t in play.tiles:
        before.remove(t.x, t.y)
    return before


def _minus(tiles: str, taken: str) -> str:
    rest = list(tiles)
    for t in taken:
        rest.remove(t)
    return "".join(rest)


def infer(
    generator: MoveGenerator,
    lexicon: Lexicon,
    leaves: LeaveModel,
    board: Board,
    play: Move,
    unseen: str,
    rng: Random,
    *,
    tile_set: TileSet = ENGLISH,
    tries: int = INFER_TRIES,
    margin: float = INFER_MARGIN,
    expired: Callable[[], bool] = lambda: False,
) -> Inference:
    """The leaves the player of ``play`` (now on ``board``) may have kept, of ``unseen``.

    Each try draws ``7 - len(play.tiles)`` tiles of ``unseen`` at random and keeps them
    when ``play``'s equity (score + ``leaves`` of them) is at least the best equity of
    that full rack on the board before the play minus ``margin``. Stops early when
    ``expired()`` says so.
    """
    keep = RACK_SIZE - len(play.tiles)
    if keep <= 0 or len(unseen) < keep or tries <= 0:
        return Inference((), 0)
    before = board_before(board, play)
    played = play.rack_tiles
    pool = list(unseen)
    accepted: list[str] = []
    rejected: list[str] = []
    done = 0
    for _ in range(tries):
        if expired():
            break
        done += 1
        rng.shuffle(pool)
        leave = sort_leave("".join(pool[:keep]))
        rack = played + leave
        best = generator.best(before, rack, lexicon, tile_set, n=1, leave=leaves)
        top = best[0] if best else None  # none only if the play was not legal there
        best_equity = (
            top.score + leaves.value(sort_leave(leave_of(rack, top))) if top else -math.inf
        )
        if play.score + leaves.value(leave) >= best_equity - margin:
            accepted.append(leave)
        else:
            rejected.append(leave)
    return Inference(tuple(accepted), done, tuple(rejected))


def draw_rack(inference: Inference, unseen: str, rng: Random) -> tuple[str, list[str]]:
    """An opponent's rack drawn from the posterior, and the rest of ``unseen`` shuffled.

    The rack is an accepted leave plus tiles from the rest, up to 7 (fewer when the
    unseen tiles are fewer); the rest is the bag, drawn from its end as the simulation
    does.
    """
    leave = rng.choice(inference.leaves)
    rest = list(_minus(unseen, leave))
    rng.shuffle(rest)
    fill = max(0, min(RACK_SIZE, len(unseen)) - len(leave))
    return leave + "".join(rest[:fill]), rest[fill:]

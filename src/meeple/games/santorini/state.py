"""The value a game of Santorini is: :class:`GameState`, plus :class:`Rules` and steps.

Everything that decides what may happen next is in :class:`GameState` — the phase,
who acts, the gods, the buildings, where the workers stand, the steps of the turn
so far — and nothing else, so two equal states are the same game position. It is a
frozen dataclass; :func:`meeple.games.santorini.game.advance` makes the next one.

Workers are numbered ``seat * 2 + k``: ``k`` 0 is the male worker (AM27 ``"M"``),
1 the female (``"F"``). ``GameState.workers[w]`` is the cell worker ``w`` stands
on, or None before it is placed and after its owner lost.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from meeple.games.santorini.board import CELLS, Cell

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "BuildStep",
    "GameState",
    "MoveStep",
    "Phase",
    "Rules",
    "Sex",
    "Step",
    "Worker",
    "owner",
    "sex_of",
    "worker_of",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 3

Worker = int
"""A worker number, ``seat * 2 + (0 for "M", 1 for "F")``."""


class Sex(enum.Enum):
    """A worker's sex, as AM27's ``workerSex`` names it; it only tells the two apart."""

    MALE = "M"
    FEMALE = "F"


def worker_of(seat: int, sex: Sex) -> Worker:
    return seat * 2 + (0 if sex is Sex.MALE else 1)


def owner(worker: Worker) -> int:
    """The seat a worker belongs to."""
    return worker // 2


def sex_of(worker: Worker) -> Sex:
    return Sex.MALE if worker % 2 == 0 else Sex.FEMALE


class Phase(enum.Enum):
    """Where a game is: the set-up phases in the order the AM27 protocol runs them, then play.

    POOL     the challenger offers the gods, one at a time, as many as there are players
             (only with gods and :attr:`Rules.challenger_picks_pool`)
    GODS     each player takes one god from the pool, starting left of the challenger,
             the challenger last
    STARTER  the challenger names the start player
    PLACE    each player in turn, from the starter, places both workers
    PLAY     turns: move, build and whatever the gods allow
    OVER     someone won
    """

    POOL = "pool"
    GODS = "gods"
    STARTER = "starter"
    PLACE = "place"
    PLAY = "play"
    OVER = "over"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """The knobs of a game, as data.

    ``players`` 2 or 3. ``gods`` False is the basic game (AM27 ``"gods": false``, every
    player ``"Atheist"``). ``god_set`` is the god variant: the names the pool is drawn
    from (default: every god this engine knows, see :data:`meeple.games.santorini.GODS`).
    With ``challenger_picks_pool`` (the published rule) the challenger first offers
    ``players`` gods and the players choose among those; without it they choose among the
    whole ``god_set``. With ``auto_eliminate`` a player who cannot complete a turn loses at
    the start of it; without it their only action is :class:`~.game.Lose` (AM27 ``LOSE``).
    """

    players: int = 2
    gods: bool = True
    god_set: tuple[str, ...] | None = None  # None: every god the engine knows
    challenger_picks_pool: bool = True
    auto_eliminate: bool = True


@dataclass(frozen=True, slots=True)
class MoveStep:
    """A move made this turn: ``worker`` from ``src`` to ``dst`` and the levels of both.

    ``forced`` is the opponent worker pushed or swapped (Apollo, Minotaur) and where to.
    """

    worker: Worker
    src: Cell
    dst: Cell
    src_level: int
    dst_level: int
    forced: tuple[Worker, Cell] | None = None


@dataclass(frozen=True, slots=True)
class BuildStep:
    """A build made this turn: ``worker`` put level ``level`` (1–3, or 4 a dome) on ``cell``."""

    worker: Worker
    cell: Cell
    level: int


Step = MoveStep | BuildStep


_EMPTY_LEVELS: tuple[int, ...] = tuple(0 for _ in CELLS)
_NO_DOMES: tuple[bool, ...] = tuple(False for _ in CELLS)


@dataclass(frozen=True, slots=True)
class GameState:
    """One position of a game, set-up phases included. Compare, hash, keep; never mutate.

    ``turn`` is the seat that must act now (the challenger, a god chooser, a placer, the
    player on turn); it is meaningless once ``phase`` is OVER. ``gods[seat]`` is the god's
    name or None (none chosen yet, or a game without gods). ``steps`` are the steps of the
    turn in progress. ``moved_up[seat]`` says whether that seat moved a worker up during
    its last completed turn (Athena reads it). ``alive[seat]`` is False once the seat lost;
    ``losers`` lists them in the order they lost; ``winner`` is set when the game is OVER.
    """

    rules: Rules
    challenger: int
    phase: Phase
    turn: int
    pool: tuple[str, ...] = ()
    gods: tuple[str | None, ...] = ()
    starter: int | None = None
    levels: tuple[int, ...] = _EMPTY_LEVELS
    domes: tuple[bool, ...] = _NO_DOMES
    workers: tuple[Cell | None, ...] = ()
    alive: tuple[bool, ...] = ()
    steps: tuple[Step, ...] = ()
    moved_up: tuple[bool, ...] = ()
    winner: int | None = None
    losers: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def occupant(self, c: Cell) -> Worker | None:
        """The worker on cell ``c``, if any."""
        for w, at in enumerate(self.workers):
            if at == c:
                return w
        return None

    def occupancy(self) -> list[Worker | None]:
        """For each cell the worker on it, or None (one pass over the workers)."""
        occ: list[Worker | None] = [None] * len(CELLS)
        for w, at in enumerate(self.workers):
            if at is not None:
                occ[at] = w
        return occ

    def workers_of(self, seat: int) -> tuple[Worker, ...]:
        """The seat's workers that stand on the board, male first."""
        return tuple(w for w in (2 * seat, 2 * seat + 1) if self.workers[w] is not None)

    def turn_worker(self) -> Worker | None:
        """The worker this turn is played with, once a step was taken (every turn uses one)."""
        return self.steps[0].worker if self.steps else None

    def height(self, c: Cell) -> int:
        """What stands on ``c``: its level, or 4 with a dome (whatever is below it)."""
        return 4 if self.domes[c] else self.levels[c]

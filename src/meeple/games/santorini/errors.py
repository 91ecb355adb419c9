"""The Santorini engine's exceptions, one class per broken rule.

Protocols map these to their own replies (AM27: an ``INFO`` and a fresh update), so
every rule gets its own class and carries the facts a reply or a log line needs::

    SantoriniError
    └── RuleError                 a well-formed action that the rules forbid
        ├── GameIsOver            an action after someone won
        ├── WrongPhase            an action of another phase (a move during set-up, ...)
        ├── NotYourTurn           a player acting when another must act
        ├── UnknownGod            a god name the game's god set does not hold
        ├── GodUnavailable        a god already offered / chosen, or not in the pool
        ├── NoSuchPlayer          a starter that is not a seat of the game
        ├── NoSuchCell            a cell number off the 5×5 board
        ├── CellOccupied          a worker placed on a worker
        ├── WorkerAlreadyPlaced   placing a worker (of that sex) that is on the board
        ├── NoWorkerThere         a move or build from a cell without one's own worker
        ├── WrongWorker           the other worker, after the turn's worker was chosen
        ├── OutOfOrder            a move when a build is due, a pass before the turn is done
        ├── NotNeighbour          a move or build to a cell not next to the worker
        ├── Domed                 a move or build onto a dome
        ├── TooHigh               a move up more than one level
        ├── Occupied              a move or build onto a worker's cell
        ├── WrongLevel            a build naming another level than the one that goes there
        ├── GodForbids            a step the rules allow but a god's power forbids
        ├── DeadEnd               a step after which the turn could not be completed
        ├── MustLose              anything but Lose from a player who cannot play
        └── NothingToUndo         undo with no step taken this turn
"""

from __future__ import annotations

__all__ = [
    "CellOccupied",
    "DeadEnd",
    "Domed",
    "GameIsOver",
    "GodForbids",
    "GodUnavailable",
    "MustLose",
    "NoSuchCell",
    "NoSuchPlayer",
    "NoWorkerThere",
    "NotNeighbour",
    "NotYourTurn",
    "NothingToUndo",
    "Occupied",
    "OutOfOrder",
    "RuleError",
    "SantoriniError",
    "TooHigh",
    "UnknownGod",
    "WorkerAlreadyPlaced",
    "WrongLevel",
    "WrongPhase",
    "WrongWorker",
]


class SantoriniError(Exception):
    """Base of every error the Santorini engine raises."""


class RuleError(SantoriniError):
    """A well-formed action that the rules of the game forbid."""


class GameIsOver(RuleError):
    """An action on a game that someone has won."""


class WrongPhase(RuleError):
    """An action that belongs to another phase (e.g. a move while gods are chosen)."""

    def __init__(self, action: str, phase: str) -> None:
        self.action = action
        self.phase = phase
        super().__init__(f"{action} is not possible in the {phase} phase")


class NotYourTurn(RuleError):
    """A player acting while another player must act."""

    def __init__(self, player: int, turn: int) -> None:
        self.player = player
        self.turn = turn
        super().__init__(f"player {player} acted when player {turn} must act")


class UnknownGod(RuleError):
    """A god name that is not in the game's god set."""

    def __init__(self, god: str) -> None:
        self.god = god
        super().__init__(f"no god {god!r} in this game")


class GodUnavailable(RuleError):
    """A god that was already offered or chosen, or is not in the pool."""

    def __init__(self, god: str) -> None:
        self.god = god
        super().__init__(f"{god} cannot be chosen now")


class NoSuchPlayer(RuleError):
    """A starter that is not a seat of this game."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        super().__init__(f"there is no player {seat}")


class NoSuchCell(RuleError):
    """A cell number that is not on the board (cells are 0–24)."""

    def __init__(self, cell: int) -> None:
        self.cell = cell
        super().__init__(f"there is no cell {cell}")


class CellOccupied(RuleError):
    """A worker placed on a cell that holds a worker already."""

    def __init__(self, cell: int) -> None:
        self.cell = cell
        super().__init__(f"cell {cell} holds a worker")


class WorkerAlreadyPlaced(RuleError):
    """A placement of a worker that stands on the board already."""

    def __init__(self, worker: int) -> None:
        self.worker = worker
        super().__init__(f"worker {worker} is placed already")


class NoWorkerThere(RuleError):
    """A move or build from a cell that does not hold one of the player's workers."""

    def __init__(self, cell: int) -> None:
        self.cell = cell
        super().__init__(f"no worker of yours on cell {cell}")


class WrongWorker(RuleError):
    """A step by the other worker once the turn's worker has moved or built."""

    def __init__(self, cell: int, turn_cell: int) -> None:
        self.cell = cell
        self.turn_cell = turn_cell
        super().__init__(f"this turn is played with the worker on cell {turn_cell}, not {cell}")


class OutOfOrder(RuleError):
    """A step the turn does not allow at this point: a move when a build is due, a
    build before the move, a pass before the turn is complete."""

    def __init__(self, step: str, expected: str) -> None:
        self.step = step
        self.expected = expected
        super().__init__(f"{step} now is out of order; expected {expected}")


class NotNeighbour(RuleError):
    """A move or build to a cell that is not next to the worker."""

    def __init__(self, src: int, dst: int) -> None:
        self.src = src
        self.dst = dst
        super().__init__(f"cell {dst} is not next to cell {src}")


class Domed(RuleError):
    """A move or build onto a cell with a dome."""

    def __init__(self, cell: int) -> None:
        self.cell = cell
        super().__init__(f"cell {cell} has a dome")


class TooHigh(RuleError):
    """A move up more than one level."""

    def __init__(self, src_level: int, dst_level: int) -> None:
        self.src_level = src_level
        self.dst_level = dst_level
        super().__init__(f"a worker cannot move up from level {src_level} to {dst_level}")


class Occupied(RuleError):
    """A move or build onto a cell that holds a worker (without a god that allows it)."""

    def __init__(self, cell: int) -> None:
        self.cell = cell
        super().__init__(f"cell {cell} holds a worker")


class WrongLevel(RuleError):
    """A build that names another level than the ones that may go on the cell."""

    def __init__(self, cell: int, level: int, allowed: tuple[int, ...]) -> None:
        self.cell = cell
        self.level = level
        self.allowed = allowed
        super().__init__(f"cannot build level {level} on cell {cell}; allowed: {allowed}")


class GodForbids(RuleError):
    """A step the basic rules allow that a god's power forbids (or does not grant):
    ``god`` is that god's name, ``player`` its owner."""

    def __init__(self, god: str, player: int, what: str) -> None:
        self.god = god
        self.player = player
        self.what = what
        super().__init__(f"{god} (player {player}) forbids {what}")


class DeadEnd(RuleError):
    """A step after which the player could not complete the turn (meeple only offers
    steps that leave a way to finish the turn)."""


class MustLose(RuleError):
    """An action other than Lose from a player who cannot complete a turn (only when
    the game does not eliminate such players itself)."""


class NothingToUndo(RuleError):
    """Undo when the player has taken no step this turn."""

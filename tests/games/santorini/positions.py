"""Helpers for table-driven Santorini cases: cells by (row, column), queries as sets."""

from __future__ import annotations

from collections.abc import Sequence

from meeple.games.santorini import (
    Action,
    Cell,
    Event,
    GameState,
    advance,
    buildable_cells,
    cell,
    from_diagram,
    reachable_cells,
)


def at(row: int, column: int) -> Cell:
    return cell(row, column)


def play(
    board: str,
    gods: tuple[str | None, ...] | None = None,
    actions: Sequence[Action] = (),
    *,
    turn: int = 0,
    moved_up: tuple[bool, ...] | None = None,
) -> tuple[GameState, list[Event]]:
    """The diagram's position with ``actions`` applied; the events of the last one."""
    s = from_diagram(board, gods=gods, turn=turn, moved_up=moved_up)
    events: list[Event] = []
    for a in actions:
        s, events = advance(s, a)
    return s, events


def reach(s: GameState, worker_cell: Cell) -> set[Cell]:
    """Where the worker on ``worker_cell`` (of the seat on turn) may move now."""
    return set(reachable_cells(s, s.turn).get(worker_cell, ()))


def builds(s: GameState, worker_cell: Cell) -> set[tuple[Cell, int]]:
    """(cell, level) pairs the worker on ``worker_cell`` may build now."""
    cells = buildable_cells(s, s.turn).get(worker_cell, {})
    return {(c, level) for c, levels in cells.items() for level in levels}

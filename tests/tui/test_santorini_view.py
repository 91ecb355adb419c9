"""The Santorini view and screen, over plain data (no engine or AM27 client on this branch)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from meeple.tui.santorini.app import SantoriniApp
from meeple.tui.santorini.view import Cell, SantoriniView, Worker
from meeple.tui.santorini.widgets import CELL_HEIGHT, CELL_WIDTH, LABEL, SantoriniBoard

SNAPSHOTS = Path(__file__).parent / "snapshots"

ROWS = [
    "0 1 2 3D 0",
    "0 1a 0 0 0D",
    "0 0 2B 0 0",
    "1 0 0 3b 0",
    "0 0 0 0 2A",
]


def midgame() -> SantoriniView:
    return SantoriniView.from_rows(
        "ann",
        ROWS,
        players=("ann", "bob"),
        gods={"ann": "Apollo", "bob": "Atlas"},
        active="ann",
        reachable={(1, 1): frozenset({(0, 0), (0, 1), (0, 2), (1, 0), (2, 1)})},
        buildable={(1, 1): {(0, 0): (1,), (1, 2): (1,), (2, 1): (1, 4)}},
        can_undo=True,
    )


@pytest.mark.parametrize(
    ("levels", "cell"),
    [
        ([0], Cell(0, False)),
        ([3, 2, 1, 0], Cell(3, False)),
        ([4, 3, 2, 1, 0], Cell(3, True)),
        ([4, 0], Cell(0, True)),
        ([], Cell(0, False)),
    ],
)
def test_level_lists_as_am27_sends_them(levels: list[int], cell: Cell) -> None:
    """levelList is top first and 4 is a dome (ERRATA): towers, domes on towers and on ground."""
    assert Cell.from_level_list(levels) == cell


def test_a_bad_level_list_is_refused() -> None:
    with pytest.raises(ValueError, match="not a level list"):
        Cell.from_level_list([5, 0])


def test_rows_and_updates() -> None:
    """from_rows reads heights, domes and workers; with_cells replaces changed cells only."""
    view = midgame()
    assert view.cell(0, 3) == Cell(3, True)
    assert view.cell(1, 1) == Cell(1, False, Worker("ann", "F"))
    assert view.cell(2, 2) == Cell(2, False, Worker("bob", "M"))
    moved = view.with_cells([((1, 1), Cell(1)), ((0, 1), Cell(1, False, Worker("ann", "F")))])
    assert moved.cell(1, 1).worker is None
    assert moved.cell(0, 1).worker == Worker("ann", "F")
    assert moved.cell(2, 2) == view.cell(2, 2)
    with pytest.raises(ValueError, match="not a cell"):
        view.with_cells([((5, 0), Cell())])


async def test_screen_selects_a_worker_and_records_picks() -> None:
    """Enter on our worker selects it (reach and build marks drawn); a click on a cell is a pick."""
    app = SantoriniApp(midgame())
    async with app.run_test(size=(100, 26)) as pilot:
        board = app.query_one(SantoriniBoard)
        await pilot.press("up", "left", "enter")
        assert board.cursor == (1, 1)
        assert app.selected == (1, 1)
        path = SNAPSHOTS / "santorini_selected.svg"
        svg = app.export_screenshot(title="santorini_selected")
        if os.environ.get("MEEPLE_UPDATE_SNAPSHOTS"):
            path.write_text(svg, encoding="utf-8")
        assert svg == path.read_text(encoding="utf-8")
        await pilot.click(
            SantoriniBoard, offset=(LABEL + CELL_WIDTH * 2 + 4, 1 + CELL_HEIGHT * 0 + 1)
        )
        assert app.picks == [((1, 1), (0, 2))]
        assert "Your turn" in str(app.query_one("#status").render())
        assert "undo" in str(app.query_one("#status").render())
        app.show(SantoriniView.from_rows("ann", ROWS, players=("ann", "bob"), active="bob"))
        await pilot.pause()
        assert app.selected is None
        assert str(app.query_one("#status").render()) == "bob's turn"

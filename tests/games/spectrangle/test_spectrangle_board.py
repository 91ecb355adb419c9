"""The board: geometry, neighbours, which tile side lies on which edge, placement, scoring."""

from __future__ import annotations

import pytest

from meeple.games.spectrangle import (
    BONUSES,
    FIELD_COUNT,
    NEIGHBOURS,
    SIDE_ON_EDGE,
    Board,
    BonusFieldFirst,
    ColourMismatch,
    Edge,
    FieldOccupied,
    NoSuchField,
    NotTouching,
    Orientation,
    Tile,
    coordinates,
    field_index,
    orientation,
)


def t(code: str) -> Tile:
    return Tile.parse(code)


def test_rows_and_indices() -> None:
    """ERRATA: rows of 1, 3, 5, 7, 9, 11 fields; index = r*r + k."""
    assert FIELD_COUNT == 36
    assert [coordinates(i)[0] for i in (0, 1, 3, 4, 8, 9, 15, 16, 24, 25, 35)] == [
        0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5,
    ]  # fmt: skip
    assert all(field_index(*coordinates(i)) == i for i in range(FIELD_COUNT))
    with pytest.raises(NoSuchField):
        coordinates(36)
    with pytest.raises(NoSuchField):
        coordinates(-1)


def test_even_k_points_up() -> None:
    """ERRATA: even k points up, odd k points down; 21 up and 15 down fields."""
    assert orientation(0) is Orientation.UP
    assert [orientation(i) for i in (1, 2, 3)] == [Orientation.UP, Orientation.DOWN, Orientation.UP]
    ups = [i for i in range(FIELD_COUNT) if orientation(i) is Orientation.UP]
    assert len(ups) == 21


# The full adjacency table, written out by hand from the drawing in board.py.
EXPECTED_NEIGHBOURS = {
    0: {Edge.BASE: 2},
    1: {Edge.RIGHT: 2, Edge.BASE: 5},
    2: {Edge.LEFT: 1, Edge.RIGHT: 3, Edge.BASE: 0},
    3: {Edge.LEFT: 2, Edge.BASE: 7},
    4: {Edge.RIGHT: 5, Edge.BASE: 10},
    5: {Edge.LEFT: 4, Edge.RIGHT: 6, Edge.BASE: 1},
    6: {Edge.LEFT: 5, Edge.RIGHT: 7, Edge.BASE: 12},
    7: {Edge.LEFT: 6, Edge.RIGHT: 8, Edge.BASE: 3},
    8: {Edge.LEFT: 7, Edge.BASE: 14},
    12: {Edge.LEFT: 11, Edge.RIGHT: 13, Edge.BASE: 6},
    16: {Edge.RIGHT: 17, Edge.BASE: 26},
    17: {Edge.LEFT: 16, Edge.RIGHT: 18, Edge.BASE: 9},
    24: {Edge.LEFT: 23, Edge.BASE: 34},
    25: {Edge.RIGHT: 26},
    26: {Edge.LEFT: 25, Edge.RIGHT: 27, Edge.BASE: 16},
    35: {Edge.LEFT: 34},
}


@pytest.mark.parametrize("index", sorted(EXPECTED_NEIGHBOURS))
def test_neighbour_table(index: int) -> None:
    """Left/right in the row; below an up field, above a down field."""
    assert dict(NEIGHBOURS[index]) == EXPECTED_NEIGHBOURS[index]


def test_adjacency_is_symmetric_across_opposite_edges() -> None:
    """If A touches B across an edge, B touches A across the opposite edge."""
    for index in range(FIELD_COUNT):
        for edge, other in NEIGHBOURS[index].items():
            assert NEIGHBOURS[other][edge.opposite] == index
            assert orientation(other) is not orientation(index)


def test_edge_counts() -> None:
    """The triangle of side 6 has 6*6*3/2 - 9 = 45 inner edges."""
    assert sum(len(n) for n in NEIGHBOURS) == 2 * 45


def test_side_on_edge_table() -> None:
    """Up: X bottom, Y left, Z right; down (tile upside down): X top, Y right, Z left."""
    assert dict(SIDE_ON_EDGE[Orientation.UP]) == {Edge.BASE: 0, Edge.LEFT: 1, Edge.RIGHT: 2}
    assert dict(SIDE_ON_EDGE[Orientation.DOWN]) == {Edge.BASE: 0, Edge.RIGHT: 1, Edge.LEFT: 2}


def test_bonus_fields() -> None:
    """ERRATA: x2 on 10, 14, 30; x3 on 2, 26, 34; x4 on 11, 13, 20."""
    assert dict(BONUSES) == {10: 2, 14: 2, 30: 2, 2: 3, 26: 3, 34: 3, 11: 4, 13: 4, 20: 4}


def test_first_tile_anywhere_but_a_bonus_field() -> None:
    """The first tile scores its value, and may not go on a bonus field."""
    board = Board()
    assert board.check(t("GGG6"), 0) == 6
    for index in BONUSES:
        with pytest.raises(BonusFieldFirst):
            board.check(t("GGG6"), index)
    assert len(board.candidate_fields()) == 27


def test_later_tile_must_touch() -> None:
    """After the first tile, a tile touching none is refused."""
    board = Board()
    board.place(t("GGG6"), 0)
    with pytest.raises(NotTouching):
        board.check(t("RRR6"), 35)
    assert board.candidate_fields() == [2]


def test_occupied_field_is_refused() -> None:
    """A field holds one tile."""
    board = Board()
    board.place(t("GGG6"), 0)
    with pytest.raises(FieldOccupied):
        board.check(t("GGG6"), 0)


def test_up_field_bottom_touches_down_field_top() -> None:
    """Up 0's X (bottom) meets down 2's X (top): G next to G, x3 bonus on 2."""
    board = Board()
    board.place(t("GGG6"), 0)
    assert board.check(t("GGB5"), 2) == 5 * 3 * 1
    with pytest.raises(ColourMismatch) as caught:
        board.check(t("BGG5"), 2)
    assert (caught.value.index, caught.value.neighbour) == (2, 0)


def test_down_field_left_is_z_and_up_field_right_is_z() -> None:
    """Transcript move 3: RBB5 on up 1 beside GGB5 on down 2 matches blue to blue."""
    board = Board()
    board.place(t("GGG6"), 0)
    board.place(t("GGB5"), 2)
    assert board.check(t("RBB5"), 1) == 5
    with pytest.raises(ColourMismatch):
        board.check(t("BBR5"), 1)  # its right side (Z) would be red


def test_white_joker_matches_anything() -> None:
    """WWW1 fits next to any colour, and any colour fits next to it."""
    board = Board()
    board.place(t("RRR6"), 6)
    assert board.check(t("WWW1"), 5) == 1
    assert board.check(t("WWW1"), 12) == 1
    board.place(t("WWW1"), 5)
    assert board.check(t("BBB6"), 4) == 6


def test_score_multiplies_by_touching_sides_and_bonus() -> None:
    """value x bonus x max(1, touching): three sides on a x4 field give 12 x value."""
    board = Board()
    # Field 20 (up, x4) has neighbours 19 (left), 21 (right) and 30 (below).
    for index in (19, 21, 30):
        board.put(t("PPP6"), index)
    assert board.touching(20) == 3
    assert board.check(t("PPP6"), 20) == 6 * 4 * 3
    assert board.check(t("WWW1"), 20) == 1 * 4 * 3


def test_two_touching_sides_double_the_score() -> None:
    """Transcript: BBP5 on 8 next to 7 and above 14 scores 5 x 2 = 10."""
    board = Board()
    board.put(t("BBR5"), 7)
    board.put(t("BBB6"), 14)
    assert board.check(t("BBP5"), 8) == 10


def test_placements_lists_every_rotation_that_fits() -> None:
    """The legal-move query tries each rotation of each held tile on each candidate."""
    board = Board()
    board.place(t("GGG6"), 0)
    found = board.placements([t("GGB5"), t("RRR6")])
    assert [(str(p.tile), p.index, p.points) for p in found] == [
        ("GGB5", 2, 15),
        ("GBG5", 2, 15),
    ]
    assert board.has_placement([t("GGB5")])
    assert not board.has_placement([t("RRR6"), t("YYB5")])


def test_copy_is_independent() -> None:
    """A copied board does not see later placements."""
    board = Board()
    copy = board.copy()
    board.place(t("GGG6"), 0)
    assert copy.is_empty
    assert board.state()[0] == "GGG6"

"""Tile-Format-1 and -2 (spec, "Tile Formats"): every code, padding, and refusals."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.cmpn402.tiles import (
    board_from_format2,
    board_to_format2,
    rack_from_format1,
    rack_to_format1,
    tile_from_format1,
    tile_from_format2,
    tile_to_format1,
    tile_to_format2,
    tiles_from_format2,
    tiles_to_format2,
)


def test_format1_codes() -> None:
    """0 is no tile, 1–26 are A–Z, 100 is the blank; nothing else is a tile."""
    assert tile_from_format1(0) is None
    assert [tile_from_format1(c) for c in (1, 26, 100)] == ["A", "Z", "?"]
    assert [tile_to_format1(t) for t in "AZ?"] == [1, 26, 100]
    for bad in (27, 99, 101, 126, 255):
        with pytest.raises(ValueError, match="Tile-Format-1"):
            tile_from_format1(bad)
    for bad in ("a", "", "AB", "."):
        with pytest.raises(ValueError, match="rack tile"):
            tile_to_format1(bad)


def test_format2_codes() -> None:
    """0 is no tile, 1–26 are A–Z, 101–126 are blanks as A–Z (lower case in meeple)."""
    assert tile_from_format2(0) is None
    assert [tile_from_format2(c) for c in (1, 26, 101, 126)] == ["A", "Z", "a", "z"]
    assert [tile_to_format2(t) for t in "AZaz"] == [1, 26, 101, 126]
    for bad in (27, 100, 127, 255):
        with pytest.raises(ValueError, match="Tile-Format-2"):
            tile_from_format2(bad)
    with pytest.raises(ValueError, match="board tile"):
        tile_to_format2("?")


def test_fields_are_zero_padded_to_seven() -> None:
    """A short rack is its tiles then zeros; eight tiles do not fit; zeros anywhere are skipped."""
    assert rack_to_format1("AB?") == bytes([1, 2, 100, 0, 0, 0, 0])
    assert rack_from_format1(bytes([0, 1, 0, 2, 0, 0, 100])) == "AB?"
    assert tiles_to_format2("Ab") == bytes([1, 102, 0, 0, 0, 0, 0])
    assert tiles_from_format2(bytes([1, 102, 0, 0, 0, 0, 0])) == "Ab"
    with pytest.raises(ValueError, match="holds 7"):
        rack_to_format1("ABCDEFGH")
    with pytest.raises(ValueError, match="7 bytes"):
        rack_from_format1(bytes(6))


def test_board_is_row_major() -> None:
    """Row y, column x is byte 15·y + x."""
    rows = ["." * 15] * 15
    rows[7] = "......." + "C" + "......."
    rows[0] = "a" + "." * 14
    data = board_to_format2(rows)
    assert len(data) == 225
    assert data[7 * 15 + 7] == 3
    assert data[0] == 101
    assert board_from_format2(data) == tuple(rows)
    with pytest.raises(ValueError, match="225"):
        board_from_format2(bytes(224))


@given(st.text(alphabet=string.ascii_uppercase + "?", max_size=7))
def test_rack_round_trip(rack: str) -> None:
    """Any rack survives encoding."""
    assert rack_from_format1(rack_to_format1(rack)) == rack


@given(st.text(alphabet=string.ascii_letters, max_size=7))
def test_board_tiles_round_trip(tiles: str) -> None:
    """Any board tiles survive encoding."""
    assert tiles_from_format2(tiles_to_format2(tiles)) == tiles

"""Tiles: notation, rotation, the white joker and the 36-tile set."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.games.spectrangle import TILE_SET, Colour, NotationError, Tile


def test_parse_and_format_round_trip() -> None:
    """`RGB4` reads as red/green/blue worth 4 and writes back the same."""
    tile = Tile.parse("RGB4")
    assert tile.sides == (Colour.RED, Colour.GREEN, Colour.BLUE)
    assert tile.value == 4
    assert str(tile) == tile.code == "RGB4"


def test_parse_accepts_lower_case() -> None:
    """Tile notation is read in any letter case."""
    assert Tile.parse("wwW1") == Tile.parse("WWW1")


@pytest.mark.parametrize("text", ["", "RGB", "RGB0", "RGB7", "RGX4", "RGBY4", "null", "RGB44"])
def test_parse_refuses_non_tiles(text: str) -> None:
    """Anything but three colour letters and a value 1–6 is a NotationError."""
    with pytest.raises(NotationError):
        Tile.parse(text)


def test_rotation_moves_the_last_side_first() -> None:
    """ERRATA: rotating XYZn gives ZXYn; three rotations give the tile back."""
    tile = Tile.parse("RGB4")
    assert str(tile.rotated()) == "BRG4"
    assert str(tile.rotated().rotated()) == "GBR4"
    assert tile.rotated().rotated().rotated() == tile


def test_rotations_are_distinct() -> None:
    """A one-colour tile has one rotation, a two-colour and a three-colour tile three."""
    assert [str(t) for t in Tile.parse("RRR6").rotations()] == ["RRR6"]
    assert [str(t) for t in Tile.parse("RRY5").rotations()] == ["RRY5", "YRR5", "RYR5"]
    assert len(Tile.parse("YBP3").rotations()) == 3


def test_same_piece_means_any_rotation() -> None:
    """A placed rotation is the hand's tile; a mirror image is not."""
    assert Tile.parse("BBR5").same_piece(Tile.parse("RBB5"))
    assert not Tile.parse("RGY3").same_piece(Tile.parse("RYG3"))


def test_white_matches_every_colour() -> None:
    """White is the joker; other colours match only themselves."""
    for colour in Colour:
        assert Colour.WHITE.matches(colour)
        assert colour.matches(Colour.WHITE)
    assert not Colour.RED.matches(Colour.BLUE)


def test_the_tile_set_is_the_errata_list() -> None:
    """36 tiles: 5 worth 6, 10 worth 5, 10 worth 4, 4 worth 3, 3 worth 2, 4 worth 1."""
    assert len(TILE_SET) == 36
    assert Counter(t.value for t in TILE_SET) == {6: 5, 5: 10, 4: 10, 3: 4, 2: 3, 1: 4}


def test_no_two_tiles_of_the_set_are_the_same_piece() -> None:
    """Every tile is its own piece: no tile is a rotation of another."""
    pieces = {frozenset(t.rotations()) for t in TILE_SET}
    assert len(pieces) == 36


@given(st.sampled_from(TILE_SET), st.integers(0, 5))
def test_rotation_keeps_the_piece(tile: Tile, turns: int) -> None:
    """Any number of rotations leaves the same piece and value."""
    turned = tile
    for _ in range(turns):
        turned = turned.rotated()
    assert tile.same_piece(turned)
    assert turned.value == tile.value
    assert Tile.parse(str(turned)) == turned

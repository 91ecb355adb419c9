"""Tile-Format-1 and Tile-Format-2 (spec, "Tile Formats") to meeple tile characters and back.

- Tile-Format-1, tiles not yet played (racks, exchanges): 0 none, 1–26 ``A``–``Z``,
  100 the blank. meeple writes a rack blank as ``?``.
- Tile-Format-2, tiles on the board (START's board, PLAY's tiles): 0 none, 1–26
  ``A``–``Z``, 101–126 a blank standing for ``A``–``Z``. meeple writes a blank on the
  board in lower case (``a``–``z``), as CGP and GCG do.

A 7-tile field (rack, exchange, PLAY tiles) is its tiles then 0 bytes. meeple sends
exactly that; it reads the tiles as the non-zero bytes in order, so a zero in the middle
is skipped rather than refused (ERRATA: liberal in what we accept).

Functions here raise :class:`ValueError`; the message codecs turn that into a
Remote- or LocalProtocolError depending on who wrote the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BLANK_FORMAT1",
    "BOARD_CELLS",
    "BOARD_SIZE",
    "NO_TILE",
    "TILE_FIELD_SIZE",
    "board_from_format2",
    "board_to_format2",
    "rack_from_format1",
    "rack_to_format1",
    "tile_from_format1",
    "tile_from_format2",
    "tile_to_format1",
    "tile_to_format2",
    "tiles_from_format2",
    "tiles_to_format2",
]

NO_TILE = 0
BLANK_FORMAT1 = 100
_BLANK_FORMAT2_BASE = 100  # 101 is a blank as A, 126 a blank as Z
TILE_FIELD_SIZE = 7
BOARD_SIZE = 15
BOARD_CELLS = BOARD_SIZE * BOARD_SIZE
_EMPTY = "."
_RACK_BLANK = "?"


def tile_from_format1(code: int) -> str | None:
    """A Tile-Format-1 byte to ``A``–``Z`` or ``?`` (blank); None for 0 (no tile)."""
    if code == NO_TILE:
        return None
    if 1 <= code <= 26:
        return chr(ord("A") + code - 1)
    if code == BLANK_FORMAT1:
        return _RACK_BLANK
    raise ValueError(f"{code} is not a Tile-Format-1 tile")


def tile_to_format1(tile: str) -> int:
    """``A``–``Z`` or ``?`` to its Tile-Format-1 byte."""
    if tile == _RACK_BLANK:
        return BLANK_FORMAT1
    if len(tile) == 1 and "A" <= tile <= "Z":
        return ord(tile) - ord("A") + 1
    raise ValueError(f"{tile!r} is not a rack tile (A-Z or ?)")


def tile_from_format2(code: int) -> str | None:
    """A Tile-Format-2 byte to ``A``–``Z``, ``a``–``z`` (blank as that letter); None for 0."""
    if code == NO_TILE:
        return None
    if 1 <= code <= 26:
        return chr(ord("A") + code - 1)
    if _BLANK_FORMAT2_BASE + 1 <= code <= _BLANK_FORMAT2_BASE + 26:
        return chr(ord("a") + code - _BLANK_FORMAT2_BASE - 1)
    raise ValueError(f"{code} is not a Tile-Format-2 tile")


def tile_to_format2(tile: str) -> int:
    """``A``–``Z`` or ``a``–``z`` (a blank) to its Tile-Format-2 byte."""
    if len(tile) == 1 and "A" <= tile <= "Z":
        return ord(tile) - ord("A") + 1
    if len(tile) == 1 and "a" <= tile <= "z":
        return ord(tile) - ord("a") + 1 + _BLANK_FORMAT2_BASE
    raise ValueError(f"{tile!r} is not a board tile (A-Z, or a-z for a blank)")


def _pad(codes: list[int], what: str) -> bytes:
    if len(codes) > TILE_FIELD_SIZE:
        raise ValueError(f"{what}: {len(codes)} tiles, a field holds {TILE_FIELD_SIZE}")
    return bytes(codes + [NO_TILE] * (TILE_FIELD_SIZE - len(codes)))


def _check_field(data: bytes | Sequence[int]) -> None:
    if len(data) != TILE_FIELD_SIZE:
        raise ValueError(f"a tile field is {TILE_FIELD_SIZE} bytes, not {len(data)}")


def rack_to_format1(tiles: str) -> bytes:
    """Up to 7 rack tiles (``A``–``Z``, ``?``) to a 0-padded 7-byte Tile-Format-1 field."""
    return _pad([tile_to_format1(t) for t in tiles], "rack")


def rack_from_format1(data: bytes | Sequence[int]) -> str:
    """A 7-byte Tile-Format-1 field to rack tiles; 0 bytes (anywhere) are no tile."""
    _check_field(data)
    return "".join(t for t in map(tile_from_format1, data) if t is not None)


def tiles_to_format2(tiles: str) -> bytes:
    """Up to 7 board tiles (``A``–``Z``, ``a``–``z``) to a 0-padded Tile-Format-2 field."""
    return _pad([tile_to_format2(t) for t in tiles], "tiles")


def tiles_from_format2(data: bytes | Sequence[int]) -> str:
    """A 7-byte Tile-Format-2 field to board tiles; 0 bytes (anywhere) are no tile."""
    _check_field(data)
    return "".join(t for t in map(tile_from_format2, data) if t is not None)


def board_to_format2(rows: Sequence[str]) -> bytes:
    """15 rows of 15 tile characters (``.`` empty) to 225 Tile-Format-2 bytes, row-major."""
    if len(rows) != BOARD_SIZE or any(len(row) != BOARD_SIZE for row in rows):
        raise ValueError(f"a board is {BOARD_SIZE} rows of {BOARD_SIZE} squares")
    return bytes(NO_TILE if c == _EMPTY else tile_to_format2(c) for row in rows for c in row)


def board_from_format2(data: bytes | Sequence[int]) -> tuple[str, ...]:
    """225 Tile-Format-2 bytes, row-major (spec START), to 15 rows with ``.`` for empty."""
    if len(data) != BOARD_CELLS:
        raise ValueError(f"a board is {BOARD_CELLS} bytes, not {len(data)}")
    cells = [tile_from_format2(code) or _EMPTY for code in data]
    return tuple("".join(cells[y * BOARD_SIZE : (y + 1) * BOARD_SIZE]) for y in range(BOARD_SIZE))

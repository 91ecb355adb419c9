"""Geometry the pages draw with: the Spectrangle triangle board as SVG points.

Field ``(row, k)`` (ERRATA numbering, see :mod:`meeple.games.spectrangle.board`) is a
triangle of width :data:`W` and height :data:`H`; a tile's three sides are drawn as
the three triangles between the field's centre and its edges: ``X`` on the base,
then ``Y`` and ``Z`` clockwise (left, right for an up field; right, left for a down
one). ``static/js/render.js`` computes the same numbers.
"""

from __future__ import annotations

from typing import Any

from meeple.games.spectrangle.board import FIELD_COUNT, ROWS, coordinates

__all__ = ["H", "W", "spectrangle_geometry"]

W = 60.0
H = 52.0


def _pts(*points: tuple[float, float]) -> str:
    return " ".join(f"{x:g},{y:g}" for x, y in points)


def spectrangle_geometry() -> list[dict[str, Any]]:
    """Per field: its outline, its three side triangles (X, Y, Z) and its centre."""
    fields = []
    for index in range(FIELD_COUNT):
        row, k = coordinates(index)
        x0 = (ROWS - 1 - row) * W / 2
        top, bottom = row * H, (row + 1) * H
        if k % 2 == 0:  # points up: base at the bottom
            left = x0 + (k // 2) * W
            p0, p1, p2 = (left, bottom), (left + W, bottom), (left + W / 2, top)
            c = (left + W / 2, top + H * 2 / 3)
            sides = [(p0, p1), (p0, p2), (p2, p1)]  # X base, Y left, Z right
        else:  # points down: base at the top
            left = x0 + (k // 2) * W + W / 2
            p0, p1, p2 = (left, top), (left + W, top), (left + W / 2, bottom)
            c = (left + W / 2, top + H / 3)
            sides = [(p0, p1), (p1, p2), (p2, p0)]  # X base, Y right, Z left
        fields.append(
            {
                "points": _pts(p0, p1, p2),
                "sides": [_pts(a, b, c) for a, b in sides],
                "cx": f"{c[0]:g}",
                "cy": f"{c[1] + 5:g}",
            }
        )
    return fields

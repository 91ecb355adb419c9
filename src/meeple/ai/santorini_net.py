"""The network evaluation of Santorini (issue 36): its Python twin and its weights.

A small network for games without gods between two players, evaluated incrementally by
the compiled core (``_santorini_core.c``, ``Net``) and computed here from scratch with
the same integers (``tests/ai/test_santorini_core.py`` proves they agree).

Inputs, from one side's view (:func:`features`, :data:`INPUTS` = 325): the height of
each cell (0–3, 4 a dome or complete tower; cell × 5), then that side's workers by cell
and the height they stand on (cell × 4), then the other side's workers (cell × 4).
Each side has an accumulator of :data:`HIDDEN` integers: the bias ``b1`` plus the rows
of ``w1`` of its active inputs (int16 weights, :data:`QA` a unit); the core updates
both on every make and unmake, only for the cells a turn changes. The value for the
side to move is

    t = b2 + sum_i clamp(acc[mover][i], 0, QA) * w2[i]
           + sum_i clamp(acc[other][i], 0, QA) * w2[HIDDEN + i]
    value = floor(t * scale / (QA * QB))

(a clipped ReLU, one output; ``w2`` int16 at :data:`QB` a unit), in the evaluation's
points (``scale`` points a unit of log-odds of winning, the table evaluation's scale).
A ``residual`` network learned what the weights of the search miss: its value is added
to theirs (the search's evaluation with the network is then the table evaluation plus
the network). ``scripts/train_santorini_net.py`` fits it on meeple's own self-play.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = [
    "HIDDEN",
    "INPUTS",
    "MAX_FILE",
    "QA",
    "QB",
    "NetWeights",
    "accumulator",
    "evaluate_net",
    "features",
    "net_weights",
    "parse_net",
]

INPUTS = 325
"""Inputs a side: 25 cells × 5 heights, 25 × 4 own workers, 25 × 4 the other's."""
HIDDEN = 32
"""Hidden units a side (the output sees 2 × HIDDEN)."""
QA = 256
"""A unit of the first layer (accumulators and their clamp)."""
QB = 64
"""A unit of the output layer."""
MAX_FILE = 4_000_000
"""The largest weights file read (bytes)."""

_I16 = 32767


@dataclass(frozen=True, slots=True)
class NetWeights:
    """The network's integers: ``w1`` (INPUTS × HIDDEN, row by row), ``b1`` (HIDDEN),
    ``w2`` (2 × HIDDEN: the mover's side, then the other's), ``b2``, ``scale``."""

    w1: tuple[int, ...]
    b1: tuple[int, ...]
    w2: tuple[int, ...]
    b2: int
    scale: int
    provenance: str = ""
    residual: bool = False
    """The network learned what the search's weights miss: a search adds their value."""


def features(h: Sequence[int], wk: Sequence[int], seat: int) -> list[int]:
    """The active inputs of a two-player position from ``seat``'s view; ``h`` the cells'
    codes (0–3 a level, 4 or more a dome or tower), ``wk`` the four workers' cells."""
    out = [c * 5 + min(code, 4) for c, code in enumerate(h)]
    for v, c in enumerate(wk):
        base = 125 if v >> 1 == seat else 225
        out.append(base + c * 4 + min(h[c], 3))
    return out


def accumulator(net: NetWeights, h: Sequence[int], wk: Sequence[int], seat: int) -> list[int]:
    """``seat``'s accumulator computed from scratch."""
    acc = list(net.b1)
    w1 = net.w1
    for f in features(h, wk, seat):
        row = f * HIDDEN
        for i in range(HIDDEN):
            acc[i] += w1[row + i]
    return acc


def evaluate_net(net: NetWeights, h: Sequence[int], wk: Sequence[int], turn: int) -> int:
    """The value for ``turn`` (the side to move), as the core computes it."""
    t = net.b2
    for side, off in ((turn, 0), (1 - turn, HIDDEN)):
        acc = accumulator(net, h, wk, side)
        for i in range(HIDDEN):
            t += min(max(acc[i], 0), QA) * net.w2[off + i]
    return (t * net.scale) // (QA * QB)


def _ints(value: object, n: int, what: str, bound: int = _I16) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) != n:
        raise ValueError(f"{what}: {n} integers")
    out = []
    for x in value:
        if not isinstance(x, int) or isinstance(x, bool) or not -bound <= x <= bound:
            raise ValueError(f"{what}: integers within ±{bound}")
        out.append(x)
    return tuple(out)


def parse_net(text: str) -> NetWeights:
    """A weights file (``data/santorini_net.json``'s format); ValueError when it is not
    one (at most :data:`MAX_FILE` characters, the shape of this module, int16 weights)."""
    if len(text) > MAX_FILE:
        raise ValueError("weights file too large")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a JSON object")
    if (data.get("inputs"), data.get("hidden"), data.get("qa"), data.get("qb")) != (
        INPUTS,
        HIDDEN,
        QA,
        QB,
    ):
        raise ValueError(f"a network of {INPUTS} inputs, {HIDDEN} units, QA {QA}, QB {QB}")
    w1 = data.get("w1")
    if not isinstance(w1, list) or len(w1) != INPUTS:
        raise ValueError(f"w1: {INPUTS} rows")
    flat: list[int] = []
    for row in w1:
        flat.extend(_ints(row, HIDDEN, "w1"))
    b2 = data.get("b2")
    scale = data.get("scale")
    if not isinstance(b2, int) or isinstance(b2, bool) or abs(b2) > 1 << 30:
        raise ValueError("b2: an integer within ±2^30")
    if isinstance(scale, float) and scale.is_integer():
        scale = int(scale)
    if not isinstance(scale, int) or isinstance(scale, bool) or not 1 <= scale <= 10_000:
        raise ValueError("scale: an integer 1-10,000")
    provenance = data.get("provenance", "")
    residual = data.get("residual", False)
    if not isinstance(residual, bool):
        raise ValueError("residual: true or false")
    return NetWeights(
        tuple(flat),
        _ints(data.get("b1"), HIDDEN, "b1"),
        _ints(data.get("w2"), 2 * HIDDEN, "w2"),
        b2,
        scale,
        provenance if isinstance(provenance, str) else "",
        residual,
    )


def net_weights(path: Path | None = None) -> NetWeights | None:
    """The network meeple ships (or the file at ``path``), None when there is none."""
    try:
        if path is not None:
            text = path.read_text()
        else:
            text = resources.files("meeple.ai").joinpath("data/santorini_net.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    return parse_net(text)

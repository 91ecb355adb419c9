"""The chance to win a Scrabble game from a lead and the tiles unseen (issue 37).

A :class:`WinTable` answers "the side to move leads by ``lead`` points and cannot see
``unseen`` tiles (bag + the other rack): how often does it win?" as a logistic curve
per number of tiles unseen, ``1 / (1 + exp(-(slope[u] * lead + bias[u])))``: the fewer
tiles left, the steeper (a 20-point lead is worth little with 80 tiles to come and
nearly the game with 7); ``bias`` is what moving first is worth. The curves are fitted
by self-play (``scripts/fit_winprob.py``, which documents how) and shipped as
``data/winprob.json`` with their provenance.

The strong player's simulation uses it near the end of a close game: each simulated
line ends at a lead and a number of tiles unseen, the table turns that into a chance
to win, and the candidate with the best mean chance is played (as Macondo's
simulation does), not the one with the best mean spread.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = [
    "MAX_TABLE_BYTES",
    "MAX_UNSEEN",
    "WinTable",
    "WinTableError",
    "default_win_table",
    "fit_curve",
]

MAX_TABLE_BYTES = 1 << 20  # a table file is a few kilobytes; refuse anything past 1 MB
MAX_UNSEEN = 100  # the English set has 100 tiles: no position has more unseen


class WinTableError(ValueError):
    """A win-probability file that is not one (bad JSON, shape, numbers or size)."""


@dataclass(frozen=True, slots=True)
class WinTable:
    """Logistic win curves indexed by tiles unseen (``slope[u]``, ``bias[u]``, ``u`` =
    0..len-1; past the end, the last one). ``info`` is the provenance."""

    slope: tuple[float, ...]
    bias: tuple[float, ...]
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.slope or len(self.slope) != len(self.bias):
            raise WinTableError("slope and bias must be non-empty and of one length")
        if len(self.slope) > MAX_UNSEEN + 1:
            raise WinTableError(f"more than {MAX_UNSEEN + 1} curves")
        for x in (*self.slope, *self.bias):
            if not math.isfinite(x):
                raise WinTableError("a curve's number is not finite")
        if any(s <= 0 for s in self.slope):
            raise WinTableError("a curve's slope must be positive (a bigger lead wins more)")

    def win(self, lead: float, unseen: int) -> float:
        """The chance that the side to move, ``lead`` points ahead with ``unseen`` tiles
        it cannot see, wins (draws count half)."""
        u = min(max(unseen, 0), len(self.slope) - 1)
        z = self.slope[u] * lead + self.bias[u]
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def after_line(self, lead: float, unseen_by_opponent: int) -> float:
        """Our chance to win when a simulated line stops with the *opponent* to move,
        ``lead`` being ours and ``unseen_by_opponent`` the tiles they cannot see."""
        return 1.0 - self.win(-lead, unseen_by_opponent)

    # --- the file ---

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": "meeple-winprob-1",
                "info": dict(self.info),
                "slope": [round(s, 7) for s in self.slope],
                "bias": [round(b, 5) for b in self.bias],
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str | bytes, *, max_size: int = MAX_TABLE_BYTES) -> WinTable:
        """Decode a table file; :class:`WinTableError` for anything else."""
        if len(text) > max_size:
            raise WinTableError(f"win table over {max_size} bytes")
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as e:
            raise WinTableError(f"not JSON: {e}") from None
        if not isinstance(data, dict) or data.get("format") != "meeple-winprob-1":
            raise WinTableError("not a meeple-winprob-1 table")
        info = data.get("info", {})
        if not isinstance(info, dict):
            raise WinTableError("info must be an object")
        return cls(_numbers(data.get("slope")), _numbers(data.get("bias")), info)


def _numbers(value: object) -> tuple[float, ...]:
    if not isinstance(value, list) or not value or len(value) > MAX_UNSEEN + 1:
        raise WinTableError(f"a curve list must hold 1-{MAX_UNSEEN + 1} numbers")
    out: list[float] = []
    for x in value:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise WinTableError("a curve's number is not a number")
        out.append(float(x))
    return tuple(out)


def fit_curve(
    leads: Sequence[float], wins: Sequence[float], *, ridge: float = 1e-3, rounds: int = 30
) -> tuple[float, float]:
    """(slope, bias) of the logistic curve that best explains ``wins`` (1, 0.5 or 0)
    given ``leads`` by maximum likelihood (Newton's method, a little ridge on the slope
    so a curve with few samples stays finite)."""
    a, b = 0.02, 0.0
    scale = 100.0  # leads in hundreds of points keep the Hessian well conditioned
    xs = [x / scale for x in leads]
    a *= scale
    for _ in range(rounds):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(xs, wins, strict=True):
            z = a * x + b
            p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            r = y - p
            w = p * (1.0 - p)
            ga += r * x
            gb += r
            haa += w * x * x
            hab += w * x
            hbb += w
        ga -= ridge * a
        haa += ridge
        det = haa * hbb - hab * hab
        if det <= 1e-12:
            break
        da = (hbb * ga - hab * gb) / det
        db = (haa * gb - hab * ga) / det
        a += da
        b += db
        if abs(da) < 1e-9 and abs(db) < 1e-9:
            break
    return a / scale, b


@functools.cache
def default_win_table() -> WinTable:
    """The table ``scripts/fit_winprob.py`` fitted (``data/winprob.json``)."""
    text = resources.files("meeple.ai").joinpath("data", "winprob.json").read_text("utf-8")
    return WinTable.from_json(text)

"""Leave values: what the tiles a player keeps are worth, in points, for equity.

Equity = score + the value of the leave (the tiles left on the rack). The values come
from a small linear model whose weights ``scripts/derive_leaves.py`` fits by
self-play (how many points a player scores on their next turn after keeping a
leave, against the average), stored in ``data/leaves.json`` next to this module.

Features of a leave, each with a weight in the file:

- ``tile:X`` — one per tile of letter X (``?`` for a blank);
- ``dup:X`` — one per extra copy of X beyond the first (duplicates hurt);
- ``mix:V/C`` — the leave holds V vowels and C consonants (balance; blanks not counted);
- ``q-no-u`` — a Q without a U.

:class:`LeaveValues` evaluates a leave string (letters sorted, ``?`` last) and
remembers the answers; it has the ``get(leave, default)`` method the move generator's
equity ranking asks for.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from importlib import resources

__all__ = ["LeaveValues", "default_leaves", "features", "zero_leaves"]

VOWELS = frozenset("AEIOU")
_MAX_CACHE = 200_000


def features(leave: str) -> Counter[str]:
    """The feature counts of a leave (see the module docstring)."""
    counts = Counter(leave)
    out: Counter[str] = Counter()
    for tile, n in counts.items():
        out[f"tile:{tile}"] += n
        if n > 1:
            out[f"dup:{tile}"] += n - 1
    if leave:
        vowels = sum(n for t, n in counts.items() if t in VOWELS)
        consonants = sum(n for t, n in counts.items() if t not in VOWELS and t != "?")
        out[f"mix:{vowels}/{consonants}"] += 1
    if counts["Q"] and not counts["U"]:
        out["q-no-u"] += 1
    return out


class LeaveValues:
    """Leave -> points, from feature weights; unknown features weigh 0."""

    __slots__ = ("_cache", "info", "weights")

    def __init__(self, weights: Mapping[str, float], info: Mapping[str, object] | None = None):
        self.weights = dict(weights)
        self.info = dict(info or {})
        self._cache: dict[str, float] = {"": 0.0}

    def value(self, leave: str) -> float:
        hit = self._cache.get(leave)
        if hit is None:
            w = self.weights
            hit = round(sum(w.get(f, 0.0) * n for f, n in features(leave).items()), 3)
            if len(self._cache) > _MAX_CACHE:
                self._cache.clear()
            self._cache[leave] = hit
        return hit

    def get(self, leave: str, default: float = 0.0) -> float:
        return self.value(leave)

    def to_json(self) -> str:
        data = {"info": self.info, "weights": dict(sorted(self.weights.items()))}
        return json.dumps(data, indent=1, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> LeaveValues:
        data = json.loads(text)
        weights = {str(k): float(v) for k, v in data["weights"].items()}
        return cls(weights, data.get("info", {}))


def zero_leaves() -> LeaveValues:
    """Every leave worth 0: equity is the score (a greedy player)."""
    return LeaveValues({})


_default: LeaveValues | None = None


def default_leaves() -> LeaveValues:
    """The values derived by ``scripts/derive_leaves.py`` (``data/leaves.json``)."""
    global _default
    if _default is None:
        text = resources.files("meeple.ai").joinpath("data", "leaves.json").read_text("utf-8")
        _default = LeaveValues.from_json(text)
    return _default

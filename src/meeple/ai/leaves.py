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

import functools
import json
import lzma
import re
import struct
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from meeple.games.scrabble.tiles import TileSet

__all__ = [
    "LeaveModel",
    "LeaveTableError",
    "LeaveValues",
    "SuperLeaves",
    "all_leaves",
    "default_leaves",
    "features",
    "leaves_for",
    "sort_tiles",
    "zero_leaves",
]

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


class LeaveModel(Protocol):
    """What a player needs of leave values: :meth:`value`, and :meth:`get` for the generator.

    :class:`LeaveValues` (a feature model) and :class:`SuperLeaves` (a value for every
    leave) both fit.
    """

    info: dict[str, object]

    def value(self, leave: str) -> float: ...

    def get(self, leave: str, default: float = 0.0, /) -> float: ...


class LeaveTableError(ValueError):
    """A leave-table file that cannot be decoded (bad magic, header, size or length)."""


MAGIC = b"MEEPLE-LEAVES-1\n"
MAX_TABLE_BYTES = 8 * 1024 * 1024  # decompressed; the English table is 1.8 MB
MAX_HEADER_BYTES = 64 * 1024
SCALE = 100  # values are stored in hundredths of a point, as int16


def _counts_table(caps: Sequence[int], max_tiles: int) -> list[list[int]]:
    """``n[i][r]``: how many count vectors for tiles ``i..`` hold at most ``r`` tiles."""
    k = len(caps)
    n = [[0] * (max_tiles + 1) for _ in range(k + 1)]
    n[k] = [1] * (max_tiles + 1)
    for i in range(k - 1, -1, -1):
        for r in range(max_tiles + 1):
            n[i][r] = sum(n[i + 1][r - v] for v in range(min(caps[i], r) + 1))
    return n


class SuperLeaves:
    """A value for every leave of up to ``max_tiles`` tiles, fitted by self-play.

    The leaves of an alphabet (letters then ``?``, each at most as many times as the
    tile set holds it) are numbered in the lexicographic order of their count vectors
    (the empty leave is 0), so the file stores only the values, in that order, as
    int16 hundredths of a point: :meth:`index` ranks a leave without a dictionary.
    A leave the table cannot rank (longer, an unknown letter, more copies than the
    set holds) gets the ``fallback`` feature model's value. Build one with
    :meth:`from_bytes` (the file) or :meth:`from_values`.
    """

    __slots__ = (
        "_cache",
        "_pos",
        "_steps",
        "alphabet",
        "caps",
        "fallback",
        "info",
        "max_tiles",
        "values",
    )

    def __init__(
        self,
        alphabet: str,
        caps: Sequence[int],
        max_tiles: int,
        values: array[int],
        fallback: LeaveValues,
        info: Mapping[str, object] | None = None,
    ) -> None:
        if len(alphabet) != len(caps) or len(set(alphabet)) != len(alphabet):
            raise LeaveTableError("alphabet and caps do not match")
        self.alphabet = alphabet
        self.caps = tuple(caps)
        self.max_tiles = max_tiles
        n = _counts_table(self.caps, max_tiles)
        if len(values) != n[0][max_tiles]:
            raise LeaveTableError(f"{len(values)} values for {n[0][max_tiles]} leaves")
        self.values = values
        self.fallback = fallback
        self.info = dict(info or {})
        self._pos = {t: i for i, t in enumerate(alphabet)}
        # _steps[i][r][c]: what count c of tile i adds to the index with r tiles to go.
        self._steps = [
            [
                [sum(n[i + 1][r - v] for v in range(c)) for c in range(min(self.caps[i], r) + 1)]
                for r in range(max_tiles + 1)
            ]
            for i in range(len(alphabet))
        ]
        self._cache: dict[str, float] = {"": 0.0}

    @classmethod
    def size_for(cls, caps: Sequence[int], max_tiles: int) -> int:
        """How many leaves (with the empty one) a table over ``caps`` holds."""
        return _counts_table(caps, max_tiles)[0][max_tiles]

    def index(self, leave: str) -> int | None:
        """The leave's place in the table, or ``None`` when the table cannot hold it."""
        if len(leave) > self.max_tiles:
            return None
        counts = [0] * len(self.alphabet)
        pos = self._pos
        for t in leave:
            i = pos.get(t)
            if i is None:
                return None
            counts[i] += 1
        idx = 0
        r = self.max_tiles
        steps = self._steps
        for i, c in enumerate(counts):
            if c:
                row = steps[i][r]
                if c >= len(row):
                    return None
                idx += row[c]
                r -= c
        return idx

    def value(self, leave: str) -> float:
        hit = self._cache.get(leave)
        if hit is None:
            idx = self.index(leave)
            hit = self.fallback.value(leave) if idx is None else self.values[idx] / SCALE
            if len(self._cache) > _MAX_CACHE:
                self._cache.clear()
            self._cache[leave] = hit
        return hit

    def get(self, leave: str, default: float = 0.0, /) -> float:
        return self.value(leave)

    # --- the file ---

    def to_bytes(self) -> bytes:
        """The file: magic, a JSON header (info, alphabet, caps, fallback), int16 values; xz."""
        header = json.dumps(
            {
                "info": self.info,
                "alphabet": self.alphabet,
                "caps": list(self.caps),
                "max_tiles": self.max_tiles,
                "scale": SCALE,
                "fallback": dict(sorted(self.fallback.weights.items())),
            },
            sort_keys=True,
        ).encode()
        values = array("h", self.values)
        if sys.byteorder != "little":
            values.byteswap()
        raw = MAGIC + struct.pack("<I", len(header)) + header + values.tobytes()
        return lzma.compress(raw, preset=9)

    @classmethod
    def from_bytes(cls, data: bytes, *, max_size: int = MAX_TABLE_BYTES) -> SuperLeaves:
        """Decode a file written by :meth:`to_bytes`; at most ``max_size`` bytes decompressed."""
        try:
            decompressor = lzma.LZMADecompressor()
            raw = decompressor.decompress(data, max_length=max_size + 1)
        except lzma.LZMAError as exc:
            raise LeaveTableError(f"not an xz stream: {exc}") from None
        if len(raw) > max_size or not decompressor.eof:
            raise LeaveTableError(f"table over {max_size} bytes or truncated")
        if not raw.startswith(MAGIC) or len(raw) < len(MAGIC) + 4:
            raise LeaveTableError("not a meeple leave table")
        at = len(MAGIC)
        (header_len,) = struct.unpack_from("<I", raw, at)
        at += 4
        if header_len > MAX_HEADER_BYTES or at + header_len > len(raw):
            raise LeaveTableError("header too long")
        try:
            header = json.loads(raw[at : at + header_len])
            alphabet = header["alphabet"]
            caps = header["caps"]
            max_tiles = header["max_tiles"]
            scale = header["scale"]
            fallback = header["fallback"]
            info = header["info"]
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise LeaveTableError(f"bad header: {exc}") from None
        if not (
            isinstance(alphabet, str)
            and 0 < len(alphabet) <= 64
            and isinstance(caps, list)
            and all(isinstance(c, int) and 0 < c <= 16 for c in caps)
            and isinstance(max_tiles, int)
            and 0 <= max_tiles <= 7
            and scale == SCALE
            and isinstance(fallback, dict)
            and all(isinstance(k, str) and isinstance(v, (int, float)) for k, v in fallback.items())
            and isinstance(info, dict)
        ):
            raise LeaveTableError("bad header fields")
        body = raw[at + header_len :]
        if len(body) % 2:
            raise LeaveTableError("odd value bytes")
        values = array("h")
        values.frombytes(body)
        if sys.byteorder != "little":
            values.byteswap()
        return cls(alphabet, caps, max_tiles, values, LeaveValues(fallback), info)

    @classmethod
    def from_values(
        cls,
        tile_set: TileSet,
        value: Callable[[str], float],
        fallback: LeaveValues,
        info: Mapping[str, object] | None = None,
        *,
        max_tiles: int = 6,
    ) -> SuperLeaves:
        """A table over ``tile_set``'s tiles with ``value(leave)`` for every leave."""
        alphabet = sort_tiles(tile_set.counts)
        caps = [min(tile_set.counts[t], max_tiles) for t in alphabet]
        values = array(
            "h", (_clip(value(leave)) for leave in all_leaves(alphabet, caps, max_tiles))
        )
        return cls(alphabet, caps, max_tiles, values, fallback, info)


def _clip(v: float) -> int:
    return max(-32768, min(32767, round(v * SCALE)))


def sort_tiles(tiles: Iterable[str]) -> str:
    """Distinct tiles in leave order: letters A–Z, then ``?``."""
    return "".join(sorted(set(tiles), key=lambda c: (c == "?", c)))


def all_leaves(alphabet: str, caps: Sequence[int], max_tiles: int) -> Iterator[str]:
    """Every leave of up to ``max_tiles`` tiles, in :class:`SuperLeaves` index order."""

    def walk(i: int, r: int, prefix: str) -> Iterator[str]:
        if i == len(alphabet):
            yield prefix
            return
        for c in range(min(caps[i], r) + 1):
            yield from walk(i + 1, r - c, prefix + alphabet[i] * c)

    yield from walk(0, max_tiles, "")


def zero_leaves() -> LeaveValues:
    """Every leave worth 0: equity is the score (a greedy player)."""
    return LeaveValues({})


@functools.cache
def default_leaves() -> LeaveValues:
    """The values derived by ``scripts/derive_leaves.py`` (``data/leaves.json``)."""
    text = resources.files("meeple.ai").joinpath("data", "leaves.json").read_text("utf-8")
    return LeaveValues.from_json(text)


_tables: dict[str, LeaveModel] = {}
_TABLE_NAME = re.compile(r"[a-z0-9_-]{1,40}")


def leaves_for(lexicon: str) -> LeaveModel:
    """The leave values to play ``lexicon`` with: its self-play table if one ships
    (``data/superleaves-<lexicon>.xz``, see ``scripts/fit_superleaves.py``), else
    :func:`default_leaves`."""
    hit = _tables.get(lexicon)
    if hit is None:
        hit = default_leaves()
        if _TABLE_NAME.fullmatch(lexicon):  # a registered name, not a word-list path
            path = resources.files("meeple.ai").joinpath("data", f"superleaves-{lexicon}.xz")
            if path.is_file():
                hit = SuperLeaves.from_bytes(path.read_bytes())
        _tables[lexicon] = hit
    return hit

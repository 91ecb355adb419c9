"""Leave values: the self-play table's numbering, file format, limits and loading."""

from __future__ import annotations

import lzma
from array import array
from itertools import islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.leaves import (
    MAGIC,
    LeaveTableError,
    LeaveValues,
    SuperLeaves,
    all_leaves,
    default_leaves,
    leaves_for,
)
from meeple.ai.scrabble import StrongPlayer
from meeple.games.scrabble.engine import sort_leave
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH

FALLBACK = LeaveValues({"tile:?": 25.0, "tile:Q": -7.0})


def _small() -> SuperLeaves:
    alphabet, caps = "ABE?", [2, 1, 3, 2]
    leaves = list(all_leaves(alphabet, caps, 4))
    values = array("h", range(len(leaves)))
    return SuperLeaves(alphabet, caps, 4, values, FALLBACK, {"games": 3})


def test_every_leave_has_its_own_index_in_enumeration_order() -> None:
    """index() numbers the leaves exactly as all_leaves() lists them: no gaps, no clashes."""
    table = _small()
    leaves = list(all_leaves("ABE?", [2, 1, 3, 2], 4))
    assert len(leaves) == SuperLeaves.size_for([2, 1, 3, 2], 4) == len(set(leaves))
    assert [table.index(leave) for leave in leaves] == list(range(len(leaves)))
    assert table.value("") == 0.0
    assert table.value(leaves[7]) == 7 / 100


def test_leaves_the_table_cannot_hold_get_the_fallback() -> None:
    """Too long, an unknown letter or more copies than the set: the feature model answers."""
    table = _small()
    assert table.index("AAAB?") is None  # 5 tiles
    assert table.index("BB") is None  # one B in the set
    assert table.index("Q") is None
    assert table.value("Q") == -7.0


def test_the_english_table_has_914625_leaves() -> None:
    """Every leave of up to six tiles of the English set, the empty one first."""
    caps = [min(ENGLISH.counts[t], 6) for t in "ABCDEFGHIJKLMNOPQRSTUVWXYZ?"]
    assert SuperLeaves.size_for(caps, 6) == 914_625
    first = list(islice(all_leaves("ABCDEFGHIJKLMNOPQRSTUVWXYZ?", caps, 6), 3))
    assert first == ["", "?", "??"]


# Slow: building the 914,625-leaf English table from a Python function is 7-8 s of CPU,
# the second largest of make test-fast's set (issue 33.5); make test runs it.
@pytest.mark.slow
@settings(max_examples=200)
@given(st.lists(st.sampled_from(sorted(ENGLISH.counts)), min_size=0, max_size=6))
def test_english_leaves_round_trip_through_the_file(tiles: list[str]) -> None:
    """A table written and read back values a random leave the same, from its index."""
    table = _english()
    leave = sort_leave("".join(tiles))
    again = _english_again()
    if any(tiles.count(t) > ENGLISH.counts[t] for t in tiles):
        assert table.index(leave) is None
        return
    idx = table.index(leave)
    assert idx is not None
    assert 0 <= idx < len(table.values)
    assert again.value(leave) == table.value(leave) == _english_value(leave)


def _english_value(leave: str) -> float:
    return round(len(leave) * 1.5 - leave.count("Q") * 3, 2)


_cache: dict[str, SuperLeaves] = {}


def _english() -> SuperLeaves:
    if "t" not in _cache:
        _cache["t"] = SuperLeaves.from_values(ENGLISH, _english_value, FALLBACK, {"seed": 1})
    return _cache["t"]


def _english_again() -> SuperLeaves:
    if "again" not in _cache:
        _cache["again"] = SuperLeaves.from_bytes(_english().to_bytes())
    assert _cache["again"].info == {"seed": 1}
    return _cache["again"]


@settings(max_examples=200)
@given(st.binary(max_size=2000))
def test_hostile_bytes_raise_only_the_table_error(data: bytes) -> None:
    """Random bytes, raw or as an xz stream, fail with LeaveTableError and nothing else."""
    for blob in (data, lzma.compress(data), lzma.compress(MAGIC + data)):
        with pytest.raises(LeaveTableError):
            SuperLeaves.from_bytes(blob)


def test_a_deeply_nested_header_is_a_table_error() -> None:
    """A header of nested JSON arrays (json's recursion limit) fails as a table error."""
    header = b"[" * 20_000 + b"]" * 20_000
    blob = lzma.compress(MAGIC + len(header).to_bytes(4, "little") + header)
    with pytest.raises(LeaveTableError):
        SuperLeaves.from_bytes(blob)


def test_a_table_over_the_size_limit_is_refused() -> None:
    """Decompression stops at max_size: an xz bomb costs no memory."""
    bomb = lzma.compress(MAGIC + bytes(10_000_000))
    with pytest.raises(LeaveTableError, match="over"):
        SuperLeaves.from_bytes(bomb)
    good = _small().to_bytes()
    assert SuperLeaves.from_bytes(good).values == _small().values
    with pytest.raises(LeaveTableError):
        SuperLeaves.from_bytes(good, max_size=100)
    with pytest.raises(LeaveTableError):
        SuperLeaves.from_bytes(good[:-10])  # truncated


def test_the_shipped_wordnik_table_loads_with_its_provenance() -> None:
    """leaves_for('wordnik') is the self-play table, with the command, seed and games."""
    table = leaves_for("wordnik")
    assert isinstance(table, SuperLeaves)
    assert len(table.values) == 914_625
    info = table.info
    assert info["script"] == "scripts/fit_superleaves.py"
    assert str(info["command"]).startswith("python scripts/fit_superleaves.py")
    for key in ("seed", "date", "games_per_iteration", "iterations", "history"):
        assert key in info
    assert table.value("?") > table.value("S") > table.value("Q")
    assert table.value("") == 0.0


def test_the_strong_player_plays_each_lexicon_with_its_table() -> None:
    """A lexicon with a shipped table gets it; others, and word-list paths, the feature model."""
    wordnik = StrongPlayer(Lexicon.from_words(["AA"], name="wordnik"))
    assert isinstance(wordnik.leaves, SuperLeaves)
    other = StrongPlayer(Lexicon.from_words(["AA"], name="gcide"))
    assert other.leaves is default_leaves()
    assert leaves_for("../data/superleaves-wordnik") is default_leaves()

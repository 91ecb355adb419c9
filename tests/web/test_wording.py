"""One wording for stored codes (issue 24): the templates and the scripts read one table."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.web import wording
from meeple.web.wording import END_REASONS, LEXICON_NAMES, lexicon_label, reason_text

JS = Path(__file__).resolve().parents[2] / "src/meeple/web/static/js/wording.js"


def test_scripts_read_the_table_the_templates_read() -> None:
    """wording.js imports wording.json, the file wording.py loads, and keeps no table of
    its own (issue 32: one table, not two copies a test compares)."""
    text = JS.read_text()
    assert re.search(r'import \w+ from "\./wording\.json" with \{ type: "json" \};', text)
    assert "went out" not in text
    assert wording.TABLE.parent == JS.parent
    table = json.loads(wording.TABLE.read_text())
    assert table == {"end_reasons": END_REASONS, "lexicon_names": LEXICON_NAMES}


_STRINGS = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


@given(
    st.one_of(
        _JSON,
        st.fixed_dictionaries({"end_reasons": _JSON, "lexicon_names": _STRINGS}),
        st.fixed_dictionaries({"end_reasons": _STRINGS, "lexicon_names": _JSON}),
    )
)
def test_a_table_not_two_maps_of_strings_is_refused(table: object) -> None:
    """The loader takes two maps of strings and refuses anything else with ValueError."""
    maps = [table.get("end_reasons"), table.get("lexicon_names")] if isinstance(table, dict) else []
    ok = len(maps) == 2 and all(
        isinstance(m, dict) and all(isinstance(v, str) for v in m.values()) for m in maps
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wording.json"
        path.write_text(json.dumps(table))
        if ok:
            assert wording._load(path) == tuple(maps)
        else:
            with pytest.raises(ValueError, match="not a map of strings"):
                wording._load(path)


def test_an_oversized_table_is_refused(tmp_path: Path) -> None:
    """The loader reads at most its limit: a larger file is refused, not read whole."""
    path = tmp_path / "wording.json"
    path.write_text(json.dumps({"end_reasons": {"x": "y" * 70_000}, "lexicon_names": {}}))
    with pytest.raises(ValueError, match="over"):
        wording._load(path)


def test_every_spelling_of_an_end_reads_the_same() -> None:
    """went-out, all_tiles_used and ALL_TILES_USED all read "went out"."""
    for code in ("went-out", "all_tiles_used", "ALL_TILES_USED", "Went Out"):
        assert reason_text(code) == "went out"
    assert reason_text("scoreless-turns") == "six scoreless turns"
    assert lexicon_label("enable") == "ENABLE"
    assert lexicon_label("words.txt") == "words.txt"


@given(st.text(max_size=40))
def test_any_reason_reads_without_codes(reason: str) -> None:
    """Whatever a record holds, the words shown have no underscores."""
    assert "_" not in reason_text(reason)

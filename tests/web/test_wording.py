"""One wording for stored codes (issue 24): the templates' table and the scripts' agree."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from meeple.web.wording import END_REASONS, LEXICON_NAMES, lexicon_label, reason_text

JS = Path(__file__).resolve().parents[2] / "src/meeple/web/static/js/wording.js"


def _js_object(name: str) -> dict[str, str]:
    text = JS.read_text()
    body = re.search(rf"export const {name} = \{{(.*?)\}};", text, re.S)
    assert body is not None
    pairs = re.findall(r'(?:"([^"]+)"|(\w+)):\s*"([^"]*)"', body.group(1))
    return {quoted or bare: value for quoted, bare, value in pairs}


def test_scripts_and_templates_use_the_same_words() -> None:
    """wording.js holds the same end reasons and lexicon names as wording.py."""
    assert _js_object("END_REASONS") == END_REASONS
    assert _js_object("LEXICON_NAMES") == LEXICON_NAMES


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

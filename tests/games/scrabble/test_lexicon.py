"""Lexicons: word-list parsing, the compiled GADDAG, and the on-disk cache."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.gaddag import SEP, Gaddag, build_gaddag
from meeple.games.scrabble.lexicon import (
    LEXICONS,
    Lexicon,
    LexiconError,
    default_cache_dir,
    load_lexicon,
    normalize_words,
    parse_word_list,
)

WORD_LIST = """\
# a comment line
  cat
DOG   # trailing comment
Eel

it's
sea-lion
naïve
a
ABCDEFGHIJKLMNOP
abcdefghijklmno
bird\r
"""


def _cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.gaddag"))


def test_parse_word_list_tolerates_case_comments_blanks_and_whitespace() -> None:
    """Comments, blank lines, case and spaces are ignored; non A–Z and bad lengths skipped."""
    assert parse_word_list(WORD_LIST) == ["ABCDEFGHIJKLMNO", "BIRD", "CAT", "DOG", "EEL"]


def test_normalize_does_not_glue_multi_word_entries() -> None:
    """ "aaron's rod" is dropped, not turned into AARONSROD."""
    assert normalize_words(["aaron's rod", "Aaron", "x-ray", "Zoo "]) == ["AARON", "ZOO"]


def test_contains_and_len() -> None:
    """`in` and len() see the normalised words only."""
    lex = Lexicon.from_words(["cat", "Dog", "a", "b-c"], name="t")
    assert "CAT" in lex
    assert "DOG" in lex
    assert "cat" not in lex  # callers pass upper case
    assert "A" not in lex
    assert len(lex) == 2
    assert list(lex) == ["CAT", "DOG"]
    assert lex.name == "t"


@settings(max_examples=50, deadline=None)
@given(st.sets(st.text("ABCDE", min_size=2, max_size=6), max_size=30))
def test_gaddag_holds_every_split_of_every_word_and_nothing_else(words: set[str]) -> None:
    """For each word, each reverse(prefix) SEP suffix path ends on a final node."""
    g = build_gaddag(words)
    for w in words:
        assert g.contains_word(w)
        for i in range(1, len(w)):
            path = [ord(c) - 65 for c in reversed(w[:i])] + [SEP] + [ord(c) - 65 for c in w[i:]]
            assert g.is_final(g.walk(g.root, path))
    for probe in ("AB", "BA", "ABC", "CAB", "EDCBA"):
        assert g.contains_word(probe) == (probe in words)


def test_gaddag_bytes_round_trip() -> None:
    """to_bytes/from_bytes restores the same arrays."""
    g = build_gaddag(["CAT", "CATS", "AT", "TA"])
    h = Gaddag.from_bytes(g.to_bytes(b"payload"))
    assert (list(h.flat), h.root, h.node_count) == (list(g.flat), g.root, g.node_count)
    assert bytes(h.payload) == b"payload"
    assert h.nodes == list(g.flat)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:-1], id="one-byte-short"),
        pytest.param(lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], id="bit-flip"),
        pytest.param(lambda b: b"", id="empty"),
        pytest.param(lambda b: b"garbage" * 10, id="garbage"),
        pytest.param(lambda b: b + b"x", id="trailing"),
    ],
)
def test_gaddag_from_bytes_refuses_damage(damage: object) -> None:
    """Corrupt, truncated or padded data is a ValueError, never a wrong automaton."""
    data = build_gaddag(["CAT", "DOG"]).to_bytes()
    with pytest.raises(ValueError, match="GADDAG"):
        Gaddag.from_bytes(damage(data))  # type: ignore[operator]


def test_load_from_file_writes_then_reuses_cache(tmp_path: Path) -> None:
    """The first load compiles and writes one cache file; the second reads it back."""
    source = tmp_path / "words.txt"
    source.write_text(WORD_LIST, encoding="utf-8")
    cache = tmp_path / "cache"
    first = load_lexicon(source, cache_dir=cache)
    files = _cache_files(cache)
    assert len(files) == 1
    assert files[0].name.startswith("words.txt-")
    stamp = files[0].stat().st_mtime_ns
    second = load_lexicon(str(source), cache_dir=cache)
    assert _cache_files(cache) == files
    assert files[0].stat().st_mtime_ns == stamp
    assert second.words == first.words
    assert list(second.gaddag.flat) == list(first.gaddag.flat)
    assert second.name == "words.txt"


def test_changed_word_list_gets_a_new_cache_file(tmp_path: Path) -> None:
    """The cache is keyed by content: a different list compiles again."""
    source = tmp_path / "words.txt"
    cache = tmp_path / "cache"
    source.write_text("cat\ndog\n", encoding="utf-8")
    load_lexicon(source, cache_dir=cache)
    source.write_text("cat\ndog\neel\n", encoding="utf-8")
    lex = load_lexicon(source, cache_dir=cache)
    assert "EEL" in lex
    assert len(_cache_files(cache)) == 2


def test_corrupt_cache_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A truncated cache file is detected, rebuilt and rewritten whole."""
    source = tmp_path / "words.txt"
    source.write_text("cat\ndog\ncats\n", encoding="utf-8")
    cache = tmp_path / "cache"
    good = load_lexicon(source, cache_dir=cache)
    (path,) = _cache_files(cache)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 7])
    with caplog.at_level("WARNING"):
        again = load_lexicon(source, cache_dir=cache)
    assert "rebuilding" in caplog.text
    assert list(again.gaddag.flat) == list(good.gaddag.flat)
    assert path.read_bytes() == whole


def test_unwritable_cache_dir_still_loads(tmp_path: Path) -> None:
    """A cache path that cannot be a directory costs only the compile."""
    source = tmp_path / "words.txt"
    source.write_text("cat\n", encoding="utf-8")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    lex = load_lexicon(source, cache_dir=blocker / "sub")
    assert "CAT" in lex


def test_no_cache(tmp_path: Path) -> None:
    """use_cache=False compiles and writes nothing."""
    source = tmp_path / "words.txt"
    source.write_text("cat\n", encoding="utf-8")
    lex = load_lexicon(source, cache_dir=tmp_path / "cache", use_cache=False)
    assert "CAT" in lex
    assert not (tmp_path / "cache").exists()


def test_unknown_lexicon_is_a_lexicon_error(tmp_path: Path) -> None:
    """Neither a registered name nor a file: LexiconError naming the known lexicons."""
    with pytest.raises(LexiconError, match="gcide"):
        load_lexicon(tmp_path / "missing.txt", cache_dir=tmp_path)


def test_default_cache_dir_from_environment() -> None:
    """MEEPLE_CACHE_DIR wins; otherwise ~/.cache/meeple."""
    assert default_cache_dir({"MEEPLE_CACHE_DIR": "/x/y"}) == Path("/x/y")
    assert default_cache_dir({}) == Path.home() / ".cache" / "meeple"


def test_registry_names_gcide() -> None:
    """The default lexicon is registered by name."""
    assert "gcide" in LEXICONS


def test_gcide_source_is_filtered() -> None:
    """GCIDE: about 100,000 A–Z words of 2–15 letters, upper case, none glued together."""
    words = normalize_words(LEXICONS["gcide"]())
    assert 90_000 < len(words) < 115_000
    assert "AARDVARK" in words
    assert "AARONSROD" not in words
    assert all(w.isascii() and w.isalpha() and w.isupper() and 2 <= len(w) <= 15 for w in words)


def test_cached_load_parses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache key hashes the file's bytes: a cached load never re-parses the word list."""
    import meeple.games.scrabble.lexicon as lexicon_module

    source = tmp_path / "words.txt"
    source.write_text("cat\ndog\ncats\n", encoding="utf-8")
    cache = tmp_path / "cache"
    first = load_lexicon(source, cache_dir=cache)

    def no_parse(text: str) -> list[str]:
        raise AssertionError("re-parsed the word list")

    monkeypatch.setattr(lexicon_module, "parse_word_list", no_parse)
    again = load_lexicon(source, cache_dir=cache)
    assert again.words == first.words == {"CAT", "CATS", "DOG"}
    assert "CATS" in again
    assert again.gaddag.contains_word("CATS")
    assert not again.gaddag.contains_word("ACT")


def test_oversized_word_list_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file above the size limit is a LexiconError, not a memory blow-up."""
    import meeple.games.scrabble.lexicon as lexicon_module

    monkeypatch.setattr(lexicon_module, "MAX_SOURCE_BYTES", 10)
    source = tmp_path / "words.txt"
    source.write_text("cat\ndog\ncats\nmore\n", encoding="utf-8")
    with pytest.raises(LexiconError, match="larger than"):
        load_lexicon(source, cache_dir=tmp_path / "cache")


def test_enable_ships_and_is_a_scrabble_list() -> None:
    """ENABLE ships in the package (public domain, checked by its digest): XU, GOO, QAT
    and CWM are words; GCIDE's XVIII, RYSH and AFROPAVO are not (issue 24). ENABLE
    predates QI and ZA, so it is no longer the default (issue 34: Wordnik is)."""
    import hashlib
    import lzma

    from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, ENABLE_SHA256, _enable_file

    assert DEFAULT_LEXICON == "wordnik"
    raw = lzma.decompress(_enable_file().read_bytes())
    assert hashlib.sha256(raw).hexdigest() == ENABLE_SHA256
    words = set(normalize_words(LEXICONS["enable"]()))
    assert len(words) > 160_000
    assert {"XU", "GOO", "QAT", "CWM", "AA", "ZYZZYVAS"} <= words
    assert not {"XVIII", "RYSH", "AFROPAVO", "QI", "ZA"} & words


def test_wordnik_ships_with_its_licence_and_has_the_two_letter_words() -> None:
    """The Wordnik list ships in the package with its MIT licence beside it, checked by
    its digest, and has what ENABLE lacks and players use every game: QI, ZA, KI, XU
    and JO; it keeps ENABLE's words but for a few (issue 34)."""
    import hashlib
    import lzma

    from meeple.games.scrabble.lexicon import WORDNIK_SHA256, _wordnik_file

    raw = lzma.decompress(_wordnik_file().read_bytes())
    assert hashlib.sha256(raw).hexdigest() == WORDNIK_SHA256
    licence = _wordnik_file().with_name("wordnik-LICENSE.txt").read_text(encoding="ascii")
    assert licence.startswith("MIT License")
    assert "Wordnik" in licence
    words = set(normalize_words(LEXICONS["wordnik"]()))
    assert len(words) > 190_000
    assert {"QI", "ZA", "KI", "XU", "JO", "OI", "QAT", "ZAX", "QIS", "ZAS"} <= words
    assert max(map(len, words)) <= 15  # a longer entry could never be played
    enable = set(normalize_words(LEXICONS["enable"]()))
    assert len(enable - words) < 200


def test_loads_at_once_compile_a_word_list_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two loaders that miss the cache together (a cluster's nodes starting on a fresh
    machine): the second waits for the first's compile and maps its file, instead of
    compiling the same list again (the compile lock is an advisory lock on a file, so
    it holds between threads as between processes)."""
    from meeple.games.scrabble import lexicon as module

    source = tmp_path / "words.txt"
    source.write_text(WORD_LIST, encoding="utf-8")
    cache = tmp_path / "cache"
    compiling, go_on = threading.Event(), threading.Event()
    compiled: list[int] = []
    real_build, real_load = module.build_gaddag, module._load_cached

    def build(*args: Any, **kwargs: Any) -> Gaddag:
        compiled.append(1)
        if len(compiled) == 1:  # the first compile lasts until the second loader looked
            compiling.set()
            assert go_on.wait(10)
        return real_build(*args, **kwargs)

    second_looked = threading.Event()

    def load_cached(path: Path) -> Gaddag | None:
        if threading.current_thread().name == "second":
            second_looked.set()
        return real_load(path)

    monkeypatch.setattr(module, "build_gaddag", build)
    monkeypatch.setattr(module, "_load_cached", load_cached)
    results: dict[str, Lexicon] = {}

    def load(who: str) -> None:
        results[who] = load_lexicon(source, cache_dir=cache)

    first = threading.Thread(target=load, args=("first",), name="first")
    second = threading.Thread(target=load, args=("second",), name="second")
    first.start()
    assert compiling.wait(10)
    second.start()
    assert second_looked.wait(10)
    go_on.set()
    first.join(10)
    second.join(10)
    assert not first.is_alive()
    assert not second.is_alive()
    assert len(compiled) == 1
    assert results["second"].words == results["first"].words

"""`meeple scrabble moves` lists the plays of a CGP position, best first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.cli.main import main
from meeple.games.scrabble.lexicon import Lexicon

EMPTY = "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 {rack}/ 0/0 0"
WITH_AT = "15/15/15/15/15/15/15/6AT7/15/15/15/15/15/15/15 {rack}/ 0/0 0"


@pytest.fixture
def words(tmp_path: Path) -> list[str]:
    """A word-list file and a private cache directory, as command-line arguments."""
    path = tmp_path / "words.txt"
    path.write_text("cat\nat\nta\nact\n", encoding="utf-8")
    return ["--lexicon", str(path), "--cache-dir", str(tmp_path / "cache")]


def _moves(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(["scrabble", "moves", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_lists_plays_best_first(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Every play as '<position> <word> <score>', score descending, then a fixed order."""
    code, lines, _ = _moves(["--cgp", EMPTY.format(rack="CAT"), *words], capsys)
    assert code == 0
    assert lines == [
        "8F ACT 10",
        "8F CAT 10",
        "8G ACT 10",
        "8G CAT 10",
        "8H ACT 10",
        "8H CAT 10",
        "8G AT 4",
        "8G TA 4",
        "8H AT 4",
        "8H TA 4",
    ]


def test_down_plays_use_column_first(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A down play is written column first, like GCG: H8 TA."""
    code, lines, _ = _moves(["--cgp", WITH_AT.format(rack="A"), *words], capsys)
    assert code == 0
    assert "H8 TA 2" in lines
    assert "H7 AT 2" in lines


def test_count_and_top(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--count prints only the number; --top N only the N best."""
    assert _moves(["--cgp", EMPTY.format(rack="CAT"), "--count", *words], capsys)[1] == ["10"]
    _code, lines, _ = _moves(["--cgp", EMPTY.format(rack="CAT"), "--top", "2", *words], capsys)
    assert lines == ["8F ACT 10", "8F CAT 10"]


def test_rack_overrides_cgp(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--rack replaces the CGP's rack; a blank shows as a lower-case letter."""
    code, lines, _ = _moves(["--cgp", WITH_AT.format(rack="Q"), "--rack", "?", *words], capsys)
    assert code == 0
    assert "8F cAT 2" in lines


def test_gcide_counts_aeinrst(gcide: Lexicon, capsys: pytest.CaptureFixture[str]) -> None:
    """On GCIDE, AEINRST on an empty board has 864 plays (wolges: 1,487 on the
    tournament list CSW)."""
    cgp = EMPTY.format(rack="AEINRST")
    code, lines, _ = _moves(["--cgp", cgp, "--lexicon", "gcide", "--count"], capsys)
    assert (code, lines) == (0, ["864"])


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--cgp", "15/15 AB/ 0/0 0"], "bad CGP"),
        (["--cgp", EMPTY.format(rack="AB")[:-2]], "bad CGP"),
        (["--cgp", EMPTY.format(rack="AB"), "--rack", "AB1"], "bad rack"),
        (["--cgp", EMPTY.format(rack="AB"), "--rack", "ABCDEFGH"], "bad rack"),
        (["--cgp", EMPTY.format(rack="AB"), "--top", "-1"], "--top"),
    ],
)
def test_bad_input_is_exit_2_without_traceback(
    words: list[str], args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad CGP, rack or options: a one-line error on stderr and exit code 2."""
    code, lines, err = _moves([*args, *words], capsys)
    assert code == 2
    assert lines == []
    assert complaint in err
    assert "Traceback" not in err


def test_unknown_lexicon_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A lexicon that is neither a name nor a file: exit 2 and a message naming it."""
    missing = str(tmp_path / "nope.txt")
    code, _lines, err = _moves(["--cgp", EMPTY.format(rack="AB"), "--lexicon", missing], capsys)
    assert code == 2
    assert "nope.txt" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_cgp_file_counts_and_tops(
    words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """--cgp-file: one result per position, then the 'generated P plays for N positions' line."""
    cgps = tmp_path / "positions.cgp"
    cgps.write_text(
        f"# two positions\n{EMPTY.format(rack='CAT')}\n\n{WITH_AT.format(rack='A')}\n",
        encoding="utf-8",
    )
    args = ["--cgp-file", str(cgps), "--engine", engine, *words]
    code, lines, _ = _moves([*args, "--count"], capsys)
    assert code == 0
    assert lines[:2] == ["1: 10 plays", "2: 2 plays"]
    assert lines[-1].startswith("generated 12 plays for 2 positions in ")
    assert lines[-1].endswith(" ms")
    code, lines, _ = _moves([*args, "--top", "1"], capsys)
    assert code == 0
    assert lines[:2] == ["1: 1 plays", "  8F ACT 10"]
    assert lines[-1].startswith("generated 2 plays for 2 positions in ")


def test_cgp_file_errors_name_the_line(
    words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad line is refused with its number; --cgp-file without --count/--top is refused."""
    cgps = tmp_path / "positions.cgp"
    cgps.write_text(f"{EMPTY.format(rack='CAT')}\nnot a position\n", encoding="utf-8")
    code, _, err = _moves(["--cgp-file", str(cgps), "--count", *words], capsys)
    assert code == 2
    assert "line 2" in err
    code, _, err = _moves(["--cgp-file", str(cgps), *words], capsys)
    assert code == 2
    assert "--count or --top" in err
    code, _, err = _moves(["--cgp-file", str(tmp_path / "missing"), "--count", *words], capsys)
    assert code == 2


def test_engines_print_the_same_plays(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--engine python and the default engine list the same plays in the same order."""
    cgp = WITH_AT.format(rack="CAT?")
    _, python, _ = _moves(["--cgp", cgp, "--engine", "python", *words], capsys)
    _, default, _ = _moves(["--cgp", cgp, *words], capsys)
    assert python == default
    assert len(python) > 10


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000))
def test_cgp_file_reader_survives_any_bytes(data: bytes) -> None:
    """Whatever the file holds, the reader returns positions or raises NotationError."""
    import tempfile

    from meeple.cli.scrabble import _read_cgp_file
    from meeple.games.scrabble.errors import NotationError

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.cgp"
        path.write_bytes(data + b"\n" + EMPTY.format(rack="CAT").encode())
        try:
            positions = _read_cgp_file(path)
        except NotationError:
            return
        assert positions
        assert positions[-1].rack == "CAT"


def test_match_prints_the_summary_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`meeple scrabble match` plays N games and ends with the issue's one-line summary."""
    monkeypatch.setenv("MEEPLE_CACHE_DIR", str(tmp_path / "cache"))
    words = tmp_path / "words.txt"
    words.write_text("\n".join(["AT", "TA", "CAT", "ACT", "TEA", "EAT", "ATE", "AE", "EA"]))
    args = ["scrabble", "match", "strong", "greedy", "--games", "2", "--seed", "3"]
    code = main([*args, "--lexicon", str(words), "--think-time", "0.01"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert re.fullmatch(
        r"strong v greedy: \d+-\d+-\d+, win rate \d+\.\d % \(95 % CI \d+\.\d–\d+\.\d\), "
        r"mean spread [+-]\d+\.\d, \d+\.\d\d s per move",
        out[-1],
    )


def test_match_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    """No games, a negative think time, or an unknown level: usage errors."""
    assert main(["scrabble", "match", "strong", "greedy", "--games", "0"]) == 2
    assert main(["scrabble", "match", "strong", "greedy", "--think-time", "-1"]) == 2
    with pytest.raises(SystemExit):
        main(["scrabble", "match", "strong", "genius"])


def test_bot_settings_last_only_while_the_bot_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """`meeple bot scrabble --level strong` installs its settings and restores them after."""
    from meeple.ai.scrabble import bot_settings

    before = bot_settings()
    args = ["bot", "scrabble", "--port", "1", "--name", "x", "--level", "strong"]
    assert main(args) == 1  # nobody listens on port 1
    assert bot_settings() is before
    assert main([*args, "--think-time", "-3"]) == 2
    assert "think-time" in capsys.readouterr().err

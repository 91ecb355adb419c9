"""The organiser's name#secret lines (meeple.server.rooms.cmpn402_names): parsing, limits,
and the check of a NAME against them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.cli.main import main
from meeple.protocols.cmpn402.messages import MAX_NAME_BYTES
from meeple.server.rooms.cmpn402_names import (
    MAX_SECRETS_BYTES,
    AgentSecrets,
    SecretsError,
    new_secret,
)

SECRETS = AgentSecrets.parse("alpha#alpha-s3cret\n\nteam#1#t1-s3cret-x\n")


def test_a_line_is_the_name_then_the_secret_after_the_last_hash() -> None:
    """The name is everything before the last '#' (it may hold one); blank lines are skipped."""
    assert SECRETS.by_name == {"alpha": "alpha-s3cret", "team#1": "t1-s3cret-x"}
    assert SECRETS.check("alpha#alpha-s3cret") == "alpha"
    assert SECRETS.check("team#1#t1-s3cret-x") == "team#1"


@pytest.mark.parametrize(
    "sent",
    ["alpha", "alpha#", "alpha#alpha-s3cre", "alpha#alpha-s3cret ", "alpha#t1-s3cret-x",
     "team#1", "team#t1-s3cret-x", "#alpha-s3cret", "mallory#alpha-s3cret", ""],
)  # fmt: skip
def test_anything_but_a_line_is_refused(sent: str) -> None:
    """No '#', a wrong or another team's secret, an unlisted name: None."""
    assert SECRETS.check(sent) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no name#secret"),
        ("alpha\n", "not name#secret"),
        ("#secret-long\n", "not name#secret"),
        (" alpha#secret-long\n", "not a NAME"),
        ("alpha #secret-long\n", "no spaces"),
        ("alpha#short\n", "shorter than 8"),
        ("alpha#secret-one\nalpha#secret-two\n", "listed twice"),
        ("a" * 60 + "#secret-long\n", "not a NAME"),
        ("alpha#secret\x01long\n", "not a NAME"),
    ],
)
def test_a_bad_file_names_its_line(text: str, why: str) -> None:
    with pytest.raises(SecretsError, match=why):
        AgentSecrets.parse(text, "agents.txt")


def test_load_limits_the_file(tmp_path: Path) -> None:
    """A missing, oversized or non-UTF-8 file is a SecretsError naming it."""
    with pytest.raises(SecretsError, match="cannot read"):
        AgentSecrets.load(tmp_path / "none")
    big = tmp_path / "big"
    big.write_bytes(b"a#" + b"x" * MAX_SECRETS_BYTES)
    with pytest.raises(SecretsError, match="larger than"):
        AgentSecrets.load(big)
    latin = tmp_path / "latin"
    latin.write_bytes(b"caf\xe9#secret-long\n")
    with pytest.raises(SecretsError, match="not UTF-8"):
        AgentSecrets.load(latin)
    good = tmp_path / "good"
    good.write_text(SECRETS.lines(), encoding="utf-8")
    assert AgentSecrets.load(good) == SECRETS


@given(st.text(max_size=300))
def test_any_text_parses_or_is_refused_with_a_reason(text: str) -> None:
    """Random file contents: a SecretsError, or lines that each check to their name."""
    try:
        parsed = AgentSecrets.parse(text)
    except SecretsError as e:
        why = str(e)
        parsed = AgentSecrets()
    else:
        why = "parsed"
    assert why
    for name, secret in parsed.by_name.items():
        assert parsed.check(f"{name}#{secret}") == name
        assert len(f"{name}#{secret}".encode()) <= MAX_NAME_BYTES


@given(st.text(max_size=80))
def test_a_random_name_is_never_taken_for_a_line(sent: str) -> None:
    """Only a whole line of the file checks; anything else is None."""
    lines = {"alpha#alpha-s3cret": "alpha", "team#1#t1-s3cret-x": "team#1"}
    assert SECRETS.check(sent) == lines.get(sent)


def test_generated_secrets_are_long_and_distinct() -> None:
    secrets = {new_secret() for _ in range(100)}
    assert len(secrets) == 100
    assert all(len(s) == 22 and "#" not in s for s in secrets)


def test_the_cli_writes_a_file_the_referee_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`meeple cmpn402 secrets --name …` prints a line per agent; a name twice is refused."""
    assert main(["cmpn402", "secrets", "--name", "alpha", "--name", "team bravo"]) == 0
    path = tmp_path / "agents.secrets"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    loaded = AgentSecrets.load(path)
    assert loaded.names == {"alpha", "team bravo"}
    assert main(["cmpn402", "secrets", "--name", "x", "--name", "x"]) == 2
    assert "twice" in capsys.readouterr().err

"""cli/progress.py: ``--progress K`` reports a match alike for every game."""

from __future__ import annotations

import argparse

import pytest

from meeple.cli.progress import add_progress_argument, progress_every


class _Result:
    def __init__(self, n: int) -> None:
        self.n = n

    def summary(self) -> str:
        return f"A {self.n} - B 0"


@pytest.mark.parametrize("k", [0, 1, 3, 7])
def test_progress_is_said_every_k_games(k: int, capsys: pytest.CaptureFixture[str]) -> None:
    """After game ``d`` a line exactly when ``k`` divides ``d``; never for 0."""
    progress = progress_every(k)
    for done in range(1, 22):
        progress(done, _Result(done))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"{d} games: A {d} - B 0" for d in range(1, 22) if k and d % k == 0]


def test_the_line_names_the_games_and_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_progress_argument(parser)
    assert parser.parse_args([]).progress == 0
    progress = progress_every(parser.parse_args(["--progress", "2"]).progress)
    progress(1, _Result(1))
    progress(2, _Result(2))
    assert capsys.readouterr().err == "2 games: A 2 - B 0\n"

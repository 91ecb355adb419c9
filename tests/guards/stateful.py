"""A stateful machine and a property that count their examples (tests/test_profiles.py):
run by a pytest of their own under each hypothesis profile, never collected by the
suite (the file is not named ``test_*``)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

COUNTS = Path(os.environ["MEEPLE_TEST_COUNTS"])


def _count(what: str) -> None:
    with COUNTS.open("a") as out:
        out.write(what + "\n")


class Counted(RuleBasedStateMachine):
    """One line per example (a machine is made anew for each)."""

    def __init__(self) -> None:
        super().__init__()
        _count("machine")

    @rule(n=st.integers())
    def step(self, n: int) -> None:
        assert isinstance(n, int)


Counted.TestCase.settings = settings(max_examples=40, stateful_step_count=5, database=None)
TestCounted = Counted.TestCase


@settings(max_examples=40, database=None)
@given(st.integers())
def test_counted(n: int) -> None:
    assert isinstance(n, int)
    _count("property")

"""The suite's own helpers for heavy tests and real-time waits (issue 33): a sample in
make test that make test-deep checks whole, and waits bounded by a deadline."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.depth import every_nth, heavy
from tests.patience import eventually

ROOT = Path(__file__).resolve().parents[1]


@given(size=st.integers(1, 3000), count=st.integers(1, 3000))
def test_a_sample_is_spread_over_the_whole_run_and_keeps_its_order(size: int, count: int) -> None:
    """every_nth takes ``count`` items (all when there are no more), first to near-last,
    in order and without repeats: a sample of a seeded game's positions reaches its end."""
    items = list(range(size))
    sample = every_nth(items, count)
    assert len(sample) == min(size, count)
    assert sample == sorted(set(sample))
    assert sample[0] == 0
    assert sample[-1] >= size - 1 - size // count


@pytest.mark.parametrize(("profile", "expected"), [("default", 8), ("fast", 8), ("deep", 20)])
def test_heavy_counts_follow_the_hypothesis_profile(profile: str, expected: int) -> None:
    """HYPOTHESIS_PROFILE=deep (make test-deep) runs the whole set, any other the sample."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile}
    done = subprocess.run(
        [sys.executable, "-c", "from tests.depth import heavy; print(heavy(8, 20))"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert int(done.stdout) == expected
    assert heavy(8, 20) in (8, 20)


async def test_eventually_waits_as_long_as_the_condition_takes() -> None:
    """No fixed count of polls: a condition true only on its 50th look (or an awaitable
    one) is waited for; what eventually returns is that it became true."""
    looks = 0

    def slow() -> bool:
        nonlocal looks
        looks += 1
        return looks >= 50

    await eventually(slow, every=0)
    assert looks == 50

    async def awaited() -> bool:
        await asyncio.sleep(0)
        return True

    await eventually(awaited)


async def test_eventually_fails_naming_what_did_not_happen() -> None:
    """A condition never true fails the test once the limit has passed, with its name."""
    with pytest.raises(AssertionError, match="the seat freed did not happen within"):
        await eventually(lambda: False, "the seat freed", limit=0.05, every=0.01)

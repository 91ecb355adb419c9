"""The hypothesis profiles of tests/conftest.py scale what a test tries (issue 33.3):
``fast`` (make test-fast) a tenth of a property's and a stateful machine's own
``max_examples``, ``default`` (make test) all of them."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _examples(profile: str, tmp_path: Path) -> collections.Counter[str]:
    """How many examples tests/guards/stateful.py's two tests (40 each of their own)
    ran under ``profile``, in a pytest of its own."""
    counts = tmp_path / f"{profile}.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "HYPOTHESIS_PROFILE": profile,
        "MEEPLE_TEST_COUNTS": str(counts),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
         "-q", "tests/guards/stateful.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return collections.Counter(counts.read_text().split())


@pytest.mark.parametrize("profile", ["fast", "default"])
def test_a_profile_scales_properties_and_stateful_machines_alike(
    profile: str, tmp_path: Path
) -> None:
    """Both tests own 40 examples: fast runs 4 of each, default 40. (A machine can be
    made for an example hypothesis then discards, a few more than it counts.)"""
    ran = _examples(profile, tmp_path)
    if profile == "fast":
        assert ran["property"] == 4, ran
        assert 4 <= ran["machine"] <= 8, ran
    else:
        assert ran["property"] == 40, ran
        assert ran["machine"] >= 40, ran

"""The fuzz targets (fuzz/targets.py) replay their seed corpora cleanly: every seed and a
few hundred mutations of them raise nothing but the protocol's own error. This is not
the fuzzer (``make fuzz`` is); it keeps the targets and seeds working."""

from __future__ import annotations

import contextlib
import importlib.util
import random
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "fuzz" / "targets.py"
_SPEC = importlib.util.spec_from_file_location("meeple_fuzz_targets", _PATH)
assert _SPEC is not None
assert _SPEC.loader is not None
targets = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = targets  # dataclasses look their module up by name
_SPEC.loader.exec_module(targets)


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_target_replays_its_seeds(name: str) -> None:
    """Seeds exist for both sides; seeds and random mutations never raise a foreign error."""
    target = targets.TARGETS[name]
    seeds = targets.seeds(target)
    assert len(seeds) >= 20
    assert {s[0] & 1 for s in seeds} == {0, 1}
    rng = random.Random(name)
    inputs = list(seeds)
    for _ in range(300):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            data.insert(rng.randrange(len(data) + 1), rng.randrange(256))
        inputs.append(bytes(data))
    for data in inputs:
        with contextlib.suppress(target.allowed):
            target.one(data)

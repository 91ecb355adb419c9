"""The repository's own scripts (benchmarks/, scripts/, fuzz/) as modules for their tests:
they are files, not packages of meeple."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["ROOT", "load_script"]

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str, name: str | None = None) -> ModuleType:
    """The script at ``relative`` (to the repository's root), run once as module ``name``
    (its file's stem by default) and registered in ``sys.modules`` (dataclasses and
    pickling look a module up there)."""
    path = ROOT / relative
    name = name or path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

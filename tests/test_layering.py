"""The pure layers stay pure: games/ and protocols/ do no I/O, read no clock, use no global RNG."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "meeple"
PURE_LAYERS = ("games", "protocols", "ai", "ratings")
FORBIDDEN = {"asyncio", "socket", "time", "random", "selectors", "threading", "subprocess"}
# `random.Random` as a type for an injected RNG is fine; importing the module to call
# its global functions is not. Type-only imports go under `if TYPE_CHECKING:`.

# The compiled Santorini search's glue (issue 36), each import for one stated use and
# nothing else, checked below: `time` only to tell whether the injected clock *is*
# time.monotonic or perf_counter (then the C core reads CLOCK_MONOTONIC itself, without
# the GIL: the same clock, no other), never to read the time; `threading` only for one
# search at a time per compiled context (a lock, a per-thread context), never to start
# a thread.
ALLOWED: dict[str, dict[str, set[str]]] = {
    "ai/santorini_native.py": {
        "time": {"get_clock_info", "monotonic", "perf_counter"},
        "threading": {"Lock"},
    },
    "ai/santorini_search.py": {"threading": {"local"}},
}


def _pure_modules() -> list[Path]:
    return sorted(p for layer in PURE_LAYERS for p in (SRC / layer).rglob("*.py"))


def _runtime_imports(tree: ast.Module) -> set[str]:
    """Top-level module names imported outside `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit([n for n in inner if isinstance(n, ast.stmt)])
                    for h in inner:
                        if isinstance(h, ast.ExceptHandler):
                            visit(h.body)

    visit(tree.body)
    return found


def test_there_are_pure_modules_to_check() -> None:
    """The scan finds the engine modules (guards against a wrong path making the check vacuous)."""
    names = {p.name for p in _pure_modules()}
    assert "board.py" in names


@pytest.mark.parametrize("path", _pure_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_pure_layer_imports_no_io_clock_or_global_random(path: Path) -> None:
    """A module in games/, protocols/ or ai/ imports none of asyncio, socket, time, random."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = ALLOWED.get(str(path.relative_to(SRC)), {})
    bad = _runtime_imports(tree) & FORBIDDEN - set(allowed)
    assert not bad, f"{path.relative_to(SRC)} imports {sorted(bad)}"
    for module, names in allowed.items():  # and uses only what it is allowed
        used = {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == module
        }
        assert used <= names, f"{path.relative_to(SRC)} uses {module}.{sorted(used - names)}"


def test_the_checker_catches_a_forbidden_import() -> None:
    """The import scan sees imports nested in functions and try blocks, not TYPE_CHECKING ones."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import random\n"
        "def f():\n    try:\n        import time\n    except ImportError:\n        pass\n"
    )
    assert _runtime_imports(tree) == {"typing", "time"}

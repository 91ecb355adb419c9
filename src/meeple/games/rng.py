"""The random source an engine is given: what it may ask of it, and nothing more.

Engines never import :mod:`random` (STYLE.md rule 1); callers pass a seeded
``random.Random``, which fits :class:`Random` as it is, so a test that seeds it
replays a game exactly.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["Random"]

_T = TypeVar("_T")


class Random(Protocol):
    """An injected random source (``random.Random`` satisfies it)."""

    def choice(self, seq: Sequence[_T]) -> _T: ...

    def shuffle(self, x: MutableSequence[Any]) -> None: ...

    def getstate(self) -> tuple[Any, ...]: ...

    def setstate(self, state: tuple[Any, ...]) -> None: ...

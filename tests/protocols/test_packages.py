"""Each protocol package (and the game and TUI packages that re-export theirs the same
way) is its modules' public names, all of them and the same objects (issue 32, Lines:
no hand-kept copy of a module's list in its package)."""

from __future__ import annotations

import importlib

import pytest

# package: the modules whose public names it stands for
PACKAGES = {
    "meeple.protocols.clarkson": ("errors", "framing", "messages", "replies", "session"),
    "meeple.protocols.cmpn402": ("errors", "messages", "session"),
    "meeple.protocols.santorini": ("events", "framing", "messages", "session"),
    "meeple.protocols.spectrangle": (
        "dialect",
        "errors",
        "framing",
        "messages",
        "session",
        "states",
    ),
    "meeple.protocols.twente": ("errors", "events", "framing", "messages", "session"),
    "meeple.protocols.web": ("delta", "errors", "messages", "session"),
    "meeple.games.santorini": ("board", "errors", "game", "gods", "state"),
    "meeple.games.spectrangle": ("board", "errors", "game", "tiles"),
    "meeple.tui.scrabble": ("events", "notation"),
}


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_package_exports_every_public_name_of_its_modules(name: str) -> None:
    """Every name in the __all__ of the modules a package stands for is in the package's
    __all__ and is the module's own object; every name in its __all__ is there."""
    package = importlib.import_module(name)
    for short in PACKAGES[name]:
        module = importlib.import_module(f"{name}.{short}")
        for public in module.__all__:
            assert public in package.__all__, f"{module.__name__}.{public} not in {name}"
            assert getattr(package, public) is getattr(module, public), public
    assert all(hasattr(package, public) for public in package.__all__)

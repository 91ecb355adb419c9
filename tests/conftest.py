"""Fixtures shared by every test folder."""

from __future__ import annotations

import pytest

from meeple.games.scrabble.lexicon import Lexicon, load_lexicon


@pytest.fixture(scope="session")
def gcide() -> Lexicon:
    """The default lexicon, through the user cache as `meeple serve` uses it.

    The first run on a machine compiles it (a few seconds); later runs load the cache.
    """
    return load_lexicon("gcide")

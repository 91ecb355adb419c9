"""Fixtures for the conformance kits: meeple's own server on port 0, and broken ones."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig


@pytest.fixture
async def server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """meeple's server with the Twente, Clarkson and Spectrangle listeners on free ports."""
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3")).only(
        "twente", "clarkson", "spectrangle"
    )
    srv = MeepleServer(config, rng=random.Random(1234))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()

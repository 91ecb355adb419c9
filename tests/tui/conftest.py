"""Fixtures for the terminal clients: a real server on 127.0.0.1:0 and app helpers."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import Input

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig


@pytest.fixture(autouse=True)
def steady_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """An input's cursor stays shown: its blink runs on a real 0.5 s timer, so a screen
    snapshot taken after a busy machine's pause would catch it hidden (make test, once)."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture
async def server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """A server with every implemented listener on a free port and a seeded RNG."""
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"))
    for name in config.listeners:
        config = config.with_port(name, 0)
    srv = MeepleServer(config, rng=random.Random(1234))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()

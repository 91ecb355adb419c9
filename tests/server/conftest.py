"""Fixtures for server tests: servers on port 0 with the shared lexicon; stores of each
kind."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from meeple.games.scrabble.board import Board, parse_gcg_position
from meeple.games.scrabble.gcg import GcgEventKind, parse_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import tiles_from_word
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import TileSet
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store, open_store

# Every store implementation, by name (uvicorn-style): each store test runs on each.
STORES = ("sqlite", "postgresql")


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The ``--database`` URL of a fresh store of each kind: a SQLite file in the test's
    directory, or a new PostgreSQL database on the session's server (tests/conftest.py)."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        return url
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """A fresh store of each kind (see ``store_url``), closed after the test."""
    s = open_store(store_url)
    yield s
    s.close()


class InlineJournal:
    """The journal's three calls made at once on a store, for tests on a stepped clock
    where no event loop runs (a room's LogSink may return None: written). Every error
    the store raises is kept in ``errors`` (and raised, as the journal would)."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store or Store(":memory:")
        self.errors: list[Exception] = []

    def _do(self, call: Callable[[], object]) -> None:
        try:
            call()
        except Exception as e:
            self.errors.append(e)
            raise

    def open(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        self._do(lambda: self.store.open_log(uid, game, genesis))

    def append(self, uid: str, seq: int, entry: Mapping[str, Any], at: float) -> None:
        self._do(lambda: self.store.append_log(uid, seq, entry, at=at))

    def append_many(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> None:
        self._do(lambda: self.store.append_logs(uid, seq, entries, at=at))

    def finish(self, uid: str, game: Mapping[str, Any]) -> None:
        self._do(lambda: self.store.finish_log(uid, **game))


@pytest.fixture(scope="session")
def inline_journal() -> type[InlineJournal]:
    """:class:`InlineJournal`, to make one per test (or per hypothesis example)."""
    return InlineJournal


@pytest.fixture
async def server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """A server with every implemented listener on a free port and a seeded RNG."""
    # Bots think 0.05 s a move at most: what a test shows does not need their best.
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"), bot_think_time=0.05)
    for name in config.listeners:
        config = config.with_port(name, 0)
    srv = MeepleServer(config, rng=random.Random(1234))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
def replay_gcg(gcide: Lexicon) -> Callable[[str, TileSet], dict[str, int]]:
    """``replay_gcg(record, tile_set)``: replay a stored GCG on a fresh board with the
    engine's own validator (every play's score and running total checked); final totals."""

    def replay(record: str, tile_set: TileSet) -> dict[str, int]:
        gcg = parse_gcg(record)
        board = Board()
        totals: dict[str, int] = {}
        for event in gcg.events:
            if event.kind == GcgEventKind.PLAY:
                x, y, direction = parse_gcg_position(event.position)
                tiles = tiles_from_word(board, x, y, direction, event.word)
                result = validate_play(board, tiles, tile_set=tile_set, lexicon=gcide)
                assert result.score == event.score, event
                for t in tiles:
                    board.place(t.x, t.y, t.tile)
            totals[event.nick] = totals.get(event.nick, 0) + event.score
            assert totals[event.nick] == event.total, event
        return totals

    return replay

"""A real server in a background thread, for commands that run their own event loop."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import ListenerConfig, ServerConfig

ServerFactory = Callable[..., MeepleServer]


@pytest.fixture
def threaded_server(tmp_path: Path, gcide: Lexicon) -> Iterator[ServerFactory]:
    """``threaded_server(*names, seed=3, **config)`` starts a server and returns it.

    Only the listeners named run (all of them when none is), each on a free port
    (never its default, so tests never meet a real ``meeple serve``); ``config``
    replaces fields of :class:`ServerConfig`. The server runs on its own event loop in
    a daemon thread, because the commands under test call ``asyncio.run`` themselves;
    it is stopped when the test ends.
    """
    stops: list[Callable[[], None]] = []

    def start(*names: str, seed: int = 3, **config: object) -> MeepleServer:
        base = ServerConfig(database=str(tmp_path / f"db{len(stops)}.sqlite3"))
        listeners = {n: ListenerConfig(0, enabled=not names or n in names) for n in base.listeners}
        server = MeepleServer(replace(base, listeners=listeners, **config), rng=random.Random(seed))
        server.services.lexicon = gcide
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(server.start())
            started.set()
            loop.run_forever()
            loop.run_until_complete(server.stop())
            loop.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        assert started.wait(10), "the server did not start"

        def stop() -> None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)

        stops.append(stop)
        return server

    yield start
    for stop in stops:
        stop()

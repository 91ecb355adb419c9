"""The first browser table loads the Scrabble lexicon off the event loop (issue 13).

With no Scrabble listener, the lexicon is first needed when a browser opens a table;
a first load compiles the word list, which takes seconds. The loader here blocks until
the test lets it go: while it is blocked, another browser is still answered (a loop
blocked by the load could not answer, and the test would time out), and then the
waiting browser is seated.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.patience import PATIENCE
from tests.web.helpers import web_socket

from meeple.games.scrabble.lexicon import Lexicon, LexiconError
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.web import seat


async def _until(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
        if message["type"] == kind:
            return message


def _create(game: str, variant: str, name: str) -> str:
    return json.dumps({"type": "create", "game": game, "variant": variant, "size": 2, "name": name})


async def test_the_loop_serves_others_while_the_first_table_loads_the_lexicon(
    tmp_path: Path, gcide: Lexicon, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    loads: list[str] = []

    def slow_load(name: str) -> Lexicon:
        loads.append(name)
        assert release.wait(30)
        return gcide

    monkeypatch.setattr(seat, "load_lexicon", slow_load)
    server = MeepleServer(
        ServerConfig(database=str(tmp_path / "m.sqlite3")).only("web"), rng=random.Random(1)
    )
    await server.start()
    try:
        first, second = await web_socket(server), await web_socket(server)
        await first.send(_create("scrabble", "twente", "ada"))
        await second.send(_create("scrabble", "twente", "bea"))  # waits for the same load
        while not loads:
            await asyncio.sleep(0.01)
        other = await web_socket(server)
        await other.send(json.dumps({"type": "ping", "id": 7}))
        assert (await _until(other, "pong"))["id"] == 7
        release.set()
        assert (await _until(first, "seated"))["name"] == "ada"
        assert (await _until(second, "seated"))["name"] == "bea"
        assert loads == [server.config.lexicon]  # once, for both
        for ws in (first, second, other):
            await ws.close()
    finally:
        release.set()
        await server.stop()


async def test_a_lexicon_that_cannot_load_leaves_the_other_games_playable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(name: str) -> Lexicon:
        raise LexiconError(f"no word list at {name}")

    monkeypatch.setattr(seat, "load_lexicon", broken)
    server = MeepleServer(
        ServerConfig(database=str(tmp_path / "m.sqlite3")).only("web"), rng=random.Random(1)
    )
    await server.start()
    try:
        ws = await web_socket(server)
        with caplog.at_level(logging.ERROR, logger="meeple.web.seat"):
            await ws.send(_create("scrabble", "twente", "ada"))
            refused = await _until(ws, "error")
            assert refused["code"] == "refused"
            assert "scrabble" in refused["message"]
            await ws.send(_create("santorini", "standard", "ada"))
            assert (await _until(ws, "seated"))["name"] == "ada"
        assert sum("scrabble tables are unavailable" in r.message for r in caplog.records) == 1
        await ws.close()
    finally:
        await server.stop()

"""Real Chromium on the live game page: it follows a whole game through deltas."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Browser, WebSocket, expect
from tests.web.helpers import ServerFactory, slow_twente_bot
from tests.web.test_browser import READ_BOARD

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.lobby import Lobby
from meeple.server.scrabble import ScrabbleRoom

pytestmark = pytest.mark.slow


async def test_the_watch_page_follows_a_game_through_deltas(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """The page asks for deltas: after one whole snapshot every game frame is a patch,
    and once the game is over the page shows the engine's board, scores and moves,
    which it can only have built by applying them."""
    server = await make_server("twente")
    lobby: Lobby = server.services.resource("lobby", Lobby)
    port = server.ports["twente"]
    ready = asyncio.Event()
    bots = asyncio.gather(
        slow_twente_bot(port, "ann", gcide, delay=0.01, ready=ready),
        slow_twente_bot(port, "bob", gcide, delay=0.01, ready=ready),
    )
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    room = lobby.rooms[0]
    assert isinstance(room, ScrabbleRoom)

    page = await browser.new_page()
    sent: list[dict[str, Any]] = []
    frames: list[dict[str, Any]] = []

    def on_websocket(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))
        ws.on("framereceived", lambda payload: frames.append(json.loads(payload)))

    page.on("websocket", on_websocket)
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/games/{room.uid}")
    await expect(page.locator("#live")).to_be_visible()
    ready.set()
    await asyncio.wait_for(bots, 60)
    await expect(page.locator("#ended")).to_be_visible(timeout=10000)

    assert {"type": "subscribe", "topic": "game", "uid": room.uid, "delta": True} in sent
    game = [f for f in frames if f.get("type") == "game"]
    whole = [f for f in game if "data" in f]
    deltas = [f for f in game if "patch" in f]
    assert len(whole) == 1, "one whole snapshot, on joining"
    assert len(deltas) >= 10, "the rest of the game came as deltas"
    assert [f["seq"] for f in game] == sorted({f["seq"] for f in game}), "only forward"
    assert await page.evaluate(READ_BOARD) == room.game.board.rows()
    shown = [int(s) for s in await page.locator("#panel .score").all_inner_texts()]
    assert shown == list(room.game.scores)
    moves = await page.locator("#moves li").count()
    assert moves == len(room.snapshot()["view"]["moves"])
    assert int(await page.locator("#game").get_attribute("data-seq") or 0) == game[-1]["seq"]
    await page.close()

"""Real Chromium: the live game page follows a whole game through deltas, and the
browser's ``follow`` (static/js/delta.js) applies any patch the server's ``diff`` makes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from playwright.async_api import Browser, Page, WebSocket, expect
from tests.patience import GAME_PATIENCE, PATIENCE_MS
from tests.protocols.web.test_delta import JSON
from tests.web.helpers import ServerFactory, slow_twente_bot
from tests.web.test_browser import READ_BOARD

from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.web import diff
from meeple.server.app import MeepleServer
from meeple.server.lobby.tables import Lobby, server_lobby
from meeple.server.rooms.scrabble import ScrabbleRoom

pytestmark = pytest.mark.slow


async def test_the_watch_page_follows_a_game_through_deltas(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """The page asks for deltas: after one whole snapshot every game frame is a patch,
    and once the game is over the page shows the engine's board, scores and moves,
    which it can only have built by applying them."""
    server = await make_server("twente")
    lobby: Lobby = server_lobby(server.services)
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
    await asyncio.wait_for(bots, GAME_PATIENCE)
    await expect(page.locator("#ended")).to_be_visible(timeout=PATIENCE_MS)

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


FOLLOW = """async ([held, seq, msg]) => {
  const { follow } = await import("/static/js/delta.js");
  return follow(held, seq, msg);
}"""


@pytest.fixture
async def blank(make_server: ServerFactory, browser: Browser) -> Page:
    """A page of the server, to import its modules into."""
    server: MeepleServer = await make_server("twente")
    page = await browser.new_page()
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/")
    return page


_PAD = ["p" * 40] * 3  # so that a small change is a patch, not the whole


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(old=JSON, new=JSON)
@example(old={"a": 1, "b": {"c": [1, 2, 3], "d": _PAD}}, new={"b": {"c": [1, 2], "d": _PAD}})
@example(old={"x/y": {"~0": [0, _PAD]}}, new={"x/y": {"~0": [9, _PAD, 2]}})
@example(old={"v": 1, "w": [True, 0, _PAD]}, new={"v": True, "w": [1, 0.5, _PAD]})
@example(old={"m": [{"k": 1}, _PAD]}, new={"m": [{"k": 1, "j": [0]}, _PAD], "n": None})
async def test_the_browser_applies_every_patch_the_server_makes(
    blank: Page, old: Any, new: Any
) -> None:
    """Random JSON documents (keys with / and ~, lists that grow and shrink, true v 1):
    Chromium's ``follow`` turns the held snapshot into the new one with the patch
    ``diff`` made; a whole snapshot replaces it; an older frame or a wrong base is
    refused (null)."""
    ops = diff(old, new)
    if ops is not None:
        delta = {"type": "game", "seq": 8, "base": 7, "patch": ops}
        assert _same(await blank.evaluate(FOLLOW, [old, 7, delta]), new)
        assert await blank.evaluate(FOLLOW, [old, 6, delta]) is None  # not its base
    whole = {"type": "game", "seq": 8, "data": new}
    assert _same(await blank.evaluate(FOLLOW, [old, 7, whole]), new)
    if old is not None:  # null: nothing held yet, so any whole snapshot is taken
        assert await blank.evaluate(FOLLOW, [old, 8, whole]) is None  # not newer


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: JavaScript has one number type (1.0 comes back as 1)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)

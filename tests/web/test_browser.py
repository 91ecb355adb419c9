"""Real Chromium against a real server: watching a Twente game, replaying it, no racks leak."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import Browser, WebSocket, expect
from tests.patience import GAME_PATIENCE, PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot, slow_twente_bot

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.lobby.tables import Lobby, server_lobby
from meeple.server.rooms.scrabble import ScrabbleRoom
from meeple.server.store.database import Store
from meeple.web.wording import reason_text

pytestmark = pytest.mark.slow

# Reads the board the page shows: rows of "." empty, "A"-"Z" a tile, "a"-"z" a blank.
READ_BOARD = """() => {
  const squares = [...document.querySelectorAll('#board .sq')];
  const n = Math.round(Math.sqrt(squares.length));
  const rows = Array.from({length: n}, () => Array(n).fill('.'));
  for (const sq of squares) {
    const tile = sq.querySelector('.tile');
    if (!tile) continue;
    const letter = tile.textContent.trim();
    const blank = tile.classList.contains('blank');
    rows[+sq.dataset.y][+sq.dataset.x] = blank ? letter.toLowerCase() : letter;
  }
  return rows.map((r) => r.join(''));
}"""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def test_a_browser_watches_a_whole_twente_game_and_sees_no_racks(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Two bots play a whole Twente game while a page watches: after the last move the
    board shown equals the engine's, and no WebSocket frame carried a rack's letters."""
    server = await make_server("twente")
    lobby: Lobby = server_lobby(server.services)
    port = server.ports["twente"]
    ready = asyncio.Event()
    bots = asyncio.gather(
        slow_twente_bot(port, "ann", gcide, delay=0.02, ready=ready),
        slow_twente_bot(port, "bob", gcide, delay=0.02, ready=ready),
    )
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    room = lobby.rooms[0]
    assert isinstance(room, ScrabbleRoom)

    lobby_page = await browser.new_page()
    await lobby_page.goto(f"http://127.0.0.1:{server.ports['web']}/")
    await expect(lobby_page.locator(f"#rooms tr[data-uid='{room.uid}']")).to_contain_text("ann")
    await expect(lobby_page.locator("#live")).to_be_visible()

    page = await browser.new_page()
    frames: list[str] = []
    racks_seen: set[str] = set()

    def on_websocket(ws: WebSocket) -> None:
        def received(payload: str | bytes) -> None:
            frames.append(payload if isinstance(payload, str) else payload.decode())
            racks_seen.update(room.game.racks)  # the engine's racks as this frame arrived

        ws.on("framereceived", received)

    page.on("websocket", on_websocket)
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/games/{room.uid}")
    await expect(page.locator("#live")).to_be_visible()
    await screenshot(page, "live-start")
    ready.set()
    # While the game runs, the lobby's row shows the scores as they change.
    await expect(lobby_page.locator(f"#rooms tr[data-uid='{room.uid}'] .num")).not_to_have_text(
        "0 – 0", timeout=PATIENCE_MS
    )
    await screenshot(lobby_page, "lobby-live")
    scores, _ = await asyncio.wait_for(bots, GAME_PATIENCE)

    await expect(page.locator("#ended")).to_be_visible(timeout=PATIENCE_MS)
    # The lobby page followed the game live: the finished game left "Playing now".
    await expect(lobby_page.locator("#rooms")).to_contain_text("No game is running.")
    await lobby_page.close()
    assert await page.evaluate(READ_BOARD) == room.game.board.rows()
    shown = [int(s) for s in await page.locator("#panel .score").all_inner_texts()]
    assert shown == list(room.game.scores) == [scores["ann"], scores["bob"]]
    await screenshot(page, "live-end")

    # The racks of the whole game: every one the engine held when a frame arrived,
    # and every rack in the record's GCG (the rack before each move).
    store: Store = server.services.store
    record = store.game_by_uid(room.uid)
    assert record is not None
    racks_seen.update(re.findall(r"^>\w+: (\S+)", record.record, flags=re.MULTILINE))
    racks_seen.update(room.game.racks)
    racks = {r for r in racks_seen if len(r) >= 2}
    game_frames = [json.loads(f) for f in frames if '"type":"game"' in f]
    assert len(game_frames) >= 10, "the page saw the game move by move"
    for frame in game_frames:
        strings = set(_strings(frame))
        assert not strings & racks, "a frame carries a rack"
        assert "rack" not in strings
        assert "racks" not in strings
    await page.close()


async def test_a_replay_stepped_to_the_end_shows_the_stored_final_scores(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Home, →, End on the replay page; the last step's scores are the stored result's."""
    server = await make_server("twente")
    port = server.ports["twente"]
    await asyncio.wait_for(
        asyncio.gather(
            play_twente("127.0.0.1", port, "cat", gcide),
            play_twente("127.0.0.1", port, "dog", gcide),
        ),
        GAME_PATIENCE,
    )
    store: Store = server.services.store
    [record] = store.games()
    assert record.data is not None
    uid = record.data["uid"]
    base = f"http://127.0.0.1:{server.ports['web']}"

    page = await browser.new_page()
    await page.goto(f"{base}/")
    await expect(page.locator("#recent")).to_contain_text("cat, dog")
    await screenshot(page, "lobby")
    # Issue 23: the lobby's link to the kits' guide (docs/check.md as a page).
    await page.click("#check-guide")
    await expect(page.locator("h1")).to_have_text("meeple check: conformance kits")
    await page.goto(f"{base}/games")
    await screenshot(page, "games")
    await page.click(f"a[href='/games/{uid}']")
    await expect(page.locator("h1")).to_contain_text("replay")
    await expect(page.locator("#controls[data-ready]")).to_be_attached()

    await page.keyboard.press("Home")
    await expect(page.locator("#stepno")).to_have_text("0")
    assert await page.locator("#board .tile").count() == 0
    await page.keyboard.press("ArrowRight")
    await expect(page.locator("#stepno")).to_have_text("1")
    await page.click("[data-go=prev]")
    await expect(page.locator("#stepno")).to_have_text("0")
    await page.keyboard.press("End")
    last = len(record.data["actions"])
    await expect(page.locator("#stepno")).to_have_text(str(last))
    shown = [int(s) for s in await page.locator("#panel .score").all_inner_texts()]
    stored = record.result["scores"]
    assert shown == [stored["cat"], stored["dog"]]
    assert await page.locator("#final").inner_text() != ""
    await expect(page.locator("#final .reason")).to_have_text(reason_text(record.end_reason))
    await screenshot(page, "replay")

    async with page.expect_download() as download:
        await page.click(f"a[href='/games/{uid}.gcg']")
    gcg = await (await download.value).path()
    assert gcg.read_text(encoding="utf-8") == record.record
    await page.close()

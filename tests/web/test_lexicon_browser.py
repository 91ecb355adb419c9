"""A Scrabble table's own word list (issue 24): the play form offers the word lists the
server loaded, the table, the game and the replay name the one chosen, the bot plays
with it, and the record stores it; a list the server has not loaded is refused."""

from __future__ import annotations

import json

import pytest
from playwright.async_api import Browser, expect
from tests.patience import PATIENCE_MS
from tests.serve import next_of
from tests.web.helpers import ServerFactory, end_game, screenshot, stored_game, wait_for, web_socket

from meeple.server.lobby.bots import BotSeat
from meeple.server.lobby.tables import server_lobby

pytestmark = pytest.mark.slow

MY_TURN = """() => { const v = window.meeple.view;
  return v && !v.over && v.turn === v.you && !v.pending; }"""


async def test_a_table_plays_with_the_word_list_it_chose(
    make_server: ServerFactory, browser: Browser
) -> None:
    # The tests' default word list is GCIDE; this server also loads ENABLE for tables.
    server = await make_server(table_lexicons=("enable",))
    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    try:
        await page.goto(f"{base}/play")
        choices = page.locator("#create [name=lexicon] option")
        assert await choices.all_inner_texts() == ["GCIDE (the server's)", "ENABLE"]
        await page.select_option("#create [name=game]", "santorini/standard")
        await expect(page.locator("#create .lexicon-choice")).to_be_hidden()
        await page.select_option("#create [name=game]", "scrabble/twente")
        await expect(page.locator("#create .lexicon-choice")).to_be_visible()
        await page.fill("#create [name=name]", "lou")
        await page.select_option("#create [name=lexicon]", "enable")
        await page.select_option("#create [name=clock]", "25+0")
        await screenshot(page, "play-form-lexicon")
        await page.click("#create button[type=submit]")
        await expect(page.locator("#waiting")).to_contain_text("words: ENABLE")
        # Another visitor sees the table's word list and clock in the lists of tables.
        other = await browser.new_page()
        await other.goto(f"{base}/play")
        row = other.locator("#tables tr")
        await expect(row).to_contain_text("words: ENABLE")
        await expect(row).to_contain_text("clock: 25 min")
        await screenshot(other, "play-tables-settings")
        await other.goto(f"{base}/")
        await expect(other.locator("td[data-label=Variant]")).to_have_text(
            "twente · ENABLE words · clock 25+0"
        )
        await other.close()
        await page.click("#bot")
        await wait_for(page, MY_TURN, timeout=PATIENCE_MS)
        await expect(page.locator("#waiting .lexicon")).to_contain_text("ENABLE")

        room = server_lobby(server.services).rooms[0]
        assert getattr(room, "lexicon_name", None) == "enable"
        bots = [s for s in room.seats if isinstance(s, BotSeat)]
        assert [getattr(b, "lexicon", None) for b in bots] == [room.game.lexicon]  # type: ignore[attr-defined]
        watcher = await browser.new_page()
        await watcher.goto(f"{base}/games/{room.uid}")
        await expect(watcher.locator(".sub .lexicon")).to_have_text("ENABLE")
        await watcher.close()

        await end_game(page)
        record = await stored_game(server, "scrabble")
        assert record.data is not None
        assert record.data["lexicon"] == "enable"
        assert "#lexicon enable" in record.record
        await page.goto(f"{base}/games/{room.uid}")
        await expect(page.locator(".sub .lexicon")).to_have_text("ENABLE")
    finally:
        await page.close()

    # A word list the server did not load is refused, and so is one for Santorini.
    ws = await web_socket(server)
    try:
        for game, variant, lexicon in (
            ("scrabble", "twente", "web2"),
            ("santorini", "standard", "enable"),
        ):
            await ws.send(
                json.dumps(
                    {
                        "type": "create",
                        "game": game,
                        "variant": variant,
                        "size": 2,
                        "name": "max",
                        "lexicon": lexicon,
                    }
                )
            )
            error = await next_of(ws, "error")
            assert error["code"] == "refused"
            assert "word list" in error["message"]
    finally:
        await ws.close()

"""/ratings and a player's page in real Chromium, after two bots played over Twente."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, expect
from tests.patience import GAME_PATIENCE
from tests.web.helpers import ServerFactory, screenshot

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.store.database import Store

pytestmark = pytest.mark.slow


async def test_ratings_page_links_to_the_players_page_with_the_game(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Two bots play a whole game over a real socket; /ratings then ranks both (the
    winner first), and following a player's link shows their rating, its chart and the
    game, whose link opens the replay; the page's link to reserve a name signs in."""
    server = await make_server("twente")
    port = server.ports["twente"]
    await asyncio.wait_for(
        asyncio.gather(
            play_twente("127.0.0.1", port, "ann<&>", gcide),
            play_twente("127.0.0.1", port, "bob/b", gcide),
        ),
        GAME_PATIENCE,
    )
    store: Store = server.services.store
    board = store.leaderboard("scrabble")
    assert len(board) == 2
    [record] = store.games()
    assert record.data is not None

    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    await page.goto(f"{base}/")
    await page.click("nav >> text=Ratings")
    await expect(page).to_have_url(f"{base}/ratings")
    rows = page.locator("table.leaderboard tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0).locator("a")).to_have_text(board[0].player)
    await expect(rows.nth(0)).to_contain_text(str(round(board[0].rating)))
    await expect(page.locator("#names")).to_contain_text("Names are not authenticated")
    await screenshot(page, "ratings")

    await rows.nth(0).locator("a").click()
    await expect(page.locator("h1")).to_have_text(board[0].player)
    await expect(page.locator("svg.chart circle.dot")).to_have_count(1)
    await expect(page.locator(".card .big")).to_contain_text(str(round(board[0].rating)))
    await screenshot(page, "player")
    await page.click(f'a[href="/games/{record.data["uid"]}"]')
    await expect(page.locator("h1")).to_contain_text("Scrabble")

    # The ratings page's link to reserve a name; the form signs the browser in.
    await page.goto(f"{base}/ratings")
    await page.click("#names a[href='/account']")
    await screenshot(page, "account")
    await page.fill("#reserve input[name=name]", board[0].player)
    await page.fill("#reserve input[name=password]", "correct horse")
    await page.click("#reserve button")
    await expect(page.locator("#signed-in .me")).to_have_text(board[0].player)
    cookie = next(c for c in await page.context.cookies() if c["name"] == "meeple_account")
    assert cookie["httpOnly"]
    assert cookie["secure"]
    assert cookie["sameSite"] == "Strict"
    await screenshot(page, "account-signed-in")
    await page.close()

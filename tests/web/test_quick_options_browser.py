"""The lobby's one-click games take a bot's level, a clock and Santorini's gods (issue 34,
"Quick pairing": "the one-click bot buttons take a level, a clock and gods"), in real
Chromium: the choices above "Play X now" go into its link, and the play page opens that
game with that clock and a bot of that level; a clock the game does not take is left
out, and with no choice the links are the plain ones."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect
from tests.patience import PATIENCE_MS
from tests.web.helpers import ServerFactory, wait_for

pytestmark = pytest.mark.slow

SEATED = "() => window.meeple?.view?.players?.length === 2 ? window.meeple.view : null"


async def test_play_now_takes_a_level_a_clock_and_gods(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Easy, 10 min + 5 s and gods: "Play Santorini now" opens a Santorini game with gods,
    clocks of 10+5 and an easy bot; Scrabble's link leaves the clock out (not one of
    its), and Spectrangle's has neither gods nor the level's default."""
    server = await make_server("santorini")
    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    await page.goto(f"{base}/")
    santorini = page.locator("#play-now a[data-game=santorini]")
    assert await santorini.get_attribute("href") == "/play?game=santorini/standard&bot=1"
    await page.select_option("#quick-options [name=level]", "easy")
    await page.select_option("#quick-options [name=clock]", "10+5")
    await page.check("#quick-options [name=gods]")
    href = await santorini.get_attribute("href")
    assert href == "/play?game=santorini/standard&bot=1&level=easy&clock=10%2B5&gods=1"
    scrabble = await page.locator("#play-now a[data-game=scrabble]").get_attribute("href")
    assert scrabble == "/play?game=scrabble/twente&bot=1&level=easy"
    await santorini.click()
    handle = await wait_for(page, SEATED, timeout=PATIENCE_MS)
    view = await handle.json_value()
    assert view["gods_in_play"] is True
    bot = next(p for p in view["players"] if p != view["players"][view["you"]])
    assert bot.startswith("easy"), view["players"]
    await expect(page.locator("#clocks")).to_be_visible()
    await expect(page.locator("#clocks")).to_contain_text("10:")
    await page.close()

"""Pairing between people (issue 34.6), in real Chromium: the lobby's "Play a person"
grid; two visitors who pick the same game and clock play each other, whether one waits
first or both ask at once; a different clock is another table."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, Page, expect
from tests.patience import PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot, wait_for
from tests.web.test_play_issue24_browser import MY_TURN

pytestmark = pytest.mark.slow

STARTED = "() => Boolean(window.meeple && window.meeple.view)"


async def _seek(browser: Browser, base: str, cell: str) -> Page:
    """A new visitor (own browser context) presses the lobby's ``cell`` button."""
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{base}/")
    await page.click(f'#seek a[data-seek="{cell}"]')
    return page


async def _opponents(page: Page) -> list[str]:
    players: list[str] = await page.evaluate("() => window.meeple.view.players")
    return players


async def test_two_people_who_pick_the_same_cell_play_each_other(
    make_server: ServerFactory, browser: Browser
) -> None:
    """One waits (the page says so), the next sits with them; the game starts with the
    clock picked; a third who picks another clock waits at a table of their own."""
    server = await make_server("twente")
    base = f"http://127.0.0.1:{server.ports['web']}"
    first = await _seek(browser, base, "scrabble/twente 5+0")
    await expect(first.locator("#status")).to_contain_text("Waiting for an opponent")
    await screenshot(first, "seek-waiting")
    second = await _seek(browser, base, "scrabble/twente 5+0")
    for page in (first, second):
        await wait_for(page, STARTED, timeout=PATIENCE_MS)
        await expect(page.locator("#clocks .clock")).to_have_count(2)
    assert sorted(await _opponents(first)) == sorted(await _opponents(second))
    assert await first.evaluate("() => window.meeple.view.game") == "scrabble"
    turns = await asyncio.gather(*(p.evaluate(MY_TURN) for p in (first, second)))
    assert sum(t is not None for t in turns) == 1  # one of them is to move

    third = await _seek(browser, base, "scrabble/twente 25+0")
    await expect(third.locator("#status")).to_contain_text("Waiting for an opponent")
    assert not await third.evaluate(STARTED)


async def test_two_people_who_ask_at_once_meet_at_one_table(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Both open the seek at the same moment (each may open a table before seeing the
    other's): the one at the newer table moves to the older, and they play."""
    server = await make_server("santorini")
    base = f"http://127.0.0.1:{server.ports['web']}"
    pages = []
    for _ in range(2):
        context = await browser.new_context()
        pages.append(await context.new_page())
    url = f"{base}/play?game=santorini/standard&seek=1"
    await asyncio.gather(*(page.goto(url) for page in pages))
    for page in pages:
        try:
            await wait_for(page, STARTED, timeout=PATIENCE_MS)
        except Exception:
            said = [await p.locator("#status").inner_text() for p in pages]
            where = [await p.locator("#table").inner_text() for p in pages]
            raise AssertionError(f"no game: {said} at {where}") from None
    assert sorted(await _opponents(pages[0])) == sorted(await _opponents(pages[1]))
    assert await pages[0].evaluate("() => window.meeple.view.game") == "santorini"
    tables = await asyncio.gather(*(p.locator("#table").inner_text() for p in pages))
    assert tables[0] == tables[1]  # one table, the older one


async def test_a_seek_nobody_answers_offers_a_bot_after_the_wait_chosen(
    make_server: ServerFactory, browser: Browser
) -> None:
    """The lobby's "if nobody comes" choice goes into every cell's link; after that wait
    alone at the table the page says so and offers "Add a bot", which starts the game
    with the clock picked (the page's own 1 s here, as a link may say)."""
    server = await make_server("twente")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{base}/")
    cell = page.locator('#seek a[data-seek="scrabble/twente 5+0"]')
    await page.select_option("#seek-bot", "60")
    assert (await cell.get_attribute("href") or "").endswith("&clock=5%2B0&botafter=60")
    await page.goto(f"{base}/play?game=scrabble/twente&seek=1&clock=5%2B0&botafter=1")
    await expect(page.locator("#status")).to_contain_text("Nobody has come yet")
    await expect(page.locator("#bot")).to_be_focused()
    await page.click("#bot")
    await wait_for(page, STARTED, timeout=PATIENCE_MS)
    await expect(page.locator("#clocks .clock")).to_have_count(2)
    assert any("bot" in name for name in await _opponents(page))
    await context.close()

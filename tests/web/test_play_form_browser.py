"""The play form's first minute (issue 34.10), in real Chromium: a fresh visit has a name
and "Open a table" opens one at once; "Play X now" while this browser holds an unfinished
game brings that game back and says why; with a stale rejoin token it plays X now."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect
from tests.web.helpers import ServerFactory, end_game
from tests.web.test_play_issue24_browser import my_turn

pytestmark = pytest.mark.slow


async def test_a_fresh_visit_opens_a_table_without_typing_a_name(
    make_server: ServerFactory, browser: Browser
) -> None:
    """No name typed, nothing stored: the form holds a guest name, and "Open a table"
    seats the visitor at a new table under it; the next visit keeps that name."""
    server = await make_server("twente")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{base}/play")
    name = page.locator("#create [name=name]")
    await expect(name).to_have_value(re.compile(r"guest\d{4}"))
    guest = await name.input_value()
    await page.click("#create button[type=submit]")
    await expect(page.locator("#who")).to_have_text(f"You are {guest}")
    await expect(page.locator("#status")).to_have_text("Waiting for the table to fill.")
    await page.click("#leave")
    second = await context.new_page()
    await second.goto(f"{base}/play")
    await expect(second.locator("#create [name=name]")).to_have_value(guest)
    await context.close()


async def test_play_now_while_a_game_is_unfinished_says_so(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Seated at a Scrabble game against a bot, the visitor presses "Play Santorini now"
    (a new tab of the same browser): the Scrabble game comes back, with a note that it
    is not over; resigned, the note goes. A stale token does not stop "Play X now"."""
    server = await make_server("twente", "santorini")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{base}/play?game=scrabble/twente&bot=1")
    view = await my_turn(page)
    assert view["game"] == "scrabble"
    await page.close()

    page = await context.new_page()
    await page.goto(f"{base}/play?game=santorini/standard&bot=1")
    view = await my_turn(page)
    assert view["game"] == "scrabble"  # the unfinished game, not a new one
    notice = page.locator("#notice")
    await expect(notice).to_be_visible()
    await expect(notice).to_contain_text("You are back in a game of yours that is not over")
    await expect(notice).to_contain_text("before you play santorini now")
    assert page.url == f"{base}/play"  # a reload does not ask again
    await end_game(page)
    await expect(notice).to_be_hidden()
    await context.close()

    stale = await browser.new_context()
    page = await stale.new_page()
    await page.goto(f"{base}/play")
    await page.evaluate("() => localStorage.setItem('meeple.rejoin', 'not-a-token')")
    await page.goto(f"{base}/play?game=santorini/standard&bot=1")
    view = await my_turn(page)
    assert view["game"] == "santorini"
    await expect(page.locator("#notice")).to_be_hidden()
    await stale.close()

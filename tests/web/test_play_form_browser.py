"""The play form's first minute (issue 34.10), in real Chromium: a fresh visit has a name
and "Open a table" opens one at once; "Play X now" while this browser holds an unfinished
game brings that game back and says why; with a stale rejoin token it plays X now; the
name this browser last played under is not kept from it by its own previous page."""

from __future__ import annotations

import json
import re

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect
from tests.patience import eventually
from tests.web.helpers import ServerFactory, end_game, wait_for, web_socket
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


async def _aborted_game(context: BrowserContext, base: str, name: str) -> Page:
    """A page that played ``name`` against a bot and aborted the game: it is over (the
    seat and its rejoin token gone) and the page keeps the name, for a rematch."""
    page = await context.new_page()
    await page.goto(f"{base}/play")
    await page.fill("#create [name=name]", name)
    await page.click("#create button[type=submit]")
    await page.click("#bot")
    await my_turn(page)
    await page.click("#abort")
    await expect(page.locator("#result")).to_contain_text("Game aborted by you")
    return page


async def test_play_now_waits_for_this_browser_s_closing_page_to_let_its_name_go(
    make_server: ServerFactory, browser: Browser
) -> None:
    """The name this browser last sat as is still held by its previous page (a reload,
    or "Play X now" right after a game, before the server has seen the old socket
    close): the server answers ``name-taken`` and the page asks again until the old
    page is gone, then plays. A name typed in another browser, held by someone, is
    refused at once (no asking again)."""
    server = await make_server("santorini")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context()
    old = await _aborted_game(context, base, "ann")

    page = await context.new_page()
    await page.goto(f"{base}/play?game=santorini/standard&bot=1")
    await expect(page.locator("#status")).to_contain_text("the name ann is taken: asking again")
    await old.close()  # its socket closes: the name comes free
    view = await my_turn(page)
    assert view["game"] == "santorini"
    assert view["players"][view["you"]] == "ann"

    other = await browser.new_context()  # another person, typing the held name
    theirs = await other.new_page()
    await theirs.goto(f"{base}/play")
    await theirs.fill("#create [name=name]", "ann")
    await theirs.click("#create button[type=submit]")
    await expect(theirs.locator("#status")).to_have_text("the name ann is taken")
    await theirs.wait_for_timeout(1200)  # past a retry's delay: none was made
    await expect(theirs.locator("#status")).to_have_text("the name ann is taken")
    await other.close()
    await context.close()


async def test_a_page_left_for_another_lets_its_name_go_and_connects_again_when_back(
    make_server: ServerFactory, browser: Browser
) -> None:
    """After a game the page keeps its name (for a rematch). Left for another page in the
    same tab, which Chromium keeps frozen in its back/forward cache, its socket closes,
    so the name is free at once (it was held for as long as the frozen page lived: a
    "Play X now" from the next page found it taken); back, the page connects again."""
    server = await make_server("santorini")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context()
    page = await _aborted_game(context, base, "cy")
    await page.goto(f"{base}/games")

    ws = await web_socket(server)
    create = {"type": "create", "game": "santorini", "variant": "standard", "size": 2}

    async def free() -> bool:
        await ws.send(json.dumps(create | {"name": "cy"}))
        reply = json.loads(await ws.recv())
        while reply["type"] not in ("error", "seated"):
            reply = json.loads(await ws.recv())
        return reply["type"] == "seated"

    await eventually(free, "cy free once the page was left")
    await ws.close()
    await page.go_back(wait_until="commit")  # from the cache: no load event
    await wait_for(page, "() => window.meeple.socket?.readyState === WebSocket.OPEN")
    await context.close()

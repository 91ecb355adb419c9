"""The play page keeps its seat per browser (issue "No game is lost"): a closed tab's seat
comes back in a new tab, a second tab takes it from the first, and a seat given up is
forgotten. Real Chromium; the tabs of one browser are the pages of one context."""

from __future__ import annotations

import os
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect
from tests.patience import PATIENCE_MS, eventually
from tests.web.helpers import NEXT_VIEW, ServerFactory, open_table, screenshot, type_move, wait_for

from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.lobby.tables import server_lobby

pytestmark = pytest.mark.slow

TOKEN = "() => localStorage.getItem('meeple.rejoin')"
MY_TURN = """() => {
  const v = window.meeple.view;
  return v && !v.over && v.turn === v.you ? v : null;
}"""


async def _seated_against_a_bot(
    context: BrowserContext, server: MeepleServer
) -> tuple[Page, dict[str, Any]]:
    """A tab of ``context`` at a two-seat Scrabble table with a server bot, on its turn."""
    page = await context.new_page()
    await open_table(page, server, "pat", "scrabble/twente", 2)
    await page.click("#bot")
    view: dict[str, Any] = await (await wait_for(page, MY_TURN, timeout=PATIENCE_MS)).json_value()
    return page, view


async def _new_tab(context: BrowserContext, server: MeepleServer) -> Page:
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/play")
    return page


async def test_a_closed_tab_s_seat_comes_back_in_a_new_tab(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Mid-game the tab is closed (the seat is held); a new tab of the same browser
    opens /play, presents the token kept per browser and is back in the seat: the same
    rack and moves, no join form, and it plays on."""
    server = await make_server()
    context = await browser.new_context(viewport={"width": 1280, "height": 1100})
    page, before = await _seated_against_a_bot(context, server)
    token = await page.evaluate(TOKEN)
    await page.close()
    lobby = server_lobby(server.services)
    await eventually(lambda: bool(lobby.held), "the seat held")
    assert lobby.held == 1
    again = await _new_tab(context, server)
    await expect(again.locator("#who")).to_have_text("You are pat")
    view: dict[str, Any] = await (await wait_for(again, MY_TURN, timeout=PATIENCE_MS)).json_value()
    assert lobby.held == 0
    assert view["rack"] == before["rack"]
    assert view["moves"] == before["moves"]
    await expect(again.locator("#join")).to_be_hidden()
    await expect(again.locator("#mine .rtile")).to_have_count(len(before["rack"]))
    assert token
    assert await again.evaluate(TOKEN) == token
    # It plays on: its move is taken and the bot answers it.
    seen = len(view["moves"])
    await type_move(again, view, gcide)
    after: dict[str, Any] = await (
        await wait_for(again, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
    ).json_value()
    assert after["moves"][seen]["player"] == view["you"]
    await context.close()


async def test_a_seat_given_up_is_forgotten(make_server: ServerFactory, browser: Browser) -> None:
    """The token is kept in the browser while seated and dropped on Leave (mid-game, after
    the confirmation): a new tab shows the form and the name is free to sit with again. A
    token the server no longer knows is dropped too, with the server's refusal shown."""
    server = await make_server()
    context = await browser.new_context()
    page, _ = await _seated_against_a_bot(context, server)
    assert await page.evaluate(TOKEN)
    # Mid-game before its first move Leave aborts at once (issue 34.4); after it, it
    # resigns, asked first in the page.
    aborts = await page.evaluate("() => !!window.meeple.view?.may_abort")
    await page.click("#leave")
    if not aborts:
        await page.click("#resign-yes")
    await expect(page.locator("#join")).to_be_visible()
    assert await page.evaluate(TOKEN) is None
    again = await _new_tab(context, server)
    await expect(again.locator("#join")).to_be_visible()
    await wait_for(again, "() => window.meeple.tables !== undefined")
    await expect(again.locator("#status")).to_have_text("")
    await open_table(again, server, "pat", "scrabble/twente", 2)  # the name is free again
    await again.close()
    await page.evaluate("() => localStorage.setItem('meeple.rejoin', 'stale-token-0123456789')")
    stale = await _new_tab(context, server)
    await expect(stale.locator("#status")).to_contain_text("no seat is held for this token")
    await expect(stale.locator("#join")).to_be_visible()
    assert await stale.evaluate(TOKEN) is None
    await context.close()


async def test_a_second_tab_takes_the_seat_and_the_first_steps_aside(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Two tabs of one browser: the second one opened takes the seat; the first is told
    its seat is played elsewhere and does not take it back by itself (no tug of war),
    until Play here, which moves the seat back to it."""
    server = await make_server()
    context = await browser.new_context(viewport={"width": 1280, "height": 1100})
    first, before = await _seated_against_a_bot(context, server)
    second = await _new_tab(context, server)
    await expect(second.locator("#who")).to_have_text("You are pat")
    view: dict[str, Any] = await (await wait_for(second, MY_TURN, timeout=PATIENCE_MS)).json_value()
    assert view["rack"] == before["rack"]
    await expect(first.locator("#elsewhere")).to_be_visible()
    await expect(first.locator("#play")).to_be_hidden()
    if os.environ.get("MEEPLE_SCREENSHOTS") == "1":
        await first.bring_to_front()  # a tab behind another draws no frame to shoot
        await screenshot(first, "play-seat-elsewhere")
        await second.bring_to_front()
    # A while later the second tab still has it: the first did not reconnect to take it.
    await second.wait_for_timeout(1500)
    assert await second.evaluate("() => window.meeple.seated")
    assert not await first.evaluate("() => window.meeple.seated")
    await expect(second.locator("#elsewhere")).to_be_hidden()
    await first.click("#here")
    await expect(first.locator("#who")).to_have_text("You are pat")
    await expect(first.locator("#elsewhere")).to_be_hidden()
    await expect(second.locator("#elsewhere")).to_be_visible()
    view = await (await wait_for(first, MY_TURN, timeout=PATIENCE_MS)).json_value()
    seen = len(view["moves"])
    await type_move(first, view, gcide)
    await wait_for(first, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
    await context.close()

"""Clocks on the play and watch pages (issue 24, item 13), in Chromium: a table opened
with a clock shows both players' clocks, the running one counts down, low time shows
after a reload (the seat's view comes back with the server's times), and when the
server's clock (virtual here) runs past the overtime's limit the flag and the penalty
show on both pages."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect
from tests.patience import PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot, wait_for
from tests.web.test_play_issue24_browser import serious_violations

from meeple.server.clock import VirtualClock
from meeple.server.lobby.tables import server_lobby

pytestmark = pytest.mark.slow

MY_TURN = """() => { const v = window.meeple.view;
  return v && !v.over && v.turn === v.you && !v.pending; }"""


async def test_a_scrabble_table_with_a_clock_runs_and_flags(
    make_server: ServerFactory, browser: Browser
) -> None:
    clock = VirtualClock()
    server = await make_server(clock=clock)
    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    watcher = await browser.new_page()
    try:
        await page.goto(f"{base}/play")
        await page.fill("#create [name=name]", "kim")
        await page.select_option("#create [name=game]", "scrabble/twente")
        # Only the game's clocks are offered: Scrabble's have no increment.
        assert await page.locator("#create [name=clock] option[value='5+3']").is_disabled()
        await page.select_option("#create [name=clock]", "5+0")
        await page.click("#create button[type=submit]")
        await expect(page.locator("#waiting")).to_contain_text("clock: 5 min")
        await page.click("#bot")
        await wait_for(page, MY_TURN, timeout=PATIENCE_MS)

        clocks = page.locator("#clocks .clock")
        await expect(clocks).to_have_count(2)
        mine = page.locator("#clocks .clock.running")
        await expect(mine).to_have_count(1)
        await expect(mine.locator(".who")).to_have_text("kim")
        before = await mine.locator(".time").inner_text()
        assert before in ("5:00", "4:59")
        await expect(mine.locator(".time")).not_to_have_text(before, timeout=PATIENCE_MS)  # it runs
        await expect(page.locator("#clocks .clock-rule")).to_contain_text("overtime 10 min")

        room = server_lobby(server.services).rooms[0]
        await watcher.goto(f"{base}/games/{room.uid}")
        await expect(watcher.locator("#clocks .clock")).to_have_count(2)
        await expect(watcher.locator("#clocks .clock.running .who")).to_have_text("kim")

        # 296 s pass on the server's clock: a reload takes the seat back with the
        # server's times, and kim's clock is low.
        await clock.advance(296)
        await page.reload()
        await wait_for(page, MY_TURN, timeout=PATIENCE_MS)
        await expect(page.locator("#clocks .clock.running.low .who")).to_have_text("kim")
        await screenshot(page, "play-clock")
        assert await serious_violations(page) == []  # axe-core, with the clocks shown

        # Past zero and ten minutes of overtime: the flag ends the game, -100.
        await clock.advance(4 + 600)
        flagged = page.locator("#clocks .clock.flagged")
        await expect(flagged).to_have_count(1)
        await expect(flagged).to_contain_text("out of time")
        await expect(page.locator("#over")).to_be_visible()
        await expect(page.locator("#moves")).to_contain_text("overtime penalty")
        await expect(page.locator("#moves")).to_contain_text("-100")
        await expect(watcher.locator("#clocks .clock.flagged .who")).to_have_text("kim")
        await screenshot(watcher, "live-clock")
        assert await serious_violations(watcher) == []
        view = await page.evaluate("window.meeple.view")
        assert view["result"]["reason"] == "time"
    finally:
        await watcher.close()
        await page.close()


@pytest.mark.parametrize("game", ["spectrangle/standard", "santorini/standard"])
async def test_a_clock_with_an_increment_flags(
    make_server: ServerFactory, browser: Browser, game: str
) -> None:
    """Spectrangle and Santorini 2+1 against a bot: the rule reads "2 min + 1 s a move",
    and running out ends the game (Spectrangle: abandoned, the spec's one early end;
    Santorini: lost) with the flag shown."""
    clock = VirtualClock()
    server = await make_server(clock=clock)
    page = await browser.new_page()
    try:
        await page.goto(f"http://127.0.0.1:{server.ports['web']}/play")
        await page.fill("#create [name=name]", "ida")
        await page.select_option("#create [name=game]", game)
        await page.select_option("#create [name=clock]", "2+1")
        await page.click("#create button[type=submit]")
        await expect(page.locator("#waiting")).to_contain_text("clock: 2 min + 1 s")
        await page.click("#bot")
        await wait_for(page, MY_TURN, timeout=PATIENCE_MS)
        await expect(page.locator("#clocks .clock-rule")).to_have_text("2 min + 1 s a move")
        await expect(page.locator("#clocks .clock.running .who")).to_have_text("ida")
        await clock.advance(121)
        await expect(page.locator("#clocks .clock.flagged .who")).to_have_text("ida")
        await expect(page.locator("#over")).to_be_visible()
    finally:
        await page.close()

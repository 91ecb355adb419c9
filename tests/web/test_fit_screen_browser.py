"""The game fits the screen while it is your turn (issue 34.1), in real Chromium at
1280×800 and on a 390×844 phone: the board, your rack or hand (or Santorini's
buttons), the scores, the move list and the clocks are all inside the window without
scrolling, nothing sticks out sideways, and the board takes the height it is given."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect
from tests.patience import PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot, wait_for
from tests.web.test_play_issue24_browser import my_turn

pytestmark = pytest.mark.slow

SIZES = ((1280, 800), (390, 844))

# What must be on screen while it is your turn, per game (the rack's line, the hand, the
# buttons: whatever the player acts with), and the scores, moves and clocks of every game.
MINE = {
    "scrabble": "#mine .rack-line",
    "santorini": "#controls > div",
    "spectrangle": "#mine .hand",
}
EVERY = ("#board", "#panel", "#moves", "#clocks")

BOXES = """(selectors) => {
  const out = {};
  for (const s of selectors) {
    const node = document.querySelector(s);
    if (!node || node.hidden) continue;
    const r = node.getBoundingClientRect();
    out[s] = { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height };
  }
  return { boxes: out, scrollY: window.scrollY, width: document.documentElement.scrollWidth };
}"""


async def _on_screen(page: Page, game: str, width: int, height: int) -> dict[str, Any]:
    """The boxes of what must be seen, checked against the window; returns them."""
    found: dict[str, Any] = await page.evaluate(BOXES, [MINE[game], *EVERY])
    boxes = found["boxes"]
    assert found["scrollY"] == 0, found
    assert found["width"] <= width, found  # nothing sticks out sideways
    assert {"#board", "#panel", "#moves", MINE[game]} <= set(boxes), found
    outside = {
        s: b
        for s, b in boxes.items()
        if b["top"] < 0 or b["bottom"] > height + 0.5 or b["left"] < 0 or b["right"] > width + 0.5
    }
    assert not outside, (game, width, outside)
    return boxes


@pytest.mark.parametrize("game", ["scrabble/twente", "santorini/standard", "spectrangle/standard"])
async def test_board_rack_scores_and_moves_fit_both_windows(
    make_server: ServerFactory, browser: Browser, game: str
) -> None:
    """ "Play X now" at each size, on the player's first turn: everything the player
    needs is inside the window, and the move list, however long it grows, stays inside
    it (its max-height ends at the window's bottom; it scrolls within)."""
    server = await make_server("twente", "santorini", "spectrangle")
    name = game.split("/")[0]
    for width, height in SIZES:
        context = await browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{server.ports['web']}/play?game={game}&bot=1")
        await my_turn(page)
        await screenshot(page, f"fit-{name}", widths=((width, height),))
        boxes = await _on_screen(page, name, width, height)
        grows = await page.evaluate(
            """() => { const list = document.querySelector('#moves .moves');
              const top = list.getBoundingClientRect().top;
              return top + parseFloat(getComputedStyle(list).maxHeight); }"""
        )
        assert grows <= height + 0.5, (grows, height)
        if width > 600:
            # Beside the side panel the board is as tall as the window lets it be.
            assert boxes["#board"]["height"] > height * 0.6, boxes
        await context.close()


GROWS = """() => { const list = document.querySelector('#moves .moves');
  const top = list.getBoundingClientRect().top;
  return top + parseFloat(getComputedStyle(list).maxHeight); }"""


async def test_the_page_fits_again_when_what_is_above_the_board_grows(
    make_server: ServerFactory, browser: Browser
) -> None:
    """The header taking more height after the page fitted (its links wrapping once the
    theme button is drawn: no window resize) fits the moves again: under load the first
    fit could run before the phone header wrapped, and the move list then reached past
    the window's bottom. A phone taller than the board needs, so that the fit is only
    the move list's: the list ends inside the window again."""
    height = 1000
    server = await make_server("spectrangle")
    context = await browser.new_context(viewport={"width": 390, "height": height})
    page = await context.new_page()
    url = f"http://127.0.0.1:{server.ports['web']}/play?game=spectrangle/standard&bot=1"
    await page.goto(url)
    await my_turn(page)
    await wait_for(page, f"() => ({GROWS})() <= {height + 0.5}", timeout=PATIENCE_MS)
    # Two more rows in the header, as a late wrap would give.
    await page.evaluate(
        """() => { const extra = document.createElement('div');
          extra.style.cssText = 'flex: 1 0 100%; height: 48px';
          document.querySelector('header.top').append(extra); }"""
    )
    await wait_for(page, f"() => ({GROWS})() <= {height + 0.5}", timeout=PATIENCE_MS)
    await _on_screen(page, "spectrangle", 390, height)
    await context.close()


async def test_a_clocked_scrabble_game_fits_a_phone(
    make_server: ServerFactory, browser: Browser
) -> None:
    """With clocks above the board on a phone, the board gives way: clocks, board, rack,
    scores and moves are all on screen; so at 1280×800 with the clocks beside it."""
    server = await make_server("twente")
    for width, height in SIZES:
        context = await browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{server.ports['web']}/play")
        await page.select_option("#create [name=game]", "scrabble/twente")
        await page.select_option("#create [name=clock]", "25+0")
        await page.click("#create button[type=submit]")
        await expect(page.locator("#waiting")).to_contain_text("clock: 25 min")
        await page.click("#bot")
        await my_turn(page)
        await expect(page.locator("#clocks .clock")).to_have_count(2)
        boxes = await _on_screen(page, "scrabble", width, height)
        assert "#clocks" in boxes, boxes
        await context.close()

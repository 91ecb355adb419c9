"""Every page at a phone's 390×844 in real Chromium (issue 34, "Narrow screens"): no page
scrolls sideways, and nothing on it is cut at the window's edge (the header's links,
the seated Scrabble page's score table with a 24-character name, the kits' guide's long
words), in the light and the dark scheme. Only a code sample or a player's table of
games may be wider than the window, and it scrolls in its own box (``pre``,
``.table-scroll``, which the keyboard reaches). The pages: the lobby, the play form, a
game of each kind seated (your turn) and watched, a finished game's replay, the games,
a player, the ratings, the account, the kits' guide and the contest console. On each,
axe-core (with the rules of its current release: ``serious_violations``) finds nothing
critical or serious."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import ServerFactory, end_game, screenshot, wait_for
from tests.web.test_play_issue24_browser import my_turn, serious_violations

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}
# A name as long as a name may be (24): the score table's widest cell.
LONG_NAME = "Wolfgang_Amadeus_Mozart1"

# What sticks out of the window sideways (a code sample's box scrolls: left out).
CUT = """() => {
  const width = Math.min(window.innerWidth, document.documentElement.clientWidth);
  const cut = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("pre, .table-scroll")) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
    if (r.left < -0.5 || r.right > width + 0.5) {
      const what = el.id ? `#${el.id}` : el.tagName.toLowerCase();
      const text = (el.textContent || "").trim().slice(0, 30);
      cut.push(`${what} "${text}" ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
  }
  return { scrollWidth: document.documentElement.scrollWidth, width, cut: cut.slice(0, 8) };
}"""


async def _fits(page: Page, where: str) -> None:
    """Nothing sideways on the page as it is now, and axe-core finds nothing critical or
    serious on it (issue 34: every page, seated and watching, light and dark)."""
    found: dict[str, Any] = await page.evaluate(CUT)
    assert found["scrollWidth"] <= found["width"], (where, found)
    assert found["cut"] == [], (where, found)
    assert await serious_violations(page) == [], where


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_no_page_scrolls_sideways_or_is_cut_on_a_phone(
    make_server: ServerFactory, browser: Browser, scheme: Literal["light", "dark"]
) -> None:
    """Each page at 390×844 (read the module doc): ``scrollWidth`` is at most the
    window's width, and no element but a code sample's reaches past either edge."""
    server = await make_server(
        "twente", "santorini", "spectrangle", "cmpn402", admin_token="t0ken", manual_start=True
    )
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context(color_scheme=scheme, viewport=PHONE)
    await context.add_init_script(f"localStorage.setItem('meeple.name', '{LONG_NAME}')")
    page = await context.new_page()
    shoot = scheme == "light"
    for path in ("/", "/play", "/account", "/check", "/cmpn402"):
        await page.goto(f"{base}{path}")
        await _fits(page, path)
    if shoot:
        await page.goto(f"{base}/")
        await screenshot(page, "narrow-lobby", widths=((390, 844),))
    uids = []
    for game in ("scrabble/twente", "santorini/standard", "spectrangle/standard"):
        name = game.split("/")[0]
        await page.goto(f"{base}/play?game={game}&bot=1")
        await my_turn(page)
        await expect(page.locator("#panel")).to_contain_text(LONG_NAME)
        await _fits(page, f"{game} seated")
        if shoot:
            await screenshot(page, f"narrow-play-{name}", widths=((390, 844),))
        uid = await page.evaluate("() => window.meeple.uid")
        uids.append(uid)
        watcher = await context.new_page()
        await watcher.goto(f"{base}/games/{uid}")
        await expect(watcher.locator("#board")).to_be_visible()
        await _fits(watcher, f"{game} watched")
        await watcher.close()
        await end_game(page)
        await wait_for(page, "() => !window.meeple.seated")
    for uid in uids:  # the finished games' replays
        await page.goto(f"{base}/games/{uid}")
        await expect(page.locator("#board")).to_be_visible()
        await _fits(page, f"replay {uid}")
    for path in ("/games", f"/players/{LONG_NAME}", "/ratings"):
        await page.goto(f"{base}{path}")
        await _fits(page, path)
    if shoot:
        await page.goto(f"{base}/games/{uids[0]}")
        await screenshot(page, "narrow-replay", widths=((390, 844),))
    await context.close()

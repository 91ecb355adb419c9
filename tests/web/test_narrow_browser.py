"""Every page at a phone's 390×844 and a desktop's 1280×900 in real Chromium, in the
light and the dark system scheme, in one tour of the pages per scheme (one server, one
context, one seated game of each kind: issue 33, the page loads are the browser tests'
CPU).

At 390 (issue 34, "Narrow screens"): no page scrolls sideways, and nothing on it is cut
at the window's edge (the header's links, the seated Scrabble page's score table with a
24-character name, the kits' guide's long words). Only a code sample or a player's table
of games may be wider than the window, and it scrolls in its own box (``pre``,
``.table-scroll``, which the keyboard reaches). The pages: the lobby, the play form, a
game of each kind seated (your turn) and watched, a finished game's replay, the games,
a player, the ratings, the account, the kits' guide and the contest console. On each,
axe-core (with the rules of its current release: ``serious_violations``) finds nothing
critical or serious.

At 1280 (issue 34, dark pages; issue 24, axe on the play pages): the lobby, play form,
games, ratings, account, the kits' guide, the contest console, and a game of each kind
seated and watched are drawn in the system's scheme (read from their colours), and no
text fails axe's contrast rule; in the light scheme axe-core finds nothing critical or
serious on the lobby, the play form, the kits' guide and the games seated and watched.
The header's scheme button is tested in tests/web/test_dark_mode_browser.py."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import (
    ServerFactory,
    axe,
    end_game,
    screenshot,
    screenshots_wanted,
    wait_for,
)
from tests.web.test_dark_mode_browser import Scheme, scheme_drawn
from tests.web.test_play_issue24_browser import AXE_OPTIONS, my_turn, serious_violations

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# axe-core's contrast rule alone, for the desktop looks whose other findings are not read.
CONTRAST_ONLY = {
    "resultTypes": ["violations"],
    "runOnly": {"type": "rule", "values": ["color-contrast"]},
}
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


class Desktop:
    """What the pages showed at 1280 px, asserted at the end (every finding at once):
    the scheme each was drawn in, axe's contrast findings, and (``serious``) its
    critical and serious ones."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self.schemes: dict[str, Scheme] = {}
        self.contrast: dict[str, list[str]] = {}
        self.serious: dict[str, list[str]] = {}

    async def look(self, page: Page, where: str, *, serious: bool) -> None:
        """The page widened to 1280 px (as loaded there: its styles and its own fit
        follow the window), read, and narrowed back to the phone's width."""
        await page.set_viewport_size(DESKTOP)
        try:
            self.schemes[where] = await scheme_drawn(page)
            # Only the contrast rule where only its findings are read: on the lobby a
            # whole run cost Chromium 0.10 s of CPU, the contrast rule 0.045 s (issue 33).
            options = AXE_OPTIONS if serious else CONTRAST_ONLY
            results = await axe().run(page, options=options)
            violations = results.response["violations"]
            self.contrast[where] = [
                f"{node['target']}: {node.get('failureSummary', '')[:160]}"
                for violation in violations
                if violation["id"] == "color-contrast"
                for node in violation["nodes"]
            ]
            if serious:
                self.serious[where] = [
                    f"{v['id']} ({v['impact']}): {len(v['nodes'])} × "
                    f"{[n['target'] for n in v['nodes'][:4]]}"
                    for v in violations
                    if v["impact"] in ("critical", "serious")
                ]
        finally:
            await page.set_viewport_size(PHONE)

    def check(self) -> None:
        assert self.schemes == dict.fromkeys(self.schemes, self.scheme), self.schemes
        assert self.contrast == {k: [] for k in self.contrast}, self.contrast
        assert self.serious == {k: [] for k in self.serious}, self.serious


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_page_fits_a_phone_and_is_readable_in_the_system_scheme(
    make_server: ServerFactory, browser: Browser, scheme: Literal["light", "dark"]
) -> None:
    """Each page at 390×844 and at 1280×900 in ``scheme`` (read the module doc): at 390
    ``scrollWidth`` is at most the window's width, no element but a code sample's reaches
    past either edge, and axe finds nothing critical or serious; at 1280 the page is drawn
    in the system's scheme with no text below axe's contrast rule (and, light, nothing
    critical or serious)."""
    server = await make_server(
        "twente", "santorini", "spectrangle", "cmpn402", admin_token="t0ken", manual_start=True
    )
    base = f"http://127.0.0.1:{server.ports['web']}"
    desktop = Desktop(scheme)
    light = scheme == "light"
    shoot = screenshots_wanted()
    context = await browser.new_context(color_scheme=scheme, viewport=PHONE)
    await context.add_init_script(f"localStorage.setItem('meeple.name', '{LONG_NAME}')")
    page = await context.new_page()
    for path in ("/", "/play", "/account", "/check", "/cmpn402"):
        await page.goto(f"{base}{path}")
        await _fits(page, path)
        await desktop.look(page, path, serious=light and path in ("/", "/play", "/check"))
        if shoot and path == "/":
            if light:
                await screenshot(page, "narrow-lobby", widths=((390, 844),))
            else:
                await screenshot(page, "dark-lobby")
    uids = []
    watcher = await context.new_page()
    for game in ("scrabble/twente", "santorini/standard", "spectrangle/standard"):
        name = game.split("/")[0]
        await page.goto(f"{base}/play?game={game}&bot=1")
        await my_turn(page)
        await expect(page.locator("#panel")).to_contain_text(LONG_NAME)
        await _fits(page, f"{game} seated")
        await desktop.look(page, game, serious=light)
        if shoot:
            if light:
                await screenshot(page, f"narrow-play-{name}", widths=((390, 844),))
            else:
                await screenshot(page, f"dark-play-{name}")
        uid = await page.evaluate("() => window.meeple.uid")
        uids.append(uid)
        await watcher.goto(f"{base}/games/{uid}")
        await expect(watcher.locator("#board")).to_be_visible()
        await _fits(watcher, f"{game} watched")
        await desktop.look(watcher, f"{game} watched", serious=light)
        await end_game(page)
        await wait_for(page, "() => !window.meeple.seated")
    await watcher.close()
    for uid in uids:  # the finished games' replays
        await page.goto(f"{base}/games/{uid}")
        await expect(page.locator("#board")).to_be_visible()
        await _fits(page, f"replay {uid}")
        if shoot and light and uid == uids[0]:
            await screenshot(page, "narrow-replay", widths=((390, 844),))
    for path in ("/games", f"/players/{LONG_NAME}", "/ratings"):
        await page.goto(f"{base}{path}")
        await _fits(page, path)
        if path in ("/games", "/ratings"):
            await desktop.look(page, path, serious=False)
    await context.close()
    desktop.check()

"""Dark pages (issue 34) in real Chromium: every page follows the system's scheme
(``prefers-color-scheme``), the header's button picks one for this browser and the pick
outlives a reload, and in both schemes axe-core finds no text below its contrast rule,
on the pages around the games and on a Scrabble, Santorini and Spectrangle game being
played and watched."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import ServerFactory, axe, end_game, screenshot, wait_for
from tests.web.test_play_issue24_browser import my_turn

pytestmark = pytest.mark.slow

Scheme = Literal["light", "dark"]

# The colours the page is drawn in: the page's background and the body's text, as sRGB.
COLOURS = """() => {
  const rgb = (c) => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  return {
    bg: rgb(getComputedStyle(document.documentElement).backgroundColor),
    fg: rgb(getComputedStyle(document.body).color),
  };
}"""


def _luminance(rgb: list[float]) -> float:
    """WCAG's relative luminance of an sRGB colour (0 black, 1 white)."""

    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


async def _scheme(page: Page) -> Scheme:
    """The scheme the page is drawn in, read from its colours (not from a class)."""
    colours: dict[str, list[float]] = await page.evaluate(COLOURS)
    bg, fg = _luminance(colours["bg"]), _luminance(colours["fg"])
    if bg < 0.05 and fg > 0.6:
        return "dark"
    assert bg > 0.8, colours  # one or the other, never half
    assert fg < 0.05, colours
    return "light"


async def _contrast(page: Page) -> list[str]:
    """axe-core's colour-contrast findings on the page as it is now."""
    options: dict[str, Any] = {
        "runOnly": {"type": "rule", "values": ["color-contrast"]},
        "resultTypes": ["violations"],
    }
    results = await axe().run(page, options=options)
    return [
        f"{node['target']}: {node.get('failureSummary', '')[:160]}"
        for violation in results.response["violations"]
        for node in violation["nodes"]
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_page_follows_the_system_scheme_with_readable_text(
    make_server: ServerFactory, browser: Browser, scheme: Scheme
) -> None:
    """With the system in ``scheme`` and no pick: the lobby, play form, games, ratings,
    account, the kits' guide, the contest console, and a game of each kind seated and
    watched are drawn in that scheme, and no text fails axe's contrast rule."""
    server = await make_server(
        "twente", "santorini", "spectrangle", "cmpn402", admin_token="t0ken", manual_start=True
    )
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context(
        color_scheme=scheme, viewport={"width": 1280, "height": 900}
    )
    page = await context.new_page()
    found: dict[str, list[str]] = {}
    schemes: dict[str, Scheme] = {}
    for path in ("/", "/play", "/games", "/ratings", "/account", "/check", "/cmpn402"):
        await page.goto(f"{base}{path}")
        schemes[path] = await _scheme(page)
        found[path] = await _contrast(page)
        if scheme == "dark" and path == "/":
            await screenshot(page, "dark-lobby")
    for game in ("scrabble/twente", "santorini/standard", "spectrangle/standard"):
        await page.goto(f"{base}/play?game={game}&bot=1")
        await my_turn(page)
        schemes[game] = await _scheme(page)
        found[game] = await _contrast(page)
        if scheme == "dark":
            await screenshot(page, f"dark-play-{game.split('/')[0]}")
        uid = await page.evaluate("() => window.meeple.uid")
        watcher = await context.new_page()
        await watcher.goto(f"{base}/games/{uid}")
        await expect(watcher.locator("#board")).to_be_visible()
        schemes[f"{game} watched"] = await _scheme(watcher)
        found[f"{game} watched"] = await _contrast(watcher)
        await watcher.close()
        await end_game(page)
        await wait_for(page, "() => !window.meeple.seated")
    assert schemes == dict.fromkeys(schemes, scheme), schemes
    assert found == {k: [] for k in found}, found
    await context.close()


async def test_the_header_button_picks_a_scheme_kept_per_browser(
    make_server: ServerFactory, browser: Browser
) -> None:
    """A light system: the button turns the pages dark (pressed), the pick outlives a
    reload and holds on every page; pressed again, the pick is forgotten and the pages
    follow the system. A dark system with "light" kept: the pages are light."""
    server = await make_server("twente")
    base = f"http://127.0.0.1:{server.ports['web']}"
    context = await browser.new_context(color_scheme="light")
    page = await context.new_page()
    await page.goto(f"{base}/")
    button = page.locator("#theme")
    await expect(button).to_be_visible()
    await expect(button).to_have_attribute("aria-pressed", "false")
    assert await _scheme(page) == "light"

    await button.click()
    await expect(button).to_have_attribute("aria-pressed", "true")
    assert await _scheme(page) == "dark"
    await page.reload()
    await expect(page.locator("#theme")).to_have_attribute("aria-pressed", "true")
    assert await _scheme(page) == "dark"
    await page.goto(f"{base}/ratings")
    assert await _scheme(page) == "dark"
    # Another tab of the same browser follows a pick made here.
    other = await context.new_page()
    await other.goto(f"{base}/games")
    assert await _scheme(other) == "dark"

    await page.locator("#theme").click()
    assert await _scheme(page) == "light"
    kept = await page.evaluate("() => localStorage.getItem('meeple-theme')")
    assert kept is None  # the system's own scheme: nothing kept
    await wait_for(other, "() => !document.documentElement.dataset.theme")
    assert await _scheme(other) == "light"
    await context.close()

    dark = await browser.new_context(color_scheme="dark")
    page = await dark.new_page()
    await page.goto(f"{base}/")
    assert await _scheme(page) == "dark"
    await page.evaluate("() => localStorage.setItem('meeple-theme', 'light')")
    await page.reload()
    assert await _scheme(page) == "light"
    await expect(page.locator("#theme")).to_have_attribute("aria-pressed", "false")
    # A stored value that is neither is ignored: the system's scheme.
    await page.evaluate("() => localStorage.setItem('meeple-theme', 'sepia<script>')")
    await page.reload()
    assert await _scheme(page) == "dark"
    assert await page.evaluate("() => document.documentElement.dataset.theme ?? null") is None
    await dark.close()

"""Dark pages (issue 34) in real Chromium: the header's button picks a scheme for this
browser, the pick outlives a reload and holds on every page, and a stored value that is
neither scheme is ignored. That every page follows the system's scheme
(``prefers-color-scheme``) with no text below axe's contrast rule, on the pages around
the games and on a game of each kind played and watched, is tested in
tests/web/test_narrow_browser.py (one tour of the pages per scheme)."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import ServerFactory, wait_for

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


async def scheme_drawn(page: Page) -> Scheme:
    """The scheme the page is drawn in, read from its colours (not from a class)."""
    colours: dict[str, list[float]] = await page.evaluate(COLOURS)
    bg, fg = _luminance(colours["bg"]), _luminance(colours["fg"])
    if bg < 0.05 and fg > 0.6:
        return "dark"
    assert bg > 0.8, colours  # one or the other, never half
    assert fg < 0.05, colours
    return "light"


# Every page in each system scheme, its colours and axe's contrast rule:
# tests/web/test_narrow_browser.py (one tour of the pages per scheme, issue 33).


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
    assert await scheme_drawn(page) == "light"

    await button.click()
    await expect(button).to_have_attribute("aria-pressed", "true")
    assert await scheme_drawn(page) == "dark"
    await page.reload()
    await expect(page.locator("#theme")).to_have_attribute("aria-pressed", "true")
    assert await scheme_drawn(page) == "dark"
    await page.goto(f"{base}/ratings")
    assert await scheme_drawn(page) == "dark"
    # Another tab of the same browser follows a pick made here.
    other = await context.new_page()
    await other.goto(f"{base}/games")
    assert await scheme_drawn(other) == "dark"

    await page.locator("#theme").click()
    assert await scheme_drawn(page) == "light"
    kept = await page.evaluate("() => localStorage.getItem('meeple-theme')")
    assert kept is None  # the system's own scheme: nothing kept
    await wait_for(other, "() => !document.documentElement.dataset.theme")
    assert await scheme_drawn(other) == "light"
    await context.close()

    dark = await browser.new_context(color_scheme="dark")
    page = await dark.new_page()
    await page.goto(f"{base}/")
    assert await scheme_drawn(page) == "dark"
    await page.evaluate("() => localStorage.setItem('meeple-theme', 'light')")
    await page.reload()
    assert await scheme_drawn(page) == "light"
    await expect(page.locator("#theme")).to_have_attribute("aria-pressed", "false")
    # A stored value that is neither is ignored: the system's scheme.
    await page.evaluate("() => localStorage.setItem('meeple-theme', 'sepia<script>')")
    await page.reload()
    assert await scheme_drawn(page) == "dark"
    assert await page.evaluate("() => document.documentElement.dataset.theme ?? null") is None
    await dark.close()

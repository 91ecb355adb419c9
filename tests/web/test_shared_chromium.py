"""The worker's shared Chromium (tests/web/helpers.py ``SharedChromium``): stopped, it
leaves no browser process behind, whatever started it; its one Playwright driver; and
a test's contexts do not outlive it (issue 33)."""

from __future__ import annotations

from pathlib import Path

import psutil
from playwright.async_api import Browser, Playwright
from tests.guard import SESSION_PIDS, children
from tests.web.helpers import SharedChromium, release


def test_stop_leaves_no_browser_process_and_ends_the_drainer(tmp_path: Path) -> None:
    chromium = SharedChromium(tmp_path / "profile")
    assert chromium.endpoint().startswith("ws://127.0.0.1:")
    process = chromium._process
    assert process is not None
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    drainer = chromium._drainer
    chromium.stop()
    _gone, alive = psutil.wait_procs(tree, timeout=30)
    assert not alive, alive
    assert drainer is not None
    assert not drainer.is_alive()


async def test_every_browser_test_of_a_worker_talks_through_one_playwright_driver(
    browser: Browser, playwright_driver: Playwright
) -> None:
    """One node.js driver per worker, the session's (issue 33): a test's browser is
    connected through it, and no driver process is the test's own."""
    assert browser._impl_obj._connection is playwright_driver._impl_obj._connection
    drivers = [p for p in children().values() if "run-driver" in " ".join(p.cmdline())]
    assert len(drivers) == 1, drivers
    assert drivers[0].pid in SESSION_PIDS


async def test_what_a_test_leaves_in_the_shared_chromium_does_not_reach_the_next(
    browser: Browser, playwright_driver: Playwright, shared_chromium: SharedChromium
) -> None:
    """A test's contexts (pages, cookies, storage) end with it: the next test's
    connection sees only Chromium's empty default context."""
    context = await browser.new_context()
    await context.add_cookies([{"name": "seat", "value": "pia", "url": "http://127.0.0.1/"}])
    await context.new_page()
    await release(browser)
    following = await playwright_driver.chromium.connect_over_cdp(shared_chromium.endpoint())
    try:
        assert len(following.contexts) == 1
        [default] = following.contexts
        assert await default.cookies() == []
        assert [page.url for page in default.pages] in ([], ["about:blank"])
    finally:
        await release(following)


async def test_a_page_costs_its_own_renderer_and_no_more(
    browser: Browser, shared_chromium: SharedChromium
) -> None:
    """No renderer for the address bar's popups (Chromium 156 preloaded them as WebUI in
    every window, headless too) and no spare one (helpers.py ``CHROMIUM_ARGS``): with two
    contexts of a page each open, Chromium runs a renderer per page and the default
    context's blank one, no more (each was CPU a context paid, issue 33)."""
    pages = [await (await browser.new_context()).new_page() for _ in range(2)]
    for page in pages:
        await page.set_content("<p>meeple</p>")
    process = shared_chromium._process
    assert process is not None
    renderers = [
        " ".join(p.cmdline())
        for p in psutil.Process(process.pid).children(recursive=True)
        if "--type=renderer" in " ".join(p.cmdline())
    ]
    assert not [r for r in renderers if "--top-chrome-webui" in r], renderers
    assert len(renderers) <= len(pages) + 1, renderers

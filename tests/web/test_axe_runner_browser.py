"""The tests' axe-core runner (tests/web/helpers.py ``axe``): the pinned release, put
into a document once and run there as often as asked (issue 33)."""

from __future__ import annotations

import pytest
from axe_playwright_python.base import AxeResults
from playwright.async_api import Browser
from tests.web.helpers import axe

pytestmark = pytest.mark.slow

PAGE = '<html lang="en"><title>t</title><main><img src="data:,"></main></html>'


def _ids(results: AxeResults) -> set[str]:
    return {v["id"] for v in results.response["violations"]}


async def test_axe_is_put_into_a_document_once_and_finds_the_same_each_run(
    browser: Browser,
) -> None:
    """A second run in the same document reuses its axe (a mark left on it stays) and
    finds what the first found; a new document gets the pinned release again."""
    page = await (await browser.new_context()).new_page()
    await page.set_content(PAGE)
    first = await axe().run(page)
    assert "image-alt" in _ids(first)
    assert await page.evaluate("() => window.axe.version") == axe().version
    await page.evaluate("() => { window.axe.seen = true; }")
    again = await axe().run(page)
    assert _ids(again) == _ids(first)
    assert await page.evaluate("() => window.axe.seen === true")
    await page.goto("about:blank")
    await page.set_content(PAGE)
    third = await axe().run(page, options={"runOnly": ["image-alt"]})
    assert _ids(third) == {"image-alt"}
    assert await page.evaluate("() => window.axe.seen === undefined")

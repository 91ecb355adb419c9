"""Real Chromium (issue 34.5): two spectators of a live game chat on its page."""

from __future__ import annotations

import json

import pytest
from playwright.async_api import Browser, expect
from tests.web.helpers import ServerFactory, screenshot, web_socket

pytestmark = pytest.mark.slow


async def test_a_spectator_writes_and_another_reads_on_the_live_page(
    browser: Browser, make_server: ServerFactory
) -> None:
    """pia plays a bot; kim and lee watch /games/<uid>. kim's line (markup in it shows
    as text) appears on both pages under "Spectators' chat"; pia's play page has none."""
    server = await make_server()
    pia = await web_socket(server)
    await pia.send(
        json.dumps(
            {"type": "create", "game": "santorini", "variant": "standard", "size": 2, "name": "pia"}
        )
    )
    while (seated := json.loads(await pia.recv()))["type"] != "seated":
        pass
    await pia.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
    while (view := json.loads(await pia.recv()))["type"] != "seat":
        pass
    url = f"http://127.0.0.1:{server.ports['web']}/games/{view['uid']}"
    kim = await (await browser.new_context()).new_page()
    lee = await (await browser.new_context()).new_page()
    for page in (kim, lee):
        await page.goto(url)
        await expect(page.locator("#watch-chat")).to_be_visible()
    await kim.fill("#watch-chat [name=name]", "kim")
    await kim.fill("#watch-chat [name=text]", "<i>nice</i> opening")
    await kim.press("#watch-chat [name=text]", "Enter")
    for page in (kim, lee):
        line = page.locator("#watch-chat-log .line")
        await expect(line).to_have_text("kim <i>nice</i> opening")
        await expect(page.locator("#watch-chat-log i")).to_have_count(0)
    await lee.fill("#watch-chat [name=name]", "pia")  # a player's name: refused, in words
    await lee.fill("#watch-chat [name=text]", "hi")
    await lee.click("#watch-chat button[type=submit]")
    await expect(lee.locator("#watch-chat-status")).to_contain_text("plays this game")
    await screenshot(lee, "live-spectator-chat")
    await pia.close()

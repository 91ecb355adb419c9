"""The pages under their Content-Security-Policy in real Chromium (issue 22): every page
still works (no CSP violation in the console, the live updates run), and no page can be
framed by another site."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, expect
from tests.web.helpers import ServerFactory

from meeple.clients.twente import TwenteClient
from meeple.protocols.twente.messages import StartGame
from meeple.server.lobby.tables import Lobby, server_lobby

pytestmark = pytest.mark.slow

TOKEN = "csp-admin-token"


def _watch(page: Page, problems: list[str]) -> None:
    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"{page.url}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"{page.url}: {error}"))


async def test_every_page_works_under_its_csp(make_server: ServerFactory, browser: Browser) -> None:
    """Lobby, play, games, a live game, the signed-in console, ratings and account load
    with no console error (a CSP violation is one), and their live parts connect."""
    server = await make_server("twente", "cmpn402", admin_token=TOKEN, manual_start=True)
    lobby: Lobby = server_lobby(server.services)
    port = server.ports["twente"]
    ann = await TwenteClient.connect("127.0.0.1", port, "ann")
    bob = await TwenteClient.connect("127.0.0.1", port, "bob")
    problems: list[str] = []
    try:
        await ann.request_game(2)
        await bob.request_game(2)
        while not isinstance(await ann.receive(), StartGame):
            pass
        room = lobby.rooms[0]
        base = f"http://127.0.0.1:{server.ports['web']}"
        context = await browser.new_context()
        page = await context.new_page()
        _watch(page, problems)

        await page.goto(f"{base}/")
        await expect(page.locator("#live")).to_be_visible()  # its WebSocket is open
        await expect(page.locator(f"#rooms tr[data-uid='{room.uid}']")).to_contain_text("ann")
        await page.goto(f"{base}/games/{room.uid}")
        await expect(page.locator("#live")).to_be_visible()
        await expect(page.locator("#board .sq").first).to_be_visible()
        for path in ("/play", "/games", "/ratings", "/account", "/check"):
            await page.goto(f"{base}{path}")
            await page.wait_for_load_state("networkidle")
        await page.goto(f"{base}/cmpn402")
        await page.fill("#login input[name=token]", TOKEN)
        await page.click("#login button")
        await expect(page.locator("#actions")).to_be_visible()
        await expect(page.locator("#live")).to_be_visible()
        await asyncio.sleep(0.3)
        assert problems == []
    finally:
        await ann.close()
        await bob.close()


async def test_no_page_can_be_framed(make_server: ServerFactory, browser: Browser) -> None:
    """A page of another origin that frames the console gets nothing of it (frame-ancestors
    'none', X-Frame-Options DENY): clickjacking the admin is not possible."""
    server = await make_server("cmpn402", admin_token=TOKEN, manual_start=True)
    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    problems: list[str] = []
    _watch(page, problems)
    await page.set_content(f'<iframe id="f" src="{base}/cmpn402"></iframe>')
    await page.wait_for_timeout(1000)
    framed = [f for f in page.frames if f != page.main_frame]
    assert framed
    login = 0
    for frame in framed:
        with_login = await frame.locator("#login").count() if not frame.is_detached() else 0
        login += with_login
    assert login == 0
    assert any("frame" in p.lower() for p in problems), problems

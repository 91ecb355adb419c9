"""The contest console in real Chromium against the real CMPN402 referee and two agents."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest
from playwright.async_api import Browser, expect
from tests.patience import PATIENCE_MS, eventually
from tests.web.helpers import ServerFactory, screenshot

from meeple.clients.cmpn402 import BuiltinAgent, Move, View, play
from meeple.games.scrabble.lexicon import Lexicon

pytestmark = pytest.mark.slow

TOKEN = "s3cret-token"


class SlowAgent(BuiltinAgent):
    """The built-in agent, thinking a while before each move so a game lasts."""

    async def choose_move(self, view: View) -> Move:  # type: ignore[override]
        await asyncio.sleep(0.25)
        return super().choose_move(view)


async def test_console_pauses_and_resumes_a_game_and_refuses_without_the_token(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Signed in with the admin token the page starts, pauses and resumes the game; the
    same action without the session cookie is 401, with a wrong CSRF token 403."""
    server = await make_server("cmpn402", admin_token=TOKEN, manual_start=True, challenge_time=0.2)
    console = server.services.console
    assert console is not None
    uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
    agents = [
        asyncio.create_task(play(uri, name, SlowAgent(gcide), reconnect_for=0))
        for name in ("alice", "bob")
    ]
    try:
        await eventually(
            lambda: (
                sum(a["connected"] and a["name"] is not None for a in console.snapshot()["agents"])
                == 2
            ),
            "two agents named",
            every=0.01,
        )
        base = f"http://127.0.0.1:{server.ports['web']}"
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(f"{base}/cmpn402")
        await expect(page.locator("#login")).to_be_visible()
        await expect(page.locator("#actions")).to_have_count(0)
        await expect(page.locator("#console-live")).to_contain_text("alice")
        await screenshot(page, "console-signed-out")

        await page.fill("#login input[name=token]", "wrong")
        response = await page.request.post(f"{base}/cmpn402/login", form={"token": "wrong"})
        assert response.status == 403
        await page.fill("#login input[name=token]", TOKEN)
        await page.click("#login button")
        await expect(page.locator("#actions")).to_be_visible()
        cookie = next(c for c in await context.cookies() if c["name"] == "meeple_console")
        assert cookie["httpOnly"]
        assert cookie["secure"]
        assert cookie["sameSite"] == "Strict"

        await expect(page.locator("#console-live[data-ready]")).to_be_attached()
        await page.click("[data-action=start]")
        await expect(page.locator(".flash")).to_be_visible()
        await expect(page.locator("#state")).to_have_text("running", timeout=PATIENCE_MS)
        await expect(page.locator(".cboard .tile").first).to_be_visible(timeout=PATIENCE_MS)
        await page.click("[data-action=pause]")
        await expect(page.locator("#state")).to_have_text("paused", timeout=PATIENCE_MS)
        assert console.snapshot()["state"] == "paused"
        [board] = console.snapshot()["boards"]
        assert board["clocks"]["running"] is False
        await screenshot(page, "console")

        # The same action without the token: no cookie is 401, a wrong CSRF token 403.
        async with httpx.AsyncClient(verify=False, base_url=base) as anonymous:
            refused = await anonymous.post("/cmpn402/action", data={"action": "resume"})
        assert refused.status_code == 401
        forged = await page.request.post(
            f"{base}/cmpn402/action", form={"action": "resume", "csrf": "forged"}
        )
        assert forged.status == 403
        assert console.snapshot()["state"] == "paused"

        lobby = await context.new_page()
        await lobby.goto(f"{base}/")
        await expect(lobby.locator("#contest")).to_contain_text("alice v bob")
        await expect(lobby.locator("#contest")).to_contain_text("State paused")

        await page.click("[data-action=resume]")
        await expect(page.locator("#state")).to_have_text("running", timeout=PATIENCE_MS)
        assert console.snapshot()["state"] == "running"
        await expect(lobby.locator("#contest")).to_contain_text("State running")  # live
        await lobby.close()
        await page.click("[data-action=stop]")
        await expect(page.locator("#state")).not_to_have_text("running", timeout=PATIENCE_MS)
        await context.close()
    finally:
        for task in agents:
            task.cancel()
        for task in agents:
            with contextlib.suppress(BaseException):
                await task

"""A browser game survives the server (issue "No game is lost"): `meeple serve` is killed
with SIGKILL mid-game and started again on the same database and port. The open tab
reconnects by itself and is back in its seat; a tab closed while the server was down
comes back in a new tab. Real Chromium, a real server process."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect
from tests.patience import PATIENCE_MS
from tests.serve import Serve
from tests.web.helpers import NEXT_VIEW, type_move, wait_for

from meeple.games.scrabble.lexicon import Lexicon

pytestmark = pytest.mark.slow

MY_TURN = """() => {
  const v = window.meeple.view;
  return v && !v.over && v.turn === v.you ? v : null;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _my_turn(page: Page) -> dict[str, Any]:
    view: dict[str, Any] = await (await wait_for(page, MY_TURN, timeout=PATIENCE_MS)).json_value()
    return view


async def _sit_against_a_bot(page: Page, port: int) -> dict[str, Any]:
    await page.goto(f"http://127.0.0.1:{port}/play")
    await page.fill("#create [name=name]", "pat")
    await page.select_option("#create [name=game]", "scrabble/twente")
    await page.fill("#create [name=size]", "2")
    await page.click("#create button[type=submit]")
    await expect(page.locator("#play")).to_be_visible()
    await page.click("#bot")
    return await _my_turn(page)


async def _play_one(page: Page, view: dict[str, Any], lexicon: Lexicon) -> dict[str, Any]:
    seen = len(view["moves"])
    await type_move(page, view, lexicon)
    after: dict[str, Any] = await (
        await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
    ).json_value()
    return after


@pytest.mark.parametrize("runtime", ["server", "node"])
async def test_the_open_tab_is_back_in_its_seat_after_a_crash(
    tmp_path: Path, browser: Browser, gcide: Lexicon, runtime: str
) -> None:
    """The tab stays open across SIGKILL and restart: it reconnects, its token (kept per
    browser) takes the seat back, the board and rack are as they were, and it plays on.
    Either runtime (issue 32.2: the node's restart is a takeover of its own rooms)."""
    database, port = tmp_path / "db.sqlite3", _free_port()
    context = await browser.new_context(viewport={"width": 1280, "height": 1100})
    page = await context.new_page()
    first = Serve(database, "--web-port", str(port), "--runtime", runtime)
    try:
        view = await _sit_against_a_bot(page, port)
        before = await _play_one(page, view, gcide)
        if before["turn"] != before["you"]:
            before = await _my_turn(page)
    finally:
        first.kill()
    # The page sees its socket close; its last view is dropped so that only a view from
    # the new process counts below.
    await wait_for(page, "() => !window.meeple.seated", timeout=PATIENCE_MS)
    await page.evaluate("() => { window.meeple.view = null; }")
    second = Serve(database, "--web-port", str(port), "--runtime", runtime)
    try:
        await wait_for(page, "() => window.meeple.seated", timeout=PATIENCE_MS)
        await expect(page.locator("#who")).to_have_text("You are pat", timeout=PATIENCE_MS)
        back = await _my_turn(page)
        for key in ("board", "rack", "moves", "scores"):
            assert back[key] == before[key], key
        await _play_one(page, back, gcide)
        assert "restored from its log" in second.log
    finally:
        await context.close()
        second.stop()


async def test_a_tab_closed_while_the_server_was_down_comes_back_in_a_new_tab(
    tmp_path: Path, browser: Browser, gcide: Lexicon
) -> None:
    """SIGKILL, the tab is closed, the server restarts: a new tab of the same browser
    opens /play and is back in the seat (the token and the held seat both survived)."""
    database, port = tmp_path / "db.sqlite3", _free_port()
    context = await browser.new_context(viewport={"width": 1280, "height": 1100})
    page = await context.new_page()
    first = Serve(database, "--web-port", str(port))
    try:
        before = await _sit_against_a_bot(page, port)
    finally:
        first.kill()
    await page.close()
    second = Serve(database, "--web-port", str(port))
    try:
        again = await context.new_page()
        await again.goto(f"http://127.0.0.1:{port}/play")
        await expect(again.locator("#who")).to_have_text("You are pat", timeout=PATIENCE_MS)
        await expect(again.locator("#join")).to_be_hidden()
        back = await _my_turn(again)
        assert back["rack"] == before["rack"]
        assert back["board"] == before["board"]
        await _play_one(again, back, gcide)
    finally:
        await context.close()
        second.stop()

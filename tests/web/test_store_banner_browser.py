"""The store's banner (docs/durability.md, Faults): while the database refuses writes the
lobby says so, live, and the banner goes when writes are taken again. Real Chromium; the
refusal is SQLite's own (the store's connection made read-only)."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser, expect
from tests.patience import PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot

from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.store.journal import server_store

pytestmark = pytest.mark.slow


async def test_the_lobby_shows_the_banner_while_the_database_refuses_writes(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """A Twente game is played while SQLite refuses writes: the open lobby page shows the
    banner (and the game is not stored yet); writes taken again: the banner goes and the
    game is stored."""
    server = await make_server("twente")
    store = server_store(server.services)
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/")
    banner = page.locator("#store-trouble")
    await expect(banner).to_be_hidden()
    store._db.read("PRAGMA query_only = ON")
    port = server.ports["twente"]
    await asyncio.wait_for(
        asyncio.gather(*(play_twente("127.0.0.1", port, n, gcide) for n in ("ann", "bob"))), 60
    )
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("not taking writes")
    assert store.games() == []
    await screenshot(page, "lobby-store-trouble")
    store._db.read("PRAGMA query_only = OFF")
    await expect(banner).to_be_hidden(timeout=PATIENCE_MS)
    assert len(store.games()) == 1
    await page.close()

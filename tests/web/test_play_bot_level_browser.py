"""The play page's bot menu: the level picked is the level of the bot that sits."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser
from tests.patience import eventually
from tests.web.helpers import ServerFactory, open_table

from meeple.server.lobby.bots import BotSeat
from meeple.server.lobby.tables import server_lobby

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("level", ["easy", "medium"])
async def test_the_bot_menu_picks_the_bots_level(
    make_server: ServerFactory, browser: Browser, level: str
) -> None:
    server = await make_server("santorini")
    page = await browser.new_page()
    try:
        await open_table(page, server, "pat", "santorini/standard", 2)
        await page.select_option("#bot-level-seated", level)
        await page.click("#bot")
        lobby = server_lobby(server.services)

        def bots_now() -> list[BotSeat]:
            return [s for room in lobby.rooms for s in room.seats if isinstance(s, BotSeat)]

        await eventually(lambda: bool(bots_now()), "a bot seated")
        bots = bots_now()
        assert [b.level for b in bots] == [level]
        assert bots[0].player.max_depth == {"easy": 1, "medium": 3}[level]
    finally:
        await page.close()

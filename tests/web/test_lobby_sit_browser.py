"""From the lobby page to a seat: a waiting table's "sit here" link (issue 13, Chromium)."""

from __future__ import annotations

from playwright.async_api import Browser, expect
from tests.web.helpers import ServerFactory

from meeple.clients.twente import TwenteClient
from meeple.server.lobby.tables import server_lobby


async def test_sit_here_on_the_lobby_seats_the_browser_at_that_table(
    make_server: ServerFactory, browser: Browser
) -> None:
    """A Twente client waits for a two-player game; the lobby page shows its table live
    with a "sit here" link; the play page it opens marks that table, and Sit there
    starts the game with the Twente client."""
    server = await make_server("twente")
    base = f"http://127.0.0.1:{server.ports['web']}"
    page = await browser.new_page()
    await page.goto(f"{base}/")
    twente = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "ann")
    try:
        await twente.request_game(2)
        link = page.locator("#queues a.sit")
        await expect(link).to_have_count(1)  # live: the table opened after the page loaded
        [table] = server_lobby(server.services).snapshot()["tables"]
        table_id = table["id"]
        # The server-rendered lobby has the link too (no JavaScript needed to see it).
        lobby = await page.context.request.get(f"{base}/")
        assert f'href="/play?table={table_id}"' in await lobby.text()
        await link.click()
        await expect(page).to_have_url(f"{base}/play?table={table_id}")
        row = page.locator(f'#tables tr.invited[data-table="{table_id}"]')
        await expect(row).to_contain_text("ann (twente)")
        await expect(page.locator("#status")).to_have_text(
            f"Pick a name and press Sit to join {table_id}."
        )
        await page.fill("#create [name=name]", "pat")
        await row.locator("button.sit").click()
        await expect(page.locator("#who")).to_have_text("You are pat")
        # Full: the game starts, the Twente client's turn or ours.
        await expect(page.locator("#board .sboard")).to_be_visible()
        await expect(page.locator("#panel")).to_contain_text("ann")
    finally:
        await twente.close()
    await page.close()

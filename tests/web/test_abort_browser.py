"""Real Chromium (issue 34.4): Abort until your first move, Resign after; both pages see it."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import ServerFactory, open_table, screenshot, stored_game

from meeple.server.app import MeepleServer
from meeple.server.lobby.tables import server_lobby
from meeple.server.store.database import Store

pytestmark = pytest.mark.slow


async def _two_players(
    browser: Browser, make_server: ServerFactory, game: str
) -> tuple[MeepleServer, list[Page]]:
    """ann opens a two-seat ``game`` table in one browser, bob sits in another."""
    server = await make_server()
    ann = await (await browser.new_context()).new_page()
    bob = await (await browser.new_context()).new_page()
    await open_table(ann, server, "ann", game, 2)
    await bob.goto(f"http://127.0.0.1:{server.ports['web']}/play")
    await bob.fill("#create [name=name]", "bob")
    await bob.locator("#tables button.sit").first.click()
    for page in (ann, bob):
        await expect(page.locator("#panel")).to_contain_text("bob")  # the game is on
    return server, [ann, bob]


async def test_either_player_aborts_before_moving_and_both_pages_say_so(
    browser: Browser, make_server: ServerFactory
) -> None:
    """At the start both pages offer Abort, not Resign; bob aborts (during Santorini's
    set-up, which is no move) and both pages say "Game aborted", with no Resign left."""
    _, (ann, bob) = await _two_players(browser, make_server, "santorini/standard")
    for page in (ann, bob):
        await expect(page.locator("#abort")).to_be_visible()
        await expect(page.locator("#resign")).to_be_hidden()
    await screenshot(bob, "play-abort")
    await bob.click("#abort")
    for page, who in ((ann, "bob"), (bob, "you")):
        await expect(page.locator("#result")).to_have_text(
            f"Game aborted by {who}: it is not rated."
        )
        await expect(page.locator("#abort")).to_be_hidden()
        await expect(page.locator("#resign")).to_be_hidden()
    await screenshot(ann, "play-aborted")


async def test_after_a_move_the_button_is_resign_and_the_resignation_is_rated(
    browser: Browser, make_server: ServerFactory
) -> None:
    """The Scrabble player to move passes: their page's button becomes Resign while the
    other's is still Abort. They resign (the page asks; Keep playing keeps it): the other page says
    "<name> resigned. <other> wins", the store says "resigned" and both are rated."""
    server, pages = await _two_players(browser, make_server, "scrabble/twente")
    [room] = server_lobby(server.services).rooms
    turn = room.game.turn  # type: ignore[attr-defined]
    mover, other = pages[turn], pages[1 - turn]
    names = ("ann", "bob")
    await mover.locator("#controls button.pass").click()
    await expect(mover.locator("#resign")).to_be_visible()
    await expect(mover.locator("#abort")).to_be_hidden()
    await expect(other.locator("#abort")).to_be_visible()
    await mover.click("#resign")  # asked first; "Keep playing" keeps the game
    await expect(mover.locator("#confirm-resign")).to_be_visible()
    await mover.click("#resign-no")
    await expect(mover.locator("#confirm-resign")).to_be_hidden()
    await mover.click("#resign")
    await mover.click("#resign-yes")
    await expect(other.locator("#result")).to_contain_text(f"{names[turn]} resigned. You win")
    await expect(other.locator("#panel .result")).to_contain_text(
        f"Game over (resigned: {names[turn]} resigned). Winner: {names[1 - turn]}."
    )
    await screenshot(other, "play-resigned")
    record = await stored_game(server, "scrabble")
    assert record.end_reason == "resigned"
    store: Store = server.services.store
    assert {r.player for r in store.leaderboard("scrabble")} == {"ann", "bob"}

"""Real Chromium plays (issue 13): a person's page at a table with a Twente client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect
from tests.web.helpers import ServerFactory, screenshot

from meeple.ai.scrabble import ranked_moves
from meeple.clients.scrabble_bot import play_twente
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH

pytestmark = pytest.mark.slow

# The page's next view to act on: the game over, or this seat's turn after ``moves``.
NEXT_VIEW = """(seen) => {
  const v = window.meeple.view;
  if (!v) return null;
  if (v.over) return v;
  if (v.turn === v.you && v.moves.length > seen) return v;
  return null;
}"""


def _board(rows: list[str]) -> Board:
    board = Board()
    for y, row in enumerate(rows):
        for x, square in enumerate(row):
            if square != ".":
                board.place(x, y, square)
    return board


async def _move(page: Page, view: dict[str, Any], gcide: Lexicon) -> None:
    """Play the AI's choice the way a person does: click, type, Enter (or the buttons)."""
    rack = view["rack"]
    found = ranked_moves(_board(view["board"]), rack, gcide, ENGLISH)
    if not found:
        if view["bag"]:
            await page.fill("#exchange", rack[0] if rack[0] != "?" else rack[-1])
            await page.click("#controls .exchange")
        else:
            await page.click("#controls .pass")
        return
    tiles = sorted(found[0].tiles, key=lambda t: (t.y, t.x))
    first = tiles[0]
    square = f'#board .sq[data-x="{first.x}"][data-y="{first.y}"]'
    await page.click(square)
    if len(tiles) > 1 and tiles[1].x == first.x:
        await page.click(square)  # a second click: downwards
    for t in tiles:
        if t.tile.islower():
            await page.keyboard.press("?")  # the next letter is a blank's
        await page.keyboard.press(t.tile.upper())
    await page.keyboard.press("Enter")


async def test_a_person_plays_a_whole_scrabble_game_against_a_twente_bot(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """The page opens a Twente-variant table; a Twente bot's ENQUEUE fills it; the
    person clicks squares and types every word (blanks with ?) until the game ends,
    and the page's final scores are the bot's."""
    server = await make_server("twente")
    page = await browser.new_page()
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/play")
    await page.fill("#create [name=name]", "pat")
    await page.select_option("#create [name=game]", "scrabble/twente")
    await page.fill("#create [name=size]", "2")
    await page.click("#create button[type=submit]")
    await expect(page.locator("#play")).to_be_visible()
    await expect(page.locator("#tables")).to_contain_text("pat (web)")
    twente = asyncio.create_task(
        play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2)
    )
    seen = -1
    shot = False
    while True:
        handle = await page.wait_for_function(NEXT_VIEW, arg=seen, timeout=30_000)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        if not shot and len(view["moves"]) >= 4:
            await screenshot(page, "play-scrabble")
            shot = True
        seen = len(view["moves"])
        await _move(page, view, gcide)
    [result] = await asyncio.wait_for(twente, 60)
    assert result.reason == "WIN"
    assert dict(zip(view["players"], view["result"]["scores"], strict=True)) == result.scores
    await expect(page.locator("#status")).to_have_text("The game is over.")
    await page.close()

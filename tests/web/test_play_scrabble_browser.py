"""The Scrabble play page in real Chromium (issue 13): drag and drop, the blank's letter,
the score preview, and a whole game against a Clarkson bot at a Clarkson-variant table."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, expect
from tests.web.helpers import ServerFactory

from meeple.ai.scrabble import ranked_moves
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH

pytestmark = pytest.mark.slow

# With this server seed the page's player (the table's first seat, first to move) holds
# a blank at a two-seat Twente table filled by one server bot: SEILMM? (checked below).
BLANK_SEED = 21

MY_TURN = """() => {
  const v = window.meeple.view;
  return v && !v.over && v.turn === v.you ? v : null;
}"""


def _board(rows: list[str]) -> Board:
    board = Board()
    for y, row in enumerate(rows):
        for x, square in enumerate(row):
            if square != ".":
                board.place(x, y, square)
    return board


def square(page: Page, x: int, y: int) -> Locator:
    return page.locator(f'#board .sq[data-x="{x}"][data-y="{y}"]')


async def drag(page: Page, source: Locator, target: Locator, *, dx: float = 0) -> None:
    """Press on ``source``, move in steps, let go over ``target`` (``dx`` px off its centre)."""
    a, b = await source.bounding_box(), await target.bounding_box()
    assert a is not None
    assert b is not None
    await page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    await page.mouse.down()
    await page.mouse.move(b["x"] + b["width"] / 2 + dx, b["y"] + b["height"] / 2, steps=8)
    await page.mouse.up()


async def placed(page: Page) -> list[list[Any]]:
    result: list[list[Any]] = await page.evaluate("() => window.meeple.placed")
    return result


async def rack(page: Page) -> list[str]:
    tiles: list[str] = await page.locator("#mine .rtile").evaluate_all(
        "(ts) => ts.map((t) => t.dataset.tile)"
    )
    return tiles


async def _open_table(page: Page, port: int, name: str, game: str, size: int, **kw: Any) -> None:
    await page.goto(f"http://127.0.0.1:{port}/play")
    await page.fill("#create [name=name]", name)
    await page.select_option("#create [name=game]", game)
    await page.fill("#create [name=size]", str(size))
    if kw.get("ready"):
        await page.check("#create [name=ready]")
    await page.click("#create button[type=submit]")
    await expect(page.locator("#play")).to_be_visible()


async def test_tiles_are_dragged_blanks_ask_their_letter_and_plays_are_previewed(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Against a server bot: a rack tile dragged to a square, from there to another and
    back to the rack; the rack reordered by dragging and shuffled; a blank dropped (or
    typed with ?) asks for its letter (Escape cancels); the preview shows the engine's
    score for the AI's best play, its refusal of a phony, and the play sent scores it."""
    server = await make_server(seed=BLANK_SEED)
    page = await browser.new_page()
    await _open_table(page, server.ports["web"], "pat", "scrabble/twente", 2)
    await page.click("#bot")
    view: dict[str, Any] = await (
        await page.wait_for_function(MY_TURN, timeout=30_000)
    ).json_value()
    assert sorted(view["rack"]) == sorted("SEILMM?")
    assert sorted(await rack(page)) == sorted(view["rack"])

    # A rack tile to the centre, on to the next square, and back to the rack's end.
    await drag(page, page.locator('#mine .rtile[data-tile="S"]'), square(page, 7, 7))
    assert await placed(page) == [[7, 7, "S"]]
    await expect(square(page, 7, 7).locator(".tile.tent")).to_have_text("S")
    assert "S" not in await rack(page)
    await drag(page, square(page, 7, 7).locator(".tile"), square(page, 8, 7))
    assert await placed(page) == [[8, 7, "S"]]
    last = page.locator("#mine .rtile").last
    await drag(page, square(page, 8, 7).locator(".tile"), last, dx=30)
    assert await placed(page) == []
    order = await rack(page)
    assert order[-1] == "S"
    assert len(order) == 7

    # Reorder: the first tile dragged past the last; Shuffle keeps the same tiles.
    await drag(page, page.locator("#mine .rtile").first, page.locator("#mine .rtile").last, dx=30)
    assert await rack(page) == order[1:] + order[:1]
    await page.click("#mine .shuffle")
    assert sorted(await rack(page)) == sorted(order)

    # A blank dropped on the board asks for its letter: Escape takes it back to the rack.
    await drag(page, page.locator('#mine .rtile[data-tile="?"]'), square(page, 7, 7))
    await expect(page.locator("#chooser")).to_be_visible()
    await expect(square(page, 7, 7)).to_have_class(re.compile(r"\bchoosing\b"))
    await page.keyboard.press("Escape")
    await expect(page.locator("#chooser")).to_be_hidden()
    assert await placed(page) == []
    assert "?" in await rack(page)
    # Dropped again, a click on a letter names it.
    await drag(page, page.locator('#mine .rtile[data-tile="?"]'), square(page, 7, 7))
    await page.click('#chooser button:text-is("E")')
    assert await placed(page) == [[7, 7, "e"]]
    await expect(square(page, 7, 7).locator(".tile")).to_have_class(re.compile(r"\bblank\b"))
    assert "?" not in await rack(page)
    # Typed: ? opens the chooser at the cursor, the next letter names it.
    await page.keyboard.press("Escape")
    await square(page, 6, 7).click()
    await page.keyboard.press("?")
    await expect(page.locator("#chooser")).to_be_visible()
    await page.keyboard.press("x")
    await expect(page.locator("#chooser")).to_be_hidden()
    assert await placed(page) == [[6, 7, "x"]]
    await page.keyboard.press("Escape")
    assert await placed(page) == []

    # A phony across the centre: Twente checks words on play, so the preview says so.
    await square(page, 7, 7).click()
    for letter in "MMS":
        await page.keyboard.press(letter)
    await expect(page.locator("#preview")).to_have_text("Not allowed: not in the lexicon: MMS")
    await expect(page.locator("#preview")).to_have_class(re.compile(r"\brefusal\b"))
    await page.keyboard.press("Escape")
    await expect(page.locator("#preview")).to_have_text("")

    # The AI's best play, typed: the preview shows the engine's score before sending.
    best = ranked_moves(_board(view["board"]), view["rack"], gcide, ENGLISH)[0]
    tiles = sorted(best.tiles, key=lambda t: (t.y, t.x))
    await square(page, tiles[0].x, tiles[0].y).click()
    if len(tiles) > 1 and tiles[1].x == tiles[0].x:
        await square(page, tiles[0].x, tiles[0].y).click()
    for t in tiles:
        if t.tile.islower():
            await page.keyboard.press("?")
        await page.keyboard.press(t.tile.upper())
    await expect(page.locator("#preview")).to_contain_text(f"{best.score} points: ")
    await page.click("#controls .send")
    await page.wait_for_function("() => window.meeple.view.moves.length > 0")
    moves = await page.evaluate("() => window.meeple.view.moves")
    assert moves[0]["player"] == view["you"]
    assert moves[0]["score"] == best.score
    await expect(page.locator("#preview")).to_have_text("")
    await page.close()

"""The Scrabble play page in real Chromium (issue 13): drag and drop, the blank's letter,
the score preview, and a whole game against a Clarkson bot at a Clarkson-variant table."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, expect
from tests.patience import GAME_PATIENCE, PATIENCE_MS
from tests.web.helpers import (
    NEXT_VIEW,
    ServerFactory,
    open_table,
    screenshot,
    stored_game,
    type_move,
    wait_for,
)

from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import play_clarkson
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import CLARKSON, ENGLISH

pytestmark = pytest.mark.slow

# With this server seed the page's player (the table's first seat, first to move) holds
# a blank at a two-seat Twente table filled by one server bot: SEILMM? (checked below).
BLANK_SEED = 21

NO_CURSOR = "() => { window.meeple.cursor = null; document.activeElement.blur(); }"
MY_TURN = """() => {
  const v = window.meeple.view;
  return v && !v.over && v.turn === v.you ? v : null;
}"""


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


async def test_tiles_are_dragged_blanks_ask_their_letter_and_plays_are_previewed(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """Against a server bot: a rack tile dragged to a square, from there to another and
    back to the rack; the rack reordered by dragging and shuffled; a blank dropped (or
    typed with ?) asks for its letter (Escape cancels); the preview shows the engine's
    score for the AI's best play, its refusal of a phony, and the play sent scores it."""
    server = await make_server(seed=BLANK_SEED)
    page = await browser.new_page(viewport={"width": 1280, "height": 1100})
    await open_table(page, server, "pat", "scrabble/twente", 2)
    await page.click("#bot")
    view: dict[str, Any] = await (await wait_for(page, MY_TURN, timeout=PATIENCE_MS)).json_value()
    assert sorted(view["rack"]) == sorted("SEILMM?")
    assert sorted(await rack(page)) == sorted(view["rack"])

    # A rack tile to the centre, on to the next square, and back to the rack's end.
    await drag(page, page.locator('#mine .rtile[data-tile="S"]'), square(page, 7, 7))
    assert await placed(page) == [[7, 7, "S"]]
    await expect(square(page, 7, 7).locator(".tile.tent")).to_have_text("S")
    assert "S" not in await rack(page)
    await drag(page, square(page, 7, 7).locator(".tile"), square(page, 8, 7))
    assert await placed(page) == [[8, 7, "S"]]
    assert await page.evaluate("() => window.meeple.cursor") is None  # a drop is no click
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

    # No mouse at all: the arrows move the cursor (from the centre), Space turns it down.
    await page.evaluate(NO_CURSOR)
    await page.keyboard.press("ArrowRight")
    assert await page.evaluate("() => window.meeple.cursor") == [7, 7]
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("Space")
    assert await page.evaluate("() => [window.meeple.cursor, window.meeple.down]") == [
        [7, 6],
        True,
    ]
    await page.keyboard.press("E")
    await page.keyboard.press("L")
    assert await placed(page) == [[7, 6, "E"], [7, 7, "L"]]
    await page.keyboard.press("Escape")
    await page.keyboard.press("Space")

    # By keyboard: a rack tile focused and Enter goes to the cursor's square.
    await square(page, 7, 7).click()
    await page.locator('#mine .rtile[data-tile="L"]').focus()
    await page.keyboard.press("Enter")
    assert await placed(page) == [[7, 7, "L"]]
    await page.keyboard.press("Escape")
    assert await placed(page) == []

    # A phony across the centre: Twente checks words on play, so the preview says so.
    await page.evaluate(NO_CURSOR)
    await square(page, 7, 7).click()
    for letter in "MMS":
        await page.keyboard.press(letter)
    await expect(page.locator("#preview")).to_have_text("Not allowed: not in the lexicon: MMS")
    await expect(page.locator("#preview")).to_have_class(re.compile(r"\brefusal\b"))
    await page.keyboard.press("Escape")
    await expect(page.locator("#preview")).to_have_text("")

    # The AI's best play, typed: the preview shows the engine's score before sending.
    await page.evaluate(NO_CURSOR)
    best = ranked_moves(Board.from_rows(view["board"]), view["rack"], gcide, ENGLISH)[0]
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
    await wait_for(page, "() => window.meeple.view.moves.length > 0")
    moves = await page.evaluate("() => window.meeple.view.moves")
    assert moves[0]["player"] == view["you"]
    assert moves[0]["score"] == best.score
    await expect(page.locator("#preview")).to_have_text("")
    await page.close()


async def _drag_move(
    page: Page, view: dict[str, Any], gcide: Lexicon, *, shoot: bool = False
) -> int | None:
    """Play the AI's best move by dragging each tile from the rack to its square, check
    the preview shows its score, press Play; the score (None: exchanged or passed)."""
    rack_now = view["rack"]
    found = ranked_moves(Board.from_rows(view["board"]), rack_now, gcide, CLARKSON)
    if not found:
        if view["bag"]:
            await page.fill("#exchange", rack_now[0])
            await page.click("#controls .exchange")
        else:
            await page.click("#controls .pass")
        return None
    best = found[0]
    for t in best.tiles:
        await drag(
            page, page.locator(f'#mine .rtile[data-tile="{t.tile}"]').first, square(page, t.x, t.y)
        )
    assert sorted(map(tuple, await placed(page))) == sorted((t.x, t.y, t.tile) for t in best.tiles)
    await expect(page.locator("#preview")).to_contain_text(f"{best.score} points: ")
    if shoot:
        await screenshot(page, "play-scrabble-preview")
    await page.click("#controls .send")
    return best.score


async def test_a_person_drags_a_whole_game_against_a_clarkson_bot_at_a_clarkson_table(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """The page opens a scrabble/clarkson table (4 seats, start when ready); meeple's
    Clarkson bot connects to the Clarkson listener, sits at it and says READY, the page
    says Ready; the person drags every play (previewed first) until the game ends. The
    stored result, the page's final scores and the bot's SCOREs are the same."""
    server = await make_server("clarkson")
    page = await browser.new_page(viewport={"width": 1280, "height": 1100})
    await open_table(page, server, "pat", "scrabble/clarkson", 4, ready=True)
    bot = asyncio.create_task(
        play_clarkson("127.0.0.1", server.ports["clarkson"], "cora", gcide, players=2)
    )
    await expect(page.locator("#tables")).to_contain_text("cora (clarkson)")
    await page.click("#ready")
    seen = -1
    scored: list[int] = []
    while True:
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        assert "?" not in view["rack"]  # Clarkson: two random letters instead of blanks
        seen = len(view["moves"])
        # The docs' screenshot: mid-game, tiles down, the preview showing.
        score = await _drag_move(page, view, gcide, shoot=len(scored) == 3)
        if score is not None:
            scored.append(score)
    [result] = await asyncio.wait_for(bot, GAME_PATIENCE)
    final = dict(zip(view["players"], view["result"]["scores"], strict=True))
    assert sorted(view["players"]) == ["cora", "pat"]
    assert result.scores == final
    mine = [m["score"] for m in view["moves"] if m["kind"] == "play" and m["player"] == view["you"]]
    assert mine == scored  # every play scored what its preview said
    record = await stored_game(server, "scrabble")
    assert record.variant == "clarkson"
    assert sorted(record.protocols) == ["clarkson", "web"]
    assert dict(record.result["scores"]) == final
    await expect(page.locator("#status")).to_have_text("The game is over.")
    await page.close()


RECORD_POINTER_KINDS = """() => {
  window.kinds = [];
  addEventListener("pointerdown", (e) => window.kinds.push(e.pointerType), true);
}"""


async def test_tiles_are_dragged_by_touch_too(make_server: ServerFactory, browser: Browser) -> None:
    """On a touch screen (a phone-sized window, real touch events through Chromium's
    DevTools protocol) a finger drags a rack tile to the centre square and back."""
    server = await make_server()
    context = await browser.new_context(viewport={"width": 420, "height": 1400}, has_touch=True)
    page = await context.new_page()
    await open_table(page, server, "tia", "scrabble/twente", 2)
    await page.click("#bot")
    await wait_for(page, MY_TURN, timeout=PATIENCE_MS)
    cdp = await context.new_cdp_session(page)

    async def swipe(source: Locator, target: Locator) -> None:
        a, b = await source.bounding_box(), await target.bounding_box()
        assert a is not None
        assert b is not None
        x0, y0 = a["x"] + a["width"] / 2, a["y"] + a["height"] / 2
        x1, y1 = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
        await cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
        )
        for i in range(1, 9):
            point = {"x": x0 + (x1 - x0) * i / 8, "y": y0 + (y1 - y0) * i / 8}
            await cdp.send(
                "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]}
            )
        await cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    await page.evaluate(RECORD_POINTER_KINDS)
    first = page.locator("#mine .rtile").first
    tile = await first.get_attribute("data-tile")
    assert tile is not None
    await swipe(first, square(page, 7, 7))
    expected = [[7, 7, tile]] if tile != "?" else []
    if tile == "?":
        await expect(page.locator("#chooser")).to_be_visible()
        await page.keyboard.press("a")
        expected = [[7, 7, "a"]]
    assert await placed(page) == expected
    await swipe(square(page, 7, 7).locator(".tile"), page.locator("#mine .rtile").last)
    assert await placed(page) == []
    assert len(await rack(page)) == 7
    assert set(await page.evaluate("() => window.kinds")) == {"touch"}
    await context.close()


async def test_a_person_challenges_and_is_challenged_at_a_double_challenge_table(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """A scrabble/double table against a server bot, to the end: the person's phony is
    challenged by the bot and withdrawn; Challenge and Accept show while the bot's play
    may be challenged; a challenge in vain costs the person's turn; later plays stand
    (accepted, or played on); the stored result is the page's final scores."""
    server = await make_server()
    page = await browser.new_page(viewport={"width": 1280, "height": 1100})
    await open_table(page, server, "pat", "scrabble/double", 2)
    await page.click("#bot")
    seen = -1
    phony = challenged = False
    while True:
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        seen = len(view["moves"])
        pending = view["pending"]
        if not phony:
            # The first play of the game: two of the rack's letters that make no word.
            letters = view["rack"].replace("?", "")
            pair = next(
                a + b
                for i, a in enumerate(letters)
                for b in letters[:i] + letters[i + 1 :]
                if a + b not in gcide
            )
            await square(page, 7, 7).click()
            for letter in pair:
                await page.keyboard.press(letter)
            # Words are checked only on a challenge here: the preview does not tell.
            await expect(page.locator("#preview")).to_contain_text(" points: ")
            await page.keyboard.press("Enter")
            phony = True
            continue
        if pending is not None:
            assert pending["player"] != view["you"]
            await expect(page.locator("#controls .challenge")).to_be_visible()
            await expect(page.locator("#controls .accept")).to_be_visible()
            if not challenged:
                await screenshot(page, "play-scrabble-challenge")
                await page.click("#controls .challenge")
                challenged = True
                continue
            if view["bag"] == 0:  # the play may end the game: it must be accepted first
                await page.click("#controls .accept")
                done = "() => window.meeple.view.over || !window.meeple.view.pending"
                await wait_for(page, done)
                view = await page.evaluate("() => window.meeple.view")
                if view["over"]:
                    break
        await type_move(page, view, gcide)
    texts = [m["text"] for m in view["moves"]]
    assert texts[1].startswith("challenge upheld: ")
    assert texts[2] == "play withdrawn"
    assert any(t.endswith("challenged in vain") for t in texts)
    assert "loses a turn" in texts
    final = dict(zip(view["players"], view["result"]["scores"], strict=True))
    record = await stored_game(server, "scrabble")
    assert record.variant == "double"
    assert sorted(record.protocols) == ["bot", "web"]
    assert dict(record.result["scores"]) == final
    await page.close()

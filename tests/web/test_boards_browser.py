"""Santorini and Spectrangle boards in Chromium: a stored game replayed step by step."""

from __future__ import annotations

import random

import pytest
from playwright.async_api import Browser, expect
from tests.web.helpers import ServerFactory, screenshot

from meeple.ai.santorini import random_action
from meeple.ai.spectrangle import greedy_action
from meeple.games.santorini import record as santorini_record
from meeple.games.santorini.game import Game as SantoriniGame
from meeple.games.santorini.state import Rules
from meeple.games.spectrangle import record as spectrangle_record
from meeple.games.spectrangle.game import Game as SpectrangleGame
from meeple.server.store.database import Store

pytestmark = pytest.mark.slow

# What the page shows: per Santorini cell its level and dome; per Spectrangle field its tile.
READ_SANTORINI = """() => [...document.querySelectorAll('#board .cell')].map((c) =>
  [+c.dataset.level, c.classList.contains('dome'), c.querySelectorAll('.worker').length])"""
READ_SPECTRANGLE = """() => [...document.querySelectorAll('#board g.field')].map((g) =>
  g.dataset.tile || null)"""


async def test_santorini_and_spectrangle_replays_draw_the_engines_boards(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Each step drawn by the page's script matches the engine's board at that step."""
    server = await make_server("santorini", "spectrangle")
    store: Store = server.services.store
    rng = random.Random(8)

    santorini = SantoriniGame(Rules(players=2, gods=True), challenger=0)
    while not santorini.is_over:
        santorini.apply(random_action(santorini.state, rng))
    names = ("ann", "bob")
    store.record_game(
        game="santorini", variant="gods", protocols=["am27"], players=names, started_at=0.0,
        end_reason="win", result={"winner": names[santorini.winner or 0]},
        record="", data=santorini_record.to_record(santorini, players=names, uid="5a5a5a5a5a5a"),
    )  # fmt: skip
    spectrangle = SpectrangleGame(["cy", "di", "ed"], random.Random(3))
    while not spectrangle.is_over:
        turn = spectrangle.turn
        assert turn is not None
        spectrangle.apply(greedy_action(spectrangle, turn))
    result = spectrangle.result
    assert result is not None
    store.record_game(
        game="spectrangle", variant="standard", protocols=["spectrangle"],
        players=spectrangle.players, started_at=0.0, end_reason="finished",
        result={"scores": dict(zip(spectrangle.players, result.scores, strict=True))},
        record="", data=spectrangle_record.to_record(spectrangle, uid="5b5b5b5b5b5b"),
    )  # fmt: skip

    page = await browser.new_page()
    base = f"http://127.0.0.1:{server.ports['web']}"
    await page.goto(f"{base}/games/5a5a5a5a5a5a")
    await expect(page.locator("#controls[data-ready]")).to_be_attached()
    await page.keyboard.press("Home")
    await page.keyboard.press("End")
    state = santorini.state
    expected = [
        [state.levels[c], state.domes[c], sum(1 for w in state.workers if w == c)]
        for c in range(25)
    ]
    assert await page.evaluate(READ_SANTORINI) == expected
    await expect(page.locator("#panel")).to_contain_text("Winner")
    await screenshot(page, "replay-santorini")

    await page.goto(f"{base}/games/5b5b5b5b5b5b")
    await expect(page.locator("#controls[data-ready]")).to_be_attached()
    await page.keyboard.press("Home")
    assert await page.evaluate(READ_SPECTRANGLE) == [None] * 36
    await page.keyboard.press("End")
    board = spectrangle.board
    expected_tiles = [None if board.tile(i) is None else str(board.tile(i)) for i in range(36)]
    assert await page.evaluate(READ_SPECTRANGLE) == expected_tiles
    shown = [int(s) for s in await page.locator("#panel .score").all_inner_texts()]
    assert shown == list(result.scores)
    # The analysis (issue 34): each placement against the hand's best; greedy play
    # never misses a point; a line opens to the hand and the best placements.
    marks = await page.locator("#steps > li > .analysis").all_inner_texts()
    assert marks, "no analysis shown"
    assert all(m.startswith("best ") and m.endswith("\u2713") for m in marks if " on " in m)
    first = page.locator("#steps details.alts").first
    await first.locator("summary").click()
    await expect(first).to_contain_text("hand ")
    await expect(first.locator("li").first).to_be_visible()
    await screenshot(page, "replay-spectrangle")
    await page.close()

"""The replay of a finished Santorini game shows each turn against the engine's best
(issue 34.7), in Chromium."""

from __future__ import annotations

import random
from typing import Any

import pytest
from playwright.async_api import Browser, expect
from tests.web.helpers import ServerFactory, screenshot

from meeple.ai.analysis import analyse_game
from meeple.ai.santorini import random_action
from meeple.games.santorini import record as santorini_record
from meeple.games.santorini.game import Game as SantoriniGame
from meeple.games.santorini.state import Rules
from meeple.server.store.database import Store

pytestmark = pytest.mark.slow

UID = "5c5c5c5c5c5c"


def _game_with_a_missed_win() -> tuple[SantoriniGame, dict[str, Any]]:
    """A random game with gods in which someone missed a winning move (the first
    seed that has one)."""
    for seed in range(100):
        rng = random.Random(seed)
        game = SantoriniGame(Rules(players=2, gods=True), challenger=0)
        while not game.is_over:
            game.apply(random_action(game.state, rng))
        data = santorini_record.to_record(game, players=["ann", "bob"], uid=UID)
        found = analyse_game(data, None)
        if found and any(a and a["verdict"] == "winning move missed" for a in found):
            return game, data
    raise AssertionError("no random game missed a win")


async def test_santorini_replay_shows_the_engines_best_turn(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Under each turn that completes: the engine's best turn, the mover's chance to
    win after it, the points of that chance lost (or ✓) and what went wrong in
    words; the line opens to the turn played and the engine's best turns, all as
    :func:`analyse_game` computed them."""
    game, data = _game_with_a_missed_win()
    expected = analyse_game(data, None)
    assert expected is not None
    server = await make_server("santorini")
    store: Store = server.services.store
    names = ("ann", "bob")
    store.record_game(
        game="santorini", variant="gods", protocols=["am27"], players=names, started_at=0.0,
        end_reason="win", result={"winner": names[game.winner or 0]},
        record="", data=data,
    )  # fmt: skip
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/games/{UID}")
    await expect(page.locator("#controls[data-ready]")).to_be_attached()
    await expect(page.locator("aside .note")).to_contain_text("chance to win")
    shown = page.locator("#steps > li")
    await expect(shown).to_have_count(len(expected))
    analysed = [i for i, a in enumerate(expected) if a]
    assert len(analysed) >= 5
    assert await page.locator("#steps > li > .analysis").count() == len(analysed)
    missed = [i for i in analysed if (expected[i] or {}).get("verdict")]
    for i in [*analysed[:3], *missed[:3]]:
        a = expected[i]
        assert a is not None
        mark = shown.nth(i).locator(".analysis")
        text = await mark.inner_text()
        assert text.startswith(f"best {a['best']} {a['best_score']} %"), text
        assert (f"\u2212{a['equity_lost']}" in text) == (a["equity_lost"] > 0), text
        if a["verdict"]:
            assert a["verdict"] in text
            await expect(mark).to_have_class("analysis blunder")
        details = shown.nth(i).locator("details.alts")
        await details.locator("summary").click()
        await expect(details).to_contain_text(f"played {a['played']} {a['played_score']} %")
        await expect(details.locator("li")).to_have_count(len(a["alternatives"]))
        await expect(details.locator("li").first).to_contain_text(a["alternatives"][0]["play"])
    win = [i for i in missed if (expected[i] or {}).get("verdict") == "winning move missed"]
    await expect(shown.nth(win[0]).locator(".verdict")).to_have_text("winning move missed")
    await shown.nth(win[0]).scroll_into_view_if_needed()
    await screenshot(page, "replay-santorini-analysis")
    await page.close()

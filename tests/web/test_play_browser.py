"""Real Chromium plays (issue 13): a person's page at a table with clients of other protocols."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect
from tests.patience import GAME_PATIENCE, PATIENCE_MS
from tests.web.helpers import NEXT_VIEW, ServerFactory, open_table, screenshot, type_move, wait_for
from tests.web.test_play_santorini_browser import click_step

from meeple.ai.spectrangle import greedy_action
from meeple.clients.santorini import play_santorini
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games.santorini import (
    Build,
    ChooseGod,
    Move,
    OfferGod,
    Pass,
    Phase,
    PlaceWorker,
    legal_actions,
)
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.spectrangle import Exchange as SpectrangleExchange
from meeple.games.spectrangle import Skip as SpectrangleSkip
from meeple.server.lobby.tables import server_lobby
from meeple.server.rooms.spectrangle import RoomChat

pytestmark = pytest.mark.slow


async def test_a_person_plays_a_whole_scrabble_game_against_a_twente_bot(
    make_server: ServerFactory, browser: Browser, gcide: Lexicon
) -> None:
    """The page opens a Twente-variant table; a Twente bot's ENQUEUE fills it; the
    person clicks squares and types every word (blanks with ?) until the game ends,
    reloading the page once mid-game (the seat is kept), and the page's final scores
    are the bot's."""
    server = await make_server("twente")
    page = await browser.new_page()
    await open_table(page, server, "pat", "scrabble/twente", 2)
    await expect(page.locator("#join")).to_be_hidden()  # the game takes the page
    await expect(page.locator("#ready")).to_be_hidden()  # a table that starts when full
    await expect(page.locator("#waiting")).to_contain_text("1 of 2: pat (web)")
    twente = asyncio.create_task(
        play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2)
    )
    seen = -1
    shot = reloaded = False
    while True:
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        if not shot and len(view["moves"]) >= 4:
            await screenshot(page, "play-scrabble")
            shot = True
        if not reloaded and len(view["moves"]) >= 6:
            # A reload mid-game: the page presents its token and has its seat back.
            reloaded = True
            await page.reload()
            await expect(page.locator("#who")).to_have_text("You are pat")
            continue
        seen = len(view["moves"])
        await type_move(page, view, gcide)
    [result] = await asyncio.wait_for(twente, GAME_PATIENCE)
    assert reloaded
    assert result.reason == "WIN"  # not DISCONNECT: the reload did not end the game
    assert dict(zip(view["players"], view["result"]["scores"], strict=True)) == result.scores
    await expect(page.locator("#status")).to_have_text("The game is over.")
    # The result in words, a link to the replay, and the way back to the tables.
    scores = view["result"]["scores"]
    mine, theirs = scores[view["you"]], scores[1 - view["you"]]
    result_text = page.locator("#result")
    listed = ", ".join(f"{n} {s}" for n, s in zip(view["players"], scores, strict=True))
    await expect(result_text).to_contain_text(f"({listed})")
    verdict = "You win" if mine > theirs else "ann wins" if theirs > mine else "A draw"
    await expect(result_text).to_contain_text(verdict)
    # Nothing left to play: no Leave, no rack, no buttons.
    await expect(page.locator("#leave")).to_be_hidden()
    await expect(page.locator("#controls button")).to_have_count(0)
    await expect(page.locator("#mine")).to_be_empty()
    await expect(page.locator("#chat")).to_be_hidden()  # chat ends with the game
    href = await page.get_attribute("#replay", "href")
    assert href is not None
    assert href.startswith("/games/")
    await page.click("#again")
    await expect(page.locator("#join")).to_be_visible()
    await expect(page.locator("#play")).to_be_hidden()
    replay = await page.context.request.get(f"http://127.0.0.1:{server.ports['web']}{href}")
    assert replay.ok
    await page.close()


async def _santorini_step(page: Page, state: Any, you: int, rng: random.Random) -> None:
    """One step the way a person does it, chosen among the legal ones: buttons in the
    set-up, a highlighted cell to place a worker, in play a worker then a ringed cell
    (and the inline choice where a cell offers two steps), Pass when it is legal."""
    actions = legal_actions(state)
    if state.phase is Phase.POOL:
        offer = rng.choice([a for a in actions if isinstance(a, OfferGod)])
        await page.click(f'#controls button.god:text-is("{offer.god}")')
    elif state.phase is Phase.GODS:
        god = rng.choice([a for a in actions if isinstance(a, ChooseGod)]).god
        await page.click(f'#controls button.god:text-is("{god}")')
    elif state.phase is Phase.STARTER:
        await page.locator("#controls button.starter").nth(you).click()
    elif state.phase is Phase.PLACE:
        place = rng.choice([a for a in actions if isinstance(a, PlaceWorker)])
        await page.click(f'#board .cell[data-cell="{place.cell}"]')
    else:
        steps = [a for a in actions if isinstance(a, Move | Build)]
        if any(isinstance(a, Pass) for a in actions):
            await click_step(page, Pass(you))
        elif steps:
            await click_step(page, rng.choice(steps))
        else:
            await page.click("#controls .lose")


async def test_a_person_plays_santorini_with_gods_against_the_am27_bot(
    make_server: ServerFactory, browser: Browser
) -> None:
    """The page opens a 2-player gods table; the AM27 bot's REGISTER fills it; the
    person offers or takes gods, names the starter, places workers and plays by
    clicks until someone wins; the page and the bot agree on the winner."""
    server = await make_server("santorini")
    page = await browser.new_page()
    await open_table(page, server, "pia", "santorini/gods", 2)
    am27 = asyncio.create_task(
        play_santorini("127.0.0.1", server.ports["santorini"], "ace", players=2, gods=True, seed=3)
    )
    lobby = server_lobby(server.services)
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    [room] = lobby.rooms
    rng = random.Random(8)
    seen = -1
    shot = False
    while True:
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        if not shot and view["phase"] == "play":
            await screenshot(page, "play-santorini")
            shot = True
        seen = len(view["moves"])
        await _santorini_step(page, room.game.state, view["you"], rng)  # type: ignore[attr-defined]
    [result] = await asyncio.wait_for(am27, GAME_PATIENCE)
    assert result.winner == view["players"][view["winner"]]
    assert set(result.gods) == {"pia", "ace"}
    assert "Atheist" not in result.gods.values()
    await page.close()


async def test_a_person_plays_spectrangle_against_two_spectrangle_clients(
    make_server: ServerFactory, browser: Browser
) -> None:
    """A 3-seat Spectrangle table: the page opens it, two Spectrangle-protocol bots
    request 3 and fill it; the person picks, rotates and places tiles (or exchanges,
    or skips) until the game ends, the fields where the picked tile fits highlighted
    with its points; on its first placement the person types a chat line, and sol's
    seat says one (submitted to the room as its Spectrangle handler would: the wire is
    tests/web/test_play_chat.py's); everyone sees the same final leaderboard."""
    server = await make_server("spectrangle")
    page = await browser.new_page()
    await open_table(page, server, "ria", "spectrangle/standard", 3)
    port = server.ports["spectrangle"]
    bots = asyncio.gather(
        play_spectrangle("127.0.0.1", port, "sol", players=3),
        play_spectrangle("127.0.0.1", port, "tam", players=3),
    )
    lobby = server_lobby(server.services)
    while not lobby.rooms:
        await asyncio.sleep(0.01)
    [room] = lobby.rooms
    game = room.game  # type: ignore[attr-defined]
    seen = -1
    shot = chatted = False
    while True:
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        if view["over"]:
            break
        seen = len(view["moves"])
        you = view["you"]
        action = greedy_action(game, you)
        if isinstance(action, SpectrangleSkip):
            await page.click("#controls .skip")
            continue
        wanted = str(action.tile)
        hand = view["hands"][you]
        held = next(i for i, t in enumerate(hand) if _same_tile(t, wanted))
        await page.locator("#mine button.htile-btn").nth(held).click()
        for _ in range(3):
            if await page.evaluate("() => window.meeple.tile") == wanted:
                break
            await page.click("#controls .rotate")
        if isinstance(action, SpectrangleExchange):
            await page.click("#controls .exchange")
            continue
        assert await page.evaluate("() => window.meeple.tile") == wanted
        # The fields where the picked rotation fits are highlighted with their points.
        fits = view["fits"][wanted]
        await expect(page.locator("#board .field.fit")).to_have_count(len(fits))
        points = game.board.check(action.tile, action.index)
        target = page.locator(f'#board .field.fit[data-field="{action.index}"] .pts')
        await expect(target).to_have_text(f"+{points}")
        if not chatted:
            await _chat(page, room, "sol")
            chatted = True
        hint = f"{wanted} fits on {len(fits)} field" + ("" if len(fits) == 1 else "s")
        await expect(page.locator("#controls .fits-hint")).to_have_text(hint)
        if not shot and len(fits) >= 3:
            await screenshot(page, "play-spectrangle")  # a tile that fits on several fields
            shot = True
        await page.click(f'#board .field[data-field="{action.index}"]')
    results = await asyncio.wait_for(bots, GAME_PATIENCE)
    assert chatted
    for [result] in results:
        assert result.leaderboard is not None
        assert dict(result.leaderboard) == dict(
            zip(view["players"], view["result"]["scores"], strict=True)
        )
    await page.close()


async def _chat(page: Page, room: Any, other: str) -> None:
    """Type a chat line and send it with Enter; it shows in the log, and so does a line
    said by the seat named ``other``."""
    box = page.locator("#chat [name=text]")
    await box.fill("good luck, sol & tam")
    await box.press("Enter")
    mine = page.locator("#chat-log .line.mine")
    await expect(mine).to_have_count(1)
    await expect(mine.locator(".text")).to_have_text("good luck, sol & tam")
    await expect(box).to_have_value("")
    seat = next(s for s in room.seats if s.name == other)
    room.submit(seat, RoomChat("thanks, ria: nice tiles"))
    theirs = page.locator("#chat-log .line:not(.mine)")
    await expect(theirs.locator(".from")).to_have_text(other)
    await expect(theirs.locator(".text")).to_have_text("thanks, ria: nice tiles")


def _same_tile(a: str, b: str) -> bool:
    rotations = {a[:3], a[2] + a[:2], a[1:3] + a[0]}
    return b[:3] in rotations and a[3:] == b[3:]

"""Real Chromium plays Santorini's god powers by clicks on highlighted cells (issue 13).

Three pages sit at one 3-player gods table: one takes Atlas, one Artemis, one
Prometheus. In the first round each uses its power through the page alone (a worker
clicked, a ringed cell clicked, the inline choice where a cell allows two steps), and
the engine's log shows each power used.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect
from tests.patience import PATIENCE, PATIENCE_MS
from tests.web.helpers import ServerFactory, screenshot, wait_for

from meeple.games.santorini import DOME, Action, Build, Game, Move, Pass, Phase, Undo
from meeple.server.lobby.tables import server_lobby

pytestmark = pytest.mark.slow

GODS = {"ada": "Atlas", "art": "Artemis", "pro": "Prometheus"}
# Where each player's two workers go: far enough apart that nobody is in the way.
PLACES = {"ada": (0, 2), "art": (10, 12), "pro": (20, 22)}

# The page's view once it has caught up with ``n`` actions and it is this seat's turn.
VIEW_AFTER = """(n) => {
  const v = window.meeple.view;
  return v && v.moves.length >= n && v.turn === v.you ? v : null;
}"""


async def view_after(page: Page, n: int) -> dict[str, Any]:
    handle = await wait_for(page, VIEW_AFTER, arg=n, timeout=PATIENCE_MS)
    view: dict[str, Any] = await handle.json_value()
    return view


async def until(done: Callable[[], bool]) -> None:
    """Wait until ``done()`` (the room runs in this process, on this event loop)."""
    async with asyncio.timeout(PATIENCE):
        while not done():
            await asyncio.sleep(0.01)


def cell_of(page_cell: int) -> str:
    return f'#board .cell[data-cell="{page_cell}"]'


async def click_step(page: Page, step: Move | Build | Pass) -> None:
    """Take one step as a person does: Pass by its button; a move or a build by selecting
    the worker (unless the page already has) and clicking the ringed cell, then the
    inline choice when the cell offers more than one step."""
    if isinstance(step, Pass):
        await page.click("#controls .pass")
        return
    if await page.evaluate("() => window.meeple.worker") != step.src:
        await page.click(cell_of(step.src))
    await expect(page.locator(cell_of(step.src))).to_have_class(re.compile(r"\bselected\b"))
    target = page.locator(cell_of(step.dst))
    ring = "can-move" if isinstance(step, Move) else "can-build"
    await expect(target).to_have_class(re.compile(rf"\b{ring}\b"))
    await target.click()
    choice = target.locator(".choice")
    if await choice.count():
        if isinstance(step, Move):
            await choice.locator('button[data-kind="move"]').click()
        else:
            await choice.locator(f'button[data-kind="build"][data-level="{step.level}"]').click()


def _steps(view: dict[str, Any], you: int) -> tuple[list[Move], list[Build], bool]:
    legal = view["legal"]
    moves = [Move(you, a, b) for a, b in legal["moves"]]
    builds = [Build(you, a, b, level) for a, b, level in legal["builds"]]
    return moves, builds, legal["pass"]


async def _setup_step(page: Page, view: dict[str, Any], name: str) -> None:
    """Offer the three gods, take one's own, name seat 0, place at ``PLACES``."""
    if view["phase"] == "pool":
        god = next(g for g in GODS.values() if g not in view["pool"])
        await page.click(f'#controls button.god:text-is("{god}")')
    elif view["phase"] == "gods":
        await page.click(f'#controls button.god:text-is("{GODS[name]}")')
    elif view["phase"] == "starter":
        await page.locator("#controls button.starter").first.click()
    else:
        assert view["phase"] == "place"
        mine = [w for w in view["workers"] if w["owner"] == view["you"]]
        c = PLACES[name][len(mine)]
        await expect(page.locator(cell_of(c))).to_have_class(re.compile(r"\bcan-place\b"))
        await page.click(cell_of(c))


async def _turn(page: Page, name: str, n: int) -> None:
    """One whole turn that uses the page's god, from ``n`` actions in the log."""
    view = await view_after(page, n)
    you = view["you"]
    moves, builds, _ = _steps(view, you)
    god = GODS[name]
    if god == "Prometheus":
        # Build first, on a cell the worker could also move to: the inline choice.
        both = {(m.src, m.dst) for m in moves}
        first = next(b for b in builds if (b.src, b.dst) in both)
        await page.click(cell_of(first.src))
        await page.click(cell_of(first.dst))
        choice = page.locator(f"{cell_of(first.dst)} .choice button")
        await expect(choice).to_have_count(2)
        await screenshot(page, "play-santorini-choice")
        await page.click(f'{cell_of(first.dst)} .choice button[data-kind="build"]')
        view = await view_after(page, n + 1)
        moves, builds, _ = _steps(view, you)
        assert first.dst not in {m.dst for m in moves}  # not up onto its own block
        await click_step(page, moves[0])
    else:
        await click_step(page, moves[0])
    view = await view_after(page, n + 2 if god == "Prometheus" else n + 1)
    moves, builds, _ = _steps(view, you)
    if god == "Artemis":
        # The moved worker stays selected, its next moves and builds ringed.
        assert moves
        moved_to = moves[0].src
        assert await page.evaluate("() => window.meeple.worker") == moved_to
        await expect(page.locator(cell_of(moved_to))).to_have_class(re.compile(r"\bselected\b"))
        await click_step(page, moves[-1])
        view = await view_after(page, n + 2)
        moves, builds, _ = _steps(view, you)
    if god == "Atlas":
        build = next(b for b in builds if b.level == DOME and view["levels"][b.dst] == 0)
    else:
        build = builds[0]
    await click_step(page, build)
    done = len(view["moves"]) + 1
    view = await view_after(page, done)
    assert view["legal"]["pass"]
    await expect(page.locator("#controls .undo")).to_be_visible()
    if god == "Atlas":
        # Take the dome back (Undo): the build is open again, Pass is gone; dome again.
        await page.click("#controls .undo")
        view = await view_after(page, done + 1)
        assert not view["domes"][build.dst]
        await expect(page.locator("#controls .pass")).to_have_count(0)
        await click_step(page, build)
        view = await view_after(page, done + 2)
        assert view["domes"][build.dst]
    await click_step(page, Pass(you))


def _powers_used(game: Game) -> dict[str, bool]:
    """Replay the log and say which of the three powers it shows: a dome built on a
    level below 3, two moves in one turn, a build before the turn's move."""
    replay = Game(game.rules, game.challenger)
    used = {"Atlas": False, "Artemis": False, "Prometheus": False}
    turn: list[Action] = []
    for action in game.log:
        state = replay.state
        if state.phase is Phase.PLAY:
            god = state.gods[action.player]
            if isinstance(action, Build) and action.level == DOME:
                used["Atlas"] |= god == "Atlas" and state.levels[action.dst] < 3
            if isinstance(action, Move) and any(isinstance(a, Move) for a in turn):
                used["Artemis"] |= god == "Artemis"
            if isinstance(action, Move) and any(isinstance(a, Build) for a in turn):
                used["Prometheus"] |= god == "Prometheus" and not any(
                    isinstance(a, Move) for a in turn
                )
            if isinstance(action, Pass):
                turn = []
            elif isinstance(action, Undo):
                turn = [] if action.all else turn[:-1]
            else:
                turn = [*turn, action]
        replay.apply(action)
    return used


async def test_atlas_artemis_and_prometheus_use_their_powers_by_clicks(
    make_server: ServerFactory, browser: Browser
) -> None:
    """Three pages at a 3-player gods table offer and take Atlas, Artemis and
    Prometheus and place their workers on highlighted cells; in the first round Atlas
    domes a ground cell (the Block/Dome choice; undone and built again), Artemis moves
    twice (the worker stays selected), Prometheus builds before moving (the Move/Block
    choice); Pass and Undo show only when legal; the engine's log shows each power."""
    server = await make_server("santorini")
    url = f"http://127.0.0.1:{server.ports['web']}/play"
    pages: dict[str, Page] = {}
    for name in GODS:
        page = await browser.new_page()
        await page.goto(url)
        await page.fill("#create [name=name]", name)
        pages[name] = page
    first = pages["ada"]
    await first.select_option("#create [name=game]", "santorini/gods")
    await first.fill("#create [name=size]", "3")
    await first.click("#create button[type=submit]")
    await expect(first.locator("#play")).to_be_visible()
    table = await first.locator("#table").text_content()
    for name in ("art", "pro"):
        await pages[name].click(f'#tables tr[data-table="{table}"] .sit')
    lobby = server_lobby(server.services)
    while not lobby.rooms:
        await pages["pro"].wait_for_timeout(10)
    [room] = lobby.rooms
    game: Game = room.game  # type: ignore[attr-defined]
    seat_of = {name: i for i, name in enumerate(room.names)}  # type: ignore[attr-defined]
    by_seat = {i: pages[name] for name, i in seat_of.items()}

    while game.phase is not Phase.PLAY:
        name = room.names[game.state.turn]  # type: ignore[attr-defined]
        view = await view_after(pages[name], len(game.log))
        await expect(pages[name].locator("#controls .pass")).to_have_count(0)
        n = len(game.log)
        await _setup_step(pages[name], view, name)
        await until(lambda: len(game.log) > n)  # noqa: B023 (awaited here)
    assert dict(zip(room.names, game.state.gods, strict=True)) == GODS  # type: ignore[attr-defined]

    for _ in range(3):
        name = room.names[game.state.turn]  # type: ignore[attr-defined]
        page = pages[name]
        view = await view_after(page, len(game.log))
        await expect(page.locator("#controls .pass")).to_have_count(0)
        await expect(page.locator("#controls .undo")).to_have_count(0)
        seat = game.state.turn
        await _turn(page, name, len(game.log))
        await until(lambda: game.state.turn != seat)  # noqa: B023 (awaited here)
    await view_after(by_seat[game.state.turn], len(game.log))
    assert _powers_used(game) == {"Atlas": True, "Artemis": True, "Prometheus": True}
    for page in pages.values():
        await page.close()

"""Fixtures for the web tests: a real server on loopback, Debian's chromium, screenshots.

Browser tests never skip: without /usr/bin/chromium they fail (``.ci/run`` installs it).
With ``MEEPLE_SCREENSHOTS=1`` they also write ``docs/web/<name>-<width>.png`` at a
phone's width (390 px) and a wide window; normal runs leave the tree alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import pytest_asyncio
import websockets
from axe_playwright_python.async_playwright import DEFAULT_OPTIONS, Axe
from axe_playwright_python.base import AxeResults
from playwright.async_api import (
    Browser,
    JSHandle,
    Page,
    Playwright,
    async_playwright,
    expect,
)
from tests.guard import session_processes
from tests.patience import PATIENCE_MS, eventually
from websockets.asyncio.client import ClientConnection

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose, ranked_moves
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.twente.messages import Error, GameOver, NotifyTurn
from meeple.protocols.web import PROTOCOL
from meeple.server.app import MeepleServer
from meeple.server.clock import Clock
from meeple.server.config import Cmpn402Config, LimitsConfig, ServerConfig
from meeple.server.store.database import GameRecord, Store

# Debian's chromium, the browser the project's tests are required to drive. Its headless
# shell (chromium-headless-shell) was measured at about half the CPU for the same pages
# (docs/benchmarks.md, "The test suite", fourth pass) and not taken: it is the old
# headless build, not the browser users run.
CHROMIUM = Path("/usr/bin/chromium")
# Browser features the tests' pages never use, each of which cost CPU per context
# (docs/benchmarks.md, "The test suite", eighth pass, measured on meeple's pages):
# - WebUIOmniboxPopup, WebUIOmniboxAimPopup: Chromium 156 preloads the address bar's
#   popups as WebUI pages, in a renderer of their own, for every window, headless too: a
#   context's first page paid 0.6-0.9 s of CPU for an address bar nobody sees (twice
#   its page's own renderer for a meeple page);
# - SpareRendererForSitePerProcess: a spare renderer started after each navigation for
#   the next one, which a test's context (its own process) mostly never makes.
CHROMIUM_DISABLED_FEATURES = (
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "SpareRendererForSitePerProcess",
)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-features=" + ",".join(CHROMIUM_DISABLED_FEATURES),
]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "web"
WIDTHS = ((390, 844), (1280, 900))  # a phone (issue 24) and a desktop
PHONE_WIDTHS = WIDTHS

ServerFactory = Callable[..., Awaitable[MeepleServer]]

# The tests' HTTP clients on loopback pass ``verify=False``: an ``httpx.AsyncClient()``
# otherwise builds an SSL context with certifi's CA bundle, 0.04 s of CPU a client when
# the machine is quiet, for plain HTTP that never uses it; the hypothesis tests make one
# per example (issue 33).


@pytest.fixture
async def make_server(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[ServerFactory]:
    """``await make_server("twente", ...)``: those listeners and the web, on free ports."""
    servers: list[MeepleServer] = []

    async def make(
        *listeners: str,
        seed: int = 12,
        limits: dict[str, Any] | None = None,
        default_lexicon: bool = False,
        clock: Clock | None = None,
        table_lexicons: tuple[str, ...] = (),
        **cmpn402: Any,
    ) -> MeepleServer:
        # Each server of a test its own file: one meeple serve per database (DatabaseClaim).
        name = f"meeple-{len(servers)}.sqlite3" if servers else "meeple.sqlite3"
        # Bots think 0.1 s a move at most: what a test shows does not need their best.
        config = ServerConfig(database=str(tmp_path / name), bot_think_time=0.1).only(
            *listeners, "web"
        )
        if limits:
            config = config.with_overrides(limits=LimitsConfig(**limits))
        if cmpn402:
            config = config.with_overrides(cmpn402=Cmpn402Config(**cmpn402))
        if table_lexicons:
            config = config.with_overrides(table_lexicons=table_lexicons)
        server = MeepleServer(config, rng=random.Random(seed), clock=clock)
        if not default_lexicon:  # else the configured one (Wordnik), loaded when needed
            server.services.lexicon = gcide
        await server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        await server.stop()


class SharedChromium:
    """One headless Chromium per test process (an xdist worker), which each test's
    :func:`browser` reaches over the DevTools protocol with contexts of its own.

    Launching Chromium cost each of the 46 browser tests a second or more (issue 33);
    contexts are isolated (cookies, storage, cache), and the contexts a test made are
    closed when it disconnects. Started on first use; restarted if it died."""

    def __init__(self, profile: Path) -> None:
        self._profile = profile
        self._process: subprocess.Popen[bytes] | None = None
        self._drainer: threading.Thread | None = None
        self._endpoint = ""

    def endpoint(self) -> str:
        """The DevTools WebSocket URL of a running Chromium (started if need be)."""
        if self._process is None or self._process.poll() is not None:
            self.stop()
            self._start()
        return self._endpoint

    def _start(self) -> None:
        if not CHROMIUM.exists():
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)")
        self._process = subprocess.Popen(
            [str(CHROMIUM), *CHROMIUM_ARGS, "--remote-debugging-port=0",
             f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self._process.stderr is not None
        seen: list[str] = []
        # Chromium prints the endpoint on stderr once it listens; a bounded read of lines.
        for _ in range(200):
            line = self._process.stderr.readline(4096).decode("utf-8", "replace")
            if not line:
                break
            seen.append(line)
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                self._endpoint = found.group(1)
                # Drain the rest of stderr so that Chromium never blocks on a full pipe.
                self._drainer = threading.Thread(
                    target=self._drain, daemon=True, name="chromium-stderr"
                )
                self._drainer.start()
                return
        self.stop()
        pytest.fail("chromium did not start:\n" + "".join(seen[-20:]))

    def _drain(self) -> None:
        process = self._process
        if process is not None and process.stderr is not None:
            while process.stderr.read(65536):
                pass

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        # Its descendants too (the renderers, or a browser a wrapper script started):
        # whatever still holds the stderr pipe keeps the drainer reading.
        try:
            descendants = psutil.Process(process.pid).children(recursive=True)
        except psutil.Error:
            descendants = []
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for child in descendants:
            with contextlib.suppress(psutil.Error):
                child.kill()
        psutil.wait_procs(descendants, timeout=10)
        # The drain thread reads to the end of stderr (the process is gone), then the pipe
        # is closed: closing it under the thread's read raised in that thread.
        if self._drainer is not None:
            self._drainer.join(10)
            self._drainer = None
        if process.stderr is not None:
            process.stderr.close()


# A page's assertions wait up to PATIENCE (Playwright's default is 5 s): under make
# test's load (three workers and Chromium on two cores) a lobby update or a bot's move
# can take longer than 5 s to show, and at load 10-13 longer than 30 s (a server bot's
# Scrabble move, a table's first word list compiled); a test must not fail on the
# machine's speed (issue 33). A hang bound: a passing wait ends when the page does.
EXPECT_TIMEOUT_MS = PATIENCE_MS
expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def shared_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedChromium]:
    """This process's Chromium (see :class:`SharedChromium`), stopped at the session's end."""
    chromium = SharedChromium(tmp_path_factory.mktemp("chromium-profile"))
    with session_processes():  # the session's, not the test's that asked first
        chromium.endpoint()
    yield chromium
    chromium.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright_driver() -> AsyncIterator[Playwright]:
    """This process's Playwright: one driver (a node.js process) for every browser test
    of an xdist worker, on the session's event loop, stopped at the session's end.

    Starting one per test cost each browser test about 1.5 s of CPU (issue 33). It holds
    no browser state of its own: each test's :func:`browser` connects anew and closes the
    contexts it made. The tests that use a browser run on the session's event loop
    (tests/conftest.py ``SESSION_LOOP_FIXTURES``), where the driver's pipes live."""
    with session_processes():  # the driver and its child watcher's thread
        driver = await async_playwright().start()
    try:
        yield driver
    finally:
        await driver.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(
    shared_chromium: SharedChromium, playwright_driver: Playwright
) -> AsyncIterator[Browser]:
    """Debian's chromium, headless, driven by Playwright (never ``playwright install``):
    the process's shared one, whose contexts and pages this test opens are its own (a
    new connection per test; its contexts are closed at the test's end, so no cookie,
    storage or page reaches the next test)."""
    endpoint = shared_chromium.endpoint()
    chromium = await playwright_driver.chromium.connect_over_cdp(endpoint)
    try:
        yield chromium
    finally:
        await release(chromium)


async def release(chromium: Browser) -> None:
    """A test's end in the shared Chromium: the contexts it made (their pages, cookies
    and storage) closed, and its connection."""
    for context in chromium.contexts[1:]:  # [0] is Chromium's default context
        await context.close()
    await chromium.close()


# How often a page's waiting condition is checked. Playwright's default for
# wait_for_function ("raf": every animation frame) keeps Chromium drawing frames for as
# long as a test waits: 0.13 s of Chromium's CPU per second of waiting, against 0.006 s
# when checked every 100 ms (measured, issue 33). Every 50 ms stays close to a frame.
POLL_MS = 50


async def wait_for(
    page: Page, expression: str, *, arg: Any = None, timeout: float = PATIENCE_MS
) -> JSHandle:
    """``page.wait_for_function`` checked every :data:`POLL_MS` rather than every frame:
    the page's JS ``expression`` (given ``arg``) until it is truthy, for at most
    ``timeout`` ms (a hang bound; Playwright's own default is 30 s); its value."""
    return await page.wait_for_function(expression, arg=arg, timeout=timeout, polling=POLL_MS)


def screenshots_wanted() -> bool:
    """Whether this run saves docs/web/'s screenshots (MEEPLE_SCREENSHOTS=1): a test
    loads a page only to shoot it only then (a page load is a browser test's CPU)."""
    return os.environ.get("MEEPLE_SCREENSHOTS") == "1"


async def screenshot(page: Page, name: str, widths: tuple[tuple[int, int], ...] = WIDTHS) -> None:
    """Save the page at a narrow and a wide window when MEEPLE_SCREENSHOTS=1."""
    if not screenshots_wanted():
        return
    DOCS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    # Scrollbars drawn as a phone's are (over the page, taking no width): a full-page shot
    # is cut to the width measured beside the desktop's scrollbar (15 px less) while the
    # page is laid out without it, so its right edge looked cut (issue 34, 390 px).
    # (Set through the CSSOM, which the pages' CSP allows, and taken back after.)
    await page.evaluate("() => { document.documentElement.style.scrollbarWidth = 'none'; }")
    try:
        for width, height in widths:
            await page.set_viewport_size({"width": width, "height": height})
            await page.wait_for_timeout(100)
            await page.screenshot(path=str(DOCS / f"{name}-{width}.png"), full_page=True)
    finally:
        # The page measures itself again with the scrollbar back (the play page's fit).
        await page.evaluate(
            "() => { document.documentElement.style.scrollbarWidth = '';"
            " window.dispatchEvent(new Event('resize')); }"
        )
    if size is not None:
        await page.set_viewport_size(size)


async def slow_twente_bot(
    port: int, name: str, lexicon: Lexicon, *, delay: float, ready: asyncio.Event | None = None
) -> dict[str, int]:
    """A Twente bot that thinks ``delay`` seconds before each move (so a page can watch).

    It waits for ``ready`` before its first move; returns the final scores.
    """
    client = await TwenteClient.connect("127.0.0.1", port, name)
    try:
        await client.request_game(2)
        skip = 0
        async for message in client:
            if isinstance(message, NotifyTurn) and message.your_turn:
                skip = 0
                if ready is not None:
                    await ready.wait()
                await asyncio.sleep(delay)
                await _move(client, lexicon, skip)
            elif isinstance(message, Error) and client.turn == client.name:
                skip += 1
                if skip > 5:
                    await client.pass_turn()
                else:
                    await _move(client, lexicon, skip)
            elif isinstance(message, GameOver):
                return dict(message.scores)
    finally:
        await client.close()
    raise AssertionError(f"{name}: the connection ended before GAMEOVER")


async def _move(client: TwenteClient, lexicon: Lexicon, skip: int) -> None:
    choice = choose(
        client.board, client.rack, lexicon, bag_count=client.bag_count, skip=skip,
        exchange_minimum=1,
    )  # fmt: skip
    if isinstance(choice, PassChoice):
        await client.pass_turn()
    elif isinstance(choice, ExchangeChoice):
        await client.swap(choice.tiles)
    else:
        await client.play_word(choice.x, choice.y, choice.direction, choice.word)


async def stored_game(server: MeepleServer, game: str) -> GameRecord:
    """The one stored game of ``game`` (waiting a moment for the room to store it)."""
    store: Store = server.services.store
    await eventually(lambda: bool(store.games(game=game)), f"a {game} game stored")
    [record] = store.games(game=game)
    return record


async def web_socket(server: MeepleServer | int) -> ClientConnection:
    """A meeple-web/1 connection to ``server``'s web listener (or a port), past hello."""
    port = server if isinstance(server, int) else server.ports["web"]
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=2**22)
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def type_move(page: Page, view: dict[str, Any], lexicon: Lexicon) -> None:
    """Play the AI's best play the way a person types it: click the first square (again
    for downwards), the letters (``?`` first for a blank's), Enter; with no play, an
    exchange while the bag has tiles, else a pass."""
    rack = view["rack"]
    found = ranked_moves(Board.from_rows(view["board"]), rack, lexicon, ENGLISH)
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


# The page's next view to act on: the game over, or this seat's turn after ``seen`` moves.
NEXT_VIEW = """(seen) => {
  const v = window.meeple.view;
  if (!v) return null;
  if (v.over) return v;
  if (v.turn === v.you && v.moves.length > seen) return v;
  return null;
}"""


async def open_table(
    page: Page, server: MeepleServer, name: str, game: str, size: int, *, ready: bool = False
) -> None:
    """On /play: open a ``game`` ("scrabble/twente") table of ``size`` as ``name`` and sit."""
    await page.goto(f"http://127.0.0.1:{server.ports['web']}/play")
    await page.fill("#create [name=name]", name)
    await page.select_option("#create [name=game]", game)
    await page.fill("#create [name=size]", str(size))
    if ready:
        await page.check("#create [name=ready]")
    await page.click("#create button[type=submit]")
    await expect(page.locator("#play")).to_be_visible()


async def end_game(page: Page) -> None:
    """Give the play page's game up as a player would: before their first move Abort
    (issue 34.4), after it Resign, after the page asks. Either way this waits for the
    server's word that the game is over (the result shows), so the name is free when the
    caller goes on: Leave would stand up at once, before the server had the abort, and a
    "Play X now" that followed could find the old seat still held and bring that game
    back (a flake under load)."""
    if await page.evaluate("() => !!window.meeple.view?.may_abort"):
        await page.click("#abort")
        await expect(page.locator("#result")).to_contain_text("Game aborted")
        await page.click("#again")
        await expect(page.locator("#join")).to_be_visible()
    else:
        await page.click("#resign")
        await page.click("#resign-yes")
        await expect(page.locator("#over")).to_be_visible()


# axe-core at the release the tests pin (scripts/fetch_axe.py; `make test` fetches it into
# the virtual environment): the wrapper's bundled copy is older, with laxer rules.
AXE_SCRIPT = Path(sys.prefix) / "share" / "axe-core" / "axe.min.js"


class PinnedAxe(Axe):
    """axe-core of the pinned release, put into a document once.

    The wrapper's ``run`` evaluates the whole script (650 KB, through the Playwright
    driver and Chromium's browser process into the page, compiled there) before every
    run; the page tours run axe twice on each page (at a phone's width and a desktop's),
    so the second run in a document finds this release's ``axe`` there and reuses it: on
    the lobby a run cost Chromium 0.18-0.30 s of CPU with the script, 0.10-0.12 s
    without (issue 33). A new document (a navigation) gets it again."""

    def __init__(self, axe_script: str, version: str) -> None:
        super().__init__(axe_script=axe_script)
        self.version = version

    async def run(
        self,
        page: Page,
        context: str | list[Any] | dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> AxeResults:
        """axe-core's results on ``page`` as it is now (``options`` as axe.run's)."""
        if not await page.evaluate("(v) => window.axe?.version === v", self.version):
            await page.evaluate(self.axe_script)
        arguments = self._format_script_args(context=context, options=options or DEFAULT_OPTIONS)
        return AxeResults(await page.evaluate(f"axe.run({arguments})"))


@functools.cache
def axe() -> PinnedAxe:
    """An axe-core runner of the pinned release (never the wrapper's bundled one)."""
    if not AXE_SCRIPT.is_file():
        pytest.fail(f"{AXE_SCRIPT} is missing: `make test` fetches it (scripts/fetch_axe.py)")
    script = AXE_SCRIPT.read_text(encoding="utf-8")
    release = re.match(r"/\*! axe v(\S+)", script)
    if release is None:
        pytest.fail(f"{AXE_SCRIPT} does not start with axe-core's banner")
    return PinnedAxe(script, release.group(1))

"""Page weight benchmark: ``python benchmarks/page_weight.py``.

What a browser downloads for each page (issue 24: the play page should carry only the
game being played; issue 34: every page under 110 KB): the lobby, the play page of each
game, the same game watched (live) and its replay (after an abort), ``/games``,
``/ratings``, a player, the kits' guide and the account page. A real server (web only, on a
free loopback port, a throwaway database) and Debian's Chromium: the script opens ``/``,
then ``/play?game=<game>&bot=1`` for each game ("Play X now": a table and a bot), waits
until the game's board is drawn, and adds up the bodies of every response the page
fetched (HTML, CSS, JS modules, SVG; no compression is served), in bytes. It prints one
line per page and, with ``--files``, each file.

To compare with another checkout, run it with that checkout's code first on the path:
``PYTHONPATH=/path/to/other/src .venv/bin/python benchmarks/page_weight.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import tempfile
from pathlib import Path

from playwright.async_api import Response, async_playwright

from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
GAMES = ("scrabble/twente", "santorini/standard", "spectrangle/standard")


async def _weigh(page: object, url: str, ready: str | None) -> dict[str, int]:
    sizes: dict[str, int] = {}
    pending: list[asyncio.Task[None]] = []

    async def body(response: Response) -> None:
        # A redirect or a WebSocket upgrade has no body.
        with contextlib.suppress(Exception):
            sizes[response.url.split("?")[0]] = len(await response.body())

    page.on("response", lambda r: pending.append(asyncio.ensure_future(body(r))))  # type: ignore[attr-defined]
    await page.goto(url)  # type: ignore[attr-defined]
    if ready is not None:
        await page.wait_for_function(ready, timeout=60_000)  # type: ignore[attr-defined]
    await page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    await asyncio.gather(*pending)
    return sizes


# The name the play pages take (kept per browser context: each is new, so it is set).
_PLAYER = "weigher"


def _report(name: str, sizes: dict[str, int], base: str, files: bool) -> None:
    total = sum(sizes.values())
    print(f"{name:22} {total:7d} bytes in {len(sizes)} files")
    if files:
        for path, size in sorted(sizes.items()):
            print(f"    {size:7d}  {path.removeprefix(base)}")


async def main(files: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # GCIDE: its compiled cache is shared by every checkout (ENABLE's is per checkout).
        config = ServerConfig(database=str(Path(tmp) / "m.sqlite3"), lexicon="gcide").only("web")
        server = MeepleServer(config, rng=random.Random(1))
        await server.start()
        try:
            base = f"http://127.0.0.1:{server.ports['web']}"
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                board = "() => window.meeple?.view && document.querySelector('#board *')"
                drawn = "() => document.querySelector('#board *')"

                async def weigh(name: str, url: str, ready: str | None) -> None:
                    context = await browser.new_context()
                    page = await context.new_page()
                    sizes = await _weigh(page, url, ready)
                    _report(name, sizes, base, files)
                    await context.close()

                await weigh("lobby", f"{base}/", None)
                uids = []
                for g in GAMES:
                    game = g.split("/")[0]
                    # The play page of a game against a bot, then the same game watched
                    # (the live page) while it runs.
                    context = await browser.new_context()
                    await context.add_init_script(
                        f"localStorage.setItem('meeple.name', '{_PLAYER}')"
                    )
                    page = await context.new_page()
                    sizes = await _weigh(page, f"{base}/play?game={g}&bot=1", board)
                    _report(f"play {game}", sizes, base, files)
                    uid = await page.evaluate("() => window.meeple.uid")
                    uids.append((game, uid))
                    await weigh(f"live {game}", f"{base}/games/{uid}", drawn)
                    await page.locator("#abort").click()  # over: its replay is stored
                    await page.wait_for_function("() => window.meeple.view?.over")
                    await context.close()
                for game, uid in uids:
                    await weigh(f"replay {game}", f"{base}/games/{uid}", drawn)
                for path in ("/games", "/ratings", f"/players/{_PLAYER}", "/check", "/account"):
                    await weigh(path, f"{base}{path}", None)
                await browser.close()
        finally:
            await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list each file's size")
    asyncio.run(main(parser.parse_args().files))

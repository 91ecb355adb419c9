"""Lobby to a running game against a bot: ``python benchmarks/lobby_to_game.py [--runs N]``.

Issue 34's figure: the time from a click on "Play X now" on the lobby (``/``) to the game
running on the play page (its first view there and its board drawn), ≤ 1 s. A real
server (web only, a free loopback port, a throwaway database, GCIDE) and Debian's
Chromium; each run is a fresh browser context (no rejoin token, no cache), so it
includes the play page's download, the WebSocket's hello, the table, the bot's seat and
the room's start. The lobby is loaded first (not timed). Prints p50, p90 and the
maximum per game over ``--runs`` runs (10 by default), and the machine's load.

To compare with another checkout, run it with that checkout's code first on the path:
``PYTHONPATH=/path/to/other/src .venv/bin/python benchmarks/lobby_to_game.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from playwright.async_api import async_playwright

from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
GAMES = ("scrabble", "santorini", "spectrangle")
RUNNING = (
    "() => !!(window.meeple?.view && !window.meeple.view.over"
    " && document.querySelector('#board *'))"
)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(database=str(Path(tmp) / "m.sqlite3"), lexicon="gcide").only("web")
        server = MeepleServer(config, rng=random.Random(1))
        await server.start()
        try:
            base = f"http://127.0.0.1:{server.ports['web']}"
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                for game in GAMES:
                    times: list[float] = []
                    for _ in range(runs + 1):  # the first run warms the server: not counted
                        context = await browser.new_context()
                        page = await context.new_page()
                        await page.goto(f"{base}/")
                        link = page.locator(f"#play-now a[data-game={game}]")
                        await link.wait_for()
                        started = time.perf_counter()
                        await link.click()
                        await page.wait_for_function(RUNNING, timeout=30_000, polling=10)
                        times.append(time.perf_counter() - started)
                        # Give the game up (an abort: nobody has moved) so the bot's seat
                        # and the room end before the next run.
                        with contextlib.suppress(Exception):
                            await page.locator("#abort").click(timeout=2_000)
                        await context.close()
                    counted = times[1:]
                    print(
                        f"{game:12} p50 {statistics.median(counted) * 1000:6.0f} ms"
                        f"  p90 {_quantile(counted, 0.9) * 1000:6.0f} ms"
                        f"  max {max(counted) * 1000:6.0f} ms  ({len(counted)} runs)"
                    )
                print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                await browser.close()
        finally:
            await server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per game (default 10)")
    asyncio.run(main(parser.parse_args().runs))

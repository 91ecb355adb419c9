"""Server-side bots and the event loop: ``python benchmarks/bot_loop_lag.py``.

Plays whole games between two in-process bots at one lobby table (one of them counted
as a person so that the table starts) while a ticker measures how late the event loop
wakes it (``asyncio.sleep(1 ms)``): the lag other connections would see while the bots
think. Bots think in the loop's executor, so the lag stays near the interpreter's
thread switch interval (5 ms) even when a Santorini search takes far longer. Prints,
per game, the moves, the think time per move and the loop lag p50/p99/max. Figures
depend on the machine and its load: re-run the command rather than trust one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from typing import Any

from meeple.server.app import Services
from meeple.server.config import ServerConfig
from meeple.server.lobby.bots import BotSeat, SantoriniBot, ScrabbleBot, add_bot
from meeple.server.lobby.tables import server_lobby
from meeple.server.rooms.santorini import santorini_lobby
from meeple.server.rooms.scrabble import scrabble_lobby
from meeple.server.rooms.spectrangle import spectrangle_lobby


class _Timed:
    """Mixin: counts the bot's decisions and the time they took in the executor."""

    decisions: int
    thought: float

    def think(self, decide: Any) -> None:
        def timed() -> object:
            start = time.perf_counter()
            try:
                return decide()
            finally:
                self.thought += time.perf_counter() - start
                self.decisions += 1

        super().think(timed)  # type: ignore[misc]


class PersonScrabble(_Timed, ScrabbleBot):
    bot = False  # stands for a person: the lobby starts its table


class PersonSantorini(_Timed, SantoriniBot):
    bot = False


async def _ticker(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - start - 0.001)


async def _game(services: Services, game: str, variant: str) -> None:
    lobby = server_lobby(services)
    table = lobby.create_table(game, variant, 2)
    bot: BotSeat = add_bot(services, table.id)
    cls = PersonScrabble if game == "scrabble" else PersonSantorini
    extra: dict[str, Any] = {}
    if game == "scrabble":
        extra["lexicon"] = services.lexicon
    person = cls("person", lobby, services.names, level="hard", rng=random.Random(7), **extra)
    person.decisions, person.thought = 0, 0.0
    services.names.claim("person", person)
    lags: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.create_task(_ticker(lags, stop))
    start = time.perf_counter()
    room = lobby.sit(table.id, person)
    assert room is not None
    await room.wait_finished()
    elapsed = time.perf_counter() - start
    stop.set()
    await ticker
    services.names.release("person", person)
    lags.sort()
    p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
    per_move = person.thought / max(1, person.decisions)
    print(
        f"{game}/{variant}: {elapsed:.2f} s, {person.decisions} moves by one bot,"
        f" {per_move * 1e3:.1f} ms thinking per move; loop lag over {len(lags)} ticks:"
        f" p50 {statistics.median(lags) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms,"
        f" max {lags[-1] * 1e3:.2f} ms"
    )
    del bot


async def _main(games: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(database=os.path.join(tmp, "bench.sqlite3"))
        services = Services(config, rng=random.Random(2026))
        scrabble_lobby(services)
        santorini_lobby(services)
        spectrangle_lobby(services)
        for _ in range(games):
            await _game(services, "scrabble", "twente")
            await _game(services, "santorini", "gods")
        services.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="games of each kind")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, nproc {os.cpu_count()}")
    print(f"switch interval {sys.getswitchinterval() * 1e3:.0f} ms")
    asyncio.run(_main(args.games))


if __name__ == "__main__":
    main()

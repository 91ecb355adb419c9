"""``meeple bot santorini``: a bot that plays whole AM27 games against a server."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from meeple.server.config import DEFAULT_PORTS

__all__ = ["register_bot", "run_bot"]


def register_bot(games: Any) -> None:
    """Add ``santorini`` under ``meeple bot``."""
    p: argparse.ArgumentParser = games.add_parser(
        "santorini", help="a Santorini bot over AM27", description="Play Santorini over AM27."
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=DEFAULT_PORTS["santorini"])
    p.add_argument("--name", default="meeple-bot")
    p.add_argument("--players", type=int, default=2, choices=(2, 3))
    p.add_argument("--gods", action="store_true", help="play with god powers")
    p.add_argument("--games", type=int, default=1, help="games to play in a row (default 1)")
    p.add_argument("--seed", type=int, help="seed the bot's choices")
    p.set_defaults(handler=run_bot)


def run_bot(args: argparse.Namespace) -> int:
    from meeple.clients.santorini import SantoriniClientError, play_santorini

    try:
        results = asyncio.run(
            play_santorini(
                args.host,
                args.port,
                args.name,
                players=args.players,
                gods=args.gods,
                games=args.games,
                seed=args.seed,
            )
        )
    except (OSError, SantoriniClientError) as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return 1
    for r in results:
        gods = ", ".join(f"{n} ({g})" for n, g in r.gods.items())
        outcome = f"{r.winner} won" if r.winner else f"{r.ended_by} left"
        print(f"{outcome} after {r.turns} turns of ours: {gods}")
    return 0

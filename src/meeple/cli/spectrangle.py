"""``meeple bot spectrangle``: a greedy Spectrangle bot that plays whole games.

Example::

    meeple bot spectrangle --host 127.0.0.1 --port 4000 --name bot1 --players 3

connects, asks for a game of ``--players`` players, plays ``--games`` games with the
greedy player of :mod:`meeple.ai.spectrangle`, and prints one line per game: the
leaderboard (``finished: bot1 97 bot2 74 ...``) or who left (``abandoned: bot2 left``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from meeple.cli.waits import add_patience_arguments, bot_patience, play_games
from meeple.server.config import DEFAULT_PORTS

__all__ = ["register_bot", "run_bot"]


def register_bot(games: Any) -> None:
    """Add ``spectrangle`` to the games of ``meeple bot``."""
    s: argparse.ArgumentParser = games.add_parser(
        "spectrangle", help="a Spectrangle bot (best immediate score)"
    )
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=DEFAULT_PORTS["spectrangle"])
    s.add_argument("--name", default="meeple-bot")
    s.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    s.add_argument("--games", type=int, default=1, help="games to play in a row (default 1)")
    s.add_argument("--chat", action="store_true", help="ask for the chat extension")
    add_patience_arguments(s)
    s.set_defaults(handler=run_bot)


def run_bot(args: argparse.Namespace) -> int:
    """Handler of ``meeple bot spectrangle``: 0 after the games, 1 on a connection problem."""
    from meeple.clients.spectrangle import SpectrangleClientError, play_spectrangle

    if args.games < 1:
        print("meeple bot: --games must be at least 1", file=sys.stderr)
        return 2
    patience = bot_patience(args)
    if patience is None:
        return 2
    games = play_spectrangle(
        args.host,
        args.port,
        args.name,
        players=args.players,
        games=args.games,
        chat=args.chat,
        patience=patience,
    )
    results = play_games(games, (SpectrangleClientError, ValueError))
    if results is None:
        return 1
    for r in results:
        if r.leaderboard is not None:
            print("finished: " + "  ".join(f"{n} {p}" for n, p in r.leaderboard))
        else:
            print(f"abandoned: {r.left} left")
    return 0 if len(results) == args.games else 1

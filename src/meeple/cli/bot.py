"""``meeple bot``: run a bot that connects to a server and plays whole games."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from meeple.cli.options import add_lexicon_argument
from meeple.cli.santorini import register_bot as register_santorini_bot
from meeple.cli.spectrangle import register_bot as register_spectrangle_bot
from meeple.cli.waits import add_patience_arguments, bot_patience, patience_from, play_games
from meeple.server.config import DEFAULT_PORTS

__all__ = ["register"]

PROTOCOLS = ("twente", "clarkson", "cmpn402")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "bot", help="run a bot against a server", description="Run a bot that plays whole games."
    )
    games = p.add_subparsers(dest="game", required=True, metavar="GAME")
    s = games.add_parser(
        "scrabble", help="a Scrabble bot (the strong player unless --level greedy)"
    )
    s.add_argument("--protocol", choices=PROTOCOLS, default="twente")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, help="default: the protocol's default port")
    s.add_argument("--name", default="meeple-bot")
    s.add_argument("--players", type=int, default=2, choices=(1, 2, 3, 4))
    s.add_argument("--games", type=int, default=1, help="games to play in a row (default 1)")
    add_lexicon_argument(
        s, "lexicon name or word-list path (default %(default)s, as meeple serve's)"
    )
    s.add_argument(
        "--level",
        choices=("greedy", "strong"),
        default="strong",
        help="greedy: best score; strong: equity, simulation and endgame search (default)",
    )
    s.add_argument(
        "--think-time",
        type=float,
        default=1.0,
        metavar="T",
        help="seconds per move for the strong level (default 1; CMPN402 also keeps within "
        "the game clock)",
    )
    add_patience_arguments(s)
    s.set_defaults(handler=run_scrabble)
    register_spectrangle_bot(games)
    register_santorini_bot(games)


def run_scrabble(args: argparse.Namespace) -> int:
    from meeple.clients.scrabble_bot import configure

    if not 0 <= args.think_time <= 60:
        print("meeple bot: --think-time must be between 0 and 60 seconds", file=sys.stderr)
        return 2
    if bot_patience(args) is None:
        return 2
    with configure(args.level, args.think_time):
        return _run_scrabble(args)


def _run_scrabble(args: argparse.Namespace) -> int:
    from meeple.clients.scrabble_bot import play_twente
    from meeple.clients.twente import TwenteClientError
    from meeple.games.scrabble.lexicon import LexiconError, load_lexicon

    try:
        lexicon = load_lexicon(args.lexicon)
    except LexiconError as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return 2
    port = args.port if args.port is not None else DEFAULT_PORTS[args.protocol]
    if args.protocol == "cmpn402":
        from meeple.clients.cmpn402 import run_builtin

        return run_builtin(
            args.host, port, args.name, lexicon, games=args.games, patience=patience_from(args)
        )
    if args.protocol == "clarkson":
        from meeple.clients.clarkson import run_bot

        return run_bot(
            args.host,
            port,
            args.name,
            lexicon,
            args.players,
            args.games,
            patience=patience_from(args),
        )
    games = play_twente(
        args.host,
        port,
        args.name,
        lexicon,
        players=args.players,
        games=args.games,
        patience=patience_from(args),
    )
    results = play_games(games, (TwenteClientError,))
    if results is None:
        return 1
    for r in results:
        print(r.line())
    return 0

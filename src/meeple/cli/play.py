"""``meeple play GAME``: play a game from the terminal against people or bots on a server.

::

    meeple play scrabble                      # Twente on 127.0.0.1:7777, as $USER
    meeple play scrabble --name Ann --players 3 --host games.example.org --port 7777

``--protocol`` picks the client by name among those :data:`meeple.tui.registry.GAMES`
lists for the game; ``--port`` defaults to that protocol's default port, so no flag is
needed against a local ``meeple serve``.
"""

from __future__ import annotations

import argparse
import getpass
import logging
from typing import Any

from meeple.server.config import DEFAULT_PORTS
from meeple.tui.registry import GAMES

__all__ = ["build_app", "default_name", "register", "run_play"]


def default_name() -> str:
    """The login name, or ``player`` when there is none."""
    try:
        return getpass.getuser() or "player"
    except (OSError, KeyError):
        return "player"


def register(sub: Any) -> None:
    """Add ``play`` and one sub-command per game to the ``meeple`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "play",
        help="play a game in the terminal",
        description="Connect to a server and play a game in a terminal UI.",
    )
    games = p.add_subparsers(dest="game", required=True, metavar="GAME")
    for game, entry in GAMES.items():
        g = games.add_parser(game, help=f"play {entry.title}")
        g.add_argument(
            "--protocol",
            choices=sorted(entry.protocols),
            default=entry.default_protocol,
            help=f"wire protocol (default {entry.default_protocol})",
        )
        g.add_argument("--host", default="127.0.0.1", help="server address (default 127.0.0.1)")
        g.add_argument("--port", type=int, help="default: the protocol's default port")
        g.add_argument("--name", default=None, help="your name at the table (default: login)")
        g.add_argument(
            "--players",
            type=int,
            default=2,
            choices=(1, 2, 3, 4),
            help="table size (default 2; 1 plays alone where the protocol allows)",
        )
        if game == "santorini":
            g.add_argument("--gods", action="store_true", help="play with god powers")
        g.add_argument(
            "--log-file", help="write log lines to this file (default: none, the screen is busy)"
        )
        g.set_defaults(handler=run_play)


def build_app(args: argparse.Namespace) -> Any:
    """The Textual app for the game, wired to the chosen protocol's connector."""
    from meeple.tui.connection import ConnectOptions
    from meeple.tui.registry import load

    entry = GAMES[args.game]
    port = args.port if args.port is not None else DEFAULT_PORTS[args.protocol]
    options = ConnectOptions(
        args.host,
        port,
        args.name or default_name(),
        args.players,
        gods=getattr(args, "gods", False),
    )
    app_class = load(entry.app)
    connector = load(entry.protocols[args.protocol])
    return app_class(connector, options, protocol=args.protocol)


def run_play(args: argparse.Namespace) -> int:
    """Handler of ``meeple play GAME``: build the app for the game and protocol and run it."""
    app = build_app(args)
    # Log lines on stderr would scribble over the screen: a file, or nowhere, while it runs.
    root = logging.getLogger()
    saved = root.handlers
    handler: logging.Handler = logging.NullHandler()
    if args.log_file:
        handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.handlers = [handler]
    try:
        app.run()
    finally:
        root.handlers = saved
        handler.close()
    return 0

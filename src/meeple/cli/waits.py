"""``--notice`` and ``--give-up`` for every ``meeple bot``: how long it waits on a server,
and how a bot's games are run and fail alike (exit 2 for bad options, 1 for the server).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from meeple.clients.watch import Patience

__all__ = ["add_patience_arguments", "bot_patience", "patience_from", "play_games"]

T = TypeVar("T")


def add_patience_arguments(p: argparse.ArgumentParser) -> None:
    """``--notice`` and ``--give-up``: how long a bot waits on the server (issue 31)."""
    p.add_argument(
        "--notice",
        type=float,
        default=10.0,
        metavar="S",
        help="say in the log after S seconds without an answer the server owes, "
        "and again each time the wait doubles (default 10)",
    )
    p.add_argument(
        "--give-up",
        type=float,
        default=120.0,
        metavar="S",
        help="stop (exit 1) after S seconds without an answer the server owes; "
        "0: never (default 120)",
    )


def patience_from(args: argparse.Namespace) -> Patience:
    """The :class:`~meeple.clients.watch.Patience` of ``--notice`` and ``--give-up``
    (ValueError with a sentence if they make none)."""
    from meeple.clients.watch import Patience

    return Patience(args.notice, args.give_up or None)


def bot_patience(args: argparse.Namespace) -> Patience | None:
    """:func:`patience_from`, or None once the reason it makes none is on stderr (a bot
    then exits 2)."""
    try:
        return patience_from(args)
    except ValueError as e:
        print(f"meeple bot: --notice/--give-up: {e}", file=sys.stderr)
        return None


def play_games(games: Coroutine[Any, Any, T], errors: tuple[type[Exception], ...]) -> T | None:
    """Run a bot's ``games`` to their end: their result, or None once a connection problem
    (``OSError``, the server owing an answer too long, or one of ``errors``) is on stderr
    (a bot then exits 1)."""
    from meeple.clients.watch import NoAnswer

    caught: tuple[type[Exception], ...] = (OSError, NoAnswer, *errors)
    try:
        return asyncio.run(games)
    except caught as e:
        print(f"meeple bot: {e}", file=sys.stderr)
        return None

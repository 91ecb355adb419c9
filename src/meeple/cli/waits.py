"""``--notice`` and ``--give-up`` for every ``meeple bot``: how long it waits on a server."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meeple.clients.watch import Patience

__all__ = ["add_patience_arguments", "patience_from"]


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

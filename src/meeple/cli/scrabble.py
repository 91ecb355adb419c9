"""``meeple scrabble``: Scrabble tools. ``moves`` lists every legal play of a CGP position.

Example::

    meeple scrabble moves --cgp "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"

prints one play per line as ``<GCG position> <word> <score>`` (``8D`` across, ``D8``
down), best first; ``--count`` prints only how many there are.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from meeple.games.scrabble.cgp import parse_cgp
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, LexiconError, load_lexicon
from meeple.games.scrabble.movegen import legal_moves
from meeple.games.scrabble.moves import Move

__all__ = ["move_sort_key", "register", "run_moves"]

EXIT_USAGE = 2


def register(sub: Any) -> None:
    """Add ``scrabble`` and its sub-commands to the ``meeple`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "scrabble",
        help="Scrabble tools (move generation)",
        description="Scrabble tools that work on positions written in CGP.",
    )
    tools = p.add_subparsers(dest="scrabble_command", required=True, metavar="TOOL")
    moves = tools.add_parser(
        "moves",
        help="list every legal play of a position, best first",
        description="List every legal tile play of a CGP position, best first, one per line "
        "as '<position> <word> <score>' in GCG notation.",
    )
    moves.add_argument("--cgp", required=True, help="the position, as one CGP line (quote it)")
    moves.add_argument("--rack", help="rack to use instead of the CGP's (? for a blank)")
    moves.add_argument(
        "--lexicon",
        default=DEFAULT_LEXICON,
        help=f"lexicon name or word-list path (default {DEFAULT_LEXICON})",
    )
    moves.add_argument(
        "--cache-dir", help="where compiled lexicons are kept (default $MEEPLE_CACHE_DIR)"
    )
    moves.add_argument("--top", type=int, metavar="N", help="print only the N best plays")
    moves.add_argument("--count", action="store_true", help="print only the number of plays")
    moves.set_defaults(handler=run_moves)


def move_sort_key(move: Move) -> tuple[int, int, int, int, str]:
    """Best first: higher score, then across before down, then row, column, word."""
    return (-move.score, move.direction.value != "across", move.y, move.x, move.word)


def _fail(message: str) -> int:
    print(f"meeple scrabble: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_moves(args: argparse.Namespace) -> int:
    """Handler of ``meeple scrabble moves``."""
    if args.top is not None and args.top < 0:
        return _fail("--top must not be negative")
    try:
        position = parse_cgp(args.cgp)
    except NotationError as exc:
        return _fail(f"bad CGP: {exc}")
    rack = position.rack if args.rack is None else args.rack
    try:
        lexicon = load_lexicon(args.lexicon, cache_dir=args.cache_dir)
    except LexiconError as exc:
        return _fail(str(exc))
    try:
        moves = legal_moves(position.board, rack, lexicon)
    except NotationError as exc:
        return _fail(f"bad rack: {exc}")
    if args.count:
        print(len(moves))
        return 0
    moves.sort(key=move_sort_key)
    if args.top is not None:
        moves = moves[: args.top]
    sys.stdout.write("".join(f"{m.position} {m.word} {m.score}\n" for m in moves))
    return 0

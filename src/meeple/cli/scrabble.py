"""``meeple scrabble``: Scrabble tools. ``moves`` lists every legal play of CGP positions.

Example::

    meeple scrabble moves --cgp "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0"

prints one play per line as ``<GCG position> <word> <score>`` (``8D`` across, ``D8``
down), best first; ``--count`` prints only how many there are. ``--cgp-file FILE``
analyses one CGP per line (``--count`` or ``--top N`` each) and ends with
``generated P plays for N positions in T ms``, timed around generation only.
``--engine native|python`` picks the move generator (default: native when built).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from meeple.ai.match import run_match
from meeple.ai.scrabble import DEFAULT_THINK_TIME, LEVELS, make_player
from meeple.cli.options import add_lexicon_argument
from meeple.cli.progress import add_progress_argument, progress_every
from meeple.games.scrabble.cgp import MAX_CGP_LENGTH, CgpPosition, parse_cgp
from meeple.games.scrabble.engine import ENGINES, EngineUnavailable, get_generator, rank_key
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.lexicon import LexiconError, load_lexicon
from meeple.games.scrabble.moves import Move

__all__ = ["move_sort_key", "register", "run_match_command", "run_moves"]

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
    source = moves.add_mutually_exclusive_group(required=True)
    source.add_argument("--cgp", help="the position, as one CGP line (quote it)")
    source.add_argument(
        "--cgp-file",
        type=Path,
        metavar="FILE",
        help="many positions, one CGP per line (blank lines and # comments skipped); "
        "needs --count or --top N",
    )
    moves.add_argument("--rack", help="rack to use instead of the CGP's (? for a blank)")
    add_lexicon_argument(moves, "lexicon name or word-list path (default %(default)s)")
    moves.add_argument(
        "--cache-dir", help="where compiled lexicons are kept (default $MEEPLE_CACHE_DIR)"
    )
    moves.add_argument("--top", type=int, metavar="N", help="print only the N best plays")
    moves.add_argument("--count", action="store_true", help="print only the number of plays")
    moves.add_argument(
        "--engine",
        choices=("auto", *ENGINES),
        default="auto",
        help="move generator: the compiled one, the pure-Python reference, or auto "
        "(compiled when built; default)",
    )
    moves.set_defaults(handler=run_moves)

    match = tools.add_parser(
        "match",
        help="play two AI levels against each other in-process",
        description="Play whole games between two AI levels, alternating who starts, and "
        "print the result as 'A v B: W-L-D, win rate …, mean spread …, … s per move'.",
    )
    match.add_argument("level_a", choices=LEVELS, metavar="LEVEL_A", help="greedy or strong")
    match.add_argument("level_b", choices=LEVELS, metavar="LEVEL_B", help="greedy or strong")
    match.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    match.add_argument("--seed", type=int, default=0, help="seed of the games' RNGs")
    add_lexicon_argument(match, "lexicon name or word-list path (default %(default)s)")
    match.add_argument(
        "--think-time",
        type=float,
        default=DEFAULT_THINK_TIME,
        metavar="T",
        help=f"seconds per move for the strong level (default {DEFAULT_THINK_TIME:g})",
    )
    match.add_argument("--engine", choices=("auto", *ENGINES), default="auto")
    add_progress_argument(match)
    match.set_defaults(handler=run_match_command)


def move_sort_key(move: Move) -> tuple[float, bool, int, int, str]:
    """Best first: higher score, then across before down, then row, column, word."""
    return rank_key(move)


# A --cgp-file larger than this is not a list of positions (a CGP line is < 2 KiB).
MAX_CGP_FILE_BYTES = 64 * 1024 * 1024


def _fail(message: str) -> int:
    print(f"meeple scrabble: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _read_cgp_file(path: Path) -> list[CgpPosition]:
    """Every position in the file; NotationError/OSError name the line that is wrong."""
    with path.open("rb") as f:
        data = f.read(MAX_CGP_FILE_BYTES + 1)
    if len(data) > MAX_CGP_FILE_BYTES:
        raise OSError(f"{path}: larger than {MAX_CGP_FILE_BYTES} bytes")
    positions = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if len(text) > MAX_CGP_LENGTH:
            raise NotationError(f"line {number}: longer than {MAX_CGP_LENGTH} characters")
        try:
            positions.append(parse_cgp(text))
        except NotationError as exc:
            raise NotationError(f"line {number}: {exc}") from exc
    return positions


def run_moves(args: argparse.Namespace) -> int:
    """Handler of ``meeple scrabble moves``."""
    if args.top is not None and args.top < 0:
        return _fail("--top must not be negative")
    if args.cgp_file is not None and not args.count and args.top is None:
        return _fail("--cgp-file needs --count or --top N")
    try:
        if args.cgp_file is not None:
            positions = _read_cgp_file(args.cgp_file)
        else:
            positions = [parse_cgp(args.cgp)]
    except NotationError as exc:
        return _fail(f"bad CGP: {exc}")
    except OSError as exc:
        return _fail(f"cannot read the CGP file: {exc}")
    try:
        generator = get_generator(args.engine)
    except EngineUnavailable as exc:
        return _fail(str(exc))
    try:
        lexicon = load_lexicon(args.lexicon, cache_dir=args.cache_dir)
    except LexiconError as exc:
        return _fail(str(exc))
    if args.cgp_file is None:
        return _one_position(args, generator, positions[0], lexicon)
    return _many_positions(args, generator, positions, lexicon)


def _one_position(
    args: argparse.Namespace, generator: Any, position: CgpPosition, lexicon: Any
) -> int:
    rack = position.rack if args.rack is None else args.rack
    try:
        if args.count:
            print(generator.count(position.board, rack, lexicon))
            return 0
        if args.top is not None:
            moves = generator.best(position.board, rack, lexicon, n=args.top)
        else:
            moves = sorted(generator.plays(position.board, rack, lexicon), key=move_sort_key)
    except NotationError as exc:
        return _fail(f"bad rack: {exc}")
    sys.stdout.write("".join(f"{m.position} {m.word} {m.score}\n" for m in moves))
    return 0


def _many_positions(
    args: argparse.Namespace, generator: Any, positions: list[CgpPosition], lexicon: Any
) -> int:
    total = 0
    elapsed = 0.0
    out = []
    if positions:
        # One-time setup (the compiled core's structure check of the GADDAG) is not
        # generation: do it before the clock starts.
        generator.count(positions[0].board, "", lexicon)
    for i, position in enumerate(positions, 1):
        rack = position.rack if args.rack is None else args.rack
        try:
            start = time.perf_counter()
            if args.count:
                n = generator.count(position.board, rack, lexicon)
                elapsed += time.perf_counter() - start
                out.append(f"{i}: {n} plays\n")
                total += n
            else:
                moves = generator.best(position.board, rack, lexicon, n=args.top)
                elapsed += time.perf_counter() - start
                out.append(f"{i}: {len(moves)} plays\n")
                out.extend(f"  {m.position} {m.word} {m.score}\n" for m in moves)
                total += len(moves)
        except NotationError as exc:
            return _fail(f"position {i}: bad rack: {exc}")
    sys.stdout.write("".join(out))
    print(f"generated {total} plays for {len(positions)} positions in {elapsed * 1e3:.1f} ms")
    return 0


def run_match_command(args: argparse.Namespace) -> int:
    """Handler of ``meeple scrabble match``."""
    if args.games < 1:
        return _fail("--games must be at least 1")
    if not 0 <= args.think_time <= 60:
        return _fail("--think-time must be between 0 and 60 seconds")
    try:
        generator = get_generator(args.engine)
        lexicon = load_lexicon(args.lexicon)
    except (EngineUnavailable, LexiconError) as exc:
        return _fail(str(exc))
    players = (
        make_player(args.level_a, lexicon, generator=generator),
        make_player(args.level_b, lexicon, generator=generator),
    )

    result = run_match(
        players,
        args.games,
        lambda g: random.Random(f"{args.seed}/{g}"),
        think_time=args.think_time,
        clock=time.perf_counter,
        progress=progress_every(args.progress),
    )
    print(result.summary())
    return 0

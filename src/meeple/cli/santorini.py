"""``meeple santorini match`` (AI matches) and ``meeple bot santorini`` (an AM27 bot)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from meeple.cli.progress import add_progress_argument, progress_every
from meeple.cli.waits import add_patience_arguments, bot_patience, play_games
from meeple.server.config import DEFAULT_PORTS

__all__ = ["register", "register_bot", "run_bot", "run_match_command"]


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
    p.add_argument(
        "--level",
        choices=("easy", "medium", "hard", "classic"),
        default="hard",
        help="easy: one turn ahead; medium: up to three turns in 0.5 s; hard: as deep as "
        "the think time allows (default); classic: meeple's earlier two-ply player",
    )
    p.add_argument(
        "--think-time",
        type=float,
        metavar="T",
        help="seconds per turn (default: the level's: easy 0.1, medium 0.5, hard 1)",
    )
    add_patience_arguments(p)
    p.set_defaults(handler=run_bot)


def run_bot(args: argparse.Namespace) -> int:
    from meeple.clients.santorini import SantoriniClientError, play_santorini

    if args.think_time is not None and not 0 < args.think_time <= 60:
        print("meeple bot: --think-time must be in (0, 60] seconds", file=sys.stderr)
        return 2
    patience = bot_patience(args)
    if patience is None:
        return 2
    games = play_santorini(
        args.host,
        args.port,
        args.name,
        players=args.players,
        gods=args.gods,
        games=args.games,
        seed=args.seed,
        level=None if args.level == "classic" else args.level,
        think_time=args.think_time,
        patience=patience,
    )
    results = play_games(games, (SantoriniClientError,))
    if results is None:
        return 1
    for r in results:
        gods = ", ".join(f"{n} ({g})" for n, g in r.gods.items())
        outcome = f"{r.winner} won" if r.winner else f"{r.ended_by} left"
        print(f"{outcome} after {r.turns} turns of ours: {gods}")
    return 0


def register(sub: Any) -> None:
    """Add ``santorini`` and its ``match`` tool to the ``meeple`` parser."""
    from meeple.ai.santorini_match import PLAYERS

    p: argparse.ArgumentParser = sub.add_parser(
        "santorini", help="Santorini tools (AI matches)", description="Santorini tools."
    )
    tools = p.add_subparsers(dest="santorini_command", required=True, metavar="TOOL")
    match = tools.add_parser(
        "match",
        help="play two Santorini players against each other in-process",
        description="Play whole games between two players, alternating who starts, and print "
        "'A v B: W-L-D, win rate … (95 % CI …), mean plies …, … s per move'. Players: "
        "random, classic (meeple's two-ply player before the search), and the search "
        "levels easy, medium, hard.",
    )
    match.add_argument("player_a", choices=PLAYERS, metavar="A", help=", ".join(PLAYERS))
    match.add_argument("player_b", choices=PLAYERS, metavar="B", help=", ".join(PLAYERS))
    match.add_argument("--games", type=int, default=20, help="games to play (default 20)")
    match.add_argument("--seed", type=int, default=0, help="seed of the games' RNGs")
    match.add_argument(
        "--think-time",
        type=float,
        metavar="T",
        help="seconds per move for the search levels (default: each level's own)",
    )
    match.add_argument(
        "--gods", action="store_true", help="a random pair of gods for each pair of games"
    )
    match.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what the think time counts: wall-clock seconds (default) or this process's "
        "CPU seconds (fair on a machine shared with other work)",
    )
    add_progress_argument(match)
    match.set_defaults(handler=run_match_command)


def run_match_command(args: argparse.Namespace) -> int:
    """Handler of ``meeple santorini match``."""
    import random
    import time

    from meeple.ai.santorini_match import make_player, run_match

    if args.games < 1:
        print("meeple santorini: error: --games must be at least 1", file=sys.stderr)
        return 2
    if args.think_time is not None and not 0 < args.think_time <= 60:
        print("meeple santorini: error: --think-time must be in (0, 60] seconds", file=sys.stderr)
        return 2
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    players = (
        make_player(args.player_a, think_time=args.think_time, clock=clock),
        make_player(args.player_b, think_time=args.think_time, clock=clock),
    )
    if players[0].name == players[1].name:
        players[1].name = f"{players[1].name}'"

    result = run_match(
        players,
        args.games,
        lambda g: random.Random(f"{args.seed}/{g}"),
        gods=args.gods,
        clock=clock,
        progress=progress_every(args.progress),
    )
    print(result.summary())
    return 0

"""``meeple ratings``: the Glicko-2 leaderboard of each game, read from the store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from meeple.games.records import GAMES
from meeple.server.config import ServerConfig
from meeple.server.store.database import PlayerRating, open_store, sqlite_path

__all__ = ["format_leaderboard", "register", "run"]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "ratings",
        help="print the rating leaderboard",
        description="Print each game's Glicko-2 leaderboard from the server's database.",
    )
    p.add_argument("--game", choices=GAMES, help="only this game (default: every rated game)")
    p.add_argument(
        "--database",
        default=ServerConfig().database,
        metavar="URL",
        help=f"SQLite file or sqlite:/// or postgresql:// URL (default {ServerConfig().database})",
    )
    p.add_argument("--limit", type=int, default=20, help="players per game (default 20)")
    p.set_defaults(handler=run)


def format_leaderboard(game: str, rows: list[PlayerRating]) -> str:
    """A game's leaderboard as a text table (rating and RD rounded)."""
    width = max([len("player"), *(len(r.player) for r in rows)])
    lines = [game, f"{'#':>4}  {'player':<{width}}  {'rating':>6}  {'RD':>4}  {'games':>5}"]
    for rank, r in enumerate(rows, 1):
        lines.append(
            f"{rank:>4}  {r.player:<{width}}  {r.rating:>6.0f}  {r.rd:>4.0f}  {r.games:>5}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        print("meeple ratings: --limit must be at least 1", file=sys.stderr)
        return 2
    path = sqlite_path(args.database)
    if path is not None and path != ":memory:" and not Path(path).is_file():
        print(f"meeple ratings: no database at {path}", file=sys.stderr)
        return 1
    games = [args.game] if args.game else list(GAMES)
    store = open_store(args.database)
    try:
        boards = [(g, store.leaderboard(g, args.limit)) for g in games]
    finally:
        store.close()
    shown = [format_leaderboard(g, rows) for g, rows in boards if rows or args.game]
    print("\n\n".join(shown) if shown else "no rated games yet")
    return 0

"""The ratings pages: ``/ratings`` (a leaderboard per game) and ``/players/<name>``.

Both read the store's Glicko-2 tables (docs/server.md, Ratings) through the context's
:class:`~meeple.web.records.Records` (the local store, or a store node over the bus on a
cluster edge) and are rendered on the server; they need no JavaScript. A player's rating
history is drawn as an inline SVG here (:func:`history_chart`), so the page needs no
chart library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from meeple.server.store.database import PlayerRating, RatingPoint
from meeple.web import replays
from meeple.web.templating import render

if TYPE_CHECKING:
    from meeple.web.app import WebContext

__all__ = [
    "GAMES",
    "MAX_NAME_LENGTH",
    "PROVISIONAL_RD",
    "Chart",
    "history_chart",
    "player_url",
    "routes",
]

GAMES: dict[str, str] = {
    "scrabble": "Scrabble",
    "santorini": "Santorini",
    "spectrangle": "Spectrangle",
}
# Above this RD a rating is marked provisional: the true rating is then more than
# ±220 from the shown one at 95% (the threshold online Glicko sites commonly use).
PROVISIONAL_RD = 110.0
# No listener takes a longer name (CMPN402 allows 64 bytes); a longer URL is no player.
MAX_NAME_LENGTH = 256
LEADERBOARD_SIZE = 100
PLAYER_GAMES = 50


def player_url(name: str) -> str:
    """The player page of ``name``, every character that is not a letter or digit escaped."""
    from urllib.parse import quote

    return "/players/" + quote(name, safe="")


@dataclass(frozen=True, slots=True)
class Chart:
    """An SVG rating chart: a viewBox, the rating line, the ±RD band, axis labels."""

    width: int
    height: int
    line: str
    band: str
    dots: tuple[tuple[float, float, str], ...]
    top: int
    bottom: int


def history_chart(points: list[RatingPoint], width: int = 360, height: int = 150) -> Chart | None:
    """The chart of ``points`` (oldest first), or None with fewer than one point."""
    if not points:
        return None
    pad_x, pad_y = 40.0, 10.0
    low = min(p.rating - p.rd for p in points)
    high = max(p.rating + p.rd for p in points)
    bottom, top = int(low // 50 * 50), int(-(-high // 50) * 50)
    if top == bottom:
        top += 50
    span_x = width - pad_x - 8
    span_y = height - 2 * pad_y

    def x(i: int) -> float:
        return pad_x + (span_x * i / (len(points) - 1) if len(points) > 1 else span_x / 2)

    def y(v: float) -> float:
        return pad_y + span_y * (top - v) / (top - bottom)

    line = " ".join(f"{x(i):.1f},{y(p.rating):.1f}" for i, p in enumerate(points))
    upper = [(x(i), y(p.rating + p.rd)) for i, p in enumerate(points)]
    lower = [(x(i), y(p.rating - p.rd)) for i, p in enumerate(points)]
    if len(points) == 1:  # a short band either side of the one point, so the RD shows
        (cx, top_y), (_, low_y) = upper[0], lower[0]
        upper, lower = [(cx - 12, top_y), (cx + 12, top_y)], [(cx - 12, low_y), (cx + 12, low_y)]
    band = " ".join(f"{a:.1f},{b:.1f}" for a, b in upper + lower[::-1])
    dots = tuple(
        (round(x(i), 1), round(y(p.rating), 1), f"{p.rating:.0f} ± {p.rd:.0f} after game {p.games}")
        for i, p in enumerate(points)
    )
    return Chart(width, height, line, band, dots, top, bottom)


def _ctx(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.ctx
    return ctx


def _row(rank: int, r: PlayerRating) -> dict[str, Any]:
    return {
        "rank": rank,
        "name": r.player,
        "url": player_url(r.player),
        "rating": round(r.rating),
        "rd": round(r.rd),
        "provisional": r.rd > PROVISIONAL_RD,
        "games": r.games,
        "last": r.updated_at,
    }


async def ratings_page(request: Request) -> Response:
    game = request.query_params.get("game", "scrabble")
    if game not in GAMES:
        return render(request, "player_missing.html", status=404, what=f"game {game[:40]!r}")
    board = await _ctx(request).records.leaderboard(game, limit=LEADERBOARD_SIZE)
    return render(
        request,
        "ratings.html",
        games=GAMES,
        game=game,
        rows=[_row(i, r) for i, r in enumerate(board, start=1)],
        provisional_rd=round(PROVISIONAL_RD),
    )


async def player_page(request: Request) -> Response:
    name = request.path_params["name"]
    records = _ctx(request).records
    profile = (
        await records.player(name, limit=PLAYER_GAMES) if len(name) <= MAX_NAME_LENGTH else None
    )
    if profile is None or (not profile.ratings and not profile.games):
        return render(request, "player_missing.html", status=404, what=f"player {name[:80]!r}")
    rated = []
    for r in profile.ratings:
        row = _row(0, r)
        row["game"] = GAMES.get(r.game, r.game)
        row["chart"] = history_chart(await records.rating_history(r.game, r.player))
        rated.append(row)
    games = []
    for record in profile.games:
        summary = replays.summary(record)
        summary["game"] = GAMES.get(record.game, record.game)
        summary["others"] = [{"name": p, "url": player_url(p)} for p in record.players if p != name]
        summary["score"] = (
            summary["scores"][record.players.index(name)]
            if summary["scores"]
            and name in record.players
            and record.players.index(name) < len(summary["scores"])
            else None
        )
        summary["won"] = name in summary["winners"]
        games.append(summary)
    return render(request, "player.html", player=name, rated=rated, games=games)


def routes() -> list[BaseRoute]:
    return [
        Route("/ratings", ratings_page),
        # ``path``: a name may hold "/" (it arrives %2F-escaped and decoded).
        Route("/players/{name:path}", player_page),
    ]

"""/ratings and /players/<name>: the leaderboard, a player's page, odd names, 404s."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from tests.services import close_services

from meeple.server.app import Services
from meeple.server.config import ServerConfig, WebConfig
from meeple.server.store.database import RatingPoint, Store
from meeple.web.app import create_app
from meeple.web.ratings import history_chart, player_url


def _record(
    game: str, players: list[str], scores: list[int], winners: list[int], uid: str
) -> dict[str, Any]:
    return {
        "format": "meeple.record",
        "game": game,
        "version": 1,
        "uid": uid,
        "players": players,
        "actions": [],
        "result": {"reason": "went-out", "player": None, "scores": scores, "winners": winners},
    }


def _play(store: Store, game: str, players: list[str], scores: list[int], uid: str) -> int:
    best = max(scores)
    winners = [i for i, s in enumerate(scores) if s == best]
    return store.record_game(
        game=game,
        variant="test",
        protocols=["twente"],
        players=players,
        started_at=0.0,
        end_reason="went-out",
        result={"scores": scores, "winners": winners},
        record="",
        data=_record(game, players, scores, winners, uid),
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    clock = iter(float(t) for t in range(1_700_000_000, 1_700_001_000))
    return Store(tmp_path / "db.sqlite3", wall_clock=lambda: next(clock))


@pytest.fixture
async def app(tmp_path: Path, store: Store) -> AsyncIterator[Starlette]:
    services = Services(
        ServerConfig(database=str(tmp_path / "db.sqlite3"), web=WebConfig(hosts=("meeple.test",)))
    )
    services.store = store
    yield create_app(services)
    await close_services(services)  # the journal's writer thread ends with the test


@pytest.fixture
async def http(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://meeple.test") as client:
        yield client


def _leaderboard_names(html: str) -> list[str]:
    table = html.split('class="leaderboard"')[1].split("</table>")[0]
    return re.findall(r'<td><a href="/players/[^"]*">([^<]*)</a></td>', table)


async def test_leaderboard_is_best_first_per_game(store: Store, http: httpx.AsyncClient) -> None:
    """Each game has its own table, best rating first, with rank, RD, games and a
    provisional mark; the game picker links the three games; the page says names are
    not authenticated and links the reservation."""
    for i in range(3):
        _play(store, "scrabble", ["ann", "bob"], [400, 300], f"s{i}")
        _play(store, "scrabble", ["bob", "cat"], [350, 200], f"t{i}")
    _play(store, "santorini", ["cat", "ann"], [1, 0], "g1")
    page = await http.get("/ratings")
    assert page.status_code == 200
    assert _leaderboard_names(page.text) == ["ann", "bob", "cat"]
    board = store.leaderboard("scrabble")
    assert f">{round(board[0].rating)}<" in page.text
    assert 'aria-current="page">Scrabble<' in page.text
    for game in ("scrabble", "santorini", "spectrangle"):
        assert f'href="/ratings?game={game}"' in page.text
    assert "Names are not authenticated" in page.text
    for protocol in ("Twente", "Clarkson", "CMPN402", "AM27", "Spectrangle"):
        assert protocol in page.text.split('id="names"')[1]
    assert 'href="/account"' in page.text
    assert 'href="/ratings"' in page.text.split("<nav>")[1].split("</nav>")[0]

    santorini = await http.get("/ratings", params={"game": "santorini"})
    assert _leaderboard_names(santorini.text) == ["cat", "ann"]
    # One game each: RD is far above 110, so both are provisional.
    assert santorini.text.count('class="prov" title=') == 2
    empty = await http.get("/ratings", params={"game": "spectrangle"})
    assert "Nobody is rated at Spectrangle yet" in empty.text
    assert (await http.get("/ratings", params={"game": "chess"})).status_code == 404


async def test_player_page_has_ratings_chart_and_game_links(
    store: Store, http: httpx.AsyncClient
) -> None:
    """A player's page shows a card per rated game with an SVG chart of every rated
    game, and each game with links to its replay and to the opponents' pages."""
    for i in range(4):
        _play(store, "scrabble", ["ann", "bob"], [400 - 50 * i, 300], f"uid{i:09d}")
    _play(store, "spectrangle", ["ann", "bob", "cat"], [10, 20, 30], "spec000000001")
    page = await http.get("/players/ann")
    assert page.status_code == 200
    assert page.text.count('<article class="card"') == 2
    svg = page.text.split('data-game="Scrabble"')[1].split("</svg>")[0]
    assert svg.count('<circle class="dot"') == 4
    for i in range(4):
        assert f'href="/games/uid{i:09d}"' in page.text
    assert 'href="/games/spec000000001"' in page.text
    assert 'href="/players/bob"' in page.text
    assert 'href="/players/cat"' in page.text
    assert 'href="/players/ann"' not in page.text.split('id="player-games"')[1]
    rows = page.text.split('id="player-games"')[1].split("<tbody>")[1].split("</tr>")
    assert ">won<" in rows[-2]
    assert ">lost<" in rows[0]


async def test_odd_names_are_escaped_and_linked(store: Store, http: httpx.AsyncClient) -> None:
    """Names with markup, quotes, slashes, spaces, '?' and '#' are text on every page
    and their links reach their own page."""
    odd = ['<script>alert("x")</script>', "a/b?c#d", "ünï cödé & 'q'", "%2F..%2F"]
    for i, name in enumerate(odd):
        _play(store, "scrabble", [name, "plain"], [10, 5], f"odd{i}")
    page = await http.get("/ratings")
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    for name in odd:
        assert player_url(name) in page.text
        own = await http.get(player_url(name))
        assert own.status_code == 200, name
        title = own.text.split('<h1 class="player-name">')[1].split("</h1>")[0]
        assert "<" not in title
    assert "<script>alert" not in (await http.get(player_url(odd[0]))).text


async def test_unknown_player_is_a_404_page(store: Store, http: httpx.AsyncClient) -> None:
    """A name without games or ratings, or an absurdly long one, is a 404 HTML page."""
    _play(store, "scrabble", ["ann", "bob"], [1, 0], "x1")
    for url in ("/players/nobody", "/players/" + "x" * 5000, player_url("<b>zed</b>")):
        page = await http.get(url)
        assert page.status_code == 404
        assert "Not found" in page.text
        assert "<b>zed" not in page.text
    # Names are exact on the player page: the rating belongs to "ann", not "ANN".
    assert (await http.get("/players/ANN")).status_code == 404


def test_history_chart_fits_the_box() -> None:
    """The chart's points lie inside its viewBox; a single point is centred; none is None."""
    assert history_chart([]) is None
    points = [RatingPoint(i, 1500 + 30 * i, 350 - 40 * i, 0.06, i + 1, 0.0) for i in range(6)]
    chart = history_chart(points)
    assert chart is not None
    assert chart.bottom <= min(p.rating - p.rd for p in points)
    assert chart.top >= max(p.rating + p.rd for p in points)
    coords = [tuple(map(float, xy.split(","))) for xy in chart.band.split()]
    assert all(0 <= x <= chart.width and 0 <= y <= chart.height for x, y in coords)
    ys = [y for _, y, _ in chart.dots]
    assert ys == sorted(ys, reverse=True)  # a rising rating goes up the picture
    one = history_chart(points[:1])
    assert one is not None
    assert len(one.dots) == 1

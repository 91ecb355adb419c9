"""Search over finished games (issue 34.8): ``/games?player=…&game=…``, 50 a page with
"Older games" going on from the last; the store's query against a model of it; any
query string answered with the page, never an error."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.web.helpers import ServerFactory

from meeple.server.app import MeepleServer
from meeple.server.store.database import Store
from meeple.web.app import GAMES_PAGE

NAMES = ("ann", "bob", "cy", "di")
GAMES = ("scrabble", "santorini", "spectrangle")


def _fill(store: Store, count: int) -> list[tuple[int, str, tuple[str, str]]]:
    """``count`` finished games, each of a game and two players by a fixed pattern."""
    made = []
    for i in range(count):
        game = GAMES[i % 3]
        players = (NAMES[i % 4], NAMES[(i + 1 + i // 4) % 4])
        if players[0] == players[1]:
            players = (players[0], "eve")
        number = store.record_game(
            game=game, variant="standard", protocols=["web", "web"], players=list(players),
            started_at=float(i), end_reason="finished", result={"winner": players[0]},
            record="",
        )  # fmt: skip
        made.append((number, game, players))
    return made


def test_the_store_finds_by_player_and_game_newest_first(tmp_path: Path) -> None:
    """Every filter and cursor against the list filtered in Python."""
    store = Store(str(tmp_path / "s.sqlite3"))
    try:
        made = _fill(store, 40)
        for player in (None, *NAMES, "eve", "nobody"):
            for game in (None, *GAMES):
                for before in (None, 30, 5):
                    want = [
                        n
                        for n, g, ps in reversed(made)
                        if (player is None or player in ps)
                        and (game is None or g == game)
                        and (before is None or n < before)
                    ][:7]
                    found = store.search_games(game=game, player=player, before=before, limit=7)
                    assert [r.id for r in found] == want, (player, game, before)
    finally:
        store.close()


@pytest.fixture
async def server(make_server: ServerFactory) -> MeepleServer:
    return await make_server("twente")


@pytest.fixture
async def http(server: MeepleServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.ports['web']}") as client:
        yield client


def _listed(html: str) -> list[str]:
    return re.findall(r'href="/games/n/(\d+)"', html)


async def test_the_page_filters_and_pages(server: MeepleServer, http: httpx.AsyncClient) -> None:
    """ann's Scrabble games, then all games page by page: each page newest first, the
    pages together every game once, the last page with no "Older games"."""
    store: Store = server.services.resource("store", lambda: None)
    made = _fill(store, 130)
    page = await http.get("/games", params={"player": "ann", "game": "scrabble"})
    assert page.status_code == 200
    assert "Finished games with ann of scrabble" in page.text
    want = [str(n) for n, g, ps in reversed(made) if "ann" in ps and g == "scrabble"]
    assert _listed(page.text) == want[:GAMES_PAGE]
    assert 'value="ann"' in page.text  # the form keeps the search

    seen: list[str] = []
    url: str | None = "/games"
    while url is not None:
        page = await http.get(url)
        assert page.status_code == 200
        seen += _listed(page.text)
        older = re.search(r'id="older" class="btn" href="([^"]+)"', page.text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert seen == [str(n) for n, _g, _ps in reversed(made)]
    none = await http.get("/games", params={"player": "nobody"})
    assert "No finished game matches." in none.text


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.dictionaries(
        st.sampled_from(["player", "game", "before", "x"]),
        st.text(st.characters(codec="utf-8"), max_size=300),
        max_size=4,
    )
)
@example(query={"before": "\u00b2"})  # a digit to str.isdigit, not to int: was a 500
@example(query={"before": "-0", "player": "\x00", "game": "scrabble"})
async def test_any_query_gets_the_page(http: httpx.AsyncClient, query: dict[str, str]) -> None:
    """Hostile parameters (NUL, huge numbers, long names, markup) are ignored or find
    nothing: always the page, and nothing of them unescaped in it."""
    page = await http.get("/games?" + urllib.parse.urlencode(query))
    assert page.status_code == 200, (query, page.text[:300])
    assert "<script>alert" not in page.text

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
    async with httpx.AsyncClient(
        verify=False, base_url=f"http://127.0.0.1:{server.ports['web']}"
    ) as client:
        yield client


def _listed(html: str) -> list[str]:
    return re.findall(r'href="/games/n/(\d+)"', html)


async def test_the_page_filters_and_pages(server: MeepleServer, http: httpx.AsyncClient) -> None:
    """ann's Scrabble games, then all games page by page: each page newest first, the
    pages together every game once, the last page with no "Older games"."""
    store: Store = server.services.store
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


async def test_the_page_filters_by_result_and_days(
    server: MeepleServer, http: httpx.AsyncClient
) -> None:
    """ann's lost games (her resignations too), then the games of one day (UTC, the
    two ends inclusive), "Older games" keeping the filters; days that are no day are
    the form's error with a 400."""
    store: Store = server.services.store
    clock = [1_767_225_600.0 - 3600]  # 2025-12-31 23:00 UTC
    store._now = lambda: clock[0]
    made: list[tuple[int, str]] = []
    for i in range(130):
        clock[0] += 1200  # three games an hour
        reason = ("finished", "resigned", "finished")[i % 3]
        number = store.record_game(
            game="santorini", variant="standard", protocols=["web", "web"],
            players=["ann", "bob"], started_at=0.0, end_reason=reason,
            result={"winner": "ann" if i % 3 == 0 else "bob"}, record="",
        )  # fmt: skip
        made.append((number, "won" if i % 3 == 0 else "lost"))
    lost = [str(n) for n, r in reversed(made) if r == "lost"]
    seen: list[str] = []
    url: str | None = "/games?player=ann&result=lost"
    while url is not None:
        page = await http.get(url)
        assert page.status_code == 200
        assert 'value="lost" selected' in page.text
        seen += _listed(page.text)
        older = re.search(r'id="older" class="btn" href="([^"]+)"', page.text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert seen == lost
    assert len(lost) > GAMES_PAGE  # so it went over two pages

    resigned = await http.get("/games", params={"result": "resigned"})
    assert _listed(resigned.text) == [str(n) for n, _r in reversed(made) if n % 3 == 2][:GAMES_PAGE]
    # 2026-01-01, 00:00 to 23:59:59 UTC: game i ended at 23:00 on Dec 31 plus (i + 1)
    # times 20 minutes, so the third (at midnight) to the 74th (at 23:40).
    day = await http.get("/games", params={"from": "2026-01-01", "to": "2026-01-01"})
    assert day.status_code == 200
    in_day = [str(n) for i, (n, _r) in enumerate(made) if 2 <= i <= 73]
    everything: list[str] = []
    url = "/games?from=2026-01-01&to=2026-01-01"
    while url is not None:
        page = await http.get(url)
        everything += _listed(page.text)
        older = re.search(r'id="older" class="btn" href="([^"]+)"', page.text)
        url = older.group(1).replace("&amp;", "&") if older else None
    assert everything == in_day[::-1]
    assert 'value="2026-01-01"' in day.text

    for bad in ({"from": "2026-02-30"}, {"to": "yesterday"}, {"result": "maybe"},
                {"from": "2026-01-02", "to": "2026-01-01"}):  # fmt: skip
        page = await http.get("/games", params=bad)
        assert page.status_code == 400, bad
        assert 'id="search-errors"' in page.text
        assert _listed(page.text) == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.dictionaries(
        st.sampled_from(["player", "game", "before", "result", "from", "to", "x"]),
        st.one_of(
            st.text(st.characters(codec="utf-8"), max_size=300),
            st.dates().map(str),
            st.sampled_from(["won", "lost", "drawn", "aborted", "resigned", "0000-00-00"]),
        ),
        max_size=6,
    )
)
@example(query={"before": "\u00b2"})  # a digit to str.isdigit, not to int: was a 500
@example(query={"before": "-0", "player": "\x00", "game": "scrabble"})
@example(query={"from": "0001-01-01", "to": "9999-12-31", "result": "won"})
@example(query={"from": "\uff12\uff10\uff12\uff16-01-01"})  # fullwidth digits
async def test_any_query_gets_the_page(http: httpx.AsyncClient, query: dict[str, str]) -> None:
    """Hostile parameters (NUL, huge numbers, long names, markup, days out of range) are
    ignored, find nothing or are the form's error: always the page (200, or 400 for a
    result or day the form could not send), and nothing of them unescaped in it."""
    page = await http.get("/games?" + urllib.parse.urlencode(query))
    assert page.status_code in (200, 400), (query, page.text[:300])
    assert "<script>alert" not in page.text
    assert (page.status_code == 400) == ('id="search-errors"' in page.text)

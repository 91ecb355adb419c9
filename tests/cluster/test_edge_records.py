"""The database's pages on a cluster edge (issue 21; docs/cluster.md, "Browsers on
edges"): an edge has no database connection, and asks any ``store`` node over the bus
for a finished game's record, the recent games, a leaderboard, a player's profile
(``meeple.store.req.read_*``), then renders ``meeple serve``'s own pages with them.
``meeple node`` processes on loopback with real NATS and PostgreSQL; Debian's chromium
opens a replay."""

from __future__ import annotations

import asyncio
import json
import re
import time
from urllib.parse import quote

import httpx
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.async_api import Browser, expect
from tests.cluster.test_edge_web import _play, _until, _web
from tests.cluster.test_nodes import Nodes, nodes
from tests.patience import GAME_PATIENCE
from tests.web.test_analysis_kept import UID as SPECTRANGLE_UID
from tests.web.test_analysis_kept import _record as spectrangle_record

from meeple.ai import analysis
from meeple.ai.analysis import analyse_game
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.server.store.database import open_store

__all__ = ["nodes"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def enable() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


async def _get(client: httpx.AsyncClient, path: str) -> httpx.Response:
    return await client.get(path, timeout=10)


async def _stored_replay(client: httpx.AsyncClient, uid: str) -> httpx.Response:
    """``/games/<uid>`` once the game is stored (its rooms node stores it after the end)."""
    until = time.monotonic() + 20
    while True:
        page = await _get(client, f"/games/{uid}")
        if page.status_code == 200 and 'id="replay-data"' in page.text:
            return page
        assert time.monotonic() < until, (page.status_code, page.text[:300])
        await asyncio.sleep(0.2)


# Paths and queries a visitor may type: escapes, traversal, long names, odd numbers.
_SEGMENT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["..", "%2e%2e", "%00", "%ff%fe", "a%2Fb", "n", "x" * 5000, "-1", "1e9"]),
)
_QUERY = st.dictionaries(
    st.sampled_from(["game", "step", "limit", "name", "x"]),
    st.one_of(st.text(max_size=30), st.sampled_from(["-9", "99999999999", "scrabble", "%"])),
    max_size=3,
)
_ROUTES = [
    "/games/",
    "/games/n/",
    "/players/",
    "/ratings/",
    "/games/{}.gcg",
    "/games/{}/history.json",
    "/games/{}/x",
]


async def test_an_edge_serves_a_cluster_games_replay_list_and_ratings_from_a_store_node(
    nodes: Nodes, pg_url: str, browser: Browser, enable: Lexicon
) -> None:
    """Two browsers on edge web1 play a Twente-variant table on the cluster until one
    resigns; meanwhile web1 serves the running game's history (from the room's owner).
    Then web1, which has no database connection, serves the game's replay
    (also in chromium), its GCG, the games list with it, the ratings page with both
    players and each player's page, from the store node. An unknown uid or player is
    404; hostile paths and queries (hypothesis) get error pages, never a 500, and the
    edge goes on. With the store node SIGKILLed the pages that need it answer 503 (the
    lobby and games list still 200, without the recent games); a new store node brings
    them back."""
    started = time.monotonic()
    await nodes.start("hub", "edge,lobby")
    store1 = await nodes.start("store1", "store", pg_url)
    web1 = await nodes.start("web1", "edge", None, "--api-port", "0")
    await nodes.start("rooms1", "rooms")
    base = f"http://127.0.0.1:{web1.listeners['api']}"

    ivy = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ivy.send(json.dumps({**create, "name": "ivy"}))
    table = (await _until(ivy, "seated"))["table"]
    jon = await _web(web1.listeners["api"])
    await jon.send(json.dumps({"type": "sit", "table": table, "name": "jon"}))
    await _until(jon, "seated")
    other = asyncio.ensure_future(_play(jon, enable))
    first = await _until(ivy, "seat")
    uid = first["uid"]
    view = await _play(ivy, enable, stop_after=2, first=first)
    async with httpx.AsyncClient(verify=False, base_url=base) as client:
        # While it runs: its steps from the room's owner, spectator views only.
        history = await _get(client, f"/games/{uid}/history.json")
        assert history.status_code == 200, history.text
        live = history.json()["steps"]
        assert live[-1]["view"]["board"] == view["board"]
        assert live[-1]["view"]["scores"] == view["scores"]
        assert not any("rack" in step["view"] for step in live)
    await ivy.send(json.dumps({"type": "leave"}))  # resigns: Scrabble's leave rule ends it
    final = await asyncio.wait_for(other, GAME_PATIENCE)
    assert final["over"]
    await ivy.close()
    await jon.close()

    print(f"cluster up and game played in {time.monotonic() - started:.1f} s")
    async with httpx.AsyncClient(verify=False, base_url=base) as client:
        replay = await _stored_replay(client, uid)
        steps = json.loads(replay.text.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
        assert len(steps) >= 5  # the start, then four moves at least
        assert "ivy" in replay.text
        assert "jon" in replay.text
        gcg = await _get(client, f"/games/{uid}.gcg")
        assert gcg.status_code == 200
        assert "#player1" in gcg.text
        games = await _get(client, "/games")
        assert games.status_code == 200
        assert f"/games/{uid}" in games.text

        # A replay's analysis (issue 34): computed on the edge, kept by the store node;
        # another edge reads it from there (it shows what the store holds).
        data = spectrangle_record()
        pg = open_store(pg_url)
        try:
            pg.record_game(
                game="spectrangle", variant="standard", protocols=["web"],
                players=["ann", "bob"], started_at=0.0, end_reason="finished", result={},
                record="", data=data,
            )  # fmt: skip
        finally:
            pg.close()
        assert (await _get(client, f"/games/{SPECTRANGLE_UID}")).status_code == 200
        with psycopg.connect(pg_url, autocommit=True) as conn:
            kept = conn.execute(
                "SELECT analysis FROM game_analyses WHERE uid = %s AND version = %s",
                (SPECTRANGLE_UID, analysis.VERSION),
            ).fetchall()
            assert [json.loads(k) for (k,) in kept] == [{"steps": analyse_game(data, None)}]
            conn.execute(
                'UPDATE game_analyses SET analysis = replace(analysis, \'"best":"\', '
                '\'"best":"KEPT \') WHERE uid = %s',
                (SPECTRANGLE_UID,),
            )
        web2 = await nodes.start("web2", "edge", None, "--api-port", "0")
        async with httpx.AsyncClient(
            verify=False, base_url=f"http://127.0.0.1:{web2.listeners['api']}"
        ) as c2:
            other_edge = await _get(c2, f"/games/{SPECTRANGLE_UID}")
        assert "best KEPT " in other_edge.text

        # The search (issue 34), asked of the store node over the bus.
        def finished(html: str) -> str:  # the finished games' list, not the live tables
            return html.split('<section id="recent">', 1)[1].split("</section>", 1)[0]

        found = await _get(client, "/games?player=ivy&game=scrabble")
        assert found.status_code == 200
        assert f"/games/{uid}" in finished(found.text)
        # By result and day (issue 34): ivy left, so she lost (resigned) and jon won.
        today = time.strftime("%Y-%m-%d", time.gmtime())
        for hit in (
            "/games?player=ivy&result=lost",
            "/games?player=jon&result=won",
            f"/games?game=scrabble&from={today}&to={today}",
        ):
            page = await _get(client, hit)
            assert page.status_code == 200, hit
            assert f"/games/{uid}" in finished(page.text), hit
        for miss in (
            "/games?player=nobody",
            "/games?game=santorini",
            "/games?before=1",
            "/games?player=ivy&result=won",
            "/games?result=drawn",
            "/games?from=2000-01-01&to=2000-01-02",
        ):
            page = await _get(client, miss)
            assert page.status_code == 200, miss
            assert f"/games/{uid}" not in finished(page.text), miss
        assert (await _get(client, "/games?from=2026-13-01")).status_code == 400
        lobby = await _get(client, "/")
        assert lobby.status_code == 200
        assert f"/games/{uid}" in lobby.text  # the recent games, as meeple serve's
        nav = re.search(r"<nav>(.*?)</nav>", lobby.text, re.S)
        assert nav is not None
        for link in re.findall(r'href="([^"]+)"', nav.group(1)):  # every one is served
            assert (await _get(client, link)).status_code == 200, link
        # Server bots on a cluster (issue 32.6): the one-click games and "Add a bot".
        assert "/play?game=scrabble/twente&amp;bot=1" in lobby.text
        play = await _get(client, "/play")
        assert 'id="bot"' in play.text
        assert 'data-bots="yes"' in play.text
        ratings = await _get(client, "/ratings?game=scrabble")
        assert ratings.status_code == 200
        assert '/players/ivy"' in ratings.text
        assert '/players/jon"' in ratings.text
        for name, opponent in (("ivy", "jon"), ("jon", "ivy")):
            player = await _get(client, f"/players/{name}")
            assert player.status_code == 200
            assert f"/players/{opponent}" in player.text
            assert f"/games/{uid}" in player.text
            assert "<svg" in player.text  # the rating history's chart, from the store
        over = await _get(client, f"/games/{uid}/history.json")
        assert over.status_code == 404  # over: its replay has the steps
        assert (await _get(client, "/games/no-such-game/history.json")).status_code == 404
        missing = await _get(client, "/games/no-such-game")
        assert missing.status_code == 404
        assert "No such game" in missing.text
        assert (await _get(client, "/players/nobody-here")).status_code == 404
        assert (await _get(client, "/ratings?game=chess")).status_code == 404
        assert (await _get(client, "/games/n/999999")).status_code == 404

        # Hostile input: never a server error, and the edge answers on.
        answered: list[int] = []

        @settings(
            max_examples=30,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(route=st.sampled_from(_ROUTES), segment=_SEGMENT, query=_QUERY)
        def hostile(route: str, segment: str, query: dict[str, str]) -> None:
            escaped = quote(segment, safe="%")
            path = route.format(escaped) if "{}" in route else route + escaped
            with httpx.Client(verify=False, base_url=base, timeout=10) as sync:
                response = sync.get(path, params=query)
            assert response.status_code in (200, 301, 307, 308, 400, 404, 405), (
                path,
                query,
                response.status_code,
            )
            answered.append(response.status_code)

        started = time.monotonic()
        await asyncio.to_thread(hostile)
        print(f"{len(answered)} hostile requests in {time.monotonic() - started:.1f} s")
        assert answered
        assert (await _get(client, f"/games/{uid}")).status_code == 200

        started = time.monotonic()
        page = await browser.new_page()
        shown = await page.goto(f"{base}/games/{uid}")
        assert shown is not None
        assert shown.status == 200
        await expect(page.locator("#board")).to_be_visible()
        # Each step (the analysis, issue 32.6, nests the engine's best in a step's line).
        await expect(page.locator("#steps > li")).to_have_count(len(steps))
        assert await page.locator("#steps > li .analysis").count() > 0
        await page.close()
        print(f"chromium's replay page in {time.monotonic() - started:.1f} s")

        # No store node: the pages that need one answer 503 at once; the edge goes on.
        store1.kill()
        started = time.monotonic()
        for path in (f"/games/{uid}", "/ratings", "/players/ivy", f"/games/{uid}.gcg"):
            response = await _get(client, path)
            assert response.status_code == 503, (path, response.status_code)
            assert "Not available now" in response.text
        print(f"four 503 pages without a store node in {time.monotonic() - started:.2f} s")
        for path in ("/", "/games"):  # as meeple serve's: the live part, no recent games
            response = await _get(client, path)
            assert response.status_code == 200
            assert f"/games/{uid}" not in response.text
        assert (await _get(client, "/play")).status_code == 200
        await nodes.start("store2", "store", pg_url)
        assert (await _get(client, f"/games/{uid}")).status_code == 200
        assert (await _get(client, "/ratings")).status_code == 200

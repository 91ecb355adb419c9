"""The web listener over loopback: pages, downloads, the WebSocket, the console's guards."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import GAME_PATIENCE, PATIENCE
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.clients.scrabble_bot import play_twente
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.twente.messages import NotifyTurn
from meeple.protocols.web import DEFAULT_MAX_MESSAGE_SIZE, PROTOCOL
from meeple.server.app import MeepleServer
from meeple.server.lobby.tables import server_lobby
from meeple.server.store.database import Store
from meeple.web import guide
from meeple.web.guide import GUIDE
from meeple.web.listener import WS_TRANSPORT_LIMIT


@pytest.fixture
async def twente(make_server: ServerFactory) -> MeepleServer:
    return await make_server("twente")


@pytest.fixture
async def http(twente: MeepleServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        verify=False, base_url=f"http://127.0.0.1:{twente.ports['web']}"
    ) as client:
        yield client


async def _reply(ws: ClientConnection) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    return reply


async def test_pages_render_without_javascript(http: httpx.AsyncClient) -> None:
    """Lobby, games and console pages are whole HTML pages; an unknown game is a 404 page."""
    lobby = await http.get("/")
    assert lobby.status_code == 200
    assert "twente" in lobby.text
    assert "meeple play scrabble --protocol twente --port" in lobby.text
    assert (await http.get("/games")).status_code == 200
    console = await http.get("/cmpn402")
    assert console.status_code == 200
    assert "No CMPN402 referee runs here" in console.text
    assert "[cmpn402.contest]" in console.text  # what a cluster edge needs too
    missing = await http.get("/games/0123456789ab")
    assert missing.status_code == 404
    assert (await http.get("/games/0123456789ab.gcg")).status_code == 404
    assert (await http.get("/static/js/render.js")).status_code == 200
    # wording.js imports it as a JSON module: a browser takes one only as JSON.
    table = await http.get("/static/js/wording.json")
    assert table.headers["content-type"] == "application/json"
    assert table.json()["end_reasons"]["went-out"] == "went out"


async def test_the_kits_guide_is_a_page_the_lobby_links_to(http: httpx.AsyncClient) -> None:
    """Issue 23: the lobby links to /check, docs/check.md rendered: its headings, tables,
    sample reports and code as HTML, the page's security headers, no raw HTML let through."""
    lobby = (await http.get("/")).text
    assert '<a id="check-guide" href="/check">Testing your own client or server</a>' in lobby
    page = await http.get("/check")
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    html = page.text
    assert "<h1><code>meeple check</code>: conformance kits</h1>" in html
    doc = (Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text("utf-8")
    prose = re.sub(r"^```.*?^```", "", doc, flags=re.MULTILINE | re.DOTALL)
    headings = [line.lstrip("#").strip() for line in prose.splitlines() if line.startswith("#")]
    assert len(headings) >= 5
    text = unescape(re.sub(r"<[^>]+>", "", html))  # inline code in a heading is <code>
    for heading in headings:
        assert heading.replace("`", "") in text, heading
    assert html.count("<table>") == len(re.findall(r"^\|\s*:?-{3}", doc, re.MULTILINE)) > 0
    assert '<pre tabindex="0"><code>' in html  # a scrolling block takes the focus
    assert "<script>" not in html.split("<main>", 1)[1]
    assert GUIDE.resolve().read_text("utf-8") == doc  # the package's copy is the document


def test_the_guide_lets_no_raw_html_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renderer escapes HTML written in the document (raw HTML is off)."""
    doc = tmp_path / "check.md"
    doc.write_text("# T\n\n<script>alert(1)</script>\n\n| a |\n|---|\n| <b>x</b> |\n")
    monkeypatch.setattr(guide, "GUIDE", doc)
    guide.guide_html.cache_clear()
    try:
        title, body = guide.guide_html()
    finally:
        guide.guide_html.cache_clear()
    assert title == "T"
    assert "<script>" not in body
    assert "&lt;script&gt;" in body
    assert "<b>" not in body
    assert "<table>" in body


async def test_names_are_escaped(twente: MeepleServer, http: httpx.AsyncClient) -> None:
    """A player name with markup shows as text in the lobby, never as HTML."""
    client = await asyncio.open_connection("127.0.0.1", twente.ports["twente"])
    reader, writer = client
    writer.write(b"ANNOUNCE\x1f<b>x</b>\x1e")
    await reader.read(100)
    writer.write(b"REQUESTGAME\x1f2\x1e")
    await asyncio.sleep(0.2)
    page = (await http.get("/")).text
    writer.close()
    assert "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


async def test_a_finished_game_is_a_replay_with_its_gcg(
    twente: MeepleServer, http: httpx.AsyncClient, gcide: Lexicon
) -> None:
    """After a game, /games/<uid> is its replay (one step per action + the start) and
    /games/<uid>.gcg downloads the stored GCG; ?step= works without JavaScript."""
    port = twente.ports["twente"]
    await asyncio.wait_for(
        asyncio.gather(
            play_twente("127.0.0.1", port, "ann", gcide),
            play_twente("127.0.0.1", port, "bob", gcide),
        ),
        GAME_PATIENCE,
    )
    store: Store = twente.services.store
    [record] = store.games()
    assert record.data is not None
    uid = record.data["uid"]
    page = await http.get(f"/games/{uid}")
    assert page.status_code == 200
    assert page.text.count("<li") >= len(record.data["actions"]) + 1
    first = await http.get(f"/games/{uid}", params={"step": "0"})
    assert 'class="tile' not in first.text.split('id="board"')[1].split("</div>\n<aside>")[0]
    assert (await http.get(f"/games/{uid}", params={"step": "-5x"})).status_code == 200
    gcg = await http.get(f"/games/{uid}.gcg")
    assert gcg.text == record.record
    assert "attachment" in gcg.headers["content-disposition"]


async def test_malformed_websocket_messages_get_errors_and_the_connection_stays(
    twente: MeepleServer,
) -> None:
    """Garbage, wrong types, unknown games and oversized frames each get an error reply;
    a ping afterwards still gets its pong."""
    ws = await web_socket(twente)
    cases: list[tuple[str | bytes, str]] = [
        ("not json", "bad-json"),
        (b"\x00\xff", "bad-json"),
        ('{"type":"subscribe","topic":7}', "bad-message"),
        ('{"type":"subscribe","topic":"game","uid":"abcdef"}', "not-found"),
        ('{"type":"fly"}', "unknown-type"),
        ("x" * (DEFAULT_MAX_MESSAGE_SIZE + 1), "too-large"),
        ("y" * (WS_TRANSPORT_LIMIT // 2), "too-large"),
    ]
    for data, code in cases:
        await ws.send(data)
        reply = await _reply(ws)
        assert (reply["type"], reply["code"]) == ("error", code)
        await ws.send('{"type":"ping","id":42}')
        assert await _reply(ws) == {"type": "pong", "id": 42}
    await ws.close()


async def test_lobby_subscription_sees_a_queue_and_a_game(
    twente: MeepleServer, gcide: Lexicon
) -> None:
    """Subscribed to the lobby, a page sees a player queue up and then the game start."""
    ws = await web_socket(twente)
    await ws.send('{"type":"subscribe","topic":"lobby"}')
    first = await _reply(ws)
    assert first["type"] == "lobby"
    assert first["data"] == {"queues": [], "tables": [], "rooms": [], "store": None}
    reader, writer = await asyncio.open_connection("127.0.0.1", twente.ports["twente"])
    writer.write(b"ANNOUNCE\x1fzed\x1e")
    await reader.read(100)
    writer.write(b"REQUESTGAME\x1f2\x1e")
    queued = await _reply(ws)
    assert queued["data"]["queues"][0]["waiting"] == [
        {"name": "zed", "protocol": "twente", "ready": False}
    ]
    writer.close()
    await ws.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    messages=st.lists(
        st.one_of(
            st.binary(max_size=64),
            st.text(max_size=64),
            st.dictionaries(
                st.sampled_from(["type", "topic", "uid", "id"]),
                st.one_of(st.none(), st.integers(), st.text(max_size=8), st.lists(st.integers())),
                max_size=4,
            ).map(json.dumps),
        ),
        min_size=1,
        max_size=5,
    )
)
async def test_hostile_messages_never_close_the_socket(
    twente: MeepleServer, messages: list[str | bytes]
) -> None:
    """Whatever a browser sends, the connection stays: a ping after it is answered."""
    ws = await web_socket(twente)
    for data in messages:
        await ws.send(data)
    await ws.send('{"type":"ping","id":7}')
    while (reply := await _reply(ws)) != {"type": "pong", "id": 7}:
        assert reply["type"] in ("error", "pong", "lobby", "console", "game")
    await ws.close()


async def test_a_spectator_that_never_reads_does_not_slow_the_game(
    twente: MeepleServer, gcide: Lexicon
) -> None:
    """Spectators that stop reading hold the game up not at all: bots finish a whole
    game, and a late reader still gets the final snapshot (older ones may be dropped)."""
    port = twente.ports["twente"]
    bots = asyncio.gather(
        play_twente("127.0.0.1", port, "ann", gcide), play_twente("127.0.0.1", port, "bob", gcide)
    )
    lobby = server_lobby(twente.services)
    while not lobby.rooms:
        await asyncio.sleep(0.001)
    uid = lobby.rooms[0].uid
    sleepers = []
    for _ in range(5):
        ws = await websockets.connect(
            f"ws://127.0.0.1:{twente.ports['web']}/ws", max_queue=1, max_size=2**22
        )
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
        await ws.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
        sleepers.append(ws)
    await asyncio.wait_for(bots, GAME_PATIENCE)
    for ws in sleepers:
        last: dict[str, Any] = {}
        while not last.get("data", {}).get("finished"):
            last = await _reply(ws)
        await ws.close()


async def test_an_old_row_shows_its_result_and_says_it_cannot_be_replayed(
    twente: MeepleServer, http: httpx.AsyncClient
) -> None:
    """A game stored before structured records (no data, no uid) is listed with a link by
    its row number, and its page shows the result and says it is not replayable."""
    store: Store = twente.services.store
    number = store.record_game(
        game="santorini", variant="gods", protocols=["am27"], players=["old", "timer"],
        started_at=1.0, end_reason="win", result={"winner": "old"}, record="['Move(...)']",
    )  # fmt: skip
    listing = await http.get("/games")
    assert f'href="/games/n/{number}"' in listing.text
    page = await http.get(f"/games/n/{number}")
    assert page.status_code == 200
    assert "stored before records could be replayed" in page.text
    assert "Winner: old" in page.text
    assert (await http.get("/games/n/999")).status_code == 404


async def test_websockets_per_address_are_limited(make_server: ServerFactory) -> None:
    """[limits] max_connections_per_address applies to the web's WebSockets too."""
    server = await make_server("twente", limits={"max_connections_per_address": 2})
    first, second = await web_socket(server), await web_socket(server)
    with pytest.raises(websockets.InvalidStatus):
        await web_socket(server)
    await first.close()
    third = await web_socket(server)  # a slot is free again
    for ws in (second, third):
        await ws.close()


async def test_the_cluster_api_shows_one_node_with_every_role_and_its_rooms(
    twente: MeepleServer, http: httpx.AsyncClient, gcide: Lexicon
) -> None:
    """``GET /api/cluster`` (docs/cluster.md) on ``meeple serve``: one node with every
    role, the lobby's leader; a game in progress is a room it owns, gone when it ends."""
    empty = (await http.get("/api/cluster")).json()
    [node] = empty["nodes"]
    assert node["roles"] == ["edge", "rooms", "lobby", "store"]
    assert node["pid"] == os.getpid()  # the test's server runs in this process
    assert f"127.0.0.1:{twente.ports['twente']}" in node["address"]
    assert empty["lobby_leader"] == node["name"]
    assert empty["rooms"] == []
    ann = await TwenteClient.connect("127.0.0.1", twente.ports["twente"], "ann")
    bob = await TwenteClient.connect("127.0.0.1", twente.ports["twente"], "bob")
    try:
        await ann.request_game(2)
        await bob.request_game(2)
        while not isinstance(await ann.receive(), NotifyTurn):
            pass
        [room] = server_lobby(twente.services).rooms
        busy = (await http.get("/api/cluster")).json()
        assert busy["rooms"] == [{"uid": room.uid, "game": "scrabble", "owner": node["name"]}]
    finally:
        await ann.close()
        await bob.close()
    await room.wait_finished()
    assert (await http.get("/api/cluster")).json()["rooms"] == []

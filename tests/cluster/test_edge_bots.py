"""Server bots on a cluster (issue 32.6): the web's "add a bot" (the lobby's one-click
"Play X now" sends it) on any edge. The lobby's leader seats the bot; it plays on the
rooms node that runs the table's room, never on the edge, and a node that takes the room
over seats it again from the log. ``meeple node`` processes on loopback with real NATS:
a browser (the web protocol over a real WebSocket on an edge's web port) plays whole
Scrabble games against a server bot."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from typing import Any

import httpx
import pytest
from nats.aio.client import Client
from playwright.async_api import Browser, expect
from tests.cluster.conftest import ModuleNodes
from tests.cluster.test_edge_web import (
    _action,
    _browser_game,
    _next,
    _play,
    _santorini_choice,
    _spectrangle_choice,
    _until,
    _web,
)
from tests.cluster.test_nodes import Nodes, _room_uid, nodes
from tests.patience import GAME_PATIENCE, PATIENCE_MS
from tests.web.helpers import NEXT_VIEW, wait_for
from tests.web.test_play_scrabble_browser import NO_CURSOR, square

from meeple.ai.scrabble import ranked_moves
from meeple.bus.natsbus import NatsBus
from meeple.bus.subjects import Namespace
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import ENGLISH
from meeple.node import wire
from meeple.node.edge import LobbyCall
from meeple.node.launch import NodeProcess
from meeple.server.store.database import open_store

__all__ = ["nodes"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def enable() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


async def _trio(shared: ModuleNodes) -> tuple[NodeProcess, NodeProcess, NodeProcess]:
    """The module's lobby-and-store node, edge with a web port and rooms node, which the
    tests that kill none share (tests/cluster/conftest.py ``ModuleNodes``)."""
    hub = await shared.node("hub", "lobby,store", store=True)
    web1 = await shared.node("web1", "edge", "--api-port", "0")
    rooms1 = await shared.node("rooms1", "rooms")
    return hub, web1, rooms1


async def _against_a_bot(port: int, name: str, level: str = "easy") -> tuple[Any, str]:
    """A browser on the edge at ``port`` opens a Scrabble table and adds a server bot (as
    the lobby's "Play Scrabble now" does); its socket and the bot's name, once seated."""
    ws = await _web(port)
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ws.send(json.dumps({**create, "name": name}))
    table = (await _until(ws, "seated"))["table"]
    await ws.send(json.dumps({"type": "bot", "table": table, "level": level}))
    return ws, f"{level}bot"


async def test_a_browser_plays_a_whole_game_against_a_server_bot_on_a_three_node_cluster(
    module_nodes: ModuleNodes, enable: Lexicon
) -> None:
    """A lobby node, an edge with a web port, a rooms node: the browser's "add a bot"
    seats a server bot, the game starts, and the two play it to its end; the bot's seat
    is played on the rooms node (the edge has none: its log names no bot)."""
    _hub, web1, rooms1 = await _trio(module_nodes)
    ws, bot = await _against_a_bot(web1.listeners["api"], "amy")
    views: list[dict[str, Any]] = []
    final = await asyncio.wait_for(_play(ws, enable, views=views), 300)
    assert final["over"]
    players = final["players"]
    assert "amy" in players
    (name,) = [p for p in players if p != "amy"]
    assert name.startswith(bot)
    # The bot moved: a move of the game is by its seat (it did not leave nor time out).
    them = players.index(name)
    assert any(m.get("player") == them for m in final["moves"]), final["moves"]
    assert f"{name} (bot)" in rooms1.log.read_text()  # its room's seats, where it plays
    await ws.close()


async def test_a_bot_whose_rooms_node_is_killed_plays_on_on_the_other(
    nodes: Nodes, pg_url: str, node: Client, nats_ns: Namespace, enable: Lexicon
) -> None:
    """The bot's rooms node is SIGKILLed mid-game: the other rooms node takes the room
    over from its log and seats the bot again (it is a seat of the room, as the
    browser's), which plays on to the game's end."""
    await nodes.start("hub", "lobby,store", pg_url)
    web1 = await nodes.start("web1", "edge", None, "--api-port", "0")
    await nodes.start("rooms1", "rooms")
    await nodes.start("rooms2", "rooms")
    ws, _bot = await _against_a_bot(web1.listeners["api"], "bea")
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, open_store("sqlite:///:memory:"))
    uid = await _room_uid(reader)
    view = await asyncio.wait_for(_play(ws, enable, stop_after=3), 120)
    leases = Leases(JetStreamBackplane(node), nats_ns)
    owner = await leases.holder(room_key(uid))
    assert owner is not None
    killed = next(n for n in nodes.started if n.name == owner.owner)
    survivor = next(n for n in nodes.started if n.name in ("rooms1", "rooms2") and n is not killed)
    before = len(view["moves"])
    killed.kill()
    until = time.monotonic() + 30
    while (holder := await leases.holder(room_key(uid))) is None or holder.owner != survivor.name:
        assert time.monotonic() < until, "no takeover"
        await asyncio.sleep(0.05)
    await ws.send(json.dumps({"type": "play", "action": _action(view, enable)}))
    final = await asyncio.wait_for(_play(ws, enable), 300)
    assert final["over"]
    you = final["you"]
    # The bot moved after the takeover: a move of its seat beyond the moves before the kill.
    later = final["moves"][before + 1 :]
    assert any(m.get("player") != you for m in later), final["moves"]
    assert f"{survivor.name}: took room {uid}" in survivor.log.read_text()
    await ws.close()


async def test_a_bot_level_the_server_does_not_have_is_refused_on_the_edge(
    module_nodes: ModuleNodes,
) -> None:
    """The leader refuses a bot of an unknown level, or for a table that does not exist;
    the browser hears ``error`` ``refused`` and keeps its seat and socket."""
    _hub, web1, _rooms1 = await _trio(module_nodes)
    ws = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ws.send(json.dumps({**create, "name": "cy"}))
    table = (await _until(ws, "seated"))["table"]
    for asked in ({"table": table, "level": "godlike"}, {"table": "table-none", "level": "easy"}):
        await ws.send(json.dumps({"type": "bot", **asked}))
        while (message := await _next(ws))["type"] != "error":
            pass
        assert message["code"] == "refused", message
    # The seat is still at its table: a bot added now starts the game.
    await ws.send(json.dumps({"type": "bot", "table": table, "level": "easy"}))
    first = (await _until(ws, "seat"))["data"]["players"][0]
    assert first == "cy" or first.startswith("easybot"), first
    await ws.close()


def _phony(view: dict[str, Any], lexicon: Lexicon) -> list[list[Any]] | None:
    """Tiles of the seat's own rack that make a legal play on the board but a word not
    in ``lexicon`` (the best play's tiles in another order), or None this turn."""
    board = Board.from_rows(view["board"])
    found = ranked_moves(board, view["rack"], lexicon, ENGLISH)
    if not found:
        return None
    best = found[0].tiles
    for order in itertools.islice(itertools.permutations(p.tile for p in best), 1, 50):
        tiles = [Placement(y=p.y, x=p.x, tile=t) for p, t in zip(best, order, strict=True)]
        try:
            validate_play(board, tiles, rack=view["rack"])  # legal without the words
        except ScrabbleError:
            continue
        try:
            validate_play(board, tiles, rack=view["rack"], lexicon=lexicon)
        except ScrabbleError:
            return [[p.x, p.y, p.tile] for p in tiles]
    return None


async def test_the_preview_and_the_analysis_answer_on_an_edge(
    module_nodes: ModuleNodes, enable: Lexicon
) -> None:
    """On an edge, as in ``meeple serve``: the Scrabble preview scores a tentative play
    from the seat's own rack and refuses a word the table's word list lacks (the Twente
    variant checks words on play: the edge loads the word list), and a finished game's
    replay shows each move against the engine's best (its record from the store node
    over the bus)."""
    _hub, web1, _rooms1 = await _trio(module_nodes)
    port = web1.listeners["api"]
    ws, _bot = await _against_a_bot(port, "dee")
    scored = refused = 0
    uid = ""
    while True:
        message = await _next(ws, 60)
        assert message["type"] not in ("error",) or message["code"] == "illegal", message
        if message["type"] != "seat":
            continue
        uid = message["uid"]
        view = message["data"]
        if view["over"]:
            break
        if view["turn"] != view["you"]:
            continue
        action = _action(view, enable)
        if action["kind"] == "place":
            await ws.send(json.dumps({"type": "preview", "id": 1, "action": action}))
            reply = await _until(ws, "preview", 60)
            best = ranked_moves(Board.from_rows(view["board"]), view["rack"], enable, ENGLISH)
            assert reply["id"] == 1
            assert reply["score"] == best[0].score, reply
            scored += 1
            phony = _phony(view, enable)
            if phony is not None:
                place = {"kind": "place", "tiles": phony}
                await ws.send(json.dumps({"type": "preview", "id": 2, "action": place}))
                reply = await _until(ws, "preview", 60)
                assert reply["id"] == 2
                assert "refusal" in reply, reply
                assert "score" not in reply
                refused += 1
        await ws.send(json.dumps({"type": "play", "action": action}))
    assert scored > 0
    assert refused > 0
    await ws.close()
    async with httpx.AsyncClient(verify=False, base_url=f"http://127.0.0.1:{port}") as client:
        # Stored by the store node, then analysed on the edge when asked: a whole game's
        # way through the bus, bounded as a game is (CI at load ~8 passed 60 s once).
        until = time.monotonic() + GAME_PATIENCE
        while (page := await client.get(f"/games/{uid}")).status_code != 200 or (
            "Each move against the engine" not in page.text
        ):
            assert time.monotonic() < until, (page.status_code, page.text[:2000])
            await asyncio.sleep(0.5)
    assert 'class="analysis' in page.text


async def test_play_santorini_and_spectrangle_now_on_an_edge_against_server_bots(
    module_nodes: ModuleNodes,
) -> None:
    """The lobby's "Play Santorini now" and "Play Spectrangle now" on an edge: each
    browser opens its table and adds a server bot (a ``medium`` Santorini search, an
    ``easy`` Spectrangle bot), which play on the rooms node to the game's end."""
    _hub, web1, rooms1 = await _trio(module_nodes)
    rng = random.Random(32)
    port = web1.listeners["api"]
    sam, sue = await _web(port), await _web(port)
    for ws, game, name, level in (
        (sam, "santorini", "sam", "medium"),
        (sue, "spectrangle", "sue", "easy"),
    ):
        create = {"type": "create", "game": game, "variant": "standard", "size": 2}
        await ws.send(json.dumps({**create, "name": name}))
        table = (await _until(ws, "seated"))["table"]
        await ws.send(json.dumps({"type": "bot", "table": table, "level": level}))
    santorini_view, spectrangle_view = await asyncio.wait_for(
        asyncio.gather(
            _browser_game(sam, lambda view: _santorini_choice(view["legal"], rng)),
            _browser_game(sue, _spectrangle_choice),
        ),
        240,
    )
    # The bots' numbers are the lobby's (the module's other tests seat bots too).
    [medium] = [p for p in santorini_view["players"] if p != "sam"]
    assert "sam" in santorini_view["players"]
    assert medium.startswith("mediumbot")
    assert santorini_view["winner"] is not None
    assert spectrangle_view["status"] == "finished"
    [easy] = [p for p in spectrangle_view["players"] if p != "sue"]
    assert "sue" in spectrangle_view["players"]
    assert easy.startswith("easybot")
    log = rooms1.log.read_text()
    assert f"{medium} (bot)" in log
    assert f"{easy} (bot)" in log
    for ws in (sam, sue):
        await ws.close()


async def test_chromium_plays_scrabble_now_on_an_edge_and_previews_its_play(
    module_nodes: ModuleNodes, browser: Browser, enable: Lexicon
) -> None:
    """Debian's chromium on an edge's lobby clicks "Play Scrabble now": it is seated
    against a server bot at once, types the engine's best play, and the page's preview
    shows its score before it is sent; the bot answers the move, and the page resigns."""
    _hub, web1, _rooms1 = await _trio(module_nodes)
    base = f"http://127.0.0.1:{web1.listeners['api']}"
    page = await browser.new_page()
    await page.goto(f"{base}/")
    await page.click("#play-now a[data-game=scrabble]")
    await expect(page.locator("#play")).to_be_visible(timeout=PATIENCE_MS)
    handle = await wait_for(page, NEXT_VIEW, arg=-1, timeout=PATIENCE_MS)
    view: dict[str, Any] = await handle.json_value()
    assert not view["over"]
    (bot,) = [p for i, p in enumerate(view["players"]) if i != view["you"]]
    assert bot.startswith("hardbot"), bot  # the page's default level
    await page.evaluate(NO_CURSOR)
    best = ranked_moves(Board.from_rows(view["board"]), view["rack"], enable, ENGLISH)[0]
    tiles = sorted(best.tiles, key=lambda t: (t.y, t.x))
    await square(page, tiles[0].x, tiles[0].y).click()
    if len(tiles) > 1 and tiles[1].x == tiles[0].x:
        await square(page, tiles[0].x, tiles[0].y).click()
    for t in tiles:
        if t.tile.islower():
            await page.keyboard.press("?")
        await page.keyboard.press(t.tile.upper())
    await expect(page.locator("#preview")).to_contain_text(f"{best.score} points: ")
    seen = len(view["moves"])
    await page.click("#controls .send")
    handle = await wait_for(page, NEXT_VIEW, arg=seen + 1, timeout=PATIENCE_MS)
    after: dict[str, Any] = await handle.json_value()
    mine, theirs = after["moves"][seen], after["moves"][seen + 1]
    assert mine["player"] == view["you"]
    assert mine["score"] == best.score
    assert theirs["player"] != view["you"]  # the bot moved
    await page.click("#resign")
    await page.click("#resign-yes")
    await expect(page.locator("#over")).to_be_visible()
    await page.close()


async def test_an_edge_cannot_make_its_seat_a_server_bot(
    nodes: Nodes, pg_url: str, node: Client, nats_ns: Namespace
) -> None:
    """Only the lobby's leader seats a server bot: an edge's call whose seat says it is
    one (a stolen edge credential, say) sits a connection's seat, which the rooms node
    does not play itself (its log's genesis names no bot for it)."""
    await nodes.start("hub", "lobby,store", pg_url)
    web1 = await nodes.start("web1", "edge", None, "--api-port", "0")
    rooms1 = await nodes.start("rooms1", "rooms")
    ws = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ws.send(json.dumps({**create, "name": "eve"}))
    table = (await _until(ws, "seated"))["table"]
    forged = {"route": "web9-1", "name": "forger", "protocol": "twente", "variants": None}
    call = LobbyCall("sit", {**forged, "bot": True, "level": "easy"}, (table,), "web9.x", 1)
    bus = NatsBus(node)
    await bus.request(nats_ns.for_node("web9").lobby_request("sit"), wire.dumps(call), timeout=10)
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, open_store("sqlite:///:memory:"))
    uid = await _room_uid(reader)
    log = await reader.action_log(uid)
    assert log is not None
    seats = {s["name"]: s for s in log.genesis["seats"]}
    assert seats["forger"]["bot"] is None
    assert seats["forger"]["protocol"] == "twente"
    assert "forger (bot)" not in rooms1.log.read_text()
    await ws.close()

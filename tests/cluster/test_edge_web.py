"""Browsers on cluster edges (issue 21, "Tables across nodes"): ``meeple node`` processes
on loopback with real NATS and PostgreSQL. A browser on one edge, a Twente bot on
another and a Twente bot on a third sit at one table and play; the browser's edge is
SIGKILLed mid-game and the browser takes its seat back through another edge with its
rejoin token; a clocked table between two browsers goes on across its rooms node's
SIGKILL with the failover gap charged to nobody."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from playwright.async_api import Browser, expect
from tests.cluster.conftest import ModuleNodes
from tests.cluster.test_nodes import Nodes, _room_uid, nodes
from tests.patience import GAME_PATIENCE, PATIENCE, PATIENCE_MS, eventually
from tests.web.helpers import NEXT_VIEW, _move, screenshot, type_move, wait_for
from websockets.asyncio.client import ClientConnection

from meeple.ai.scrabble import ranked_moves
from meeple.bus.subjects import Namespace
from meeple.clients.santorini import play_santorini
from meeple.clients.spectrangle import play_spectrangle
from meeple.clients.twente import TwenteClient
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.games import santorini
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.twente.messages import Error, GameOver, NotifyTurn
from meeple.protocols.web import PROTOCOL
from meeple.server.store.database import open_store

__all__ = ["nodes"]

T = TypeVar("T")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def enable() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


# What a test opened: closed (cancelled) at its end even when it fails, so that a
# failing test leaves no socket or task to fail the next one on the same worker.
_OPENED: list[ClientConnection] = []
_STARTED: list[asyncio.Future[Any]] = []


@pytest.fixture(autouse=True)
async def _tidy() -> AsyncIterator[None]:
    yield
    while _STARTED:
        task = _STARTED.pop()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    while _OPENED:
        await _OPENED.pop().close()


def _spawn(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    task = asyncio.ensure_future(coro)
    _STARTED.append(task)
    return task


async def _web(port: int) -> ClientConnection:
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=2**22)
    _OPENED.append(ws)
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _next(ws: ClientConnection, timeout: float = 30.0) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return message


async def _until(ws: ClientConnection, kind: str, timeout: float = 30.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            message = await _next(ws)
            assert message["type"] != "error" or message["code"] == "illegal", message
            if message["type"] == kind:
                return message


def _action(view: dict[str, Any], lexicon: Lexicon) -> dict[str, Any]:
    rack = view["rack"]
    found = ranked_moves(Board.from_rows(view["board"]), rack, lexicon, ENGLISH)
    if found:
        return {"kind": "place", "tiles": [[p.x, p.y, p.tile] for p in found[0].tiles]}
    if view["bag"] >= 1:
        return {"kind": "exchange", "tiles": rack.replace("?", "")[:1] or rack[:1]}
    return {"kind": "pass"}


async def _play(
    ws: ClientConnection,
    lexicon: Lexicon,
    *,
    stop_after: int | None = None,
    first: dict[str, Any] | None = None,
    views: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Play from the seat views until the game is over (or ``stop_after`` own moves,
    returning the view whose turn it is then); the last view."""
    moves = 0
    while True:
        message = first if first is not None else await _next(ws)
        first = None
        assert message["type"] != "error" or message["code"] == "illegal", message
        if message["type"] != "seat":
            continue
        view = message["data"]
        if views is not None:
            views.append(view)
        if view["over"]:
            return view
        if view["turn"] != view["you"]:
            continue
        if stop_after is not None and moves >= stop_after:
            return view
        await ws.send(json.dumps({"type": "play", "action": _action(view, lexicon)}))
        moves += 1


async def _twente_bot(port: int, name: str, players: int, lexicon: Lexicon) -> GameOver:
    client = await TwenteClient.connect("127.0.0.1", port, name)
    try:
        await client.request_game(players)
        skip = 0
        async for message in client:
            if isinstance(message, NotifyTurn) and message.your_turn:
                skip = 0
                await asyncio.sleep(0.05)
                await _move(client, lexicon, skip)
            elif isinstance(message, Error) and client.turn == client.name:
                skip += 1
                if skip > 5:
                    await client.pass_turn()
                else:
                    await _move(client, lexicon, skip)
            elif isinstance(message, GameOver):
                return message
    finally:
        await client.close()
    raise AssertionError(f"{name}: the connection ended before GAMEOVER")


async def _cluster(
    nodes: Nodes, pg_url: str | None, *, web2: bool = True, rooms: bool = True
) -> tuple[Nodes, Any, Any, Any, Any]:
    """A lobby (and store) node with a Twente edge, one or two edges with web ports, a
    rooms node (each optional but the first two)."""
    roles = "edge,lobby,store" if pg_url else "edge,lobby"
    hub = await nodes.start("hub", roles, pg_url)
    first = await nodes.start("web1", "edge", None, "--api-port", "0")
    second = await nodes.start("web2", "edge", None, "--api-port", "0") if web2 else None
    room_node = await nodes.start("rooms1", "rooms") if rooms else None
    return nodes, hub, first, second, room_node


@pytest.fixture
async def cluster(nodes: Nodes, pg_url: str) -> tuple[Nodes, Any, Any, Any, Any]:
    return await _cluster(nodes, pg_url)


@pytest.fixture
async def shared(module_nodes: ModuleNodes) -> tuple[Any, Any, Any, Any]:
    """The module's cluster, as :func:`_cluster`'s with every node (issue 33.3): a hub
    with the lobby, the store and a Twente edge, two edges with web ports, a rooms node,
    for the tests that kill, pause or reconfigure none of them. Each plays at tables of
    its own (opened by its browsers, or a queue only its own players join) and asserts
    nothing of the others' (no "the one room", no count of games)."""
    hub = await module_nodes.node("hub", "edge,lobby,store", store=True)
    web1 = await module_nodes.node("web1", "edge", "--api-port", "0")
    web2 = await module_nodes.node("web2", "edge", "--api-port", "0")
    rooms1 = await module_nodes.node("rooms1", "rooms")
    return hub, web1, web2, rooms1


async def test_a_browser_and_twente_bots_on_three_edges_play_and_the_browser_comes_back_elsewhere(
    cluster: tuple[Nodes, Any, Any, Any, Any],
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    enable: Lexicon,
    pg_reader: JetStreamLog,
) -> None:
    """A browser opens a 3-seat Twente-variant table on edge web1; Twente bots on the
    hub's and web2's Twente ports fill it; they play; web1 is SIGKILLed mid-game and the
    browser sends its rejoin token to web2: it is seated again (the game's uid, its name),
    its view comes back with its own rack, and it plays on with the bots, who never lose
    their connections; then the room's rooms node is SIGKILLed too, and the node that
    takes the room over sends the browser's events to web2 (where its token's entry says
    the seat is now), so the game is played to the end. The game is stored once with its three
    seats' protocols."""
    nodes, hub, web1, web2, rooms1 = cluster
    ws = await _web(web1.listeners["api"])
    await ws.send(json.dumps({"type": "subscribe", "topic": "lobby"}))
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 3}
    await ws.send(json.dumps({**create, "name": "wes"}))
    seated = await _until(ws, "seated")
    token, table = seated["token"], seated["table"]
    assert seated["name"] == "wes"
    assert table.startswith("table-web1-")
    # The lobby topic shows the table from the edge's copy of the leader's tables.
    while True:
        lobby = await _until(ws, "lobby")
        tables = lobby["data"]["tables"] if "data" in lobby else []
        if any(t["id"] == table and t["waiting"] for t in tables):
            break
    bots = [
        _spawn(_twente_bot(hub.listeners["twente"], "ann", 3, enable)),
        _spawn(_twente_bot(web2.listeners["twente"], "bob", 3, enable)),
    ]
    reader = pg_reader
    uid = await _room_uid(reader)
    rooms2 = await nodes.start("rooms2", "rooms")  # after the room opened on rooms1
    before = await _play(ws, enable, stop_after=2)
    rack = before["rack"]

    web1.kill()  # the browser's edge dies; the bots' edges live
    await ws.close()
    ws = await _web(web2.listeners["api"])
    started = time.monotonic()
    await ws.send(json.dumps({"type": "rejoin", "token": token}))
    again = await _until(ws, "seated")
    assert again["table"] == uid
    assert again["name"] == "wes"
    assert again["token"] == token
    view = await _until(ws, "seat")
    assert view["uid"] == uid
    assert view["data"]["rack"] == rack  # its own rack, as it was: nobody moved meanwhile
    assert view["data"]["players"][view["data"]["you"]] == "wes"
    print(f"rejoined through another edge in {time.monotonic() - started:.2f} s")
    # Its room's owner dies too: the new owner finds the seat where it is now (web2),
    # not where the genesis put it (web1, dead).
    mine = await _play(ws, enable, first=view, stop_after=1)
    rooms1.kill()
    final = await _play(ws, enable, first={"type": "seat", "data": mine})
    assert "rooms2: took room" in rooms2.log.read_text()
    overs = await asyncio.wait_for(asyncio.gather(*bots), 120)
    assert final["over"]
    assert all(dict(o.scores) == dict(overs[0].scores) for o in overs)
    assert dict(overs[0].scores)["wes"] == final["scores"][final["you"]]
    records = open_store(pg_url)
    await eventually(lambda: records.game_by_uid(uid) is not None, "the game stored", every=0.1)
    stored = records.game_by_uid(uid)
    assert stored is not None
    assert stored.data is not None
    assert sorted(stored.protocols) == ["twente", "web"]
    assert sorted(stored.players) == ["ann", "bob", "wes"]
    await ws.close()


async def test_chromium_plays_on_an_edge_against_a_twente_bot_on_another(
    shared: tuple[Any, Any, Any, Any], browser: Browser, enable: Lexicon
) -> None:
    """Debian's chromium opens web1's lobby and play pages, opens a 2-seat Twente table
    and types its moves; a Twente bot on the hub's edge fills the table and they play
    (the edge serves the running game's live page meanwhile). After four moves of its
    own the page resigns: the bot hears GAMEOVER on its edge, with its score as the page
    showed it."""
    hub, web1, _web2, _rooms = shared
    base = f"http://127.0.0.1:{web1.listeners['api']}"
    page = await browser.new_page()
    await page.goto(f"{base}/")
    await expect(page.locator("#queues")).to_be_attached()
    await screenshot(page, "edge-lobby")
    await page.goto(f"{base}/play")
    await page.fill("#create [name=name]", "pia")
    await page.select_option("#create [name=game]", "scrabble/twente")
    await page.fill("#create [name=size]", "2")
    await page.click("#create button[type=submit]")
    await expect(page.locator("#play")).to_be_visible()
    bot = _spawn(_twente_bot(hub.listeners["twente"], "tom", 2, enable))
    seen = -1
    for move_number in range(4):
        handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        assert not view["over"]
        if move_number == 1:
            await screenshot(page, "edge-play")
        assert view["players"][view["you"]] == "pia"
        seen = len(view["moves"])
        await type_move(page, view, enable)
    handle = await wait_for(page, NEXT_VIEW, arg=seen, timeout=PATIENCE_MS)
    view = await handle.json_value()
    assert len(view["moves"]) >= 8  # four of the page's and four of the bot's
    uid = await page.evaluate("() => window.meeple.uid")
    live = await browser.new_page()
    response = await live.goto(f"{base}/games/{uid}")
    assert response is not None
    assert response.status == 200
    await expect(live.locator("#board")).to_be_visible()
    await live.close()
    await page.click("#resign")
    await page.click("#resign-yes")
    over = await asyncio.wait_for(bot, GAME_PATIENCE)
    shown = dict(zip(view["players"], view["scores"], strict=True))
    assert shown["pia"] > 0
    assert dict(over.scores)["tom"] == shown["tom"]  # the resigner scores nothing


async def test_a_clocked_web_table_goes_on_after_its_rooms_node_is_killed_and_the_gap_is_free(
    cluster: tuple[Nodes, Any, Any, Any, Any],
    node: Client,
    nats_ns: Namespace,
    enable: Lexicon,
) -> None:
    """Two browsers on two edges play a Twente-variant table with a 5-minute clock; its
    rooms node is SIGKILLed while the first player's clock runs. Another rooms node
    takes the room over from its log with the clocks as the last entry left them: the
    player's move after the takeover costs it only the time since the takeover, not the
    failover gap (docs/cluster.md, "Failures"). The game then goes on to its end."""
    nodes, _hub, web1, web2, rooms1 = cluster
    cat = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await cat.send(json.dumps({**create, "name": "cat", "clock": "5+0"}))
    table = (await _until(cat, "seated"))["table"]
    dan = await _web(web2.listeners["api"])
    await dan.send(json.dumps({"type": "sit", "table": table, "name": "dan"}))
    await _until(dan, "seated")
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, open_store("sqlite:///:memory:"))
    uid = await _room_uid(reader)
    rooms2 = await nodes.start("rooms2", "rooms")  # after the room opened on rooms1
    other = _spawn(_play(dan, enable))
    view = await _play(cat, enable, stop_after=2)
    seen = time.monotonic()
    clocks = view["clocks"]
    you = view["you"]
    assert clocks["control"]["base"] == 300
    assert clocks["running"] == you
    left = clocks["remaining"][you]

    # Time on the running clock that no log entry holds: the old owner's, gone with it.
    await asyncio.sleep(1.0)
    rooms1.kill()
    leases = Leases(JetStreamBackplane(node), nats_ns)
    until = time.monotonic() + 20
    while (holder := await leases.holder(room_key(uid))) is None or holder.owner != "rooms2":
        assert time.monotonic() < until, "no takeover"
        await asyncio.sleep(0.05)
    taken = time.monotonic()
    gap = taken - seen
    assert gap > 2.0  # a second, then the lease's lapse: what must not be charged
    await cat.send(json.dumps({"type": "play", "action": _action(view, enable)}))
    while True:
        message = await _until(cat, "seat")
        after = message["data"]
        if len(after["moves"]) > len(view["moves"]) and after["clocks"]["running"] != you:
            break
    moved = time.monotonic()
    charged = left - after["clocks"]["remaining"][you]
    print(f"failover gap {gap:.2f} s; charged {charged:.2f} s of {moved - seen:.2f} s")
    assert charged >= -0.05  # no time given either
    assert charged <= (moved - taken) + 0.5  # only the time since the takeover
    final = await _play(cat, enable, first=message)
    assert final["over"]
    assert (await asyncio.wait_for(other, GAME_PATIENCE))["over"]
    assert "rooms2: took room" in rooms2.log.read_text()
    await cat.close()
    await dan.close()


@pytest.fixture
async def lobby_and_edge(nodes: Nodes) -> tuple[Nodes, Any, Any, Any, Any]:
    return await _cluster(nodes, None, web2=False, rooms=False)


_FIELDS = [
    *("type", "topic", "uid", "token", "table", "name", "game", "variant", "size", "action"),
    *("level", "id"),
]
# "bot" is a call to the lobby's leader, "preview" is scored on the edge (issue 32.6).
_TYPES = ["subscribe", "create", "sit", "rejoin", "play", "ready", "leave", "bot", "chat"]
_TYPES += ["preview"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    messages=st.lists(
        st.one_of(
            st.binary(max_size=48),
            st.text(max_size=48),
            st.fixed_dictionaries(
                {"type": st.sampled_from(_TYPES)},
                optional={
                    key: st.one_of(
                        st.none(), st.integers(-3, 9), st.text(max_size=12), st.lists(st.integers())
                    )
                    for key in _FIELDS[1:]
                },
            ).map(json.dumps),
        ),
        min_size=1,
        max_size=6,
    )
)
async def test_hostile_messages_to_an_edge_never_close_its_socket(
    lobby_and_edge: tuple[Nodes, Any, Any, Any, Any], messages: list[str | bytes]
) -> None:
    """Whatever a browser sends an edge (tables, rejoins with made-up tokens, plays out of
    turn, junk), the connection stays: a ping after it is answered."""
    _nodes, _hub, web1, _web2, _rooms = lobby_and_edge
    ws = await _web(web1.listeners["api"])
    for data in messages:
        await ws.send(data)
    await ws.send('{"type":"ping","id":7}')
    async with asyncio.timeout(PATIENCE):
        while (reply := await _next(ws)) != {"type": "pong", "id": 7}:
            assert reply["type"] in ("error", "pong", "lobby", "seated", "game", "seat", "preview")
    await ws.close()


async def test_an_edge_answers_only_its_hosts(shared: tuple[Any, Any, Any, Any]) -> None:
    """Issue 30.7: an edge's web port builds its own app; it refuses a Host that is not
    on the allowlist (DNS rebinding) with 400, pages and /ws alike, and serves its own."""
    _hub, web1, _web2, _rooms = shared
    port = web1.listeners["api"]

    async def status(request: bytes) -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n"), PATIENCE)
        writer.close()
        return int(head.split()[1])

    evil = b"evil.example:%d" % port
    own = b"127.0.0.1:%d" % port
    page = b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
    handshake = (
        b"GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n\r\n"
    )
    assert await status(page % evil) == 400
    assert await status(page % own) == 200
    assert await status(handshake % (evil, evil)) == 400
    assert await status(handshake % (own, own)) == 101


async def test_a_browser_whose_socket_closes_is_held_and_comes_back_through_another_edge(
    shared: tuple[Any, Any, Any, Any], enable: Lexicon
) -> None:
    """A browser's socket to a live edge closes mid-game: the room's owner holds its seat
    (Scrabble's leave rule would end the game: it does not), and the browser's token
    takes the seat back through the other edge; the two browsers play to the end."""
    _hub, web1, web2, _rooms = shared
    eva = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await eva.send(json.dumps({**create, "name": "eva"}))
    table = (await _until(eva, "seated"))["table"]
    fay = await _web(web2.listeners["api"])
    await fay.send(json.dumps({"type": "sit", "table": table, "name": "fay"}))
    token = (await _until(fay, "seated"))["token"]
    other = _spawn(_play(eva, enable))
    await _play(fay, enable, stop_after=1)
    await fay.close()  # its edge lives: the seat is held, not left
    await asyncio.sleep(1.0)
    assert not other.done()  # the game did not end
    fay = await _web(web1.listeners["api"])
    await fay.send(json.dumps({"type": "rejoin", "token": token}))
    again = await _until(fay, "seated")
    assert again["name"] == "fay"
    final = await _play(fay, enable)
    assert final["over"]
    assert final["result"]["reason"] != "disconnect"
    assert (await asyncio.wait_for(other, GAME_PATIENCE))["over"]
    await fay.close()
    await eva.close()


async def test_a_held_browser_seat_is_held_by_a_new_owner_and_leaves_when_its_grace_ends(
    nodes: Nodes, pg_url: str, tmp_path: Path, enable: Lexicon
) -> None:
    """With a 2-second rejoin grace: a browser's socket closes (its edge lives), then the
    room's rooms node is SIGKILLed. The node that takes the room over holds the seat
    anew (its token's entry says it was held), and when nobody takes it back within the
    grace, the room applies its leave rule: the other browser sees the game end."""
    config = tmp_path / "meeple.toml"
    config.write_text("rejoin_grace = 2\n")
    _n, _hub, web1, web2, _none = await _cluster(nodes, pg_url, rooms=False)
    # One rooms node with the short grace, then a second one.
    rooms1 = await nodes.start("rooms1b", "rooms", None, "--config", str(config))
    gus = await _web(web1.listeners["api"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await gus.send(json.dumps({**create, "name": "gus"}))
    table = (await _until(gus, "seated"))["table"]
    hal = await _web(web2.listeners["api"])
    await hal.send(json.dumps({"type": "sit", "table": table, "name": "hal"}))
    await _until(hal, "seated")
    rooms2 = await nodes.start("rooms2", "rooms", None, "--config", str(config))
    other = _spawn(_play(gus, enable))
    await _play(hal, enable, stop_after=1)
    await hal.close()  # held for 2 s by rooms1b...
    await asyncio.sleep(0.5)
    rooms1.kill()  # ...which dies: rooms2 holds it anew, then lets it go
    started = time.monotonic()
    final = await asyncio.wait_for(other, GAME_PATIENCE)
    assert final["over"]
    assert time.monotonic() - started > 1.5  # the lease's lapse and the grace, at least
    log = rooms2.log.read_text()
    assert "rooms2: took room" in log
    assert "hal did not come back within 2 s" in log
    await gus.close()


def _santorini_choice(legal: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random action of those the seat view lists (the engine's legal actions)."""

    def cell(c: int) -> list[int]:
        return list(santorini.coordinates(c))

    if legal["gods"]:
        return {"kind": "god", "god": rng.choice(legal["gods"])}
    if legal["starters"]:
        return {"kind": "starter", "player": rng.choice(legal["starters"])}
    if legal["place"]:
        return {"kind": "place", "cell": cell(rng.choice(legal["place"]))}
    if legal["moves"]:
        src, dst = rng.choice(legal["moves"])
        return {"kind": "move", "from": cell(src), "to": cell(dst)}
    if legal["builds"]:
        src, dst, level = rng.choice(legal["builds"])
        return {"kind": "build", "from": cell(src), "to": cell(dst), "level": level}
    return {"kind": "pass"} if legal["pass"] else {"kind": "lose"}


def _spectrangle_choice(view: dict[str, Any]) -> dict[str, Any]:
    """The seat's best placement from ``fits``, else a skip (exchanging whenever nothing
    fits could go on as long as the bag lasts)."""
    placements = [
        (points, tile, index) for tile, at in view["fits"].items() for index, points in at
    ]
    if placements:
        _points, tile, index = max(placements)
        return {"kind": "place", "tile": tile, "index": index}
    return {"kind": "skip"}


async def _browser_game(ws: ClientConnection, choose: Any) -> dict[str, Any]:
    """Play the seat's turns with ``choose(view)`` until the game is over; the last view.
    An action on a view that another one followed before it arrived is refused with the
    protocol's own ``illegal`` (as :func:`_play` allows); any other error fails."""
    while True:
        message = await _next(ws, 60)
        assert message["type"] != "error" or message["code"] == "illegal", message
        if message["type"] != "seat":
            continue
        view: dict[str, Any] = message["data"]
        if view["over"]:
            return view
        if view["turn"] == view["you"]:
            await ws.send(json.dumps({"type": "play", "action": choose(view)}))


async def test_browsers_play_santorini_and_spectrangle_on_an_edge_against_bots_on_another(
    shared: tuple[Any, Any, Any, Any],
) -> None:
    """The same browser seat plays every game through an edge: a browser on ``web1``
    opens a Santorini table and an AM27 bot on the hub's edge sits at it; another opens a
    Spectrangle table and a Spectrangle bot on the hub's edge sits at that. Each browser
    plays from its seat views (the legal actions and fits the owner sends) to the end,
    with no move refused, and ends where its bot ends."""
    hub, web1, _web2, _rooms = shared
    rng = random.Random(21)
    sam, sue = await _web(web1.listeners["api"]), await _web(web1.listeners["api"])
    for ws, game, name in ((sam, "santorini", "sam"), (sue, "spectrangle", "sue")):
        await ws.send(
            json.dumps(
                {"type": "create", "game": game, "variant": "standard", "size": 2, "name": name}
            )
        )
        assert (await _until(ws, "seated"))["name"] == name
    bots = asyncio.gather(
        play_santorini(
            "127.0.0.1", hub.listeners["santorini"], "cy", players=2, gods=False, search=False
        ),
        play_spectrangle("127.0.0.1", hub.listeners["spectrangle"], "eve"),
    )
    santorini_view, spectrangle_view = await asyncio.wait_for(
        asyncio.gather(
            _browser_game(sam, lambda view: _santorini_choice(view["legal"], rng)),
            _browser_game(sue, _spectrangle_choice),
        ),
        GAME_PATIENCE,
    )
    [am27], [tiles] = await asyncio.wait_for(bots, GAME_PATIENCE)
    assert sorted(santorini_view["players"]) == ["cy", "sam"]
    assert am27.refusals == 0
    assert am27.winner == santorini_view["players"][santorini_view["winner"]]
    assert spectrangle_view["status"] == "finished"
    assert sorted(spectrangle_view["players"]) == ["eve", "sue"]
    assert tiles.refused == 0
    assert tiles.leaderboard is not None
    assert dict(tiles.leaderboard) == dict(
        zip(spectrangle_view["players"], spectrangle_view["scores"], strict=True)
    )
    for ws in (sam, sue):
        await ws.close()


async def _watch_chat_lines(ws: ClientConnection) -> list[dict[str, Any]]:
    """The spectators' chat lines ``ws`` has had until the answer to a ping."""
    await ws.send(json.dumps({"type": "ping", "id": 34}))
    lines: list[dict[str, Any]] = []
    while True:
        message = await _next(ws)
        if message == {"type": "pong", "id": 34}:
            return lines
        if message["type"] == "watch-chat":
            lines.append(message)


async def test_the_spectators_chat_of_a_game_reaches_its_watchers_on_every_edge(
    shared: tuple[Any, Any, Any, Any],
) -> None:
    """Issue 34.5 across a cluster: pia plays Santorini on edge web2 against a server bot;
    sam watches on web1, tia on web2. sam's line reaches tia once (over
    ``<ns>.watchchat.<uid>``) and sam once (his own edge at once, never again from the
    bus); tia's answer reaches sam; pia, the player, hears neither during the game, and
    may not write to the spectators while she plays. A line with markup arrives as the
    text it was (the page sets it as text)."""
    # A store node beside the lobby: edges refuse names they cannot check against the
    # accounts (issue 32.6).
    _hub, web1, web2, _rooms = shared
    opened: list[ClientConnection] = []
    try:
        await _chat_across_edges(web1, web2, opened)
    finally:
        for ws in opened:
            await ws.close()


async def _chat_across_edges(web1: Any, web2: Any, opened: list[ClientConnection]) -> None:
    pia = await _web(web2.listeners["api"])
    opened.append(pia)
    create = {"type": "create", "game": "santorini", "variant": "standard", "size": 2}
    await pia.send(json.dumps({**create, "name": "pia"}))
    table = (await _until(pia, "seated"))["table"]
    await pia.send(json.dumps({"type": "bot", "table": table, "level": "easy"}))
    uid = (await _until(pia, "seat"))["uid"]
    watchers = []
    for edge in (web1, web2):
        ws = await _web(edge.listeners["api"])
        opened.append(ws)
        await ws.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
        await _until(ws, "game")
        watchers.append(ws)
    sam, tia = watchers

    def say(name: str, text: str) -> str:
        return json.dumps({"type": "watch-chat", "uid": uid, "name": name, "text": text})

    hello = "<b>hi</b> & all"

    async def heard(ws: ClientConnection, want: list[tuple[str, str]]) -> None:
        got: list[tuple[str, str]] = []

        async def all_in() -> bool:
            got.extend((m["from"], m["text"]) for m in await _watch_chat_lines(ws))
            return len(got) >= len(want)

        await eventually(all_in, "the spectators' chat across the edges")
        assert got == want

    await sam.send(say("sam", hello))
    await heard(tia, [("sam", hello)])
    await heard(sam, [("sam", hello)])
    await tia.send(say("tia", "bonjour"))
    await heard(sam, [("tia", "bonjour")])
    await heard(tia, [("tia", "bonjour")])
    assert await _watch_chat_lines(sam) == []  # each line once
    assert await _watch_chat_lines(pia) == []  # the player hears none of it
    await pia.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
    await _until(pia, "game")
    await pia.send(say("pia2", "psst"))
    refused = await _next(pia)
    while refused["type"] != "error":
        refused = await _next(pia)
    assert "players do not write" in refused["message"]
    assert await _watch_chat_lines(sam) == []

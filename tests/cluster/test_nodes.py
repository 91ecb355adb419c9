"""``meeple node`` processes on loopback, real NATS and PostgreSQL: Twente bots connected
to two edges play a game whose room runs on a rooms node; SIGKILL that node mid-game,
another takes the room over from its log, and the game finishes on the same connections
(issue 21, "Ownership and failover"). AM27 Santorini and Spectrangle bots on the two
edges play a game each whose rooms are on the killed node too. Clarkson bots on the two
edges play at one table meanwhile, and names are the cluster's: one taken on an edge is
refused on the others, in either protocol, until its connection ends or its edge dies.
Spectrangle chat outside a game reaches the players of every edge."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from tests.cluster.conftest import ModuleNodes, launch
from tests.natsd import NatsEnv
from tests.patience import GAME_PATIENCE, PATIENCE, eventually

from meeple.bus.subjects import Namespace
from meeple.clients.clarkson import ClarksonClient, NameRefused, play_clarkson
from meeple.clients.santorini import SantoriniClient, play_santorini
from meeple.clients.scrabble_bot import _move
from meeple.clients.spectrangle import SpectrangleClient, SpectrangleClientError, play_spectrangle
from meeple.clients.twente import TwenteClient, TwenteClientError
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon
from meeple.node import wire
from meeple.node.launch import NodeProcess
from meeple.node.node import Node, NodeConfig
from meeple.protocols.clarkson.messages import (
    Nok,
    Ok,
    Starting,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
)
from meeple.protocols.santorini.messages import Info, ServerState
from meeple.protocols.spectrangle.messages import ChatFrom
from meeple.protocols.twente.messages import Error, GameOver, GameOverReason, InformQueue
from meeple.server.store.database import ActionLog, open_store

pytestmark = pytest.mark.slow


class Nodes:
    """The test's node processes, each stopped (or killed) at the end."""

    def __init__(self, env: NatsEnv, ns: Namespace, log_dir: Path) -> None:
        self.env, self.ns, self.log_dir = env, ns, log_dir
        self.started: list[NodeProcess] = []

    async def start(
        self, name: str, roles: str, database: str | None = None, *extra: str
    ) -> NodeProcess:
        node = await asyncio.to_thread(
            launch, self.env, self.ns, self.log_dir, name, roles, database, extra
        )
        self.started.append(node)
        return node

    def stop_all(self) -> None:
        for node in self.started:
            node.stop(timeout=10)

    def logs(self) -> str:
        return "\n".join(
            f"== {n.name}\n{n.log.read_text(errors='replace')[-3000:]}" for n in self.started
        )


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = Nodes(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


class Bot:
    """A Twente bot that waits ``pace`` seconds before each move and keeps every message
    it was sent; with a ``gate``, its moves after the first ``free`` wait until the gate
    opens (so that a kill lands mid-game however fast or slow the machine is)."""

    def __init__(
        self,
        name: str,
        port: int,
        pace: float,
        *,
        gate: asyncio.Event | None = None,
        free: int = 0,
    ) -> None:
        self.name, self.port, self.pace = name, port, pace
        self.gate, self.free = gate, free
        self.messages: list[object] = []
        self.over: GameOver | None = None

    async def play(self) -> GameOver:
        lexicon = load_lexicon(DEFAULT_LEXICON)
        client = await TwenteClient.connect("127.0.0.1", self.port, self.name)
        try:
            await client.request_game(2)
            moves = 0
            async for message in client:
                self.messages.append(message)
                if isinstance(message, GameOver):
                    self.over = message
                    return message
                if client.move_due:
                    await asyncio.sleep(self.pace)
                    if self.gate is not None and moves >= self.free:
                        await self.gate.wait()
                    if client.move_due:
                        moves += 1
                        await _move(client, lexicon, client.session.refusals)
        finally:
            await client.close()
        raise AssertionError(f"{self.name}: the connection ended before the game did")


class Spectator:
    """A browser watching a room on an edge's web port (web protocol, deltas on): every
    frame's seq, and the game it rebuilt; frames must only move forward."""

    def __init__(self, port: int, uid: str) -> None:
        self.port, self.uid = port, uid
        self.seqs: list[int] = []
        # The move log's decided lines after each frame (a play in its challenge window
        # is not one yet: docs/protocols/web.md, "Watching").
        self.moves: list[int] = []
        self.data: Any = None
        self.errors: list[dict[str, Any]] = []

    async def watch(self, until_over: float) -> None:
        import websockets

        from meeple.protocols.web import PROTOCOL, apply_patch

        async with websockets.connect(f"ws://127.0.0.1:{self.port}/ws") as ws:
            await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
            await ws.send(json.dumps({"type": "sit", "table": "t1", "name": "eve"}))  # no play
            subscribe = {"type": "subscribe", "topic": "game", "uid": self.uid, "delta": True}
            await ws.send(json.dumps(subscribe))
            async with asyncio.timeout(until_over):
                async for text in ws:
                    message = json.loads(text)
                    if message["type"] == "error":
                        self.errors.append(message)
                    if message["type"] != "game":
                        continue
                    if "patch" in message:
                        assert message["base"] == self.seqs[-1]
                        self.data = apply_patch(self.data, message["patch"])
                    else:
                        self.data = message["data"]
                    self.seqs.append(message["seq"])
                    moves = self.data["view"]["moves"]
                    self.moves.append(sum(not m.get("pending") for m in moves))
                    if self.data["finished"]:
                        return


async def _api_cluster(
    port: int, room: str | None = None, *, settled: bool = True
) -> dict[str, Any]:
    """GET /api/cluster; ``settled``: once it lists the four nodes and ``room`` (or any
    room), by their heartbeats."""

    def get() -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/cluster", timeout=5) as r:
            body: dict[str, Any] = json.load(r)
            return body

    if not settled:
        return await asyncio.to_thread(get)
    bodies: list[dict[str, Any]] = []

    async def heard() -> bool:  # every node's heartbeat and the room's owner
        bodies.append(await asyncio.to_thread(get))
        uids = [r["uid"] for r in bodies[-1]["rooms"]]
        return len(bodies[-1]["nodes"]) == 4 and bool(uids) and (room is None or room in uids)

    await eventually(heard, "every node and the room listed", every=0.1)
    return bodies[-1]


async def _room_uid(
    log: JetStreamLog, game: str = "scrabble", timeout: float = 20.0, besides: str = ""
) -> str:
    """The uid of an open log of ``game`` (not ``besides``), once its genesis is in."""
    until = time.monotonic() + timeout
    seen: set[str] = {besides}
    while time.monotonic() < until:
        for uid in await log.open_logs():
            if uid in seen:
                continue
            found = await log.action_log(uid)
            if found is not None:
                seen.add(uid)
                if found.game == game:
                    return uid
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {game} room was opened")


def _stored_once(records: Any, uid: str, log: ActionLog) -> Any:
    """The one record of room ``uid``, with the log's actions (no gap, no duplicate)."""
    assert log.end_reason is not None
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    stored = records.game_by_uid(uid)
    assert stored is not None
    assert log.game_id == stored.id
    assert stored.data is not None
    assert stored.data["actions"] == [e.entry["action"] for e in log.entries]
    assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [stored.id]
    return stored


async def _entries(log: JetStreamLog, uid: str, at_least: int, timeout: float = 30.0) -> ActionLog:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        found = await log.action_log(uid)
        if found is not None and len(found.entries) >= at_least:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"room {uid}: fewer than {at_least} entries in {timeout} s")


async def _refused_everywhere(name: str, *edges: NodeProcess) -> None:
    """``name`` (in another casing) is refused on each of ``edges``, by Twente (E001) and
    by Clarkson (NOK to USERSET)."""
    for edge in edges:
        with pytest.raises(TwenteClientError, match="E001"):
            await TwenteClient.connect("127.0.0.1", edge.listeners["twente"], name.upper())
        with pytest.raises(NameRefused):
            await ClarksonClient.connect("127.0.0.1", edge.listeners["clarkson"], name.title())


async def _refused_by_the_games(name: str, edge: NodeProcess) -> None:
    """``name`` (in another casing) is refused on ``edge`` by AM27 (INFO NICKNAME to
    REGISTER, spec §2.2) and by Spectrangle (``invalidName`` to ``connect``)."""
    client = await SantoriniClient.connect("127.0.0.1", edge.listeners["santorini"])
    try:
        assert isinstance(await asyncio.wait_for(client.receive(), 10), ServerState)
        await client.register(name.upper(), 2, False)
        reply = await asyncio.wait_for(client.receive(), 10)
        assert isinstance(reply, Info)
        assert reply.information == "NICKNAME"
    finally:
        await client.close()
    with pytest.raises(SpectrangleClientError, match="invalidName"):
        await SpectrangleClient.connect("127.0.0.1", edge.listeners["spectrangle"], name.title())


async def _first(client: ClarksonClient, kind: type) -> object:
    """The first message of ``kind`` the Clarkson server sends ``client``."""
    async for message in client:
        if isinstance(message, kind):
            return message
    raise AssertionError(f"the connection ended before {kind.__name__}")


async def _welcomed(port: int, name: str, timeout: float = 10.0) -> None:
    """A Twente client gets ``name`` on ``port`` within ``timeout`` seconds (it is being
    freed: a release crosses the bus, a dead edge's claim lapses)."""
    until = time.monotonic() + timeout
    while True:
        try:
            client = await TwenteClient.connect("127.0.0.1", port, name)
        except TwenteClientError:
            if time.monotonic() > until:
                raise
            await asyncio.sleep(0.1)
            continue
        await client.close()
        return


async def test_a_killed_rooms_node_s_game_goes_on_on_another_with_the_same_connections(
    nodes: Nodes, node: Client, nats_ns: Namespace, pg_url: str
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store", pg_url, "--api-port", "0")
    edge2 = await nodes.start("edge2", "edge", None, "--api-port", "0")
    rooms = {"rooms1": await nodes.start("rooms1", "rooms")}
    records = open_store(pg_url)
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, records)  # the test's eyes on the log
    leases = Leases(JetStreamBackplane(node), nats_ns)
    # Three moves each, then none until the kill: the game is on when it lands.
    killing = asyncio.Event()
    ann = Bot("ann", hub.listeners["twente"], pace=0.12, gate=killing, free=3)
    bob = Bot("bob", edge2.listeners["twente"], pace=0.12, gate=killing, free=3)
    games = [asyncio.ensure_future(b.play()) for b in (ann, bob)]
    clarkson: list[asyncio.Future[Any]] = []
    # An AM27 Santorini game with gods and a Spectrangle game, each between the two
    # edges, in the same cluster; both slow until the kill, so that it lands in them.
    pace = {"before": 0.3}
    tables = asyncio.Queue[Any]()
    watching_tables = await node.subscribe(nats_ns.lobby_events, cb=tables.put)

    def am27(port: int, name: str, players: int | None) -> asyncio.Future[Any]:
        return asyncio.ensure_future(
            play_santorini(
                "127.0.0.1",
                port,
                name,
                players=players,
                gods=True,
                search=False,
                pace=lambda: pace["before"],
            )
        )

    cy = am27(hub.listeners["santorini"], "cy", 2)
    while True:  # the leader told the edges of cy's table
        news = wire.loads((await asyncio.wait_for(tables.get(), PATIENCE)).data)
        table = getattr(news.event, "table", None)
        if table is not None and table.game == "santorini" and table.seats:
            break
    await watching_tables.unsubscribe()
    # REGISTER (B) on the other edge: it joins the game that waits (2 players, gods),
    # which that edge knows from the leader's table events.
    santorinis = [cy, am27(edge2.listeners["santorini"], "dee", None)]
    spectrangle = [
        asyncio.ensure_future(
            play_spectrangle(
                "127.0.0.1", e.listeners["spectrangle"], n, pace=lambda: pace["before"]
            )
        )
        for e, n in ((hub, "eve"), (edge2, "fay"))
    ]
    try:
        uid = await _room_uid(reader)
        santorini = await _room_uid(reader, "santorini")
        tiles = await _room_uid(reader, "spectrangle")
        # Spectators on both edges, each edge hearing the room once over the bus.
        watchers = [Spectator(e.listeners["api"], uid) for e in (hub, edge2, edge2)]
        watching = [asyncio.ensure_future(w.watch(90)) for w in watchers]
        games += watching
        # AM27 and Spectrangle names are the cluster's, both ways (cy plays AM27).
        await _refused_by_the_games("ann", edge2)
        with pytest.raises(TwenteClientError, match="E001"):
            await TwenteClient.connect("127.0.0.1", edge2.listeners["twente"], "CY")
        # Two Clarkson bots, one on each edge, at one READY table of the leader's.
        lexicon = load_lexicon(DEFAULT_LEXICON)
        clarkson = [
            asyncio.ensure_future(
                play_clarkson("127.0.0.1", e.listeners["clarkson"], name, lexicon, players=2)
            )
            for e, name in ((hub, "cara"), (edge2, "dan"))
        ]
        await _room_uid(reader, "scrabble", besides=uid)  # the Clarkson table's room
        # ann (Twente, on hub) and bob (edge2) are the cluster's names. Only now that the
        # bots' table is a room: a Clarkson client sits at a table at its HELLO, and the
        # bots would have counted it before its leaving reached the leader.
        await _refused_everywhere("ann", edge2)
        await _refused_everywhere("bob", hub)
        # The rooms opened while rooms1 was the only rooms node: it owns them all, and
        # the second one, started now, takes them over when rooms1 is killed (a room
        # being opened as its node dies would be lost: its table is freed, no log).
        rooms["rooms2"] = await nodes.start("rooms2", "rooms")
        before = await _entries(reader, uid, 5)
        kept = await _entries(reader, santorini, 3)
        dealt = await _entries(reader, tiles, 2)
        lease = await leases.holder(room_key(uid))
        assert lease is not None
        assert lease.owner == "rooms1"
        for other in (santorini, tiles):
            held = await leases.holder(room_key(other))
            assert held is not None
            assert held.owner == "rooms1"
        # Any edge tells who runs what (GET /api/cluster, from the nodes' heartbeats).
        seen = await _api_cluster(hub.listeners["api"], uid)  # the Clarkson room may be first
        assert {n["name"]: n["roles"] for n in seen["nodes"]} == {
            "hub": ["edge", "lobby", "store"],
            "edge2": ["edge"],
            "rooms1": ["rooms"],
            "rooms2": ["rooms"],
        }
        assert seen["lobby_leader"] == "hub"
        assert {"uid": uid, "game": "scrabble", "owner": lease.owner} in seen["rooms"]
        killed = rooms[lease.owner]
        killed.kill()
        pace["before"] = 0.0
        killing.set()
        overs = await asyncio.wait_for(asyncio.gather(*games), GAME_PATIENCE)
        overs = overs[:2]
        played = await asyncio.wait_for(asyncio.gather(*clarkson), GAME_PATIENCE)
        am27_results = await asyncio.wait_for(asyncio.gather(*santorinis), GAME_PATIENCE)
        spectrangle_results = await asyncio.wait_for(asyncio.gather(*spectrangle), GAME_PATIENCE)
    except BaseException:
        for g in [*games, *clarkson, *santorinis, *spectrangle]:
            g.cancel()
        print(nodes.logs())
        raise
    # Both players saw the same end, on the connections they started with.
    assert overs[0].scores == overs[1].scores
    # Every spectator saw the game through the kill, only forward, to the same end.
    for w in watchers:
        assert w.seqs == sorted(set(w.seqs)), "frames only move forward"
        assert w.moves == sorted(w.moves)
        assert w.data["finished"]
        assert dict(zip(w.data["players"], w.data["view"]["scores"], strict=True)) == dict(
            overs[0].scores
        )
        # Its sit as eve, a player of this game, at a table t1 no longer open, is refused:
        # watchers only watch (name-taken when this edge already knows eve's claim).
        assert [e["code"] for e in w.errors] in (["refused"], ["name-taken"])
    # A room no node runs: the protocol's not-found, and the connection goes on.
    import websockets

    from meeple.protocols.web import PROTOCOL

    async with websockets.connect(f"ws://127.0.0.1:{edge2.listeners['api']}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
        await ws.send(json.dumps({"type": "subscribe", "topic": "game", "uid": "0123456789ab"}))
        await ws.send(json.dumps({"type": "ping", "id": 7}))
        replies = [json.loads(await asyncio.wait_for(ws.recv(), PATIENCE)) for _ in range(3)]
    assert [r["type"] for r in replies] == ["welcome", "error", "pong"]
    assert replies[1]["code"] == "not-found"
    assert not any(isinstance(m, Error) for m in ann.messages + bob.messages)
    # The Clarkson game was played to its end on both edges, seen alike by both.
    assert [len(p) for p in played] == [1, 1]
    cara, dan = played[0][0], played[1][0]
    assert sorted(cara.players) == ["cara", "dan"]
    assert cara.scores == dan.scores
    # A name is free again once its connection ended, on any edge.
    await _welcomed(edge2.listeners["twente"], "ann")
    await _welcomed(hub.listeners["twente"], "dan")
    # Another node owns the room now; the log says so, once, after the kill.
    after = await reader.action_log(uid)
    assert after is not None
    santorini_log = await reader.action_log(santorini)
    assert santorini_log is not None
    tiles_log = await reader.action_log(tiles)
    assert tiles_log is not None
    assert after.end_reason is not None
    survivor = next(n for n in rooms if n != killed.name)
    assert len(after.entries) > len(before.entries)
    # No gap and no duplicate: the entries are 1, 2, … n, and the kept prefix unchanged.
    assert [e.seq for e in after.entries] == list(range(1, len(after.entries) + 1))
    assert after.entries[: len(before.entries)] == before.entries
    # Exactly one record, with the log's actions, and ratings that count it once.
    stored = records.game_by_uid(uid)
    assert stored is not None
    assert after.game_id == stored.id
    assert stored.data is not None
    assert stored.data["actions"] == [e.entry["action"] for e in after.entries]
    assert sorted(stored.players) == ["ann", "bob"]
    with contextlib.closing(records):
        assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [stored.id]
        board = {r.player: r.games for r in records.leaderboard("scrabble")}
        assert board == {"ann": 1, "bob": 1, "cara": 1, "dan": 1}
        (clarkson_game,) = [g for g in records.games() if sorted(g.players) == ["cara", "dan"]]
        assert clarkson_game.data is not None
        assert clarkson_game.data["variant"] == "clarkson"
    lines = rooms[survivor].log.read_text().splitlines()
    took = [line for line in lines if "took room" in line]

    def taken_once(room: str) -> bool:
        """The survivor took ``room`` once, or once more for each time it lost the lease
        under it and took it back (docs/cluster.md, "Failures": NATS has been seen to
        leave a lapse marker on a lease a moment after its new owner took it)."""
        again = sum(f"lease of room {room} lost" in line for line in lines)
        return sum(room in line for line in took) == 1 + again

    assert taken_once(uid), nodes.logs()
    # The Santorini game went on through the kill: the edges kept answering AM27's
    # heartbeat meanwhile; both players saw the same winner, and it is stored once.
    assert taken_once(santorini), nodes.logs()
    assert [r.winner for r in am27_results[0]] == [r.winner for r in am27_results[1]]
    assert am27_results[0][0].winner in ("cy", "dee")
    assert santorini_log.entries[: len(kept.entries)] == kept.entries
    assert len(santorini_log.entries) > len(kept.entries)
    # So did the Spectrangle game: taken over once, seen alike by both, stored once.
    assert taken_once(tiles), nodes.logs()
    assert tiles_log.entries[: len(dealt.entries)] == dealt.entries
    assert spectrangle_results[0] == spectrangle_results[1]
    assert spectrangle_results[0][0].leaderboard is not None
    with contextlib.closing(open_store(pg_url)) as again:
        won = _stored_once(again, santorini, santorini_log)
        assert won.result["winner"] == am27_results[0][0].winner
        assert sorted(won.players) == ["cy", "dee"]
        assert won.variant == "gods"
        listed = _stored_once(again, tiles, tiles_log)
        assert sorted(listed.players) == ["eve", "fay"]
        assert listed.end_reason == "finished"

    async def left() -> bool:  # the killed node leaves the list once its heartbeat is silent
        seen = await _api_cluster(hub.listeners["api"], settled=False)
        return killed.name not in {n["name"] for n in seen["nodes"]}

    await eventually(left, f"{killed.name} leaving the list", every=0.1)
    seen = await _api_cluster(hub.listeners["api"], settled=False)
    assert {n["name"] for n in seen["nodes"]} == {"hub", "edge2", survivor}


async def test_a_killed_edge_s_players_leave_their_games_by_the_protocol_s_rule(
    nodes: Nodes, node: Client, nats_ns: Namespace, pg_url: str
) -> None:
    """Twente's rule ends the game; the dead edge's names come free after their TTL, and
    its seat at a Clarkson table leaves it, so the table's next player can start."""
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url)
    edge2 = await nodes.start("edge2", "edge", None, "--name-ttl", "1")
    records = open_store(pg_url)
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    # cara waits at edge2's Clarkson table (the leader's); her name is the cluster's.
    cara = await ClarksonClient.connect("127.0.0.1", edge2.listeners["clarkson"], "cara")
    await _refused_everywhere("cara", hub)
    ann = Bot("ann", hub.listeners["twente"], pace=0.15)
    bob = Bot("bob", edge2.listeners["twente"], pace=0.15)
    games = [asyncio.ensure_future(b.play()) for b in (ann, bob)]
    try:
        uid = await _room_uid(reader)
        await _entries(reader, uid, 3)
        edge2.kill()
        # Twente (ERRATA): a player's disconnection ends the game, reason DISCONNECT.
        over = await asyncio.wait_for(games[0], GAME_PATIENCE)
        # The dead edge's names: free once their TTL passed without a renewal.
        await _welcomed(hub.listeners["twente"], "bob")
        await _welcomed(hub.listeners["twente"], "cara")
        # cara's seat left the Clarkson table: a lone player there starts at once (§3.8).
        eve = await ClarksonClient.connect("127.0.0.1", hub.listeners["clarkson"], "eve")
        try:
            await eve.ready()
            started = await asyncio.wait_for(_first(eve, Starting), 30)
        finally:
            await eve.quit()
            await eve.close()
    except BaseException:
        print(nodes.logs())
        raise
    finally:
        games[1].cancel()
        with contextlib.suppress(BaseException):
            await games[1]
        await cara.close()
    assert over.reason is GameOverReason.DISCONNECT
    assert dict(over.scores)["bob"] == 0
    assert isinstance(started, Starting)
    with contextlib.closing(records):
        stored = records.game_by_uid(uid)
        assert stored is not None
        assert stored.end_reason == "disconnect"


async def _chat_lines(
    client: SpectrangleClient, n: int, timeout: float = PATIENCE
) -> list[ChatFrom]:
    """The next ``n`` chat lines ``client`` hears."""
    lines: list[ChatFrom] = []
    async with asyncio.timeout(timeout):
        while len(lines) < n:
            message = await client.receive()
            if isinstance(message, ChatFrom):
                lines.append(message)
    return lines


async def _hub_and_edge2(shared: ModuleNodes) -> tuple[NodeProcess, NodeProcess]:
    """The module's edge, lobby and store node and a second edge, which the tests that
    kill, stop or hold no node share (no rooms node: a test brings its own)."""
    hub = await shared.node("hub", "edge,lobby,store", store=True)
    return hub, await shared.node("edge2", "edge")


async def test_spectrangle_chat_outside_a_game_reaches_every_edge_s_players_once_in_order(
    module_nodes: ModuleNodes,
) -> None:
    """ann (on hub) and bob (on edge2), at no game with the chat extension, hear every
    chat line outside a game, theirs included, each once and in each sender's order
    (spec 1.4, "Chat extension": ``chat <name> <message>``); cy, without the extension,
    hears none. (A store node answers whether a name is an account's.)"""
    hub, edge2 = await _hub_and_edge2(module_nodes)
    ann = await SpectrangleClient.connect(
        "127.0.0.1", hub.listeners["spectrangle"], "ann", chat=True
    )
    bob = await SpectrangleClient.connect(
        "127.0.0.1", edge2.listeners["spectrangle"], "bob", chat=True
    )
    cy = await SpectrangleClient.connect("127.0.0.1", edge2.listeners["spectrangle"], "cy")
    try:
        said = [f"hello {i}" for i in range(5)]
        for text in said[:3]:
            await ann.chat(text)
        await bob.chat("hi ann")
        for text in said[3:]:
            await ann.chat(text)
        heard = {c.name: await _chat_lines(c, 6) for c in (ann, bob)}
        for lines in heard.values():
            assert [m.text for m in lines if m.name == "ann"] == said
            assert [m.text for m in lines if m.name == "bob"] == ["hi ann"]
        for client in (ann, bob, cy):  # nothing more, to anyone
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.receive(), 0.5)
    except BaseException:
        print(module_nodes.logs())
        raise
    finally:
        for client in (ann, bob, cy):
            await client.close()


async def test_a_clarkson_client_renames_right_after_winner_on_a_cluster(
    module_nodes: ModuleNodes,
) -> None:
    """cara plays alone (RFC §3.8: one player may) and passes twice: the game ends
    (SCORE, WINNER §3.17). Her USERSET sent the moment WINNER arrives is answered as by
    ``meeple serve``: USERCHANGE (§3.5–§3.6), not NOK (names change only during a
    game), though the rooms node has not said the room is over yet (its ``RoomOver``
    is held here until then, as on a loaded node); the old name is free on the other
    edge, the new one taken there; and READY seats her again for a second game. (The
    module's hub and edge2; the only rooms node is this one, in the test's process.)"""
    hub, edge2 = await _hub_and_edge2(module_nodes)
    nats_env = module_nodes.env
    rooms = Node(
        NodeConfig(
            name="rooms1",
            roles=frozenset({"rooms"}),
            nats_url=nats_env.url,
            nats_user=nats_env.NODE_USER,
            nats_password=nats_env.node_password,
            namespace=module_nodes.ns.root,
        )
    )
    await rooms.start()
    told_over = asyncio.Event()
    closing = rooms.rooms._close

    async def close_late(owned: Any) -> None:  # the room's end told only once released
        await told_over.wait()
        await closing(owned)

    rooms.rooms._close = close_late
    cara = await ClarksonClient.connect("127.0.0.1", hub.listeners["clarkson"], "cara")
    try:
        for game, (old, new) in enumerate((("cara", "cora"), ("cora", "cleo"))):
            await cara.ready()
            async with asyncio.timeout(GAME_PATIENCE):
                async for message in cara:
                    if isinstance(message, Turn) and cara.my_turn:
                        await cara.pass_turn()
                    elif isinstance(message, Winner):
                        break
            await cara._send(UserSet(new))  # at once: the room's end is on its way
            reply = await asyncio.wait_for(_first_of(cara, UserChange, Nok), PATIENCE)
            assert reply == UserChange(old, new), (game, reply)
            told_over.set()
            await _welcomed(edge2.listeners["twente"], old)
            with pytest.raises(TwenteClientError, match="E001"):
                await TwenteClient.connect("127.0.0.1", edge2.listeners["twente"], new)
            told_over.clear()
    except BaseException:
        print(module_nodes.logs())
        raise
    finally:
        told_over.set()
        await cara.close()
        await rooms.stop()


async def _first_of(client: ClarksonClient, *kinds: type) -> object:
    """The first message of one of ``kinds`` the Clarkson server sends ``client``."""
    async for message in client:
        if isinstance(message, kinds):
            return message
    raise AssertionError("the connection ended first")


async def test_a_late_edge_s_seats_freed_by_the_leader_are_seated_again(
    nodes: Nodes, pg_url: str
) -> None:
    """edge2 is paused (SIGSTOP) longer than the leader waits for an edge's heartbeat
    while ann (Twente) waits at a 2-player table and cara (Clarkson) said READY at dan's
    table: the leader frees their seats (``Dismissed`` to each). The edge was only late
    (SIGCONT): it seats them again as they were, so bob's request matches ann, and dan's
    READY starts the game with cara, not without her."""
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url)
    edge2 = await nodes.start("edge2", "edge", None, "--name-ttl", "60")
    ann = Bot("ann", edge2.listeners["twente"], pace=0.0)
    bob = Bot("bob", hub.listeners["twente"], pace=0.0)
    twente = [asyncio.ensure_future(ann.play())]
    dan = await ClarksonClient.connect("127.0.0.1", hub.listeners["clarkson"], "dan")
    cara = await ClarksonClient.connect("127.0.0.1", edge2.listeners["clarkson"], "cara")
    paused = False
    try:
        await asyncio.wait_for(_first(dan, UserJoin), 10)  # cara sits at dan's table
        await cara.ready()
        await asyncio.wait_for(_first(cara, Ok), 10)
        until = time.monotonic() + 10
        while not any(isinstance(m, InformQueue) for m in ann.messages):
            assert time.monotonic() < until, "ann never queued"
            await asyncio.sleep(0.05)
        os.kill(edge2.pid, signal.SIGSTOP)
        paused = True

        def freed() -> int:
            return hub.log.read_text().count("edge edge2 is silent; seat freed")

        until = time.monotonic() + 20
        while freed() < 2:
            assert time.monotonic() < until, nodes.logs()
            await asyncio.sleep(0.1)
        os.kill(edge2.pid, signal.SIGCONT)
        paused = False
        twente.append(asyncio.ensure_future(bob.play()))
        overs = await asyncio.wait_for(asyncio.gather(*twente), GAME_PATIENCE)
        await dan.ready()
        started = [await asyncio.wait_for(_first(c, Starting), PATIENCE) for c in (dan, cara)]
        await asyncio.wait_for(_first(cara, Turn), PATIENCE)  # after the opening SCOREs
    except BaseException:
        for game in twente:
            game.cancel()
        print(nodes.logs())
        raise
    finally:
        if paused:
            os.kill(edge2.pid, signal.SIGCONT)
        for client in (dan, cara):
            await client.close()
    assert overs[0].scores == overs[1].scores
    assert sorted(name for name, _ in overs[0].scores) == ["ann", "bob"]
    assert len(started) == 2
    assert sorted(cara.players) == ["cara", "dan"]
    assert edge2.log.read_text().count("seated again") == 2, nodes.logs()


async def test_a_game_that_ends_while_no_store_node_answers_is_stored_once_one_comes(
    nodes: Nodes, node: Client, nats_ns: Namespace, pg_url: str
) -> None:
    """A Spectrangle game ends on a cluster with no store node: its end is logged and its
    room waits (no word to the players before the record is stored, as in meeple
    serve), asking again; a store node started then stores it once, and the players
    hear the end. Before, the room stopped at the first refusal and they heard nothing.
    (The players' names are taken while a store node answers, which the edge asks
    whether a name is an account's: it refuses every name while none answers.)"""
    hub = await nodes.start("hub", "edge,lobby")
    await nodes.start("rooms1", "rooms")
    store0 = await nodes.start("store0", "store", pg_url)
    records = open_store(pg_url)
    reader = JetStreamLog(JetStreamBackplane(node), nats_ns, records)
    port = hub.listeners["spectrangle"]
    gone = asyncio.Event()  # the bots play slowly until the store node is gone

    def pace() -> float:
        return 0.0 if gone.is_set() else 0.2

    bots = asyncio.gather(
        *(play_spectrangle("127.0.0.1", port, n, pace=pace) for n in ("eve", "fay"))
    )
    try:
        uid = await _room_uid(reader, "spectrangle")
        store0.kill()
        gone.set()
        until = time.monotonic() + 60
        while (log := await reader.action_log(uid)) is None or log.end_reason is None:
            assert time.monotonic() < until, "the game did not end"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # asked of the store and refused (no responder), again
        assert not bots.done()
        await nodes.start("store1", "store", pg_url)
        [eve], [fay] = await asyncio.wait_for(bots, GAME_PATIENCE)
    finally:
        bots.cancel()
    assert eve.leaderboard is not None
    assert eve.leaderboard == fay.leaderboard
    log = await reader.action_log(uid)
    assert log is not None
    stored = _stored_once(records, uid, log)
    assert dict(eve.leaderboard) == stored.result["scores"]

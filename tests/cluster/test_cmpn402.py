"""The CMPN402 referee on a cluster (issue 21): ``meeple node`` processes on loopback,
real NATS and PostgreSQL. Two of meeple's own agents (``meeple.clients.cmpn402``), on
two edges, play a game whose referee room runs on a rooms node; SIGKILL that node
mid-game and the game finishes on the same connections, each logged move once and one
record stored. An agent whose edge is SIGKILLed, or whose connection is cut, comes back
through another edge (behind one address, as behind a load balancer) and the game
resumes from its log."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client
from tests.cluster.test_nodes import Nodes, Spectator, _entries, _room_uid
from tests.natsd import NatsEnv

from meeple.bus.subjects import Namespace
from meeple.clients.cmpn402 import BuiltinAgent, GameResult, View, play
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.protocols.cmpn402.messages import EndReason, PlayNotice
from meeple.server.store.database import ActionLog, open_store

pytestmark = pytest.mark.slow


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = Nodes(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


class Paced:
    """meeple's built-in agent, waiting ``pace["before"]`` seconds before each move (so
    that a kill lands mid-game); counts its moves, and keeps what each START said (the
    client makes a new view for each) as it is at the agent's next move: its order and
    times."""

    def __init__(self, lexicon: Lexicon, pace: dict[str, float]) -> None:
        self.inner = BuiltinAgent(lexicon)
        self.pace = pace
        self.moves = 0
        self.starts: list[tuple[int, int, int]] = []
        self._view: View | None = None

    async def choose_move(self, view: View) -> Any:
        if view is not self._view:
            self._view = view
            self.starts.append((view.order, view.player_time, view.total_time))
        await asyncio.sleep(self.pace["before"])
        self.moves += 1
        return await asyncio.to_thread(self.inner.choose_move, view)

    async def want_challenge(self, view: View, notice: PlayNotice) -> bool:
        return await asyncio.to_thread(self.inner.want_challenge, view, notice)


def paced_agents(
    ports: tuple[int, int], pace: dict[str, float]
) -> tuple[Paced, Paced, list[asyncio.Future[Any]]]:
    """``ann`` and ``bob``, meeple's agents paced by ``pace``, playing through the edges'
    CMPN402 ports ``ports`` (ann's, bob's); the two agents and their running games."""
    lexicon = load_lexicon(DEFAULT_LEXICON)
    ann, bob = Paced(lexicon, pace), Paced(lexicon, pace)
    agents = [
        asyncio.ensure_future(play(f"ws://127.0.0.1:{port}", name, agent))
        for port, name, agent in zip(ports, ("ann", "bob"), (ann, bob), strict=True)
    ]
    return ann, bob, agents


class Relay:
    """One TCP address in front of the edges (a load balancer's): each connection goes
    to the edge port ``target`` names when it is made."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        self.writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def drop(self) -> None:
        """Cut every connection made so far (both ways)."""
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def _same_game(a: list[GameResult], b: list[GameResult], caplog: pytest.LogCaptureFixture) -> None:
    """Both agents saw one finished game, each from its side, and every message the
    referee sent them was one their state allowed (END 2 before a resumed START)."""
    refused = [r.getMessage() for r in caplog.records if r.name == "meeple.clients.cmpn402"]
    assert not [m for m in refused if " in " in m], refused
    assert len(a) == len(b) == 1
    assert a[0].reason is b[0].reason is EndReason.ALL_TILES_USED
    assert (a[0].score, a[0].opponent_score) == (b[0].opponent_score, b[0].score)


def _logged_once(log: ActionLog, before: ActionLog) -> None:
    """No gap, no duplicate, the prefix kept (a move applied twice would not replay:
    the stored record is the log's actions, folded by the engine at each resume)."""
    assert log.end_reason is not None
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    assert log.entries[: len(before.entries)] == before.entries


def _stored_once(records: Any, uid: str, log: ActionLog) -> Any:
    """The one record of room ``uid``, with the log's actions (its entries without an
    action are the referee's times at a disconnect)."""
    stored = records.game_by_uid(uid)
    assert stored is not None
    assert log.game_id == stored.id
    assert stored.variant == "cmpn402"
    assert stored.data is not None
    logged = [e.entry["action"] for e in log.entries if e.entry["action"] is not None]
    assert stored.data["actions"] == logged
    assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [stored.id]
    return stored


async def _owner(node: Client, ns: Namespace, uid: str, within: float = 30.0) -> str:
    """The node that holds room ``uid``'s lease (waiting for one: between a lapse and a
    takeover nobody holds it)."""
    leases = Leases(JetStreamBackplane(node), ns)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while (lease := await leases.holder(room_key(uid))) is None:
        assert loop.time() < deadline, f"nobody took room {uid}"
        await asyncio.sleep(0.1)
    return lease.owner


async def test_agents_on_two_edges_finish_a_game_whose_referee_s_node_is_killed(
    nodes: Nodes,
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
    pg_reader: JetStreamLog,
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store", pg_url)
    edge2 = await nodes.start("edge2", "edge", None, "--api-port", "0")
    rooms = {"rooms1": await nodes.start("rooms1", "rooms")}
    reader = pg_reader
    pace = {"before": 0.15}
    ann, bob, agents = paced_agents((hub.listeners["cmpn402"], edge2.listeners["cmpn402"]), pace)
    try:
        uid = await _room_uid(reader, "cmpn402")
        # A spectator on an edge's web port watches the game through the kill.
        spectator = Spectator(edge2.listeners["api"], uid)
        agents.append(asyncio.ensure_future(spectator.watch(90)))
        rooms["rooms2"] = await nodes.start("rooms2", "rooms")
        before = await _entries(reader, uid, 6)
        # The referee's node: rooms1, unless a loaded machine starved it past its lease
        # already and rooms2 took the room (then rooms2 is killed, rooms1 takes it back).
        old = await _owner(node, nats_ns, uid)
        new = "rooms2" if old == "rooms1" else "rooms1"
        moves_at_kill = ann.moves + bob.moves
        rooms[old].kill()
        pace["before"] = 0.0
        results = await asyncio.wait_for(asyncio.gather(*agents), 90)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    results = results[:2]
    _same_game(*results, caplog)
    assert spectator.seqs == sorted(set(spectator.seqs)), "frames only move forward"
    assert spectator.moves == sorted(spectator.moves)
    assert spectator.data["finished"]
    seen = dict(zip(spectator.data["players"], spectator.data["view"]["scores"], strict=True))
    assert seen == {"ann": results[0][0].score, "bob": results[1][0].score}
    assert ann.moves + bob.moves > moves_at_kill + 2, "the game went on after the kill"
    log = await reader.action_log(uid)
    assert log is not None
    _logged_once(log, before)
    # The log after the kill is the new owner's: the old one's entries, then its own.
    took = [line for line in rooms[new].log.read_text().splitlines() if "took room" in line]
    # Its first take: it may take the room back once more if the lease lapses under it
    # (docs/cluster.md, "Failures"); each agent's second START is the first take's.
    taken = next(line for line in took if uid in line)
    # The failover gap (the lease's 2 s at least) is charged to nobody: the START that
    # resumed the game gave the agent on turn the times of the log's last entry then.
    found = re.search(r"over \((\d+) entries", taken)
    assert found is not None
    clocks = log.entries[int(found[1]) - 1].entry["clocks"]
    players = log.genesis["record"]["players"]
    resumed = [
        (players.index(name), agent.starts[1])
        for name, agent in (("ann", ann), ("bob", bob))
        if len(agent.starts) > 1 and agent.starts[1][0] == 1
    ]
    assert len(resumed) == 1, (ann.starts, bob.starts)
    player, (_order, player_time, total_time) = resumed[0]
    assert (player_time, total_time) == (round(clocks[player] * 1000), round(clocks[2] * 1000))
    with contextlib.closing(open_store(pg_url)) as records:
        stored = _stored_once(records, uid, log)
    assert sorted(stored.players) == ["ann", "bob"]
    scores = stored.result["scores"]
    assert scores["ann"] == results[0][0].score
    assert scores["bob"] == results[1][0].score


@pytest.mark.parametrize("lost", ["edge-killed", "connection-cut"])
async def test_an_agent_that_lost_its_edge_comes_back_through_another(
    lost: str,
    nodes: Nodes,
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
    pg_reader: JetStreamLog,
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url)
    edge2 = await nodes.start("edge2", "edge")
    reader = pg_reader
    relay = Relay(edge2.listeners["cmpn402"])  # bob's address: edge2 now
    bob_port = await relay.start()
    pace = {"before": 0.15}
    _ann, _bob, agents = paced_agents((hub.listeners["cmpn402"], bob_port), pace)
    try:
        uid = await _room_uid(reader, "cmpn402")
        before = await _entries(reader, uid, 6)
        relay.target = hub.listeners["cmpn402"]  # bob's next connection: the hub
        if lost == "edge-killed":
            edge2.kill()  # the room hears of it when bob is back (or after 5 s)
        else:
            relay.drop()  # edge2 lives, and tells the room at once
        pace["before"] = 0.0
        results = await asyncio.wait_for(asyncio.gather(*agents), 90)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    finally:
        relay.close()
    _same_game(*results, caplog)
    log = await reader.action_log(uid)
    assert log is not None
    _logged_once(log, before)
    # The drop and the return are in the log: bob's seat absent, then on the hub.
    seat = [s["name"] for s in log.genesis["seats"]].index("bob")
    presence = [e.entry.get("present") for e in log.entries[len(before.entries) :]]
    assert any(p is not None and not p[seat] for p in presence), presence
    routes = [e.entry["routes"][seat] for e in log.entries if e.entry.get("routes")]
    assert routes[0].startswith("edge2-")
    assert routes[-1].startswith("hub-")
    with contextlib.closing(open_store(pg_url)) as records:
        _stored_once(records, uid, log)

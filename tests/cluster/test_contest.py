"""A CMPN402 contest on a cluster (issue 32.5): ``meeple node`` processes on loopback,
real NATS and PostgreSQL. The lobby's leader runs the schedule; each game is a referee
room on one of two rooms nodes; the console answers on every edge. One rooms node is
SIGKILLed mid-contest: its games are taken over from their logs, every game is stored
once, and the standings add up."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cluster.test_cmpn402_admin import TOKEN, admin
from tests.cluster.test_nodes import Nodes
from tests.natsd import NatsEnv
from tests.patience import GAME_PATIENCE, eventually

from meeple.bus.codec import WireError
from meeple.bus.subjects import Namespace
from meeple.clients.cmpn402 import BuiltinAgent, GameResult, View, play
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.node import wire
from meeple.node.contest import ContestAnswer, ContestCall
from meeple.protocols.cmpn402.messages import MessageType, Name, PassMove, PlayNotice
from meeple.server.store.database import open_store

pytestmark = pytest.mark.slow

AGENTS = ("ann", "bob", "cat", "dan")


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = Nodes(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


class Brief:
    """meeple's built-in agent for its first ``plays`` moves of each game, then passes
    (six scoreless turns end a game: short games with real scores), a short pause
    before each move so that a kill lands mid-game."""

    def __init__(self, lexicon: Lexicon, plays: int = 3, pause: float = 0.2) -> None:
        self.inner = BuiltinAgent(lexicon)
        self.plays = plays
        self.pause = pause
        self._view: View | None = None
        self._moves = 0

    async def choose_move(self, view: View) -> Any:
        if view is not self._view:  # a new START: a new game (or the same, resumed)
            self._view, self._moves = view, 0
        await asyncio.sleep(self.pause)
        self._moves += 1
        if self._moves > self.plays:
            return PassMove()
        return await asyncio.to_thread(self.inner.choose_move, view)

    async def want_challenge(self, view: View, notice: PlayNotice) -> bool:
        return False


def _config(tmp_path: Path, fmt: str, agents: int, boards: int, rounds: int = 0) -> str:
    path = tmp_path / "contest.toml"
    path.write_text(
        "[cmpn402]\nchallenge_time = 1\n"
        f'[cmpn402.contest]\nformat = "{fmt}"\ngames = 1\nboards = {boards}\n'
        f"agents = {agents}\nrounds = {rounds}\nshow_timeout = 60\nresume_window = 60\n"
    )
    return str(path)


def _page(port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


async def _standings(port: int) -> dict[str, Any]:
    status, body = await admin(port, "/admin/status")
    assert status == 200, body
    snapshot: dict[str, Any] = body["status"]
    return snapshot


async def test_a_round_robin_on_a_cluster_survives_a_rooms_node_killed(
    nodes: Nodes, pg_url: str, tmp_path: Path
) -> None:
    config = _config(tmp_path, "round-robin", len(AGENTS), 2)
    common = ("--config", config, "--admin-token", TOKEN)
    hub = await nodes.start("hub", "edge,lobby,store", pg_url, "--api-port", "0", *common)
    rooms = {
        "rooms1": await nodes.start("rooms1", "rooms", None, *common),
        "rooms2": await nodes.start("rooms2", "rooms", None, *common),
    }
    edge2 = await nodes.start("edge2", "edge", None, "--api-port", "0", *common)
    lexicon = load_lexicon(DEFAULT_LEXICON)
    ports = [hub.listeners["cmpn402"], edge2.listeners["cmpn402"]] * 2
    agents = [
        asyncio.ensure_future(
            play(f"ws://127.0.0.1:{port}", name, Brief(lexicon), games=len(AGENTS) - 1)
        )
        for port, name in zip(ports, AGENTS, strict=True)
    ]
    seen: list[dict[str, Any]] = []
    killed = ""
    try:
        # The console on the edge that holds no lobby: the contest starts by itself
        # (four agents), games run on both boards.
        async def two_boards() -> bool:
            snapshot = await _standings(edge2.listeners["cmpn402"])
            seen.append(snapshot)
            return len(snapshot["boards"]) == 2 and all(b.get("owner") for b in snapshot["boards"])

        await eventually(two_boards, "two boards running", every=0.2, limit=GAME_PATIENCE)
        snapshot = seen[-1]
        assert snapshot["mode"] == "round-robin"
        assert snapshot["state"] == "running"
        assert sorted(a["name"] for a in snapshot["agents"]) == list(AGENTS)
        owner = snapshot["boards"][0]["owner"]
        # SIGKILL the owner of a running game: its room is taken over from its log.
        killed = owner
        rooms[owner].kill()

        async def over() -> bool:
            snapshot = await _standings(hub.listeners["cmpn402"])
            seen.append(snapshot)
            return snapshot["state"] == "finished"

        await eventually(over, "the contest finished", every=0.5, limit=2 * GAME_PATIENCE)
        results = await asyncio.wait_for(asyncio.gather(*agents), GAME_PATIENCE)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    assert killed in rooms
    # Every agent played everyone once, on its own connection; the contest closed it.
    for games in results:
        assert len(games) == len(AGENTS) - 1
        assert all(isinstance(g, GameResult) for g in games)
    final = seen[-1]
    rows = {r["name"]: r for r in final["standings"]}
    assert sorted(rows) == list(AGENTS)
    assert all(r["games_left"] == 0 for r in rows.values())
    assert sum(r["wins"] + r["losses"] + r["draws"] for r in rows.values()) == 2 * 6
    assert final["series"]["played"] == final["series"]["games"] == 6
    # Each game stored once, with the scores the contest counted, and rated.
    uids = [r["game_id"] for r in final["series"]["results"]]
    assert len(set(uids)) == 6
    with contextlib.closing(open_store(pg_url)) as records:
        for result in final["series"]["results"]:
            uid = result["game_id"]
            stored = records.game_by_uid(uid)
            assert stored is not None
            assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [
                stored.id
            ]
            assert [stored.result["scores"][p] for p in result["players"]] == result["scores"]
        rated = {r.player: r.games for r in records.leaderboard("scrabble")}
    assert {name: rated.get(name) for name in AGENTS} == dict.fromkeys(AGENTS, 3)
    # Points add up to what the agents heard at their ENDs.
    for name, games in zip(AGENTS, results, strict=True):
        assert rows[name]["points"] == sum(g.score for g in games)
    # The same standings on the other edge's console and on both web pages.
    other = await _standings(edge2.listeners["cmpn402"])
    assert other["standings"] == final["standings"]
    for port in (hub.listeners["api"], edge2.listeners["api"]):
        status, page = await asyncio.to_thread(_page, port, "/cmpn402")
        assert status == 200
        assert "finished" in page
        for name in AGENTS:
            assert f"<td>{name}</td>" in page


async def test_a_swiss_goes_on_through_the_lobby_leader_killed(
    nodes: Nodes, pg_url: str, tmp_path: Path
) -> None:
    """The contest is the lobby's state: the leader SIGKILLed after the first round, the
    standby takes it over and pairs the next rounds from the results so far and the
    games that ran meanwhile (read from their logs); every game counted and stored
    once, nobody meets anyone twice."""
    config = _config(tmp_path, "swiss", len(AGENTS), 2, rounds=3)
    common = ("--config", config, "--admin-token", TOKEN)
    lead1 = await nodes.start("lead1", "lobby", None, *common)
    lead2 = await nodes.start("lead2", "lobby,store,rooms", pg_url, *common)
    edge1 = await nodes.start("edge1", "edge", None, *common)
    edge2 = await nodes.start("edge2", "edge", None, *common)
    lexicon = load_lexicon(DEFAULT_LEXICON)
    ports = [edge1.listeners["cmpn402"], edge2.listeners["cmpn402"]] * 2
    agents = [
        asyncio.ensure_future(play(f"ws://127.0.0.1:{port}", name, Brief(lexicon), games=3))
        for port, name in zip(ports, AGENTS, strict=True)
    ]
    seen: list[dict[str, Any]] = []
    try:

        async def round_one() -> bool:
            snapshot = await _standings(edge2.listeners["cmpn402"])
            seen.append(snapshot)
            return snapshot["series"]["played"] >= 2

        await eventually(round_one, "round one played", every=0.2, limit=GAME_PATIENCE)
        lead1.kill()

        async def over() -> bool:
            snapshot = await _standings(edge1.listeners["cmpn402"])
            seen.append(snapshot)
            return snapshot["state"] == "finished"

        await eventually(over, "the contest finished", every=0.5, limit=2 * GAME_PATIENCE)
        results = await asyncio.wait_for(asyncio.gather(*agents), GAME_PATIENCE)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    assert "lead2: lobby leader" in lead2.log.read_text()
    final = seen[-1]
    assert final["mode"] == "swiss"
    played = final["series"]["results"]
    assert len(played) == final["series"]["played"] == final["series"]["games"] == 6
    pairs = [frozenset(r["players"]) for r in played]
    assert len(set(pairs)) == 6  # three rounds of four: everybody met everybody once
    assert all(len(games) == 3 for games in results)
    rows = {r["name"]: r for r in final["standings"]}
    assert sum(r["wins"] + r["losses"] + r["draws"] for r in rows.values()) == 12
    with contextlib.closing(open_store(pg_url)) as records:
        for result in played:
            uid = result["game_id"]
            stored = records.game_by_uid(uid)
            assert stored is not None
            assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [
                stored.id
            ]
            assert [stored.result["scores"][p] for p in result["players"]] == result["scores"]
    for name, games in zip(AGENTS, results, strict=True):
        assert rows[name]["points"] == sum(g.score for g in games)


async def test_the_console_acts_through_the_leader_with_the_token(
    nodes: Nodes, pg_url: str, tmp_path: Path
) -> None:
    """Manual start (no ``agents``): refused with two agents missing, started by the
    organiser on an edge without the lobby; an action without the token is refused by
    the leader itself; withdraw takes an agent out; abort ends the contest."""
    config = _config(tmp_path, "swiss", 0, 1)
    common = ("--config", config, "--admin-token", TOKEN)
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url, *common)
    edge2 = await nodes.start("edge2", "edge", None, *common)
    port = edge2.listeners["cmpn402"]
    status, body = await admin(port, "/admin/start", method="POST")
    assert (status, body["error"]) == (409, "a contest needs two agents at least (0 connected)")
    lexicon = load_lexicon(DEFAULT_LEXICON)
    agents = [
        asyncio.ensure_future(
            play(f"ws://127.0.0.1:{p}", name, Brief(lexicon, pause=0.5), games=10)
        )
        for p, name in zip((hub.listeners["cmpn402"], port, port), AGENTS, strict=False)
    ]
    try:

        async def three() -> bool:
            snapshot = await _standings(port)
            return sum(a["connected"] for a in snapshot["agents"]) == 3

        await eventually(three, "three agents in", every=0.2)
        status, body = await admin(port, "/admin/start", method="POST", token="wrong")
        assert status == 403
        status, body = await admin(port, "/admin/start", method="POST")
        assert status == 200, body
        assert body["result"] == "started"
        assert body["status"]["mode"] == "swiss"
        # An odd field: a bye, and one game on the one board.
        assert [r["reason"] for r in body["status"]["series"]["results"]] == ["BYE"]
        status, body = await admin(port, "/admin/swap", method="POST")
        assert (status, body["error"]) == (
            409,
            "in a contest the schedule decides who moves first",
        )
        status, body = await admin(port, "/admin/withdraw?name=nobody", method="POST")
        assert (status, body["error"]) == (409, "no agent 'nobody' in the contest")
        bye = body_bye = (await _standings(port))["series"]["results"][0]["players"][0]
        status, body = await admin(port, f"/admin/withdraw?name={bye}", method="POST")
        assert status == 200, body
        assert body["result"] == f"{body_bye} withdrawn"
        rows = {r["name"]: r for r in body["status"]["standings"]}
        assert rows[bye]["withdrawn"] is True
        status, body = await admin(port, "/admin/abort", method="POST")
        assert status == 200, body
        results = await asyncio.wait_for(
            asyncio.gather(*agents, return_exceptions=True), GAME_PATIENCE
        )
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    # The withdrawn agent was refused (1008); the others were let go at the end (1000).
    outcomes = dict(zip(AGENTS, results, strict=False))
    assert isinstance(outcomes[bye], ConnectionError)
    assert all(isinstance(r, list) for n, r in outcomes.items() if n != bye)

    async def aborted() -> bool:
        return (await _standings(hub.listeners["cmpn402"]))["state"] == "aborted"

    await eventually(aborted, "aborted everywhere")


async def _drops_at_its_first_start(port: int, name: str) -> None:
    """An agent that sends NAME, leaves at its first START and never comes back."""
    async with websockets.connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
        await ws.recv()  # the NAME request
        await ws.send(Name(name).encode())
        while True:
            data = await ws.recv()
            if isinstance(data, bytes) and data[:1] == bytes((MessageType.START,)):
                return


async def test_an_agent_that_leaves_loses_its_game_and_forfeits_the_next(
    nodes: Nodes, pg_url: str, tmp_path: Path
) -> None:
    """``meeple serve``'s absentee rules through the split: cat leaves at its first
    START; after ``resume_window`` the leader stops that game (END 3 to the other, the
    game stored) and counts it as cat's loss; cat's other game, due while it is away,
    waits ``show_timeout`` and is forfeited."""
    config = _config(tmp_path, "round-robin", 3, 1)
    text = Path(config).read_text().replace("show_timeout = 60", "show_timeout = 2")
    Path(config).write_text(text.replace("resume_window = 60", "resume_window = 2"))
    common = ("--config", config, "--admin-token", TOKEN)
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url, *common)
    port = hub.listeners["cmpn402"]
    lexicon = load_lexicon(DEFAULT_LEXICON)
    players = [
        asyncio.ensure_future(play(f"ws://127.0.0.1:{port}", name, Brief(lexicon), games=2))
        for name in ("ann", "bob")
    ]
    cat = asyncio.ensure_future(_drops_at_its_first_start(port, "cat"))
    try:

        async def over() -> bool:
            return (await _standings(port))["state"] == "finished"

        await eventually(over, "the contest finished", every=0.5, limit=GAME_PATIENCE)
        await asyncio.wait_for(asyncio.gather(cat, *players), GAME_PATIENCE)
    except BaseException:
        for a in (cat, *players):
            a.cancel()
        print(nodes.logs())
        raise
    final = await _standings(port)
    rows = {r["name"]: r for r in final["standings"]}
    assert (rows["cat"]["wins"], rows["cat"]["losses"]) == (0, 2)
    reasons = sorted(r["reason"] for r in final["series"]["results"] if "cat" in r["players"])
    assert reasons == ["FORFEIT", "STOPPED"]
    stopped = next(r for r in final["series"]["results"] if r["reason"] == "STOPPED")
    assert stopped["winner"] != "cat"
    with contextlib.closing(open_store(pg_url)) as records:
        assert records.game_by_uid(stopped["game_id"]) is not None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_hostile_contest_messages_are_refused_by_the_schema(data: bytes) -> None:
    """What an edge or the leader reads of the other is decoded by the wire schema:
    anything else is a WireError, never a crash nor another type."""
    for expected in (ContestCall, ContestAnswer):
        try:
            value = wire.loads(data, expected)
        except WireError:
            continue
        assert isinstance(value, expected)


def test_contest_messages_cross_the_bus() -> None:
    call = ContestCall("withdraw", "ann", TOKEN)
    assert wire.loads(wire.dumps(call), ContestCall) == call
    answer = ContestAnswer(True, "started", {"state": "running", "standings": []})
    assert wire.loads(wire.dumps(answer), ContestAnswer) == answer
    assert json.dumps(answer.snapshot)

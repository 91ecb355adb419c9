"""The CMPN402 referee's admin on a cluster (issue 21): ``/admin/…`` on an edge's CMPN402
port, ``meeple node`` processes on loopback, real NATS and PostgreSQL. Two of meeple's
agents on two edges play a referee game on a rooms node; the organiser, on either edge,
sees it in ``GET /admin/status`` with its owner, and stops it: END reason 3 to both
agents, the game stored once; a game whose agent never comes back is stopped too. A
pause is logged, so that a new owner (the first one SIGKILLed) keeps the game paused;
resumed there, it goes on, and a stop reaches it. Hostile admin requests
(no token, a wrong one, a bad game, a huge body, fuzzed query strings and headers) get
their error and the edge goes on."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from tests.cluster.test_cmpn402 import Paced, _stored_once, paced_agents
from tests.cluster.test_nodes import Nodes, _entries, _room_uid
from tests.natsd import NatsEnv
from tests.patience import GAME_PATIENCE, PATIENCE, eventually

from meeple.bus import schema
from meeple.bus.subjects import Namespace
from meeple.clients.cmpn402 import GameResult, play
from meeple.cluster.jetstream import JetStreamBackplane
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.log import JetStreamLog
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon
from meeple.node import wire
from meeple.node.launch import NodeProcess
from meeple.protocols.cmpn402.messages import EndReason, MessageType, Name
from meeple.server.store.database import open_store

pytestmark = pytest.mark.slow

TOKEN = "organiser-s3cret"
_URL_CHARS = st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="#")


class _SlowPing(Nodes):
    """Nodes whose CMPN402 referee pings every 30 s, not every second: these tests are
    about the admin, not heartbeats, and under load the agents in this test process
    missed a 1 s pong and were dropped mid-game (a stop then found no game running)."""

    async def start(
        self, name: str, roles: str, database: str | None = None, *extra: str
    ) -> NodeProcess:
        config = self.log_dir / "slow-ping.toml"
        config.write_text("[cmpn402]\nping_interval = 30.0\n")
        return await super().start(name, roles, database, "--config", str(config), *extra)


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = _SlowPing(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


def _http(
    port: int,
    path: str,
    *,
    method: str = "GET",
    token: str | None = TOKEN,
    headers: dict[str, str] | None = None,
    source: str = "127.0.0.1",
) -> tuple[int, dict[str, Any]]:
    """One admin request from address ``source`` (any of 127/8): its status and JSON body."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=30, source_address=(source, 0)
    )
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, headers=sent)
        response = connection.getresponse()
        text = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(text)
    except ValueError:  # websockets' own refusal (414, 431): plain text
        return response.status, {"text": text.decode(errors="replace")}


async def admin(port: int, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    return await asyncio.to_thread(_http, port, path, **kwargs)


async def _boards(port: int, uid: str, until: Any = None, timeout: float = 20.0) -> Any:
    """``/admin/status``'s board of game ``uid`` once it is listed (and ``until(board)``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    body: dict[str, Any] = {}
    while loop.time() < end:
        status, body = await admin(port, "/admin/status")
        assert status == 200, body
        for board in body["status"]["boards"]:
            if board["uid"] == uid and (until is None or until(board)):
                return board
        await asyncio.sleep(0.2)
    raise AssertionError(f"game {uid} not listed as wanted: {body}")


def _stopped(results: list[list[GameResult]]) -> tuple[GameResult, GameResult]:
    """Both agents were told END reason 3, each its own score first."""
    a, b = results
    assert len(a) == len(b) == 1, results
    assert a[0].reason is b[0].reason is EndReason.STOPPED
    assert (a[0].score, a[0].opponent_score) == (b[0].opponent_score, b[0].score)
    return a[0], b[0]


def _refused_by_agents(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What meeple's agents' state machines refused (nothing, when the referee is right)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "meeple.clients.cmpn402" and " in " in r.getMessage()
    ]


async def test_status_lists_the_game_with_its_owner_and_stop_ends_it(
    nodes: Nodes,
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
    pg_reader: JetStreamLog,
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store", pg_url, "--admin-token", TOKEN)
    rooms1 = await nodes.start("rooms1", "rooms", None, "--admin-token", TOKEN)
    edge2 = await nodes.start("edge2", "edge", None, "--admin-token", TOKEN)
    reader = pg_reader
    pace = {"before": 0.3}
    _ann, _bob, agents = paced_agents((hub.listeners["cmpn402"], edge2.listeners["cmpn402"]), pace)
    try:
        uid = await _room_uid(reader, "cmpn402")
        await _entries(reader, uid, 2)
        # Either edge lists it, answered by its owner: agents, scores, clocks, turn.
        board = await _boards(edge2.listeners["cmpn402"], uid)
        assert board["owner"] == rooms1.name
        assert board["game_id"] == uid
        assert sorted(board["players"]) == ["ann", "bob"]
        assert [(a["name"], a["connected"]) for a in board["agents"]] == [
            (p, True) for p in board["players"]
        ]
        assert {a["edge"] for a in board["agents"]} == {"hub", "edge2"}
        assert board["waiting"] is False
        assert board["paused"] is False
        assert board["turn"] in (0, 1)
        assert len(board["clocks"]["players_ms"]) == 2
        assert board["clocks"]["total_ms"] > 0
        assert "rack" not in json.dumps(board)
        # Straight to the room's owner, as a stolen edge credential could send it: a stop
        # without the organiser's token, or with a wrong one, is refused by the owner
        # (issue 30.1) and the game goes on.
        for token in ("", "wrong", TOKEN[:-1]):
            reply = await node.request(
                nats_ns.room_command(uid), wire.dumps(wire.Admin("stop", token)), timeout=10
            )
            answer = schema.decode(reply.data, schema.AdminAnswer)
            assert answer.error == "the admin token is not this node's", answer
            assert answer.refused
            assert answer.view is None
        board = await _boards(hub.listeners["cmpn402"], uid)
        assert board["owner"] == rooms1.name
        # One game runs: the stop may leave its uid out.
        status, body = await admin(hub.listeners["cmpn402"], "/admin/stop", method="POST")
        assert status == 200, body
        assert body["result"] == "stopped"
        assert body["game"]["owner"] == rooms1.name
        results = await asyncio.wait_for(asyncio.gather(*agents), GAME_PATIENCE)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    a, b = _stopped(results)
    assert not _refused_by_agents(caplog)
    log = await reader.action_log(uid)
    assert log is not None
    assert log.end_reason is not None
    with contextlib.closing(open_store(pg_url)) as records:
        stored = _stored_once(records, uid, log)
    assert stored.result["scores"] == {"ann": a.score, "bob": b.score}
    assert stored.data["actions"][-1]["type"] == "end"

    # The game is not listed any more; a stop of it is a 404, or a 409 while its owner
    # still closes it.
    async def unlisted() -> bool:
        _status, body = await admin(hub.listeners["cmpn402"], "/admin/status")
        return not body["status"]["boards"]

    await eventually(unlisted, "the game unlisted", every=0.1)
    status, body = await admin(hub.listeners["cmpn402"], "/admin/status")
    assert body["status"]["boards"] == []
    assert body["status"]["state"] == "idle"
    status, body = await admin(hub.listeners["cmpn402"], f"/admin/stop?game={uid}", method="POST")
    assert status in (404, 409), body
    status, body = await admin(hub.listeners["cmpn402"], "/admin/stop", method="POST")
    assert (status, body) == (409, {"error": "no game runs: say which, ?game=<uid>"})


async def test_a_game_whose_agent_never_comes_back_is_stopped_with_end_3_to_the_other(
    nodes: Nodes,
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
    pg_reader: JetStreamLog,
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store,rooms", pg_url, "--admin-token", TOKEN)
    edge2 = await nodes.start("edge2", "edge", None, "--admin-token", TOKEN)
    reader = pg_reader
    ann = Paced(load_lexicon(DEFAULT_LEXICON), {"before": 0.5})
    playing = asyncio.ensure_future(play(f"ws://127.0.0.1:{hub.listeners['cmpn402']}", "ann", ann))
    try:
        # Bob names himself, hears START and is gone for good.
        async with websockets.connect(f"ws://127.0.0.1:{edge2.listeners['cmpn402']}") as ws:
            assert await asyncio.wait_for(ws.recv(), 10) == b"\x00"
            await ws.send(Name("bob").encode())
            while (await asyncio.wait_for(ws.recv(), PATIENCE))[0] != MessageType.START:
                pass
        uid = await _room_uid(reader, "cmpn402")
        port = edge2.listeners["cmpn402"]
        board = await _boards(port, uid, lambda b: b["waiting"])
        assert board["owner"] == "hub"
        assert {a["name"]: a["connected"] for a in board["agents"]} == {"ann": True, "bob": False}
        assert board["clocks"]["running"] is False
        status, body = await admin(port, f"/admin/stop?game={uid}", method="POST")
        assert status == 200, body
        assert body["result"] == "the waiting game is stopped"
        (result,) = await asyncio.wait_for(playing, PATIENCE)
    except BaseException:
        playing.cancel()
        print(nodes.logs())
        raise
    assert result.reason is EndReason.STOPPED
    assert not _refused_by_agents(caplog)
    log = await reader.action_log(uid)
    assert log is not None
    assert log.end_reason is not None
    with contextlib.closing(open_store(pg_url)) as records:
        stored = _stored_once(records, uid, log)
    assert stored.result["scores"]["ann"] == result.score
    assert stored.result["scores"]["bob"] == result.opponent_score


async def test_a_paused_game_stays_paused_across_a_takeover_and_is_resumed_there(
    nodes: Nodes,
    node: Client,
    nats_ns: Namespace,
    pg_url: str,
    caplog: pytest.LogCaptureFixture,
    pg_reader: JetStreamLog,
) -> None:
    hub = await nodes.start("hub", "edge,lobby,store", pg_url, "--admin-token", TOKEN)
    rooms = {"rooms1": await nodes.start("rooms1", "rooms", None, "--admin-token", TOKEN)}
    edge2 = await nodes.start("edge2", "edge", None, "--admin-token", TOKEN)
    reader = pg_reader
    port = edge2.listeners["cmpn402"]
    # Slow until the pause: rooms2 starts meanwhile (seconds on a loaded machine), and a
    # game at 0.2 s a move could be over before it is paused.
    pace = {"before": 1.0}
    ann, bob, agents = paced_agents((hub.listeners["cmpn402"], edge2.listeners["cmpn402"]), pace)
    try:
        uid = await _room_uid(reader, "cmpn402")
        rooms["rooms2"] = await nodes.start("rooms2", "rooms", None, "--admin-token", TOKEN)
        await _entries(reader, uid, 3)
        await _boards(port, uid)
        status, body = await admin(port, f"/admin/pause?game={uid}", method="POST")
        assert (status, body["result"], body["game"]["paused"]) == (200, "paused", True), body
        status, body = await admin(port, f"/admin/pause?game={uid}", method="POST")
        assert (status, body) == (409, {"error": "already paused"})
        paused = await _entries(reader, uid, 1)
        assert paused.entries[-1].entry["paused"] is True
        pace["before"] = 0.2
        moves = ann.moves + bob.moves
        await asyncio.sleep(1.0)
        assert ann.moves + bob.moves <= moves + 1  # the one on move waits for its answer
        lease = await Leases(JetStreamBackplane(node), nats_ns).holder(room_key(uid))
        assert lease is not None
        assert lease.owner == "rooms1"
        rooms["rooms1"].kill()
        # The new owner took it over from its log: still paused (and waiting, the agents
        # hear START when the admin resumes).
        board = await _boards(port, uid, lambda b: b["owner"] == "rooms2", timeout=30)
        assert board["paused"] is True
        # Resumed there: the agents hear END 2 and START, and play on.
        status, body = await admin(hub.listeners["cmpn402"], "/admin/resume", method="POST")
        assert (status, body["result"]) == (200, "resumed"), body
        loop = asyncio.get_running_loop()
        until = loop.time() + 20
        while ann.moves + bob.moves < moves + 3 and loop.time() < until:
            await asyncio.sleep(0.1)
        assert ann.moves + bob.moves >= moves + 3, "the game went on after the resume"
        status, body = await admin(hub.listeners["cmpn402"], "/admin/stop", method="POST")
        assert status == 200, body
        assert body["game"]["owner"] == "rooms2"
        results = await asyncio.wait_for(asyncio.gather(*agents), GAME_PATIENCE)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    _stopped(results)
    assert not _refused_by_agents(caplog)
    log = await reader.action_log(uid)
    assert log is not None
    assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
    assert log.entries[: len(paused.entries)] == paused.entries
    with contextlib.closing(open_store(pg_url)) as records:
        _stored_once(records, uid, log)


async def test_hostile_admin_requests_get_errors_and_the_edge_goes_on(
    nodes: Nodes, pg_url: str
) -> None:
    edge = await nodes.start("hub", "edge,lobby,store,rooms", pg_url, "--admin-token", TOKEN)
    port = edge.listeners["cmpn402"]
    status, body = await admin(port, "/admin/status", token=None)
    assert status == 401
    assert "token" in body["error"]
    status, body = await admin(port, "/admin/status", token="wrong")
    assert (status, body) == (403, {"error": "wrong admin token"})
    status, body = await admin(port, "/admin/stop?game=nope", token="wrong", method="POST")
    assert status == 403
    status, body = await admin(port, "/admin/stop")  # a GET of an action
    assert status == 405
    for game in ("nope", "a.b", "%2A", "x" * 60, "../cmd"):
        status, body = await admin(port, f"/admin/stop?game={game}", method="POST")
        assert status == 404, (game, status, body)
        assert body["error"].startswith("no running game"), body
    status, body = await admin(port, "/admin/stop?game=a&game=b", method="POST")
    assert status == 409
    status, body = await admin(port, "/admin/standings")
    assert status == 404
    assert "[cmpn402.contest]" in body["error"]  # no contest here: how to run one
    status, body = await admin(port, "/admin/start", method="POST")
    assert status == 404
    # A body (the admin takes none), small or huge: websockets' HTTP parser closes the
    # connection before any answer, the body unread. A request line or a header past
    # its limits: 414, 431.
    requests = [(b"x" * sent, f"Content-Length: {50_000_000}\r\n", b"") for sent in (0, 1_000_000)]
    requests.append((b"", f"X-Long: {'y' * 20_000}\r\n", b"HTTP/1.1 431"))
    for body, header, expected in requests:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = (
            f"POST /admin/stop?game=nope HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\n{header}\r\n"
        )
        writer.write(head.encode() + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(65536), 10)
            if expected:
                assert answer.startswith(expected), answer[:80]
            else:
                assert answer == b"", answer[:80]
        writer.close()
        status, _ = await admin(port, "/admin/status")
        assert status == 200
    status, body = await admin(port, f"/admin/stop?game={'z' * 10_000}", method="POST")
    assert status == 414

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        action=st.sampled_from(["stop", "pause", "resume", "status", "x", ""]),
        query=st.one_of(
            st.text(_URL_CHARS, max_size=300),
            st.builds("game={}".format, st.text(_URL_CHARS, max_size=140)),
        ),
        token=st.one_of(
            st.none(),
            st.just(TOKEN),
            st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=80),
        ),
    )
    def fuzz(action: str, query: str, token: str | None) -> None:
        method = "GET" if action == "status" else "POST"
        # Each wrong token from an address of its own: five from one would be refused
        # with 429 (the attempt limit, checked below).
        source = "127.0.0.1" if token == TOKEN else f"127.1.{next(guessers)}.1"
        path = f"/admin/{action}?{query}"
        status, body = _http(port, path, method=method, token=token, source=source)
        assert "error" in body or status == 200, (status, body)
        if token != TOKEN:
            assert status in (401, 403, 404, 405), (status, body)
        elif action != "status":
            assert status in (404, 409), (status, body)  # no game runs

    guessers = itertools.count(1)
    await asyncio.to_thread(fuzz)
    # The edge goes on.
    status, body = await admin(port, "/admin/status")
    assert (status, body["status"]["boards"]) == (200, [])
    # Issue 30.7: five wrong tokens a minute from one address, as at the console's
    # sign-in; then 429 with Retry-After for any token from it, the right one too.
    for i in range(5):
        status, _ = await admin(port, "/admin/status", token=f"guess{i}", source="127.2.0.1")
        assert status == 403
    status, body = await admin(port, "/admin/stop?game=x", method="POST", source="127.2.0.1")
    assert status == 429
    assert "too many" in body["error"]
    assert (await admin(port, "/admin/status"))[0] == 200  # another address is not affected

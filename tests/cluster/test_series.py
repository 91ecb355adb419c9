"""The CMPN402 two-agent series on a cluster (issue 32.5/32.6): ``[cmpn402] games = N``
and ``manual_start`` without a contest table, run by the lobby's leader as a contest of
format ``series`` (meeple.node.contest). ``meeple node`` processes on loopback, real NATS
and PostgreSQL: three games of two ``meeple`` agents on two edges, each started and the
first player swapped from the console of the edge without the lobby, a rooms node
SIGKILLed mid-game; every game stored once, the standings right, the edge console's
board picture and its downloads (the stored game, read from a store node)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cluster.test_cmpn402_admin import TOKEN, admin
from tests.cluster.test_contest import Brief
from tests.cluster.test_nodes import Nodes
from tests.natsd import NatsEnv
from tests.patience import GAME_PATIENCE, eventually

from meeple.bus.subjects import Namespace
from meeple.clients.cmpn402 import GameResult, play
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, load_lexicon
from meeple.node.contest import (
    SERIES,
    ClusterContest,
    ContestAnswer,
    ContestCall,
    RemoteConsole,
    cluster_contest,
)
from meeple.protocols.cmpn402.messages import Name
from meeple.server.clock import VirtualClock
from meeple.server.config import Cmpn402Config, ContestConfig
from meeple.server.lobby.cmpn402_console import FILE_KINDS
from meeple.server.rooms.cmpn402 import series_first
from meeple.server.store.database import open_store

AGENTS = ("ann", "bob")


@pytest.fixture
def nodes(nats_env: NatsEnv, nats_ns: Namespace, tmp_path: Path) -> Iterator[Nodes]:
    group = Nodes(nats_env, nats_ns, tmp_path)
    yield group
    group.stop_all()


async def _refused(port: int, name: str) -> int | None:
    """An agent that sends NAME: the close code the referee answers with."""
    async with websockets.connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
        await ws.recv()  # the NAME request
        await ws.send(Name(name).encode())
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                await ws.recv()
        return ws.close_code


def _config(tmp_path: Path) -> str:
    path = tmp_path / "series.toml"
    path.write_text("[cmpn402]\nchallenge_time = 1\ngames = 3\nmanual_start = true\n")
    return str(path)


def _web(
    port: int, method: str, path: str, body: str = "", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


async def _sign_in(port: int) -> str:
    """The console's sign-in (the admin token): the session cookie to send."""
    status, headers, _ = await asyncio.to_thread(
        _web,
        port,
        "POST",
        "/cmpn402/login",
        f"token={quote(TOKEN)}",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 303, headers
    cookie = headers["set-cookie"].split(";", 1)[0]
    assert cookie.startswith("meeple_console=")
    return cookie


async def _status(port: int) -> dict[str, Any]:
    status, body = await admin(port, "/admin/status")
    assert status == 200, body
    snapshot: dict[str, Any] = body["status"]
    return snapshot


@pytest.mark.slow
async def test_a_three_game_series_on_a_cluster(nodes: Nodes, pg_url: str, tmp_path: Path) -> None:
    common = ("--config", _config(tmp_path), "--admin-token", TOKEN)
    lead1 = await nodes.start("lead1", "lobby", None, *common)  # the first leader
    hub = await nodes.start("hub", "edge,lobby,store", pg_url, "--api-port", "0", *common)
    rooms = {
        "rooms1": await nodes.start("rooms1", "rooms", None, *common),
        "rooms2": await nodes.start("rooms2", "rooms", None, *common),
    }
    edge2 = await nodes.start("edge2", "edge", None, "--api-port", "0", *common)
    port = edge2.listeners["cmpn402"]  # the console of the edge without the lobby
    web = edge2.listeners["api"]
    lexicon = load_lexicon(DEFAULT_LEXICON)
    agents: list[asyncio.Future[list[GameResult]]] = []
    firsts: list[str] = []
    killed = taken = ""
    seen: list[dict[str, Any]] = []
    try:
        agents.append(
            asyncio.ensure_future(
                play(
                    f"ws://127.0.0.1:{hub.listeners['cmpn402']}",
                    "ann",
                    Brief(lexicon, pause=0.4),
                    games=3,
                )
            )
        )

        async def ann_in() -> bool:
            return [a["name"] for a in (await _status(port))["agents"]] == ["ann"]

        await eventually(ann_in, "ann in the series", every=0.2)
        agents.append(
            asyncio.ensure_future(
                play(f"ws://127.0.0.1:{port}", "bob", Brief(lexicon, pause=0.4), games=3)
            )
        )

        async def both_in() -> bool:
            snapshot = await _status(port)
            return [a["connected"] for a in snapshot["agents"]] == [True, True]

        await eventually(both_in, "both agents in the series", every=0.2)
        snapshot = await _status(port)
        assert (snapshot["mode"], snapshot["state"], snapshot["manual_start"]) == (
            "series",
            "waiting",
            True,
        )
        assert snapshot["series"]["games"] == 3
        # A third agent is refused while the series has its two (meeple serve: 1013).
        assert await asyncio.wait_for(_refused(port, "cat"), GAME_PATIENCE) == 1013
        # Hostile console input: refused, nothing changed.
        for path in ("/admin/abort", "/admin/withdraw?name=ann", "/admin/start?x=1"):
            status, body = await admin(port, path, method="POST")
            assert status == 409, (path, body)
        status, body = await admin(port, "/admin/swap", method="POST", token="wrong")
        assert status == 403
        # Swapped before the first game: ann (seat 1) came first, bob moves first.
        status, body = await admin(port, "/admin/swap", method="POST")
        assert (status, body["result"]) == (200, "the next game's first player is seat 2")
        for game in range(3):
            if game == 1:
                # SIGKILL the lobby's leader between games: the standby carries the series
                # on from the lobby's state (the swap with it), and takes the next start.
                lead1.kill()

            async def started() -> bool:
                status, body = await admin(port, "/admin/start", method="POST")
                assert status in (200, 409), body
                # A start the new leader applied but whose answer was lost: in a game now.
                return (
                    body.get("result") == "started" or body.get("error") == "cannot start in a game"
                )

            await eventually(started, f"game {game + 1} started", every=0.5)
            status, body = await admin(port, "/admin/start", method="POST")
            assert (status, body["error"]) == (409, "cannot start in a game")

            async def running(game: int = game) -> bool:
                snapshot = await _status(port)
                seen.append(snapshot)
                boards = snapshot["boards"]
                return (
                    len(boards) == 1
                    and bool(boards[0].get("owner"))
                    and not any(
                        b.get("game_id") in {r["game_id"] for r in snapshot["series"]["results"]}
                        for b in boards
                    )
                )

            await eventually(running, f"game {game + 1} running", every=0.2, limit=GAME_PATIENCE)
            board = seen[-1]["boards"][0]
            firsts.append(board["players"][board["first"]])
            if game == 1:
                # The board picture on the edge's web console: the room's spectator view.
                async def pictured() -> bool:
                    status, _, page = await asyncio.to_thread(_web, web, "GET", "/cmpn402")
                    return status == 200 and b'class="sboard"' in page

                await eventually(pictured, "the board pictured on the edge", every=0.2)
                # SIGKILL the running game's owner: its room is taken over from its log.
                killed, taken = board["owner"], board["game_id"]
                rooms[killed].kill()

            async def played(game: int = game) -> bool:
                snapshot = await _status(port)
                seen.append(snapshot)
                return snapshot["series"]["played"] == game + 1 and not snapshot["boards"]

            await eventually(played, f"game {game + 1} over", every=0.3, limit=2 * GAME_PATIENCE)
            if game < 2:
                assert seen[-1]["state"] == "between-games"  # a manual start: it waits

        async def finished() -> bool:
            snapshot = await _status(hub.listeners["cmpn402"])
            seen.append(snapshot)
            return snapshot["state"] == "finished"

        await eventually(finished, "the series finished", every=0.3, limit=GAME_PATIENCE)
        results = await asyncio.wait_for(asyncio.gather(*agents), GAME_PATIENCE)
    except BaseException:
        for a in agents:
            a.cancel()
        print(nodes.logs())
        raise
    assert killed in rooms
    # The killed node's game was running: the other rooms node took it over from its log.
    (survivor,) = (node for name, node in rooms.items() if name != killed)
    assert f"took room {taken} over" in survivor.log.read_text()
    assert "hub: lobby leader" in hub.log.read_text()
    # serve's rule: the first player alternates, swap flipped it (seat 2, 1, 2).
    assert firsts == ["bob", "ann", "bob"]
    final = seen[-1]
    played = final["series"]["results"]
    assert len(played) == final["series"]["played"] == final["series"]["games"] == 3
    assert all(len(games) == 3 for games in results)
    rows = {r["name"]: r for r in final["standings"]}
    assert sorted(rows) == list(AGENTS)
    for name, games in zip(AGENTS, results, strict=True):
        row = rows[name]
        assert row["wins"] + row["losses"] + row["draws"] == 3
        assert row["games_left"] == 0
        assert row["points"] == sum(g.score for g in games)
        assert row["spread"] == sum(g.score - g.opponent_score for g in games)
    uids = [r["game_id"] for r in played]
    assert taken == uids[1]
    assert len(set(uids)) == 3
    with contextlib.closing(open_store(pg_url)) as records:
        stored = {}
        for result in played:
            uid = result["game_id"]
            game = records.game_by_uid(uid)
            assert game is not None
            assert [g.id for g in records.games() if (g.data or {}).get("uid") == uid] == [game.id]
            assert [game.result["scores"][p] for p in result["players"]] == result["scores"]
            stored[uid] = game
    # The downloads on the edge's web console: the stored game's GCG and record.
    status, _, _ = await asyncio.to_thread(_web, web, "GET", f"/cmpn402/files/{uids[0]}/gcg")
    assert status == 401  # not signed in
    cookie = {"Cookie": await _sign_in(web)}
    for uid in uids:
        status, headers, body = await asyncio.to_thread(
            _web, web, "GET", f"/cmpn402/files/{uid}/gcg", headers=cookie
        )
        assert status == 200
        assert body.decode() == stored[uid].record
        assert headers["content-disposition"] == f'attachment; filename="{uid}.gcg"'
        status, _, body = await asyncio.to_thread(
            _web, web, "GET", f"/cmpn402/files/{uid}/log", headers=cookie
        )
        assert status == 200
        assert json.loads(body) == json.loads(json.dumps(stored[uid].data))
    status, _, page = await asyncio.to_thread(_web, web, "GET", "/cmpn402", headers=cookie)
    assert f"/cmpn402/files/{uids[0]}/gcg".encode() in page
    for hostile in ("nope/gcg", f"{uids[0]}/exe", f"{uids[0]}x/gcg", "..%2f..%2fetc/gcg"):
        status, _, _ = await asyncio.to_thread(
            _web, web, "GET", f"/cmpn402/files/{hostile}", headers=cookie
        )
        assert status == 404, hostile


def test_a_series_is_what_the_cluster_runs_for_games_or_a_manual_start() -> None:
    assert cluster_contest(Cmpn402Config()) is None  # one game per pairing
    series = cluster_contest(Cmpn402Config(games=3))
    assert series is not None
    assert (series.format, series.games, series.boards, series.agents) == (SERIES, 3, 1, 2)
    manual = cluster_contest(Cmpn402Config(manual_start=True))
    assert manual is not None
    assert (manual.games, manual.agents) == (1, 0)
    contest = ContestConfig(format="swiss")
    assert cluster_contest(Cmpn402Config(games=3, contest=contest)) is contest
    # serve's rule, shared: alternate, swap flips.
    assert [series_first(n, False) for n in range(3)] == [0, 1, 0]
    assert [series_first(n, True) for n in range(3)] == [1, 0, 1]


def _series() -> ClusterContest:
    """A series on a leader with no agent yet: every call is answered without a room."""
    config = cluster_contest(Cmpn402Config(games=3, manual_start=True))
    assert config is not None
    return ClusterContest(cast(Any, None), config, token=TOKEN, ended=_no_end, clock=VirtualClock())


async def _no_end(uid: str) -> None:
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("status", "start", "pause", "resume", "swap", "abort", "withdraw"))
            | st.text(max_size=30),
            st.text(max_size=80),
            st.sampled_from((TOKEN, "", "wrong")),
        ),
        max_size=8,
    )
)
def test_hostile_console_calls_to_a_series(calls: list[tuple[str, str, str]]) -> None:
    """Whatever the consoles ask of the series, the leader answers (never raises), and
    only a known action with the token changes anything; its saved state restores."""
    series = _series()
    swapped = False
    for action, name, token in calls:
        answer = series.answer(ContestCall(action, name, token))
        assert isinstance(answer, ContestAnswer)
        if action == "swap" and not name and token == TOKEN:
            swapped = not swapped
            assert answer.ok
        if action in ("abort", "withdraw") and token == TOKEN:
            assert not answer.ok
        if not answer.ok and answer.snapshot is not None:
            assert answer.snapshot["mode"] == SERIES
        assert series.swapped is swapped
    again = _series()
    again.restore(json.loads(json.dumps(series.snapshot())))
    assert (again.swapped, again.state) == (series.swapped, series.state)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=250), st.sampled_from((*FILE_KINDS, "exe", "", "gcg/..")))
def test_hostile_download_requests_read_nothing(game_id: str, kind: str) -> None:
    """The edge's console reads a stored game only for a game the series counted: any
    other name is None before any store request (there is no bus here: it would fail)."""
    console = RemoteConsole(cast(Any, None), cast(Any, None), TOKEN, cast(Any, None))
    assert asyncio.run(console.file(game_id, kind)) is None

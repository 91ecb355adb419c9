"""One ``Node`` with every role (edge, rooms, lobby, store) over the in-process backplane
(meeple.cluster.local: no NATS, its state in one SQLite file), on loopback: two Twente
bots play a whole game through it; and a game between two browsers goes on after the
node is stopped and a new one started on the same file — the restart is a takeover
(the rooms role's ``take_over``: the room replayed from its log), and the browsers take
their seats back with their rejoin tokens, kept in the file's tokens bucket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import websockets
from tests.cluster.test_nodes import Bot
from tests.patience import GAME_PATIENCE, PATIENCE, eventually
from tests.serve import Serve, next_of, web_client
from websockets.asyncio.client import ClientConnection

from meeple.ai.scrabble import ranked_moves
from meeple.bus.local import LocalBus
from meeple.bus.schema import DONE, OK
from meeple.bus.subjects import Namespace
from meeple.clients.scrabble_bot import _move
from meeple.clients.twente import TwenteClient
from meeple.cluster.local import LocalBackplane
from meeple.cluster.log import SEQ, JetStreamLog
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.node import wire
from meeple.node.launch import NodeProcess, start_node
from meeple.node.node import ROLES, Node, NodeConfig
from meeple.node.store import RemoteRecords, StoreRole
from meeple.protocols.twente.messages import GameOver, NotifyTurn
from meeple.protocols.web import PROTOCOL
from meeple.server.config import ServerConfig
from meeple.server.rooms.scrabble import GameStarted, PassTurn, Rejected
from meeple.server.store.database import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def enable() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


def _config(tmp_path: Path, *, api: bool = False) -> NodeConfig:
    server = ServerConfig().with_port("twente", 0)
    return NodeConfig(
        name="solo",
        roles=frozenset(ROLES),
        nats_url="",
        local=str(tmp_path / "backplane.sqlite3"),
        database=f"sqlite:///{tmp_path / 'records.sqlite3'}",
        server=server,
        listeners=("twente",),
        api_port=0 if api else None,
    )


async def _twente_bot(port: int, name: str, lexicon: Lexicon) -> GameOver:
    client = await TwenteClient.connect("127.0.0.1", port, name)
    try:
        await client.request_game(2)
        async for message in client:
            if isinstance(message, GameOver):
                return message
            if client.move_due:
                await _move(client, lexicon, client.session.refusals)
    finally:
        await client.close()
    raise AssertionError(f"{name}: the connection ended before GAMEOVER")


async def test_two_twente_bots_play_a_whole_game_through_a_one_process_node(
    tmp_path: Path, enable: Lexicon
) -> None:
    """Edge, lobby, rooms and store in one process on the local backplane: the bots are
    matched, play to GAMEOVER, agree on the scores; the game is stored once and its log
    is closed in the backplane's file."""
    node = Node(_config(tmp_path))
    await node.start()
    try:
        assert node.rooms is not None
        port = node.listeners["twente"].port
        overs = await asyncio.wait_for(
            asyncio.gather(_twente_bot(port, "ann", enable), _twente_bot(port, "bob", enable)),
            GAME_PATIENCE,
        )
        assert dict(overs[0].scores) == dict(overs[1].scores)
        assert sorted(dict(overs[0].scores)) == ["ann", "bob"]
        records = open_store(f"sqlite:///{tmp_path / 'records.sqlite3'}")
        try:
            await eventually(lambda: len(records.games(limit=10)) == 1, "the game stored")
            stored = records.games(limit=10)[0]
            assert sorted(stored.players) == ["ann", "bob"]
            assert stored.protocols == ("twente",)
            assert stored.data is not None
            uid = stored.data["uid"]
        finally:
            records.close()
        assert node.rooms.log is not None
        assert await node.rooms.log.closed(uid)
        assert await node.rooms.log.open_logs() == []
    finally:
        await node.stop()


# --- a restart -----------------------------------------------------------------------------


async def _web(port: int) -> ClientConnection:
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=2**22)
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    async with asyncio.timeout(PATIENCE):
        while True:
            message: dict[str, Any] = json.loads(await ws.recv())
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
    ws: ClientConnection, lexicon: Lexicon, *, until_move: int | None = None
) -> dict[str, Any]:
    """Play this seat from its views until the game is over, or until the game has
    ``until_move`` moves (the last view seen then)."""
    while True:
        message = await _until(ws, "seat")
        view: dict[str, Any] = message["data"]
        if view["over"]:
            return view
        if until_move is not None and len(view["moves"]) >= until_move:
            return view
        if view["turn"] == view["you"]:
            await ws.send(json.dumps({"type": "play", "action": _action(view, lexicon)}))


async def test_a_game_goes_on_after_the_node_restarts_on_the_same_file(
    tmp_path: Path, enable: Lexicon, caplog: pytest.LogCaptureFixture
) -> None:
    """Two browsers sit at a Scrabble table of a one-process node and play a few moves;
    the node stops (its games' leases released) and a new node starts on the same
    SQLite file: its rooms role takes the room over from the log, the browsers send
    their rejoin tokens to the new node's web port, each gets its own rack back as it
    was, and they play the game to its end; it is stored once, with every move."""
    caplog.set_level(logging.INFO, "meeple.node.rooms")
    first = Node(_config(tmp_path, api=True))
    await first.start()
    seats: list[ClientConnection] = []
    try:
        assert first.api_port is not None
        wes = await _web(first.api_port)
        seats.append(wes)
        await wes.send(
            json.dumps(
                {
                    "type": "create",
                    "game": "scrabble",
                    "variant": "twente",
                    "size": 2,
                    "name": "wes",
                }
            )
        )
        wes_seat = await _until(wes, "seated")
        kim = await _web(first.api_port)
        seats.append(kim)
        await kim.send(json.dumps({"type": "sit", "table": wes_seat["table"], "name": "kim"}))
        kim_seat = await _until(kim, "seated")
        played = await asyncio.gather(
            _play(wes, enable, until_move=4), _play(kim, enable, until_move=4)
        )
        assert first.rooms is not None
        (uid,) = first.rooms.rooms
    finally:
        for ws in seats:
            await ws.close()
        await first.stop()
    racks = {view["players"][view["you"]]: view["rack"] for view in played}

    second = Node(_config(tmp_path, api=True))
    await second.start()
    seats = []
    try:
        assert second.rooms is not None
        await eventually(lambda: uid in second.rooms.rooms, "the room taken over")
        # The restart is a takeover: the room replayed from its log under a new lease.
        assert f"solo: took room {uid} over" in caplog.text
        assert second.api_port is not None
        views = []
        for token, name in ((wes_seat["token"], "wes"), (kim_seat["token"], "kim")):
            ws = await _web(second.api_port)
            seats.append(ws)
            await ws.send(json.dumps({"type": "rejoin", "token": token}))
            again = await _until(ws, "seated")
            assert (again["table"], again["name"]) == (uid, name)
            view = (await _until(ws, "seat"))["data"]
            assert view["rack"] == racks[name]  # its own rack, as it was
            assert len(view["moves"]) >= 4
            views.append(view)
        finals = await asyncio.wait_for(
            asyncio.gather(
                *(_play_from(ws, v, enable) for ws, v in zip(seats, views, strict=True))
            ),
            GAME_PATIENCE,
        )
        assert all(f["over"] for f in finals)
        assert len(finals[0]["moves"]) > len(views[0]["moves"])  # played on after it
        assert finals[0]["scores"] == finals[1]["scores"]
        records = open_store(f"sqlite:///{tmp_path / 'records.sqlite3'}")
        try:
            await eventually(lambda: records.game_by_uid(uid) is not None, "the game stored")
            stored = records.game_by_uid(uid)
            assert stored is not None
            assert sorted(stored.players) == ["kim", "wes"]
        finally:
            records.close()
    finally:
        for ws in seats:
            await ws.close()
        await second.stop()


async def _play_from(
    ws: ClientConnection, view: dict[str, Any], lexicon: Lexicon
) -> dict[str, Any]:
    """Play on from ``view`` (the seat's view after its rejoin) to the game's end."""
    if view["over"]:
        return view
    if view["turn"] == view["you"]:
        await ws.send(json.dumps({"type": "play", "action": _action(view, lexicon)}))
    return await _play(ws, lexicon)


# --- meeple node --local ---------------------------------------------------------------------


async def test_meeple_node_local_takes_its_games_over_after_a_crash(tmp_path: Path) -> None:
    """``meeple node --local FILE`` runs every role in one process (no NATS); two Twente
    bots start a game through it; the process is SIGKILLed mid-game (no lease released)
    and started again on the same file: the room's lease, kept in the file, lapses when
    its TTL would have, and the new process takes the room over from its log."""
    file = tmp_path / "meeple.sqlite3"

    def start() -> NodeProcess:
        return start_node(
            "solo",
            ROLES,
            "",
            user=None,
            password=None,
            log_dir=tmp_path,
            extra_args=("--local", str(file), "--web-port", "0"),
        )

    node = start()
    bots = [Bot(name, node.listeners["twente"], 0.2) for name in ("ann", "bob")]
    games = [asyncio.ensure_future(bot.play()) for bot in bots]
    try:

        def moved() -> bool:
            return sum(isinstance(m, NotifyTurn) for m in bots[0].messages) >= 4

        await eventually(moved, "four turns played")
        node.kill()
        await asyncio.gather(*games, return_exceptions=True)
        plane = await LocalBackplane.open(file, Namespace("meeple"))
        try:
            records = open_store(f"sqlite:///{tmp_path / 'meeple-records.sqlite3'}")
            (uid,) = await JetStreamLog(plane, Namespace("meeple"), records).open_logs()
            records.close()
        finally:
            await plane.close()
        node = start()

        def taken() -> bool:
            return f"solo: took room {uid} over" in node.log.read_text()

        await eventually(taken, "the room taken over")
    finally:
        for game in games:
            game.cancel()
        await asyncio.gather(*games, return_exceptions=True)
        node.stop()


async def test_many_games_stored_at_once_through_the_store_role_in_the_same_process(
    tmp_path: Path,
) -> None:
    """A rooms role stores finished games through the store role from the event loop's
    default executor (RemoteRecords waits there for the answer); with more games ending
    at once than that executor has threads, the store role still answers every one (its
    database calls have threads of their own), as in a one-process node."""
    bus = LocalBus()
    ns = Namespace("meeple")
    store = Store(tmp_path / "records.sqlite3")
    role = StoreRole(bus, ns, store)
    await role.start()
    try:
        records = RemoteRecords(bus, ns, asyncio.get_running_loop(), timeout=PATIENCE)
        asks = [asyncio.to_thread(records.game_by_uid, f"r{i}") for i in range(40)]
        assert await asyncio.gather(*asks) == [None] * 40
    finally:
        await role.stop()
        await bus.close()
        store.close()


async def _seat_messages(ws: ClientConnection, uid: str, seconds: float) -> list[dict[str, Any]]:
    """What ``ws`` hears within ``seconds`` (a spy's inbox) about game ``uid`` or a seat."""
    heard: list[dict[str, Any]] = []
    with contextlib.suppress(TimeoutError):
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), seconds))
            if message.get("uid") == uid or message["type"] in ("unseated", "seated"):
                heard.append(message)
    return heard


async def test_after_a_crash_a_new_connection_never_gets_a_dead_seat_s_route(
    tmp_path: Path,
) -> None:
    """``meeple serve --runtime node``: a browser plays a server bot; SIGKILL; a new
    process on the same database. Another browser connects first and sits at a table of
    its own; then the first takes its seat back with its token and plays on (the bot
    answers). The other browser is never told of that game (no rack of another seat, no
    "unseated: rejoined"): a restarted edge's seat routes are not the dead process's."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database, "--runtime", "node")
    try:
        ws = await web_client(first.ports["web"])
        create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
        await ws.send(json.dumps({**create, "name": "wes"}))
        seated = await next_of(ws, "seated")
        await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
        view = (await next_of(ws, "seat", GAME_PATIENCE))["data"]
        while view["turn"] != view["you"]:
            view = (await next_of(ws, "seat", GAME_PATIENCE))["data"]
    finally:
        first.kill()  # the browser's connection open: its seat was never held
    await ws.close()
    second = Serve(database, "--runtime", "node")
    try:
        spy = await web_client(second.ports["web"])
        await spy.send(json.dumps({**create, "name": "spy"}))
        assert (await next_of(spy, "seated"))["name"] == "spy"
        back = await web_client(second.ports["web"])
        await back.send(json.dumps({"type": "rejoin", "token": seated["token"]}))
        assert (await next_of(back, "seated", GAME_PATIENCE))["name"] == "wes"
        resumed = await next_of(back, "seat", GAME_PATIENCE)
        uid = resumed["uid"]
        assert resumed["data"]["rack"] == view["rack"]
        await back.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
        after = (await next_of(back, "seat", GAME_PATIENCE))["data"]
        while after["turn"] != after["you"] and not after["over"]:
            after = (await next_of(back, "seat", GAME_PATIENCE))["data"]  # the bot played
        assert len(after["moves"]) > len(view["moves"])
        assert await _seat_messages(spy, uid, 1.0) == []
        await spy.close()
        await back.close()
    finally:
        second.stop()


def _senders(uid: str) -> list[asyncio.Task[Any]]:
    """The edge's command senders of room ``uid`` still running (one per seat's room)."""
    return [t for t in asyncio.all_tasks() if t.get_name() == f"edge room {uid}" and not t.done()]


async def test_a_dropped_browser_s_command_sender_ends_once_the_room_heard_of_it(
    tmp_path: Path, enable: Lexicon, caplog: pytest.LogCaptureFixture
) -> None:
    """A browser seat's connection drops and it comes back by its token: the sender of the
    gone connection's commands ends once the owner heard the drop, so the edge keeps one
    sender per seat and none is left waiting for a command that cannot come (such a task,
    held by nothing, was collected while pending: asyncio's "Task was destroyed but it is
    pending!" in `meeple serve --runtime node`'s log)."""
    node = Node(_config(tmp_path, api=True))
    await node.start()
    seats: list[ClientConnection] = []
    try:
        assert node.api_port is not None
        assert node.rooms is not None
        wes = await _web(node.api_port)
        seats.append(wes)
        create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
        await wes.send(json.dumps({**create, "name": "wes"}))
        wes_seat = await _until(wes, "seated")
        kim = await _web(node.api_port)
        seats.append(kim)
        await kim.send(json.dumps({"type": "sit", "table": wes_seat["table"], "name": "kim"}))
        await _until(kim, "seated")
        await asyncio.gather(_play(wes, enable, until_move=2), _play(kim, enable, until_move=2))
        (uid,) = node.rooms.rooms
        assert len(_senders(uid)) == 2
        await wes.close()  # dropped: the seat is held for its token
        back = await _web(node.api_port)
        seats.append(back)
        await back.send(json.dumps({"type": "rejoin", "token": wes_seat["token"]}))
        await _until(back, "seated")
        # Both play on (each sends commands: the comeback has a sender of its own).
        await asyncio.gather(_play(back, enable, until_move=4), _play(kim, enable, until_move=4))
        await eventually(lambda: len(_senders(uid)) == 2, "the dropped seat's sender ended")
        assert "Task was destroyed" not in caplog.text
    finally:
        for ws in seats:
            await ws.close()
        await node.stop()


# --- the seam in one process: deliveries heard in the room's step, commands inline -------


async def test_a_seat_hears_a_delivery_only_once_its_entry_is_committed(
    tmp_path: Path, enable: Lexicon
) -> None:
    """An edge's seat hears a room's delivery in the room's own step (no queue hop), yet
    never before the log entry it tells of is committed in the backplane's file: each
    delivery's ``logged`` count is at most the committed log's last entry when heard."""
    node = Node(_config(tmp_path))
    await node.start()
    heard: list[tuple[int, int]] = []  # (delivery.logged, committed entries then)
    try:
        assert isinstance(node.plane, LocalBackplane)
        stream = node.plane.stream(node.ns.log_stream)

        def check(subject: str, message: object) -> None:
            if isinstance(message, wire.Delivery) and not message.replay:
                tail = stream.tails.get(node.ns.log(message.uid))
                committed = 0 if tail is None else int(tail.headers[SEQ])
                heard.append((message.logged, committed))

        # Heard as the edge's seats hear (Bus.hear: in the publisher's step).
        sub = await node.bus.hear(f"{node.ns.root}.seat.>", check, wire.registry())
        port = node.listeners["twente"].port
        await asyncio.wait_for(
            asyncio.gather(_twente_bot(port, "ann", enable), _twente_bot(port, "bob", enable)),
            GAME_PATIENCE,
        )
        await sub.close()
    finally:
        await node.stop()
    assert max(logged for logged, _ in heard) > 10  # a whole game was heard
    early = [(logged, committed) for logged, committed in heard if logged > committed]
    assert not early, f"deliveries heard before their entries committed: {early[:5]}"


async def test_a_command_asked_again_after_its_answer_was_lost_is_applied_once(
    tmp_path: Path,
) -> None:
    """A seat's command runs in its asker's step in one process (an inline responder);
    an asker that stops waiting (its answer lost) and asks again with the same number
    is answered "done": the room applies the command once (no second pass, refused as
    out of turn), and its log entry carries the command's tag (what a new owner reads
    to answer a retry after a restart)."""
    node = Node(_config(tmp_path))
    await node.start()
    started: dict[int, wire.Delivery] = {}
    events: list[tuple[int, object]] = []
    clients: list[TwenteClient] = []
    try:
        assert node.rooms is not None
        assert node.rooms.log is not None

        def seen(subject: str, message: object) -> None:
            if isinstance(message, wire.Delivery):
                events.append((message.seat, message.event))
                if isinstance(message.event, GameStarted):
                    started[message.seat] = message

        sub = await node.bus.hear(f"{node.ns.root}.seat.>", seen, wire.registry())
        port = node.listeners["twente"].port
        for name in ("ann", "bob"):
            client = await TwenteClient.connect("127.0.0.1", port, name)
            clients.append(client)
            await client.request_game(2)
        await eventually(lambda: len(started) == 2, "the game started")
        first = started[0]
        assert isinstance(first.event, GameStarted)
        mover = first.event.game.turn
        assert mover is not None
        subject = node.ns.room_command(first.uid)
        command = wire.seal(wire.Command(mover, 1, PassTurn()))
        # Asked, then the asker stops waiting before the answer (its answer is lost).
        lost = asyncio.ensure_future(node.bus.request(subject, command, timeout=PATIENCE))
        await asyncio.sleep(0)
        lost.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lost
        # Asked again with the same number, twice: applied once.
        assert await node.bus.request(subject, command, timeout=PATIENCE) in (OK, DONE)
        assert await node.bus.request(subject, command, timeout=PATIENCE) == DONE
        log = await node.rooms.log.action_log(first.uid)
        assert log is not None
        assert [e.entry.get("cmd") for e in log.entries] == [f"{mover}:1"]
        assert not [e for seat, e in events if seat == mover and isinstance(e, Rejected)]
        await sub.close()
    finally:
        for client in clients:
            await client.close()
        await node.stop()

"""Spectators at scale over real WebSockets (web/fanout.py): one frame for all, deltas.

Random games of all three games run in real rooms on a real server; spectators watch
over loopback WebSockets, some asking for deltas (from the start, joining mid-game,
leaving and coming back), one for whole snapshots. Every spectator's frames only move
forward, a delta always applies to the snapshot that spectator holds, and what each
rebuilds from its snapshot and deltas is the feed's snapshot, seq for seq. No frame
carries a Scrabble rack."""

from __future__ import annotations

import asyncio
import json
import random
import socket
from typing import Any

import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.patience import PATIENCE, eventually
from tests.server.test_log_replay import (
    _idle,
    _room,
    _santorini_command,
    _scrabble_command,
    _Seat,
    _spectrangle_command,
)
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.web import PROTOCOL, apply_patch
from meeple.server.app import MeepleServer
from meeple.server.feed import game_topic
from meeple.server.lobby.tables import Lobby, server_lobby
from meeple.server.store.journal import server_journal
from meeple.web.fanout import Fanout


class Watcher:
    """One spectator's WebSocket: every game frame it got, and the game it rebuilt."""

    def __init__(self, ws: ClientConnection, uid: str, *, delta: bool) -> None:
        self.ws, self.uid, self.delta = ws, uid, delta
        self.held = 0
        self.data: Any = None
        self.states: dict[int, Any] = {}  # seq -> the state rebuilt at that seq
        self.frames: list[dict[str, Any]] = []
        self.task: asyncio.Task[None] | None = None
        self.joining = False  # the next frame answers a subscribe: whole, maybe seq held
        self.joined = asyncio.Event()

    async def subscribe(self) -> None:
        message = {"type": "subscribe", "topic": "game", "uid": self.uid}
        self.joining = True
        self.joined.clear()
        await self.ws.send(json.dumps({**message, "delta": True} if self.delta else message))
        self.task = asyncio.create_task(self._read())
        await asyncio.wait_for(self.joined.wait(), PATIENCE)

    async def unsubscribe(self) -> None:
        await self.ws.send(json.dumps({"type": "unsubscribe", "topic": "game", "uid": self.uid}))
        # Past the unsubscribe: a pong says the server has read it.
        await self.ws.send('{"type":"ping","id":1}')
        assert self.task is not None
        await asyncio.wait_for(self.task, PATIENCE)

    async def _read(self) -> None:
        async for text in self.ws:
            message = json.loads(text)
            if message["type"] == "pong":
                return
            assert message["type"] == "game", message
            self.frames.append(message)
            if self.joining:  # a (re)subscription starts whole, never behind what it held
                assert "data" in message
                assert message["seq"] >= self.held
                self.joining = False
                self.joined.set()
            else:
                assert message["seq"] > self.held, "frames only move forward"
            if "patch" in message:
                assert self.delta, "a delta only to who asked for deltas"
                assert message["base"] == self.held, "a delta applies to the snapshot held"
                self.data = apply_patch(self.data, message["patch"])
            else:
                self.data = message["data"]
            self.held = message["seq"]
            self.states[self.held] = self.data


async def _command(kind: str, room: Any, rng: random.Random, lexicon: Lexicon) -> None:
    if kind == "scrabble":
        who, command = _scrabble_command(room, rng, lexicon)
    elif kind == "santorini":
        who, command = _santorini_command(room, rng)
    else:
        who, command = _spectrangle_command(room, rng)
    if command is not None:
        room.submit(room.seats[who], command)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(["scrabble", "santorini", "spectrangle"]),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(1, 50),
    join=st.integers(0, 50),
    away=st.integers(0, 50),
)
async def test_spectators_rebuild_every_snapshot_from_deltas_and_frames_only_move_forward(
    make_server: ServerFactory,
    gcide: Lexicon,
    kind: str,
    seed: int,
    steps: int,
    join: int,
    away: int,
) -> None:
    """A random game watched four ways; every spectator's state at every seq it reached
    equals the feed's snapshot at that seq (the whole-snapshot spectator's), frames only
    move forward, and the edge holds one feed subscription for all of them."""
    server: MeepleServer = await make_server("twente")
    try:
        await _watch_a_random_game(server, gcide, kind, seed, steps, join, away)
    finally:
        await server.stop()  # one server per example


async def _watch_a_random_game(
    server: MeepleServer, gcide: Lexicon, kind: str, seed: int, steps: int, join: int, away: int
) -> None:
    services = server.services
    lobby: Lobby = server_lobby(services)
    fanout: Fanout = server.listeners["web"].app.state.fanout  # type: ignore[attr-defined]
    rng = random.Random(seed)
    players = 2 if kind == "scrabble" else rng.choice([2, 3])
    room = _room(kind, [_Seat(f"p{i}") for i in range(players)], rng, gcide)
    room.feed = lobby.feed
    room.journal = server_journal(services)
    lobby._by_uid[room.uid] = room  # watchable, as a room the lobby started
    room.start()
    topic = game_topic(room.uid)

    async def watcher(*, delta: bool) -> Watcher:
        w = Watcher(await web_socket(server), room.uid, delta=delta)
        await w.subscribe()
        return w

    whole = await watcher(delta=False)
    early = await watcher(delta=True)
    leaver = await watcher(delta=True)
    late: Watcher | None = None
    racks: set[str] = set()
    for step in range(steps):
        await _idle(room)
        if room.finished or getattr(room.game, "is_over", False):
            break
        if kind == "scrabble":
            # Five letters or more: a shorter rack (IT, late in a game) can be a word on the
            # board or in the moves, which is no leak.
            racks.update(r for r in room.game.racks if len(r) >= 5)
        if step == join:
            late = await watcher(delta=True)
        if step == away:
            await leaver.unsubscribe()
            await leaver.subscribe()  # back: a whole snapshot first, then deltas
        await _command(kind, room, rng, gcide)
        await asyncio.sleep(0)
    await _idle(room)
    await asyncio.sleep(0.05)  # the room may publish once more as it ends
    final = lobby.feed.last(topic)
    assert final is not None
    assert lobby.feed.subscribers(topic) == 1, "one feed subscription for the whole edge"
    watchers = [w for w in (whole, early, leaver, late) if w is not None]
    assert fanout.watchers(topic) == len(watchers)
    for w in watchers:
        final = lobby.feed.last(topic)
        assert final is not None
        await eventually(
            lambda w=w, seq=final.seq: w.held == seq, "the watcher caught up", every=0.01
        )
        assert w.data == final.data
        for seq, state in w.states.items():
            if seq in whole.states:
                assert state == whole.states[seq], f"seq {seq} rebuilt differently"
        for frame in w.frames:
            leaked = set(_strings(frame)) & racks
            assert not leaked, f"a frame carries a rack: {sorted(leaked)}"
            _assert_nothing_hidden(frame)
    deltas = sum("patch" in f for w in watchers for f in w.frames)
    if final.seq > 3:
        assert deltas > 0, "the delta spectators got deltas"
    assert all("patch" not in f for f in whole.frames)
    for w in watchers:
        await w.ws.close()
        if w.task is not None:
            await asyncio.wait_for(w.task, PATIENCE)
    await eventually(lambda: fanout.watchers(topic) == 0, "every watcher gone", every=0.01)
    assert lobby.feed.subscribers(topic) == 0, "the last spectator gone, the edge stops listening"
    lobby._by_uid.pop(room.uid, None)


async def test_a_spectator_gets_the_whole_snapshot_when_the_patch_is_not_smaller(
    make_server: ServerFactory,
) -> None:
    """The lobby topic with deltas: the first frame whole; a change that rewrites most of
    the snapshot comes whole again (seq forward), never as a longer patch."""
    server = await make_server("twente")
    lobby: Lobby = server_lobby(server.services)
    ws = await web_socket(server)
    await ws.send('{"type":"subscribe","topic":"lobby","delta":true}')
    first = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    assert first["type"] == "lobby"
    assert "data" in first
    # A table appears: a small change of a small snapshot.
    lobby.feed.publish("lobby", lambda: {**first["data"], "tables": [{"id": "t1"}]})
    second = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    assert second["seq"] > first["seq"]
    whole = {"queues": ["x" * 50], "tables": [], "rooms": [], "store": "y" * 50}
    lobby.feed.publish("lobby", lambda: whole)
    third = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    assert third["seq"] > second["seq"]
    assert third["data"] == whole
    assert "patch" not in third
    await ws.close()


def _assert_nothing_hidden(frame: dict[str, Any]) -> None:
    """No rack (a seat's own) in a whole snapshot or a patch, and the bag only as a
    count: a patch's pointers and values are checked like a snapshot's keys."""
    docs = [frame["data"]] if "data" in frame else [op.get("value") for op in frame["patch"]]
    paths = [] if "data" in frame else [op["path"] for op in frame["patch"]]
    for path in paths:
        tokens = path.split("/")
        assert "rack" not in tokens
        assert "racks" not in tokens
    for doc in docs:
        assert "rack" not in _keys(doc)
        assert "racks" not in _keys(doc)
        view = doc.get("view") if isinstance(doc, dict) else None
        if isinstance(view, dict) and "bag" in view:
            assert isinstance(view["bag"], int), "the bag is a count, never its tiles"
    for op in [] if "data" in frame else frame["patch"]:
        if op["path"].endswith("/bag"):
            assert isinstance(op["value"], int), "the bag is a count, never its tiles"


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def test_a_slow_spectator_is_skipped_then_catches_up_whole(
    make_server: ServerFactory,
) -> None:
    """A spectator that stops reading (a small receive buffer, nothing read) while big
    snapshots are published: publishing never waits, the server skips it while its
    socket is full, and once it reads again its frames still only move forward, with a
    gap, and it ends holding the newest snapshot."""
    server = await make_server("twente")
    lobby: Lobby = server_lobby(server.services)
    port = server.ports["web"]
    slow = await _RawSocket.open(port)
    await slow.send({"type": "hello", "protocol": PROTOCOL})
    await slow.send({"type": "subscribe", "topic": "lobby", "delta": True})
    assert (await slow.recv())["type"] == "welcome"
    first = await slow.recv()  # the lobby's snapshot; then it reads nothing for a while
    rng = random.Random(5)
    # More than the kernel's send buffer can grow to (tcp_wmem: 4 MiB) and uvicorn's.
    published = []
    for i in range(50):
        # Big, and unlike each other, so a delta is not much smaller than the whole.
        big = {"queues": [], "tables": [], "rooms": [], "store": None, "n": i}
        big["pad"] = rng.randbytes(100_000).hex()
        item = lobby.feed.publish("lobby", lambda big=big: big)
        assert item is not None
        published.append(item.seq)
        await asyncio.sleep(0.01)
    last = lobby.feed.last("lobby")
    assert last is not None
    seqs: list[int] = []
    held, data = first["seq"], first["data"]
    while held < last.seq:
        message = await asyncio.wait_for(slow.recv(), PATIENCE)
        assert message["type"] == "lobby"
        assert message["seq"] > held
        if "patch" in message:
            assert message["base"] == held
            data = apply_patch(data, message["patch"])
        else:
            data = message["data"]
        held = message["seq"]
        seqs.append(held)
    assert data == last.data
    assert len(seqs) < len(published), "the slow spectator was skipped for a while"
    slow.close()


class _RawSocket:
    """A WebSocket client on a bare socket with a 4 KiB receive buffer, that reads
    nothing until asked (RFC 6455 framing by hand: a slow browser on a slow link)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    @classmethod
    async def open(cls, port: int) -> _RawSocket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(sock, ("127.0.0.1", port))
        raw = cls(sock)
        await loop.sock_sendall(
            sock,
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode(),
        )
        head = await raw._until(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return raw

    async def _more(self) -> None:
        data = await asyncio.get_running_loop().sock_recv(self.sock, 65536)
        if not data:
            raise EOFError
        self.buffer += data

    async def _until(self, separator: bytes) -> bytes:
        while separator not in self.buffer:
            await self._more()
        head, _, self.buffer = self.buffer.partition(separator)
        return head

    async def _take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            await self._more()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    async def send(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message).encode()
        # Masked, as a client must (§5.3); the zero key leaves the payload as it is.
        frame = bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload
        await asyncio.get_running_loop().sock_sendall(self.sock, frame)

    async def recv(self) -> dict[str, Any]:
        opcode, n = await self._take(2)
        if n == 126:
            n = int.from_bytes(await self._take(2), "big")
        elif n == 127:
            n = int.from_bytes(await self._take(8), "big")
        payload = await self._take(n)
        assert opcode == 0x81, "one final text frame per message"
        message: dict[str, Any] = json.loads(payload)
        return message

    def close(self) -> None:
        self.sock.close()


async def test_the_web_socket_offers_no_per_connection_compression(
    make_server: ServerFactory,
) -> None:
    """A client offering permessage-deflate gets none: every spectator is sent the same
    uncompressed bytes (docs/benchmarks.md, "Web fan-out": the choice and its figures)."""
    server = await make_server("twente")
    async with websockets.connect(
        f"ws://127.0.0.1:{server.ports['web']}/ws", compression="deflate"
    ) as ws:
        assert ws.protocol.extensions == []
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
        assert json.loads(await ws.recv())["type"] == "welcome"

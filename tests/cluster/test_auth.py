"""Least rights on NATS (issue 30.1; docs/cluster.md, Permissions), against a real
nats-server configured by meeple.cluster.auth for the namespace ``meeple``: an edge's
credentials reach its own seats' subjects only (not another edge's, nor logs, KV or the
JetStream API), each role's user can do its job and no more, and a whole game through
nodes that each run with their own user plays to its end through a rooms node's kill."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import re
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from nats.aio.msg import Msg
from tests.cluster.test_nodes import Bot
from tests.natsd import AUTH as DEPLOY_FILE
from tests.patience import PATIENCE, eventually

from meeple.bus import BusError, RemoteError, matches
from meeple.bus.natsbus import NatsBus
from meeple.bus.subjects import EDGE_LOBBY_OPS, STORE_ACCOUNTS, STORE_KEEPS, STORE_READS, Namespace
from meeple.cli.main import main
from meeple.cluster.auth import (
    ADMIN_USER,
    DEPLOY_EDGES,
    DEPLOY_NODES,
    auth_config,
    edge_user,
    node_user,
    users,
)
from meeple.cluster.jetstream import JetStreamBackplane, connect_node
from meeple.cluster.lease import Leases, room_key
from meeple.cluster.lobbystate import LobbyState
from meeple.cluster.log import JetStreamLog
from meeple.cluster.natsserver import NatsServer, NatsServerError, find_binary
from meeple.cluster.registry import Names, RejoinSeat, RejoinTokens
from meeple.node import wire
from meeple.node.launch import NodeProcess, start_node
from meeple.protocols.twente.messages import GameOverReason
from meeple.server.store.database import Store

NS = Namespace("meeple")
EDGES = ("e1", "e2")
NODES = (("rooms",), ("lobby", "store"), ("lobby",), ("store",), ("rooms", "lobby", "store"))


@dataclass
class Server:
    nats: NatsServer
    passwords: dict[str, str]

    @property
    def url(self) -> str:
        return self.nats.url


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A NATS server with the users meeple.cluster.auth writes for edges e1 and e2, the
    role mixes of :data:`NODES` and the admin."""
    try:
        find_binary()
    except NatsServerError as e:
        pytest.skip(str(e))
    directory = tmp_path_factory.mktemp("auth")
    conf = directory / "meeple-auth.conf"
    conf.write_text(auth_config(NS, EDGES, NODES, admin=True))
    passwords = {user: f"pw{secrets.token_hex(16)}" for user in users(EDGES, NODES, admin=True)}
    env = {users(EDGES, NODES, admin=True)[u]: pw for u, pw in passwords.items()}
    with NatsServer(include=conf, environment=env) as nats_server:
        yield Server(nats_server, passwords)


class Conn:
    """A connection as one user, keeping the server's errors (permission violations)."""

    def __init__(self, nc: Client, errors: list[str]) -> None:
        self.nc, self.errors = nc, errors

    async def refused(self, kind: str, subject: str, timeout: float = 5.0) -> None:
        """Wait for the server's permissions violation for ``kind`` (publish or
        subscription) on ``subject``."""
        wanted = f'permissions violation for {kind} to "{subject.lower()}"'
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if any(wanted in e for e in self.errors):
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"not refused: {wanted}; errors: {self.errors}")


@contextlib.asynccontextmanager
async def connect(server: Server, user: str, inbox: str | None = None) -> AsyncIterator[Conn]:
    errors: list[str] = []

    async def on_error(e: Exception) -> None:
        errors.append(str(e).lower())  # nats-py lowercases some of the server's -ERRs

    options: dict[str, Any] = {} if inbox is None else {"inbox_prefix": inbox.encode()}
    nc = await nats.connect(
        server.url,
        user=user,
        password=server.passwords[user],
        error_cb=on_error,
        max_reconnect_attempts=0,
        **options,
    )
    try:
        yield Conn(nc, errors)
    finally:
        await nc.close()


def edge_conn(server: Server, edge: str) -> contextlib.AbstractAsyncContextManager[Conn]:
    return connect(server, edge_user(edge), NS.edge_inbox_of(edge))


def test_the_deploy_file_is_the_generators_output_for_the_production_layout() -> None:
    """deploy/nats/meeple-auth.conf is `meeple cluster auth` for edge-1..3 and the
    production role mixes (a comment header above it), so it cannot drift from the code."""
    text = DEPLOY_FILE.read_text()
    assert text.endswith(auth_config(NS, DEPLOY_EDGES, DEPLOY_NODES, admin=True))
    assert 'meeple-edge"' not in text  # no edge user shared by every edge


async def test_an_edge_reads_and_writes_only_its_own_seats(server: Server) -> None:
    """Edge e1's credentials: its own seats, requests in its own name, the store's reads
    work; e2's seats (subscribing, publishing), requests in e2's name, a lobby's
    ``roomdone``, e2's and the nodes' inboxes, room logs, KV and the JetStream API are
    refused by the server, and e1 hears nothing of e2's seats."""
    async with (
        connect(server, ADMIN_USER) as admin,
        edge_conn(server, "e1") as e1,
        edge_conn(server, "e2") as e2,
    ):
        node = NatsBus(admin.nc, owns=False)

        async def answer(subject: str, payload: bytes) -> bytes:
            return f"{Namespace.sender_of(subject)}:".encode() + payload

        await node.serve_from(NS.room_commands("r1"), answer)
        await node.serve_from(NS.lobby_requests("sit"), answer)
        await node.serve_from(NS.lobby_requests("roomdone"), answer)
        for op in STORE_READS:
            await node.serve_from(NS.store_read(op), answer)
        for op in STORE_ACCOUNTS:  # issue 32.6: the account pages' requests
            await node.serve_from(NS.store_account(op), answer)
        for op in STORE_KEEPS:  # issue 34: a replay's analysis
            await node.serve_from(NS.store_keep(op), answer)
        await admin.nc.flush()
        mine = NsBus(e1.nc, "e1")
        # What it may do: requests in its own name (the owner is told it is e1).
        assert await mine.ask(mine.ns.room_command("r1")) == b"e1:x"
        assert await mine.ask(mine.ns.lobby_request("sit")) == b"e1:x"
        for op in (*STORE_READS, *STORE_KEEPS, *STORE_ACCOUNTS):
            assert await mine.ask(NS.store_request(op)) == f"{op}:x".encode()
        heard: dict[str, list[str]] = {"e1": [], "e2": []}

        def into(edge: str) -> Any:
            async def got(msg: Msg) -> None:
                heard[edge].append(msg.subject)

            return got

        await e1.nc.subscribe(NS.edge_seats("e1"), cb=into("e1"))
        await e2.nc.subscribe(NS.edge_seats("e2"), cb=into("e2"))
        # What it may not: another edge's seats, whatever the pattern, and its inbox.
        forbidden_subs = [
            NS.edge_seats("e2"),
            NS.seat("e2-1", "r1"),
            f"{NS.root}.seat.>",
            f"{NS.root}.seat.*.*.*",
            f"{NS.root}.room.*.cmd.*",
            f"{NS.root}.lobby.req.*.*",
            NS.edge_inbox_of("e2") + ".>",
            NS.edge_inbox + ".>",
            "_INBOX.>",
            NS.logs,
            "$KV.>",
            f"$KV.{NS.tokens_bucket}.>",
            "$JS.API.>",
            ">",
        ]
        for subject in forbidden_subs:
            await e1.nc.subscribe(subject, cb=into("e1"))
        for subject in forbidden_subs:
            await e1.refused("subscription", subject)
        # Requests in e2's name, or a room owner's word to the lobby: refused.
        for subject in (
            NS.for_node("e2").room_command("r1"),
            NS.for_node("e2").lobby_request("sit"),
            NS.for_node("e1").lobby_request("roomdone"),
            NS.store_request("record_game"),
        ):
            with pytest.raises(BusError):
                await mine.ask(subject, timeout=0.5)
            await e1.refused("publish", subject)
        # Forged events on e2's seats (or its own: only a room's owner speaks there).
        for subject in (NS.seat("e2-1", "r1"), NS.seat("e2-1", "lobby"), NS.seat("e1-1", "r1")):
            await e1.nc.publish(subject, b"forged")
            await e1.refused("publish", subject)
        # The nodes' words reach e2's seats and e1's, each only its own edge.
        for route in ("e2-1", "e1-1", "e2-7"):
            await admin.nc.publish(NS.seat(route, "r1"), b"event")
        await admin.nc.flush()
        until = time.monotonic() + 5
        while (len(heard["e1"]), len(heard["e2"])) < (1, 2) and time.monotonic() < until:
            await asyncio.sleep(0.01)
        assert heard == {
            "e1": [NS.seat("e1-1", "r1")],
            "e2": [NS.seat("e2-1", "r1"), NS.seat("e2-7", "r1")],
        }
        # The JetStream API (logs, buckets) answers it nothing.
        js = e1.nc.jetstream(timeout=0.5)
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await js.stream_info(NS.log_stream)
        await e1.refused("publish", f"$JS.API.STREAM.INFO.{NS.log_stream}")


class NsBus:
    """An edge's requests as the node sends them."""

    def __init__(self, nc: Client, edge: str) -> None:
        self.bus = NatsBus(nc, owns=False)
        self.ns = NS.for_node(edge)

    async def ask(self, subject: str, timeout: float = 2.0) -> bytes:
        return await self.bus.request(subject, b"x", timeout=timeout)


_UIDS = st.sampled_from(["r1", "r2"])
_EDGES = st.sampled_from(["e1", "e2", "e3", "_"])
_SUBJECTS = st.one_of(
    st.builds(lambda e, n, u: NS.seat(f"{e}-{n}", u), _EDGES, st.integers(1, 3), _UIDS),
    st.builds(lambda e, u: NS.for_node(e).room_command(u), _EDGES, _UIDS),
    st.builds(
        lambda e, op: NS.for_node(e).lobby_request(op),
        _EDGES,
        st.sampled_from([*EDGE_LOBBY_OPS, "roomdone", "x"]),
    ),
    st.builds(
        lambda op: NS.store_request(op),
        st.sampled_from(
            [*STORE_READS, *STORE_KEEPS, *STORE_ACCOUNTS, "record_game", "account_hash"]
        ),
    ),
    st.builds(lambda e: NS.node(e), _EDGES),
    st.builds(lambda e: NS.edge_inbox_of(e) + ".abc.1", _EDGES),
    st.builds(lambda u: NS.log(u), _UIDS),
    st.builds(lambda b: f"$KV.{b}.k", st.sampled_from(NS.buckets)),
    st.just(NS.lobby_events),
    st.just(NS.rooms_open),
    st.just("_INBOX.abc.1"),
    st.just(f"$JS.API.STREAM.INFO.{NS.log_stream}"),
    st.builds(lambda u: NS.view(u), _UIDS),
    st.builds(lambda u: NS.watch_chat(u), _UIDS),
)
_sentinels = itertools.count()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(subjects=st.lists(_SUBJECTS, min_size=1, max_size=6))
async def test_whatever_an_edge_publishes_it_reaches_only_what_is_its_own(
    server: Server, subjects: list[str]
) -> None:
    """Edge e1 publishes on any subject of the cluster; a node listening to everything
    hears it only on the subjects its permissions name: never another edge's seat,
    request in another edge's name, a log, a bucket, an inbox, a seat event."""
    allowed = [
        *(f"{NS.root}.room.*.cmd.e1", NS.node("e1"), f"{NS.root}.lobby.chat.*"),
        f"{NS.root}.watchchat.*",  # a game's spectators' chat (issue 34.5)
        *(NS.for_node("e1").lobby_request(op) for op in EDGE_LOBBY_OPS),
        *(NS.store_read(op) for op in STORE_READS),
        *(NS.store_keep(op) for op in STORE_KEEPS),
        *(NS.store_account(op) for op in STORE_ACCOUNTS),
    ]
    async with connect(server, ADMIN_USER) as admin, edge_conn(server, "e1") as e1:
        got: list[tuple[str, bytes]] = []
        done = asyncio.Event()
        sentinel = f"{NS.root}.lobby.chat.s{next(_sentinels)}"

        async def hear(msg: Msg) -> None:
            got.append((msg.subject, msg.data))
            if msg.subject == sentinel:
                done.set()

        for pattern in (">", "$KV.>", "$JS.API.>"):
            await admin.nc.subscribe(pattern, cb=hear)
        await admin.nc.flush()
        ready = f"{sentinel}-ready"

        async def heard() -> bool:  # until the listener hears e1 at all
            await e1.nc.publish(ready, b"")
            await e1.nc.flush()
            await asyncio.sleep(0.05)
            return any(subject == ready for subject, _ in got)

        await eventually(heard, "the listener hearing e1", every=0)
        got.clear()
        for i, subject in enumerate(subjects):
            await e1.nc.publish(subject, f"m{i}".encode())
        await e1.nc.publish(sentinel, b"end")  # after the others: one publisher's order
        try:
            await asyncio.wait_for(done.wait(), 10)
        except TimeoutError:
            raise AssertionError(f"the sentinel did not come: {got}, {e1.errors}") from None
    arrived = {data.decode() for subject, data in got if subject != sentinel}
    for i, subject in enumerate(subjects):
        mine = any(matches(p, subject) for p in allowed)
        assert (f"m{i}" in arrived) == mine, (subject, arrived)
        if mine:
            parts = subject.split(".")
            assert not {"e2", "e3", "_", "seat", "log"} & set(parts), subject


async def test_each_role_user_does_its_job_and_no_more(server: Server) -> None:
    """The rooms user appends and reads logs, holds and watches leases, writes tokens;
    the lobby user keeps its state, names, tokens and lease; the store user only serves
    the store's requests. Each is refused the others' buckets and streams, and the seats
    and requests that are not its role's."""
    store = Store(":memory:")
    rooms_nc = await connect_node(
        server.url,
        NS,
        user=node_user(["rooms"]),
        password=server.passwords[node_user(["rooms"])],
        name="rooms1",
    )
    lobby_nc = await connect_node(
        server.url,
        NS,
        user=node_user(["lobby"]),
        password=server.passwords[node_user(["lobby"])],
        name="lobby1",
    )
    try:
        # rooms: a log, a lease (watched), a token.
        log = JetStreamLog(JetStreamBackplane(rooms_nc), NS, store)
        uid = f"r{secrets.token_hex(4)}"
        await log.open_log(uid, "scrabble", {"rack": "SECRET"})
        await log.append_log(uid, 1, {"a": 1})
        found = await log.action_log(uid)
        assert found is not None
        assert [e.entry for e in found.entries] == [{"a": 1}]
        assert uid in await log.open_logs()
        leases = Leases(JetStreamBackplane(rooms_nc), NS, ttl=2)
        events: asyncio.Queue[Any] = asyncio.Queue()

        async def watch() -> None:
            async for event in leases.watch():
                await events.put(event)

        watcher = asyncio.ensure_future(watch())
        try:
            lease = await leases.acquire(room_key(uid), "rooms1")
            assert lease is not None
            lease = await leases.renew(lease)
            event = await asyncio.wait_for(events.get(), PATIENCE)
            assert event.key == room_key(uid)
            await leases.release(lease)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        token = secrets.token_hex(32)
        await RejoinTokens(JetStreamBackplane(rooms_nc), NS).put(token, RejoinSeat(uid, 0), ttl=30)
        # lobby: its state, names, the tokens, its lease.
        state = LobbyState(JetStreamBackplane(lobby_nc), NS)
        await state.claim("lobby1", 1)
        await state.write("lobby1", {"tables": []})
        assert (await state.read())[0] == {"tables": []}
        names = Names(JetStreamBackplane(lobby_nc), NS)
        holder = f"e1.{secrets.token_hex(2)}"
        assert await names.claim(f"ann{secrets.token_hex(2)}", holder)
        assert await RejoinTokens(JetStreamBackplane(lobby_nc), NS).find(token) == RejoinSeat(
            uid, 0
        )
        held = await Leases(JetStreamBackplane(lobby_nc), NS).acquire(
            f"lobby-{secrets.token_hex(2)}", "lobby1"
        )
        assert held is not None
        # No more than that.
        async with (
            connect(server, node_user(["rooms"])) as rooms,
            connect(server, node_user(["lobby"])) as lobby,
            connect(server, node_user(["store"])) as store_user,
        ):
            for conn, kind, subject in (
                (rooms, "publish", f"$KV.{NS.lobby_bucket}.state"),
                (rooms, "publish", f"$KV.{NS.names_bucket}.ann"),
                (rooms, "publish", NS.lobby_events),
                (rooms, "subscription", f"{NS.root}.lobby.req.*.*"),
                (rooms, "publish", NS.for_node("e1").lobby_request("sit")),
                (lobby, "publish", NS.log(uid)),
                (lobby, "publish", NS.seat("e1-1", uid)),
                (lobby, "publish", f"$JS.API.DIRECT.GET.{NS.log_stream}"),
                (lobby, "subscription", f"{NS.root}.room.*.cmd.*"),
                (store_user, "publish", NS.log(uid)),
                (store_user, "publish", "$JS.API.INFO"),
                (store_user, "publish", f"$KV.{NS.tokens_bucket}.x"),
                (store_user, "publish", NS.seat("e1-1", uid)),
                (store_user, "subscription", NS.edge_seats("e1")),
                (store_user, "subscription", f"{NS.root}.lobby.req.*.*"),
            ):
                if kind == "publish":
                    await conn.nc.publish(subject, b"forged")
                else:
                    await conn.nc.subscribe(subject)
                await conn.nc.flush()
                await conn.refused(kind, subject)
            # The store user serves the store's requests, reads and writes.
            served = NatsBus(store_user.nc, owns=False)

            async def answer(payload: bytes) -> bytes:
                return b"stored"

            await served.serve(NS.store_request("record_game"), answer, queue="store")
            await served.serve(NS.store_read("read_games"), answer, queue="store")
            asker = NatsBus(rooms_nc, owns=False)
            assert await asker.request(NS.store_request("record_game"), b"{}") == b"stored"
            async with edge_conn(server, "e1") as e1:
                reader = NatsBus(e1.nc, owns=False)
                assert await reader.request(NS.store_read("read_games"), b"{}") == b"stored"
    finally:
        await rooms_nc.close()
        await lobby_nc.close()
        store.close()


@pytest.mark.slow
async def test_a_game_through_nodes_each_with_its_own_user_survives_a_kill(
    server: Server, tmp_path: Path
) -> None:
    """Two edges (each its own user), two rooms nodes (meeple-rooms) and a lobby and
    store node (meeple-lobby-store): two Twente bots, one per edge, play; the room's
    owner is SIGKILLed mid-game and the other rooms node takes the room over; the game
    ends alike for both. Meanwhile a command in e2's name for e1's seat (which e2's
    user may send) is refused by the room's owner, and the game goes on."""
    started: list[NodeProcess] = []

    async def start(name: str, roles: tuple[str, ...], *extra: str, **kw: Any) -> NodeProcess:
        user = edge_user(name) if roles == ("edge",) else node_user(roles)
        node = await asyncio.to_thread(
            start_node,
            name,
            roles,
            server.url,
            user=user,
            password=server.passwords[user],
            log_dir=tmp_path,
            extra_args=extra,
            **kw,
        )
        started.append(node)
        return node

    admin = await nats.connect(server.url, user=ADMIN_USER, password=server.passwords[ADMIN_USER])
    try:
        await start("hub", ("lobby", "store"), database=str(tmp_path / "meeple.sqlite3"))
        rooms = {"rooms1": await start("rooms1", ("rooms",))}
        e1 = await start("e1", ("edge",))
        e2 = await start("e2", ("edge",))
        reader = JetStreamLog(JetStreamBackplane(admin), NS, Store(":memory:"))
        before = set(await reader.open_logs())
        ann = Bot("ann", e1.listeners["twente"], pace=0.15)
        bob = Bot("bob", e2.listeners["twente"], pace=0.15)
        games = [asyncio.ensure_future(b.play()) for b in (ann, bob)]
        until = time.monotonic() + 30
        uid = ""
        while not uid and time.monotonic() < until:
            uid = next(iter(set(await reader.open_logs()) - before), "")
            await asyncio.sleep(0.05)
        assert uid, "no room was opened"
        rooms["rooms2"] = await start("rooms2", ("rooms",))
        until = time.monotonic() + 30
        while time.monotonic() < until:
            found = await reader.action_log(uid)
            if found is not None and len(found.entries) >= 4:
                break
            await asyncio.sleep(0.05)
        assert found is not None
        seats = found.genesis["seats"]
        ann_seat = next(i for i, s in enumerate(seats) if str(s["route"]).startswith("e1-"))
        # e2 may send commands in its own name; for e1's seat the owner refuses them.
        async with edge_conn(server, "e2") as forger:
            forged = wire.dumps(wire.Command(ann_seat, 10**6, wire.Leave()))
            with pytest.raises(RemoteError, match="not a seat of this edge"):
                await NatsBus(forger.nc, owns=False).request(
                    NS.for_node("e2").room_command(uid), forged, timeout=5
                )
        lease = await Leases(JetStreamBackplane(admin), NS).holder(room_key(uid))
        assert lease is not None
        rooms[lease.owner].kill()
        overs = await asyncio.wait_for(asyncio.gather(*games), 90)
    except BaseException:
        for node in started:
            print(f"== {node.name}\n{node.log.read_text(errors='replace')[-3000:]}")
        raise
    finally:
        for node in reversed(started):
            node.stop(timeout=10)
        await admin.close()
    assert overs[0].scores == overs[1].scores
    assert overs[0].reason is overs[1].reason is GameOverReason.WIN
    assert (await _closed_log(server, uid)).end_reason is not None


async def _closed_log(server: Server, uid: str) -> Any:
    nc = await nats.connect(server.url, user=ADMIN_USER, password=server.passwords[ADMIN_USER])
    try:
        log = JetStreamLog(JetStreamBackplane(nc), NS, Store(":memory:"))
        until = time.monotonic() + 30
        while time.monotonic() < until:
            found = await log.action_log(uid)
            if found is not None and found.end_reason is not None:
                return found
            await asyncio.sleep(0.1)
        raise AssertionError(f"room {uid}'s log did not end")
    finally:
        await nc.close()


def test_meeple_cluster_auth_prints_the_users_and_their_password_variables(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``meeple cluster auth`` prints the generator's block and lists each user's
    password variable on stderr; --out writes the same text."""
    argv = ["cluster", "auth", "--edge", "edge-1", "--node", "rooms", "--node", "lobby,store"]
    assert main([*argv, "--admin"]) == 0
    out, err = capsys.readouterr()
    assert out == auth_config(NS, ["edge-1"], [("rooms",), ("lobby", "store")], admin=True)
    assert err.splitlines() == [
        "meeple-admin: password from MEEPLE_NATS_ADMIN_PASSWORD",
        "meeple-rooms: password from MEEPLE_NATS_ROOMS_PASSWORD",
        "meeple-lobby-store: password from MEEPLE_NATS_LOBBY_STORE_PASSWORD",
        "meeple-edge-edge-1: password from MEEPLE_NATS_EDGE_EDGE_1_PASSWORD",
    ]
    assert main([*argv, "--out", str(tmp_path / "auth.conf")]) == 0
    assert (tmp_path / "auth.conf").read_text() == auth_config(
        NS, ["edge-1"], [("rooms",), ("lobby", "store")]
    )


@settings(max_examples=100, deadline=None)
@given(
    edges=st.lists(st.text(max_size=10), max_size=3),
    roles=st.lists(st.text(alphabet="rlobystem,", max_size=14), max_size=3),
    namespace=st.text(max_size=8),
)
def test_meeple_cluster_auth_writes_a_file_or_refuses_whatever_it_is_given(
    edges: list[str], roles: list[str], namespace: str
) -> None:
    """Whatever names, roles and namespace it is given, it prints users whose subjects
    are the given names as whole tokens, or exits 2 saying why: no name can widen an
    edge's rights (a dot, a wildcard, a space) or make two users share a password."""
    # --opt=value: a value that starts with "-" is a value, not another option
    argv = ["cluster", "auth", f"--namespace={namespace}"]
    argv += [f"--edge={e}" for e in edges]
    argv += [f"--node={r}" for r in roles]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code == 2:
        assert err.getvalue().startswith("meeple cluster auth: ")
        return
    assert code == 0
    text = out.getvalue()
    for edge in edges:
        assert f'user: "meeple-edge-{edge}"' in text
        assert f'"{namespace}.seat.{edge}.>"' in text
    subjects = re.findall(r'^ +"([^"]*)",?$', text, flags=re.M)
    for subject in subjects:
        tokens = subject.split(".")
        assert all(tokens), subject
        assert all(t in ("*", ">") or ("*" not in t and ">" not in t) for t in tokens), subject
        assert " " not in subject

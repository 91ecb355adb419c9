"""An edge's CMPN402 listener in process, over the real NATS: what an agent sends before
its game (random bytes, hypothesis) never costs the edge more than that connection, a
malformed NAME closes it with the referee's code, and the first good NAME is the one
the edge asks the cluster about (the seat a game keeps for it: meeple.node.cmpn402)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path

import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.client import Client
from nats.aio.msg import Msg
from tests.patience import PATIENCE
from websockets.exceptions import ConnectionClosed

from meeple.bus.natsbus import NatsBus
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.cmpn402 import FINDER
from meeple.node.cmpn402_edge import EdgeCmpn402Listener
from meeple.node.edge import EdgeLobby
from meeple.protocols.cmpn402.errors import Answer, RemoteProtocolError
from meeple.protocols.cmpn402.messages import Name, decode_client
from meeple.server.app import Services
from meeple.server.config import ListenerConfig, ServerConfig

# Messages an agent might send: any bytes, and NAMEs good and bad (type 0).
MESSAGES = st.one_of(
    st.binary(max_size=40),
    st.binary(max_size=70).map(lambda b: b"\x00" + b),
    st.text(min_size=1, max_size=20).map(lambda t: b"\x00" + t.encode()),
)


def _expected(junk: list[bytes]) -> tuple[str | None, int | None]:
    """The name the edge asks about, or the close code, per the protocol's decoder."""
    for data in junk:
        try:
            message = decode_client(data)
        except RemoteProtocolError as e:
            if e.answer is Answer.CLOSE:
                return None, int(e.close_code or 1002)
            continue
        if isinstance(message, Name):
            return message.name, None
    return "zed", None


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(junk=st.lists(MESSAGES, max_size=8))
async def test_what_an_agent_sends_before_its_game(
    node: Client, nats_ns: Namespace, junk: list[bytes]
) -> None:
    asked: asyncio.Queue[str] = asyncio.Queue()

    async def seats(msg: Msg) -> None:  # a rooms node that keeps no seat for anyone
        await asked.put(wire.loads(msg.data, str))
        await msg.respond(wire.dumps(None))

    finder = await node.subscribe(nats_ns.room_commands(FINDER), cb=seats)
    lobby = EdgeLobby(NatsBus(node), nats_ns, "e1")
    await lobby.start()
    services = Services(ServerConfig())
    services.lobby = lobby
    listener = EdgeCmpn402Listener(services, "cmpn402", ListenerConfig(port=0))
    await listener.start()
    name, code = _expected(junk)
    try:
        async with websockets.connect(f"ws://127.0.0.1:{listener.port}") as ws:
            assert await asyncio.wait_for(ws.recv(), 5) == b"\x00"  # spec: NAME?
            with contextlib.suppress(ConnectionClosed):
                for data in junk:
                    await ws.send(data)
                if name == "zed":
                    await ws.send(Name("zed").encode())
            if code is not None:
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 5)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == code
                assert asked.empty()
            else:
                assert await asyncio.wait_for(asked.get(), PATIENCE) == name
                await asyncio.wait_for(await ws.ping(), PATIENCE)  # the connection goes on
                assert asked.empty()  # one ask per connection
    finally:
        await listener.close(0.5)
        await lobby.close()
        await finder.unsubscribe()


async def test_an_edge_checks_the_organisers_secrets(
    node: Client, nats_ns: Namespace, tmp_path: Path
) -> None:
    """With ``[cmpn402] agent_secrets`` an edge closes a NAME that is not a line of the
    file with 1008 and asks the cluster about nobody; a line's bare name is the one it
    asks about (the seat a game keeps for alpha), never the secret (issue 30.6)."""
    asked: asyncio.Queue[str] = asyncio.Queue()

    async def seats(msg: Msg) -> None:
        await asked.put(wire.loads(msg.data, str))
        await msg.respond(wire.dumps(None))

    secrets = tmp_path / "agents.secrets"
    secrets.write_text("alpha#alpha-s3cret\n", encoding="utf-8")
    finder = await node.subscribe(nats_ns.room_commands(FINDER), cb=seats)
    lobby = EdgeLobby(NatsBus(node), nats_ns, "e1")
    await lobby.start()
    base = ServerConfig()
    config = replace(base, cmpn402=replace(base.cmpn402, agent_secrets=str(secrets)))
    services = Services(config)
    services.lobby = lobby
    listener = EdgeCmpn402Listener(services, "cmpn402", ListenerConfig(port=0))
    await listener.start()
    try:
        for wrong in ("alpha", "alpha#alpha-s3cre", "bravo#alpha-s3cret"):
            async with websockets.connect(f"ws://127.0.0.1:{listener.port}") as ws:
                assert await asyncio.wait_for(ws.recv(), 5) == b"\x00"
                await ws.send(Name(wrong).encode())
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(ws.recv(), 5)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1008
        assert asked.empty()
        async with websockets.connect(f"ws://127.0.0.1:{listener.port}") as ws:
            assert await asyncio.wait_for(ws.recv(), PATIENCE) == b"\x00"
            await ws.send(Name("alpha#alpha-s3cret").encode())
            assert await asyncio.wait_for(asked.get(), PATIENCE) == "alpha"
            await asyncio.wait_for(await ws.ping(), PATIENCE)  # seated at the table: it goes on
    finally:
        await listener.close(0.5)
        await lobby.close()
        await finder.unsubscribe()

"""Open tables per address and per connection (issue 30.7): 1,100 junk tables grew the
lobby page to 268 KB. Each protocol that can open a table answers one past the cap with
its own refusal; a table that starts or closes frees its place. Loopback only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.patience import PATIENCE, eventually
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.clients.clarkson import ClarksonClient
from meeple.clients.santorini import SantoriniClient
from meeple.clients.spectrangle import SpectrangleClient
from meeple.clients.twente import TwenteClient
from meeple.protocols.clarkson.messages import Nok
from meeple.protocols.santorini.messages import Info
from meeple.protocols.spectrangle.messages import ErrorReply, ErrorWord
from meeple.protocols.twente.messages import Error, ErrorCode
from meeple.server.lobby.tables import Lobby, Origin, StartRule, TooManyTables, server_lobby


async def _next(ws: ClientConnection, kind: str, timeout: float = 10) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if message["type"] in (kind, "error"):
            return message


async def _open_tables(server: Any) -> int:
    return len(server_lobby(server.services).tables())


async def test_every_protocol_refuses_a_table_past_the_address_cap(
    make_server: ServerFactory,
) -> None:
    """``max_tables_per_address = 1``: a Twente client opens a table; from the same
    address a second table is refused by Twente (E010), Clarkson (NOK), AM27 (INFO
    INVALID), Spectrangle (invalidCommand) and the web (error refused); once the first
    table closes, the web opens one."""
    server = await make_server(
        "twente", "clarkson", "santorini", "spectrangle", limits={"max_tables_per_address": 1}
    )
    host = "127.0.0.1"
    first = await TwenteClient.connect(host, server.ports["twente"], "ann")
    await first.request_game(2)
    await asyncio.sleep(0.2)
    assert await _open_tables(server) == 1

    second = await TwenteClient.connect(host, server.ports["twente"], "ben")
    await second.request_game(3)
    reply = await asyncio.wait_for(second.receive(), PATIENCE)
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.WRONG_NUMBER_OF_PLAYERS
    assert reply.players == 2  # ann's table has a free seat: joining it opens nothing

    clarkson = await ClarksonClient.connect(host, server.ports["clarkson"])
    nok = await asyncio.wait_for(clarkson.receive(), PATIENCE)
    assert isinstance(nok, Nok)
    assert "open tables" in nok.description

    santorini = await SantoriniClient.connect(host, server.ports["santorini"])
    await santorini.register("sam", 3, False)
    info = await asyncio.wait_for(santorini.receive(), PATIENCE)
    while not isinstance(info, Info):  # its server state first
        info = await asyncio.wait_for(santorini.receive(), PATIENCE)
    assert info.information == "INVALID"

    spectrangle = await SpectrangleClient.connect(host, server.ports["spectrangle"], "spe")
    await spectrangle.request_game(3)
    refused = await asyncio.wait_for(spectrangle.receive(), PATIENCE)
    assert isinstance(refused, ErrorReply)
    assert refused.word is ErrorWord.INVALID_COMMAND

    ws = await web_socket(server)
    create = {"type": "create", "game": "spectrangle", "variant": "standard", "size": 3}
    await ws.send(json.dumps({**create, "name": "wes"}))
    error = await _next(ws, "seated")
    assert error["type"] == "error"
    assert error["code"] == "refused"
    assert "your address has 1 open tables" in error["message"]
    assert await _open_tables(server) == 1

    await first.close()

    async def closed() -> bool:
        return await _open_tables(server) == 0

    await eventually(closed, "the closed socket's table gone", every=0.05)
    await ws.send(json.dumps({**create, "name": "wes"}))
    assert (await _next(ws, "seated"))["type"] == "seated"
    for client in (second, clarkson, santorini, spectrangle):
        await client.close()
    await ws.close()


async def test_a_web_connection_is_capped_on_its_own(make_server: ServerFactory) -> None:
    """``max_tables_per_connection = 1``: a browser opens a table, another browser sits
    at it, the first leaves (the table stays open, counted as the first's) and asks for
    a new one: refused; its neighbour on the same address may open one."""
    server = await make_server(limits={"max_tables_per_connection": 1})
    one, two = await web_socket(server), await web_socket(server)
    create = {"type": "create", "game": "spectrangle", "variant": "standard", "size": 3}
    await one.send(json.dumps({**create, "name": "uno"}))
    table = (await _next(one, "seated"))["table"]
    await two.send(json.dumps({"type": "sit", "table": table, "name": "dos"}))
    assert (await _next(two, "seated"))["type"] == "seated"
    await one.send(json.dumps({"type": "leave"}))
    await asyncio.sleep(0.2)
    await one.send(json.dumps({**create, "name": "uno"}))
    refused = await _next(one, "seated")
    assert refused["type"] == "error"
    assert "this connection has 1 open tables" in refused["message"]
    three = await web_socket(server)
    await three.send(json.dumps({**create, "name": "tres"}))
    assert (await _next(three, "seated"))["type"] == "seated"
    for ws in (one, two, three):
        await ws.close()


class _Opener:
    """A seat with an origin, as the listeners' handlers are."""

    def __init__(self, address: str, connection: str) -> None:
        self.origin = Origin(address, connection)
        self.name = connection

    def deliver(self, event: object) -> None:
        pass


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["open", "close"]), st.integers(0, 3), st.integers(0, 5)),
        max_size=60,
    ),
    per_address=st.integers(0, 4),
    per_connection=st.integers(0, 3),
)
def test_the_caps_hold_under_any_sequence(
    steps: list[tuple[str, int, int]], per_address: int, per_connection: int
) -> None:
    """Any sequence of opens and closes from 4 addresses and 6 connections: no address
    or connection ever has more open tables than its cap (0: no limit), a refusal is
    TooManyTables only when the cap is reached, and the counts return to zero."""
    lobby = Lobby(max_tables_per_address=per_address, max_tables_per_connection=per_connection)
    lobby.register_game("toy", lambda key, seats: None)  # type: ignore[arg-type,return-value]
    mine: dict[str, tuple[str, str]] = {}
    for action, address, connection in steps:
        addr, conn = f"10.0.0.{address}", f"c{connection}"
        if action == "open":
            by_addr = sum(1 for a, _ in mine.values() if a == addr)
            by_conn = sum(1 for _, c in mine.values() if c == conn)
            full = (per_address and by_addr >= per_address) or (
                per_connection and by_conn >= per_connection
            )
            try:
                table = lobby.create_table(
                    "toy", "", 4, StartRule.READY, opener=_Opener(addr, conn)
                )  # type: ignore[arg-type]
            except TooManyTables:
                assert full
                continue
            assert not full
            lobby.sit(table.id, _Opener(addr, conn))  # type: ignore[arg-type]
            mine[table.id] = (addr, conn)
        elif mine:
            table_id = sorted(mine)[0]
            table = lobby.table(table_id)
            assert table is not None
            lobby.leave(table.seats[0])
            del mine[table_id]
        for a in {a for a, _ in mine.values()}:
            assert lobby.open_tables_of(a) == sum(1 for x, _ in mine.values() if x == a)
    for table_id in list(mine):
        table = lobby.table(table_id)
        assert table is not None
        lobby.leave(table.seats[0])
    assert all(lobby.open_tables_of(f"10.0.0.{a}") == 0 for a in range(4))


@pytest.mark.parametrize("key", ["max_tables_per_address", "max_tables_per_connection"])
def test_the_caps_are_in_the_config(key: str) -> None:
    from meeple.server.config import ConfigError, config_from_mapping

    config = config_from_mapping({"limits": {key: 3}})
    assert getattr(config.limits, key) == 3
    with pytest.raises(ConfigError):
        config_from_mapping({"limits": {key: -1}})

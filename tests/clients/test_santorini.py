"""The AM27 bot against a scripted server that ends the game before the bot's reply."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from tests.patience import GAME_PATIENCE

from meeple.clients.santorini import play_santorini
from meeple.protocols.santorini.messages import (
    Cell,
    CellState,
    EndGame,
    Players,
    Register,
    ServerMessage,
    ServerState,
    Update,
)
from meeple.protocols.santorini.session import ServerSession

DOME = CellState((4, 3, 2, 1))
# The bot's two workers boxed in by domes: it has no option at all, so it sends LOSE.
BOXED = (
    (Cell(0, 0), CellState((0,), "bot", "M")),
    (Cell(0, 1), CellState((0,), "bot", "F")),
    (Cell(0, 2), DOME),
    (Cell(1, 0), DOME),
    (Cell(1, 1), DOME),
    (Cell(1, 2), DOME),
    (Cell(4, 4), CellState((0,), "them", "M")),
    (Cell(4, 3), CellState((0,), "them", "F")),
)


async def _scripted(ending: str, reader: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
    """Greet, wait for REGISTER, then write the bot's UPDATE and the ENDGAME in one go."""
    session = ServerSession(framing="lines")

    def out(*messages: ServerMessage) -> None:
        w.write(b"".join(session.send(m) for m in messages))

    out(ServerState(open=True, active=False))
    registered = False
    while not registered:
        data = await reader.read(4096)
        if not data:
            return
        registered = any(isinstance(e, Register) for e in session.receive_data(data))
    out(Players("them", (("bot", "Apollo"), ("them", "Athena"))))
    # The server decides the game (say the bot's clock ran out) in the same breath as
    # the UPDATE that asked the bot to act: the bot reads both before it answers.
    out(Update("bot", BOXED), EndGame("them", True))
    if ending == "serverstate":
        out(ServerState(open=True, active=False))
        await w.drain()
        with contextlib.suppress(ConnectionError):
            while await reader.read(4096):
                pass
    await w.drain()
    w.close()


@pytest.fixture
async def scripted_port(request: pytest.FixtureRequest) -> AsyncIterator[int]:
    ending = request.param

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await _scripted(ending, reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.mark.parametrize("scripted_port", ["serverstate", "close"], indirect=True)
@pytest.mark.parametrize("search", [True, False])
async def test_bot_reports_a_game_the_server_ended_first(scripted_port: int, search: bool) -> None:
    """A LOSE the server's ENDGAME overtook is dropped, not a crash; the result is kept."""
    results = await asyncio.wait_for(
        play_santorini(
            "127.0.0.1", scripted_port, "bot", gods=True, seed=1, search=search, ping_interval=60
        ),
        GAME_PATIENCE,
    )
    assert len(results) == 1
    assert results[0].winner == "them"
    assert results[0].gods == {"bot": "Apollo", "them": "Athena"}

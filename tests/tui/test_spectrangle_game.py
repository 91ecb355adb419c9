"""A whole Spectrangle game through the app against a peer run by the real engine.

The peer is a loopback TCP server built from the pure layers only: the engine's
:class:`Game`, the protocol's ServerSession and dialect, and the greedy AI in the
second seat. The test plays the first seat through the app: typed moves and moves
made with the mouse and keys, to the leaderboard; then the app's board and scores
must be the engine's.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from meeple.ai.spectrangle import greedy_action
from meeple.games.spectrangle import Game, SpectrangleError
from meeple.games.spectrangle.board import coordinates
from meeple.protocols.spectrangle.dialect import action_for, messages_for, opening_messages
from meeple.protocols.spectrangle.errors import error_word_for
from meeple.protocols.spectrangle.messages import (
    Chat,
    ChatFrom,
    ClientMessage,
    Connect,
    ErrorReply,
    Request,
    ServerMessage,
    Waiting,
)
from meeple.protocols.spectrangle.session import Rejected, ServerSession
from meeple.tui.connection import ConnectOptions
from meeple.tui.spectrangle.app import SpectrangleApp
from meeple.tui.spectrangle.stream import connect
from meeple.tui.spectrangle.table import Phase
from meeple.tui.spectrangle.widgets import FIELD_WIDTH, TriangleBoard


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


async def engine_peer(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, games: list[Game]
) -> None:
    """Serve one client a two-player game against the greedy AI, by the spec's lines."""
    session = ServerSession()
    pending: list[ClientMessage] = []

    async def receive() -> ClientMessage:
        while not pending:
            data = await reader.read(4096)
            if not data:
                raise EOFError
            for event in session.receive_data(data):
                if isinstance(event, Rejected):
                    writer.write(event.data)
                else:
                    pending.append(event)
        return pending.pop(0)

    def send(*messages: ServerMessage) -> None:
        for message in messages:
            writer.write(session.send(message))
        pending.extend(e for e in session.next_events() if not isinstance(e, Rejected))

    try:
        hello = await receive()
        assert isinstance(hello, Connect)
        send(session.welcome())
        assert isinstance(await receive(), Request)
        game = Game((hello.name, "bot"), random.Random(7))
        games.append(game)
        send(Waiting((hello.name, "bot")), *opening_messages(game))
        while not game.is_over:
            if game.turn == 1:
                send(*messages_for(game, game.apply(greedy_action(game, 1))))
            else:
                message = await receive()
                if isinstance(message, Chat):
                    send(ChatFrom(hello.name, message.text))
                    continue
                try:
                    events = game.apply(action_for(message, 0))
                except SpectrangleError as e:
                    send(ErrorReply(error_word_for(e)))
                else:
                    send(*messages_for(game, events))
            await writer.drain()
        await reader.read()  # a server keeps the connection after the game: until EOF
    except EOFError:
        pass
    finally:
        writer.close()


async def test_a_whole_game_against_the_engine() -> None:
    """Every other move made with the mouse and keys, the rest typed; the app ends where
    the engine ends: same board, same final scores, the leaderboard on screen."""
    games: list[Game] = []
    server = await asyncio.start_server(lambda r, w: engine_peer(r, w, games), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    app = SpectrangleApp(connect, ConnectOptions("127.0.0.1", port, "ann"))
    try:
        async with app.run_test(size=(120, 34)) as pilot:
            await until(pilot, lambda: app.table.phase is Phase.PLAYING)
            moves = 0
            while app.table.phase is Phase.PLAYING:
                await until(pilot, lambda: app.table.my_turn or app.table.phase is Phase.OVER)
                if app.table.phase is Phase.OVER:
                    break
                log_size = len(app.table.log)
                placements = app.table.board.placements(app.table.hand)
                command = app.query_one("#command")
                if not placements:
                    await pilot.press("f3")
                    command.value = "skip"  # type: ignore[attr-defined]
                    await pilot.press("enter")
                elif moves % 2:
                    best = max(placements, key=lambda p: p.points)
                    await pilot.press("f3")
                    command.value = f"place {best.tile} on {best.index}"  # type: ignore[attr-defined]
                    await pilot.press("enter")
                else:
                    best = max(placements, key=lambda p: p.points)
                    slot = next(i for i, t in enumerate(app.table.hand) if t.same_piece(best.tile))
                    turns = app.table.hand[slot].rotations().index(best.tile)
                    row, k = coordinates(best.index)
                    offset = (FIELD_WIDTH * (5 - row) + FIELD_WIDTH * k + 2, 2 * row)
                    await pilot.click(TriangleBoard, offset=offset)
                    await pilot.press(str(slot + 1), *["r"] * turns, "enter")
                moves += 1
                await until(pilot, lambda n=log_size: len(app.table.log) > n)  # type: ignore[misc]
                assert not app.table.log[log_size].startswith("refused"), app.table.log
            game = games[0]
            assert game.result is not None
            assert app.table.board.state() == game.board.state()
            final = {game.players[i]: s for i, s in enumerate(game.result.scores)}
            assert app.table.scores == final
            assert "Game over" in str(app.query_one("#status").render())
            assert moves >= 5
    finally:
        server.close()
        await server.wait_closed()

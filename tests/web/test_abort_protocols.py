"""An aborted game's end as each protocol's seats hear it (issue 34.4), real sockets.

A browser at a table with a client of another protocol aborts before its first move
(aborts come from browser seats only). Each protocol has its own words for the end:
Clarkson the final ``SCORE`` lines then ``WINNER`` (RFC §3.17: the server MUST send it at
a game's end; ERRATA: the highest score then, as at an early QUIT, §4), Twente
``GAMEOVER DISCONNECT`` (no word for an abort), Spectrangle ``player <name> left``, AM27
``EndGame`` naming the browser's player, not a winner. Each client then goes on (its
connection stays open and it may play again). CMPN402 has no browser seats, so no abort.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.web.helpers import ServerFactory, stored_game, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.clients.clarkson import ClarksonClient
from meeple.clients.santorini import SantoriniClient
from meeple.clients.spectrangle import SpectrangleClient
from meeple.clients.twente import TwenteClient
from meeple.protocols.clarkson.messages import Score, Starting, Winner
from meeple.protocols.santorini.messages import EndGame
from meeple.protocols.spectrangle.messages import PlayerLeft
from meeple.protocols.twente.messages import GameOver, GameOverReason

PATIENCE = 30.0


async def _until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
        if message["type"] == kind:
            return message


async def _open(
    ws: ClientConnection, game: str, variant: str, start: str = "full", size: int = 2
) -> str:
    create = {"type": "create", "game": game, "variant": variant, "size": size, "start": start}
    await ws.send(json.dumps({**create, "name": "ann"}))
    return str((await _until(ws, "seated"))["table"])


async def _abort(ws: ClientConnection) -> None:
    """ann (the browser) has the game's first view, aborts, and hears it end so."""
    await _until(ws, "seat")
    await ws.send(json.dumps({"type": "abort"}))
    while True:
        view = (await _until(ws, "seat"))["data"]
        if view["over"]:
            assert view["result"]["reason"] == "aborted"
            return


async def test_a_clarkson_seat_hears_winner_when_a_browser_aborts(
    make_server: ServerFactory,
) -> None:
    """RFC §3.17: WINNER at the game's end, an aborted one too: after the final SCOREs,
    WINNER names the highest score at that moment (nobody has moved: every player, 0), as
    at an early QUIT (§4). The store keeps the game as aborted, with no winner."""
    server = await make_server("clarkson")
    ann = await web_socket(server)
    table = await _open(ann, "scrabble", "clarkson", start="ready", size=4)
    await ann.send(json.dumps({"type": "subscribe", "topic": "lobby"}))
    cora = await ClarksonClient.connect("127.0.0.1", server.ports["clarkson"], "cora")
    try:
        while True:  # cora sits at ann's table (the Clarkson listener's waiting table)
            lobby = (await _until(ann, "lobby"))["data"]
            waiting = [t["waiting"] for t in lobby["tables"] if t["id"] == table]
            if waiting and "cora" in {s["name"] for s in waiting[0]}:
                break
        await cora.ready()
        await ann.send(json.dumps({"type": "ready"}))
        seen: list[object] = []
        async with asyncio.timeout(PATIENCE):
            while not isinstance(await cora.receive(), Starting):
                pass
            aborting = asyncio.ensure_future(_abort(ann))
            while True:
                message = await cora.receive()
                seen.append(message)
                if sum(isinstance(m, Winner) for m in seen) == 2:
                    break  # a tie at 0: one WINNER each
            await aborting
        finals = [m for m in seen if isinstance(m, Score)][-2:]
        assert {(s.score, s.name) for s in finals} == {(0, "ann"), (0, "cora")}
        winners = [m for m in seen if isinstance(m, Winner)]
        assert {(w.score, w.name) for w in winners} == {(0, "ann"), (0, "cora")}  # a tie at 0
        record = await stored_game(server, "scrabble")
        assert record.end_reason == "aborted"
        assert record.data is not None
        assert record.data["result"]["winners"] == []
    finally:
        await cora.quit()
        await cora.close()
        await ann.close()


async def test_a_twente_seat_hears_gameover_disconnect_when_a_browser_aborts(
    make_server: ServerFactory,
) -> None:
    """Twente has no word for an abort: GAMEOVER DISCONNECT, the aborter's score 0."""
    server = await make_server("twente")
    ann = await web_socket(server)
    await _open(ann, "scrabble", "twente")
    tom = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "tom")
    try:
        await tom.request_game(2)
        aborting = asyncio.ensure_future(_abort(ann))
        async with asyncio.timeout(PATIENCE):
            async for message in tom:
                if isinstance(message, GameOver):
                    break
        await aborting
        assert message.reason is GameOverReason.DISCONNECT
        assert dict(message.scores)["ann"] == 0
    finally:
        await tom.close()
        await ann.close()


async def test_a_spectrangle_seat_hears_player_left_when_a_browser_aborts(
    make_server: ServerFactory,
) -> None:
    """Spectrangle 1.4 has no word for an abort: ``player ann left`` (phase 9)."""
    server = await make_server("spectrangle")
    ann = await web_socket(server)
    await _open(ann, "spectrangle", "standard")
    sam = await SpectrangleClient.connect("127.0.0.1", server.ports["spectrangle"], "sam")
    try:
        await sam.request_game(2)
        aborting = asyncio.ensure_future(_abort(ann))
        async with asyncio.timeout(PATIENCE):
            async for message in sam:
                if isinstance(message, PlayerLeft):
                    break
        await aborting
        assert message.name == "ann"
    finally:
        await sam.close()
        await ann.close()


async def test_an_am27_seat_hears_endgame_not_won_when_a_browser_aborts(
    make_server: ServerFactory,
) -> None:
    """AM27 has no word for an abort: EndGame naming ann, not a winner (as at a drop)."""
    server = await make_server("santorini")
    ann = await web_socket(server)
    await _open(ann, "santorini", "standard")
    sol = await SantoriniClient.connect("127.0.0.1", server.ports["santorini"], name="sol")
    try:
        await sol.register("sol", 2, False)
        aborting = asyncio.ensure_future(_abort(ann))
        async with asyncio.timeout(PATIENCE):
            async for message in sol:
                if isinstance(message, EndGame):
                    break
        await aborting
        assert message.player == "ann"
        assert not message.is_winner
    finally:
        await sol.close()
        await ann.close()

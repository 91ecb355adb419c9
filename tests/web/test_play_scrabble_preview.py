"""The Scrabble ``preview`` over a real WebSocket (issue 13): the engine's verdict for the
seat's own rack, never applied, heard by no other seat, rate-limited without a hang-up."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.patience import GAME_PATIENCE
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.ai.scrabble import ranked_moves
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.twente.messages import InformSwap, NotifyTurn
from meeple.server.lobby.tables import server_lobby


async def _next(ws: ClientConnection, kind: str | None = None) -> dict[str, Any]:
    """The next message (of type ``kind`` when given, skipping others)."""
    while True:
        reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), GAME_PATIENCE))
        if kind is None or reply["type"] == kind:
            return reply


def _preview(tiles: list[list[Any]], ident: int) -> str:
    return json.dumps({"type": "preview", "id": ident, "action": {"kind": "place", "tiles": tiles}})


async def test_a_preview_is_the_engines_verdict_and_nobody_else_hears_of_it(
    make_server: ServerFactory, gcide: Lexicon
) -> None:
    """At a Twente table: before sitting a preview is not-now; seated, the AI's best play
    previews its score and words, a lone tile off the centre the engine's refusal; the
    game is unchanged and the Twente client's next message is the browser's real move."""
    server = await make_server("twente")
    ws = await web_socket(server.ports["web"])
    await ws.send(_preview([[7, 7, "A"]], 1))
    assert (await _next(ws))["code"] == "not-now"
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "ula"}
    await ws.send(json.dumps(create))
    assert (await _next(ws))["type"] == "seated"
    # Seated at a table whose game has not started: nothing to preview in yet.
    await ws.send(_preview([[7, 7, "A"]], 2))
    assert await _next(ws) == {
        "type": "error",
        "code": "not-now",
        "message": "no Scrabble game to preview a play in",
    }
    ann = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "ann")
    try:
        await ann.request_game(2)
        while not isinstance(await ann.receive(), NotifyTurn):
            pass
        view = (await _next(ws, "seat"))["data"]
        [room] = server_lobby(server.services).rooms
        before = room.game.state()  # type: ignore[attr-defined]
        board = Board()
        best = ranked_moves(board, view["rack"], gcide, ENGLISH)[0]
        tiles = [[p.x, p.y, p.tile] for p in best.tiles]
        await ws.send(_preview(tiles, 7))
        reply = await _next(ws)
        assert reply == {
            "type": "preview",
            "id": 7,
            "score": best.score,
            "words": [
                {"word": best.word.upper(), "score": best.score - (50 if len(tiles) == 7 else 0)}
            ],
            "bingo": len(tiles) == 7,
        }
        await ws.send(_preview([[0, 0, view["rack"][0].upper().replace("?", "a")]], 8))
        assert await _next(ws) == {
            "type": "preview",
            "id": 8,
            "refusal": "the first play must cover the centre square",
        }
        assert room.game.state() == before  # type: ignore[attr-defined]
        await ws.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
        assert await ann.receive() == InformSwap("ula", 0)
    finally:
        await ann.close()
        await ws.close()


async def test_a_flood_of_previews_is_answered_too_fast_and_the_seat_plays_on(
    make_server: ServerFactory, gcide: Lexicon
) -> None:
    """Sixty previews at once: past the burst they get ``too-fast`` errors; the socket
    stays, a ping is answered, and the seat's next move is played as usual."""
    server = await make_server("twente")
    ws = await web_socket(server.ports["web"])
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "ula"}
    await ws.send(json.dumps(create))
    assert (await _next(ws))["type"] == "seated"
    ann = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "ann")
    try:
        await ann.request_game(2)
        while not isinstance(await ann.receive(), NotifyTurn):
            pass
        view = (await _next(ws, "seat"))["data"]
        tile = view["rack"][0].replace("?", "a")
        for i in range(60):
            await ws.send(_preview([[7, 7, tile], [8, 7, tile]], i))
        await ws.send(json.dumps({"type": "ping", "id": 99}))
        errors = previews = 0

        def count(reply: dict[str, Any]) -> None:
            # Replies to the flood may come before the pong as well as after it.
            nonlocal errors, previews
            if reply["type"] == "error":
                assert reply["code"] == "too-fast"
                errors += 1
            elif reply["type"] == "preview":
                previews += 1

        while (reply := await _next(ws))["type"] != "pong":
            count(reply)
        assert reply["id"] == 99  # the socket stays
        await ws.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
        assert await ann.receive() == InformSwap("ula", 0)
        while (reply := await _next(ws))["type"] != "seat" or not reply["data"]["moves"]:
            count(reply)
        # Unsent previews and too-fast errors are replaced by newer ones, so a flood
        # costs the outbox two places at most and never pushes a view out.
        assert previews >= 1
        assert errors >= 1
        assert [m["kind"] for m in reply["data"]["moves"]] == ["pass"]
    finally:
        await ann.close()
        await ws.close()

"""Abort and resign over the browser protocol (issue 34.4, 34.9), with real sockets.

A player may abort a game until their own first move: the game ends "aborted", is
stored so and leaves every rating as it was. After their first move only resigning is
left: the game ends "resigned", the other player wins, and it is rated.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.patience import eventually
from tests.web.helpers import ServerFactory, stored_game, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.games.santorini import Phase
from meeple.games.santorini import record as santorini_record
from meeple.games.santorini.view import legal_view
from meeple.games.spectrangle.view import seat_view
from meeple.server.app import MeepleServer
from meeple.server.lobby.tables import server_lobby
from meeple.server.store.database import Store

Message = dict[str, Any]


async def _next(ws: ClientConnection, want: Callable[[Message], bool]) -> Message:
    """The next message ``want`` takes (others are skipped), within 30 s."""
    while True:
        message: Message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if want(message):
            return message


def _seat(message: Message) -> bool:
    return message["type"] == "seat"


async def _table(server: MeepleServer, game: str, variant: str) -> list[ClientConnection]:
    """ann opens a two-seat table, bob sits: both have the game's first view."""
    ann, bob = await web_socket(server), await web_socket(server)
    await ann.send(
        json.dumps({"type": "create", "game": game, "variant": variant, "size": 2, "name": "ann"})
    )
    table = (await _next(ann, lambda m: m["type"] == "seated"))["table"]
    await bob.send(json.dumps({"type": "sit", "table": table, "name": "bob"}))
    for ws in (ann, bob):
        view = (await _next(ws, _seat))["data"]
        assert view["may_abort"] is True  # nobody has moved
    return [ann, bob]


def _ratings(server: MeepleServer, game: str) -> dict[str, float]:
    store: Store = server.services.store
    return {r.player: r.rating for r in store.leaderboard(game)}


GAMES = [("scrabble", "twente"), ("spectrangle", "standard"), ("santorini", "standard")]


@pytest.mark.parametrize(("game", "variant"), GAMES)
async def test_an_abort_before_moving_ends_the_game_unrated(
    make_server: ServerFactory, game: str, variant: str
) -> None:
    """Either player may abort before their first move (Santorini: gods, starter and
    workers' placement are not moves): both pages hear "aborted", the store keeps the
    game with that reason, and nobody has a rating from it."""
    server = await make_server()
    ann, bob = await _table(server, game, variant)
    await bob.send(json.dumps({"type": "abort"}))
    for ws in (ann, bob):
        view = (await _next(ws, lambda m: _seat(m) and m["data"]["over"]))["data"]
        assert view["result"]["reason"] == "aborted"
        assert view["result"]["player"] == 1  # bob
        assert view["result"]["winners"] == []
        assert view["may_abort"] is False
    record = await stored_game(server, game)
    assert record.end_reason == "aborted"
    assert record.data["result"]["reason"] == "aborted"
    assert _ratings(server, game) == {}
    for ws in (ann, bob):
        await ws.close()


def _a_move(view: Message) -> dict[str, Any]:
    """A legal move for the player to move in this view (Scrabble or Spectrangle)."""
    if view["game"] == "scrabble":
        return {"kind": "pass"}
    tile, fields = next((t, f) for t, f in view["fits"].items() if f)
    return {"kind": "place", "tile": tile, "index": fields[0][0]}


@pytest.mark.parametrize(("game", "variant"), GAMES[:2])
async def test_after_a_move_abort_is_refused_and_a_resignation_is_rated(
    make_server: ServerFactory, game: str, variant: str
) -> None:
    """The player to move moves; their abort is then refused (they may only resign) while
    the other may still abort. The mover resigns: the game ends "resigned" with the other
    as winner, on the page and in the store, and both players are rated."""
    server = await make_server()
    seats = await _table(server, game, variant)
    [room] = server_lobby(server.services).rooms
    turn = room.game.turn  # type: ignore[attr-defined]
    mover, other = seats[turn], seats[1 - turn]
    view = room.spectator_view() if game == "scrabble" else seat_view(room.game, turn)  # type: ignore[attr-defined]
    await mover.send(json.dumps({"type": "play", "action": _a_move(view)}))
    after = (await _next(mover, _seat))["data"]
    assert after["may_abort"] is False
    assert (await _next(other, _seat))["data"]["may_abort"] is True
    await mover.send(json.dumps({"type": "abort"}))
    refusal = await _next(mover, lambda m: m["type"] == "error")
    assert refusal["code"] == "illegal"
    assert "resign" in refusal["message"]
    await mover.send(json.dumps({"type": "leave"}))  # mid-game, Leave resigns
    end = (await _next(other, lambda m: _seat(m) and m["data"]["over"]))["data"]
    assert end["result"]["reason"] == "resigned"
    assert end["result"]["player"] == turn
    assert end["result"]["winners"] == [1 - turn]
    assert end["result"]["scores"] is not None  # Spectrangle too: the scores so far
    record = await stored_game(server, game)
    assert record.end_reason == "resigned"
    names = ("ann", "bob")
    assert record.result["winners"] == [names[1 - turn]]
    ratings = _ratings(server, game)
    assert set(ratings) == {"ann", "bob"}
    assert ratings[names[1 - turn]] > 1500 > ratings[names[turn]]
    for ws in seats:
        await ws.close()


def _santorini_action(legal: Message) -> dict[str, Any]:
    """The first legal action of a Santorini seat view's ``legal`` (set-up or a turn)."""

    def at(c: int) -> list[int]:
        return [c // 5, c % 5]

    if legal["starters"]:
        return {"kind": "starter", "player": legal["starters"][0]}
    if legal["place"]:
        return {"kind": "place", "cell": at(legal["place"][0])}
    if legal["moves"]:
        src, dst = legal["moves"][0]
        return {"kind": "move", "from": at(src), "to": at(dst)}
    if legal["builds"]:
        src, dst, level = legal["builds"][0]
        return {"kind": "build", "from": at(src), "to": at(dst), "level": level}
    assert legal["pass"], legal
    return {"kind": "pass"}


@pytest.mark.parametrize("in_play", [False, True])
async def test_a_santorini_resignation_out_of_turn_is_resigned_not_a_disconnect(
    make_server: ServerFactory, in_play: bool
) -> None:
    """Issue 34.9: a Santorini player who resigns while it is the other's turn (in play,
    once both have moved; or during the workers' placement, once they have moved) ends
    the game "resigned", not "disconnect": the other's page says so with them as winner,
    the store keeps the reason and a ``resign`` action that replays, and it is rated as
    the resigner's loss."""
    server = await make_server()
    ann, bob = await _table(server, "santorini", "standard")
    seats = {0: ann, 1: bob}
    [room] = server_lobby(server.services).rooms
    game = room.game  # type: ignore[attr-defined]
    done: dict[str, set[int]] = {"move": set(), "place": set()}
    # Each plays legal actions until both have moved (a move and a build) and it is
    # someone's turn in play, or (set-up) until the first worker is down.
    while True:
        turn = game.turn
        state = game.state
        if in_play and state.phase is Phase.PLAY and done["move"] == {0, 1} and not state.steps:
            break
        if not in_play and state.phase is Phase.PLACE and done["place"]:
            break
        legal = legal_view(state, turn, undo=False)
        assert legal is not None
        action = _santorini_action(legal)
        await seats[turn].send(json.dumps({"type": "play", "action": action}))
        done.setdefault(action["kind"], set()).add(turn)
        await eventually(lambda s=state: game.state is not s, "the action applied")
    resigner = 1 - game.turn  # the one whose turn it is not
    names = ("ann", "bob")
    await seats[resigner].send(json.dumps({"type": "leave"}))
    other = seats[1 - resigner]
    end = (await _next(other, lambda m: _seat(m) and m["data"]["over"]))["data"]
    assert end["result"]["reason"] == "resigned"
    assert end["result"]["player"] == resigner
    assert end["result"]["winners"] == [1 - resigner]
    record = await stored_game(server, "santorini")
    assert record.end_reason == "resigned"
    assert record.data["result"]["reason"] == "resigned"
    assert record.data["actions"][-1] == {"type": "resign", "player": resigner}
    assert record.result["winner"] == names[1 - resigner]
    steps = list(santorini_record.replay(record.data))  # checks the stored result too
    assert steps[-1].text == f"{names[resigner]} resigned: game over"
    ratings = _ratings(server, "santorini")
    assert ratings[names[1 - resigner]] > 1500 > ratings[names[resigner]]
    for ws in (ann, bob):
        await ws.close()

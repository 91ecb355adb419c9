"""Playing over the browser protocol (issue 13): a web seat at lobby tables, over loopback.

The test stands in for the page: it reads its ``seat`` views and sends ``play``
messages; it picks its moves with meeple's AI from the board it is shown.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from tests.patience import GAME_PATIENCE, eventually
from tests.web.helpers import ServerFactory, stored_game, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.ai.santorini import random_action
from meeple.ai.scrabble import ranked_moves
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.twente import TwenteClient
from meeple.games import santorini as engine
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.twente.messages import InformSwap, NotifyTurn
from meeple.server.lobby.tables import server_lobby


async def _next(ws: ClientConnection, timeout: float = 30) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return reply


async def _play_scrabble(
    ws: ClientConnection,
    gcide: Lexicon,
    *,
    stop_after: int | None = None,
    first: dict[str, Any] | None = None,
    try_illegal: bool = True,
) -> dict[str, Any]:
    """Play from the views until the game is over (or ``stop_after`` own moves); the last
    view. ``first``: a message already received, handled before reading more."""
    moves = 0
    tried_illegal = not try_illegal
    view: dict[str, Any] = {}
    while True:
        message, first = (first, None) if first is not None else (await _next(ws), None)
        if message["type"] == "error":
            assert message["code"] == "illegal", message
            continue
        if message["type"] != "seat":
            continue
        view = message["data"]
        if view["over"]:
            return view
        if view["turn"] != view["you"] or view["pending"] is not None:
            continue
        if stop_after is not None and moves >= stop_after:
            return view
        rack = view["rack"]
        if not tried_illegal:
            # A word off the centre on the first move: refused, to this seat only.
            tried_illegal = True
            await ws.send(
                json.dumps(
                    {"type": "play", "action": {"kind": "place", "tiles": [[0, 0, rack[0]]]}}
                )
            )
            reply = await _next(ws)
            assert reply["type"] == "error"
            assert reply["code"] == "illegal"
        found = ranked_moves(Board.from_rows(view["board"]), rack, gcide, ENGLISH)
        if found:
            tiles = [[p.x, p.y, p.tile] for p in found[0].tiles]
            action: dict[str, Any] = {"kind": "place", "tiles": tiles}
        elif view["bag"] >= 1:
            action = {"kind": "exchange", "tiles": rack.replace("?", "")[:1] or rack[:1]}
        else:
            action = {"kind": "pass"}
        await ws.send(json.dumps({"type": "play", "action": action}))
        moves += 1


async def test_a_browser_seat_plays_scrabble_against_a_twente_bot(
    make_server: ServerFactory, gcide: Lexicon
) -> None:
    """The browser opens a Twente-variant table, a Twente bot's ENQUEUE 2 fills it, and
    they play to the end: the browser sees only its own rack, its illegal move is
    answered to it alone, and the stored game lists both protocols."""
    server = await make_server("twente")
    ws = await web_socket(server)
    await ws.send(json.dumps({"type": "subscribe", "topic": "lobby"}))
    await ws.send(
        json.dumps(
            {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "wes"}
        )
    )
    seated = None
    while seated is None:
        message = await _next(ws)
        if message["type"] == "seated":
            seated = message
    assert seated["name"] == "wes"
    assert len(seated["token"]) >= 20
    await ws.send(json.dumps({"type": "unsubscribe", "topic": "lobby"}))
    twente = asyncio.create_task(
        play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2)
    )
    last = await _play_scrabble(ws, gcide)
    [result] = await asyncio.wait_for(twente, GAME_PATIENCE)
    assert result.reason == "WIN"
    assert result.refused == 0
    assert last["result"] is not None
    assert dict(zip(last["players"], last["result"]["scores"], strict=True)) == result.scores
    assert "rack" in last
    assert "racks" not in last
    await ws.close()
    record = await stored_game(server, "scrabble")
    assert record.protocols == ("twente", "web")


async def test_a_browser_that_drops_takes_its_seat_back_with_its_token(
    make_server: ServerFactory, gcide: Lexicon
) -> None:
    """Mid-game the WebSocket closes; a new one sends rejoin with the token, is seated
    again under the same name with a full view, and plays the game to its end."""
    server = await make_server("twente")
    ws = await web_socket(server)
    await ws.send(
        json.dumps(
            {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "rae"}
        )
    )
    seated = await _next(ws)
    assert seated["type"] == "seated"
    twente = asyncio.create_task(
        play_twente("127.0.0.1", server.ports["twente"], "bea", gcide, players=2)
    )
    before = await _play_scrabble(ws, gcide, stop_after=2)
    await ws.close()
    lobby = server_lobby(server.services)
    await eventually(lambda: bool(lobby.held), "the seat held")
    assert lobby.held == 1
    again = await web_socket(server)
    await again.send(json.dumps({"type": "rejoin", "token": "x" * 24}))
    refused = await _next(again)
    assert (refused["type"], refused["code"]) == ("error", "refused")
    await again.send(json.dumps({"type": "rejoin", "token": seated["token"]}))
    back = await _next(again)
    assert back["type"] == "seated"
    assert back["name"] == "rae"
    view = await _next(again)
    assert view["type"] == "seat"
    assert view["data"]["moves"][: len(before["moves"])] == before["moves"]
    last = await _play_scrabble(again, gcide, first=view, try_illegal=False)
    [result] = await asyncio.wait_for(twente, GAME_PATIENCE)
    assert result.reason == "WIN"
    assert last["over"]
    await again.close()


async def _until(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while True:
        message = await _next(ws)
        if message["type"] == kind:
            return message


async def test_a_second_connection_with_the_token_takes_the_seat_from_an_open_one(
    make_server: ServerFactory, gcide: Lexicon
) -> None:
    """Mid-game a second WebSocket (a second tab) sends rejoin with the token while the
    first is still open: it is seated under the same name with a full view and plays on;
    the first is told unseated (reason rejoined) and may no longer play, until it takes
    the seat back the same way."""
    server = await make_server()
    first = await web_socket(server)
    await first.send(
        json.dumps(
            {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "ida"}
        )
    )
    seated = await _until(first, "seated")
    token = seated["token"]
    await first.send(json.dumps({"type": "bot", "table": seated["table"]}))
    uid = (await _until(first, "seat"))["uid"]
    second = await web_socket(server)
    await second.send(json.dumps({"type": "rejoin", "token": token}))
    assert await _next(second) == {"type": "seated", "table": uid, "name": "ida", "token": token}
    assert await _until(first, "unseated") == {
        "type": "unseated",
        "table": uid,
        "reason": "rejoined",
    }
    await first.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
    refused = await _until(first, "error")
    assert refused["code"] == "not-now"
    view = await _play_scrabble(second, gcide, stop_after=1, try_illegal=False)
    assert [m["player"] for m in view["moves"]].count(view["you"]) >= 1
    await first.send(json.dumps({"type": "rejoin", "token": token}))
    assert (await _until(first, "seated"))["name"] == "ida"
    assert (await _until(second, "unseated"))["reason"] == "rejoined"
    assert (await _until(first, "seat"))["data"]["rack"] == view["rack"]
    assert server_lobby(server.services).held == 0
    await first.close()
    await second.close()


async def test_a_browser_adds_a_bot_with_one_message_and_plays_santorini(
    make_server: ServerFactory,
) -> None:
    """The browser opens a 2-seat Santorini table and adds a server bot with one
    message; the table starts and the browser plays set-up and turns (random legal
    actions sent as play messages) until the game ends."""
    server = await make_server("santorini")
    ws = await web_socket(server)
    await ws.send(
        json.dumps(
            {"type": "create", "game": "santorini", "variant": "standard", "size": 2, "name": "sam"}
        )
    )
    seated = await _next(ws)
    assert seated["type"] == "seated"
    await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
    # The table is full (the browser and a bot): the game starts.
    view = await _next(ws)
    assert view["type"] == "seat"
    assert view["data"]["players"][0] == "sam"
    lobby = server_lobby(server.services)
    [room] = lobby.rooms
    rng = random.Random(5)
    while not view["data"]["over"]:
        game = room.game  # type: ignore[attr-defined]
        if not game.is_over and game.state.turn == view["data"]["you"]:
            # Stuck, the player says LOSE (AM27 §4.2.6: the server never decides it).
            action = (
                random_action(game.state, rng)
                if game.legal_actions()
                else engine.Lose(view["data"]["you"])
            )
            await ws.send(json.dumps({"type": "play", "action": _santorini_json(action)}))
        message = await _next(ws)
        if message["type"] == "seat":
            view = message
        else:
            assert message["type"] == "error", message
    assert view["data"]["over"]
    await ws.close()


def _santorini_json(action: Any) -> dict[str, Any]:
    def cell(c: int) -> list[int]:
        return list(engine.coordinates(c))

    if isinstance(action, engine.OfferGod | engine.ChooseGod):
        return {"kind": "god", "god": action.god}
    if isinstance(action, engine.ChooseStarter):
        return {"kind": "starter", "player": action.starter}
    if isinstance(action, engine.PlaceWorker):
        placed: dict[str, Any] = {"kind": "place", "cell": cell(action.cell)}
        if action.sex is not None:
            placed["sex"] = action.sex.value
        return placed
    if isinstance(action, engine.Move):
        return {"kind": "move", "from": cell(action.src), "to": cell(action.dst)}
    if isinstance(action, engine.Build):
        return {
            "kind": "build",
            "from": cell(action.src),
            "to": cell(action.dst),
            "level": action.level,
        }
    if isinstance(action, engine.Undo):
        return {"kind": "undo", "all": action.all}
    if isinstance(action, engine.Pass):
        return {"kind": "pass"}
    return {"kind": "lose"}


async def test_out_of_turn_and_garbage_from_a_browser_disturb_no_one(
    make_server: ServerFactory,
) -> None:
    """At a table with a Twente client: the browser's out-of-turn pass and garbage get
    error replies to the browser alone; the Twente client hears only real moves."""
    server = await make_server("twente")
    ws = await web_socket(server)
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "ula"}
    await ws.send(json.dumps(create))
    assert (await _next(ws))["type"] == "seated"
    ann = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "ann")
    try:
        await ann.request_game(2)
        while not isinstance(message := await ann.receive(), NotifyTurn):
            pass
        assert message.player == "ula"
        view = await _next(ws)
        assert view["type"] == "seat"
        assert view["data"]["turn"] == view["data"]["you"] == 0
        await ws.send(json.dumps({"type": "play", "action": {"kind": "pass"}}))
        assert await ann.receive() == InformSwap("ula", 0)
        assert await ann.receive() == NotifyTurn(True, "ann")
        sit = '{"type":"sit","table":"table-1","name":"ula"}'
        for junk in ('{"type":"play","action":{"kind":"pass"}}', "{]", sit):
            await ws.send(junk)
        codes = []
        while len(codes) < 3:
            reply = await _next(ws)
            if reply["type"] == "error":
                codes.append(reply["code"])
        # The room answers the pass; the session answers the other two at once.
        assert sorted(codes) == ["bad-json", "illegal", "not-now"]
        await ann.pass_turn()
        assert await ann.receive() == InformSwap("ann", 0)  # nothing of the browser's
        while len(view["data"]["moves"]) < 2:  # (the view after the refusal came first)
            view = await _next(ws)
        assert view["data"]["turn"] == 0
        assert [m["player"] for m in view["data"]["moves"]] == [0, 1]
    finally:
        await ann.close()
        await ws.close()


async def test_a_name_another_protocol_at_the_table_cannot_show_is_refused(
    make_server: ServerFactory,
) -> None:
    """A browser may be called ``x.y`` or ``turn``, but not at a table where Clarkson
    (RFC §2: letters and digits) or Spectrangle (``turn`` is a word of its lines)
    clients play: the lobby refuses it in words, and the same browser sits under a name
    they can show."""
    server = await make_server("clarkson", "spectrangle")
    ws = await web_socket(server)
    for game, variant, bad, good in (
        ("scrabble", "clarkson", "x.y", "xy"),
        ("spectrangle", "standard", "turn", "turner"),
    ):
        create = {"type": "create", "game": game, "variant": variant, "size": 2}
        await ws.send(json.dumps(create | {"name": bad}))
        refused = await _next(ws)
        while refused["type"] != "error":
            refused = await _next(ws)
        assert refused["code"] == "refused"
        assert f"cannot show the name '{bad}'" in refused["message"]
        await ws.send(json.dumps(create | {"name": good}))
        seated = await _next(ws)
        while seated["type"] != "seated":
            seated = await _next(ws)
        assert seated["name"] == good
        await ws.send(json.dumps({"type": "leave"}))
    await ws.close()
    # With no Clarkson listener running, no Clarkson client can come to show names to.
    alone = await web_socket(await make_server())
    create = {"type": "create", "game": "scrabble", "variant": "clarkson", "size": 2}
    await alone.send(json.dumps(create | {"name": "x.y"}))
    seated = await _next(alone)
    while seated["type"] != "seated":
        assert seated["type"] != "error", seated
        seated = await _next(alone)
    await alone.close()


async def test_a_name_another_connection_holds_is_name_taken_and_other_refusals_stay_refused(
    make_server: ServerFactory,
) -> None:
    """The wire codes the play page tells apart (docs/protocols/web.md): a name held by
    another connection is ``name-taken`` (the page may ask again: it may be its own
    closing page), any other refusal stays ``refused``; once the holder's socket closes,
    the name is given."""
    server = await make_server("twente")
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    first, second = await web_socket(server), await web_socket(server)
    await first.send(json.dumps(create | {"name": "ann"}))
    assert (await _next(first))["type"] == "seated"
    await second.send(json.dumps(create | {"name": "ANN"}))
    reply = await _next(second)
    while reply["type"] != "error":
        reply = await _next(second)
    assert (reply["code"], reply["message"]) == ("name-taken", "the name ANN is taken")
    await second.send(json.dumps({"type": "sit", "table": "no-such-table", "name": "bea"}))
    reply = await _next(second)
    while reply["type"] != "error":
        reply = await _next(second)
    assert reply["code"] == "refused"
    await first.close()

    async def given() -> bool:
        await second.send(json.dumps(create | {"name": "ann"}))
        reply = await _next(second)
        while reply["type"] not in ("error", "seated"):
            reply = await _next(second)
        return reply["type"] == "seated"

    await eventually(given, "ann free once the first socket closed")
    await second.close()

"""A Scrabble table with challenges (issue 13): ``double``, for browsers and server bots.

The bot challenges a phony and accepts a good play; a wrong challenge costs the
challenger's turn; Twente and Clarkson clients are never seated at such a table.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.patience import GAME_PATIENCE, eventually
from tests.web.helpers import web_socket
from websockets.asyncio.client import ClientConnection

from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.edge.clarkson import ClarksonHandler
from meeple.server.edge.twente import TwenteHandler
from meeple.server.lobby.bots import add_bot
from meeple.server.lobby.tables import VariantNotExpressible, server_lobby
from meeple.server.rooms.scrabble import DOUBLE_VARIANT


async def _view(ws: ClientConnection, until: Any) -> dict[str, Any]:
    """Seat views until one satisfies ``until`` (errors other than illegal fail)."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), GAME_PATIENCE))
        if message["type"] == "error":
            raise AssertionError(message)
        if message["type"] == "seat" and until(message["data"]):
            view: dict[str, Any] = message["data"]
            return view


async def _play(ws: ClientConnection, **action: Any) -> None:
    await ws.send(json.dumps({"type": "play", "action": action}))


def _phony(rack: str, lexicon: Lexicon) -> list[list[Any]]:
    letters = rack.replace("?", "")
    for i, a in enumerate(letters):
        for b in letters[:i] + letters[i + 1 :]:
            if a + b not in lexicon:
                return [[7, 7, a], [8, 7, b]]
    raise AssertionError(f"every pair of {rack} is a word")


def _kinds(view: dict[str, Any]) -> list[str]:
    return [m["kind"] for m in view["moves"]]


async def test_the_bot_challenges_a_phony_and_accepts_a_good_play(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """At a ``double`` table a browser's phony is challenged by the bot and withdrawn;
    the browser's challenge of the bot's good play fails and costs its turn; the bot's
    next play, accepted, stands; the room plays the double variant."""
    ws = await web_socket(server)
    create = {"type": "create", "game": "scrabble", "variant": "double", "size": 2, "name": "ida"}
    await ws.send(json.dumps(create))
    seated = json.loads(await ws.recv())
    assert seated["type"] == "seated"
    add_bot(server.services, seated["table"])
    view = await _view(ws, lambda v: v["turn"] == v["you"] == 0)
    assert view["variant"] == "double"
    # Nothing to challenge yet: the engine's refusal, to this seat only.
    await _play(ws, kind="challenge")
    refusal = json.loads(await asyncio.wait_for(ws.recv(), GAME_PATIENCE))
    assert refusal == {"type": "error", "code": "illegal", "message": "no play to challenge"}
    await _play(ws, kind="place", tiles=_phony(view["rack"], gcide))
    # Unchecked on play: pending, then challenged by the bot and withdrawn.
    view = await _view(ws, lambda v: "withdrawn" in _kinds(v))
    assert _kinds(view)[:3] == ["play", "challenge", "withdrawn"]
    assert view["scores"][0] == 0
    assert view["moves"][1]["text"].startswith("challenge upheld: ")
    # The bot plays a real word: the browser challenges it in vain and loses its turn.
    view = await _view(ws, lambda v: v["pending"] is not None and v["turn"] == 0)
    assert view["pending"]["player"] == 1
    await _play(ws, kind="challenge")
    view = await _view(ws, lambda v: "turn-lost" in _kinds(v))
    assert _kinds(view)[3:] == ["play", "challenge", "turn-lost"]
    assert "challenged in vain" in view["moves"][4]["text"]
    # The bot plays again; accepted, its play stands and the browser is on turn.
    view = await _view(ws, lambda v: v["pending"] is not None and v["turn"] == 0)
    await _play(ws, kind="accept")
    view = await _view(ws, lambda v: v["pending"] is None and v["turn"] == 0)
    assert view["scores"][1] == sum(m["score"] for m in view["moves"] if m["player"] == 1)
    await ws.close()  # a browser gone for good ends the game (after its grace)
    lobby = server_lobby(server.services)
    [room] = lobby.rooms
    assert room.game.variant == DOUBLE_VARIANT  # type: ignore[attr-defined]


async def test_twente_and_clarkson_clients_never_sit_at_a_double_table(
    server: MeepleServer,
) -> None:
    """Their protocols cannot express a challenge: REQUESTGAME 2 opens a Twente table
    next to the open double table, and sitting either kind there by id is refused."""
    lobby = server_lobby(server.services)
    ws = await web_socket(server)
    create = {"type": "create", "game": "scrabble", "variant": "double", "size": 2, "name": "ida"}
    await ws.send(json.dumps(create))
    seated = json.loads(await ws.recv())
    twente = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "tom")
    try:
        await twente.request_game(2)
        await eventually(lambda: len(lobby.tables("scrabble")) == 2, "two tables", every=0.01)
        tables = {t.variant: [s.name for s in t.seats] for t in lobby.tables("scrabble")}
        assert tables == {"double": ["ida"], "twente": ["tom"]}
        for handler in (TwenteHandler, ClarksonHandler):
            seat = _Seat(handler.protocol, handler.variants)
            with pytest.raises(VariantNotExpressible) as refused:
                lobby.sit(seated["table"], seat)
            assert refused.value.protocol == handler.protocol
    finally:
        await twente.close()
        await ws.close()


class _Seat:
    """A seat declaring what a protocol's handler declares (its name and variants)."""

    def __init__(self, protocol: str, variants: frozenset[tuple[str, str]]) -> None:
        self.name = f"a-{protocol}-client"
        self.protocol = protocol
        self.variants = variants

    def deliver(self, event: object) -> None:
        pass

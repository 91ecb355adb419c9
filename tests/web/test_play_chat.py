"""Chat between a browser seat and the other seats of its game (issue 13), over loopback.

The browser's ``chat`` goes to its room as that game's chat command; protocol clients
with chat (Spectrangle's extension, Twente's CHAT flag) hear it in their own words, and
what they say reaches the browser as ``chat``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from tests.patience import PATIENCE
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.clients.spectrangle import SpectrangleClient
from meeple.clients.twente import TwenteClient
from meeple.protocols.spectrangle import ChatFrom
from meeple.protocols.twente.messages import NotifyChat
from meeple.server.lobby.tables import server_lobby

Message = dict[str, Any]


async def _until(ws: ClientConnection, wanted: Callable[[Message], bool]) -> Message:
    """The next message ``wanted`` accepts (seat views and the like are skipped)."""
    while True:
        message: Message = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
        if wanted(message):
            return message


def _chat(sender: str, text: str) -> Callable[[Message], bool]:
    return lambda m: m == {"type": "chat", "from": sender, "text": text}


def _error(m: Message) -> bool:
    return m["type"] == "error"


async def _create(ws: ClientConnection, game: str, variant: str, size: int, name: str) -> None:
    await ws.send(
        json.dumps({"type": "create", "game": game, "variant": variant, "size": size, "name": name})
    )
    await _until(ws, lambda m: m["type"] == "seated")


async def _heard(client: SpectrangleClient, text: str) -> ChatFrom:
    while True:
        message = await asyncio.wait_for(client.receive(), PATIENCE)
        if isinstance(message, ChatFrom) and message.text == text:
            return message


async def test_a_browser_and_a_spectrangle_chat_client_hear_each_other(
    make_server: ServerFactory,
) -> None:
    """At a 3-seat Spectrangle table: before the game chat is refused (not-now); then the
    browser's line reaches the client with the chat extension (and comes back to the
    browser), the client's line reaches the browser, the client without the extension
    hears neither; a burst over the rate limit is too-fast and the socket stays."""
    server = await make_server("spectrangle")
    port = server.ports["spectrangle"]
    ws = await web_socket(server)
    await _create(ws, "spectrangle", "standard", 3, "ria")
    await ws.send(json.dumps({"type": "chat", "text": "anyone there?"}))
    refused = await _until(ws, _error)
    assert refused["code"] == "not-now"
    sol = await SpectrangleClient.connect("127.0.0.1", port, "sol", chat=True)
    tam = await SpectrangleClient.connect("127.0.0.1", port, "tam")
    await sol.request_game(3)
    await tam.request_game(3)
    lobby = server_lobby(server.services)
    while not lobby.rooms:
        await asyncio.sleep(0.01)

    await ws.send(json.dumps({"type": "chat", "text": "good luck, sol & tam"}))
    await _until(ws, _chat("ria", "good luck, sol & tam"))
    heard = await _heard(sol, "good luck, sol & tam")
    assert heard.name == "ria"

    await sol.chat("thanks ria, you too")
    await _until(ws, _chat("sol", "thanks ria, you too"))
    assert (await _heard(sol, "thanks ria, you too")).name == "sol"  # the relay's receipt

    # The burst: 1 of ria's 5 lines is spent (the refused one did not count; sol's line
    # is sol's); 4 more go and the 5th is too fast (the error may come before the echoes).
    for i in range(5):
        await ws.send(json.dumps({"type": "chat", "text": f"line {i}"}))
    echoed: list[str] = []
    errors: list[str] = []
    while len(echoed) < 4 or not errors:
        message = await _until(ws, lambda m: m["type"] in ("error", "chat"))
        if message["type"] == "chat":
            echoed.append(message["text"])
        else:
            errors.append(message["code"])
    assert echoed == [f"line {i}" for i in range(4)]
    assert errors == ["too-fast"]
    await ws.send(json.dumps({"type": "ping", "id": 3}))
    await _until(ws, lambda m: m == {"type": "pong", "id": 3})
    assert (await _heard(sol, "line 3")).name == "ria"

    # tam never asked for chat: it hears the game, and no chat line at all.
    lines: list[object] = []
    try:
        while True:
            lines.append(await asyncio.wait_for(tam.receive(), 0.3))
    except TimeoutError:
        pass
    assert lines
    assert not any(isinstance(line, ChatFrom) for line in lines)
    for client in (sol, tam):
        await client.close()
    await ws.close()


async def test_a_browser_and_a_twente_chat_client_hear_each_other(
    make_server: ServerFactory,
) -> None:
    """At a Scrabble table: the browser's line is a NOTIFYCHAT for the Twente client that
    announced CHAT; the client's SENDCHAT reaches the browser."""
    server = await make_server("twente")
    ws = await web_socket(server)
    await _create(ws, "scrabble", "twente", 2, "wes")
    ann = await TwenteClient.connect("127.0.0.1", server.ports["twente"], "ann", chat=True)
    await ann.request_game(2)
    await _until(ws, lambda m: m["type"] == "seat")
    await ws.send(json.dumps({"type": "chat", "text": "hello from the web"}))
    await _until(ws, _chat("wes", "hello from the web"))
    while True:
        message = await asyncio.wait_for(ann.receive(), PATIENCE)
        if isinstance(message, NotifyChat):
            assert (message.player, message.text) == ("wes", "hello from the web")
            break
    await ann.chat("hello from Twente")
    await _until(ws, _chat("ann", "hello from Twente"))
    await ann.close()
    await ws.close()


async def test_a_browser_chats_at_a_santorini_table(make_server: ServerFactory) -> None:
    """Santorini's room takes chat from a browser (its line comes back); AM27 has no chat,
    and a bot seat ignores it: the game goes on."""
    server = await make_server("santorini")
    ws = await web_socket(server)
    await _create(ws, "santorini", "standard", 2, "pia")
    lobby = server_lobby(server.services)
    [table] = lobby.tables("santorini")
    await ws.send(json.dumps({"type": "bot", "table": table.id}))
    await _until(ws, lambda m: m["type"] == "seat")
    await ws.send(json.dumps({"type": "chat", "text": "your move, bot"}))
    await _until(ws, _chat("pia", "your move, bot"))
    [room] = lobby.rooms
    assert not room.finished
    await ws.close()

"""The spectators' chat of a game (issue 34.5), over loopback with real sockets.

Those who watch a game (``subscribe`` ``game``) read and write a chat of their own,
apart from the players' chat; the players' seats never hear it, and a player may not
write to it during the game. Hostile lines get an error and the connection and the
game go on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.web.helpers import ServerFactory, web_socket
from websockets.asyncio.client import ClientConnection

from meeple.protocols.web import CHAT_BURST, MAX_CHAT_LENGTH
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import ServerConfig
from meeple.server.lobby.tables import server_lobby

Message = dict[str, Any]


async def _until(ws: ClientConnection, wanted: Callable[[Message], bool]) -> Message:
    while True:
        message: Message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if wanted(message):
            return message


async def _drain(ws: ClientConnection) -> list[Message]:
    """Everything ``ws`` receives until the answer to a ping (the server answers in order)."""
    await ws.send(json.dumps({"type": "ping", "id": 7}))
    seen: list[Message] = []
    while True:
        message: Message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message == {"type": "pong", "id": 7}:
            return seen
        seen.append(message)


async def _game(server: MeepleServer) -> tuple[ClientConnection, str]:
    """pia at a Santorini table with a bot (which waits for her): the game and its uid."""
    pia = await web_socket(server)
    await pia.send(
        json.dumps(
            {"type": "create", "game": "santorini", "variant": "standard", "size": 2, "name": "pia"}
        )
    )
    seated = await _until(pia, lambda m: m["type"] == "seated")
    await pia.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
    view = await _until(pia, lambda m: m["type"] == "seat")
    return pia, view["uid"]


async def _watcher(server: MeepleServer, uid: str) -> ClientConnection:
    ws = await web_socket(server)
    await ws.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
    await _until(ws, lambda m: m["type"] == "game")
    return ws


def _say(uid: str, name: str, text: str) -> str:
    return json.dumps({"type": "watch-chat", "uid": uid, "name": name, "text": text})


def _line(m: Message) -> bool:
    return m["type"] == "watch-chat"


async def test_spectators_chat_apart_from_the_players(make_server: ServerFactory) -> None:
    """kim's line reaches both watchers as written (markup too: the page shows text);
    pia, who plays, neither hears it nor may write to it, even watching her own game;
    a player's name is refused, so is a browser that does not watch the game."""
    server = await make_server(clock=VirtualClock())
    pia, uid = await _game(server)
    kim, lee = await _watcher(server, uid), await _watcher(server, uid)
    text = "<b>nice</b> & 'move'"
    await kim.send(_say(uid, "kim", text))
    for ws in (kim, lee):
        line = await _until(ws, _line)
        assert line == {"type": "watch-chat", "uid": uid, "from": "kim", "text": text}
    assert not [m for m in await _drain(pia) if _line(m)]
    await pia.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
    await pia.send(_say(uid, "pia2", "psst"))
    refusal = await _until(pia, lambda m: m["type"] == "error")
    assert refusal["code"] == "refused"
    assert "players do not write" in refusal["message"]
    await lee.send(_say(uid, "pia", "I am pia"))
    refusal = await _until(lee, lambda m: m["type"] == "error")
    assert refusal["code"] == "refused"
    assert "plays this game" in refusal["message"]
    stranger = await web_socket(server)
    await stranger.send(_say(uid, "sam", "hello"))
    refusal = await _until(stranger, lambda m: m["type"] == "error")
    assert refusal["code"] == "not-now"
    assert not [m for m in await _drain(kim) if _line(m)]  # none of those went out
    [room] = server_lobby(server.services).rooms
    assert not room.finished
    for ws in (pia, kim, lee, stranger):
        await ws.close()


async def test_the_spectators_chat_has_the_players_rate_limit(make_server: ServerFactory) -> None:
    """On the server's clock: a burst of CHAT_BURST lines, then too-fast (the socket stays),
    and after two seconds a line goes out again."""
    clock = VirtualClock()
    server = await make_server(clock=clock)
    pia, uid = await _game(server)
    kim = await _watcher(server, uid)
    for i in range(CHAT_BURST):
        await kim.send(_say(uid, "kim", f"line {i}"))
    await kim.send(_say(uid, "kim", "one too many"))
    got = await _drain(kim)
    assert [m["text"] for m in got if _line(m)] == [f"line {i}" for i in range(CHAT_BURST)]
    assert [m["code"] for m in got if m["type"] == "error"] == ["too-fast"]
    await clock.advance(2.0)
    await kim.send(_say(uid, "kim", "again"))
    assert (await _until(kim, _line))["text"] == "again"
    await pia.close()
    await kim.close()


# Hostile lines: odd names and texts (control characters, separators, markup, too long),
# other games' uids, missing or extra fields, wrong types.
_ANY_TEXT = st.text(max_size=40) | st.text(
    min_size=MAX_CHAT_LENGTH - 2, max_size=MAX_CHAT_LENGTH + 3
)
_HOSTILE = st.fixed_dictionaries(
    {"type": st.just("watch-chat")},
    optional={
        "uid": st.sampled_from(["UID", "0", "ffffffffffff"]) | st.text(max_size=40) | st.integers(),
        "name": st.sampled_from(["kim", "pia", ""]) | st.text(max_size=30) | st.none(),
        "text": _ANY_TEXT | st.lists(st.integers(), max_size=2),
        "extra": st.integers(),
    },
)


_examples = itertools.count()


@asynccontextmanager
async def _server(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    # A database of each example's own: no game of an earlier example comes back.
    config = ServerConfig(database=str(tmp_path / f"chat-{next(_examples)}.sqlite3")).only("web")
    server = MeepleServer(config)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=st.lists(_HOSTILE, min_size=1, max_size=4))
async def test_hostile_spectator_lines_leave_the_connection_and_game_going(
    tmp_path: Path, lines: list[Message]
) -> None:
    """Whatever a spectator sends as ``watch-chat``, it gets its line relayed exactly or
    an error; then it still watches (a pong, a line from another watcher reaches it), the
    player hears nothing of it and the game is still on."""
    async with _server(tmp_path) as server:
        pia, uid = await _game(server)
        kim, lee = await _watcher(server, uid), await _watcher(server, uid)
        for line in lines:
            if line.get("uid") == "UID":
                line = {**line, "uid": uid}
            await kim.send(json.dumps(line))
        got = await _drain(kim)
        relayed = [m for m in got if _line(m)]
        for m in relayed:
            sent = next(
                x for x in lines if x.get("text") == m["text"] and x.get("name") == m["from"]
            )
            assert isinstance(sent["text"], str)
            assert m["uid"] == uid
        assert len(relayed) + len([m for m in got if m["type"] == "error"]) == len(lines)
        await lee.send(_say(uid, "lee", "still here?"))
        assert (await _until(kim, lambda m: _line(m) and m["from"] == "lee"))[
            "text"
        ] == "still here?"
        assert not [m for m in await _drain(pia) if _line(m)]
        [room] = server_lobby(server.services).rooms
        assert not room.finished
        for ws in (pia, kim, lee):
            await ws.close()

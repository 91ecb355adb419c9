"""A reserved name at the browser's seat: refused unless the WebSocket is signed in as it."""

from __future__ import annotations

import asyncio
import json
import re
from http.cookies import SimpleCookie
from typing import Any

import httpx
import websockets
from tests.patience import PATIENCE
from tests.web.helpers import ServerFactory
from websockets.asyncio.client import ClientConnection

from meeple.protocols.web import PROTOCOL
from meeple.server.app import MeepleServer
from meeple.web.accounts import COOKIE, FORM_COOKIE, Scrypt


def _cookie(response: httpx.Response, name: str) -> str:
    # The cookies are Secure, so httpx would not send them back over http://: by hand.
    for header in response.headers.get_list("set-cookie"):
        jar: SimpleCookie = SimpleCookie(header)
        if name in jar:
            return jar[name].value
    raise AssertionError(f"no {name} cookie in {response.headers}")


async def _reserve(server: MeepleServer, name: str, password: str) -> str:
    """Reserve ``name`` through /account; the signed-in session cookie's value."""
    async with httpx.AsyncClient(
        verify=False, base_url=f"http://127.0.0.1:{server.ports['web']}"
    ) as http:
        page = await http.get("/account")
        match = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert match is not None
        reply = await http.post(
            "/account/reserve",
            data={"csrf": match.group(1), "name": name, "password": password},
            headers={"cookie": f"{FORM_COOKIE}={_cookie(page, FORM_COOKIE)}"},
        )
    assert reply.status_code == 303
    return _cookie(reply, COOKIE)


async def _ws(server: MeepleServer, session: str | None = None) -> ClientConnection:
    headers = {} if session is None else {"cookie": f"{COOKIE}={session}"}
    ws = await websockets.connect(
        f"ws://127.0.0.1:{server.ports['web']}/ws", additional_headers=headers
    )
    await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _reply(ws: ClientConnection) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), PATIENCE))
    return reply


def _create(name: str) -> str:
    return json.dumps(
        {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": name}
    )


async def test_a_reserved_name_needs_its_session_at_the_seat(make_server: ServerFactory) -> None:
    """An anonymous browser asking for a reserved name (any case) at create or sit gets
    the protocol's ``refused`` error and no seat; a free name still works; the browser
    signed in as the name is seated under it."""
    server = await make_server("twente")
    app = server.listeners["web"].app  # type: ignore[attr-defined]
    app.state.accounts.cost = Scrypt(n=2**8)
    session = await _reserve(server, "Rae", "correct horse")

    stranger = await _ws(server)
    for name in ("Rae", "rAE"):
        await stranger.send(_create(name))
        reply = await _reply(stranger)
        assert reply["type"] == "error"
        assert reply["code"] == "refused"
        assert "reserved" in reply["message"]
    await stranger.send(json.dumps({"type": "sit", "table": "table-1", "name": "rae"}))
    reply = await _reply(stranger)
    assert (reply["type"], reply["code"]) == ("error", "refused")
    assert "Rae" not in server.services.names
    forged = await _ws(server, "not-a-session")
    await forged.send(_create("Rae"))
    assert (await _reply(forged))["code"] == "refused"

    owner = await _ws(server, session)
    await owner.send(_create("Rae"))
    seated = await _reply(owner)
    assert seated["type"] == "seated"
    assert seated["name"] == "Rae"
    await stranger.send(json.dumps({"type": "sit", "table": seated["table"], "name": "zed"}))
    while (reply := await _reply(stranger))["type"] != "seated":
        assert reply["type"] != "error", reply
    assert reply["name"] == "zed"
    for ws in (stranger, forged, owner):
        await ws.close()

"""The console routes in process, against a fake console in contest mode."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.services import close_services

from meeple.games.scrabble.game import Game
from meeple.server.app import Services
from meeple.server.config import ServerConfig, WebConfig
from meeple.server.lobby.cmpn402_console import ConsoleError
from meeple.web.app import create_app
from meeple.web.console import COOKIE


class FakeConsole:
    """A round-robin console with two live boards; records the actions asked of it."""

    def __init__(self, log: Path) -> None:
        self.games = [Game(["ann", "bob"], random.Random(1)), Game(["cy", "di"], random.Random(2))]
        self.acted: list[tuple[str, dict[str, str]]] = []
        self.log = log

    def snapshot(self) -> dict[str, Any]:
        boards = [
            {
                "board": i + 1,
                "game_id": f"g{i}",
                "players": list(g.players),
                "first": 0,
                "turn": 0,
                "scores": [0, 0],
                "bag": 86,
                "clocks": {"players_ms": [600000, 599000], "total_ms": 1200000, "running": True},
                "challenge": {"open": True, "remaining_ms": 4000},
                "moves": [],
                "game": g,
            }
            for i, g in enumerate(self.games)
        ]
        return {
            "mode": "round-robin", "state": "running", "manual_start": False,
            "agents": [{"name": n, "address": f"127.0.0.1:{4000 + i}", "connected": True,
                        "board": 1 + i // 2} for i, n in enumerate(["ann", "bob", "cy", "di"])],
            "boards": boards,
            "series": {"games": 6, "played": 0, "results": []},
            "standings": [{"name": "ann", "wins": 0, "draws": 0, "losses": 0, "points": 0,
                           "spread": 0, "games_left": 3}],
            "files": [{"game_id": "g0", "log": True, "gcg": False}],
        }  # fmt: skip

    def act(self, action: str, **params: str) -> str:
        if action == "withdraw" and params.get("name") == "nobody":
            raise ConsoleError("no agent named nobody")
        self.acted.append((action, params))
        return f"{action}: ok"

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None

    def file(self, game_id: str, kind: str) -> Path | None:
        return self.log if (game_id, kind) == ("g0", "log") else None

    def check_token(self, token: str) -> bool:
        return token == "tok"


@pytest.fixture
def console(tmp_path: Path) -> FakeConsole:
    log = tmp_path / "g0.log"
    log.write_text("12:00:00 > START\n", encoding="utf-8")
    return FakeConsole(log)


@pytest.fixture
async def client(tmp_path: Path, console: FakeConsole) -> AsyncIterator[httpx.AsyncClient]:
    services = Services(
        ServerConfig(database=str(tmp_path / "db.sqlite3"), web=WebConfig(hosts=("meeple.test",)))
    )
    services.console = console
    app = create_app(services)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://meeple.test") as c:
        yield c
    await close_services(services)  # the journal's writer thread ends with the test


async def _sign_in(client: httpx.AsyncClient) -> str:
    response = await client.post("/cmpn402/login", data={"token": "tok"})
    assert response.status_code == 303
    assert "HttpOnly" in response.headers["set-cookie"]
    assert "SameSite=strict" in response.headers["set-cookie"]
    assert "Secure" in response.headers["set-cookie"]
    page = (await client.get("/cmpn402")).text
    return page.split('name="csrf" value="')[1].split('"')[0]


async def test_read_only_page_shows_every_board_without_racks(
    client: httpx.AsyncClient, console: FakeConsole
) -> None:
    """Without signing in: boards, clocks, challenge window, standings; no forms, no racks,
    and the files are named but not linked."""
    page = (await client.get("/cmpn402")).text
    assert page.count('class="cboard"') == 2
    assert "challenge window: 4.0 s" in page
    assert "9:59" in page
    assert 'id="login"' in page
    assert 'id="actions"' not in page
    assert "/cmpn402/files/g0/log" not in page
    for game in console.games:
        for rack in game.racks:
            assert rack not in page
    assert (await client.get("/cmpn402/files/g0/log")).status_code == 401


async def test_actions_need_the_session_and_its_csrf_token(
    client: httpx.AsyncClient, console: FakeConsole
) -> None:
    """401 without a session, 403 with a wrong token or a foreign Origin, 409 when the
    console refuses, and the action done with both; GET is not allowed."""
    assert (await client.post("/cmpn402/action", data={"action": "pause"})).status_code == 401
    refused = await client.post("/cmpn402/login", data={"token": "nope"})
    assert refused.status_code == 403
    # The console page with the error in it, not bare text (issue 24).
    assert refused.headers["content-type"].startswith("text/html")
    assert 'class="flash error"' in refused.text
    assert "Wrong admin token" in refused.text
    assert 'id="login"' in refused.text
    csrf = await _sign_in(client)
    wrong = await client.post("/cmpn402/action", data={"action": "pause", "csrf": "x"})
    assert wrong.status_code == 403
    foreign = await client.post(
        "/cmpn402/action",
        data={"action": "pause", "csrf": csrf},
        headers={"Origin": "https://evil.example"},
    )
    assert foreign.status_code == 403
    assert console.acted == []
    refused = await client.post(
        "/cmpn402/action",
        data={"action": "withdraw", "name": "nobody", "csrf": csrf},
        headers={"Accept": "application/json"},
    )
    assert refused.status_code == 409
    assert refused.json() == {"ok": False, "message": "no agent named nobody"}
    done = await client.post(
        "/cmpn402/action",
        data={"action": "withdraw", "name": "cy", "csrf": csrf},
        headers={"Accept": "application/json"},
    )
    assert done.json() == {"ok": True, "message": "withdraw: ok"}
    assert console.acted == [("withdraw", {"name": "cy"})]
    assert (await client.get("/cmpn402/action")).status_code == 405
    assert (await client.post("/cmpn402/action", content=b"x" * 5000)).status_code == 403
    page = (await client.get("/cmpn402")).text
    assert 'data-action="abort"' in page  # contest mode
    download = await client.get("/cmpn402/files/g0/log")
    assert download.text == "12:00:00 > START\n"
    assert (await client.get("/cmpn402/files/g9/gcg")).status_code == 404
    await client.post("/cmpn402/logout", data={"csrf": csrf})
    client.cookies.delete(COOKIE)
    assert (await client.post("/cmpn402/action", data={"action": "pause"})).status_code == 401


async def test_sign_in_and_the_admin_endpoint_share_one_limit(
    tmp_path: Path, console: FakeConsole
) -> None:
    """The admin token has two doors, the console's sign-in and the referee's /admin:
    an address gets five wrong guesses a minute in all (issue 30.7), then 429 at both."""
    from websockets.datastructures import Headers
    from websockets.http11 import Request

    from meeple.server.clock import VirtualClock
    from meeple.server.edge.attempts import admin_attempts
    from meeple.server.edge.cmpn402 import admin_gate

    clock = VirtualClock()
    config = ServerConfig(
        database=str(tmp_path / "db.sqlite3"), web=WebConfig(hosts=("meeple.test",))
    )
    services = Services(config, clock=clock)
    services.console = console
    transport = httpx.ASGITransport(app=create_app(services), client=("10.1.2.3", 4567))

    def gate(token: str) -> int:
        request = Request("/admin/status", Headers([("Authorization", f"Bearer {token}")]))
        answer = admin_gate(
            request,
            ("status",),
            (),
            console.check_token,
            attempts=admin_attempts(services),
            address="10.1.2.3",
        )
        return 200 if isinstance(answer, tuple) else answer.status_code

    async with httpx.AsyncClient(transport=transport, base_url="https://meeple.test") as c:
        for guess in ("a", "b", "c"):
            assert (await c.post("/cmpn402/login", data={"token": guess})).status_code == 403
        assert gate("d") == 403
        assert gate("e") == 403
        limited = await c.post("/cmpn402/login", data={"token": "tok"})
        assert limited.status_code == 429
        assert gate("tok") == 429
        await clock.advance(61)
        assert gate("tok") == 200
        assert (await c.post("/cmpn402/login", data={"token": "tok"})).status_code == 303
    await close_services(services)

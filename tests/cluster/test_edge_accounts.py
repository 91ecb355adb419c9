"""Accounts on a cluster's edges (issue 32.6; docs/cluster.md, "Accounts on edges"):
``meeple serve``'s reserved names, the pages on every edge, the reservations, passwords
and sessions on a store node (PostgreSQL), asked over the bus. ``meeple node``
processes on loopback with real NATS and PostgreSQL; a browser's cookies are kept by
hand (they are ``Secure``: an HTTP client would not send them over plain HTTP)."""

from __future__ import annotations

import asyncio
import json
import re
from http.cookies import SimpleCookie
from typing import Any

import httpx
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.async_api import Browser, expect
from tests.cluster.conftest import ModuleNodes
from tests.cluster.test_edge_web import _play, _until
from tests.cluster.test_nodes import Nodes, nodes
from tests.patience import GAME_PATIENCE, PATIENCE, PATIENCE_MS, eventually
from tests.web.helpers import NEXT_VIEW, wait_for
from tests.web.test_play_scrabble_browser import NO_CURSOR, square

from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import ClarksonClient, NameRefused
from meeple.clients.twente import TwenteClient, TwenteClientError
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import DEFAULT_LEXICON, Lexicon, load_lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.node.launch import NodeProcess
from meeple.protocols.web import PROTOCOL
from meeple.server.store.database import open_store
from meeple.web.accounts import COOKIE, FORM_COOKIE, KNOWN_COOKIE, MAX_NAME_LENGTH

__all__ = ["nodes"]

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def enable() -> Lexicon:
    return load_lexicon(DEFAULT_LEXICON)


async def _hub(shared: ModuleNodes) -> NodeProcess:
    """The module's lobby and store node, on the module's database (``shared.pg_url``)."""
    return await shared.node("hub", "lobby,store", store=True)


async def _edge(shared: ModuleNodes, name: str) -> NodeProcess:
    """The module's edge ``name``, with the web and account pages on its API port. The
    tests that share one reserve names of their own ("Ann", "Zoe") and sign in a few
    times at most: under its 5 attempts a minute per address. The hostile forms, which
    try many, have an edge to themselves."""
    return await shared.node(name, "edge", "--api-port", "0")


class Visitor:
    """A browser's cookies across edges (any edge of the cluster: a load balancer's)."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}

    def header(self) -> dict[str, str]:
        if not self.cookies:
            return {}
        return {"cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}

    def keep(self, response: httpx.Response) -> None:
        for line in response.headers.get_list("set-cookie"):
            jar: SimpleCookie = SimpleCookie()
            jar.load(line)
            for key, morsel in jar.items():
                if morsel["max-age"] == "0" or not morsel.value.strip('"'):
                    self.cookies.pop(key, None)
                else:
                    self.cookies[key] = morsel.value

    async def get(self, port: int, path: str) -> httpx.Response:
        async with httpx.AsyncClient(
            verify=False, base_url=f"http://127.0.0.1:{port}", timeout=10
        ) as http:
            response = await http.get(path, headers=self.header())
        self.keep(response)
        return response

    async def post(self, port: int, path: str, form: dict[str, str]) -> httpx.Response:
        async with httpx.AsyncClient(
            verify=False, base_url=f"http://127.0.0.1:{port}", timeout=10
        ) as http:
            response = await http.post(path, data=form, headers=self.header())
        self.keep(response)
        return response

    async def form(self, port: int, path: str, **fields: str) -> httpx.Response:
        """``/account``'s form on the edge at ``port``, with its CSRF token, posted."""
        page = await self.get(port, "/account")
        assert page.status_code == 200, page.text
        match = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert match is not None
        return await self.post(port, path, {"csrf": match.group(1), **fields})

    async def socket(self, port: int) -> Any:
        ws = await websockets.connect(
            f"ws://127.0.0.1:{port}/ws", max_size=2**22, additional_headers=self.header()
        )
        await ws.send(json.dumps({"type": "hello", "protocol": PROTOCOL}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        return ws


def _signed_in_as(page: httpx.Response) -> str | None:
    found = re.search(r'Signed in as <strong class="me">([^<]+)</strong>', page.text)
    return None if found is None else found.group(1)


async def _refused(ws: Any, timeout: float = 30.0) -> str:
    """The text of the next ``error`` the browser hears (``refused``)."""
    async with asyncio.timeout(timeout):
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "error":
                assert message["code"] == "refused", message
                return str(message["message"])


async def test_an_account_made_on_one_edge_signs_in_plays_and_is_rated_on_every_edge(
    module_nodes: ModuleNodes, enable: Lexicon
) -> None:
    """Reserve "Ann" on edge web1; its session cookie is signed in on web2 too, and a
    second browser signs in on web2 (a wrong password 403, a taken name 409, as
    ``meeple serve``). An anonymous browser and a Twente and Clarkson client on web2
    are refused the name (any casing); the signed-in browser plays a rated game against
    a server bot on web2 as Ann (a spectator on web1 may not chat as ANN, may as zed),
    and web1's player page shows the game. A sign-out on
    web1 signs that session out on web2. The database holds a scrypt hash; no password
    crossed to anywhere but the store node."""
    await _hub(module_nodes)
    web1, web2 = await _edge(module_nodes, "web1"), await _edge(module_nodes, "web2")
    await module_nodes.node("rooms1", "rooms")
    one, two = web1.listeners["api"], web2.listeners["api"]

    ann = Visitor()
    reserved = await ann.form(one, "/account/reserve", name="Ann", password=PASSWORD)
    assert reserved.status_code == 303, reserved.text
    assert reserved.headers["location"] == "/account?m=reserved"
    assert COOKIE in ann.cookies
    assert KNOWN_COOKIE in ann.cookies
    assert FORM_COOKIE not in ann.cookies
    line = next(c for c in reserved.headers.get_list("set-cookie") if c.startswith(COOKIE))
    for flag in ("httponly", "secure", "samesite=strict", "path=/"):
        assert flag in line.lower()
    # The same cookie on the other edge: signed in there too.
    assert _signed_in_as(await ann.get(two, "/account")) == "Ann"
    assert "signed in as Ann" in (await ann.get(two, "/play")).text

    # Another browser, on web2: serve's answers.
    bea = Visitor()
    taken = await bea.form(two, "/account/reserve", name="ANN", password="another one")
    assert taken.status_code == 409
    wrong = await bea.form(two, "/account/sign-in", name="ann", password="not the one!")
    assert wrong.status_code == 403
    assert wrong.text == "wrong name or password\n"
    right = await bea.form(two, "/account/sign-in", name="ann", password=PASSWORD)
    assert right.status_code == 303, right.text
    assert _signed_in_as(await bea.get(one, "/account")) == "Ann"

    # The name is refused to whoever is not signed in as it, on any edge, any protocol.
    anonymous = Visitor()
    ws = await anonymous.socket(two)
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ws.send(json.dumps({**create, "name": "aNN"}))
    assert "reserved" in await _refused(ws)
    await ws.close()
    with pytest.raises(TwenteClientError, match="E001"):
        await TwenteClient.connect("127.0.0.1", web2.listeners["twente"], "ANN")
    with pytest.raises(NameRefused):
        await ClarksonClient.connect("127.0.0.1", web1.listeners["clarkson"], "ann")
    free = await TwenteClient.connect("127.0.0.1", web2.listeners["twente"], "carl")
    await free.close()

    # Signed in: Ann plays a server bot on web2, two moves, then resigns (rated).
    ws = await ann.socket(two)
    await ws.send(json.dumps({**create, "name": "ann"}))
    table = (await _until(ws, "seated"))["table"]
    await ws.send(json.dumps({"type": "bot", "table": table, "level": "easy"}))
    first = await _until(ws, "seat")
    uid = first["uid"]
    # A spectator on web1 may not chat as the account's name; as another, it may.
    watcher = await anonymous.socket(one)
    await watcher.send(json.dumps({"type": "subscribe", "topic": "game", "uid": uid}))
    say = {"type": "watch-chat", "uid": uid, "text": "hello"}
    await watcher.send(json.dumps({**say, "name": "ANN"}))
    assert "reserved" in await _refused(watcher)
    await watcher.send(json.dumps({**say, "name": "zed"}))
    line = await _until(watcher, "watch-chat")
    assert (line["from"], line["text"]) == ("zed", "hello")
    await watcher.close()
    await _play(ws, enable, stop_after=2, first=first)
    await ws.send(json.dumps({"type": "leave"}))
    await ws.close()

    async def on_the_player_page() -> bool:
        page = await anonymous.get(one, "/players/ann")
        return page.status_code == 200 and f"/games/{uid}" in page.text

    await eventually(on_the_player_page, "the game on Ann's page", limit=GAME_PATIENCE)
    ratings = await anonymous.get(two, "/ratings?game=scrabble")
    assert '/players/ann"' in ratings.text

    # Signing out on web1 signs that session out on every edge, and only that one.
    session = ann.cookies[COOKIE]
    page = await ann.get(one, "/account")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    out = await ann.post(one, "/account/sign-out", {"csrf": csrf.group(1)})
    assert out.status_code == 303
    assert COOKIE not in ann.cookies
    stale = Visitor()
    stale.cookies[COOKIE] = session
    assert _signed_in_as(await stale.get(two, "/account")) is None
    assert _signed_in_as(await bea.get(two, "/account")) == "Ann"

    store = open_store(module_nodes.pg_url)
    try:
        account = store.account("ann")
        assert account is not None
        assert account.kdf == "scrypt:16384:8:1"
        assert PASSWORD.encode() not in account.password_hash
    finally:
        store.close()


async def test_a_reserved_name_is_refused_while_no_store_node_answers(
    nodes: Nodes, pg_url: str
) -> None:
    """Fail closed: with its store node SIGKILLed an edge cannot read the reservations,
    so a Twente client's name and a browser's are refused (E001, ``error`` ``refused``)
    and the account pages answer 503; a new
    store node brings both back, and the reserved name stays refused."""
    await nodes.start("hub", "lobby")
    store1 = await nodes.start("store1", "store", pg_url)
    web1 = await nodes.start("web1", "edge", None, "--api-port", "0")
    api, twente = web1.listeners["api"], web1.listeners["twente"]
    eve = Visitor()
    assert (
        await eve.form(api, "/account/reserve", name="eve", password=PASSWORD)
    ).status_code == 303
    store1.kill()
    with pytest.raises(TwenteClientError, match="E001"):
        await TwenteClient.connect("127.0.0.1", twente, "dan")
    ws = await eve.socket(api)
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
    await ws.send(json.dumps({**create, "name": "dan"}))
    assert "cannot be checked" in await _refused(ws)
    await ws.close()
    assert (await eve.get(api, "/account")).status_code == 503
    await nodes.start("store2", "store", pg_url)

    async def dan_plays() -> bool:
        try:
            client = await TwenteClient.connect("127.0.0.1", twente, "dan")
        except TwenteClientError:
            return False
        await client.close()
        return True

    await eventually(dan_plays, "dan's name given", limit=PATIENCE)
    with pytest.raises(TwenteClientError, match="E001"):
        await TwenteClient.connect("127.0.0.1", twente, "Eve")
    assert _signed_in_as(await eve.get(api, "/account")) == "eve"


async def test_chromium_signs_up_on_an_edge_and_plays_a_server_bot(
    module_nodes: ModuleNodes, browser: Browser, enable: Lexicon
) -> None:
    """Debian's chromium on an edge: the nav's Account link, the reserve form, signed
    in; /play has the name filled in, and the lobby's "Play Scrabble now" starts a game
    against a server bot as the account's name."""
    await _hub(module_nodes)
    web1 = await _edge(module_nodes, "web1")
    await module_nodes.node("rooms1", "rooms")
    base = f"http://127.0.0.1:{web1.listeners['api']}"
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(base + "/")
        await page.click("nav a[href='/account']")
        await page.fill("#reserve input[name=name]", "Zoe")
        await page.fill("#reserve input[name=password]", PASSWORD)
        await page.click("#reserve button")
        await expect(page.locator("#signed-in .me")).to_have_text("Zoe")
        await page.goto(base + "/play")
        await expect(page.locator("input[name=name]").first).to_have_value("Zoe")
        await page.goto(base + "/")
        await page.click("#play-now a[data-game=scrabble]")
        await expect(page.locator("#play")).to_be_visible(timeout=PATIENCE_MS)
        handle = await wait_for(page, NEXT_VIEW, arg=-1, timeout=PATIENCE_MS)
        view: dict[str, Any] = await handle.json_value()
        assert view["players"][view["you"]] == "Zoe"
        (bot,) = [p for i, p in enumerate(view["players"]) if i != view["you"]]
        assert bot.startswith("hardbot"), bot
        # One move of the engine's best play, typed on the board; the bot answers it.
        await page.evaluate(NO_CURSOR)
        best = ranked_moves(Board.from_rows(view["board"]), view["rack"], enable, ENGLISH)[0]
        tiles = sorted(best.tiles, key=lambda t: (t.y, t.x))
        await square(page, tiles[0].x, tiles[0].y).click()
        if len(tiles) > 1 and tiles[1].x == tiles[0].x:
            await square(page, tiles[0].x, tiles[0].y).click()
        for t in tiles:
            if t.tile.islower():
                await page.keyboard.press("?")
            await page.keyboard.press(t.tile.upper())
        seen = len(view["moves"])
        await page.click("#controls .send")
        handle = await wait_for(page, NEXT_VIEW, arg=seen + 1, timeout=PATIENCE_MS)
        after: dict[str, Any] = await handle.json_value()
        assert after["moves"][seen]["player"] == view["you"]
        assert after["moves"][seen + 1]["player"] != view["you"]
        await page.click("#resign")
        await page.click("#resign-yes")
        await expect(page.locator("#over")).to_be_visible(timeout=PATIENCE_MS)
    finally:
        await context.close()


_COOKIE_TEXT = st.text(
    st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=';,"\\'), max_size=80
)


async def test_hostile_account_forms_and_cookies_on_an_edge_never_fail(
    module_nodes: ModuleNodes,
) -> None:
    """Whatever a form holds (hypothesis: fields, raw bodies, content types, with and
    without the form cookie and its token, made-up session cookies), an edge answers
    one of ``meeple serve``'s statuses, never a 500; a name is reserved only through a
    well-formed form with the cookie's own token; and the edge goes on answering."""
    await _hub(module_nodes)
    port = (await _edge(module_nodes, "hostile")).listeners["api"]
    visitor = Visitor()
    page = await visitor.get(port, "/account")
    token = visitor.cookies[FORM_COOKIE]
    assert f'name="csrf" value="{token}"' in page.text
    base = f"http://127.0.0.1:{port}"
    answered: list[int] = []

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        path=st.sampled_from(["/account/reserve", "/account/sign-in", "/account/sign-out"]),
        fields=st.dictionaries(
            st.one_of(st.sampled_from(["name", "password", "csrf"]), st.text(max_size=10)),
            st.one_of(st.text(max_size=300), st.sampled_from(["", "a" * 65, "\x00", "p" * 300])),
            max_size=6,
        ),
        raw=st.one_of(st.none(), st.binary(max_size=3000)),
        content_type=st.sampled_from(
            ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain", ""]
        ),
        use_token=st.booleans(),
        form_cookie=st.one_of(st.none(), st.just(token), _COOKIE_TEXT),
        session=st.one_of(st.none(), _COOKIE_TEXT),
    )
    def hostile(
        path: str,
        fields: dict[str, str],
        raw: bytes | None,
        content_type: str,
        use_token: bool,
        form_cookie: str | None,
        session: str | None,
    ) -> None:
        if use_token:
            fields = {**fields, "csrf": token}
        cookies = {FORM_COOKIE: form_cookie, COOKIE: session}
        header = "; ".join(f"{k}={v}" for k, v in cookies.items() if v)
        headers = {"cookie": header} if header else {}
        if content_type:
            headers["content-type"] = content_type
        with httpx.Client(verify=False, base_url=base, timeout=10) as http:
            if raw is not None:
                reply = http.post(path, content=raw, headers=headers)
            elif content_type == "application/x-www-form-urlencoded":
                reply = http.post(path, data=fields, headers=headers)
            else:
                reply = http.post(path, content=repr(fields).encode(), headers=headers)
        assert reply.status_code in (303, 400, 401, 403, 409, 429), (path, reply.text)
        if reply.status_code == 303:
            assert path != "/account/sign-out"
            assert use_token
            assert form_cookie == token
            assert 0 < len(fields.get("name", "")) <= MAX_NAME_LENGTH
        answered.append(reply.status_code)

    await asyncio.to_thread(hostile)
    assert answered
    assert (await visitor.get(port, "/account")).status_code == 200

"""Reserved names: the /account forms, their guards, the rate limit, and may_use."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from tests.services import close_services

from meeple.server.app import Services
from meeple.server.clock import VirtualClock
from meeple.server.config import ServerConfig, WebConfig
from meeple.server.store.database import SCHEMA_VERSION, Store
from meeple.web import accounts
from meeple.web.accounts import (
    ACCOUNT_ATTEMPTS,
    ACCOUNT_WINDOW,
    ATTEMPTS,
    COOKIE,
    FORM_COOKIE,
    KNOWN_COOKIE,
    MAX_NAME_LENGTH,
    MAX_PASSWORD_LENGTH,
    Accounts,
    Scrypt,
    Session,
    may_use,
    session_of,
)
from meeple.web.app import create_app

BASE = "https://meeple.test"
# Cheap enough for many hypothesis examples; one test keeps the default cost.
CHEAP = Scrypt(n=2**8, r=8, p=1)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(start=1000.0)


@pytest.fixture
async def app(tmp_path: Path, clock: VirtualClock) -> AsyncIterator[Starlette]:
    services = Services(
        ServerConfig(database=str(tmp_path / "db.sqlite3"), web=WebConfig(hosts=("meeple.test",))),
        clock,
    )
    app = create_app(services)
    app.state.accounts.cost = CHEAP
    yield app
    await close_services(services)  # the journal's writer thread ends with the test


def _client(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


@pytest.fixture
async def http(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(app) as client:
        yield client


async def _csrf(http: httpx.AsyncClient) -> str:
    page = await http.get("/account")
    assert page.status_code == 200
    match = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


async def _reserve(http: httpx.AsyncClient, name: str, password: str) -> httpx.Response:
    csrf = await _csrf(http)
    form = {"csrf": csrf, "name": name, "password": password}
    return await http.post("/account/reserve", data=form)


def _session(app: Starlette, cookie: str | None) -> Session:
    headers = [] if cookie is None else [(b"cookie", f"{COOKIE}={cookie}".encode())]
    request = Request({"type": "http", "app": app, "headers": headers})
    return session_of(request)


async def test_reserve_signs_in_and_the_cookie_is_strict(
    app: Starlette, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Reserving a name stores an scrypt hash with its own salt (default cost), signs the
    browser in with a Secure, HttpOnly, SameSite=Strict cookie, and may_use follows."""
    app.state.accounts.cost = Scrypt()
    reply = await _reserve(http, "Ann", "correct horse")
    assert reply.status_code == 303
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    for flag in ("HttpOnly", "Secure", "SameSite=strict", "Path=/"):
        assert flag.lower() in cookie.lower()
    page = await http.get(reply.headers["location"])
    assert 'Signed in as <strong class="me">Ann</strong>' in page.text
    assert "Ann is now reserved for you" in page.text
    # The flash message is one of a fixed set: a crafted link shows nothing of its own.
    crafted = await http.get("/account", params={"m": "You are signed in as Mallory"})
    assert "Mallory" not in crafted.text
    db = sqlite3.connect(tmp_path / "db.sqlite3")
    [(name, digest, salt, kdf)] = db.execute(
        "SELECT name, password_hash, salt, kdf FROM accounts"
    ).fetchall()
    assert (name, kdf) == ("Ann", "scrypt:16384:8:1")
    assert len(salt) == 16
    assert digest == Scrypt().hash("correct horse", salt)
    assert b"correct horse" not in digest
    # Accounts came with schema 4; the database is at the current schema.
    assert Store(tmp_path / "db.sqlite3").schema_version == SCHEMA_VERSION >= 4

    me = _session(app, http.cookies[COOKIE])
    anonymous = _session(app, None)
    assert me.name == "Ann"
    assert may_use("Ann", me)
    assert may_use("ann", me)  # names compare by casefold, as the name registry does
    assert not may_use("ANN", anonymous)
    assert may_use("bob", anonymous)
    assert not may_use("Ann", _session(app, "forged-session-id"))


async def test_a_second_salt_differs_and_a_taken_name_is_409(app: Starlette) -> None:
    """Two accounts with one password get different salts and hashes; reserving a
    name that is taken (in any case) is refused."""
    async with _client(app) as one, _client(app) as two, _client(app) as three:
        assert (await _reserve(one, "ann", "password1")).status_code == 303
        assert (await _reserve(two, "bob", "password1")).status_code == 303
        taken = await _reserve(three, "ANN", "password2")
        # A signed-in browser's page has no forms; its old form token is gone.
        assert 'id="reserve"' not in (await two.get("/account")).text
    assert taken.status_code == 409
    store: Store = app.state.accounts.store
    a, b = store.account("ann"), store.account("bob")
    assert a is not None
    assert b is not None
    assert a.salt != b.salt
    assert a.password_hash != b.password_hash


async def test_sign_in_wrong_password_and_sign_out(app: Starlette) -> None:
    """Sign-in takes the right password only; sign-out needs the session (401) and
    its CSRF token (403), then the session is gone for may_use too."""
    async with _client(app) as owner:
        assert (await _reserve(owner, "ann", "s3cret-pass")).status_code == 303
    async with _client(app) as http:
        csrf = await _csrf(http)
        wrong = await http.post(
            "/account/sign-in", data={"csrf": csrf, "name": "ann", "password": "guess-1234"}
        )
        assert wrong.status_code == 403
        assert COOKIE not in http.cookies
        unknown = await http.post(
            "/account/sign-in", data={"csrf": csrf, "name": "zed", "password": "guess-1234"}
        )
        assert unknown.status_code == 403
        right = await http.post(
            "/account/sign-in", data={"csrf": csrf, "name": "ANN", "password": "s3cret-pass"}
        )
        assert right.status_code == 303
        session = http.cookies[COOKIE]
        assert _session(app, session).name == "ann"  # the name as reserved
        assert (await http.post("/account/sign-out", data={"csrf": "nope"})).status_code == 403
        signed_in_csrf = await _csrf(http)
        assert signed_in_csrf != csrf  # a new session, a new token
        out = await http.post("/account/sign-out", data={"csrf": signed_in_csrf})
        assert out.status_code == 303
        assert _session(app, session).name is None
        again = await http.post("/account/sign-out", data={"csrf": signed_in_csrf})
        assert again.status_code == 401


async def test_csrf_and_origin_guard_every_action(app: Starlette, http: httpx.AsyncClient) -> None:
    """Without the form cookie, with a wrong token or from a foreign Origin, reserve and
    sign-in are 403 and nothing is stored; GET on an action is 405."""
    form = {"name": "ann", "password": "password1"}
    async with _client(app) as fresh:
        no_cookie = await fresh.post("/account/reserve", data={**form, "csrf": "x"})
    assert no_cookie.status_code == 403
    csrf = await _csrf(http)
    assert FORM_COOKIE in http.cookies
    for path in ("/account/reserve", "/account/sign-in"):
        # (flipped, not replaced: a token may end in any letter)
        wrong_token = csrf[:-1] + ("B" if csrf.endswith("A") else "A")
        wrong = await http.post(path, data={**form, "csrf": wrong_token})
        assert wrong.status_code == 403
        missing = await http.post(path, data=form)
        assert missing.status_code == 403
        foreign = await http.post(
            path, data={**form, "csrf": csrf}, headers={"origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        assert (await http.get(path)).status_code == 405
    assert app.state.accounts.store.account("ann") is None
    same = await http.post(
        "/account/reserve", data={**form, "csrf": csrf}, headers={"origin": BASE}
    )
    assert same.status_code == 303


async def test_field_limits(http: httpx.AsyncClient) -> None:
    """Too long or malformed names and passwords are 400; an oversized body is 403."""
    csrf = await _csrf(http)
    cases = [
        ("x" * (MAX_NAME_LENGTH + 1), "password1"),
        ("", "password1"),
        (" ann", "password1"),
        ("an\x00n", "password1"),
        ("ann", "short"),
        ("ann", "p" * (MAX_PASSWORD_LENGTH + 1)),
    ]
    for name, password in cases:
        reply = await http.post(
            "/account/reserve", data={"csrf": csrf, "name": name, "password": password}
        )
        assert reply.status_code == 400, (name, password)
    huge = await http.post(
        "/account/reserve", data={"csrf": csrf, "name": "ann", "password": "p" * 5000}
    )
    assert huge.status_code == 403


async def test_sign_in_is_rate_limited_per_address(app: Starlette, clock: VirtualClock) -> None:
    """Past ATTEMPTS tries a minute from one address the answer is 429 with Retry-After,
    even with the right password; another address is not affected; a minute later the
    address may try again."""
    async with _client(app) as owner:
        assert (await _reserve(owner, "ann", "s3cret-pass")).status_code == 303
    attacker = httpx.ASGITransport(app=app, client=("10.0.0.9", 4000))
    async with httpx.AsyncClient(transport=attacker, base_url=BASE) as http:
        csrf = await _csrf(http)
        for _ in range(ATTEMPTS):
            reply = await http.post(
                "/account/sign-in", data={"csrf": csrf, "name": "ann", "password": "guess-123"}
            )
            assert reply.status_code == 403
        good = {"csrf": csrf, "name": "ann", "password": "s3cret-pass"}
        limited = await http.post("/account/sign-in", data=good)
        assert limited.status_code == 429
        assert 0 < int(limited.headers["retry-after"]) <= 61
        async with _client(app) as other:
            other_csrf = await _csrf(other)
            ok = await other.post("/account/sign-in", data={**good, "csrf": other_csrf})
            assert ok.status_code == 303
        await clock.advance(61)
        assert (await http.post("/account/sign-in", data=good)).status_code == 303


def _from(app: Starlette, address: str, cookies: dict[str, str] | None = None) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 4000))
    return httpx.AsyncClient(transport=transport, base_url=BASE, cookies=cookies)


async def _sign_in(http: httpx.AsyncClient, name: str, password: str) -> int:
    csrf = await _csrf(http)
    form = {"csrf": csrf, "name": name, "password": password}
    return (await http.post("/account/sign-in", data=form)).status_code


async def test_sign_in_is_limited_per_name_from_many_addresses(
    app: Starlette, clock: VirtualClock
) -> None:
    """Issue 30.7: 200 guesses at one name from 40 addresses (5 each, within every
    address's limit): only ACCOUNT_ATTEMPTS are tried, the rest are 429. Meanwhile the
    owner's browser (its known-browser cookie) signs in; a new browser with the right
    password waits until the window has passed since the last guess."""
    async with _client(app) as owner:
        assert (await _reserve(owner, "ann", "s3cret-pass")).status_code == 303
        known = owner.cookies[KNOWN_COOKIE]
    statuses: list[int] = []
    for i in range(40):
        async with _from(app, f"10.1.{i}.1") as attacker:
            for _ in range(ATTEMPTS):
                statuses.append(await _sign_in(attacker, "ANN", f"guess-{len(statuses):04d}"))
    assert len(statuses) == 200
    assert statuses.count(403) == ACCOUNT_ATTEMPTS
    assert statuses.count(429) == 200 - ACCOUNT_ATTEMPTS
    # Another name is not held by the guessing at ann.
    async with _from(app, "10.2.0.1") as bystander:
        assert (await _reserve(bystander, "bob", "bobs-pass1")).status_code == 303
    async with _from(app, "10.3.0.1") as elsewhere:
        assert await _sign_in(elsewhere, "ann", "s3cret-pass") == 429
    # The owner's browser (a new address: a phone on another network) gets in.
    async with _from(app, "10.4.0.1", cookies={KNOWN_COOKIE: known}) as phone:
        assert await _sign_in(phone, "ann", "s3cret-pass") == 303
    # A right password resets the name's count: the next browser is not held.
    async with _from(app, "10.5.0.1") as laptop:
        assert await _sign_in(laptop, "ann", "s3cret-pass") == 303


async def test_the_per_name_limit_lifts_after_its_window(
    app: Starlette, clock: VirtualClock
) -> None:
    """Once the guessing stops, the name is free again ACCOUNT_WINDOW seconds later: a
    guesser cannot lock the owner out for good."""
    async with _client(app) as owner:
        assert (await _reserve(owner, "ann", "s3cret-pass")).status_code == 303
    for i in range(ACCOUNT_ATTEMPTS + 1):
        async with _from(app, f"10.6.{i}.1") as attacker:
            await _sign_in(attacker, "ann", "guess-1234")
    async with _from(app, "10.7.0.1") as fresh:
        assert await _sign_in(fresh, "ann", "s3cret-pass") == 429
        await clock.advance(ACCOUNT_WINDOW + 1)
        assert await _sign_in(fresh, "ann", "s3cret-pass") == 303


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cookie=st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=60))
async def test_a_forged_known_browser_cookie_is_held_by_the_name_limit(
    app: Starlette, cookie: str
) -> None:
    """A made-up ``meeple_known`` value does not get past the per-name limit."""
    accounts_ = app.state.accounts
    for _ in range(ACCOUNT_ATTEMPTS):
        accounts_.account_limiter.allow("ann")
    assert not accounts_.knows(cookie, "ann")
    async with _from(app, "10.8.0.1", cookies={KNOWN_COOKIE: cookie.replace(";", "")}) as http:
        assert await _sign_in(http, "ann", "s3cret-pass") == 429


def test_limiter_forgets_old_addresses() -> None:
    """The limiter keeps at most max_keys addresses; the oldest is forgotten first."""
    clock = VirtualClock()
    limiter = accounts.AttemptLimiter(clock, attempts=1, window=60, max_keys=3)
    assert limiter.allow("a") is None
    assert limiter.allow("a") == 60
    for key in "bcd":
        assert limiter.allow(key) is None
    assert limiter.allow("a") is None  # forgotten, so allowed again


def test_accounts_survive_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    """A reservation is in the store: a new Accounts on the same file still refuses."""
    path = tmp_path / "db.sqlite3"
    store = Store(path)
    assert store.add_account("ann", b"h" * 32, b"s" * 16, CHEAP.kdf)
    assert not store.add_account("ANN", b"h" * 32, b"s" * 16, CHEAP.kdf)
    store.close()
    again = Store(path)
    fresh = Accounts(lambda: again, clock, cost=CHEAP)
    assert not may_use("ann", Session(fresh, None))
    assert may_use("ann", Session(fresh, "Ann"))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(["/account/reserve", "/account/sign-in", "/account/sign-out"]),
    fields=st.dictionaries(
        st.one_of(st.sampled_from(["name", "password", "csrf"]), st.text(max_size=10)),
        st.one_of(st.text(max_size=300), st.binary(max_size=40).map(lambda b: b.hex())),
        max_size=6,
    ),
    raw=st.one_of(st.none(), st.binary(max_size=3000)),
    content_type=st.sampled_from(
        ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain", ""]
    ),
    use_csrf=st.booleans(),
)
async def test_hostile_account_forms_never_crash_or_reserve_without_a_token(
    app: Starlette,
    path: str,
    fields: dict[str, str],
    raw: bytes | None,
    content_type: str,
    use_csrf: bool,
) -> None:
    """Whatever a form holds, the answer is one of the documented statuses, never a 500;
    a name is only reserved through a valid form with the page's CSRF token."""
    async with _client(app) as http:
        csrf = await _csrf(http)
        if use_csrf:
            fields = {**fields, "csrf": csrf}
        headers = {"content-type": content_type} if content_type else {}
        if raw is not None:
            reply = await http.post(path, content=raw, headers=headers)
        elif content_type == "application/x-www-form-urlencoded":
            reply = await http.post(path, data=fields)
        else:
            reply = await http.post(path, content=repr(fields).encode(), headers=headers)
        assert reply.status_code in (303, 400, 401, 403, 409, 429)
        if reply.status_code == 303:
            assert path != "/account/sign-out"
            assert use_csrf
            name = fields.get("name", "")
            assert 0 < len(name) <= MAX_NAME_LENGTH
            assert app.state.accounts.store.account(name) is not None
        page = await http.get("/account")
        assert page.status_code == 200


async def test_the_play_page_fills_in_the_signed_in_name(app: Starlette) -> None:
    """A browser signed in as a reserved name finds it in /play's name field; another
    browser finds the field empty."""
    async with _client(app) as me, _client(app) as anonymous:
        assert (await _reserve(me, "Ann", "correct horse")).status_code == 303
        mine = (await me.get("/play")).text
        assert re.search(r'<input name="name"[^>]* value="Ann"', mine)
        assert "signed in as Ann" in mine
        theirs = (await anonymous.get("/play")).text
        assert re.search(r'<input name="name"[^>]*>', theirs)
        assert 'value="Ann"' not in theirs
        assert "signed in as" not in theirs

"""Reserved names: a name with a password, so a rated name cannot be taken from the browser.

None of the five wire protocols authenticates a name: whoever connects as ``ann`` over
Twente, Clarkson, CMPN402, AM27 or Spectrangle plays, and is rated, as ``ann``. A name
reserved here (``POST /account/reserve``) may be used by a browser only when that
browser is signed in as it, and is refused to Twente, Clarkson, AM27 and Spectrangle
clients (issue 32.6: :class:`meeple.server.lobby.names.StoreReservations`, which
:meth:`Accounts.reserve` keeps current). The check the browser's play seat calls is
:func:`may_use`, with the :func:`session_of` its WebSocket carries.

- ``GET /account``: the forms (reserve, sign in) or, signed in, the name and sign-out.
  An anonymous visitor gets a form session (:class:`~meeple.web.console.Sessions`, the
  console's CSRF mechanism) in the ``meeple_account_form`` cookie; its forms carry that
  session's CSRF token.
- ``POST /account/reserve`` and ``/account/sign-in`` (``name``, ``password``, ``csrf``):
  403 without the form session's CSRF token or from a foreign ``Origin``, 400 for a
  field that is too long or malformed, 409 for a name already reserved, 403 for a wrong
  password, 429 past :data:`ATTEMPTS` tries per address per :data:`WINDOW` seconds, or
  (sign-in) past :data:`ACCOUNT_ATTEMPTS` tries at one name per :data:`ACCOUNT_WINDOW`
  seconds from all addresses together (issue 30.7), unless the browser carries that
  name's *known browser* cookie. Success signs in: a fresh session id in the
  ``meeple_account`` cookie (``Secure; HttpOnly; SameSite=Strict``, path ``/`` so the
  WebSocket carries it), and a known-browser cookie for the name.

The per-name limit stops a guesser with many addresses (it gets
:data:`ACCOUNT_ATTEMPTS` guesses per :data:`ACCOUNT_WINDOW` seconds at a name, whatever
its addresses); it cannot lock the name's owner out for good: the limit is a sliding
window (a name is free again :data:`ACCOUNT_WINDOW` seconds after the guessing stops),
a right password resets it, and a browser that has signed in as the name before (its
``meeple_known`` cookie, a random token the server remembers until it restarts) is not
held by it at all, only by its own address's limit.
- ``POST /account/sign-out`` (``csrf``): 401 when not signed in, 403 with a wrong token.

Passwords are hashed with :func:`hashlib.scrypt` and a random salt per account, in a
worker thread so the event loop never waits on it; the cost is stored with the hash.
Names compare by casefold, as the server's name registry does.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from meeple.server.clock import Clock
from meeple.server.edge.attempts import AttemptLimiter
from meeple.server.store.database import stored
from meeple.web.console import Sessions
from meeple.web.console import _form as read_form
from meeple.web.console import _same_origin as same_origin
from meeple.web.templating import render

if TYPE_CHECKING:
    from meeple.server.lobby.names import StoreReservations
    from meeple.server.store.database import Store

__all__ = [
    "ACCOUNT_ATTEMPTS",
    "ACCOUNT_WINDOW",
    "ATTEMPTS",
    "COOKIE",
    "FORM_COOKIE",
    "KNOWN_COOKIE",
    "MAX_NAME_LENGTH",
    "MAX_PASSWORD_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "WINDOW",
    "Accounts",
    "AttemptLimiter",
    "Scrypt",
    "Session",
    "may_use",
    "routes",
    "session_of",
]

COOKIE = "meeple_account"
FORM_COOKIE = "meeple_account_form"
KNOWN_COOKIE = "meeple_known"
# The longest name any listener takes is CMPN402's 64 bytes; no reserved name is longer.
MAX_NAME_LENGTH = 64
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
# Sign-in and reserve attempts (each one costs an scrypt) per client address.
ATTEMPTS = 5
WINDOW = 60.0
# Sign-in attempts at one name from all addresses together (issue 30.7): 40 addresses
# of 5 a minute each made 200 guesses a minute at one name; now 10 in 5 minutes.
ACCOUNT_ATTEMPTS = 10
ACCOUNT_WINDOW = 300.0
# Names the per-name limit remembers: evicting a name needs this many others tried,
# which the per-address limit makes slow.
_ACCOUNT_KEYS = 65_536
# A known-browser cookie lasts a year; the server remembers this many of them.
_KNOWN_AGE = 365 * 24 * 3600
_KNOWN_LIMIT = 65_536
_CSRF_LENGTH = 64


@dataclass(frozen=True, slots=True)
class Scrypt:
    """scrypt's cost; the default takes 16 MiB and some tens of milliseconds per hash."""

    n: int = 2**14
    r: int = 8
    p: int = 1

    @property
    def kdf(self) -> str:
        return f"scrypt:{self.n}:{self.r}:{self.p}"

    @classmethod
    def from_kdf(cls, kdf: str) -> Scrypt:
        name, n, r, p = kdf.split(":")
        if name != "scrypt":
            raise ValueError(f"unknown key derivation {name!r}")
        return cls(int(n), int(r), int(p))

    def hash(self, password: str, salt: bytes) -> bytes:
        return hashlib.scrypt(
            password.encode("utf-8"),
            salt=salt,
            n=self.n,
            r=self.r,
            p=self.p,
            maxmem=256 * self.n * self.r * self.p,
            dklen=32,
        )


class _SignedIn(Sessions):
    """The console's sessions (id -> CSRF token), each also signed in as a name."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self._names: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._name_limit = limit

    def sign_in(self, name: str) -> tuple[str, str]:
        session, csrf = self.create()
        self._names[session] = name
        while len(self._names) > self._name_limit:
            self._names.popitem(last=False)
        return session, csrf

    def name(self, session: str | None) -> str | None:
        # The base class forgets its oldest sessions; a name outlives none of them.
        if session is None or self.csrf(session) is None:
            return None
        return self._names.get(session)

    def drop(self, session: str | None) -> None:
        super().drop(session)
        if session:
            self._names.pop(session, None)


class Accounts:
    """The reserved names (in the store), the browsers signed in, the attempt limiter."""

    def __init__(
        self,
        store: Callable[[], Store],
        clock: Clock,
        *,
        cost: Scrypt | None = None,
        sessions: int = 4096,
        attempts: int = ATTEMPTS,
        window: float = WINDOW,
        account_attempts: int = ACCOUNT_ATTEMPTS,
        account_window: float = ACCOUNT_WINDOW,
        reservations: Callable[[], StoreReservations] | None = None,
    ) -> None:
        # A callable, so the store opens on first use like the pages'.
        self._store = store
        # meeple serve's reserved names in memory (issue 32.6), which its wire clients'
        # names are checked against too: kept current here; None: the store is asked.
        self._reservations = reservations
        self.cost = cost or Scrypt()
        self.signed_in = _SignedIn(sessions)
        self.forms = Sessions(sessions)
        self.limiter = AttemptLimiter(clock, attempts, window)
        # Issue 30.7: attempts at one name, whatever the address (keys: casefold names).
        self.account_limiter = AttemptLimiter(
            clock, account_attempts, account_window, max_keys=_ACCOUNT_KEYS
        )
        # Known-browser tokens -> the casefold name they signed in as (oldest forgotten).
        self._known: collections.OrderedDict[str, str] = collections.OrderedDict()

    @property
    def store(self) -> Store:
        return self._store()

    def knows(self, token: str | None, name: str) -> bool:
        """Whether ``token`` (a ``meeple_known`` cookie) has signed in as ``name``."""
        return token is not None and self._known.get(token) == name.casefold()

    def remember(self, name: str) -> str:
        """A new known-browser token for ``name`` (set on a successful sign-in)."""
        token = secrets.token_urlsafe(24)
        self._known[token] = name.casefold()
        while len(self._known) > _KNOWN_LIMIT:
            self._known.popitem(last=False)
        return token

    def reserved(self, name: str) -> bool:
        if self._reservations is not None:
            return self._reservations().reserved(name)
        return self.store.account(name) is not None

    async def reserve(self, name: str, password: str) -> bool:
        """Reserve ``name`` with ``password``; False when it is reserved already."""
        if await stored(self.reserved, name):
            return False
        salt = secrets.token_bytes(16)
        digest = await asyncio.to_thread(self.cost.hash, password, salt)
        added = self.store.add_account(name, digest, salt, self.cost.kdf)
        if added and self._reservations is not None:
            self._reservations().add(name)  # refused to the wire clients from now on
        return added

    async def check(self, name: str, password: str) -> str | None:
        """The reserved name as stored when ``password`` is right, else None.

        An unknown name costs a hash too, so the answer's timing does not say which.
        """
        account = await stored(self.store.account, name)
        if account is None:
            await asyncio.to_thread(self.cost.hash, password, b"\0" * 16)
            return None
        cost = Scrypt.from_kdf(account.kdf)
        digest = await asyncio.to_thread(cost.hash, password, account.salt)
        return account.name if hmac.compare_digest(digest, account.password_hash) else None


@dataclass(frozen=True, slots=True)
class Session:
    """Who a browser is: the name it is signed in as (None: anonymous), and the accounts."""

    accounts: Accounts
    name: str | None


def session_of(connection: HTTPConnection) -> Session:
    """The account session of a request or WebSocket (its ``meeple_account`` cookie)."""
    accounts: Accounts = connection.app.state.accounts
    return Session(accounts, accounts.signed_in.name(connection.cookies.get(COOKIE)))


def may_use(name: str, session: Session) -> bool:
    """True when a browser with ``session`` may play as ``name``: the name is not
    reserved, or the session is signed in as it (names compare by casefold)."""
    if session.name is not None and session.name.casefold() == name.casefold():
        return True
    return not session.accounts.reserved(name)


def valid_name(name: str) -> str | None:
    """Why ``name`` cannot be reserved, or None when it can."""
    if not name or len(name) > MAX_NAME_LENGTH:
        return f"a name has 1 to {MAX_NAME_LENGTH} characters"
    if name != name.strip() or not name.isprintable():
        return "a name has no control characters and no spaces at its ends"
    return None


def valid_password(password: str) -> str | None:
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        return f"a password has {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"
    return None


# --- pages ------------------------------------------------------------------------------


def _accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


def _set_cookie(response: Response, key: str, value: str) -> None:
    response.set_cookie(key, value, httponly=True, secure=True, samesite="strict", path="/")


def _delete_cookie(response: Response, key: str) -> None:
    response.delete_cookie(key, path="/", secure=True, httponly=True, samesite="strict")


async def account_page(request: Request) -> Response:
    accounts = _accounts(request)
    signed_in = request.cookies.get(COOKIE)
    name = accounts.signed_in.name(signed_in)
    form_session = request.cookies.get(FORM_COOKIE)
    created = None
    if name is not None:
        csrf = accounts.signed_in.csrf(signed_in)
    else:
        csrf = accounts.forms.csrf(form_session)
        if csrf is None:
            created, csrf = accounts.forms.create()
    return _account_response(request, name, csrf, created)


def _account_response(
    request: Request, name: str | None, csrf: str | None, created: str | None
) -> Response:
    """``/account`` for the browser signed in as ``name`` (None: nobody), its forms
    carrying ``csrf``; ``created``: a form session made for it, set as its cookie (also
    a cluster edge's page: meeple.node.accounts)."""
    response = render(
        request,
        "account.html",
        me=name,
        csrf=csrf,
        message=_message(request.query_params.get("m", ""), name),
        max_name=MAX_NAME_LENGTH,
        min_password=MIN_PASSWORD_LENGTH,
        max_password=MAX_PASSWORD_LENGTH,
    )
    response.headers["Cache-Control"] = "no-store"
    if created is not None:
        _set_cookie(response, FORM_COOKIE, created)
    return response


def _message(code: str, name: str | None) -> str:
    # A fixed set, so a crafted link cannot put its own words on the page.
    if code == "signed-out" and name is None:
        return "You are signed out."
    if name is not None and code in ("reserved", "signed-in"):
        done = "is now reserved for you" if code == "reserved" else "is yours"
        return f"{name} {done}; you are signed in as it."
    return ""


async def _checked_form(request: Request, sessions: Sessions, cookie: str) -> dict[str, str] | None:
    """The form of a POST from one of our pages (same origin, the right CSRF token)."""
    csrf = sessions.csrf(request.cookies.get(cookie))
    form = await read_form(request)
    if csrf is None or form is None or not same_origin(request):
        return None
    given = form.get("csrf", "")
    if len(given) > _CSRF_LENGTH or not hmac.compare_digest(given.encode(), csrf.encode()):
        return None
    return form


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


async def _credentials(request: Request, *, sign_in: bool = False) -> tuple[str, str] | Response:
    accounts = _accounts(request)
    form = await _checked_form(request, accounts.forms, FORM_COOKIE)
    if form is None:
        return _answer(403, "the form's CSRF token is wrong or missing; reload the page")
    name, password = form.get("name", ""), form.get("password", "")
    why = valid_name(name) or valid_password(password)
    if why is not None:
        return _answer(400, why)
    # Counted once the form is well-formed: each attempt from here costs an scrypt.
    wait = accounts.limiter.allow(_client(request))
    if wait is not None:
        response = _answer(429, "too many attempts from your address; wait a minute")
        response.headers["Retry-After"] = str(int(wait) + 1)
        return response
    if sign_in and not accounts.knows(request.cookies.get(KNOWN_COOKIE), name):
        # Issue 30.7: and per name, from every address together; a browser that has
        # signed in as it before is not held (the owner cannot be locked out).
        wait = accounts.account_limiter.allow(name.casefold())
        if wait is not None:
            response = _answer(
                429,
                "too many attempts at this name; wait a few minutes, or sign in from a "
                "browser that has signed in as it before",
            )
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
    return name, password


def _signed_in(request: Request, name: str, code: str) -> Response:
    accounts = _accounts(request)
    accounts.signed_in.drop(request.cookies.get(COOKIE))
    accounts.forms.drop(request.cookies.get(FORM_COOKIE))
    session, _csrf = accounts.signed_in.sign_in(name)
    accounts.account_limiter.forget(name.casefold())
    response = RedirectResponse(f"/account?m={code}", status_code=303)
    _set_cookie(response, COOKIE, session)
    response.set_cookie(
        KNOWN_COOKIE,
        accounts.remember(name),
        max_age=_KNOWN_AGE,
        httponly=True,
        secure=True,
        samesite="strict",
        path="/account",
    )
    _delete_cookie(response, FORM_COOKIE)
    return response


async def reserve(request: Request) -> Response:
    got = await _credentials(request)
    if isinstance(got, Response):
        return got
    name, password = got
    if not await _accounts(request).reserve(name, password):
        return _answer(409, f"the name {name} is reserved already")
    return _signed_in(request, name, "reserved")


async def sign_in(request: Request) -> Response:
    got = await _credentials(request, sign_in=True)
    if isinstance(got, Response):
        return got
    name, password = got
    stored = await _accounts(request).check(name, password)
    if stored is None:
        return _answer(403, "wrong name or password")
    return _signed_in(request, stored, "signed-in")


async def sign_out(request: Request) -> Response:
    accounts = _accounts(request)
    session = request.cookies.get(COOKIE)
    if accounts.signed_in.name(session) is None:
        return _answer(401, "you are not signed in")
    if await _checked_form(request, accounts.signed_in, COOKIE) is None:
        return _answer(403, "the form's CSRF token is wrong or missing; reload the page")
    accounts.signed_in.drop(session)
    response = RedirectResponse("/account?m=signed-out", status_code=303)
    _delete_cookie(response, COOKIE)
    return response


def _answer(status: int, message: str) -> Response:
    return PlainTextResponse(message + "\n", status_code=status)


def routes() -> list[BaseRoute]:
    return [
        Route("/account", account_page),
        Route("/account/reserve", reserve, methods=["POST"]),
        Route("/account/sign-in", sign_in, methods=["POST"]),
        Route("/account/sign-out", sign_out, methods=["POST"]),
    ]

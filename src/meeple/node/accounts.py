"""Accounts on a cluster's edges (issue 32.6): ``meeple serve``'s reserved names, served
by the store role over the bus.

An edge has no database. Its ``/account`` pages (:func:`edge_routes`) and its names
(:class:`meeple.node.names.ClusterNames`) ask any ``store`` node
(``<ns>.store.req.account_<op>``, :data:`~meeple.bus.subjects.STORE_ACCOUNTS`, queue
group ``store``), which runs ``meeple serve``'s own :class:`~meeple.web.accounts.Accounts`
on its database: the same scrypt hashing, salt and cost, the same per-name limit and
known-browser tokens, the same answers (409 a taken name, 403 a wrong password, 429 too
many tries at a name).

- What crosses is typed (:class:`Credentials`, :class:`SignedIn`, :class:`AccountRefused`,
  :class:`SessionOf`, :class:`SessionFound`, :class:`SignOut`, :class:`IsReserved`),
  registered in :func:`meeple.node.wire.registry`, at most :data:`MAX_REQUEST` bytes a
  request, every field checked on the store node before its database sees it. No answer
  holds a password hash or salt: they never leave the store node. The plain password
  crosses the bus once, from the edge to the store node that hashes it, as it crossed
  the browser's HTTPS connection to the edge.
- **Sessions are rows of the store's database** (``account_sessions``, by the SHA-256
  of the cookie, never the cookie): a browser signed in on one edge is signed in on
  every edge, a sign-out on one holds on all, and an edge cannot make a session without
  the password (a signed cookie would need a secret on every edge, and a stolen one
  would sign anyone in as anyone). A session lasts :data:`SESSION_TTL`.
- The per-address limit is the edge's (it knows the browser's address); the per-name
  limit and the known browsers are the store node's, so they hold across edges (each
  store node counts its own: with two store nodes a guesser gets twice the tries).
- The forms' CSRF token on an edge is the form cookie's own value, sent back in the
  form (a double-submit token, with ``SameSite=Strict`` and the same ``Origin`` check as
  ``meeple serve``): any edge checks it with nothing shared.
- **Reserved names are checked on every edge** (:class:`BusAccounts.reserved`): a
  browser's seat and a spectators' chat line (as ``meeple serve``), and a Twente,
  Clarkson, AM27 or Spectrangle client's name (:class:`~meeple.node.names.ClusterNames`,
  asked beside the names claim). With no store node answering, a name is refused
  (**fail closed**): a reserved name cannot be taken while its reservation cannot be
  read.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meeple.bus.base import Bus, BusError, Sealed, Subscription, ValueHandler
from meeple.bus.subjects import STORE_ACCOUNTS, Namespace
from meeple.node import wire
from meeple.server.store.database import StoreUnavailable
from meeple.web.accounts import (
    COOKIE,
    FORM_COOKIE,
    KNOWN_COOKIE,
    MAX_NAME_LENGTH,
    MAX_PASSWORD_LENGTH,
    Accounts,
    Scrypt,
    valid_name,
    valid_password,
)

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from meeple.server.clock import Clock
    from meeple.server.edge.attempts import AttemptLimiter
    from meeple.server.lobby.names import StoreReservations
    from meeple.server.store.database import Store

__all__ = [
    "MAX_REQUEST",
    "MAX_TOKEN",
    "SESSION_TTL",
    "AccountRefused",
    "AccountService",
    "BusAccounts",
    "Credentials",
    "IsReserved",
    "SessionFound",
    "SessionOf",
    "SignOut",
    "SignedIn",
    "edge_routes",
]

logger = logging.getLogger(__name__)

#: A signed-in session lasts 30 days (then the browser signs in again).
SESSION_TTL = 30 * 24 * 3600.0
#: The most one account request may hold: a name of 64 characters and a password of
#: 256, each at most 4 bytes a character in UTF-8, a known-browser token, the framing.
MAX_REQUEST = 4 * (MAX_NAME_LENGTH + MAX_PASSWORD_LENGTH) + 512
#: The longest session, CSRF or known-browser token taken (``token_urlsafe(32)`` is 43).
MAX_TOKEN = 64
# Reserved names an edge remembers (an account is never deleted: a name found reserved
# stays so).
_KNOWN_RESERVED = 65_536


@dataclass(frozen=True, slots=True)
class Credentials:
    """A reserve or sign-in form's fields; ``known``: the browser's known-browser cookie
    (sign-in: past the per-name limit, as ``meeple serve``'s)."""

    name: str
    password: str
    known: str = ""


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The store node signed the browser in: the name as reserved, the new session's
    cookie and a new known-browser token for it."""

    name: str
    session: str
    known: str


@dataclass(frozen=True, slots=True)
class AccountRefused:
    """Not signed in: ``status`` 409 (the name is reserved already), 403 (wrong name or
    password), 429 (too many tries at the name: ``wait`` seconds)."""

    status: int
    wait: float = 0.0


@dataclass(frozen=True, slots=True)
class SessionOf:
    """Who a browser's session cookie is signed in as."""

    session: str


@dataclass(frozen=True, slots=True)
class SessionFound:
    """A session's account name (as reserved) and the CSRF token of its forms."""

    name: str
    csrf: str


@dataclass(frozen=True, slots=True)
class SignOut:
    session: str


@dataclass(frozen=True, slots=True)
class IsReserved:
    name: str


def _hash(session: str) -> str:
    return hashlib.sha256(session.encode()).hexdigest()


def _token(value: str) -> bool:
    return 0 < len(value) <= MAX_TOKEN and value.isascii() and value.isprintable()


class _Codec:
    """The accounts' codec: :func:`meeple.node.wire.registry`'s, a request's bytes (from
    another process) at most :data:`MAX_REQUEST`; a value sealed in this process is
    handed over as it is (:class:`~meeple.bus.base.Sealed`), its fields checked by the
    handler as any request's."""

    def __init__(self) -> None:
        self._registry = wire.registry()

    def encode(self, value: Any) -> bytes:
        return self._registry.encode(value)

    def decode(self, data: bytes, expect: Any = object) -> Any:
        if len(data) > MAX_REQUEST:
            raise wire.WireError("size", f"an account request of {len(data)} bytes")
        return self._registry.decode(data, expect)

    def fits(self, value: object, expect: Any) -> bool:
        return self._registry.fits(value, expect)


#: The one instance: a sealed value is handed over by reference only to a receiver
#: reading with the codec it was sealed with.
CODEC = _Codec()


def _seal(value: object) -> Sealed:
    return Sealed(value, CODEC)


def _credentials(form: Credentials) -> Credentials:
    why = valid_name(form.name) or valid_password(form.password)
    if why is None and form.known and not _token(form.known):
        why = "a known-browser token is a short ASCII text"
    if why is not None:
        raise wire.WireError("shape", why)
    return form


class AccountService:
    """The store role's answers to the edges' account requests (module doc), on
    ``store`` with ``meeple serve``'s :class:`~meeple.web.accounts.Accounts`."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        store: Store,
        clock: Clock,
        *,
        cost: Scrypt | None = None,
        wall_clock: Callable[[], float] = time.time,
        reservations: StoreReservations | None = None,
    ) -> None:
        """``reservations``: the reserved names in memory, kept current here as
        ``meeple serve``'s (one process: its edge checks names against them at once)."""
        self.bus = bus
        self.ns = ns
        self.store = store
        held = reservations
        self.accounts = Accounts(
            lambda: store, clock, cost=cost, reservations=None if held is None else lambda: held
        )
        self.wall_clock = wall_clock
        self._subs: list[Subscription] = []

    async def start(self) -> None:
        handlers: dict[str, ValueHandler] = {
            "account_reserve": self._reserve,
            "account_sign_in": self._sign_in,
            "account_session": self._session,
            "account_sign_out": self._sign_out,
            "account_reserved": self._reserved,
        }
        kinds: dict[str, type] = {
            "account_reserve": Credentials,
            "account_sign_in": Credentials,
            "account_session": SessionOf,
            "account_sign_out": SignOut,
            "account_reserved": IsReserved,
        }
        assert set(handlers) == set(STORE_ACCOUNTS) == set(kinds)
        for op, handler in handlers.items():
            self._subs.append(
                await self.bus.answer(
                    self.ns.store_account(op), handler, CODEC, kinds[op], queue="store"
                )
            )

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        self._subs.clear()

    async def _signed_in(self, name: str) -> Sealed:
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        oldest = self.wall_clock() - SESSION_TTL
        await asyncio.to_thread(
            self.store.add_session, _hash(session), name, csrf, older_than=oldest
        )
        self.accounts.account_limiter.forget(name.casefold())
        return _seal(SignedIn(name, session, self.accounts.remember(name)))

    async def _reserve(self, _subject: str, asked: Credentials) -> Sealed:
        form = _credentials(asked)
        if not await self.accounts.reserve(form.name, form.password):
            return _seal(AccountRefused(409))
        return await self._signed_in(form.name)

    async def _sign_in(self, _subject: str, asked: Credentials) -> Sealed:
        form = _credentials(asked)
        if not self.accounts.knows(form.known or None, form.name):
            # Issue 30.7: tries at one name from every address (and every edge) together;
            # a browser that signed in as it before is not held.
            wait = self.accounts.account_limiter.allow(form.name.casefold())
            if wait is not None:
                return _seal(AccountRefused(429, wait))
        name = await self.accounts.check(form.name, form.password)
        if name is None:
            return _seal(AccountRefused(403))
        return await self._signed_in(name)

    async def _session(self, _subject: str, asked: SessionOf) -> Sealed:
        if not _token(asked.session):
            return _seal(None)
        oldest = self.wall_clock() - SESSION_TTL
        found = await asyncio.to_thread(self.store.session, _hash(asked.session), older_than=oldest)
        return _seal(None if found is None else SessionFound(*found))

    async def _sign_out(self, _subject: str, asked: SignOut) -> Sealed:
        if _token(asked.session):
            await asyncio.to_thread(self.store.drop_session, _hash(asked.session))
        return _seal(None)

    async def _reserved(self, _subject: str, asked: IsReserved) -> Sealed:
        if valid_name(asked.name) is not None:
            return _seal(False)  # no such name can be reserved
        account = await asyncio.to_thread(self.store.account, asked.name)
        return _seal(account is not None)


class BusAccounts:
    """An edge's accounts: each call a request to any store node, answered within
    ``timeout`` seconds (``store_wait``) or :class:`StoreUnavailable`."""

    def __init__(self, bus: Bus, ns: Namespace, timeout: float) -> None:
        self.bus = bus
        self.ns = ns
        self.timeout = timeout
        # Names found reserved (never unreserved), oldest forgotten first.
        self._reserved: collections.OrderedDict[str, None] = collections.OrderedDict()

    async def _ask(self, op: str, message: object, expect: object) -> Any:
        subject = self.ns.store_account(op)
        try:
            return await self.bus.ask(subject, _seal(message), CODEC, expect, timeout=self.timeout)
        except BusError as e:
            raise StoreUnavailable(f"{subject}: {type(e).__name__}: {e}") from e
        except wire.WireError as e:
            raise StoreUnavailable(f"{subject}: the answer did not decode: {e}") from e

    async def reserve(self, name: str, password: str) -> SignedIn | AccountRefused:
        found: SignedIn | AccountRefused = await self._ask(
            "account_reserve", Credentials(name, password), SignedIn | AccountRefused
        )
        if isinstance(found, SignedIn):
            self._remember(found.name)
        return found

    async def sign_in(self, name: str, password: str, known: str) -> SignedIn | AccountRefused:
        known = known if _token(known) else ""
        found: SignedIn | AccountRefused = await self._ask(
            "account_sign_in", Credentials(name, password, known), SignedIn | AccountRefused
        )
        return found

    async def session(self, cookie: str | None) -> SessionFound | None:
        """Who the session cookie ``cookie`` is signed in as (None: nobody)."""
        if cookie is None or not _token(cookie):
            return None
        found: SessionFound | None = await self._ask(
            "account_session", SessionOf(cookie), SessionFound | None
        )
        return found

    async def sign_out(self, cookie: str) -> None:
        await self._ask("account_sign_out", SignOut(cookie), type(None))

    async def reserved(self, name: str) -> bool:
        """Whether ``name`` is an account's (:class:`StoreUnavailable` if no store node
        answers: the caller refuses the name, fail closed)."""
        key = name.casefold()
        if key in self._reserved:
            self._reserved.move_to_end(key)
            return True
        if valid_name(name) is not None:
            return False
        found = bool(await self._ask("account_reserved", IsReserved(name), bool))
        if found:
            self._remember(name)
        return found

    def _remember(self, name: str) -> None:
        self._reserved[name.casefold()] = None
        while len(self._reserved) > _KNOWN_RESERVED:
            self._reserved.popitem(last=False)

    async def may_use(self, name: str, cookie: str | None) -> bool:
        """``meeple serve``'s :func:`~meeple.web.accounts.may_use` on an edge: the name
        is not reserved, or the browser's session is signed in as it."""
        session = await self.session(cookie)
        if session is not None and session.name.casefold() == name.casefold():
            return True
        return not await self.reserved(name)


# --- the edge's pages --------------------------------------------------------------------


def edge_routes(accounts: BusAccounts, limiter: AttemptLimiter) -> list[BaseRoute]:
    """``/account``, ``/account/reserve``, ``/account/sign-in``, ``/account/sign-out`` on
    an edge: ``meeple serve``'s pages and answers (docs/web.md, "Reserved names"), their
    data from a store node; ``limiter``: the edge's tries per address."""
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    from meeple.web.accounts import (
        _account_response,
        _answer,
        _client,
        _delete_cookie,
        _set_cookie,
    )
    from meeple.web.console import _form as read_form
    from meeple.web.console import _same_origin as same_origin

    async def account_page(request: Request) -> Response:
        found = await accounts.session(request.cookies.get(COOKIE))
        created = None
        if found is not None:
            name, csrf = found.name, found.csrf
        else:
            name, csrf = None, request.cookies.get(FORM_COOKIE) or ""
            if not _token(csrf):
                created = csrf = secrets.token_urlsafe(32)
        return _account_response(request, name, csrf, created)

    async def checked_form(request: Request, csrf: str | None) -> dict[str, str] | None:
        form = await read_form(request)
        if csrf is None or not _token(csrf) or form is None or not same_origin(request):
            return None
        given = form.get("csrf", "")
        if len(given) > MAX_TOKEN or not hmac.compare_digest(given.encode(), csrf.encode()):
            return None
        return form

    async def credentials(request: Request) -> tuple[str, str] | Response:
        form = await checked_form(request, request.cookies.get(FORM_COOKIE))
        if form is None:
            return _answer(403, "the form's CSRF token is wrong or missing; reload the page")
        name, password = form.get("name", ""), form.get("password", "")
        why = valid_name(name) or valid_password(password)
        if why is not None:
            return _answer(400, why)
        wait = limiter.allow(_client(request))
        if wait is not None:
            response = _answer(429, "too many attempts from your address; wait a minute")
            response.headers["Retry-After"] = str(int(wait) + 1)
            return response
        return name, password

    def signed_in(signed: SignedIn, code: str) -> Response:
        response = RedirectResponse(f"/account?m={code}", status_code=303)
        _set_cookie(response, COOKIE, signed.session)
        response.set_cookie(
            KNOWN_COOKIE,
            signed.known,
            max_age=365 * 24 * 3600,
            httponly=True,
            secure=True,
            samesite="strict",
            path="/account",
        )
        _delete_cookie(response, FORM_COOKIE)
        return response

    def refused(no: AccountRefused, name: str) -> Response:
        if no.status == 409:
            return _answer(409, f"the name {name} is reserved already")
        if no.status == 429:
            response = _answer(
                429,
                "too many attempts at this name; wait a few minutes, or sign in from a "
                "browser that has signed in as it before",
            )
            response.headers["Retry-After"] = str(int(no.wait) + 1)
            return response
        return _answer(403, "wrong name or password")

    async def reserve(request: Request) -> Response:
        got = await credentials(request)
        if not isinstance(got, tuple):
            return got
        answer = await accounts.reserve(*got)
        if isinstance(answer, AccountRefused):
            return refused(answer, got[0])
        return signed_in(answer, "reserved")

    async def sign_in(request: Request) -> Response:
        got = await credentials(request)
        if not isinstance(got, tuple):
            return got
        answer = await accounts.sign_in(*got, request.cookies.get(KNOWN_COOKIE) or "")
        if isinstance(answer, AccountRefused):
            return refused(answer, got[0])
        old = request.cookies.get(COOKIE)
        if old is not None and _token(old):
            await accounts.sign_out(old)
        return signed_in(answer, "signed-in")

    async def sign_out(request: Request) -> Response:
        session = request.cookies.get(COOKIE)
        found = await accounts.session(session)
        if session is None or found is None:
            return _answer(401, "you are not signed in")
        if await checked_form(request, found.csrf) is None:
            return _answer(403, "the form's CSRF token is wrong or missing; reload the page")
        await accounts.sign_out(session)
        response = RedirectResponse("/account?m=signed-out", status_code=303)
        _delete_cookie(response, COOKIE)
        return response

    return [
        Route("/account", account_page),
        Route("/account/reserve", reserve, methods=["POST"]),
        Route("/account/sign-in", sign_in, methods=["POST"]),
        Route("/account/sign-out", sign_out, methods=["POST"]),
    ]

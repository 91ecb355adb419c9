"""The store role's account requests (issue 32.6; meeple.node.accounts) on the
in-process bus with a SQLite store: ``meeple serve``'s answers, nothing of a password
hash in any answer, and whatever bytes or fields reach the store node, a refusal or one
of the op's answers, never an account or a session it should not make."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.bus.base import RemoteError
from meeple.bus.local import LocalBus
from meeple.bus.subjects import STORE_ACCOUNTS, Namespace
from meeple.node import wire
from meeple.node.accounts import (
    MAX_REQUEST,
    AccountRefused,
    AccountService,
    BusAccounts,
    Credentials,
    IsReserved,
    SessionFound,
    SessionOf,
    SignedIn,
    SignOut,
)
from meeple.server.clock import VirtualClock
from meeple.server.store.database import Store, StoreUnavailable
from meeple.web.accounts import ACCOUNT_ATTEMPTS, Scrypt, valid_name, valid_password

NS = Namespace("t")
CHEAP = Scrypt(n=2**8, r=8, p=1)
PASSWORD = "correct horse"


@asynccontextmanager
async def _cluster(directory: Path) -> AsyncIterator[tuple[LocalBus, AccountService, BusAccounts]]:
    bus = LocalBus()
    store = Store(directory / "db.sqlite3")
    service = AccountService(bus, NS, store, VirtualClock(start=1000.0), cost=CHEAP)
    await service.start()
    try:
        yield bus, service, BusAccounts(bus, NS, timeout=5.0)
    finally:
        await service.stop()
        await bus.close()
        store.close()


async def test_the_store_node_answers_as_meeple_serve(tmp_path: Path) -> None:
    """Reserve, a taken name (409, any casing), a wrong password (403), sign in, the
    session's name, sign out, the per-name limit (429) that a known browser passes, and
    whether a name is reserved. No answer holds the hash or the salt."""
    async with _cluster(tmp_path) as (bus, service, edge):
        made = await edge.reserve("Ann", PASSWORD)
        assert isinstance(made, SignedIn)
        assert made.name == "Ann"
        account = service.store.account("ann")
        assert account is not None
        assert account.password_hash == CHEAP.hash(PASSWORD, account.salt)
        assert await edge.reserve("aNN", "another password") == AccountRefused(409)
        assert await edge.sign_in("ann", "wrong password", "") == AccountRefused(403)
        signed = await edge.sign_in("ANN", PASSWORD, "")
        assert isinstance(signed, SignedIn)
        assert signed.name == "Ann"  # as reserved
        assert signed.session != made.session
        found = await edge.session(signed.session)
        assert isinstance(found, SessionFound)
        assert found.name == "Ann"
        assert await edge.session("forged-session") is None
        assert await edge.session(None) is None
        assert await edge.reserved("ANN")
        assert not await edge.reserved("bob")
        assert await edge.may_use("ann", signed.session)
        assert not await edge.may_use("ann", None)
        assert await edge.may_use("bob", None)
        await edge.sign_out(signed.session)
        assert await edge.session(signed.session) is None
        assert await edge.session(made.session) is not None  # the other session stays

        # Issue 30.7, across edges: tries at one name, then 429; a known browser passes.
        for _ in range(ACCOUNT_ATTEMPTS):
            assert await edge.sign_in("ann", "wrong password", "") == AccountRefused(403)
        limited = await edge.sign_in("ann", PASSWORD, "")
        assert isinstance(limited, AccountRefused)
        assert limited.status == 429
        assert limited.wait > 0
        assert isinstance(await edge.sign_in("ann", PASSWORD, made.known), SignedIn)

        # Nothing of the hash or the salt in any answer.
        for op, message in (
            ("account_sign_in", Credentials("ann", PASSWORD, made.known)),
            ("account_session", SessionOf(made.session)),
            ("account_reserved", IsReserved("ann")),
        ):
            answer = await bus.request(NS.store_account(op), wire.dumps(message))
            assert account.password_hash not in answer
            assert account.salt not in answer
            assert PASSWORD.encode() not in answer


_TEXT = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["", " ann", "ann\x00", "a" * 65, "é" * 64, "p" * 257, "\u202e" * 8]),
)
# What MessagePack can carry: a wider int is the sender's EncodeError, never sent.
_INT = st.integers(-(2**63), 2**64 - 1)
_MESSAGES = st.one_of(
    st.builds(Credentials, _TEXT, _TEXT, _TEXT),
    st.builds(SessionOf, _TEXT),
    st.builds(SignOut, _TEXT),
    st.builds(IsReserved, _TEXT),
    st.builds(SignedIn, _TEXT, _TEXT, _TEXT),
    st.builds(AccountRefused, _INT, st.floats(allow_nan=False)),
)
_ANSWERS: dict[str, object] = {
    "account_reserve": SignedIn | AccountRefused,
    "account_sign_in": SignedIn | AccountRefused,
    "account_session": SessionFound | None,
    "account_sign_out": type(None),
    "account_reserved": bool,
}


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    op=st.sampled_from(STORE_ACCOUNTS),
    payload=st.one_of(
        st.binary(max_size=300),
        _MESSAGES.map(wire.dumps),
        st.recursive(
            st.none() | _INT | st.text(max_size=20) | st.binary(max_size=20),
            lambda inner: st.lists(inner, max_size=4),
            max_leaves=12,
        ).map(msgspec.msgpack.encode),
        st.just(wire.dumps(Credentials("big", "x" * MAX_REQUEST))),
    ),
)
async def test_whatever_reaches_the_store_node_is_refused_or_answered_in_kind(
    op: str, payload: bytes
) -> None:
    """Random bytes, MessagePack of other shapes, every account message with hostile
    fields (NUL, 65-character names, 257-character passwords, too big) on every account
    subject: a refusal (the bus's error answer) or an answer of the op's type; an
    account is made only for a valid name and password, a session only with one."""
    with tempfile.TemporaryDirectory() as directory:
        async with _cluster(Path(directory)) as (bus, service, _edge):
            try:
                answer = await bus.request(NS.store_account(op), payload)
            except RemoteError:
                answer = None
            value = None if answer is None else wire.loads(answer, _ANSWERS[op])
            if isinstance(value, SessionFound) or value is True:
                pytest.fail(f"{op}: {value!r} with no account made")
            try:
                sent = wire.loads(payload, Credentials)
            except wire.WireError:
                sent = None
            if isinstance(value, SignedIn):
                assert sent is not None
                assert valid_name(sent.name) is None
                assert valid_password(sent.password) is None
            if sent is not None and valid_name(sent.name) is None:
                made = service.store.account(sent.name) is not None
                assert made == (op == "account_reserve" and isinstance(value, SignedIn))


@settings(max_examples=60, deadline=None)
@given(name=_TEXT, password=_TEXT)
async def test_an_edge_s_fields_reserve_only_what_meeple_serve_would(
    name: str, password: str
) -> None:
    """Whatever fields an edge sends (a hostile edge skips its own checks), the store
    node reserves exactly the names ``meeple serve``'s form would, and refuses the rest
    without an answer."""
    with tempfile.TemporaryDirectory() as directory:
        async with _cluster(Path(directory)) as (_bus, service, edge):
            valid = valid_name(name) is None and valid_password(password) is None
            if not valid:
                with pytest.raises(StoreUnavailable):  # the store node refused it
                    await edge._ask("account_reserve", Credentials(name, password), object)
                if valid_name(name) is None:
                    assert service.store.account(name) is None
                return
            answer = await edge.reserve(name, password)
            assert isinstance(answer, SignedIn)
            assert service.store.account(name) is not None

"""The browser protocol's server session: hello, subscriptions, pings, and hostile input."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.protocols.web import (
    DEFAULT_MAX_MESSAGE_SIZE,
    PROTOCOL,
    TRANSITIONS,
    Error,
    ErrorCode,
    LocalProtocolError,
    Pong,
    ServerSession,
    Snapshot,
    State,
    Subscribe,
    Unsubscribe,
    Welcome,
    decode,
)

HELLO = json.dumps({"type": "hello", "protocol": PROTOCOL})


def opened() -> ServerSession:
    session = ServerSession()
    session.receive(HELLO)
    return session


def error_code(session: ServerSession, data: str | bytes) -> ErrorCode:
    request = session.receive(data)
    assert request.message is None
    (reply,) = request.replies
    assert isinstance(reply, Error)
    return reply.code


def test_hello_is_answered_with_welcome() -> None:
    """Hello with the right protocol opens the session and gets a welcome with the limit."""
    session = ServerSession()
    request = session.receive(HELLO)
    assert request.replies == (Welcome(PROTOCOL, DEFAULT_MAX_MESSAGE_SIZE),)
    assert session.state is State.OPEN
    assert json.loads(request.replies[0].encode())["type"] == "welcome"


def test_wrong_protocol_version_is_refused_and_session_stays_new() -> None:
    """A hello for another protocol version gets an error; the browser may try again."""
    session = ServerSession()
    assert (
        error_code(session, '{"type":"hello","protocol":"meeple-web/9"}') is ErrorCode.BAD_MESSAGE
    )
    assert session.state is State.NEW
    session.receive(HELLO)
    assert session.state is State.OPEN


def test_subscribe_before_hello_is_not_now() -> None:
    """The transition table allows subscribe only after hello."""
    session = ServerSession()
    assert error_code(session, '{"type":"subscribe","topic":"lobby"}') is ErrorCode.NOT_NOW
    assert Subscribe not in TRANSITIONS[State.NEW]


def test_subscribe_and_unsubscribe_reach_the_listener() -> None:
    """Valid subscriptions come out as requests and are remembered."""
    session = opened()
    request = session.receive('{"type":"subscribe","topic":"game","uid":"0a1b2c3d4e5f"}')
    assert request.message == Subscribe("game", "0a1b2c3d4e5f")
    assert ("game", "0a1b2c3d4e5f") in session.subscriptions
    request = session.receive('{"type":"unsubscribe","topic":"game","uid":"0a1b2c3d4e5f"}')
    assert request.message == Unsubscribe("game", "0a1b2c3d4e5f")
    assert not session.subscriptions


def test_ping_gets_pong_in_any_open_state() -> None:
    """Ping is answered before and after hello."""
    assert ServerSession().receive('{"type":"ping","id":7}').replies == (Pong(7),)
    assert opened().receive('{"type":"ping","id":0}').replies == (Pong(0),)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("", ErrorCode.BAD_JSON),
        ("{", ErrorCode.BAD_JSON),
        (b"\xff\xfe", ErrorCode.BAD_JSON),
        ("[1,2]", ErrorCode.BAD_JSON),
        ('"hello"', ErrorCode.BAD_JSON),
        ("{}", ErrorCode.BAD_MESSAGE),
        ('{"type":5}', ErrorCode.BAD_MESSAGE),
        ('{"type":"launch"}', ErrorCode.UNKNOWN_TYPE),
        ('{"type":"subscribe"}', ErrorCode.BAD_MESSAGE),
        ('{"type":"subscribe","topic":"racks"}', ErrorCode.BAD_MESSAGE),
        ('{"type":"subscribe","topic":"game"}', ErrorCode.BAD_MESSAGE),
        ('{"type":"subscribe","topic":"game","uid":"../x"}', ErrorCode.BAD_MESSAGE),
        ('{"type":"subscribe","topic":"lobby","uid":"ab"}', ErrorCode.BAD_MESSAGE),
        ('{"type":"subscribe","topic":"lobby","extra":1}', ErrorCode.BAD_MESSAGE),
        ('{"type":"ping","id":true}', ErrorCode.BAD_MESSAGE),
        ('{"type":"ping","id":-1}', ErrorCode.BAD_MESSAGE),
        ('{"type":"ping","id":1e3}', ErrorCode.BAD_MESSAGE),
        ("[" * 3000 + "]" * 3000, ErrorCode.TOO_LARGE),
        ("[" * 2000 + "]" * 2000, ErrorCode.BAD_JSON),
        ("x" * (DEFAULT_MAX_MESSAGE_SIZE + 1), ErrorCode.TOO_LARGE),
    ],
)
def test_malformed_messages_get_the_right_error_and_the_session_goes_on(
    data: str | bytes, code: ErrorCode
) -> None:
    """Each kind of bad message has its own error code; a ping still works afterwards."""
    session = opened()
    assert error_code(session, data) is code
    assert session.state is State.OPEN
    assert session.receive('{"type":"ping","id":1}').replies == (Pong(1),)


def test_subscriptions_are_limited() -> None:
    """A connection holds at most max_subscriptions topics."""
    session = ServerSession(max_subscriptions=2)
    session.receive(HELLO)
    session.receive('{"type":"subscribe","topic":"lobby"}')
    session.receive('{"type":"subscribe","topic":"console"}')
    assert error_code(session, '{"type":"subscribe","topic":"game","uid":"ab"}') is (
        ErrorCode.TOO_MANY
    )
    session.receive('{"type":"subscribe","topic":"lobby"}')  # again: not a new one
    assert len(session.subscriptions) == 2


def test_server_sends_snapshots_only_for_subscribed_topics() -> None:
    """send() refuses a snapshot the browser did not ask for (a bug, not the browser's)."""
    session = opened()
    with pytest.raises(LocalProtocolError):
        session.send(Snapshot("game", "ab", 1, "{}"))
    session.receive('{"type":"subscribe","topic":"game","uid":"ab"}')
    sent = json.loads(session.send(Snapshot("game", "ab", 3, '{"x":[1]}')))
    assert sent == {"type": "game", "uid": "ab", "seq": 3, "data": {"x": [1]}}


def test_not_found_forgets_the_subscription() -> None:
    """An unknown game's subscription is dropped with a not-found error."""
    session = opened()
    request = session.receive('{"type":"subscribe","topic":"game","uid":"ab"}')
    assert isinstance(request.message, Subscribe)
    assert session.not_found(request.message).code is ErrorCode.NOT_FOUND
    assert not session.subscriptions


_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
)
json_values = (
    _scalars
    | st.lists(_scalars, max_size=3)
    | st.dictionaries(st.text(max_size=4), _scalars, max_size=3)
)


@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data: bytes) -> None:
    """Garbage bytes get an error reply (or a valid message), never an exception."""
    session = opened()
    request = session.receive(data)
    assert request.message is not None or len(request.replies) == 1
    assert session.state is State.OPEN


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(["type", "topic", "uid", "id", "protocol", "x"]), json_values, max_size=5
    )
)
def test_wrong_types_and_fields_never_raise(obj: dict[str, object]) -> None:
    """Objects with any mix of known keys and wrongly typed values: an error or a message."""
    session = opened()
    request = session.receive(json.dumps(obj))
    if request.message is None:
        assert len(request.replies) <= 1
    assert session.state is State.OPEN


@given(st.integers(min_value=DEFAULT_MAX_MESSAGE_SIZE + 1, max_value=200_000))
def test_huge_frames_are_refused_before_parsing(size: int) -> None:
    """Anything over the size limit is too-large, whatever it holds."""
    with pytest.raises(Exception, match="limit") as info:
        decode('{"type":"ping","id":1' + " " * size + "}")
    assert getattr(info.value, "code", None) is ErrorCode.TOO_LARGE

"""The browser protocol's chat (issue 13): the messages, their state, the rate limit, and
hostile chat text."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.web import (
    CHAT_BURST,
    CHAT_RATE,
    MAX_CHAT_LENGTH,
    PROTOCOL,
    Chat,
    ChatLine,
    Error,
    ErrorCode,
    RateLimit,
    ServerSession,
    State,
    decode,
)
from meeple.protocols.web.errors import RemoteProtocolError

HELLO = json.dumps({"type": "hello", "protocol": PROTOCOL})


def seated() -> ServerSession:
    session = ServerSession()
    session.receive(HELLO)
    session.seated()
    return session


def _chat(text: object) -> str:
    return json.dumps({"type": "chat", "text": text})


def test_chat_decodes_and_a_line_encodes() -> None:
    """``chat`` decodes to its text (unicode kept as sent); a line encodes with ``from``."""
    assert decode(_chat("good luck, ünd 🎲")) == Chat("good luck, ünd 🎲")
    assert decode(_chat("x" * MAX_CHAT_LENGTH)) == Chat("x" * MAX_CHAT_LENGTH)
    line = json.loads(ChatLine("ann", 'hi "all"').encode())
    assert line == {"type": "chat", "from": "ann", "text": 'hi "all"'}


@pytest.mark.parametrize(
    "data",
    [
        _chat(""),
        _chat("   "),
        _chat("x" * (MAX_CHAT_LENGTH + 1)),
        _chat("two\nlines"),
        _chat("carriage\rreturn"),
        _chat("bell\x07"),
        _chat("twente\x1fseparator"),
        _chat("del\x7f"),
        _chat("c1\x85"),
        _chat("line\u2028separator"),
        '{"type":"chat","text":"lone \\ud800 surrogate"}',
        _chat(5),
        _chat(None),
        _chat(["a"]),
        '{"type":"chat"}',
        '{"type":"chat","text":"hi","from":"bob"}',
    ],
)
def test_bad_chat_lines_are_bad_messages(data: str) -> None:
    """Empty, blank, too long, control characters, separators, lone surrogates, not a
    string, missing text, a forged ``from``: bad-message."""
    with pytest.raises(RemoteProtocolError) as refused:
        decode(data)
    assert refused.value.code is ErrorCode.BAD_MESSAGE


def test_chat_is_for_a_seated_browser() -> None:
    """Before hello and before the lobby seats the browser, chat is not-now; seated, it
    goes to the listener; the state does not change."""
    session = ServerSession()
    (reply,) = session.receive(_chat("hi")).replies
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.NOT_NOW
    session.receive(HELLO)
    (reply,) = session.receive(_chat("hi")).replies
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.NOT_NOW
    session.seated()
    request = session.receive(_chat("hi"))
    assert request.message == Chat("hi")
    assert request.replies == ()
    assert session.state is State.SEATED
    assert json.loads(session.send(ChatLine("bo", "yo"))) == {
        "type": "chat",
        "from": "bo",
        "text": "yo",
    }


def test_chat_rate_allows_a_burst_then_one_line_per_interval() -> None:
    """Five lines at once, then the sixth is refused; one comes back every 2 s, and a
    long pause refills no more than the burst."""
    assert (CHAT_BURST, CHAT_RATE) == (5, 0.5)
    rate = RateLimit(CHAT_RATE, CHAT_BURST)
    assert [rate.allow(100.0) for _ in range(6)] == [True] * 5 + [False]
    assert not rate.allow(101.0)
    assert rate.allow(102.0)
    assert not rate.allow(102.5)
    assert [rate.allow(1000.0) for _ in range(6)] == [True] * 5 + [False]
    # A clock that goes backwards refills nothing (and breaks nothing).
    assert not rate.allow(999.0)


def _allowed(text: str) -> bool:
    return (
        bool(text.strip())
        and len(text) <= MAX_CHAT_LENGTH
        and not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in text)
    )


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=MAX_CHAT_LENGTH + 20))
def test_hostile_chat_text_is_taken_or_answered_with_an_error(text: str) -> None:
    """Any text at all: a chat line exactly when it is one non-blank line of at most the
    limit without control characters, else one bad-message error; the session stays
    seated and answers a ping afterwards. An accepted line survives the round trip to
    another browser's ``chat`` message and encodes to UTF-8 (another protocol's relay)."""
    session = seated()
    request = session.receive(json.dumps({"type": "chat", "text": text}))
    if _allowed(text):
        assert request.message == Chat(text)
        assert json.loads(ChatLine("ann", text).encode())["text"] == text
        text.encode("utf-8")
    else:
        assert request.message is None
        (reply,) = request.replies
        assert isinstance(reply, Error)
        assert reply.code in (ErrorCode.BAD_MESSAGE, ErrorCode.TOO_LARGE)
    assert session.state is State.SEATED
    (pong,) = session.receive('{"type":"ping","id":7}').replies
    assert json.loads(session.send(pong)) == {"type": "pong", "id": 7}


@settings(max_examples=200, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(lambda t: '{"type":"chat","text":' + t),
        st.text(max_size=200).map(lambda t: '{"type":"chat","text":"' + t + '"}'),
    )
)
def test_hostile_chat_frames_never_raise(data: str | bytes) -> None:
    """Truncated JSON, raw escapes, bytes: the session answers or takes it, never raises."""
    session = seated()
    request = session.receive(data)
    if request.message is None:
        assert len(request.replies) == 1
    else:
        assert isinstance(request.message, Chat)
    assert session.state is State.SEATED

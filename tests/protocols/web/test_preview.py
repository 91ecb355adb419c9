"""The browser protocol's Scrabble ``preview`` (issue 13): shape, state, rate, hostile input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.web import (
    DEFAULT_MAX_MESSAGE_SIZE,
    PREVIEW_BURST,
    PREVIEW_RATE,
    PROTOCOL,
    Error,
    ErrorCode,
    Preview,
    PreviewReply,
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


def _preview(tiles: Any, **extra: Any) -> str:
    return json.dumps({"type": "preview", "action": {"kind": "place", "tiles": tiles}, **extra})


def test_a_preview_decodes_with_its_tiles_and_optional_id() -> None:
    """Tiles as the play message has them; the id comes back in the reply."""
    assert decode(_preview([[7, 7, "C"], [8, 7, "a"]], id=4)) == Preview(
        ((7, 7, "C"), (8, 7, "a")), 4
    )
    assert decode(_preview([[7, 7, "C"]])) == Preview(((7, 7, "C"),), None)


def test_the_reply_is_the_verdict_with_the_id() -> None:
    """The game's preview goes out as fields of one ``preview`` message."""
    scored = PreviewReply(3, (("score", 12), ("words", [{"word": "CAT", "score": 12}])))
    assert json.loads(scored.encode()) == {
        "type": "preview",
        "id": 3,
        "score": 12,
        "words": [{"word": "CAT", "score": 12}],
    }
    refused = PreviewReply(None, (("refusal", "the first play must cover the centre square"),))
    assert json.loads(refused.encode())["refusal"].startswith("the first play")


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "preview"},
        {"type": "preview", "action": {"kind": "pass"}},
        {"type": "preview", "action": {"kind": "exchange", "tiles": "AB"}},
        {"type": "preview", "action": {"kind": "place", "tile": "RGB1", "index": 3}},
        {"type": "preview", "action": {"kind": "place", "tiles": []}},
        {"type": "preview", "action": {"kind": "place", "tiles": [[7, 7, "A"]] * 8}},
        {"type": "preview", "action": {"kind": "place", "tiles": [[7, 7, "?"]]}},
        {"type": "preview", "action": {"kind": "place", "tiles": [[15, 7, "A"]]}},
        {"type": "preview", "action": {"kind": "place", "tiles": [[7, 7, "A"]]}, "id": True},
        {"type": "preview", "action": {"kind": "place", "tiles": [[7, 7, "A"]]}, "id": -1},
        {"type": "preview", "action": {"kind": "place", "tiles": [[7, 7, "A"]]}, "x": 1},
    ],
)
def test_malformed_previews_are_bad_messages(obj: dict[str, Any]) -> None:
    """Anything but a place with 1 to 7 tiles on the board (and an integer id): bad-message."""
    with pytest.raises(RemoteProtocolError) as refused:
        decode(json.dumps(obj))
    assert refused.value.code is ErrorCode.BAD_MESSAGE


def test_a_huge_preview_is_too_large() -> None:
    """The message size limit applies before anything is parsed."""
    with pytest.raises(RemoteProtocolError) as refused:
        decode(_preview([[7, 7, "A"]], id=1).replace(":", ": " + " " * DEFAULT_MAX_MESSAGE_SIZE))
    assert refused.value.code is ErrorCode.TOO_LARGE


def test_only_a_seated_session_may_ask_for_a_preview() -> None:
    """Before the lobby seats the browser a preview is not-now; seated, it reaches the seat."""
    session = ServerSession()
    (reply,) = session.receive(_preview([[7, 7, "A"]])).replies
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.NOT_NOW
    session.receive(HELLO)
    (reply,) = session.receive(_preview([[7, 7, "A"]])).replies
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.NOT_NOW
    session.seated()
    request = session.receive(_preview([[7, 7, "A"]]))
    assert request.message == Preview(((7, 7, "A"),))
    assert request.replies == ()
    assert session.state is State.SEATED
    assert json.loads(session.send(PreviewReply(None, (("refusal", "no"),))))["type"] == "preview"


def test_the_rate_limit_allows_a_burst_then_the_rate() -> None:
    """20 at once, then 10 a second: the 21st at the same instant is refused, and one
    tenth of a second later one more is allowed."""
    session = seated()
    assert all(session.preview_refusal(100.0) is None for _ in range(PREVIEW_BURST))
    refusal = session.preview_refusal(100.0)
    assert isinstance(refusal, Error)
    assert refusal.code is ErrorCode.TOO_FAST
    assert session.preview_refusal(100.0 + 1 / PREVIEW_RATE) is None
    assert session.preview_refusal(100.0 + 1 / PREVIEW_RATE) is not None
    # A pause refills the bucket, never past the burst.
    assert all(session.preview_refusal(1000.0) is None for _ in range(PREVIEW_BURST))
    assert session.preview_refusal(1000.0) is not None


def test_a_keystroke_a_tenth_of_a_second_is_never_refused() -> None:
    """A person typing (the page asks at most every 150 ms) never meets the limit."""
    limit = RateLimit()
    assert all(limit.allow(i * 0.1) for i in range(1000))


def test_a_bucket_starts_full_at_its_own_burst() -> None:
    """A limit made with another burst allows that many at once, not the default."""
    limit = RateLimit(rate=1.0, burst=3)
    assert [limit.allow(5.0) for _ in range(4)] == [True, True, True, False]


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=200))
def test_the_bucket_never_allows_more_than_burst_plus_rate_times_time(times: list[float]) -> None:
    """Whatever the times (even going backwards), the previews allowed are at most
    burst + rate * (the latest time - the first)."""
    limit = RateLimit()
    allowed = sum(limit.allow(t) for t in times)
    if times:
        # The clock only refills going forwards, from the first call on.
        span = max(times) - times[0]
        assert allowed <= PREVIEW_BURST + PREVIEW_RATE * span + 1e-6


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=30,
)


# 100 in make test, 1,000 in make test-deep (each draws nested JSON: the drawing is the cost).
@settings(max_examples=100, deadline=None)
@given(
    fields=st.dictionaries(st.sampled_from(["action", "id", "tiles", "x"]), _JSON, max_size=3),
    tiles=st.lists(
        st.lists(st.integers(-2, 16) | st.text(max_size=2) | st.none(), max_size=4) | _JSON,
        max_size=9,
    ),
    kind=st.sampled_from(["place", "exchange", "pass", "move"]) | st.text(max_size=4),
)
def test_hostile_previews_get_an_error_reply_and_the_session_goes_on(
    fields: dict[str, Any], tiles: list[Any], kind: str
) -> None:
    """Any JSON in a preview is a Preview of 1 to 7 in-board tiles or one error reply,
    never an exception; the session stays seated and still answers pings."""
    session = seated()
    obj: dict[str, Any] = {"type": "preview", **fields}
    if "action" not in fields:
        obj["action"] = {"kind": kind, "tiles": tiles}
    request = session.receive(json.dumps(obj))
    if request.message is None:
        assert len(request.replies) == 1
        assert isinstance(request.replies[0], Error)
    else:
        assert isinstance(request.message, Preview)
        assert 1 <= len(request.message.tiles) <= 7
        for x, y, letter in request.message.tiles:
            assert 0 <= x < 15
            assert 0 <= y < 15
            assert letter.isascii()
            assert letter.isalpha()
    assert session.state is State.SEATED
    (pong,) = session.receive('{"type":"ping","id":1}').replies
    assert json.loads(session.send(pong)) == {"type": "pong", "id": 1}

"""The browser protocol's play messages (issue 13): shapes, states, and hostile input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.web import (
    PROTOCOL,
    AddBot,
    CreateTable,
    Error,
    ErrorCode,
    Leave,
    Play,
    Ready,
    Rejoin,
    Seated,
    SeatView,
    ServerSession,
    Sit,
    State,
    Unseated,
    decode,
)
from meeple.protocols.web.errors import RemoteProtocolError

HELLO = json.dumps({"type": "hello", "protocol": PROTOCOL})


def opened() -> ServerSession:
    session = ServerSession()
    session.receive(HELLO)
    return session


def test_play_messages_decode_to_their_dataclasses() -> None:
    """Each play message decodes to its value, defaults filled in."""
    create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "ann"}
    assert decode(json.dumps(create)) == CreateTable("scrabble", "twente", 2, "full", "ann")
    clocked = {**create, "clock": "25+0", "lexicon": "gcide"}
    assert decode(json.dumps(clocked)) == CreateTable(
        "scrabble", "twente", 2, "full", "ann", "25+0", "gcide"
    )
    assert decode('{"type":"sit","table":"table-3","name":"bo"}') == Sit("table-3", "bo")
    assert decode('{"type":"rejoin","token":"abcdefgh-123"}') == Rejoin("abcdefgh-123")
    assert decode('{"type":"bot","table":"table-3"}') == AddBot("table-3", "hard")
    for level in ("easy", "medium", "hard"):
        message = json.dumps({"type": "bot", "table": "t", "level": level})
        assert decode(message) == AddBot("t", level)
    assert decode('{"type":"ready"}') == Ready()
    assert decode('{"type":"leave"}') == Leave()
    place = decode('{"type":"play","action":{"kind":"place","tiles":[[7,7,"C"],[8,7,"a"]]}}')
    assert isinstance(place, Play)
    assert place.kind == "place"
    assert place.get("tiles") == ((7, 7, "C"), (8, 7, "a"))
    build = decode('{"type":"play","action":{"kind":"build","from":[0,1],"to":[1,1],"level":4}}')
    assert isinstance(build, Play)
    assert (build.get("from"), build.get("to"), build.get("level")) == ((0, 1), (1, 1), 4)


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "create", "game": "chess", "variant": "x", "size": 2, "name": "a"},
        {"type": "create", "game": "scrabble", "variant": "twente", "size": 99, "name": "a"},
        {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "a b"},
        {"type": "create", "game": "scrabble", "variant": "t", "size": 2, "name": "a", "x": 1},
        {"type": "create", "game": "scrabble", "variant": "t", "size": 2, "name": "a", "clock": 25},
        {
            "type": "create",
            "game": "scrabble",
            "variant": "t",
            "size": 2,
            "name": "a",
            "clock": "25",
        },
        {
            "type": "create",
            "game": "santorini",
            "variant": "t",
            "size": 2,
            "name": "a",
            "clock": "999+1",
        },
        {
            "type": "create",
            "game": "scrabble",
            "variant": "t",
            "size": 2,
            "name": "a",
            "lexicon": "../x",
        },
        {
            "type": "create",
            "game": "scrabble",
            "variant": "t",
            "size": 2,
            "name": "a",
            "lexicon": [],
        },
        {"type": "sit", "table": "t", "name": "x" * 25},
        {"type": "rejoin", "token": "short"},
        {"type": "bot", "table": "t", "level": "God-like!"},  # (an unknown name: refused)
        {"type": "play", "action": {"kind": "place", "tiles": [[15, 0, "A"]]}},
        {"type": "play", "action": {"kind": "place", "tiles": [[0, 0, "AB"]]}},
        {"type": "play", "action": {"kind": "place", "tiles": [[0, 0, "A"]] * 8}},
        {"type": "play", "action": {"kind": "exchange", "tiles": "abc"}},
        {"type": "play", "action": {"kind": "fly"}},
        {"type": "play", "action": {"kind": "pass", "player": 1}},
        {"type": "play", "action": {"kind": "move", "from": [0], "to": [1, 1]}},
        {"type": "play", "action": {"kind": "undo", "all": "yes"}},
        {"type": "play", "action": []},
    ],
)
def test_malformed_play_messages_are_bad_messages(obj: dict[str, Any]) -> None:
    """Unknown games, out-of-range sizes and cells, bad names, stray fields: bad-message."""
    with pytest.raises(RemoteProtocolError) as refused:
        decode(json.dumps(obj))
    assert refused.value.code is ErrorCode.BAD_MESSAGE


def test_play_needs_a_seat_and_a_seat_cannot_sit_again() -> None:
    """``play``/``ready``/``leave`` are not-now until the lobby seated the browser; once
    seated, ``create``/``sit``/``rejoin`` are not-now; unseated, it may sit again."""
    session = opened()
    for data in ('{"type":"play","action":{"kind":"pass"}}', '{"type":"ready"}'):
        (reply,) = session.receive(data).replies
        assert isinstance(reply, Error)
        assert reply.code is ErrorCode.NOT_NOW
    assert isinstance(session.receive('{"type":"sit","table":"t-1","name":"a"}').message, Sit)
    session.seated()
    assert session.state is State.SEATED
    (reply,) = session.receive('{"type":"sit","table":"t-1","name":"a"}').replies
    assert isinstance(reply, Error)
    assert reply.code is ErrorCode.NOT_NOW
    assert isinstance(session.receive('{"type":"play","action":{"kind":"pass"}}').message, Play)
    assert json.loads(session.send(Seated("t-1", "a", "tok")))["type"] == "seated"
    gone = json.loads(session.send(Unseated("abc")))
    assert gone == {"type": "unseated", "table": "abc", "reason": "rejoined"}
    view = json.loads(session.send(SeatView("scrabble", "abc", '{"rack":"AB"}')))
    assert view == {"type": "seat", "game": "scrabble", "uid": "abc", "data": {"rack": "AB"}}
    session.unseated()
    assert session.state is State.OPEN


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=30,
)


# 100 in make test, 1,000 in make test-deep (each draws nested JSON: the drawing is the cost).
@settings(max_examples=100, deadline=None)
@given(
    kind=st.sampled_from(["create", "sit", "rejoin", "bot", "ready", "leave", "play"]),
    fields=st.dictionaries(
        st.sampled_from(
            [
                "game",
                "variant",
                "size",
                "name",
                "start",
                "table",
                "token",
                "level",
                "action",
                "clock",
                "lexicon",
            ]
        ),
        _JSON,
        max_size=6,
    ),
    action=st.dictionaries(
        st.sampled_from(
            [
                "kind",
                "tiles",
                "tile",
                "index",
                "cell",
                "sex",
                "god",
                "player",
                "from",
                "to",
                "level",
                "all",
            ]
        ),
        _JSON | st.sampled_from(["place", "move", "build", "pass", "god", "exchange"]),
        max_size=5,
    ),
)
def test_hostile_play_messages_get_an_error_reply_and_the_session_goes_on(
    kind: str, fields: dict[str, Any], action: dict[str, Any]
) -> None:
    """Any JSON in any field of a play message is a message or an error reply, never an
    exception; the seated session stays seated and still answers pings."""
    session = opened()
    session.seated()
    obj: dict[str, Any] = {"type": kind, **fields}
    if kind == "play" and "action" not in fields:
        obj["action"] = action
    request = session.receive(json.dumps(obj))
    assert request.message is not None or (
        len(request.replies) == 1 and isinstance(request.replies[0], Error)
    )
    assert session.state is State.SEATED
    (pong,) = session.receive('{"type":"ping","id":1}').replies
    assert json.loads(session.send(pong)) == {"type": "pong", "id": 1}

"""AM27 messages: the reference transcript decoded and re-encoded byte for byte; garbage."""

from __future__ import annotations

import json
from collections import Counter
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.santorini.framing import (
    LineDecoder,
    ObjectStreamDecoder,
    ObjectStreamEncoder,
    Text,
)
from meeple.protocols.santorini.messages import (
    CLIENT_TYPES,
    SERVER_TYPES,
    Build,
    Cell,
    CellState,
    ChooseStarter,
    ClientMessage,
    EndGame,
    God,
    GodInit,
    GodList,
    Info,
    Lose,
    Message,
    MessageError,
    Move,
    Pass,
    Ping,
    Players,
    Register,
    ServerMessage,
    ServerState,
    Undo,
    Update,
    WorkerInit,
    decode,
)

from .conftest import Chunk


def _texts(chunks: list[Chunk]) -> list[tuple[bool, str]]:
    decoders: dict[tuple[int, bool], LineDecoder | ObjectStreamDecoder] = {}
    out = []
    for c in chunks:
        key = (c.connection, c.outgoing)
        if key not in decoders:
            decoders[key] = LineDecoder() if c.outgoing else ObjectStreamDecoder()
        out += [
            (c.outgoing, e.text) for e in decoders[key].receive_data(c.data) if isinstance(e, Text)
        ]
    return out


def test_every_transcript_message_re_encodes_byte_exact(transcript: list[Chunk]) -> None:
    """All 1500+ messages of the group's game decode and encode back to the same text."""
    texts = _texts(transcript)
    kinds: Counter[str] = Counter()
    for _outgoing, text in texts:
        if text.startswith("\x00J"):
            continue  # the reference server's own torn write (see docs): not a message
        message = decode(text)
        assert message.encode() == text
        kinds[message.TYPE.value] += 1
    assert kinds["UPDATE"] == 246
    assert kinds["MOVE"] == 39
    assert {"SERVERSTATE", "REGISTER", "PLAYERSMESSAGE", "CHOSESTARTER", "WORKERINIT"} <= set(kinds)
    assert {"BUILD", "PASS", "ENDGAME", "PING"} <= set(kinds)


def test_whole_server_stream_re_encodes_byte_exact(server_streams: dict[int, bytes]) -> None:
    """Connection 2's every byte from the Java server: header + reset/string per message."""
    stream = server_streams[2]
    events = ObjectStreamDecoder().receive_data(stream)
    enc = ObjectStreamEncoder()
    rebuilt = enc.header() + b"".join(enc.encode(e.text) for e in events if isinstance(e, Text))
    assert rebuilt == stream


def test_transcript_shapes() -> None:
    """Sample messages from the transcript, built from values, are the transcript's text."""
    assert ServerState(True, True).encode() == (
        '{"type":"SERVERSTATE","message":"{\\"open\\":true,\\"active\\":true}"}'
    )
    assert Players("botB", (("botA", "Atheist"), ("botB", "Atheist"))).encode() == (
        '{"type":"PLAYERSMESSAGE","message":"{\\"players\\":{\\"botA\\":\\"Atheist\\",'
        '\\"botB\\":\\"Atheist\\"},\\"player\\":\\"botB\\"}"}'
    )
    update = Update(
        "botB",
        board=(
            (Cell(1, 0), CellState((0,), "botB", "F")),
            (Cell(0, 0), CellState((0,))),
        ),
        reachable=((Cell(1, 0), ()), (Cell(2, 0), ())),
        buildable=(
            (Cell(1, 0), ((Cell(2, 1), (1,)), (Cell(0, 0), (1,)))),
            (Cell(2, 0), ()),
        ),
        can_undo=True,
    )
    body = json.loads(json.loads(update.encode())["message"])
    assert body["boardUpdate"][1] == [{"row": 0, "column": 0}, {"levelList": [0]}]
    assert body["reachableCells"][0][1] == []
    assert body["buildableCells"][1][1] == {}
    assert list(body)[-1] == "player"
    assert json.loads(Update("x").encode())["message"] == (
        '{"boardUpdate":{},"reachableCells":{},"buildableCells":{},"canPlaceWorker":false,'
        '"canPass":false,"canUndo":false,"player":"x"}'
    )
    assert EndGame("botA", False).encode() == (
        '{"type":"ENDGAME","message":"{\\"isWinner\\":false,\\"player\\":\\"botA\\"}"}'
    )
    assert Info("botA", "WAIT").encode() == (
        '{"type":"INFO","message":"{\\"information\\":\\"WAIT\\",\\"player\\":\\"botA\\"}"}'
    )


MESSAGES: list[Message] = [
    Ping("AIping"),
    ServerState(False, True),
    GodList("a", (God("Apollo", "Your Move: ..."), God("Pan", ""))),
    Players("a", (("a", "Apollo"), ("b", "Pan"), ("c", "Atlas"))),
    Update("a", ((Cell(4, 4), CellState((4, 3, 2, 1, 0))),), can_place_worker=True),
    Info("a", "OCCUPIED"),
    EndGame("a", True),
    EndGame("a", None),
    Register("a", 3, True),
    Register("b"),
    GodInit("a", "Apollo"),
    ChooseStarter("a", "b"),
    WorkerInit("a", Cell(0, 4), "F"),
    Move("a", Cell(0, 0), Cell(1, 1)),
    Build("a", Cell(1, 1), Cell(2, 2), 4),
    Undo("a", True),
    Pass("a"),
    Lose("a"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip(message: Message) -> None:
    """Every message type decodes back to itself."""
    assert decode(message.encode()) == message


def test_aliases_and_nested_bodies() -> None:
    """STARTER for CHOSESTARTER, isAll for all, a nested message object, the spec's list."""
    assert decode('{"type":"STARTER","message":{"player":"a","starter":"b"}}') == ChooseStarter(
        "a", "b"
    )
    assert decode('{"type":"UNDO","message":"{\\"player\\":\\"a\\",\\"isAll\\":true}"}') == Undo(
        "a", True
    )
    spec_players = '{"type":"PLAYERSMESSAGE","message":{"player":"a","players":[["a","G"]]}}'
    assert decode(spec_players) == Players("a", (("a", "G"),))
    assert decode('{"type":"PASS","message":{}}') == Pass("")
    lower = '{"type":"update","message":{"player":"a","boardUpdate":{},"reachableCells":{},'
    lower += '"buildablecells":{},"canPlaceWorker":false,"canPass":true,"canUndo":false}}'
    assert decode(lower) == Update("a", can_pass=True)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "null",
        "[]",
        '{"type":1}',
        '{"type":"NOPE","message":"{}"}',
        '{"type":"MOVE","message":"{not json"}',
        '{"type":"MOVE","message":[1]}',
        '{"type":"MOVE","message":{"source":{"row":5,"column":0},"destination":{"row":0,"column":0}}}',
        '{"type":"MOVE","message":{"source":{"row":true,"column":0}}}',
        '{"type":"BUILD","message":{"source":{"row":0,"column":0},'
        '"destination":{"row":0,"column":1},"level":"2"}}',
        '{"type":"WORKERINIT","message":{"coordinates":{"row":0,"column":0},"sex":"X"}}',
        '{"type":"REGISTER","message":{"nickname":3}}',
        '{"type":"REGISTER","message":{"nickname":"a","nPlayers":2.5}}',
        "[" * 100000,
    ],
)
def test_unreadable_messages_raise_message_error(text: str) -> None:
    """Anything unreadable is a MessageError (never another exception)."""
    with pytest.raises(MessageError):
        decode(text)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_types = st.sampled_from(
    ["MOVE", "BUILD", "UPDATE", "REGISTER", "PLAYERSMESSAGE", "GODLISTMESSAGE", "UNDO", "X"]
)


@given(_types, _json, st.booleans())
@settings(max_examples=150)
def test_random_json_only_message_error(kind: str, body: object, as_string: bool) -> None:
    """Random JSON in an envelope decodes or raises MessageError, nothing else."""
    inner = json.dumps(body) if as_string else body
    try:
        message = decode(json.dumps({"type": kind, "message": inner}))
    except MessageError:
        return
    assert decode(message.encode()) == message


def test_the_message_unions_are_the_kinds_each_side_sends() -> None:
    """The sessions tell a client's message from a server's by the unions (their types
    narrow there): each union's classes are exactly that side's kinds."""
    assert {cls.TYPE for cls in get_args(ClientMessage)} == CLIENT_TYPES
    assert {cls.TYPE for cls in get_args(ServerMessage)} == SERVER_TYPES

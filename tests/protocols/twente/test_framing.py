"""The Twente framer: any chunking, tolerated line ends, empty and oversized messages."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.twente import LocalProtocolError
from meeple.protocols.twente.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    Frame,
    FrameEvent,
    Framer,
    OversizedFrame,
    UndecodableFrame,
    encode_frame,
)

STREAM = b"ANNOUNCE\x1fAlice\x1fCHAT\x1eREQUESTGAME\x1e" + b"MAKEMOVE\x1fSWAP\x1f\x1e"
FRAMES = [
    Frame(("ANNOUNCE", "Alice", "CHAT")),
    Frame(("REQUESTGAME",)),
    Frame(("MAKEMOVE", "SWAP", "")),
]


def feed(framer: Framer, chunks: list[bytes]) -> list[FrameEvent]:
    return [event for chunk in chunks for event in framer.receive_data(chunk)]


def test_whole_stream() -> None:
    """Several messages in one chunk come out as several frames, in order."""
    assert Framer().receive_data(STREAM) == FRAMES


def test_byte_by_byte() -> None:
    """Feeding one byte at a time gives the same frames."""
    assert feed(Framer(), [STREAM[i : i + 1] for i in range(len(STREAM))]) == FRAMES


@given(st.lists(st.integers(0, len(STREAM)), max_size=10))
def test_any_chunking(cuts: list[int]) -> None:
    """Whatever the cut points, the frames are the same."""
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in itertools.pairwise(points)]
    assert feed(Framer(), chunks) == FRAMES


def test_trailing_partial_data_waits() -> None:
    """An unfinished message is held until its RS arrives, and then decoded."""
    framer = Framer()
    assert framer.receive_data(b"WELCOME\x1fAlice\x1eNEWTI") == [Frame(("WELCOME", "Alice"))]
    assert framer.buffered == len(b"NEWTI")
    assert framer.receive_data(b"LES\x1fAB!\x1e") == [Frame(("NEWTILES", "AB!"))]
    assert framer.buffered == 0


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r\n\r\n"])
def test_line_end_after_rs_is_skipped(ending: bytes) -> None:
    """ERRATA: \\n or \\r\\n right after RS (Java line writers) belongs to no message."""
    data = b"REQUESTGAME\x1e" + ending + b"REQUESTGAME\x1f3\x1e" + ending
    expected = [Frame(("REQUESTGAME",)), Frame(("REQUESTGAME", "3"))]
    assert Framer().receive_data(data) == expected
    assert feed(Framer(), [data[i : i + 1] for i in range(len(data))]) == expected


def test_empty_messages_are_ignored() -> None:
    """ERRATA: empty messages (RS RS, or only a line end) produce nothing."""
    assert Framer().receive_data(b"\x1e\x1e\n\x1e\r\n\x1eREQUESTGAME\x1e") == [
        Frame(("REQUESTGAME",))
    ]


def test_oversized_message_is_reported_and_skipped() -> None:
    """A too-long message is one OversizedFrame; the next message still decodes."""
    framer = Framer(max_message_size=16)
    data = b"SENDCHAT\x1f" + b"x" * 100 + b"\x1eREQUESTGAME\x1e"
    assert framer.receive_data(data) == [OversizedFrame(16), Frame(("REQUESTGAME",))]


def test_oversized_message_in_many_chunks_stays_bounded() -> None:
    """A huge message arriving in pieces never makes the buffer exceed the limit."""
    framer = Framer(max_message_size=64)
    events = framer.receive_data(b"SENDCHAT\x1f")
    for _ in range(1000):
        events += framer.receive_data(b"y" * 50)
        assert framer.buffered <= 64
    events += framer.receive_data(b"\x1eREQUESTGAME\x1f2\x1e")
    assert events == [OversizedFrame(64), Frame(("REQUESTGAME", "2"))]


def test_message_exactly_at_the_limit_passes() -> None:
    """The limit counts the message's bytes without its RS, inclusive."""
    body = b"SENDCHAT\x1f" + b"z" * 7
    assert Framer(max_message_size=len(body)).receive_data(body + b"\x1e") == [
        Frame(("SENDCHAT", "z" * 7))
    ]
    assert Framer(max_message_size=len(body) - 1).receive_data(body + b"\x1e") == [
        OversizedFrame(len(body) - 1)
    ]


def test_invalid_utf8_is_an_undecodable_frame() -> None:
    """Bytes that are not UTF-8 make an UndecodableFrame, not an exception."""
    events = Framer().receive_data(b"SENDCHAT\x1f\xff\xfe\x1eREQUESTGAME\x1e")
    assert isinstance(events[0], UndecodableFrame)
    assert events[1:] == [Frame(("REQUESTGAME",))]


def test_utf8_split_across_chunks() -> None:
    """A multi-byte character cut between two chunks decodes once the message is whole."""
    data = "SENDCHAT\x1fhé€\x1e".encode()
    assert feed(Framer(), [data[:11], data[11:]]) == [Frame(("SENDCHAT", "hé€"))]


def test_default_limit_is_small() -> None:
    """The default limit is a few KiB, not unbounded."""
    assert Framer().max_message_size == DEFAULT_MAX_MESSAGE_SIZE <= 65536


def test_limit_must_be_positive() -> None:
    """A framer with no room for any message is refused."""
    with pytest.raises(ValueError, match="positive"):
        Framer(0)


def test_encode_frame() -> None:
    """Fields are joined by US and ended by RS."""
    assert encode_frame(["NOTIFYTURN", "1", "Alice"]) == b"NOTIFYTURN\x1f1\x1fAlice\x1e"


@pytest.mark.parametrize("bad", ["a\x1fb", "a\x1eb", "\udc80"])
def test_encode_frame_refuses_separators_and_non_text(bad: str) -> None:
    """A field holding a separator (or a lone surrogate) is our bug, not a message."""
    with pytest.raises(LocalProtocolError):
        encode_frame(["SENDCHAT", bad])


def test_encode_frame_needs_a_command() -> None:
    """No fields at all is not a message."""
    with pytest.raises(LocalProtocolError):
        encode_frame([])


@given(st.binary(max_size=2000), st.integers(1, 300))
def test_random_bytes_never_raise_and_stay_bounded(data: bytes, limit: int) -> None:
    """Random input makes frames or error events, and the buffer never passes the limit."""
    framer = Framer(max_message_size=limit)
    for i in range(0, len(data), 37):
        for event in framer.receive_data(data[i : i + 37]):
            assert isinstance(event, Frame | OversizedFrame | UndecodableFrame)
        assert framer.buffered <= limit


@given(
    st.lists(
        st.lists(
            st.text(
                st.characters(exclude_characters="\x1e\x1f\r\n", exclude_categories=["Cs"]),
                max_size=20,
            ),
            min_size=1,
            max_size=5,
        ).filter(lambda f: f[0] != ""),
        max_size=5,
    )
)
def test_encode_then_frame_round_trip(messages: list[list[str]]) -> None:
    """encode_frame output, concatenated, frames back into the same fields."""
    data = b"".join(encode_frame(fields) for fields in messages)
    assert Framer().receive_data(data) == [Frame(tuple(f)) for f in messages]

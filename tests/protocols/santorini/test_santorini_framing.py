"""AM27 framing byte for byte: the Java object stream the group's client reads, and lines."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.santorini.framing import (
    STREAM_HEADER,
    AutoDecoder,
    BrokenStream,
    FrameEvent,
    LineDecoder,
    LineEncoder,
    ObjectStreamDecoder,
    ObjectStreamEncoder,
    OversizedMessage,
    Text,
    UndecodableMessage,
    decode_modified_utf8,
    encode_modified_utf8,
)

SERVERSTATE = '{"type":"SERVERSTATE","message":"{\\"open\\":true,\\"active\\":false}"}'


def texts(events: list[FrameEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Text)]


def test_header_then_reset_string_as_in_the_transcript() -> None:
    """Header AC ED 00 05, then 79 (TC_RESET) 74 (TC_STRING) + u16 length + the JSON."""
    enc = ObjectStreamEncoder()
    assert enc.header() == b"\xac\xed\x00\x05"
    assert enc.encode(SERVERSTATE) == b"yt\x00C" + SERVERSTATE.encode()
    assert enc.encode(SERVERSTATE)[:4] == bytes([0x79, 0x74, 0x00, 0x43])


def test_long_string_uses_tc_longstring_with_u64_length() -> None:
    """Over 65535 bytes: 7C + 8-byte big-endian length."""
    text = "x" * 65536
    data = ObjectStreamEncoder().encode(text)
    assert data[:2] == b"\x79\x7c"
    assert struct.unpack(">Q", data[2:10]) == (65536,)
    assert data[10:] == text.encode()
    edge = ObjectStreamEncoder().encode("y" * 65535)
    assert edge[:4] == b"\x79\x74\xff\xff"


def test_modified_utf8() -> None:
    """NUL is C0 80; a character past U+FFFF is two 3-byte surrogates; the rest is UTF-8."""
    assert encode_modified_utf8("a\0b") == b"a\xc0\x80b"
    assert encode_modified_utf8("é") == "é".encode()
    assert encode_modified_utf8("\U0001f600") == b"\xed\xa0\xbd\xed\xb8\x80"
    assert decode_modified_utf8(b"\xed\xa0\xbd\xed\xb8\x80") == "\U0001f600"
    assert decode_modified_utf8(b"a\xc0\x80b") == "a\0b"
    # The length prefix counts encoded bytes, not characters.
    assert ObjectStreamEncoder().encode("\U0001f600")[2:4] == b"\x00\x06"


@given(st.text(max_size=200))
def test_modified_utf8_round_trip(text: str) -> None:
    """Any text survives encode then decode."""
    assert decode_modified_utf8(encode_modified_utf8(text)) == text


@given(st.lists(st.text(max_size=80), max_size=8), st.data())
@settings(max_examples=60)
def test_object_stream_any_chunking(messages: list[str], data: st.DataObject) -> None:
    """However the stream is cut, the decoder yields the same strings in order."""
    enc = ObjectStreamEncoder()
    stream = enc.header() + b"".join(enc.encode(m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    dec = ObjectStreamDecoder()
    out: list[FrameEvent] = []
    last = 0
    for cut in [*cuts, len(stream)]:
        out += dec.receive_data(stream[last:cut])
        last = cut
    assert texts(out) == messages
    assert dec.buffered == 0


def test_object_stream_byte_by_byte_and_back_references() -> None:
    """Strings written without reset are back-referenced (71 + handle); both resolve."""
    stream = STREAM_HEADER + b"t\x00\x02hi" + b"t\x00\x03you" + b"q\x00\x7e\x00\x00" + b"y"
    stream += b"t\x00\x01!" + b"q\x00\x7e\x00\x00"
    dec = ObjectStreamDecoder()
    out: list[FrameEvent] = []
    for i in range(len(stream)):
        out += dec.receive_data(stream[i : i + 1])
    assert texts(out) == ["hi", "you", "hi", "!", "!"]


def test_object_stream_refuses_what_is_not_a_string() -> None:
    """A TC_OBJECT (73) or a bad header breaks the stream once; later bytes are ignored."""
    dec = ObjectStreamDecoder()
    events = dec.receive_data(STREAM_HEADER + b"t\x00\x01a" + b"\x73\x72junk")
    assert texts(events) == ["a"]
    assert isinstance(events[-1], BrokenStream)
    assert dec.receive_data(b"t\x00\x01b") == []
    assert isinstance(ObjectStreamDecoder().receive_data(b"{}\n")[0], BrokenStream)
    bad_ref = ObjectStreamDecoder().receive_data(STREAM_HEADER + b"q\x00\x7e\x00\x05")
    assert isinstance(bad_ref[0], BrokenStream)


def test_object_stream_oversized_string_is_skipped_in_step() -> None:
    """A string longer than the limit is reported and skipped; the next one decodes."""
    enc = ObjectStreamEncoder()
    dec = ObjectStreamDecoder(max_message_size=10)
    stream = enc.header() + enc.encode("a" * 50) + enc.encode("ok")
    events = dec.receive_data(stream[:20]) + dec.receive_data(stream[20:])
    assert events == [OversizedMessage(10), Text("ok")]
    assert dec.buffered == 0


def test_object_stream_bad_utf8_is_one_undecodable_message() -> None:
    dec = ObjectStreamDecoder()
    events = dec.receive_data(STREAM_HEADER + b"t\x00\x01\xff" + b"t\x00\x01a")
    assert isinstance(events[0], UndecodableMessage)
    assert events[1] == Text("a")


def test_lines() -> None:
    """LF or CRLF ends a line; empty lines are skipped; bad UTF-8 is reported."""
    dec = LineDecoder()
    assert texts(dec.receive_data(b'{"a":1}\r\n\n  \n{"b"')) == ['{"a":1}']
    assert texts(dec.receive_data(b":2}\n")) == ['{"b":2}']
    assert isinstance(dec.receive_data(b"\xff\xfe\n")[0], UndecodableMessage)
    assert LineEncoder().encode('{"a":1}') == b'{"a":1}\n'
    with pytest.raises(ValueError, match="line end"):
        LineEncoder().encode("a\nb")


def test_oversized_line_dropped_to_its_end() -> None:
    """A line over the limit is one OversizedMessage; its bytes are never all held."""
    dec = LineDecoder(max_message_size=16)
    events = dec.receive_data(b"x" * 10)
    events += dec.receive_data(b"x" * 100)
    assert dec.buffered == 0
    events += dec.receive_data(b"x" * 100 + b"\nshort\n")
    assert events == [OversizedMessage(16), Text("short")]
    # Exactly the limit, with CRLF, is fine.
    assert LineDecoder(max_message_size=4).receive_data(b"abcd\r\n") == [Text("abcd")]


@given(st.binary(max_size=600), st.integers(1, 64))
@settings(max_examples=80)
def test_decoders_never_raise_and_stay_bounded(garbage: bytes, step: int) -> None:
    """Random bytes in any chunking: events only, never an exception, buffer bounded."""
    for dec in (LineDecoder(64), ObjectStreamDecoder(64), AutoDecoder(64)):
        for i in range(0, len(garbage), step):
            dec.receive_data(garbage[i : i + step])
            assert dec.buffered <= 64 + 9


def test_auto_decoder_picks_the_framing() -> None:
    """AC starts an object stream; anything else is lines."""
    obj = AutoDecoder()
    assert obj.framing is None
    assert texts(obj.receive_data(STREAM_HEADER + ObjectStreamEncoder().encode("x"))) == ["x"]
    assert obj.framing == "object-stream"
    lines = AutoDecoder()
    assert texts(lines.receive_data(b"x\n")) == ["x"]
    assert lines.framing == "lines"

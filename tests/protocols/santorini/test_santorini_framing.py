"""AM27 framing byte for byte: the Java object stream the group's client reads, and lines."""

from __future__ import annotations

import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.santorini.framing import (
    HANDLE_BYTES_KEPT,
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


# --- message boundaries, for the server's message budget (issue 30.2) ------------------

_SMALL = 64  # max_message_size in these tests: oversized strings are easy to make


def _decoder() -> ObjectStreamDecoder:
    """Small bounds, so that streams of a few dozen items forget strings too."""
    return ObjectStreamDecoder(_SMALL, handles_kept=4, handle_bytes_kept=40)


def _string(raw: bytes, long: bool = False) -> bytes:
    if long:
        return struct.pack(">BQ", 0x7C, len(raw)) + raw
    return struct.pack(">BH", 0x74, len(raw)) + raw


_item = st.one_of(
    st.tuples(st.just("string"), st.text(max_size=20), st.booleans()),
    st.tuples(st.just("reset"), st.integers(1, 3), st.just(False)),
    st.tuples(st.just("ref"), st.integers(0, 50), st.just(False)),
    st.tuples(st.just("big"), st.integers(_SMALL + 1, 3 * _SMALL), st.booleans()),
    st.tuples(st.just("bad"), st.sampled_from([b"\xff", b"a\xc3", b"\xed\xa0"]), st.just(False)),
)


def _object_stream(items: list[tuple[str, object, bool]]) -> tuple[bytes, int]:
    """A strings-only object stream made of ``items`` (references only to handles that
    exist) and how many messages it holds."""
    out = [STREAM_HEADER]
    handles = 0
    messages = 0
    for kind, value, flag in items:
        if kind == "reset":
            assert isinstance(value, int)
            out.append(b"\x79" * value)
            handles = 0
            continue
        if kind == "ref":
            if not handles:
                continue
            assert isinstance(value, int)
            out.append(struct.pack(">BI", 0x71, 0x7E0000 + value % handles))
        elif kind == "string":
            assert isinstance(value, str)
            out.append(_string(encode_modified_utf8(value), flag))
            handles += 1
        elif kind == "big":
            assert isinstance(value, int)
            out.append(_string(b"z" * value, flag))
            handles += 1
        else:
            assert isinstance(value, bytes)
            out.append(_string(value))
            handles += 1
        messages += 1
    return b"".join(out), messages


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


@given(st.lists(_item, max_size=25), st.lists(st.integers(0, 10_000), max_size=12))
@settings(max_examples=300)
def test_object_stream_any_split_gives_the_same_messages_and_count(
    items: list[tuple[str, object, bool]], cuts: list[int]
) -> None:
    """However an object stream is cut into reads, the ends found before decoding are one
    per message (string or back-reference; header and resets none), they fall where the
    decoder finishes a message, and the messages are those of the stream read whole."""
    stream, messages = _object_stream(items)
    whole = _decoder().receive_data(stream)
    assert len(whole) == messages
    decoder = _decoder()
    events: list[FrameEvent] = []
    counted = 0
    for chunk in _cut(stream, cuts):
        ends = decoder.message_ends(chunk, 10**6)
        assert ends == decoder.message_ends(chunk, 10**6)  # finding changes nothing
        assert ends == sorted(set(ends))
        assert all(0 < e <= len(chunk) for e in ends)
        at = 0
        for end in ends:  # fed message by message: each end completes exactly one
            got = decoder.receive_data(chunk[at:end])
            assert len(got) == 1, (chunk[at:end], got)
            events += got
            at = end
        events += decoder.receive_data(chunk[at:])
        counted += len(ends)
    assert counted == messages
    assert events == whole
    assert decoder.partial == 0


@given(
    st.lists(_item, max_size=25),
    st.lists(st.integers(0, 10_000), max_size=8),
    st.integers(1, 4),
    st.lists(st.booleans(), min_size=1, max_size=30),
)
@settings(max_examples=300)
def test_object_stream_skipped_messages_keep_the_stream_in_step(
    items: list[tuple[str, object, bool]], cuts: list[int], limit: int, refuse: list[bool]
) -> None:
    """The listener's way (a few ends a turn, some messages refused and stepped over
    unread): the messages read are exactly the ones not refused, each as the whole
    stream gives it, back-references to skipped strings included."""
    stream, messages = _object_stream(items)
    whole = _decoder().receive_data(stream)
    decoder = _decoder()
    read: list[FrameEvent] = []
    kept: list[FrameEvent] = []
    index = 0
    for chunk in _cut(stream, cuts):
        data = chunk
        while True:
            ends = decoder.message_ends(data, limit)
            if not ends:
                read += decoder.receive_data(data)
                break
            at = 0
            for end in ends:
                if refuse[index % len(refuse)] and decoder.partial == 0:
                    decoder.skip_messages(data[at:end])
                else:
                    read += decoder.receive_data(data[at:end])
                    kept.append(whole[index])
                index += 1
                at = end
            data = data[at:]
            if len(ends) < limit:
                read += decoder.receive_data(data)
                break
    assert index == messages
    assert read == kept
    assert decoder.broken is None


def test_object_stream_reset_runs_cost_one_step() -> None:
    """A megabyte of TC_RESET is no message, and is stepped over in one go by both the
    end finder and the decoder (not one Python step a byte)."""
    flood = STREAM_HEADER + b"\x79" * (1 << 20) + _string(b"hi")
    decoder = ObjectStreamDecoder()
    assert decoder.message_ends(flood, 10) == [len(flood)]
    assert decoder.receive_data(flood) == [Text("hi")]


def test_auto_decoder_finds_ends_of_either_framing_before_choosing() -> None:
    """Before its first byte the auto decoder has chosen nothing; the ends it finds are
    those of the framing the first byte names, and asking does not choose."""
    auto = AutoDecoder()
    stream = STREAM_HEADER + ObjectStreamEncoder().encode("a") + ObjectStreamEncoder().encode("b")
    assert auto.message_ends(stream, 5) == [9, 14]
    assert auto.framing is None
    assert auto.message_ends(b'{"x":1}\n\n{"y"', 5) == [8, 9]
    assert auto.message_ends(b"", 5) == []
    auto.skip_messages(stream[:9])
    assert auto.framing == "object-stream"
    assert auto.receive_data(stream[9:]) == [Text("b")]


def test_a_stream_without_resets_keeps_bounded_memory() -> None:
    """20 MB of distinct strings without one reset (Java's writeObject without reset()
    numbers them all): the decoder keeps the recent ones within its bounds, not all."""
    decoder = ObjectStreamDecoder()
    decoder.receive_data(STREAM_HEADER)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(20_000):
            events = decoder.receive_data(_string(b"%05d" % i + b"x" * 1019))
            assert len(events) == 1
        del events
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 4 * HANDLE_BYTES_KEPT, grown
    assert decoder.handles.bytes <= HANDLE_BYTES_KEPT


def test_recently_used_strings_stay_referable_and_forgotten_ones_are_refused() -> None:
    """A string referred to again and again (a Java constant) stays referable however
    many others follow; one not used since is forgotten: referring to it is an
    unreadable message, and the stream reads on."""
    decoder = ObjectStreamDecoder(handles_kept=8, handle_bytes_kept=1000)
    ping, old = '{"type":"PING","message":"ping"}', "old"
    data = STREAM_HEADER + _string(ping.encode()) + _string(old.encode())
    for i in range(100):
        data += _string(b"s%d" % i) + struct.pack(">BI", 0x71, 0x7E0000)  # then PING again
    events = decoder.receive_data(data)
    assert texts(events).count(ping) == 101
    gone = decoder.receive_data(struct.pack(">BI", 0x71, 0x7E0001) + _string(b"next"))
    assert isinstance(gone[0], UndecodableMessage)
    assert gone[1:] == [Text("next")]
    assert decoder.broken is None
    assert decoder.handles.kept <= 8
    assert len(decoder.handles) == 103

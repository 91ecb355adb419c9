"""Clarkson framing: CRLF or LF lines, NUL padding, blanks, size limit, any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.clarkson.errors import LocalProtocolError
from meeple.protocols.clarkson.framing import Line, LineFramer, OversizedLine, encode_line


def lines(data: bytes, **kw: int) -> list[Line | OversizedLine]:
    framer = LineFramer(**kw)
    return [*framer.receive_data(data), *framer.finish()]


def test_crlf_and_bare_lf_end_lines() -> None:
    """RFC §2: CRLF ends a line; a bare LF is accepted too (compatibility option)."""
    assert lines(b"READY\r\nPASS\nQUIT\r\n") == [Line("READY"), Line("PASS"), Line("QUIT")]


def test_nul_padded_4096_byte_buffers() -> None:
    """A real client sends each line in a 4096-byte NUL-padded buffer (ERRATA): one line each."""
    buffers = [line.ljust(4096, b"\x00") for line in (b"HELLO 1.0.1,a,b,c\r\n", b"READY")]
    assert lines(b"".join(buffers)) == [Line("HELLO 1.0.1,a,b,c"), Line("READY")]
    assert lines(b"\x00" * 4096) == []


def test_blanks_around_lines_and_empty_lines_are_dropped() -> None:
    """Leading/trailing spaces and tabs are stripped; empty lines yield nothing."""
    assert lines(b"  READY \t\r\n\r\n\n   \r\n") == [Line("READY")]


def test_oversized_line_is_one_event_and_the_next_line_reads() -> None:
    """A line over the limit is reported once and dropped; memory stays bounded."""
    framer = LineFramer(max_line_size=10)
    events = framer.receive_data(b"X" * 8)
    events += framer.receive_data(b"Y" * 100)
    assert framer.buffered <= 10
    events += framer.receive_data(b"ZZ\r\nPASS\r\n")
    assert events == [OversizedLine(10), Line("PASS")]


def test_last_line_without_end_counts_at_eof() -> None:
    """A stream ending mid-line still delivers that line (liberal)."""
    assert lines(b"QUIT") == [Line("QUIT")]


def test_binary_garbage_decodes_with_replacement() -> None:
    """Invalid UTF-8 never raises."""
    assert lines(b"\xff\xfeOK\r\n") == [Line("\ufffd\ufffdOK")]


def test_encode_line_sends_crlf_and_refuses_line_breaks() -> None:
    """We always send CRLF; text with CR, LF or NUL is our bug."""
    assert encode_line("OK hi") == b"OK hi\r\n"
    for bad in ("a\rb", "a\nb", "a\x00b", "\ud800"):
        with pytest.raises(LocalProtocolError):
            encode_line(bad)


@settings(max_examples=150)
@given(
    st.lists(st.sampled_from([b"READY", b"PASS", b"PLACE (A,7,7)", b" x ", b"\xff"]), max_size=8),
    st.sampled_from([b"\r\n", b"\n", b"\x00" * 3, b"\r\n\x00\x00"]),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=20),
)
def test_any_chunking_gives_the_same_lines(
    parts: list[bytes], end: bytes, sizes: list[int]
) -> None:
    """Cutting the stream anywhere (down to single bytes) changes nothing."""
    data = b"".join(p + end for p in parts)
    whole = lines(data)
    framer = LineFramer()
    got: list[Line | OversizedLine] = []
    pos, i = 0, 0
    while pos < len(data):
        n = sizes[i % len(sizes)]
        got += framer.receive_data(data[pos : pos + n])
        pos, i = pos + n, i + 1
    got += framer.finish()
    assert got == whole


@settings(max_examples=150)
@given(st.binary(max_size=300), st.integers(min_value=1, max_value=64))
def test_random_bytes_never_raise_and_stay_bounded(data: bytes, limit: int) -> None:
    """Any bytes: only Line/OversizedLine events, lines within the limit, buffer bounded."""
    framer = LineFramer(max_line_size=limit)
    for event in framer.receive_data(data):
        if isinstance(event, Line):
            assert len(event.text.encode()) <= limit * 3
            # The framer strips ASCII blanks only (bytes.strip); str.strip would also take
            # \x1c-\x1f, which Python counts as whitespace.
            assert event.text == event.text.strip(" \t\r\n\x0b\x0c")
        assert framer.buffered <= limit

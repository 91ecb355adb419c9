"""Line framing: any chunking, CRLF, size limit, binary garbage."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.protocols.spectrangle import Line, LineFramer, OversizedLine, encode_line

STREAM = b"connect p1 chat\nrequest 3\r\nplace RGB4 on 11\n"
LINES = [Line("connect p1 chat"), Line("request 3"), Line("place RGB4 on 11")]


def test_whole_stream() -> None:
    """Several lines in one chunk come out in order; CRLF and LF both end a line."""
    assert LineFramer().receive_data(STREAM) == LINES


def test_byte_by_byte() -> None:
    """One byte at a time gives the same lines (the CR of CRLF split from its LF too)."""
    framer = LineFramer()
    events = []
    for i in range(len(STREAM)):
        events += framer.receive_data(STREAM[i : i + 1])
    assert events == LINES


def test_trailing_data_waits_for_its_line_end() -> None:
    """An unfinished line is held until its newline arrives."""
    framer = LineFramer()
    assert framer.receive_data(STREAM + b"skip") == LINES
    assert framer.buffered == 4
    assert framer.receive_data(b"\n") == [Line("skip")]
    assert framer.buffered == 0


def test_blank_lines_are_ignored() -> None:
    """Empty and whitespace-only lines produce nothing."""
    assert LineFramer().receive_data(b"\n\r\n   \nskip\n") == [Line("skip")]


def test_oversized_line_is_reported_once_and_skipped() -> None:
    """A too-long line is one event, is not buffered, and the next line decodes."""
    framer = LineFramer(max_line_size=16)
    events = framer.receive_data(b"x" * 10)
    events += framer.receive_data(b"x" * 10)
    assert framer.buffered == 0
    events += framer.receive_data(b"x" * 1000)
    assert framer.buffered == 0
    events += framer.receive_data(b"xx\nskip\n")
    assert events == [OversizedLine(16), Line("skip")]


def test_line_of_exactly_the_limit_passes_with_crlf() -> None:
    """The limit counts the line without its line end."""
    framer = LineFramer(max_line_size=4)
    assert framer.receive_data(b"skip\r\nskips\r\n") == [Line("skip"), OversizedLine(4)]


def test_undecodable_bytes_never_raise() -> None:
    """Invalid UTF-8 turns into replacement characters."""
    assert LineFramer().receive_data(b"\xff\xfe chat\n") == [Line("\ufffd\ufffd chat")]


def test_encode_line() -> None:
    """A line is UTF-8 plus LF; a line break inside is refused."""
    assert encode_line("skip") == b"skip\n"
    with pytest.raises(ValueError, match="line break"):
        encode_line("chat a\nb")


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        LineFramer(0)


@given(st.binary(max_size=300), st.lists(st.integers(1, 40), max_size=20))
def test_any_bytes_any_chunking(data: bytes, cuts: list[int]) -> None:
    """Garbage never raises, the buffer stays bounded, and chunking does not matter."""
    whole = LineFramer(max_line_size=32).receive_data(data)
    framer = LineFramer(max_line_size=32)
    pieces = []
    start = 0
    for cut in cuts:
        pieces.append(data[start : start + cut])
        start += cut
    pieces.append(data[start:])
    events = []
    for piece in pieces:
        events += framer.receive_data(piece)
        assert framer.buffered <= 33
    assert events == whole

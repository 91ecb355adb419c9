"""The one framer of the delimited protocols (STYLE: one framer): a message is kept up to
its delimiter, an oversized one is dropped unkept and reported once, and the events never
depend on how the stream is cut into reads."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.clarkson.framing import LineFramer as ClarksonFramer
from meeple.protocols.framing import DelimitedFramer
from meeple.protocols.santorini.framing import LineDecoder
from meeple.protocols.spectrangle.framing import LineFramer as SpectrangleFramer
from meeple.protocols.twente.framing import Framer as TwenteFramer


class _Semicolons(DelimitedFramer[str]):
    """A framing of no protocol: ``;`` ends a message, blanks before one are dropped."""

    __slots__ = ()

    DELIMITER = re.compile(rb";")
    LEADING = b" "

    def _oversized(self) -> str:
        return f"oversized {self.max_message_size}"

    def _message(self, raw: bytes) -> str | None:
        return raw.decode("latin-1") if raw else None


def _feed(framer: DelimitedFramer[str], chunks: list[bytes]) -> list[str]:
    return [event for chunk in chunks for event in framer.receive_data(chunk)]


def test_the_protocol_framers_are_one_mechanism() -> None:
    """Twente, Clarkson, Spectrangle and AM27 lines all cut bytes with DelimitedFramer."""
    for framer in (TwenteFramer(), ClarksonFramer(), SpectrangleFramer(), LineDecoder()):
        assert isinstance(framer, DelimitedFramer)


def test_oversized_message_is_dropped_up_to_its_delimiter_and_reported_once() -> None:
    """Bytes past the limit are not kept; the next message decodes normally."""
    framer = _Semicolons(4)
    assert _feed(framer, [b"abcdefgh", b"ijk", b";ok;"]) == ["oversized 4", "ok"]
    assert framer.buffered == 0


def test_leading_bytes_are_dropped_even_split_across_reads() -> None:
    """LEADING is stripped at the start of each message, across chunk boundaries."""
    assert _feed(_Semicolons(8), [b"  ", b" a", b" b;", b";  ;"]) == ["a b"]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        _Semicolons(0)


@given(
    messages=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b";", b"")), max_size=12),
    cuts=st.lists(st.integers(0, 200), max_size=12),
    limit=st.integers(1, 10),
)
@settings(max_examples=200)
def test_any_cut_gives_the_events_of_the_whole_stream(
    messages: list[bytes], cuts: list[int], limit: int
) -> None:
    """Hostile bytes cut anyhow: the same events as read whole, one per message that is
    not empty after LEADING, never more than ``limit`` bytes held."""
    stream = b"".join(m + b";" for m in messages)
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    framer = _Semicolons(limit)
    events: list[str] = []
    for chunk in chunks:
        events += framer.receive_data(chunk)
        assert framer.buffered <= limit
    assert events == _Semicolons(limit).receive_data(stream)
    expected = [
        m.lstrip(b" ").decode("latin-1") if len(m.lstrip(b" ")) <= limit else f"oversized {limit}"
        for m in messages
        if m.lstrip(b" ")
    ]
    assert events == expected
    assert framer.partial == 0

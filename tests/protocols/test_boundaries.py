"""Every byte-stream framer finds its messages' ends before decoding them (issue 30.2):
one end per delimiter, the same count however the stream is cut, and refused messages
stepped over leave the framer in step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.protocols.boundaries import MessageBoundaries
from meeple.protocols.clarkson.framing import LineFramer as ClarksonFramer
from meeple.protocols.santorini.framing import LineDecoder
from meeple.protocols.spectrangle.framing import LineFramer as SpectrangleFramer
from meeple.protocols.twente.framing import Framer as TwenteFramer

# name: (a fresh framer, the byte strings that end a message, whether a blank one counts)
FRAMERS: dict[str, tuple[Callable[[], Any], tuple[bytes, ...], bool]] = {
    "twente": (lambda: TwenteFramer(32), (b"\x1e",), True),
    # Clarkson: a run of LF/NUL is one end (NUL padding, §2).
    "clarkson": (lambda: ClarksonFramer(32), (b"\n", b"\x00"), False),
    "spectrangle": (lambda: SpectrangleFramer(32), (b"\n",), True),
    "santorini-lines": (lambda: LineDecoder(32), (b"\n",), True),
}


def _cut(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


@pytest.mark.parametrize("name", sorted(FRAMERS))
@given(data=st.data())
@settings(max_examples=60)
def test_any_split_counts_one_end_per_delimiter(name: str, data: st.DataObject) -> None:
    """Messages (blank ones too) cut anyhow into reads: the ends found unread are one per
    delimiter, each end completes at most one message, and the messages read are those
    of the stream read whole, less the ones stepped over unread."""
    make, delimiters, blank_counts = FRAMERS[name]
    body = st.binary(max_size=30).map(
        lambda b: bytes(c for c in b if bytes([c]) not in delimiters and c not in b"\r\n")
    )
    parts = data.draw(st.lists(st.tuples(body, st.sampled_from(delimiters)), max_size=20))
    stream = b"".join(b + d for b, d in parts)
    cuts = data.draw(st.lists(st.integers(0, 2000), max_size=10))
    refuse = data.draw(st.lists(st.booleans(), min_size=1, max_size=10))
    reference = make()
    each = [reference.receive_data(b + d) for b, d in parts]  # the events of each part
    assert [e for events in each for e in events] == make().receive_data(stream)
    each = [events for (b, _), events in zip(parts, each, strict=True) if b or blank_counts]
    framer: MessageBoundaries = make()
    read: list[Any] = []
    kept: list[Any] = []
    counted = 0
    for chunk in _cut(stream, cuts):
        ends = framer.message_ends(chunk, 10**6)
        assert ends == sorted(set(ends))
        assert all(0 < e <= len(chunk) for e in ends)
        assert all(chunk[e - 1 : e] in delimiters for e in ends)
        at = 0
        for end in ends:
            if refuse[counted % len(refuse)] and _partial(framer) == 0:
                framer.skip_messages(chunk[at:end])
            else:
                read += _receive(framer, chunk[at:end])
                kept += each[counted]
            counted += 1
            at = end
        read += _receive(framer, chunk[at:])
    assert counted == len(each)
    assert read == kept


def _partial(framer: Any) -> int:
    return int(framer.partial)


def _receive(framer: Any, data: bytes) -> list[Any]:
    return list(framer.receive_data(data))

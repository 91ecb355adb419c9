"""Spectrangle framing: one command per line.

ERRATA (Spectrangle): lines end with ``\\n``; ``\\r\\n`` is accepted too. Meeple always
sends ``\\n``. :class:`LineFramer` cuts an incoming byte stream into :class:`Line`
events whatever the chunking; :func:`encode_line` does the reverse.

Limits: a line longer than ``max_line_size`` bytes becomes one :class:`OversizedLine`
event (the session answers ``invalidCommand``); its bytes are dropped up to the next
``\\n`` without being kept, so a peer cannot make the buffer grow, and the next line
decodes. Bytes that are not UTF-8 are decoded with replacement characters, so
decoding never raises; the message parser then refuses the line as a command it
does not know. Blank lines are ignored.
"""

from __future__ import annotations

import re

from meeple.protocols.framing import DelimitedFramer, Line, OversizedLine
from meeple.protocols.framing import LineEvent as FrameEvent

__all__ = [
    "DEFAULT_MAX_LINE_SIZE",
    "FrameEvent",
    "Line",
    "LineFramer",
    "OversizedLine",
    "encode_line",
]

# The longest line meeple sends (a 4-player tiles line with 32-character names) is
# about 250 bytes; chat lines are the only long ones. 4 KiB keeps a peer's buffer small.
DEFAULT_MAX_LINE_SIZE = 4096

_LF = b"\n"
_LINE_END = re.compile(rb"\n")


class LineFramer(DelimitedFramer[FrameEvent]):
    """Incremental splitter of a byte stream into lines (:mod:`meeple.protocols.framing`).

    Holds at most ``max_line_size`` bytes of one unfinished line (and a ``\\r``), however
    the stream is chunked. Call :meth:`receive_data` with each chunk as it arrives.
    """

    __slots__ = ()

    DELIMITER = _LINE_END

    def __init__(self, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        super().__init__(max_line_size)

    def _fits(self, size: int, ends_here: bool) -> bool:
        # One byte of slack: a "\r" ending a line of exactly the limit is no excess.
        return size <= self.max_message_size + 1

    def _oversized(self) -> FrameEvent:
        return OversizedLine(self.max_message_size)

    def _message(self, raw: bytes) -> FrameEvent | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > self.max_message_size:
            return OversizedLine(self.max_message_size)
        text = raw.decode("utf-8", errors="replace")
        return Line(text) if text.strip() else None


def encode_line(text: str) -> bytes:
    """One line on the wire: UTF-8 and ``\\n``. Refuses text that would break framing."""
    if "\n" in text or "\r" in text:
        raise ValueError("a line may not contain a line break")
    return text.encode("utf-8") + _LF

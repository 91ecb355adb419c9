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
from dataclasses import dataclass

from meeple.protocols.boundaries import delimited_ends

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


@dataclass(frozen=True, slots=True)
class Line:
    """One complete, non-blank line as text, without its line end."""

    text: str


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line longer than ``limit`` bytes; it was dropped up to its ``\\n``."""

    limit: int


FrameEvent = Line | OversizedLine


class LineFramer:
    """Incremental splitter of a byte stream into lines.

    Holds at most ``max_line_size`` bytes of one unfinished line, however the stream is
    chunked. Call :meth:`receive_data` with each chunk as it arrives.
    """

    __slots__ = ("_buffer", "_skipping", "max_line_size")

    def __init__(self, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        if max_line_size < 1:
            raise ValueError("max_line_size must be positive")
        self.max_line_size = max_line_size
        self._buffer = bytearray()
        self._skipping = False  # inside an oversized line, dropping bytes up to \n

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line held now (never more than the limit + 1)."""
        return len(self._buffer)

    @property
    def partial(self) -> int:
        """Bytes of the unfinished message (1 while dropping an oversized one): 0 only at a
        message boundary. The server's slowloris timer reads it."""
        return len(self._buffer) or int(self._skipping)

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Just past each of the first ``limit`` ``\\n`` of ``data``, unread (the server's
        message budget, :mod:`meeple.protocols.boundaries`); blank lines count too."""
        return delimited_ends(data, _LINE_END, limit)

    def skip_messages(self, data: bytes) -> None:
        """``data`` holds whole lines refused unread: nothing of them is kept."""
        self._buffer.clear()
        self._skipping = False

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        """Take the next chunk of the stream; return the events of the lines it ends."""
        events: list[FrameEvent] = []
        start = 0
        while True:
            end = data.find(_LF, start)
            if end < 0:
                self._take(data[start:], events)
                return events
            self._take(data[start:end], events)
            self._end_line(events)
            start = end + 1

    def _take(self, piece: bytes, events: list[FrameEvent]) -> None:
        if self._skipping or not piece:
            return
        # One byte of slack: a "\r" ending a line of exactly the limit is no excess.
        if len(self._buffer) + len(piece) > self.max_line_size + 1:
            self._buffer.clear()
            self._skipping = True
            events.append(OversizedLine(self.max_line_size))
            return
        self._buffer += piece

    def _end_line(self, events: list[FrameEvent]) -> None:
        if self._skipping:
            self._skipping = False
            return
        raw = bytes(self._buffer)
        self._buffer.clear()
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > self.max_line_size:
            events.append(OversizedLine(self.max_line_size))
            return
        text = raw.decode("utf-8", errors="replace")
        if text.strip():
            events.append(Line(text))


def encode_line(text: str) -> bytes:
    """One line on the wire: UTF-8 and ``\\n``. Refuses text that would break framing."""
    if "\n" in text or "\r" in text:
        raise ValueError("a line may not contain a line break")
    return text.encode("utf-8") + _LF

"""Clarkson framing: the byte stream as lines, and lines back to bytes.

RFC §2 ends every message line with CRLF and lets an implementation accept a bare LF;
meeple always sends CRLF (ERRATA). :class:`LineFramer` cuts a byte stream into
:class:`Line` events whatever the chunking; :func:`encode_line` does the reverse.

Tolerance, because real clients need it (ERRATA, Clarkson; docs/protocols/clarkson.md):

- NUL padding: a known client writes every line into a fixed 4096-byte buffer padded
  with NUL bytes and sends the whole buffer. A NUL therefore ends the line it follows
  (so a padded buffer without a newline still delivers its line), and NULs that follow
  a line end are nothing: a buffer of only NULs yields no event.
- Spaces, tabs and the CR of CRLF around a line are stripped; a line that is empty
  after that is dropped (telnet users press Enter; BOARDPUSH ends with an empty line).
- A line longer than the limit becomes one :class:`OversizedLine` event; its bytes are
  dropped up to the next line end without being kept, so a peer cannot make the buffer
  grow, and the next line decodes normally.
- Bytes are decoded as UTF-8 with replacement characters, so binary garbage never
  raises; every keyword of the RFC is ASCII, so garbage can only land in free text.
"""

from __future__ import annotations

import re

from meeple.protocols.boundaries import delimited_ends
from meeple.protocols.clarkson.errors import LocalProtocolError
from meeple.protocols.framing import DelimitedFramer, Line, LineEvent, OversizedLine

__all__ = [
    "CRLF",
    "DEFAULT_MAX_LINE_SIZE",
    "Line",
    "LineEvent",
    "LineFramer",
    "OversizedLine",
    "encode_line",
]

CRLF = b"\r\n"

# One padded client buffer is 4096 bytes; no legal line comes close (a PLACE of seven
# tiles is about 80 bytes, a BOARDPUSH row 89), so this bounds a peer's buffer only.
DEFAULT_MAX_LINE_SIZE = 4096

# A run of line ends (LF) and NUL padding ends the line before it. A run split across
# chunks only produces empty lines, which are dropped.
_LINE_END = re.compile(rb"[\n\x00]+")
# For the budget a line ends at an LF or NUL that follows something else: the rest of a
# run is padding (§2's NUL-filled 4096-byte buffers) that the framer steps over in one
# match. Whether a run began in an earlier read, ``partial`` says (0 only after an end).
_MESSAGE_END = re.compile(rb"(?<=[^\n\x00])[\n\x00]")
_ENDS = (ord("\n"), 0)
_FORBIDDEN_IN_LINE = re.compile(r"[\r\n\x00]")


class LineFramer(DelimitedFramer[LineEvent]):
    """Incremental splitter of a Clarkson byte stream into lines (:mod:`meeple.protocols.framing`).

    Call :meth:`receive_data` with each chunk as it arrives and :meth:`finish` at the end
    of the stream. Holds at most ``max_line_size`` bytes of one unfinished line.
    """

    __slots__ = ()

    DELIMITER = _LINE_END

    def __init__(self, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        super().__init__(max_line_size)

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Just past each of the first ``limit`` line ends of ``data``, unread (the server's
        message budget, :mod:`meeple.protocols.boundaries`): an LF or NUL after anything
        else (a blank line of spaces too); the rest of a run of them is padding."""
        if limit < 1 or not data:
            return []
        if self.partial and data[0] in _ENDS:  # ends the line held from earlier reads
            return [1, *delimited_ends(data, _MESSAGE_END, limit - 1)]
        return delimited_ends(data, _MESSAGE_END, limit)

    def finish(self) -> list[LineEvent]:
        """The stream ended: a last line without a line end still counts (liberal)."""
        events: list[LineEvent] = []
        self._end(events)
        return events

    def _oversized(self) -> LineEvent:
        return OversizedLine(self.max_message_size)

    def _message(self, raw: bytes) -> LineEvent | None:
        raw = raw.strip()  # ASCII blanks and the CR of CRLF
        return Line(raw.decode("utf-8", errors="replace")) if raw else None


def encode_line(text: str) -> bytes:
    """One line of text to bytes ending in CRLF (RFC §2: send CRLF wherever it is stated).

    Raise LocalProtocolError if the text holds CR, LF or NUL (they would end the line
    early at the peer) or cannot be encoded as UTF-8 (a lone surrogate).
    """
    if _FORBIDDEN_IN_LINE.search(text):
        raise LocalProtocolError(f"a line may not contain CR, LF or NUL: {text!r}")
    try:
        return text.encode("utf-8") + CRLF
    except UnicodeEncodeError as exc:
        raise LocalProtocolError(f"not valid text: {text!r}") from exc

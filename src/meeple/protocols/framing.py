"""One framer for the delimited protocols: Twente (RS), Clarkson (LF/NUL), Spectrangle and
AM27 lines (LF).

A delimited byte stream is cut the same way whatever the protocol: bytes are kept up to
the next delimiter, a message longer than the limit is dropped up to its delimiter
without being kept (so a peer cannot make the buffer grow) and reported once, and the
next message decodes normally. What differs is data, given by a subclass of
:class:`DelimitedFramer`:

- ``DELIMITER``, the regular expression that ends a message (one byte, or Clarkson's run
  of LF and NUL padding);
- ``LEADING``, bytes dropped from the start of each message (Twente's ``\\r\\n`` after RS);
- :meth:`~DelimitedFramer._fits`, whether a message of some size is within the limit (the
  line protocols allow one byte more for the ``\\r`` of ``\\r\\n``);
- :meth:`~DelimitedFramer._message`, the event for a whole message's bytes (or None for
  one that is no message, such as a blank line), and
  :meth:`~DelimitedFramer._oversized`, the event for one that was too long.

Every framer is also a :class:`~meeple.protocols.boundaries.MessageBoundaries`: its
messages' ends are found unread for the server's message budget. :class:`FramedSession`
is what a session over such a framer shows the server of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Generic, Protocol, TypeVar

from meeple.protocols.boundaries import MessageBoundaries, delimited_ends

__all__ = ["DelimitedFramer", "FramedSession", "Line", "LineEvent", "OversizedLine"]

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Line:
    """One complete, non-blank line as text, without its line end (Clarkson and
    Spectrangle; each framing says what else it strips)."""

    text: str


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line longer than ``limit`` bytes; it was dropped up to its end."""

    limit: int


LineEvent = Line | OversizedLine


class DelimitedFramer(Generic[E]):
    """Incremental splitter of a delimited byte stream into events of type ``E``.

    Holds at most ``max_message_size`` bytes of one unfinished message (plus the slack
    :meth:`_fits` allows), however the stream is chunked. Call :meth:`receive_data` with
    each chunk as it arrives; the server calls :meth:`message_ends` and
    :meth:`skip_messages` first to charge the messages to its budget.
    """

    __slots__ = ("_buffer", "_skipping", "max_message_size")

    DELIMITER: ClassVar[re.Pattern[bytes]]
    LEADING: ClassVar[bytes] = b""

    def __init__(self, max_message_size: int) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._skipping = False  # inside an oversized message, dropping bytes up to its end

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished message held now (never more than the limit's slack)."""
        return len(self._buffer)

    @property
    def partial(self) -> int:
        """Bytes of the unfinished message (1 while dropping an oversized one): 0 only at a
        message boundary. The server's slowloris timer reads it."""
        return len(self._buffer) or int(self._skipping)

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Just past each of the first ``limit`` delimiters of ``data``, unread (the server's
        message budget, :mod:`meeple.protocols.boundaries`); empty messages count too."""
        return delimited_ends(data, self.DELIMITER, limit)

    def skip_messages(self, data: bytes) -> None:
        """``data`` holds whole messages refused unread: nothing of them is kept."""
        self._buffer.clear()
        self._skipping = False

    def receive_data(self, data: bytes) -> list[E]:
        """Take the next chunk of the stream; return the events of the messages it ends."""
        events: list[E] = []
        start = 0
        for match in self.DELIMITER.finditer(data):
            self._take(data[start : match.start()], True, events)
            self._end(events)
            start = match.end()
        self._take(data[start:], False, events)
        return events

    def _fits(self, size: int, ends_here: bool) -> bool:
        """Whether ``size`` bytes of one message (its delimiter in this chunk or not) may be
        kept. By default the limit itself; a line framer allows the ``\\r`` of ``\\r\\n``."""
        return size <= self.max_message_size

    def _oversized(self) -> E:
        """The event for a message longer than the limit, reported once."""
        raise NotImplementedError

    def _message(self, raw: bytes) -> E | None:
        """The event for one whole message's bytes (delimiter removed), or None for none."""
        raise NotImplementedError

    def _take(self, piece: bytes, ends_here: bool, events: list[E]) -> None:
        if self._skipping or not piece:
            return
        if self.LEADING and not self._buffer:
            # Stripping at the start of each message also covers a pair split across chunks.
            piece = piece.lstrip(self.LEADING)
        if not self._fits(len(self._buffer) + len(piece), ends_here):
            self._buffer.clear()
            self._skipping = True
            events.append(self._oversized())
            return
        self._buffer += piece

    def _end(self, events: list[E]) -> None:
        if self._skipping:
            self._skipping = False
            return
        raw = bytes(self._buffer)
        self._buffer.clear()
        event = self._message(raw)
        if event is not None:
            events.append(event)


class _Framer(MessageBoundaries, Protocol):
    @property
    def buffered(self) -> int: ...

    @property
    def partial(self) -> int: ...


class FramedSession:
    """What a session over a :class:`DelimitedFramer` shows the server of its framer: the
    bytes held, the slowloris measure and the message budget's two methods."""

    __slots__ = ()

    _framer: _Framer

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished message held by the framer (bounded by the limit)."""
        return self._framer.buffered

    @property
    def partial(self) -> int:
        """Bytes of an unfinished message (1 while an oversized one is dropped); 0 only
        between messages. For the server's slowloris timer."""
        return self._framer.partial

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Where the first ``limit`` messages of ``data`` end, unread (for the server's
        message budget; :mod:`meeple.protocols.boundaries`)."""
        return self._framer.message_ends(data, limit)

    def skip_messages(self, data: bytes) -> None:
        """Step over whole messages refused unread."""
        self._framer.skip_messages(data)

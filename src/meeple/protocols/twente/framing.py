"""Twente framing: fields split by US (0x1F), messages ended by RS (0x1E).

The spec ("Delimiters") defines ``COMMAND US ARG1 US ARG2 RS``. :class:`Framer` cuts an
incoming byte stream into :class:`Frame` events whatever the chunking, and
:func:`encode_frame` does the reverse. Feed bytes with :meth:`Framer.receive_data`;
read the events it returns; decode each :class:`Frame` with
:func:`meeple.protocols.twente.messages.decode`.

Tolerance (ERRATA, Twente): ``\\n`` or ``\\r\\n`` right after RS is skipped (Java clients
that read lines send it), and empty messages are ignored. A message longer than the
limit becomes one :class:`OversizedFrame` event; its bytes are dropped up to the next RS
without being kept, so a peer cannot make the buffer grow, and the next message decodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from meeple.protocols.framing import DelimitedFramer
from meeple.protocols.twente.errors import ErrorCode, LocalProtocolError

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "RS",
    "US",
    "Frame",
    "FrameEvent",
    "Framer",
    "OversizedFrame",
    "UndecodableFrame",
    "encode_frame",
]

US = "\x1f"  # the spec's UNIT_SEPARATOR: between the command and its arguments
RS = "\x1e"  # the spec's MESSAGE_SEPARATOR: after every message
_US = US.encode()
_RS = RS.encode()
_LINE_ENDS = b"\r\n"
_MESSAGE_END = re.compile(re.escape(_RS))

# The longest legal message (GAMEOVER with four 32-character names, or a long chat line)
# is far below this; 4 KiB keeps one peer's buffer small.
DEFAULT_MAX_MESSAGE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Frame:
    """One complete message: the command and its arguments as text, not yet checked."""

    fields: tuple[str, ...]

    @property
    def command(self) -> str:
        return self.fields[0]

    @property
    def args(self) -> tuple[str, ...]:
        return self.fields[1:]


@dataclass(frozen=True, slots=True)
class OversizedFrame:
    """A message longer than ``limit`` bytes; it was dropped up to its RS."""

    limit: int


@dataclass(frozen=True, slots=True)
class UndecodableFrame:
    """A message whose bytes are not UTF-8; it was dropped."""

    reason: str


FrameEvent = Frame | OversizedFrame | UndecodableFrame


class Framer(DelimitedFramer[FrameEvent]):
    """Incremental splitter of a Twente byte stream into frames (:mod:`meeple.protocols.framing`).

    Holds at most ``max_message_size`` bytes of one unfinished message, however the
    stream is chunked. Call :meth:`receive_data` with each chunk as it arrives.
    """

    __slots__ = ()

    DELIMITER = _MESSAGE_END
    # ERRATA: "\n" or "\r\n" right after RS belongs to no message.
    LEADING = _LINE_ENDS

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        super().__init__(max_message_size)

    def _oversized(self) -> FrameEvent:
        return OversizedFrame(self.max_message_size)

    def _message(self, raw: bytes) -> FrameEvent | None:
        if not raw:
            return None  # ERRATA: empty messages are ignored
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return UndecodableFrame(f"not UTF-8 at byte {exc.start}")
        return Frame(tuple(text.split(US)))


def encode_frame(fields: Iterable[str]) -> bytes:
    """``("COMMAND", "ARG1", ...)`` to ``COMMAND US ARG1 ... RS``.

    Raise LocalProtocolError if a field holds a separator: it would change the message.
    """
    parts = tuple(fields)
    if not parts:
        raise LocalProtocolError(ErrorCode.UNKNOWN_COMMAND, "a message needs a command")
    for part in parts:
        if US in part or RS in part:
            raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"separator in field {part!r}")
    try:
        return _US.join(p.encode("utf-8") for p in parts) + _RS
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "field is not valid text") from exc

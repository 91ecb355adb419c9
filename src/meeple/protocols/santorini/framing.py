"""AM27 framing: JSON lines one way, a Java object stream of strings the other (ERRATA).

ERRATA (santorini-am27): clients send one JSON envelope per line (``\\n``); the server
sends, by default, what Java's ``ObjectOutputStream.writeObject(String)`` writes after
``reset()``, because the group's client reads with ``ObjectInputStream.readObject()``:

- once per connection the stream header ``AC ED 00 05``;
- per message ``79`` (TC_RESET), then ``74`` (TC_STRING) + 2-byte big-endian length +
  the text in *modified* UTF-8, or ``7C`` (TC_LONGSTRING) + 8-byte length when the text
  is over 65535 bytes.

Plain JSON lines server → client are an option (:class:`LineEncoder`) for other clients.

Decoders, all incremental (any chunking) and bounded by ``max_message_size``:

- :class:`LineDecoder` cuts ``\\n``-ended lines (``\\r\\n`` accepted, empty lines
  ignored); an oversized line is dropped up to its end and reported once.
- :class:`ObjectStreamDecoder` reads the object stream (header, resets, strings, and
  back-references ``71`` to strings already sent, which Java writes when the sender
  does not reset). Anything else cannot be skipped safely: the stream is then broken.
- :class:`AutoDecoder` picks one of the two from the first bytes (``AC`` starts an object
  stream; JSON text never does), so a server accepts a Java client that writes objects
  and a client reads either kind of server. Be liberal in what you accept.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "STREAM_HEADER",
    "TC_LONGSTRING",
    "TC_REFERENCE",
    "TC_RESET",
    "TC_STRING",
    "AutoDecoder",
    "BrokenStream",
    "Decoder",
    "Encoder",
    "FrameEvent",
    "LineDecoder",
    "LineEncoder",
    "ObjectStreamDecoder",
    "ObjectStreamEncoder",
    "OversizedMessage",
    "Text",
    "UndecodableMessage",
    "decode_modified_utf8",
    "encode_modified_utf8",
]

STREAM_HEADER = b"\xac\xed\x00\x05"  # STREAM_MAGIC 0xACED, STREAM_VERSION 5
TC_RESET = 0x79
TC_STRING = 0x74
TC_LONGSTRING = 0x7C
TC_REFERENCE = 0x71
_BASE_HANDLE = 0x7E0000  # the first handle Java assigns after a reset
_SHORT_MAX = 0xFFFF

# Largest message we accept by default. Client envelopes are a few hundred bytes; the
# largest server message (an UPDATE with every cell of a god's options) is a few KiB.
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Text:
    """One whole message as text (a JSON envelope not yet parsed)."""

    text: str


@dataclass(frozen=True, slots=True)
class OversizedMessage:
    """A message longer than ``limit`` bytes was dropped."""

    limit: int


@dataclass(frozen=True, slots=True)
class UndecodableMessage:
    """A message whose bytes are not text (bad UTF-8) was dropped."""

    reason: str


@dataclass(frozen=True, slots=True)
class BrokenStream:
    """The object stream holds something that is not a string; nothing after it can be read."""

    reason: str


FrameEvent = Text | OversizedMessage | UndecodableMessage | BrokenStream


# --- modified UTF-8 (java.io.DataOutput.writeUTF) ---------------------------------------

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _to_surrogates(match: re.Match[str]) -> str:
    cp = ord(match.group()) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def encode_modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8: NUL as ``C0 80``, characters past U+FFFF as two 3-byte
    surrogates (CESU-8), everything else as in UTF-8."""
    if text.isascii() and "\0" not in text:
        return text.encode("ascii")
    data = _ASTRAL.sub(_to_surrogates, text).encode("utf-8", "surrogatepass")
    return data.replace(b"\x00", b"\xc0\x80")


def decode_modified_utf8(data: bytes) -> str:
    """The inverse of :func:`encode_modified_utf8` (plain UTF-8 is accepted too).

    Raise UnicodeDecodeError on bytes that are not modified UTF-8.
    """
    if data.isascii():
        return data.decode("ascii")
    text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    # Pair surrogates back into one character; a lone surrogate stays as it is.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# --- encoders --------------------------------------------------------------------------


class ObjectStreamEncoder:
    """Server → client default: ``header()`` once, then ``encode(text)`` per message."""

    framing = "object-stream"

    def header(self) -> bytes:
        return STREAM_HEADER

    def encode(self, text: str) -> bytes:
        data = encode_modified_utf8(text)
        if len(data) <= _SHORT_MAX:
            return struct.pack(">BBH", TC_RESET, TC_STRING, len(data)) + data
        return struct.pack(">BBQ", TC_RESET, TC_LONGSTRING, len(data)) + data


class LineEncoder:
    """One JSON text per ``\\n``-ended line (client → server, and the server option)."""

    framing = "lines"

    def header(self) -> bytes:
        return b""

    def encode(self, text: str) -> bytes:
        if "\n" in text or "\r" in text:
            # json.dumps never writes a raw line end; this would split the message.
            raise ValueError("a line-framed message cannot contain a line end")
        return text.encode("utf-8", "surrogatepass") + b"\n"


Encoder = ObjectStreamEncoder | LineEncoder


# --- decoders --------------------------------------------------------------------------


class LineDecoder:
    """Incremental splitter of ``\\n``-ended lines; holds at most ``max_message_size`` bytes."""

    __slots__ = ("_buffer", "_skipping", "max_message_size")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._skipping = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    @property
    def partial(self) -> int:
        """Bytes of the unfinished message (1 while dropping an oversized one)."""
        return len(self._buffer) or int(self._skipping)

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        events: list[FrameEvent] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if not self._skipping:
                if len(self._buffer) + len(piece) > self.max_message_size + (end >= 0):
                    # +1 when the line ends here: a trailing "\r" does not count.
                    self._buffer.clear()
                    self._skipping = True
                    events.append(OversizedMessage(self.max_message_size))
                else:
                    self._buffer += piece
            if end < 0:
                return events
            self._end_line(events)
            start = end + 1

    def _end_line(self, events: list[FrameEvent]) -> None:
        if self._skipping:
            self._skipping = False
            return
        raw = bytes(self._buffer).rstrip(b"\r")
        self._buffer.clear()
        if len(raw) > self.max_message_size:
            events.append(OversizedMessage(self.max_message_size))
            return
        if not raw.strip():
            return  # empty lines are no messages
        try:
            events.append(Text(raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            events.append(UndecodableMessage(f"not UTF-8 at byte {exc.start}"))


class ObjectStreamDecoder:
    """Incremental reader of a Java object stream that carries strings only.

    Keeps the strings' handles (cleared by every TC_RESET) so that back-references
    resolve; holds at most ``max_message_size`` bytes of one string (an oversized
    string is skipped by its declared length, so the stream stays in step).
    """

    __slots__ = ("_buffer", "_handles", "_header_seen", "_skip", "broken", "max_message_size")

    def __init__(
        self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, *, header_seen: bool = False
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._handles: list[str] = []
        self._header_seen = header_seen
        self._skip = 0  # bytes of an oversized string still to drop
        self.broken: str | None = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    @property
    def partial(self) -> int:
        """Bytes of the unfinished item (1 while dropping an oversized string)."""
        return len(self._buffer) or int(bool(self._skip))

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        if self.broken is not None:
            return []
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buffer += data
        events: list[FrameEvent] = []
        while self.broken is None and self._step(events):
            pass
        return events

    def _fail(self, reason: str, events: list[FrameEvent]) -> bool:
        self.broken = reason
        self._buffer.clear()
        events.append(BrokenStream(reason))
        return False

    def _step(self, events: list[FrameEvent]) -> bool:
        """Consume one item from the buffer; False when more bytes are needed."""
        buf = self._buffer
        if not self._header_seen:
            if len(buf) < len(STREAM_HEADER):
                if not STREAM_HEADER.startswith(bytes(buf)):
                    return self._fail("no object stream header", events)
                return False
            if bytes(buf[:4]) != STREAM_HEADER:
                return self._fail("no object stream header", events)
            del buf[:4]
            self._header_seen = True
            return True
        if not buf:
            return False
        code = buf[0]
        if code == TC_RESET:
            del buf[:1]
            self._handles.clear()
            return True
        if code == TC_REFERENCE:
            if len(buf) < 5:
                return False
            (handle,) = struct.unpack_from(">I", buf, 1)
            del buf[:5]
            index = handle - _BASE_HANDLE
            if not 0 <= index < len(self._handles):
                return self._fail(f"reference to unknown handle {handle:#x}", events)
            events.append(Text(self._handles[index]))
            return True
        if code in (TC_STRING, TC_LONGSTRING):
            head = 3 if code == TC_STRING else 9
            if len(buf) < head:
                return False
            fmt = ">H" if code == TC_STRING else ">Q"
            (length,) = struct.unpack_from(fmt, buf, 1)
            if length > self.max_message_size:
                del buf[:head]
                self._handles.append("")  # the string still took a handle
                dropped = min(length, len(buf))
                del buf[:dropped]
                self._skip = length - dropped
                events.append(OversizedMessage(self.max_message_size))
                return bool(buf)
            if len(buf) < head + length:
                return False
            raw = bytes(buf[head : head + length])
            del buf[: head + length]
            try:
                text = decode_modified_utf8(raw)
            except UnicodeDecodeError as exc:
                self._handles.append("")
                events.append(UndecodableMessage(f"not modified UTF-8 at byte {exc.start}"))
                return True
            self._handles.append(text)
            events.append(Text(text))
            return True
        return self._fail(f"unexpected type code {code:#04x}", events)


class AutoDecoder:
    """Reads either framing, chosen by the first byte: ``AC`` is an object stream, else lines."""

    __slots__ = ("_inner", "max_message_size")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_message_size = max_message_size
        self._inner: LineDecoder | ObjectStreamDecoder | None = None

    @property
    def framing(self) -> str | None:
        """``"object-stream"`` or ``"lines"`` once known, else None."""
        if self._inner is None:
            return None
        return "object-stream" if isinstance(self._inner, ObjectStreamDecoder) else "lines"

    @property
    def buffered(self) -> int:
        return 0 if self._inner is None else self._inner.buffered

    @property
    def partial(self) -> int:
        """Bytes of the unfinished message; 0 at a boundary (see the decoders)."""
        return 0 if self._inner is None else self._inner.partial

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        if self._inner is None:
            if not data:
                return []
            if data[0] == STREAM_HEADER[0]:
                self._inner = ObjectStreamDecoder(self.max_message_size)
            else:
                self._inner = LineDecoder(self.max_message_size)
        return self._inner.receive_data(data)


Decoder = LineDecoder | ObjectStreamDecoder | AutoDecoder

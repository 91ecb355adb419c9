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

Every decoder also finds its messages' ends *before* decoding them
(:class:`~meeple.protocols.boundaries.MessageBoundaries`: ``message_ends`` and
``skip_messages``), so the server charges an object stream's messages to the
connection's message budget as it does lines (issue 30.2): a line ends at its ``\n``, an
object-stream message at the end of its string (or back-reference); the header and
TC_RESET are no messages, and a run of resets is stepped over in one go.
"""

from __future__ import annotations

import re
import struct
from collections import OrderedDict
from dataclasses import dataclass

from meeple.protocols.framing import DelimitedFramer

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HANDLES_KEPT",
    "HANDLE_BYTES_KEPT",
    "STREAM_HEADER",
    "TC_LONGSTRING",
    "TC_REFERENCE",
    "TC_RESET",
    "TC_STRING",
    "AutoDecoder",
    "BrokenStream",
    "Decoder",
    "Encoder",
    "Forgotten",
    "FrameEvent",
    "Handles",
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
_LONG_HEAD = 9  # TC_LONGSTRING and its 8-byte length: the longest item head
_RESETS = re.compile(rb"\x79+")  # a run of TC_RESET is one reset
_LINE_END = re.compile(rb"\n")

# Strings a client's object stream may refer back to (TC_REFERENCE) that a decoder keeps:
# Java keeps every string written since the last reset(); a client that never resets
# would make the server keep every message for the connection's life. The most recently
# used ones are kept within both bounds (issue 30.2); a reference to a string forgotten
# is an unreadable message (INFO MALFORMED), and the stream stays in step.
HANDLES_KEPT = 1024
HANDLE_BYTES_KEPT = 64 * 1024

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


class LineDecoder(DelimitedFramer[FrameEvent]):
    """Incremental splitter of ``\\n``-ended lines (:mod:`meeple.protocols.framing`); holds
    at most ``max_message_size`` bytes (and a ``\\r`` at a line's end)."""

    __slots__ = ()

    DELIMITER = _LINE_END

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        super().__init__(max_message_size)

    def _fits(self, size: int, ends_here: bool) -> bool:
        # +1 when the line ends here: a trailing "\r" does not count.
        return size <= self.max_message_size + ends_here

    def _oversized(self) -> FrameEvent:
        return OversizedMessage(self.max_message_size)

    def _message(self, raw: bytes) -> FrameEvent | None:
        raw = raw.rstrip(b"\r")
        if len(raw) > self.max_message_size:
            return OversizedMessage(self.max_message_size)
        if not raw.strip():
            return None  # empty lines are no messages
        try:
            return Text(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return UndecodableMessage(f"not UTF-8 at byte {exc.start}")


class ObjectStreamDecoder:
    """Incremental reader of a Java object stream that carries strings only.

    Keeps the strings' handles (cleared by every TC_RESET) so that back-references
    resolve; holds at most ``max_message_size`` bytes of one string (an oversized
    string is skipped by its declared length, so the stream stays in step, and reported
    where it ends).

    A message is a string (TC_STRING, TC_LONGSTRING) or a back-reference (TC_REFERENCE)
    to one; :meth:`message_ends` finds where messages end from the items' lengths alone,
    and :meth:`skip_messages` steps over refused ones without decoding them (their
    strings still take their handles, raw, decoded only if referred to later).
    """

    __slots__ = ("_buffer", "_handles", "_header_seen", "_skip", "broken", "max_message_size")

    def __init__(
        self,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        *,
        header_seen: bool = False,
        handles_kept: int = HANDLES_KEPT,
        handle_bytes_kept: int = HANDLE_BYTES_KEPT,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be positive")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._handles = Handles(handles_kept, handle_bytes_kept)
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

    @property
    def handles(self) -> Handles:
        """The strings kept for back-references (bounded; see :class:`Handles`)."""
        return self._handles

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Just past each of the first ``limit`` messages (strings, back-references) that
        end in ``data``, read from where the decoder stands, from the items' lengths
        only. Stops before anything that is not an item of this stream (the decoder
        calls the stream broken when it is fed)."""
        ends: list[int] = []
        if self.broken is not None or limit < 1:
            return ends
        size = len(data)
        pos = 0  # where the next item starts in data, or the held item continues
        if self._skip:  # the rest of an oversized string: it ends this message
            if self._skip > size:
                return ends
            pos = self._skip
            ends.append(pos)
        held = bytes(self._buffer[:_LONG_HEAD])  # the head of the item begun earlier
        held_len = len(self._buffer)
        header_seen = self._header_seen
        while len(ends) < limit:
            if not held_len:
                if header_seen:
                    if pos < size and data[pos] == TC_RESET:
                        pos += 1
                        if pos < size and data[pos] == TC_RESET:  # a run: one match
                            resets = _RESETS.match(data, pos)
                            assert resets is not None
                            pos = resets.end()
                    if pos + 3 <= size and data[pos] == TC_STRING:  # the usual item, inline
                        end = pos + 3 + (data[pos + 1] << 8 | data[pos + 2])
                        if end > size:
                            break
                        ends.append(end)
                        pos = end
                        continue
                if pos >= size:
                    break
            head = held + data[pos : pos + _LONG_HEAD - len(held)]
            item = _item_size(head, header_seen)
            if item is None:
                break  # more bytes needed, or not an item (broken)
            length, message = item
            end = pos - held_len + length
            if end > size:
                break
            if message:
                ends.append(end)
            header_seen = True
            pos, held, held_len = end, b"", 0
        return ends

    def skip_messages(self, data: bytes) -> None:
        """Step over whole messages refused unread: their strings take their handles
        (raw bytes, never decoded unless referred to), resets clear them."""
        pos = 0
        if not (self._buffer or self._skip) and self._header_seen and self.broken is None:
            # At a boundary (as the listener always is here): resets and short strings
            # are walked in place, without copying them through the buffer.
            size, handles = len(data), self._handles
            while pos < size:
                code = data[pos]
                if code == TC_RESET:
                    pos += 1
                    if pos < size and data[pos] == TC_RESET:  # a run: one match
                        resets = _RESETS.match(data, pos)
                        assert resets is not None
                        pos = resets.end()
                    handles.clear()
                elif code == TC_STRING and pos + 3 <= size:
                    length = data[pos + 1] << 8 | data[pos + 2]
                    end = pos + 3 + length
                    if end > size or length > self.max_message_size:
                        break
                    handles.append(data[pos + 3 : end])
                    pos = end
                else:
                    break  # anything else the general way
        if pos < len(data):
            self._feed(data[pos:] if pos else data, decode=False)

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        return self._feed(data, decode=True)

    def _feed(self, data: bytes, *, decode: bool) -> list[FrameEvent]:
        if self.broken is not None:
            return []
        events: list[FrameEvent] = []
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
            if not self._skip and decode:  # reported where it ends, as every message
                events.append(OversizedMessage(self.max_message_size))
        self._buffer += data
        while self.broken is None and self._step(events, decode):
            pass
        return events

    def _fail(self, reason: str, events: list[FrameEvent]) -> bool:
        self.broken = reason
        self._buffer.clear()
        events.append(BrokenStream(reason))
        return False

    def _step(self, events: list[FrameEvent], decode: bool) -> bool:
        """Consume one item from the buffer; False when more bytes are needed. Unless
        ``decode``, strings are kept raw and no message event is made."""
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
            resets = _RESETS.match(buf)
            assert resets is not None
            del buf[: resets.end()]  # a run of resets in one step, not one a byte
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
            kept = self._handles.get(index)
            if decode:
                events.append(self._text_of(kept))
            return True
        if code in (TC_STRING, TC_LONGSTRING):
            head = 3 if code == TC_STRING else 9
            if len(buf) < head:
                return False
            fmt = ">H" if code == TC_STRING else ">Q"
            (length,) = struct.unpack_from(fmt, buf, 1)
            if length > self.max_message_size:
                del buf[:head]
                self._handles.append(None)  # the string still took a handle
                dropped = min(length, len(buf))
                del buf[:dropped]
                self._skip = length - dropped
                if not self._skip and decode:
                    events.append(OversizedMessage(self.max_message_size))
                return bool(buf)
            if len(buf) < head + length:
                return False
            raw = bytes(buf[head : head + length])
            del buf[: head + length]
            self._handles.append(raw)
            if decode:
                events.append(self._text_of(raw))
            return True
        return self._fail(f"unexpected type code {code:#04x}", events)

    def _text_of(self, kept: bytes | Forgotten | None) -> FrameEvent:
        """The message a string (or a back-reference to one) is: its text, or why not."""
        if kept is None:
            return OversizedMessage(self.max_message_size)
        if isinstance(kept, Forgotten):
            return UndecodableMessage("a back-reference to a string no longer kept")
        try:
            return Text(decode_modified_utf8(kept))
        except UnicodeDecodeError as exc:
            return UndecodableMessage(f"not modified UTF-8 at byte {exc.start}")


class Forgotten:
    """What :meth:`Handles.get` gives for a string the bounds made it forget."""

    __slots__ = ()


_FORGOTTEN = Forgotten()


class Handles:
    """The strings of an object stream since its last reset, by handle (0 for 0x7E0000),
    each as its raw modified UTF-8 (None for an oversized one, never kept).

    Java's writer numbers every string it writes; the reader must number them alike to
    resolve back-references, but keeps only the ``max_count`` most recently used within
    ``max_bytes`` (a reference makes a string recent again): the numbering stays exact,
    the memory bounded, however long a client writes without a reset.
    """

    __slots__ = ("_kept", "_next", "bytes", "max_bytes", "max_count")

    def __init__(self, max_count: int = HANDLES_KEPT, max_bytes: int = HANDLE_BYTES_KEPT) -> None:
        if max_count < 1 or max_bytes < 0:
            raise ValueError("keep at least one handle, and no negative byte count")
        self.max_count = max_count
        self.max_bytes = max_bytes
        self._kept: OrderedDict[int, bytes | None] = OrderedDict()
        self._next = 0
        self.bytes = 0  # bytes of the strings kept

    def __len__(self) -> int:
        """Handles given out since the last reset (kept or forgotten)."""
        return self._next

    @property
    def kept(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        """TC_RESET: numbering starts again."""
        self._kept.clear()
        self._next = 0
        self.bytes = 0

    def append(self, raw: bytes | None) -> None:
        """The next string took the next handle."""
        kept = self._kept
        kept[self._next] = raw
        self._next += 1
        if raw is not None:
            self.bytes += len(raw)
            while self.bytes > self.max_bytes and kept:
                self._forget()
        while len(kept) > self.max_count:
            self._forget()

    def get(self, index: int) -> bytes | Forgotten | None:
        """The string of handle ``index`` (``0 <= index < len(self)``), now most recent."""
        if index not in self._kept:
            return _FORGOTTEN
        self._kept.move_to_end(index)
        return self._kept[index]

    def _forget(self) -> None:
        _, raw = self._kept.popitem(last=False)
        if raw is not None:
            self.bytes -= len(raw)


def _item_size(head: bytes, header_seen: bool) -> tuple[int, bool] | None:
    """The length of the object-stream item that starts with ``head`` (its first bytes,
    up to nine) and whether it is a message; None when ``head`` is too short to say or
    is no item of a strings-only stream."""
    if not header_seen:
        if len(head) < len(STREAM_HEADER) or head[:4] != STREAM_HEADER:
            return None
        return len(STREAM_HEADER), False
    code = head[0]
    if code == TC_RESET:
        return 1, False
    if code == TC_REFERENCE:
        return 5, True
    if code == TC_STRING:
        return (3 + struct.unpack_from(">H", head, 1)[0], True) if len(head) >= 3 else None
    if code == TC_LONGSTRING:
        return (9 + struct.unpack_from(">Q", head, 1)[0], True) if len(head) >= 9 else None
    return None


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

    @property
    def broken(self) -> str | None:
        """Why the object stream cannot be read any further, or None."""
        return self._inner.broken if isinstance(self._inner, ObjectStreamDecoder) else None

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """As the decoder the first byte chooses (see :class:`LineDecoder`,
        :class:`ObjectStreamDecoder`); nothing is chosen or changed here."""
        inner = self._inner if self._inner is not None else self._choose(data)
        return [] if inner is None else inner.message_ends(data, limit)

    def skip_messages(self, data: bytes) -> None:
        if self._inner is None:
            self._inner = self._choose(data)
        if self._inner is not None:
            self._inner.skip_messages(data)

    def receive_data(self, data: bytes) -> list[FrameEvent]:
        if self._inner is None:
            self._inner = self._choose(data)
            if self._inner is None:
                return []
        return self._inner.receive_data(data)

    def _choose(self, data: bytes) -> LineDecoder | ObjectStreamDecoder | None:
        if not data:
            return None
        if data[0] == STREAM_HEADER[0]:
            return ObjectStreamDecoder(self.max_message_size)
        return LineDecoder(self.max_message_size)


Decoder = LineDecoder | ObjectStreamDecoder | AutoDecoder

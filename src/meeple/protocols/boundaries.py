"""Where a peer's messages end, found before any of them is decoded (issue 22, issue 30.2).

Every framer of a byte-stream protocol has the two methods of :class:`MessageBoundaries`,
so that the server can count a read's messages against the connection's message budget
and hand the session only as many as it may read, whatever the framing:

- :meth:`~MessageBoundaries.message_ends` says, from where the framer stands now, at
  which offsets of ``data`` its first ``limit`` messages end (just past each), without
  decoding them or changing the framer;
- :meth:`~MessageBoundaries.skip_messages` takes bytes that hold whole messages only
  (from a boundary to a boundary) which the caller refuses unread; the framer steps over
  them without decoding, keeping whatever the framing needs to stay in step (an AM27
  object stream's string handles).

Delimited framings (Twente ``0x1E``, Clarkson ``\\n``/NUL, Spectrangle and AM27 lines
``\\n``) find their ends with :func:`delimited_ends`; an AM27 Java object stream has no
delimiter and walks its items' lengths
(:meth:`~meeple.protocols.santorini.framing.ObjectStreamDecoder.message_ends`).

Every end counts, an empty message's too: a blank line is charged like any other, so a
peer cannot make a framer loop for free. Clarkson's is the exception: its framer takes
a run of LF/NUL (§2's NUL padding) in one match of the regular-expression engine, so
only an end after something else counts there. The count of a stream's messages never
depends on how the stream is cut into reads.
"""

from __future__ import annotations

import itertools
import re
from typing import Protocol

__all__ = ["MessageBoundaries", "delimited_ends"]


class MessageBoundaries(Protocol):
    """A framer (or a session over one) that finds its messages' ends unread."""

    def message_ends(self, data: bytes, limit: int) -> list[int]:
        """Offsets in ``data`` just past each of the first ``limit`` messages that end in
        it, read from where the framer stands; nothing decoded, nothing changed."""
        ...

    def skip_messages(self, data: bytes) -> None:
        """Step over ``data``, whole messages from a boundary to a boundary, unread."""
        ...


def delimited_ends(data: bytes, delimiter: re.Pattern[bytes], limit: int) -> list[int]:
    """The offsets just past each of the first ``limit`` matches of ``delimiter`` (one
    message end each) in ``data``: found by the regular expression engine's C loop."""
    if limit < 1:
        return []
    return [m.end() for m in itertools.islice(delimiter.finditer(data), limit)]

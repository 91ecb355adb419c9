"""Helpers for the deliberately quirky servers the client tests run meeple's bots against.

Each test file writes a small server that behaves as another team's server did (issue
22); these helpers write its bytes in pieces, so the client meets one server burst
split across several reads or several bursts coalesced in one, as hypothesis picks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from hypothesis import strategies as st
from tests.patience import PATIENCE

__all__ = ["Chunking", "chunkings", "serve", "write_in_pieces"]

# Where to cut a burst (fractions of its length) and whether to pause after each piece
# (a pause puts the next piece into a later read; none lets the kernel coalesce them).
Chunking = Sequence[tuple[float, bool]]


def chunkings(max_cuts: int = 6) -> st.SearchStrategy[Chunking]:
    """Cut points in [0, 1) with a pause flag each; the empty list writes a burst whole."""
    return st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.booleans()), max_size=max_cuts)


async def write_in_pieces(
    writer: asyncio.StreamWriter, data: bytes, chunking: Chunking = ()
) -> None:
    """Write ``data`` cut as ``chunking`` says, pausing 10 ms where it says so."""
    cuts = sorted((int(f * len(data)), pause) for f, pause in chunking)
    start = 0
    for at, pause in cuts:
        if at > start:
            writer.write(data[start:at])
            await writer.drain()
            start = at
        if pause:
            await asyncio.sleep(0.01)
    writer.write(data[start:])
    await writer.drain()


async def _until_eof(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


@contextlib.asynccontextmanager
async def serve(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1:0 running ``handle`` per connection; yields its port.

    A connection the client drops mid-script ends quietly; the handler's own errors
    (a failed assertion in the script) are re-raised when the context exits.
    """
    failures: list[BaseException] = []

    async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handle(reader, writer)
            # Half-close, and read until the client closes too: closing with its unread
            # bytes (pings) in our buffer would reset the connection, and a reset may
            # drop our last messages before the client reads them.
            writer.write_eof()
            await asyncio.wait_for(_until_eof(reader), PATIENCE)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except Exception as exc:  # reported to the test below
            failures.append(exc)
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(guarded, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()
    if failures:
        raise failures[0]

"""Deliberately broken servers: meeple's server behind a relay that rewrites its traffic.

Each :class:`Mangler` relays every connection to a real meeple listener and applies one
deviation: a message rewritten or dropped on its way to the client (``to_client``), or
the client's bytes cut differently on their way in (``to_server``, per chunk). Each
deviation is one that a real implementation of the spec had (issue 23) or that breaks
one MUST rule; the tests prove the kit's check for that rule fails.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["Mangler", "Relay"]

# Given a writer to the server, a connection's (to_client, to_server) rewrites.
Relay = Callable[
    [Callable[[bytes], None]], tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]
]


def _same(data: bytes) -> bytes:
    return data


class Mangler:
    """A relay to ``127.0.0.1:upstream`` with a deviation; ``port`` once started."""

    def __init__(
        self,
        upstream: int,
        terminator: bytes,
        *,
        cut: Callable[[bytes], tuple[list[bytes], bytes]] | None = None,
        to_client: Callable[[bytes], bytes] | None = None,  # None: passed unchanged
        to_server: Callable[[bytes], bytes] | None = None,
        keep_open: bool = False,
        keepalive: bytes = b"",
        per_connection: Callable[[], Callable[[bytes], bytes]] | None = None,
        relay: Relay | None = None,
        close_after: int = 0,
    ) -> None:
        self.upstream = upstream
        self.terminator = terminator
        self.to_client = to_client or _same
        # A rewrite with a state of its own per connection (made for each one): replaces
        # ``to_client`` where a deviation depends on what came before on that connection.
        self.per_connection = per_connection
        # A deviation with state per connection both ways, which may also write to the
        # server on the client's behalf: given that writer, (to_client, to_server).
        self.relay = relay
        self.close_after = close_after  # close each connection after that many messages
        self.to_server = to_server or _same
        self.keep_open = keep_open
        self.keepalive = keepalive  # written upstream every 0.2 s: the client never "falls silent"
        self.cut = cut or self._by_terminator
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Mangler:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()

    def _by_terminator(self, buffer: bytes) -> tuple[list[bytes], bytes]:
        *messages, rest = buffer.split(self.terminator)
        return [m + self.terminator for m in messages], rest

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        to_client = self.per_connection() if self.per_connection else self.to_client
        to_server = self.to_server
        if self.relay is not None:
            to_client, to_server = self.relay(up_writer.write)

        async def inbound() -> None:
            while chunk := await reader.read(65536):
                up_writer.write(to_server(chunk))
                await up_writer.drain()

        async def outbound() -> None:
            buffer = b""
            left = self.close_after
            while chunk := await up_reader.read(65536):
                buffer += chunk
                messages, buffer = self.cut(buffer)
                if self.close_after:
                    messages = messages[:left]
                    left -= len(messages)
                out = b"".join(to_client(m) for m in messages)
                if out:
                    writer.write(out)
                    await writer.drain()
                if self.close_after and left <= 0:
                    return
            if self.keep_open:
                await asyncio.sleep(30)

        async def keepalive() -> None:
            while self.keepalive:
                up_writer.write(self.keepalive)
                await asyncio.sleep(0.2)
            await asyncio.Event().wait()

        parts = [
            asyncio.create_task(inbound()),
            asyncio.create_task(outbound()),
            asyncio.create_task(keepalive()),
        ]
        try:
            await asyncio.wait(parts, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass
        finally:
            for part in parts:
                part.cancel()
            for w in (writer, up_writer):
                with contextlib.suppress(Exception):
                    w.close()
            self._tasks.discard(task)  # type: ignore[arg-type]


def whole_messages_only(terminator: bytes) -> Callable[[bytes], bytes]:
    """A server that reads one message per read: a chunk without a whole message is lost."""

    def cut(chunk: bytes) -> bytes:
        return chunk if chunk.endswith(terminator) else b""

    return cut


def first_message_only(terminator: bytes) -> Callable[[bytes], bytes]:
    """A server that handles the first message of each read and drops the rest."""

    def cut(chunk: bytes) -> bytes:
        end = chunk.find(terminator)
        return chunk if end < 0 else chunk[: end + len(terminator)]

    return cut


def am27_text(rewrite: Callable[[str], str | None]) -> Callable[[bytes], bytes]:
    """Rewrite each message's JSON text (None drops it); the length prefix made right."""

    def unit(data: bytes) -> bytes:
        if not data.startswith(b"yt"):
            return data
        text = rewrite(data[4:].decode("utf-8"))
        if text is None:
            return b""
        raw = text.encode("utf-8")
        return b"yt" + len(raw).to_bytes(2, "big") + raw

    return unit


def ws_first_frame_only(chunk: bytes) -> bytes:
    """A WebSocket server that handles the first frame of each read and drops the rest."""
    from meeple.check.cmpn402 import ws_frame_parts, ws_units

    units, _ = ws_units(chunk)
    frames = [u for u in units if ws_frame_parts(u) is not None]
    if len(frames) < 2:
        return chunk
    return b"".join(u for u in units if ws_frame_parts(u) is None) + frames[0]


def ws_whole_frames_only(chunk: bytes) -> bytes:
    """A WebSocket server that reads whole frames per read: a split one is lost."""
    from meeple.check.cmpn402 import ws_units

    _, rest = ws_units(chunk)
    return b"" if rest else chunk


def assert_fail(results: list[Any], prefix: str, ids: list[str]) -> None:
    """Each check ``prefix + id`` of ``ids`` failed, with the bytes of the failure."""
    by_id = {r.check.id.removeprefix(prefix): r for r in results}
    for i in ids:
        assert by_id[i].status.value == "fail", (i, by_id[i].status, by_id[i].detail)
        assert by_id[i].transcript, f"{i}: a failure carries the bytes"

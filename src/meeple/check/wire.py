"""A recorded TCP connection to the target, cut into messages by a protocol's terminator.

:class:`Peer` is how a check talks to a server under test: it sends bytes (whole, byte
by byte, or several messages in one write) and reads whole messages, each read bounded
by a timeout. Everything sent and received goes to the check's recorder, so a failure
shows the bytes. The kit cuts messages itself (strictly, at the spec's terminator) and
then decodes them with meeple's protocol modules; it never trusts the target's bytes to
be well-formed, and never keeps more than :data:`MAX_BUFFER` of an unfinished message.
"""

from __future__ import annotations

import asyncio
import contextlib

from meeple.check.core import CannotTest, CheckFailed, Context, Recorder

__all__ = ["MAX_BUFFER", "Peer", "names"]

# More than any legal message of the five specs; past it the target's message "never ends".
MAX_BUFFER = 256 * 1024
READ_SIZE = 65536


class Peer:
    """One connection to the target. Make it with :meth:`open`; closed with the check."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        recorder: Recorder,
        terminator: bytes,
        wait: float,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.recorder = recorder
        self.terminator = terminator
        self.wait = wait
        self.buffer = bytearray()
        self.eof = False

    @classmethod
    async def open(cls, ctx: Context, label: str, terminator: bytes) -> Peer:
        host, port = ctx.target.host, ctx.target.port
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), ctx.wait)
        except TimeoutError:
            raise CannotTest(f"no connection to {host}:{port} within {ctx.wait:g} s") from None
        peer = cls(reader, writer, ctx.recorder(label), terminator, ctx.wait)
        ctx.cleanups.append(peer.close)
        return peer

    @property
    def label(self) -> str:
        return self.recorder.label

    async def send(self, data: bytes, *, bytewise: bool = False) -> None:
        """Write ``data`` in one write, or (``bytewise``) one byte per write, each drained."""
        self.recorder.sent += data
        try:
            if not bytewise:
                self._writer.write(data)
                await asyncio.wait_for(self._writer.drain(), self.wait)
                return
            for i in range(len(data)):
                self._writer.write(data[i : i + 1])
                await asyncio.wait_for(self._writer.drain(), self.wait)
                await asyncio.sleep(0)
        except (OSError, TimeoutError) as e:
            raise CheckFailed(f"{self.label}: could not send ({e!r})") from None

    async def fill(self, timeout: float) -> bool:
        """Read once into the buffer; False at the end of the stream."""
        if self.eof:
            return False
        try:
            chunk = await asyncio.wait_for(self._reader.read(READ_SIZE), timeout)
        except TimeoutError:
            raise  # (a subclass of OSError: not the end of the stream)
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            return False
        self.recorder.received += chunk
        self.buffer += chunk
        if self.terminator and len(self.buffer) > MAX_BUFFER and self.terminator not in self.buffer:
            raise CheckFailed(f"{self.label}: {len(self.buffer)} bytes with no message end")
        return True

    async def message(self, timeout: float | None = None, what: str = "a message") -> bytes:
        """The next whole message, terminator included; CheckFailed on timeout or close."""
        limit = self.wait if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while True:
            end = self.buffer.find(self.terminator)
            if end >= 0:
                end += len(self.terminator)
                data = bytes(self.buffer[:end])
                del self.buffer[:end]
                return data
            left = deadline - loop.time()
            if left <= 0:
                raise CheckFailed(f"{self.label}: no {what} within {limit:g} s")
            try:
                if not await self.fill(left):
                    raise CheckFailed(f"{self.label}: connection closed while waiting for {what}")
            except TimeoutError:
                raise CheckFailed(f"{self.label}: no {what} within {limit:g} s") from None

    async def closed(self, timeout: float | None = None) -> bool:
        """Whether the target closes the connection within ``timeout`` (reading what comes)."""
        limit = self.wait if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while not self.eof:
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                await self.fill(left)
            except TimeoutError:
                return False
            if len(self.buffer) > MAX_BUFFER:
                del self.buffer[:]
        return True

    async def quiet(self, timeout: float) -> bool:
        """True if no whole message arrives within ``timeout`` seconds."""
        try:
            await self.message(timeout)
        except CheckFailed:
            return True
        return False

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)


def names(ctx: Context, *tags: str) -> list[str]:
    """Player names for a check: the run's random prefix (``--only`` runs never clash)
    and a tag per player."""
    prefix: str = ctx.target.options.get("prefix", "ck")
    return [f"{prefix}{t}" for t in tags]

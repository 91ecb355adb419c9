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
from typing import Any, ClassVar, Self

from meeple.check.core import CannotTest, CheckFailed, Context, Recorder

__all__ = ["MAX_BUFFER", "LinePeer", "Peer", "kit_lexicon", "names"]

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


def kit_lexicon(ctx: Context) -> Any:
    """The word list the kit's moves and unknown words come from (``--lexicon``)."""
    lexicon = ctx.target.options.get("lexicon")
    if lexicon is None:
        raise CannotTest("no lexicon")
    return lexicon


class LinePeer:
    """A connection of a text protocol whose messages are lines: the peer layer the line
    kits share (Clarkson, Spectrangle). A subclass sets how lines end on the wire, the
    encoding, and (``skip``) lines to step over while waiting for another."""

    terminator: ClassVar[bytes] = b"\n"  # where the kit cuts the target's messages
    line_end: ClassVar[bytes] = b"\n"  # what the kit puts after each of its lines
    encoding: ClassVar[str] = "utf-8"
    skip: ClassVar[tuple[str, ...]] = ()

    def __init__(self, peer: Peer, name: str = "") -> None:
        self.peer = peer
        self.name = name

    @classmethod
    async def open(cls, ctx: Context, label: str) -> Self:
        return cls(await Peer.open(ctx, label, cls.terminator), label)

    async def send(self, line: str, *, bytewise: bool = False) -> None:
        await self.peer.send(line.encode(self.encoding) + self.line_end, bytewise=bytewise)

    async def line(self, timeout: float | None = None, what: str = "a line") -> str:
        data = await self.peer.message(timeout, what)
        try:
            return data.decode(self.encoding).rstrip("\r\n")
        except UnicodeDecodeError:
            raise CheckFailed(
                f"{self.peer.label}: a line is not {self.encoding}: {data[:40]!r}"
            ) from None

    async def skipped(self, line: str) -> None:
        """Called for a line stepped over by :meth:`expect` (to read what follows it)."""

    def matches(self, line: str, start: str) -> bool:
        return line.startswith(start)

    async def expect(
        self, start: str, *, skip: tuple[str, ...] | None = None, timeout: float | None = None
    ) -> str:
        """The next line past those starting with a ``skip`` prefix; it must match ``start``."""
        skip = self.skip if skip is None else skip
        while True:
            line = await self.line(timeout, start)
            if skip and line.startswith(skip) and not start.startswith(skip):
                await self.skipped(line)
                continue
            if not self.matches(line, start):
                raise CheckFailed(f"{self.peer.label}: expected {start!r}…, got {line!r}")
            return line

    async def error(self, ctx: Context, words: tuple[str, ...], why: str) -> str:
        """The next line must be one of ``words`` (an error reply)."""
        line = await self.line(ctx.wait, " or ".join(words))
        ctx.expect(line in words, f"{why}: expected {' or '.join(words)}, got {line!r}")
        return line

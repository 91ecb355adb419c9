"""A recorded TCP connection to the target, cut into messages by a protocol's terminator.

:class:`Peer` is how a check talks to a server under test: it sends bytes (whole, byte
by byte, or several messages in one write) and reads whole messages, each read bounded
by a timeout. Everything sent and received goes to the check's recorder, so a failure
shows the bytes. The kit cuts messages itself (strictly, at the spec's terminator) and
then decodes them with meeple's protocol modules; it never trusts the target's bytes to
be well-formed, and never keeps more than :data:`MAX_BUFFER` of an unfinished message.

When a wait fails, :func:`diagnose` names the transport fault the bytes show (UTF-16 or
Latin-1 text, a line end where the spec has RS, NUL padding, ...) so the report can say
what to change; a server that answers nothing is probed once with a line end (a server
that reads lines answers then: "answers only after a line end").
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, ClassVar, Self

from meeple.check.core import CannotTest, CheckFailed, Context, Fault, Recorder

__all__ = [
    "MAX_BUFFER",
    "LinePeer",
    "Peer",
    "diagnose",
    "joined_or_split",
    "kit_lexicon",
    "missing",
    "names",
]

# More than any legal message of the five specs; past it the target's message "never ends".
MAX_BUFFER = 256 * 1024
READ_SIZE = 65536
# How much of the received bytes :func:`diagnose` looks at.
DIAGNOSE_LIMIT = 8192

_BOMS = ((b"\xff\xfe", "little-endian"), (b"\xfe\xff", "big-endian"))


def _show(data: bytes, limit: int = 48) -> str:
    return repr(data[:limit]) + ("..." if len(data) > limit else "")


def diagnose(
    data: bytes,
    terminator: bytes,
    section: str = "",
    tolerates: frozenset[str] = frozenset(),
    line_end: bytes = b"",
) -> Fault | None:
    """The transport fault ``data`` (bytes received) shows, or None: an encoding other
    than UTF-8/ASCII, NUL padding, a line end where the spec has ``terminator`` or
    around it (a bare LF only where the spec's ``line_end`` is CRLF). Pure and total:
    any bytes in, never raises. ``section`` is the spec's framing section (the
    fault's); a fault named in ``tolerates`` is one the ERRATA tolerates."""
    sample = bytes(data[:DIAGNOSE_LIMIT])
    if not sample:
        return None
    sections = (section,) if section else ()

    def fault(name: str, advice: str, evidence: bytes) -> Fault:
        ok = name in tolerates
        return Fault(name, advice, () if ok else sections, ok, evidence[:64])

    def fault_at(name: str, advice: str, found: bytes) -> Fault:
        """The fault, shown by the first ``found`` in the sample and the 24 bytes before."""
        at = sample.find(found)
        return fault(name, advice, sample[max(0, at - 24) : at + len(found)])

    utf8 = "encode every message as UTF-8 (Java: an OutputStreamWriter with UTF_8)"
    for bom, order in _BOMS:
        at = sample.find(bom)
        if at >= 0 and b"\x00" in sample[at + 2 : at + 8]:
            return fault(f"UTF-16 text ({order}, with a BOM)", utf8, sample[at : at + 24])
    head = sample[:256]
    if len(head) >= 8:
        even = sum(1 for b in head[0::2] if b == 0)
        odd = sum(1 for b in head[1::2] if b == 0)
        half = len(head) // 2
        if odd >= 0.4 * half and even <= 0.1 * half:
            return fault("UTF-16 text (little-endian, no BOM)", utf8, head[:24])
        if even >= 0.4 * half and odd <= 0.1 * half:
            return fault("UTF-16 text (big-endian, no BOM)", utf8, head[:24])
    run = sample.find(b"\x00\x00")
    if run >= 0:
        # Show where the padding ends (the next line's start) or, if it never does, begins.
        rest = sample[run:].lstrip(b"\x00")
        end = len(sample) - len(rest)
        n = end - run
        shown = sample[max(run, end - 8) : end + 24] if rest else sample[max(0, run - 24) : run + 8]
        return fault(
            "NUL padding",
            f"send only the message's bytes, not a whole fixed-size buffer ({n} NUL bytes)",
            shown,
        )
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(sample) - 4:  # not a character cut by the sample's end
            return fault(
                "Latin-1 text (not UTF-8)",
                utf8 + " (Java: not ISO-8859-1 or the platform default)",
                sample[max(0, e.start - 16) : e.start + 8],
            )
    if terminator == b"\x1e":
        if b"\x1e" not in sample and b"\n" in sample:
            return fault_at(
                "a line end instead of RS",
                "end each message with RS (0x1E), not a line end (Java: not println)",
                b"\n",
            )
        for after in (b"\x1e\r\n", b"\x1e\n"):
            if after in sample:
                return fault_at(
                    "a line end after RS",
                    "end each message with RS alone: nothing between messages"
                    " (Java: print, not println)",
                    after,
                )
    if terminator == b"\n":
        if b"\n" not in sample and b"\r" in sample:
            return fault_at("CR alone as the line end", "end each line with CRLF (\\r\\n)", b"\r")
        lf = sample.replace(b"\r\n", b"").find(b"\n")
        if line_end == b"\r\n" and lf >= 0 and b"\r\n" not in sample:
            return fault_at(
                "a bare LF as the line end",
                "end each line with CRLF (\\r\\n), as the grammar says",
                b"\n",
            )
    return None


def joined_or_split(word: str, got: str, section: str) -> Fault | None:
    """A message that holds the expected ``word`` after its start (two messages joined,
    no delimiter between) or that is a strict prefix of it (one message split)."""
    first = got.split("\x1f", 1)[0].split(" ", 1)[0]
    sections = (section,) if section else ()
    if word and first != word and len(first) >= 2 and word.startswith(first):
        return Fault(
            "a message split in two",
            f"write each message whole: {got!r} is the start of {word}",
            sections,
            evidence=got.encode("utf-8", "replace")[:64],
        )
    # The word whole, after the start: followed by a field separator or the end.
    at = got.find(word, 1) if len(word) >= 4 else -1
    end = at + len(word)
    if at > 0 and (end == len(got) or got[end] in "\x1f "):
        return Fault(
            "two messages joined",
            f"end each message with its delimiter: {word} came inside {got[:at]!r}...",
            sections,
            evidence=got.encode("utf-8", "replace")[:64],
        )
    return None


def missing(what: str) -> str:
    """What did not come, in words: "no WELCOME", "no reply" (for "a reply"), "the move's
    lines did not come" (for "the move's lines"), never "no a reply"."""
    for article in ("a ", "an "):
        if what.startswith(article):
            return "no " + what.removeprefix(article)
    if what.startswith("the "):
        return f"{what} did not come"
    return f"no {what}"


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
        # What the kit knows of the spec's framing, for :meth:`diagnose`: its section,
        # the faults the ERRATA tolerates, and whether to probe a silent server with a
        # line end (a spec whose terminator is not one).
        self.section = ""
        self.tolerates: frozenset[str] = frozenset()
        self.probe_line_end = False
        self.line_end = b""  # the spec's line end, if its messages are lines
        self.messages = 0  # whole messages read

    def diagnose(self, data: bytes | None = None) -> Fault | None:
        """The transport fault ``data`` (default: all bytes received) shows, if any."""
        raw = bytes(self.recorder.received) if data is None else data
        return diagnose(raw, self.terminator, self.section, self.tolerates, self.line_end)

    def not_text(self, data: bytes, what: str, shown: bytes | None = None) -> CheckFailed:
        """The failure of a message ``data`` that does not decode: ``what`` it is not
        ("message is not UTF-8 text") and its start (of ``shown``: the message without
        its delimiter), with the transport fault its bytes (or all bytes received) show."""
        fault = self.diagnose(data) or self.diagnose()
        start = (data if shown is None else shown)[:40]
        return CheckFailed(
            f"{self.label}: {what}: {start!r}" + (f" ({fault.name})" if fault else ""),
            got=data,
            fault=fault,
        )

    def untolerated(self) -> Fault | None:
        """:meth:`diagnose` of all bytes received, unless the ERRATA tolerates it (a
        tolerated quirk explains no missing answer)."""
        fault = self.diagnose()
        return None if fault is None or fault.tolerated else fault

    async def _line_end_probe(self, limit: float) -> Fault | None:
        """A server that said nothing to a message without a line end: send one; an
        answer now means it reads lines (not the spec's terminator)."""
        sent = bytes(self.recorder.sent)
        if not self.probe_line_end or self.recorder.received or not sent or sent.endswith(b"\n"):
            return None
        try:
            await self.send(b"\n")
            got = await self.fill(min(limit, 1.0))
        except (CheckFailed, TimeoutError):
            return None
        if not got:
            return None
        return Fault(
            "answers only after a line end",
            f"read each message up to {self.terminator!r}, not by lines"
            " (Java: not BufferedReader.readLine)",
            (self.section,) if self.section else (),
            evidence=sent[-48:],
            nudged=True,
        )

    def _closes_after_each(self) -> Fault | None:
        received = self.recorder.received.count(self.terminator)
        if self.eof and received == 1 and self.recorder.sent.count(self.terminator) >= 2:
            return self.closes_fault()
        return None

    def closes_fault(self) -> Fault:
        """The fault of a server that closed this connection after one answer."""
        return Fault(
            "closes the connection after each message",
            "keep the connection open for the whole session",
            (self.section,) if self.section else (),
            evidence=bytes(self.recorder.received[-48:]),
        )

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
                self.messages += 1
                return data
            left = deadline - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError
                if not await self.fill(left):
                    fault = self._closes_after_each() or self.untolerated()
                    raise CheckFailed(
                        f"{self.label}: connection closed while waiting for {what}"
                        + (f" ({fault.name})" if fault else ""),
                        got=bytes(self.buffer),
                        fault=fault,
                    )
            except TimeoutError:
                fault = self.untolerated() or await self._line_end_probe(limit)
                raise CheckFailed(
                    f"{self.label}: {missing(what)} within {limit:g} s"
                    + (f" ({fault.name})" if fault else ""),
                    got=bytes(self.buffer),
                    fault=fault,
                ) from None

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
    section: ClassVar[str] = ""  # the spec's section on lines and their ends
    # Quirks the ERRATA tolerates (names of :func:`diagnose`'s faults): read past and
    # reported "tolerated" (NUL padding is stripped around lines only if named here).
    tolerates: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, peer: Peer, name: str = "", ctx: Context | None = None) -> None:
        self.peer = peer
        self.name = name
        self.ctx = ctx
        peer.section = self.section
        peer.tolerates = self.tolerates
        peer.line_end = self.line_end

    @classmethod
    async def open(cls, ctx: Context, label: str) -> Self:
        return cls(await Peer.open(ctx, label, cls.terminator), label, ctx)

    def _tolerate(self, data: bytes) -> None:
        fault = self.peer.diagnose(data)
        if fault is not None and fault.tolerated and self.ctx is not None:
            self.ctx.tolerate(fault)

    async def send(self, line: str, *, bytewise: bool = False) -> None:
        await self.peer.send(line.encode(self.encoding) + self.line_end, bytewise=bytewise)

    async def line(self, timeout: float | None = None, what: str = "a line") -> str:
        data = await self.peer.message(timeout, what)
        if "NUL padding" in self.tolerates and b"\x00" in data:
            self._tolerate(data)
            data = data.strip(b"\x00")
        if self.tolerates and not data.endswith(b"\r\n"):
            self._tolerate(data)
        try:
            return data.decode(self.encoding).rstrip("\r\n")
        except UnicodeDecodeError:
            raise self.peer.not_text(data, f"a line is not {self.encoding}") from None

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
                got = line.encode(self.encoding, "replace")
                fault = self.peer.diagnose(got) or joined_or_split(start, line, self.section)
                raise CheckFailed(
                    f"{self.peer.label}: expected {start!r}…, got {line!r}"
                    + (f" ({fault.name})" if fault else ""),
                    got=got,
                    fault=fault,
                )
            return line

    async def error(self, ctx: Context, words: tuple[str, ...], why: str) -> str:
        """The next line must be one of ``words`` (an error reply)."""
        line = await self.line(ctx.wait, " or ".join(words))
        if line not in words:
            ctx.decided += 1
            raise CheckFailed(
                f"{why}: expected {' or '.join(words)}, got {line!r}",
                got=line.encode(self.encoding, "replace"),
            )
        ctx.passed()
        return line

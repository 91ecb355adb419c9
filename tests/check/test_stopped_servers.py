"""Issue 31.8: a target that stops accepting connections, or stops answering, part-way
through a run is said once, as the report's first cause, naming the check it happened
in; every check after it could not test (none FAILs on it). The fixtures are meeple's
servers behind a relay that, from its ``after``-th connection on, either dies (closes
its listener and every connection: a crashed server) or hangs (accepts connections
and reads them, but sends nothing more on any: a server stuck in a loop or a lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.check.broken import Mangler

from meeple.check import run_server_kit
from meeple.check.core import Check, Context, Level, Probe, Result, Status, Target, run_checks
from meeple.check.report import causes, exit_status, to_text
from meeple.check.santorini import object_stream_units
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.config import SantoriniConfig, ServerConfig

TERMINATOR = {"twente": b"\x1e", "clarkson": b"\n", "spectrangle": b"\n", "santorini": b""}
SAID = {
    "dies": "the server stopped accepting connections during check ",
    "hangs": "the server stopped answering during check ",
}


class Stops(Mangler):
    """meeple's server until its ``after``-th connection; then it dies or hangs (``how``)."""

    def __init__(self, upstream: int, protocol: str, *, after: int, how: str) -> None:
        cut = object_stream_units if protocol == "santorini" else None
        super().__init__(upstream, TERMINATOR[protocol], cut=cut, to_client=self._out)
        self.after = after
        self.how = how
        self.connections = 0
        self.stopped = False

    def _out(self, data: bytes) -> bytes:
        return b"" if self.stopped else data

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.connections >= self.after and not self.stopped:
            self.stopped = True
            if self.how == "dies":
                assert self._server is not None
                self._server.close()  # no more connections accepted
                for task in list(self._tasks):
                    task.cancel()  # the open ones closed
        if self.stopped:
            if self.how == "hangs":  # read on, answer nothing, never close
                with contextlib.suppress(Exception):
                    while await reader.read(65536):
                        pass
            writer.close()
            return
        await super()._handle(reader, writer)


@pytest.fixture
async def am27(tmp_path: Path) -> AsyncIterator[MeepleServer]:
    config = ServerConfig(database=str(tmp_path / "am27.sqlite3")).only("santorini")
    config = replace(config, santorini=SantoriniConfig(heartbeat_timeout=1.0))
    srv = MeepleServer(config, rng=random.Random(27))
    await srv.start()
    yield srv
    await srv.stop()


async def _run(protocol: str, port: int, how: str, lexicon: Lexicon) -> list[Result]:
    async with Stops(port, protocol, after=6, how=how) as stops:
        return await run_server_kit(
            protocol,
            "127.0.0.1",
            stops.port,
            lexicon=lexicon,
            wait=0.5,
            options={"heartbeat": 1.0},
        )


def _judge(protocol: str, how: str, results: list[Result]) -> None:
    text = to_text(f"meeple check server {protocol}", results)
    head = text.splitlines()[:3]
    assert head[1] == "Fix these first:", text
    assert SAID[how] in head[2], text
    # No FAIL: the server followed every rule until it stopped, and a stopped server
    # breaks no check's own rule.
    assert not [r for r in results if r.status is Status.FAIL], text
    first = causes(results)[0]
    assert first.blocked == sum(r.status is Status.COULD_NOT_TEST for r in results), text
    during = first.title.removeprefix(SAID[how])
    stopped_at = next(i for i, r in enumerate(results) if r.check.id == during)
    assert all(r.status is Status.COULD_NOT_TEST for r in results[stopped_at:]), text
    assert all(r.status is not Status.COULD_NOT_TEST for r in results[:stopped_at]), text
    assert stopped_at > 0, text  # it did answer before
    assert exit_status(results) == 0  # nothing failed, something passed


@pytest.mark.parametrize("how", ["dies", "hangs"])
@pytest.mark.parametrize("protocol", ["twente", "clarkson", "spectrangle"])
async def test_a_line_server_that_stops_is_said_once(
    protocol: str, how: str, server: MeepleServer, gcide: Lexicon
) -> None:
    """Twente, Clarkson, Spectrangle: the stop named first, the rest could not test."""
    _judge(protocol, how, await _run(protocol, server.ports[protocol], how, gcide))


@pytest.mark.parametrize("how", ["dies", "hangs"])
async def test_an_am27_server_that_stops_is_said_once(
    how: str, am27: MeepleServer, gcide: Lexicon
) -> None:
    """AM27: a crashed server, and one that never sends a new client its SERVERSTATE."""
    _judge("santorini", how, await _run("santorini", am27.ports["santorini"], how, gcide))


async def test_a_server_that_never_answers_is_named_so(gcide: Lexicon) -> None:
    """A server that accepts and never says a word, from the first check on: named as
    such (not "stopped"), every check could not test, nothing passes (exit status 1)."""
    async with Stops(1, "twente", after=1, how="hangs") as mute:
        results = await run_server_kit("twente", "127.0.0.1", mute.port, lexicon=gcide, wait=0.3)
    text = to_text("meeple check server twente", results)
    assert "the server accepts connections but never answers" in text.splitlines()[2], text
    assert all(r.status is Status.COULD_NOT_TEST for r in results), text
    assert exit_status(results) == 1


async def test_nothing_listening_is_named_so(gcide: Lexicon) -> None:
    """No server at the address: one cause, "nothing accepts connections"."""
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    results = await run_server_kit("clarkson", "127.0.0.1", port, lexicon=gcide, wait=0.3)
    text = to_text("meeple check server clarkson", results)
    assert f"nothing accepts connections at 127.0.0.1:{port}" in text.splitlines()[2], text
    assert len(causes(results)) == 1, text


@settings(max_examples=30, deadline=None)
@given(
    answer=st.binary(max_size=64),
    close=st.booleans(),
    greeting=st.binary(max_size=16),
    nudge=st.binary(max_size=8),
)
def test_the_probe_reads_any_bytes_as_alive(
    answer: bytes, close: bool, greeting: bytes, nudge: bytes
) -> None:
    """A target that sends any byte at all answers; one that closes without a word is
    going away ("refused"); one that says nothing and stays is "silent"."""

    async def probe() -> str | None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(answer)
            with contextlib.suppress(Exception):
                await writer.drain()
                if not close:
                    await reader.read()  # until the probe hangs up
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await Probe(greeting, nudge)(Target("127.0.0.1", port), 0.2)
        finally:
            server.close()

    got = asyncio.run(probe())
    if answer:
        assert got is None
    else:
        assert got == ("refused" if close else "silent")


async def test_the_probe_waits_out_a_silence_it_knows_of_once() -> None:
    """Issue 33: against a server that answers only after a line end, the probe after a
    failed check waits out its greeting's silence once; once the nudge was what got an
    answer, every later probe sends it with the greeting, in one write (before, each
    probe waited a whole --wait first, doubling every check's wait)."""
    connections: list[list[bytes]] = []

    async def reads_lines(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writes: list[bytes] = []
        connections.append(writes)
        with contextlib.suppress(Exception):
            while chunk := await reader.read(65536):
                writes.append(chunk)
                if b"\n" in chunk:
                    writer.write(b"WELCOME\x1fckpr\x1e")
                    await writer.drain()
        writer.close()

    async def fails(ctx: Context) -> None:
        ctx.fail("the rule is broken")

    checks = [Check(f"t.server.c{i}", "s", Level.MUST, "a rule", fails) for i in range(4)]
    server = await asyncio.start_server(reads_lines, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        probe = Probe(b"ANNOUNCE\x1fckpr\x1e", b"\n")
        results = await run_checks(checks, Target("127.0.0.1", port), wait=0.2, probe=probe)
    finally:
        server.close()
        await server.wait_closed()
    assert [r.status for r in results] == [Status.FAIL] * 4  # alive: no check blocked
    first, *later = connections
    assert first == [b"ANNOUNCE\x1fckpr\x1e", b"\n"]
    assert later == [[b"ANNOUNCE\x1fckpr\x1e\n"]] * 3

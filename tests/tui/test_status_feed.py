"""tui/connection.py StatusFeed.messages and .relay: the one read loop of every protocol adapter
(Twente, Clarkson, Spectrangle, AM27): what the client says while it waits comes first,
then its message; the end of the connection is one ConnectionLost."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.tui.connection import ServerNotice, StatusFeed
from meeple.tui.table import ConnectionLost


class _Gone(Exception):
    pass


class _Client:
    """Says ``said[i]`` while read ``i`` waits, then answers ``i``; after ``reads`` reads
    the connection is gone."""

    def __init__(self, feed: StatusFeed, said: list[list[str]], reads: int) -> None:
        self._feed, self._said, self._reads, self._n = feed, said, reads, 0
        self.cancelled = 0

    async def receive(self) -> int:
        n = self._n
        self._n += 1
        if n >= self._reads:
            raise _Gone("" if n % 2 else f"gone after {n}")
        for text in self._said[n] if n < len(self._said) else []:
            self._feed.say(text)
            await asyncio.sleep(0)
        return n


@given(
    said=st.lists(st.lists(st.text(max_size=5), max_size=3), max_size=5),
    reads=st.integers(0, 5),
)
async def test_notices_then_messages_then_one_connection_lost(
    said: list[list[str]], reads: int
) -> None:
    feed = StatusFeed()
    client = _Client(feed, said, reads)
    got = [m async for m in feed.messages(client.receive, (_Gone,))]
    expected: list[object] = []
    for n in range(reads):
        expected += [ServerNotice(t) for t in (said[n] if n < len(said) else [])]
        expected.append(n)
    reason = "connection closed" if reads % 2 else f"gone after {reads}"
    assert got == [*expected, ConnectionLost(reason)]


async def test_other_errors_are_not_taken_for_the_end() -> None:
    async def broken() -> int:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        [m async for m in StatusFeed().messages(broken, (_Gone,))]


async def test_closing_early_cancels_the_read_under_way() -> None:
    """An app that stops reading leaves no read behind."""
    never = asyncio.Event()

    async def slow() -> int:
        await never.wait()
        return 1

    feed = StatusFeed()
    got = feed.messages(slow, (_Gone,), lambda e: "custom")
    async with contextlib.aclosing(got):
        feed.say("still waiting")
        assert await anext(got) == ServerNotice("still waiting")
        reads = [t for t in asyncio.all_tasks() if "slow" in repr(t.get_coro())]
        assert len(reads) == 1
        assert not reads[0].done()
    await asyncio.sleep(0)
    assert reads[0].cancelled()


@given(
    said=st.lists(st.lists(st.text(max_size=5), max_size=3), max_size=5),
    reads=st.integers(0, 5),
    last=st.integers(0, 6),
)
async def test_relay_translates_messages_and_ends_at_a_translated_connection_lost(
    said: list[list[str]], reads: int, last: int
) -> None:
    """relay: notices pass as they are, message n becomes [n, -n], and a ConnectionLost
    the translator makes (message ``last``) is the last event: nothing is read after it."""
    feed = StatusFeed()
    client = _Client(feed, said, reads)

    async def translate(n: int) -> list[int | ConnectionLost]:
        return [n, -n, ConnectionLost("said goodbye")] if n == last else [n, -n]

    got = [m async for m in feed.relay(client.receive, (_Gone,), translate)]
    expected: list[object] = []
    for n in range(reads):
        expected += [ServerNotice(t) for t in (said[n] if n < len(said) else [])]
        expected += [n, -n]
        if n == last:
            assert got == [*expected, ConnectionLost("said goodbye")]
            assert client._n == n + 1  # no read after the end
            return
    reason = "connection closed" if reads % 2 else f"gone after {reads}"
    assert got == [*expected, ConnectionLost(reason)]

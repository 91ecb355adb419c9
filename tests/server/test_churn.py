"""Connection churn as counts (issue 30.7, meeple.server.edge.churn)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meeple.server.clock import VirtualClock
from meeple.server.edge.churn import ChurnLog


async def test_counts_come_as_one_line_per_protocol_per_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """1,000 connections in a period: one INFO line per protocol at its end, with the
    counts by reason; each connection at DEBUG; a quiet period logs nothing."""
    clock = VirtualClock(start=100.0)
    churn = ChurnLog(clock, period=60)
    with caplog.at_level(logging.INFO, logger="meeple.server.edge.churn"):
        for i in range(1000):
            churn.opened("twente", f"[twente-{i}]")
            churn.closed("twente", "closed by peer" if i % 10 else "idle timeout")
        churn.refused("web", "unknown host")
        churn.refused("web", "foreign origin")
        assert caplog.records == []
        await clock.advance(60)
        lines = [r.getMessage() for r in caplog.records]
        assert lines == [
            "twente: connections in the last 60 s: 1000 opened, "
            "1000 closed (900 closed by peer, 100 idle timeout)",
            "web: connections in the last 60 s: 2 refused (1 unknown host, 1 foreign origin)",
        ]
        caplog.clear()
        await clock.advance(600)
        assert caplog.records == []
        assert clock.pending == 0  # no timer while there is nothing to say
        churn.opened("web")
        churn.close()  # the server stops: what is counted is said
        assert [r.getMessage() for r in caplog.records] == [
            "web: connections in the last 0 s: 1 opened"
        ]


@given(reasons=st.lists(st.text(max_size=40), max_size=300))
def test_any_reasons_keep_the_table_bounded(reasons: list[str]) -> None:
    """Whatever reasons come, one line per protocol counts them all, in at most 33 kinds."""
    churn = ChurnLog(VirtualClock(), period=60)
    for reason in reasons:
        churn.closed("p", reason)
        churn.refused("p", reason)
    counts = churn._closed.get("p")
    if reasons:
        assert counts is not None
        assert sum(counts.values()) == len(reasons)
        assert len(counts) <= 33
    churn.flush()
    assert churn.lines == (1 if reasons else 0)

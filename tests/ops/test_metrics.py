"""Prometheus metrics (issue 35): counters move as a real game is played over loopback,
every label stays bounded whatever the players send, and the metrics port answers any
request head without harm."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ops.conftest import (
    Raw,
    Samples,
    make_server,
    ops_port,
    play_out,
    scrape,
    two_players,
    value,
)
from tests.patience import PATIENCE

from meeple.server.app import MeepleServer
from meeple.server.metrics import MAX_LABEL_VALUES, METRICS, Metrics, bounded
from meeple.server.ops import Readiness, answer
from meeple.server.store.database import Store, open_store
from meeple.server.store.journal import Journal, journal_samples


async def test_counters_move_as_a_game_is_played(
    server: MeepleServer, known_deal: list[list[str]]
) -> None:
    """Two raw Spectrangle peers play a whole game: connections, games started and
    finished (by end reason), rooms running, commands and their latency, and log writes
    move by what was played; rooms running is back where it was at the end."""
    port = ops_port(server)
    before = await scrape(port)
    peers = await two_players(server)
    try:
        during = await scrape(port)
        assert value(during, "meeple_rooms_running", game="spectrangle") == 1 + value(
            before, "meeple_rooms_running", game="spectrangle"
        )
        assert value(during, "meeple_connections_open", protocol="spectrangle") == 2 + value(
            before, "meeple_connections_open", protocol="spectrangle"
        )
        # The replica's lines, to the last: "game finished leaderboard ...".
        await play_out(dict(zip(("p1", "p2"), peers, strict=True)), known_deal[0])
        after = await _settled(
            port,
            lambda s: (
                _moved(s, before, "meeple_games_finished_total")
                and value(s, "meeple_journal_queue") == 0
            ),  # the finished game stored too
        )

        def moved(name: str, **labels: str) -> float:
            return value(after, name, **labels) - value(before, name, **labels)

        assert moved("meeple_connections_opened_total", protocol="spectrangle") == 2
        assert moved("meeple_games_started_total", game="spectrangle") == 1
        assert moved("meeple_games_finished_total", game="spectrangle", reason="finished") == 1
        assert moved("meeple_rooms_running", game="spectrangle") == 0
        commands = moved("meeple_commands_total", protocol="spectrangle")
        assert commands >= 10  # a whole game's moves
        assert moved("meeple_command_seconds_count", protocol="spectrangle") == commands
        assert moved("meeple_command_seconds_sum", protocol="spectrangle") > 0
        assert moved("meeple_log_writes_total") >= commands  # each move's entry, and more
        assert moved("meeple_log_write_seconds_count") >= 1
        assert value(after, "meeple_store_state", state="ok") >= 1
        assert value(after, "meeple_journal_queue") == 0
        assert value(after, "meeple_event_loop_lag_seconds_count") >= 0
        assert value(after, "process_open_fds") > 0  # the process collector
        for peer in peers:
            peer.close()
        await _settled(
            port,
            lambda s: (
                value(s, "meeple_connections_open", protocol="spectrangle")
                == value(before, "meeple_connections_open", protocol="spectrangle")
            ),
        )
    finally:
        for peer in peers:
            peer.close()


def _moved(samples: Samples, before: Samples, name: str) -> bool:
    return sum(v for (n, _), v in samples.items() if n == name) > sum(
        v for (n, _), v in before.items() if n == name
    )


async def _settled(port: int, done: Callable[[Samples], bool], within: float = 30.0) -> Samples:
    """Scrape until ``done(samples)`` (a count moved by the room's last step), for at most
    ``within`` seconds (a loaded machine's store may take a while)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        samples = await scrape(port)
        if done(samples):
            return samples
        if loop.time() > deadline:
            raise AssertionError(f"the metrics did not move: {sorted(samples.items())}")
        await asyncio.sleep(0.05)


ODD_NAMES = ("Zoë", "a_b", "x" * 15, "EVE", "mallory", "t0", "bob_2")


async def test_no_label_carries_a_player_name(tmp_path: Path) -> None:
    """Players with odd names play, leave and are refused: no label of any metric holds
    a name, and every label's values are the code's own (protocols, games, reasons)."""
    server = make_server(tmp_path)
    await server.start()
    try:
        for first, second in zip(ODD_NAMES[::2], ODD_NAMES[1::2], strict=False):
            peers = await two_players(server, first, second)
            peers[1].close()  # leaves: the game ends with a reason
            await peers[0].until("player")
            peers[0].close()
        bad = await Raw.connect(server, "zed")
        bad.send("connect someone_else")  # refused in the protocol's words
        await bad.next()
        bad.close()
        samples = await scrape(ops_port(server))
    finally:
        await server.stop()
    values = {(k, v) for (_, labels) in samples for k, v in labels}
    for name in (*ODD_NAMES, "zed", "someone_else"):
        assert not any(name.lower() in v.lower() for _, v in values), name
    by_label: dict[str, set[str]] = {}
    for k, v in values:
        by_label.setdefault(k, set()).add(v)
    assert by_label["game"] >= {"spectrangle"}
    assert by_label["game"] <= {"spectrangle", "scrabble", "santorini", "cmpn402"}
    assert by_label["protocol"] <= {
        "spectrangle",
        "twente",
        "clarkson",
        "santorini",
        "cmpn402",
        "web",
        "bot",
        "unknown",
    }
    assert "player-left" in by_label["reason"]
    for label, seen in by_label.items():
        assert len(seen) <= MAX_LABEL_VALUES + 1, label


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=200), min_size=1, max_size=80))
def test_a_label_never_takes_more_than_its_bound(reasons: list[str]) -> None:
    """Whatever reasons the code is handed (an exception's text, say), one label of one
    metric takes at most MAX_LABEL_VALUES values, then "other"; each is cut short."""
    metrics = Metrics()
    metric = f"test-{id(reasons)}"
    for reason in reasons:
        metrics.connection_refused("twente", bounded(metric, "reason", reason))
    seen = {
        s.labels["reason"]
        for family in metrics.registry.collect()
        if family.name == "meeple_connections_refused"
        for s in family.samples
        if s.name.endswith("_total")
    }
    assert len(seen) <= MAX_LABEL_VALUES + 1
    assert all(len(v) <= 48 for v in seen)


def test_metrics_off_counts_nothing() -> None:
    """With metrics off (the benchmarks' baseline) an event changes no sample."""
    metrics = Metrics()
    metrics.enabled = False
    metrics.room_started("spectrangle")
    metrics.command("web", 0.0)
    text = metrics.exposition().decode()
    assert 'meeple_games_started_total{game="spectrangle"}' not in text
    assert "meeple_commands_total{" not in text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.from_regex(rb"\A[A-Z]{1,8} /[ -~]{0,40} HTTP/1\.[01]\r\n"))
def test_the_ops_port_answers_any_request_head(head: bytes) -> None:
    """The ops port's answer to any head is a status of its own, never an exception."""
    status, kind, body = asyncio.run(answer(Readiness(), head))
    assert status in (200, 400, 404, 405, 503)
    assert kind
    assert body


async def test_the_ops_port_drops_a_head_past_its_limit(server: MeepleServer) -> None:
    """A request head past 8 KiB gets no answer, and the port still answers the next."""
    reader, writer = await asyncio.open_connection("127.0.0.1", ops_port(server))
    writer.write(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")
    assert await asyncio.wait_for(reader.read(-1), PATIENCE) == b""
    writer.close()
    assert await scrape(ops_port(server))


def test_the_process_has_one_registry_with_every_family() -> None:
    """Every metric docs/operations.md lists is exported by METRICS."""
    names = {family.name for family in METRICS.registry.collect()}
    for name in (
        "meeple_connections_open",
        "meeple_connections_opened",
        "meeple_connections_closed",
        "meeple_connections_refused",
        "meeple_rooms_running",
        "meeple_games_started",
        "meeple_games_finished",
        "meeple_commands",
        "meeple_command_seconds",
        "meeple_log_write_seconds",
        "meeple_log_writes",
        "meeple_log_retries",
        "meeple_journal_queue",
        "meeple_store_state",
        "meeple_bus_request_seconds",
        "meeple_bus_timeouts",
        "meeple_lease_takeovers",
        "meeple_lobby_leader_changes",
        "meeple_rooms_owned",
        "meeple_lobby_leader",
        "meeple_spectators",
        "meeple_event_loop_lag_seconds",
        "meeple_ready",
        "meeple_draining",
        "process_cpu_seconds",
        "process_resident_memory_bytes",
        "process_open_fds",
    ):
        assert name in names, name


class _Stuck:
    """A store whose log writes wait until ``gate`` is set."""

    def __init__(self, store: Store) -> None:
        self.store, self.gate = store, threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def open_log(self, *a: Any, **kw: Any) -> None:
        self.gate.wait(10)
        self.store.open_log(*a, **kw)


async def test_a_closed_journal_is_no_queue(tmp_path: Path) -> None:
    """A journal closed with writes the store did not take (each logged as dropped at
    the close) belongs to no running server: while it is still alive it adds nothing to
    what a scrape reports, so a later server's queue reads 0."""
    store = open_store(f"sqlite:///{tmp_path / 'games.db'}")
    stuck = _Stuck(store)
    journal = Journal(stuck)  # type: ignore[arg-type]
    try:
        writes = [asyncio.ensure_future(journal.open(f"r{n}", "counting", {})) for n in range(3)]
        await asyncio.sleep(0.05)
        assert ("meeple_journal_queue", (), 3.0) in journal_samples(journal)
        assert journal.close(timeout=0.05)  # dropped
        assert journal_samples(journal) == []
    finally:
        stuck.gate.set()
        journal.close()
        for write in writes:
            write.cancel()
        store.close()

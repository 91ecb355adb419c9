"""The CMPN402 referee of ``meeple serve`` counted like every room (issue 35): its game in
meeple_rooms_running, games started and finished by the stored end reason, its agents'
commands and their latency; scraped on the metrics port over real sockets."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from tests.ops.conftest import Samples, scrape, value
from tests.server.test_cmpn402 import _admin, _config, _pair

from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.cmpn402 import EndMessage, EndReason, PassMove, PassNotice
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.metrics import METRICS
from meeple.server.rooms.cmpn402 import Referee, RefereeSettings


async def _server(tmp_path: Path, gcide: Lexicon) -> MeepleServer:
    config = replace(_config(tmp_path), metrics_port=0)
    server = MeepleServer(config, clock=VirtualClock(), rng=random.Random(7))
    server.services.lexicon = gcide
    await server.start()
    return server


def _metrics_port(server: MeepleServer) -> int:
    return next(o.port for o in server.ops if o.name == "metrics")


def _delta(after: Samples, before: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


async def test_a_referee_game_is_counted_like_a_room(tmp_path: Path, gcide: Lexicon) -> None:
    """Two agents play: the game runs (rooms_running, games_started), every command a
    named agent sends counts with its latency, one refused included; the admin's stop
    finishes it as its record says, ``stopped``, and it runs no more."""
    server = await _server(tmp_path, gcide)
    port = _metrics_port(server)
    try:
        before = await scrape(port)
        mover, other, _, _ = await _pair(server)
        await mover.send(PassMove())
        assert isinstance(await other.next(), PassNotice)
        await mover.send(PassMove())  # out of turn: refused (silence), a command all the same
        await other.send(PassMove())
        assert isinstance(await mover.next(), PassNotice)
        during = await scrape(port)
        assert _delta(during, before, "meeple_rooms_running", game="cmpn402") == 1
        assert _delta(during, before, "meeple_games_started_total", game="cmpn402") == 1
        assert _delta(during, before, "meeple_commands_total", protocol="cmpn402") == 3
        assert _delta(during, before, "meeple_command_seconds_count", protocol="cmpn402") == 3
        code, _ = await _admin(server, "stop")
        assert code == 200
        for peer in (mover, other):
            end = await peer.next()
            assert isinstance(end, EndMessage)
            assert end.reason == EndReason.STOPPED
        after = await scrape(port)
        assert _delta(after, before, "meeple_rooms_running", game="cmpn402") == 0
        assert (
            _delta(after, before, "meeple_games_finished_total", game="cmpn402", reason="stopped")
            == 1
        )
    finally:
        await server.stop()


async def test_a_referee_game_on_at_the_stop_is_unfinished(tmp_path: Path, gcide: Lexicon) -> None:
    """The server stops with a referee game on: it runs no more and is counted
    ``unfinished`` (it waits in its log), as every room is; an agent that drops before
    does not end it (the game waits for it)."""
    server = await _server(tmp_path, gcide)
    port = _metrics_port(server)
    before = await scrape(port)
    try:
        mover, other, _, _ = await _pair(server)
        await other.ws.close()
        assert isinstance(await mover.next(), EndMessage)  # END 2: the game waits
        waiting = await scrape(port)
        assert _delta(waiting, before, "meeple_rooms_running", game="cmpn402") == 1
    finally:
        await server.stop()
    after = _scrape_registry()
    assert _delta(after, before, "meeple_rooms_running", game="cmpn402") == 0
    assert (
        _delta(after, before, "meeple_games_finished_total", game="cmpn402", reason="unfinished")
        == 1
    )


def _scrape_registry() -> Samples:
    """The process's metrics once the server (and its metrics port) is gone."""
    samples: Samples = {}
    for family in text_string_to_metric_families(METRICS.exposition().decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


class _Link:
    def __init__(self, n: int) -> None:
        self.id = f"agent-{n}"

    def send(self, data: bytes) -> None:
        pass

    def close(self, code: int, reason: str) -> None:
        pass


def _sample(name: str, **labels: str) -> float:
    return METRICS.registry.get_sample_value(name, labels) or 0.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(
        st.tuples(
            st.integers(0, 1),
            st.one_of(
                st.binary(max_size=24),
                st.sampled_from([b"\x01", b"\x02", b"\x05", b"\x06", b"\x00ann"]),
            ),
        ),
        max_size=30,
    )
)
def test_whatever_named_agents_send_is_counted_once_per_message(
    gcide: Lexicon, messages: list[tuple[int, bytes]]
) -> None:
    """Any bytes from the two named agents (moves, junk, a second NAME): each message is
    one command, counted with its latency; the game started once, and it runs unless it
    ended (running = started - finished), whatever the bytes did to it."""
    keys = ("meeple_commands_total", "meeple_command_seconds_count")
    before = [_sample(k, protocol="cmpn402") for k in keys]
    games = [_sample(f"meeple_games_{k}_total", game="cmpn402") for k in ("started", "finished")]
    running = _sample("meeple_rooms_running", game="cmpn402")
    settings_ = RefereeSettings(player_time=60_000, total_time=100_000, challenge_time=5_000)
    referee = Referee(clock=VirtualClock(), lexicon=gcide, rng=random.Random(3), settings=settings_)
    referee.seat(_Link(0), "ann")
    referee.seat(_Link(1), "bob")
    for seat, data in messages:
        referee.receive(seat, data)
    after = [_sample(k, protocol="cmpn402") for k in keys]
    assert [a - b for a, b in zip(after, before, strict=True)] == [len(messages)] * 2
    started = _sample("meeple_games_started_total", game="cmpn402") - games[0]
    finished = _sample("meeple_games_finished_total", game="cmpn402") - games[1]
    assert started == 1
    assert _sample("meeple_rooms_running", game="cmpn402") - running == started - finished
    referee.shutdown()  # a game still on: "unfinished", and it runs no more
    assert _sample("meeple_rooms_running", game="cmpn402") == running

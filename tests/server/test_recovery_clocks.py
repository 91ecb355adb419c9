"""A table's clock survives a crash (issue 24 with issue 20): `meeple serve` killed with
SIGKILL while a browser's clock runs against a bot, started again on the same database:
the browser takes its seat back and the clocks are the log's last remaining times, its
own running again (the time the server was down is charged to nobody)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.serve import Serve, next_of, web_client
from tests.server.test_recovery import _move, _my_turn

from meeple.games.scrabble.lexicon import Lexicon
from meeple.node.logfile import room_logs

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runtime", ["server", "node"])
async def test_a_clock_running_at_a_crash_comes_back_with_its_time(
    tmp_path: Path, gcide: Lexicon, runtime: str
) -> None:
    database = tmp_path / "db.sqlite3"
    first = Serve(database, "--runtime", runtime)
    try:
        ws = await web_client(first.ports["web"])
        create = {"type": "create", "game": "scrabble", "variant": "twente", "size": 2}
        await ws.send(json.dumps({**create, "name": "cat", "clock": "25+0"}))
        seated = await next_of(ws, "seated")
        await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
        view = await _my_turn(ws)
        await _move(ws, view, gcide)
        before = await _my_turn(ws)  # the bot has moved: its entry holds both clocks
        me = before["you"]
        clocks = before["clocks"]
        assert clocks["running"] == me
        assert clocks["control"]["spec"] == "25+0"
        assert all(t < 1500 for t in clocks["remaining"])  # both were charged
    finally:
        first.kill()
    with room_logs(database) as logs:
        [uid] = logs.open_logs()
        log = logs.action_log(uid)
    assert log is not None
    assert log.genesis["clocks"] == {
        "base": 1500.0,
        "increment": 0.0,
        "overtime": 600.0,
        "penalty": 10,
    }
    logged = log.entries[-1].entry["clocks"]
    second = Serve(database, "--runtime", runtime)
    try:
        ws2 = await web_client(second.ports["web"])
        await ws2.send(json.dumps({"type": "rejoin", "token": seated["token"]}))
        await next_of(ws2, "seated")
        after = (await next_of(ws2, "seat"))["data"]["clocks"]
        other = 1 - me
        assert after["remaining"][other] == pytest.approx(logged[other], abs=1e-3)
        assert after["running"] == me
        # Its own clock runs again from the log's time (a few seconds at most since).
        assert logged[me] - 10 < after["remaining"][me] <= logged[me]
        assert after["remaining"][me] == pytest.approx(clocks["remaining"][me], abs=10)
        await ws2.close()
    finally:
        second.stop()
    assert "restored from its log" in second.log

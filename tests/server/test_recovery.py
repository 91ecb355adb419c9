"""Restart recovery over real processes: `meeple serve` killed with SIGKILL mid-game and
started again on the same database (docs/durability.md)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.patience import PATIENCE, eventually
from tests.serve import Serve, next_of, web_client
from websockets.asyncio.client import ClientConnection

from meeple.ai.scrabble import ranked_moves
from meeple.clients.clarkson import ClarksonClient
from meeple.clients.santorini import play_santorini
from meeple.games import records
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.node.logfile import room_logs
from meeple.protocols.clarkson.messages import Turn
from meeple.server.store.database import Store

pytestmark = pytest.mark.slow

RS, US = b"\x1e", b"\x1f"


@pytest.fixture(params=["server", "node"])
def runtime(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Either runtime of ``meeple serve`` (issue 32.2): a restart on the same files
    resumes every game from its log (the node: its takeover of its own rooms)."""
    return ("--runtime", str(request.param))


async def _my_turn(ws: ClientConnection) -> dict[str, Any]:
    """The next view in which this seat is to move (or the game is over)."""
    while True:
        view = (await next_of(ws, "seat"))["data"]
        if view["over"] or (view["turn"] == view["you"] and view["pending"] is None):
            return view


async def _move(ws: ClientConnection, view: dict[str, Any], lexicon: Lexicon) -> None:
    rack = view["rack"]
    found = ranked_moves(Board.from_rows(view["board"]), rack, lexicon, ENGLISH)
    if found:
        action: dict[str, Any] = {
            "kind": "place",
            "tiles": [[p.x, p.y, p.tile] for p in found[0].tiles],
        }
    elif view["bag"] >= 7:
        action = {"kind": "exchange", "tiles": rack[:1]}
    else:
        action = {"kind": "pass"}
    await ws.send(json.dumps({"type": "play", "action": action}))


async def _rejoin_and_finish(
    server: Serve, seated: dict[str, Any], before: dict[str, Any], lexicon: Lexicon
) -> None:
    """A new browser connection to ``server`` presents the seat's token: it is seated
    as wes with the board, rack, scores, turn and bag of ``before``, and plays the game
    against the bot to its end."""
    ws = await web_client(server.ports["web"])
    await ws.send(json.dumps({"type": "rejoin", "token": seated["token"]}))
    again = await next_of(ws, "seated")
    assert again["name"] == "wes"
    after = (await next_of(ws, "seat"))["data"]
    for key in ("board", "rack", "scores", "turn", "bag", "players"):
        assert after[key] == before[key], key
    view = after
    while not view["over"]:
        await _move(ws, view, lexicon)
        view = await _my_turn(ws)
    assert view["result"] is not None
    await ws.close()


async def _begin_against_a_bot(
    ws: ClientConnection, lexicon: Lexicon, moves: int = 2
) -> dict[str, Any]:
    """Over ``ws``: open a two-seat Twente Scrabble table as "wes", seat an easy server
    bot, play ``moves`` turns; the ``seated`` message (its table and rejoin token)."""
    await ws.send(
        json.dumps(
            {"type": "create", "game": "scrabble", "variant": "twente", "size": 2, "name": "wes"}
        )
    )
    seated = await next_of(ws, "seated")
    await ws.send(json.dumps({"type": "bot", "table": seated["table"], "level": "easy"}))
    for _ in range(moves):
        await _move(ws, await _my_turn(ws), lexicon)
    return seated


def _stored_games(database: Path, game: str) -> list[Any]:
    store = Store(database)
    try:
        return store.games(game=game)
    finally:
        store.close()


async def _stored_soon(database: Path, game: str, count: int = 1) -> list[Any]:
    """The stored games once there are ``count`` (the restored rooms end on their own task)."""
    await eventually(
        lambda: len(_stored_games(database, game)) >= count, f"{count} {game} games stored"
    )
    return _stored_games(database, game)


async def test_a_browser_game_against_a_bot_goes_on_after_a_crash(
    tmp_path: Path, gcide: Lexicon, runtime: tuple[str, str]
) -> None:
    """A browser and a server bot mid-game; SIGKILL; a new process on the same file: the
    browser's token takes its seat back, its board and rack as they were, the bot plays
    on, and the finished game's record, logged across both processes, replays."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database, *runtime)
    try:
        ws = await web_client(first.ports["web"])
        seated = await _begin_against_a_bot(ws, gcide)
        before = await _my_turn(ws)
        assert not before["over"]
    finally:
        first.kill()
    second = Serve(database, *runtime)
    try:
        await _rejoin_and_finish(second, seated, before, gcide)
    finally:
        second.stop()
    [stored] = _stored_games(database, "scrabble")
    assert stored.protocols == ("bot", "web")
    assert stored.data is not None
    steps = list(records.replay(stored.data, lexicon=gcide))
    assert steps[-1].game.is_over
    with room_logs(database) as logs:
        log = logs.action_log(stored.data["uid"])
    assert log is not None
    assert log.game_id == stored.id
    assert len(log.entries) == len(stored.data["actions"]) > 3
    assert "restored from its log" in second.log


async def _twente_peer(port: int, name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"ANNOUNCE" + US + name.encode() + RS)
    await reader.readuntil(RS)
    return reader, writer


async def _fields(reader: asyncio.StreamReader) -> list[str]:
    frame = await asyncio.wait_for(reader.readuntil(RS), PATIENCE)
    return frame[:-1].decode().split("\x1f")


@pytest.mark.parametrize("runtime", ["server", "node"])
async def test_a_twente_game_cut_by_a_crash_is_stored_as_server_restart(
    tmp_path: Path, gcide: Lexicon, runtime: str
) -> None:
    """Twente clients lose their connection with the process: on restart their game ends
    by Twente's disconnect rule, is stored once with the reason server-restart and its
    log, and replays; the names are free to play again. Either runtime (issue 32.2): the
    node's takeover applies the same rule to the seats of its crashed predecessor."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database, "--runtime", runtime)
    try:
        port = first.ports["twente"]
        ra, wa = await _twente_peer(port, "Alice")
        _rb, wb = await _twente_peer(port, "Bob")
        wa.write(b"REQUESTGAME" + RS)
        wb.write(b"REQUESTGAME" + US + b"2" + RS)
        turn = ""
        while not turn:
            fields = await _fields(ra)
            if fields[0] == "NOTIFYTURN":
                turn = fields[2]
        mover = wa if turn == "Alice" else wb
        mover.write(b"MAKEMOVE" + US + b"SWAP" + US + RS)  # a pass (ERRATA)
        while (await _fields(ra))[0] != "INFORMMOVE":
            pass
    finally:
        first.kill()
    for writer in (wa, wb):
        writer.close()
        await writer.wait_closed()
    second = Serve(database, "--runtime", runtime)
    try:
        [stored] = await _stored_soon(database, "scrabble")
        assert stored.end_reason == "server-restart"
        assert stored.players == ("Alice", "Bob")
        assert stored.data is not None
        assert [a["type"] for a in stored.data["actions"]] == ["pass", "end"]
        steps = list(records.replay(stored.data, lexicon=gcide))
        assert steps[-1].game.is_over
        _, wa = await _twente_peer(second.ports["twente"], "Alice")  # the name is free
        wa.close()
        await wa.wait_closed()
    finally:
        second.stop()
    # A third start recovers nothing more, stores nothing twice.
    second_again = Serve(database, "--runtime", runtime)
    try:
        assert len(_stored_games(database, "scrabble")) == 1
        assert "restored from its log" not in second_again.log
    finally:
        second_again.stop()


async def test_a_clarkson_game_a_player_quit_before_the_crash_ends_after_it(
    tmp_path: Path, gcide: Lexicon, runtime: tuple[str, str]
) -> None:
    """Clarkson §4: ann quits mid-game and bob plays on, her leave in the log; SIGKILL; on
    restart ann does not leave a second time, bob's seat leaves by the rule, and the game
    ends and is stored once, its record replaying the log (found by the crash test, seed
    31 of `python -m tests.crash --lanes clarkson --kills 12 --kill-after 1 5`)."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database, *runtime)
    try:
        port = first.ports["clarkson"]
        ann = await ClarksonClient.connect("127.0.0.1", port, "ann")
        bob = await ClarksonClient.connect("127.0.0.1", port, "bob")
        while "ann" not in bob.users:
            await asyncio.wait_for(bob.receive(), PATIENCE)
        await ann.ready()
        await bob.ready()
        while not isinstance(await asyncio.wait_for(bob.receive(), PATIENCE), Turn):
            pass
        await ann.quit()
        await ann.close()
        [uid] = await _open_log_with(database, {"type": "leave", "player": 0})
    finally:
        first.kill()
    await bob.close()
    second = Serve(database, *runtime)
    try:
        [stored] = await _stored_soon(database, "scrabble")
    finally:
        second.stop()
    assert stored.end_reason == "server-restart"
    assert stored.data is not None
    assert [a["type"] for a in stored.data["actions"]] == ["leave", "end"]
    assert list(records.replay(stored.data, lexicon=gcide))[-1].game.is_over
    with room_logs(database) as logs:
        log = logs.action_log(uid)
        assert log is not None
        assert log.game_id == stored.id
        assert logs.open_logs() == []
    assert "failed" not in second.log


async def test_a_santorini_disconnect_logged_but_not_stored_is_stored_after_a_crash(
    tmp_path: Path, runtime: tuple[str, str]
) -> None:
    """The process dies between a dropped AM27 player's ``disconnect`` entry and the
    stored game (here: the entry is appended to the killed process's log, as the room
    writes it). On restart the log's last entry ends the game: it is stored once with
    that player as the one who dropped, and its record replays."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database, *runtime)
    players = []
    try:
        port = first.ports["santorini"]
        players = [
            asyncio.create_task(play_santorini("127.0.0.1", port, name, seed=i, search=False))
            for i, name in enumerate(("ann", "bob"))
        ]
        [uid] = await _open_log_with(database, None, entries=4)
    finally:
        first.kill()
    await asyncio.gather(*players, return_exceptions=True)
    with room_logs(database) as logs:
        log = logs.action_log(uid)
        assert log is not None
        last = log.entries[-1]
        dropped = {"action": {"type": "disconnect", "player": 1}, "clocks": last.entry["clocks"]}
        logs.append_log(uid, last.seq + 1, dropped)
    second = Serve(database, *runtime)
    try:
        [stored] = await _stored_soon(database, "santorini")
    finally:
        second.stop()
    assert stored.end_reason == "disconnect"
    assert stored.data is not None
    assert stored.data["actions"][-1] == {"type": "disconnect", "player": 1}
    assert stored.data["result"]["winners"] == [0]
    steps = list(records.replay(stored.data))
    assert len(steps) == len(stored.data["actions"]) + 1
    with room_logs(database) as logs:
        assert logs.open_logs() == []
        log = logs.action_log(uid)
        assert log is not None
        assert log.game_id == stored.id
        assert [e.entry["action"] for e in log.entries] == stored.data["actions"]
    assert "ERROR" not in second.log


async def _open_log_with(
    database: Path, action: dict[str, Any] | None, entries: int = 1
) -> list[str]:
    """The open logs once one holds ``action`` (or, None, ``entries`` entries)."""
    found: list[str] = []

    def logged() -> bool:
        with room_logs(database) as logs:
            for uid in logs.open_logs():
                log = logs.action_log(uid)
                assert log is not None
                actions = [e.entry["action"] for e in log.entries]
                if (action in actions) if action is not None else len(actions) >= entries:
                    found.append(uid)
                    return True
        return False

    await eventually(logged, f"an open log with {action or entries}")
    return found[:1]


async def test_a_second_server_on_the_same_database_refuses_to_start(tmp_path: Path) -> None:
    """A second ``meeple serve`` on a database another one is running on (a second
    terminal, a service started twice) exits with a message before it reads any log:
    it would replay the first one's open games and end them as if it had died. The first
    one's game goes on (its next moves are logged and told), and once it is gone the
    file is free again. Found trying the server as a user."""
    database = tmp_path / "db.sqlite3"
    first = Serve(database)
    try:
        port = first.ports["twente"]
        ra, wa = await _twente_peer(port, "Alice")
        _rb, wb = await _twente_peer(port, "Bob")
        wa.write(b"REQUESTGAME" + RS)
        wb.write(b"REQUESTGAME" + US + b"2" + RS)
        turn = ""
        while not turn:
            fields = await _fields(ra)
            if fields[0] == "NOTIFYTURN":
                turn = fields[2]
        second = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "meeple", "serve", "--database", str(database),
            *(arg for name in ("twente", "clarkson", "cmpn402", "santorini", "spectrangle", "web")
              for arg in (f"--{name}-port", "0")),
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            _, err = await asyncio.wait_for(second.communicate(), 60)
        finally:
            if second.returncode is None:  # it did not refuse: it must not outlive the test
                second.kill()
                await second.wait()
        assert second.returncode == 1
        assert b"another meeple serve is running on" in err
        assert b"restored from its log" not in err
        for _ in range(2):  # both pass: the game goes on, each move told to both
            mover = wa if turn == "Alice" else wb
            mover.write(b"MAKEMOVE" + US + b"SWAP" + US + RS)  # a pass (ERRATA)
            while (fields := await _fields(ra))[0] != "NOTIFYTURN":
                pass
            turn = fields[2]
        assert "refused" not in first.log
        assert "LogConflict" not in first.log
        for writer in (wa, wb):
            writer.close()
    finally:
        first.stop()
    again = Serve(database)  # the claim went with the first process
    again.stop()

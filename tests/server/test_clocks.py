"""Clocks for casual games (issue 24, item 13): a table's time control runs in its room
on the lobby's (virtual) clock; a flag ends or penalises by each game's rule, Scrabble's
overtime comes off the final score as a logged action, Fischer increments are added as
the turn passes, and a restart takes the clocks up from the room's log."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.server.conftest import InlineJournal

from meeple.ai import santorini as santorini_ai
from meeple.games.records import RecordError
from meeple.games.scrabble.game import EndReason
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.record import replay
from meeple.server.clock import VirtualClock
from meeple.server.lobby.tables import BadTable, Lobby
from meeple.server.rooms import santorini as santorini_room
from meeple.server.rooms import scrabble as scrabble_room
from meeple.server.rooms import spectrangle as spectrangle_room
from meeple.server.rooms.timecontrol import TimeControl, parse_time_control
from meeple.server.store.database import Store


class _Seat:
    """A browser-like seat (its seat is held over a restart under its rejoin token)."""

    protocol = "web"
    rejoinable = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.heard: list[object] = []

    def deliver(self, event: object) -> None:
        self.heard.append(event)


def _scrabble_lobby(clock: VirtualClock, store: Store, lexicon: Lexicon) -> Lobby:
    """A lobby with the server's own Scrabble rooms (its factory and restorer)."""
    lobby = Lobby(clock=clock, grace=600)
    lobby.journal = InlineJournal(store)  # type: ignore[assignment]
    services: Any = SimpleNamespace(rng=random.Random(7))
    create, restore = scrabble_room._room_factory(lexicon, services)
    lobby.register_game("scrabble", create, variants=scrabble_room.TABLE_VARIANTS, restore=restore)
    return lobby


async def _scrabble_game(
    lobby: Lobby, clock_spec: str = "25+0"
) -> tuple[scrabble_room.ScrabbleRoom, list[_Seat]]:
    table = lobby.create_table("scrabble", "twente", 2, settings={"clock": clock_spec})
    seats = [_Seat("ann"), _Seat("bob")]
    lobby.sit(table.id, seats[0])
    room = lobby.sit(table.id, seats[1])
    assert isinstance(room, scrabble_room.ScrabbleRoom)
    await lobby.clock.advance(0)  # type: ignore[attr-defined]
    return room, seats


def test_time_controls_are_parsed_per_game() -> None:
    """Scrabble: minutes and overtime (10 min, 10 points a minute); the others: Fischer."""
    assert parse_time_control("scrabble", "25+0") == TimeControl(1500, 0, 600, 10)
    assert parse_time_control("santorini", "5+3") == TimeControl(300, 3)
    for bad in ("0+0", "25", "25+1", "91+0", "5+61", "a+b"):
        with pytest.raises(ValueError, match="clock"):
            parse_time_control("scrabble" if bad == "25+1" else "santorini", bad)
    assert TimeControl(60, 0, 600, 10).penalty_for(-0.5) == 10
    assert TimeControl(60, 0, 600, 10).penalty_for(-60) == 10
    assert TimeControl(60, 0, 600, 10).penalty_for(-61) == 20
    assert TimeControl(60, 0, 600, 10).penalty_for(3) == 0


def test_a_table_refuses_a_clock_its_game_has_not(tmp_path: Path, gcide: Lexicon) -> None:
    lobby = _scrabble_lobby(VirtualClock(), Store(tmp_path / "db"), gcide)
    with pytest.raises(BadTable):
        lobby.create_table("scrabble", "twente", 2, settings={"clock": "5+3"})


async def test_only_the_clock_of_the_player_to_move_runs(tmp_path: Path, gcide: Lexicon) -> None:
    clock = VirtualClock()
    lobby = _scrabble_lobby(clock, Store(tmp_path / "db"), gcide)
    room, _seats = await _scrabble_game(lobby)
    first = room.game.turn
    assert first is not None
    await clock.advance(100)
    assert room.clocks() == [1400.0, 1500.0] if first == 0 else [1500.0, 1400.0]
    room.submit(room.seats[first], scrabble_room.PassTurn())
    await clock.advance(30)
    times = room.clocks()
    assert times is not None
    assert times[first] == 1400.0
    assert times[1 - first] == 1470.0
    view = room.snapshot()["clocks"]
    assert view["running"] == 1 - first
    assert view["control"]["spec"] == "25+0"


async def test_scrabble_overtime_costs_ten_points_a_started_minute(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """A player 61 s over loses 20 points off the final score; the penalty is an action
    of the record, which replays to the same result, and the GCG has its line."""
    clock = VirtualClock()
    store = Store(tmp_path / "db")
    lobby = _scrabble_lobby(clock, store, gcide)
    room, _ = await _scrabble_game(lobby, "1+0")
    late = room.game.turn
    assert late is not None
    await clock.advance(121)  # 61 s into overtime
    while not room.game.is_over:  # six scoreless turns end it
        turn = room.game.turn
        assert turn is not None
        room.submit(room.seats[turn], scrabble_room.PassTurn())
        await clock.advance(1)
    result = room.game.result
    assert result is not None
    assert result.reason is EndReason.SCORELESS_TURNS
    racks = result.adjustments
    assert result.scores[late] == racks[late] - 20
    assert result.scores[1 - late] == racks[1 - late]
    actions = room.logged_actions
    assert actions[-1] == {"type": "time-penalty", "player": late, "points": 20}
    log = store.action_log(room.uid)
    assert log is not None
    assert log.genesis["clocks"]["penalty"] == 10
    stored = store.games(game="scrabble")[0]
    assert stored.data["actions"] == list(actions)
    for step in replay(stored.data, lexicon=gcide):  # checks the recorded result too
        again = step.game
    assert again.result == result
    assert "(time) -20" in to_gcg(room.game)


async def test_a_scrabble_flag_past_the_overtime_limit_ends_the_game(
    tmp_path: Path, gcide: Lexicon
) -> None:
    clock = VirtualClock()
    lobby = _scrabble_lobby(clock, Store(tmp_path / "db"), gcide)
    room, _seats = await _scrabble_game(lobby, "1+0")
    late = room.game.turn
    assert late is not None
    await clock.advance(659)
    assert not room.game.is_over
    await clock.advance(1)
    result = room.game.result
    assert result is not None
    assert result.reason is EndReason.TIME
    assert result.player == late
    assert result.scores[late] == -100  # the whole ten minutes of overtime
    assert room.finished
    view = room.snapshot()["clocks"]
    assert view["flagged"] == [late]
    assert view["remaining"][late] == -600
    assert clock.pending == 0  # no clock runs after the end


async def test_a_restart_takes_the_clocks_up_from_the_log(tmp_path: Path, gcide: Lexicon) -> None:
    """The log's entries carry the remaining times; a new lobby on the same store restores
    the room with them and the clock of the player to move runs on (the time between the
    last entry and the restart is charged to nobody)."""
    store = Store(tmp_path / "db")
    clock = VirtualClock()
    lobby = _scrabble_lobby(clock, store, gcide)
    room, _ = await _scrabble_game(lobby)
    first = room.game.turn
    assert first is not None
    await clock.advance(100)
    room.submit(room.seats[first], scrabble_room.PassTurn())
    await clock.advance(50)  # the other player thinks; then the process dies
    log = store.action_log(room.uid)
    assert log is not None
    assert log.genesis["clocks"] == TimeControl(1500, 0, 600, 10).to_json()
    assert sorted(log.entries[-1].entry["clocks"]) == [1400.0, 1500.0]

    later = VirtualClock(5000.0)
    again = _scrabble_lobby(later, store, gcide)
    restored = again.restore(log)
    await later.advance(10)
    times = restored.clocks()
    assert times is not None
    assert times[first] == 1400.0
    assert times[1 - first] == 1490.0
    assert restored.snapshot()["clocks"]["running"] == 1 - first
    await later.advance(1490 + 600)  # and it still flags
    assert restored.finished
    assert room.uid == restored.uid


async def test_fischer_increment_is_added_when_the_turn_passes() -> None:
    """Santorini 1+5: a turn's time is charged, 5 s added once the turn passes on."""
    clock = VirtualClock()
    seats = [_Seat("ann"), _Seat("bob")]
    room = santorini_room.SantoriniRoom(list(seats), gods=False, rng=random.Random(1))
    room.clock, room.time_control = clock, parse_time_control("santorini", "1+5")
    room.start()
    await clock.advance(0)
    rng = random.Random(2)
    turn = room.game.turn
    assert turn is not None
    await clock.advance(20)
    actions = 0
    while room.game.turn == turn:  # the placing player's actions, all of its turn
        room.submit(room.seats[turn], santorini_ai.random_action(room.game.state, rng))
        actions += 1
        await clock.advance(1)  # after the turn's last action, the other's clock runs
    times = room.clocks()
    assert times is not None
    assert actions >= 1
    assert times[turn] == 60 - 20 - (actions - 1) + 5
    assert times[1 - turn] == 60 - 1


async def test_a_santorini_flag_loses_the_game() -> None:
    clock = VirtualClock()
    seats = [_Seat("ann"), _Seat("bob")]
    room = santorini_room.SantoriniRoom(list(seats), gods=False, rng=random.Random(1))
    room.clock, room.time_control = clock, parse_time_control("santorini", "1+0")
    finished: list[Any] = []
    room.on_game_over.append(finished.append)
    room.start()
    rng = random.Random(3)
    while room.game.phase is not santorini_room.Phase.PLAY:  # workers placed
        turn = room.game.turn
        assert turn is not None
        room.submit(room.seats[turn], santorini_ai.random_action(room.game.state, rng))
        await clock.advance(0)
    loser = room.game.turn
    assert loser is not None
    await clock.advance(61)
    assert room.game.is_over
    assert room.game.winner == 1 - loser
    assert room.end_reason == "time"
    assert finished == [room]


async def test_a_spectrangle_flag_abandons_the_game() -> None:
    clock = VirtualClock()
    seats = [_Seat("ann"), _Seat("bob"), _Seat("cy")]
    room = spectrangle_room.SpectrangleRoom(list(seats), rng=random.Random(1))
    room.clock, room.time_control = clock, parse_time_control("spectrangle", "2+0")
    room.start()
    await clock.advance(0)
    turn = room.game.turn
    assert turn is not None
    await clock.advance(121)
    assert room.game.is_over
    assert room.game.result is None
    assert room.flagged == turn
    assert room.finished


async def test_a_tables_word_list_is_its_rooms_and_comes_back_after_a_restart(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """A table's ``lexicon`` setting: the room checks words with that list, its log's
    genesis names it, and a restored room takes the same list up again; a server that
    has not loaded it refuses the log rather than judge the game by another list."""
    other = Lexicon.from_words(["QI", "ZA", "AA"], name="tiny")
    lists = {"tiny": other}
    services: Any = SimpleNamespace(rng=random.Random(7), lexicon=gcide, table_lexicons=lists)
    store = Store(tmp_path / "db")
    lobby = Lobby(clock=VirtualClock(), grace=600)
    lobby.journal = InlineJournal(store)  # type: ignore[assignment]
    create, restore = scrabble_room._room_factory(gcide, services)
    lobby.register_game("scrabble", create, variants=scrabble_room.TABLE_VARIANTS, restore=restore)
    table = lobby.create_table("scrabble", "twente", 2, settings={"lexicon": "tiny"})
    lobby.sit(table.id, _Seat("ann"))
    room = lobby.sit(table.id, _Seat("bob"))
    assert isinstance(room, scrabble_room.ScrabbleRoom)
    await lobby.clock.advance(0)  # type: ignore[attr-defined]
    assert room.lexicon_name == "tiny"
    assert room.game.lexicon is other
    log = store.action_log(room.uid)
    assert log is not None
    assert log.genesis["record"]["lexicon"] == "tiny"
    again = Lobby(clock=VirtualClock(), grace=600)
    again.register_game("scrabble", create, variants=scrabble_room.TABLE_VARIANTS, restore=restore)
    restored = again.restore(log)
    assert restored.game.lexicon is other  # type: ignore[attr-defined]
    del lists["tiny"]
    with pytest.raises(RecordError, match="tiny"):
        restore(log, [])

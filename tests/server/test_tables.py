"""Lobby tables: random sit/leave/ready/create/join sequences keep the lobby's invariants."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from meeple.server.clock import VirtualClock
from meeple.server.lobby.names import NameRegistry
from meeple.server.lobby.tables import (
    AlreadyPlaying,
    BadTable,
    Lobby,
    NoSuchTable,
    QueueChanged,
    QueueKey,
    Replaced,
    Seated,
    SeatJoined,
    SeatRenamed,
    StartRule,
    TableEvent,
    TableFull,
    TooManyTables,
    UnknownToken,
    VariantNotExpressible,
    expresses,
)
from meeple.server.rooms.room import Room, Seat

GAME = "g"
VARIANTS = {"a": (1, 3), "b": (2, 4)}


class FakeSeat:
    protocol = "fake"

    def __init__(
        self, name: str, variants: Collection[tuple[str, str]] | None, *, bot: bool = False
    ) -> None:
        self.name = name
        self.variants = variants
        self.bot = bot
        self.events: list[object] = []

    def deliver(self, event: object) -> None:
        self.events.append(event)

    def __repr__(self) -> str:
        return self.name


class StillRoom(Room):
    """A room that never runs a task: the test ends it by hand."""

    def start(self) -> None:
        pass

    def end(self) -> None:
        self.finished = True
        for callback in self.on_finished:
            callback(self)


SEATS = [
    FakeSeat("any1", None),
    FakeSeat("any2", None),
    FakeSeat("a1", {(GAME, "a")}),
    FakeSeat("a2", {(GAME, "a")}),
    FakeSeat("b1", {(GAME, "b")}),
    FakeSeat("bot1", None, bot=True),
    FakeSeat("bot2", None, bot=True),
]


class TablesMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        for seat in SEATS:
            seat.events.clear()
        self.lobby = Lobby(clock=VirtualClock())
        self.rooms: list[StillRoom] = []
        self.started: list[TableEvent] = []
        self.table_ids: list[str] = []
        self.departed: set[tuple[int, int]] = set()
        self.lobby.register_game(GAME, self._room, variants=VARIANTS)
        self.lobby.on_change.append(self._changed)

    def _room(self, key: QueueKey, seats: list[Seat]) -> Room:
        room = StillRoom(seats)
        self.rooms.append(room)
        return room

    def _changed(self, event: TableEvent) -> None:
        if event.kind == "started":
            self.started.append(event)

    def _table_id(self, i: int) -> str:
        return self.table_ids[i % len(self.table_ids)] if self.table_ids else "table-none"

    # --- rules --------------------------------------------------------------------------

    @rule(
        variant=st.sampled_from(["a", "b", "c"]),
        size=st.integers(0, 5),
        ready=st.booleans(),
    )
    def create(self, variant: str, size: int, ready: bool) -> None:
        start_rule = StartRule.READY if ready else StartRule.FULL
        try:
            table = self.lobby.create_table(GAME, variant, size, start_rule)
        except BadTable:
            low, high = VARIANTS.get(variant, (1, 0))
            assert variant not in VARIANTS or not low <= size <= high
            return
        self.table_ids.append(table.id)

    @rule(seat=st.sampled_from(SEATS), i=st.integers(0, 20))
    def sit(self, seat: FakeSeat, i: int) -> None:
        table_id = self._table_id(i)
        table = self.lobby.table(table_id)
        in_room = self.lobby.room_of(seat) is not None
        try:
            room = self.lobby.sit(table_id, seat)
        except NoSuchTable:
            assert table is None
            return
        except AlreadyPlaying:
            assert in_room
            return
        except VariantNotExpressible:
            assert table is not None
            assert not expresses(seat, table.game, table.variant)
            return
        except TableFull:
            assert table is not None
            assert len(table.seats) >= table.size
            return
        assert table is not None
        assert not in_room
        if room is None:
            assert self.lobby.table_of(seat) is table
        else:
            assert self.lobby.room_of(seat) is room
            assert seat in room.seats

    @rule(seat=st.sampled_from(SEATS))
    def leave(self, seat: FakeSeat) -> None:
        self.lobby.leave(seat)
        assert self.lobby.table_of(seat) is None

    @rule(seat=st.sampled_from(SEATS))
    def ready(self, seat: FakeSeat) -> None:
        self.lobby.ready(seat)

    @rule(seat=st.sampled_from(SEATS), players=st.integers(1, 4), ready=st.booleans())
    def join(self, seat: FakeSeat, players: int, ready: bool) -> None:
        variant = "a" if seat.variants is None or (GAME, "a") in seat.variants else "b"
        start_rule = StartRule.READY if ready else StartRule.FULL
        try:
            self.lobby.join(QueueKey(GAME, players, variant), seat, rule=start_rule)
        except AlreadyPlaying:
            assert self.lobby.room_of(seat) is not None
        except BadTable:
            low, high = VARIANTS[variant]
            assert not low <= players <= high
        table = self.lobby.table_of(seat)
        if table is not None:
            self.table_ids.append(table.id)

    @rule(seat=st.sampled_from(SEATS), new=st.sampled_from(["x", "y"]))
    def rename(self, seat: FakeSeat, new: str) -> None:
        table = self.lobby.table_of(seat)
        old, seat.name = seat.name, new
        self.lobby.renamed(seat, old)
        seat.name = old
        if table is not None:
            for other in table.seats:
                if other is not seat:
                    assert other.events[-1] == SeatRenamed(table.id, old, new)

    @rule(i=st.integers(0, 10))
    def finish_room(self, i: int) -> None:
        live = [r for r in self.rooms if not r.finished]
        if live:
            room = live[i % len(live)]
            room.end()
            for seat in room.seats:
                # Freed from this room; a seat that left it and sat down again since
                # (hypothesis: join, disconnect, join, finish the first) is in its new one.
                assert self.lobby.room_of(seat) is not room

    @rule(seat=st.sampled_from(SEATS))
    def disconnect(self, seat: FakeSeat) -> None:
        room = self.lobby.room_of(seat)
        self.lobby.disconnect(seat)
        if room is not None:  # told to the room: it applies its leave policy
            self.departed.add((id(seat), id(room)))
        assert self.lobby.table_of(seat) is None

    # --- invariants ---------------------------------------------------------------------

    @invariant()
    def a_seat_is_in_at_most_one_table_or_room(self) -> None:
        open_tables = [self.lobby.table(t.id) for t in self.lobby.tables()]
        for seat in SEATS:
            tables = [t for t in open_tables if t is not None and seat in t.seats]
            rooms = [
                r
                for r in self.rooms
                if not r.finished and seat in r.seats and (id(seat), id(r)) not in self.departed
            ]
            assert len(tables) + len(rooms) <= 1, (seat, tables, rooms)
            if tables:
                assert self.lobby.table_of(seat) is tables[0]
            if rooms and self.lobby.room_of(seat) is not None:
                assert self.lobby.room_of(seat) is rooms[0]

    @invariant()
    def no_open_table_is_due(self) -> None:
        for info in self.lobby.tables():
            table = self.lobby.table(info.id)
            assert table is not None
            if all(s.bot for s in table.seats):  # type: ignore[attr-defined]
                continue
            if table.start_rule is StartRule.FULL:
                assert len(table.seats) < table.size
            else:
                assert not (
                    len(table.seats) >= table.fewest
                    and all(id(s) in table.ready for s in table.seats)
                )

    @invariant()
    def tables_started_as_their_rule_says(self) -> None:
        for event in self.started:
            info = event.table
            assert not all(s.protocol == "fake" and s.name.startswith("bot") for s in info.seats)
            low = VARIANTS[info.variant][0]
            if info.start_rule is StartRule.FULL:
                assert len(info.seats) == info.size
            else:
                assert all(s.ready for s in info.seats)
                assert low <= len(info.seats) <= info.size

    @invariant()
    def every_seat_can_play_its_variant(self) -> None:
        for info in self.lobby.tables():
            table = self.lobby.table(info.id)
            assert table is not None
            for seat in table.seats:
                assert expresses(seat, GAME, table.variant)
        for event in self.started:
            for s in event.table.seats:
                seat = next(x for x in SEATS if x.name == s.name)
                assert expresses(seat, GAME, event.table.variant)

    @invariant()
    def seated_players_hold_distinct_tokens(self) -> None:
        tokens = [self.lobby.token_of(s) for s in SEATS if self.lobby.table_of(s) is not None]
        assert None not in tokens
        assert len(set(tokens)) == len(tokens)


# The machine's rooms never run a task, but Room() makes an asyncio.Queue: no loop needed.
TablesMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_tables_state_machine = TablesMachine.TestCase


def _seat(name: str, variants: Collection[tuple[str, str]] | None = None) -> FakeSeat:
    return FakeSeat(name, variants)


def test_ready_table_tells_joins_both_ways_and_starts_when_all_ready() -> None:
    """Clarkson §3.7–§3.8 as a table: USERJOIN-like notices both ways, a start only
    when every seated player is ready, and the seats' tokens handed out on sitting."""
    lobby = Lobby(clock=VirtualClock())
    rooms: list[StillRoom] = []
    lobby.register_game(GAME, lambda key, seats: rooms.append(StillRoom(seats)) or rooms[-1])
    a, b = _seat("a"), _seat("b")
    key = QueueKey(GAME, 3, "a")
    lobby.join(key, a, rule=StartRule.READY)
    lobby.join(key, b, rule=StartRule.READY)
    table = lobby.table_of(a)
    assert table is not None
    assert [e for e in b.events if isinstance(e, SeatJoined)] == [SeatJoined(table.id, "a")]
    assert [e for e in a.events if isinstance(e, SeatJoined)] == [SeatJoined(table.id, "b")]
    assert [type(e) for e in a.events if isinstance(e, Seated)] == [Seated]
    assert lobby.ready(a) is None
    assert lobby.is_ready(a)
    room = lobby.ready(b)
    assert room is not None
    assert room.seats == [a, b]
    assert lobby.tables() == []


def test_variants_decide_who_sits() -> None:
    """A seat whose protocol cannot play a table's variant is refused by id, and a
    queue-style join only ever finds tables of the seat's own variant."""
    lobby = Lobby(clock=VirtualClock())
    lobby.register_game(GAME, lambda key, seats: StillRoom(seats), variants=VARIANTS)
    only_b = _seat("twente", {(GAME, "b")})
    table = lobby.create_table(GAME, "a", 3)
    with pytest.raises(VariantNotExpressible) as refused:
        lobby.sit(table.id, only_b)
    assert refused.value.variant == "a"
    assert refused.value.protocol == "fake"
    lobby.join(QueueKey(GAME, 3, "b"), only_b)
    mine = lobby.table_of(only_b)
    assert mine is not None
    assert mine is not table
    assert mine.variant == "b"
    with pytest.raises(BadTable):
        lobby.create_table(GAME, "b", 1)
    [changed] = [e for e in only_b.events if isinstance(e, QueueChanged)]
    assert changed.names == ("twente",)
    assert changed.table == mine.id


async def test_rejoin_needs_a_held_seat() -> None:
    """Only a rejoinable seat is held; any other leaves its room at once."""
    lobby = Lobby(clock=VirtualClock(), grace=30)
    left: list[str] = []

    class LeaveRoom(StillRoom):
        def leave(self, seat: Seat) -> None:
            left.append(seat.name)

    lobby.register_game(GAME, lambda key, seats: LeaveRoom(seats))
    a, b = _seat("a"), _seat("b")
    b.rejoinable = True  # type: ignore[attr-defined]
    lobby.join(QueueKey(GAME, 2, "a"), a)
    lobby.join(QueueKey(GAME, 2, "a"), b)
    lobby.disconnect(a)
    assert left == ["a"]
    lobby.disconnect(b)
    assert left == ["a"]
    assert lobby.held == 1
    assert isinstance(lobby.clock, VirtualClock)
    await lobby.clock.advance(30)
    assert left == ["a", "b"]
    assert lobby.held == 0
    await asyncio.sleep(0)


def _token(seat: FakeSeat) -> str:
    [seated] = [e for e in seat.events if isinstance(e, Seated)]
    return seated.token


def _rejoinable(name: str) -> FakeSeat:
    seat = _seat(name)
    seat.rejoinable = True  # type: ignore[attr-defined]
    return seat


async def test_a_token_takes_its_seat_from_a_connection_still_open() -> None:
    """A rejoinable seat's token takes the seat from a connection still open (a second
    tab): at a table in its place, ready as it was; in a game (the room rebinds it). The
    old seat is told Replaced and sits nowhere, its name goes with the seat, and its
    connection closing later changes nothing. A seat that cannot carry its token (a
    TCP client) keeps its seat; a finished game's token takes nothing."""
    names = NameRegistry()
    lobby = Lobby(clock=VirtualClock(), grace=30, names=names)
    rooms: list[StillRoom] = []
    lobby.register_game(
        GAME, lambda key, seats: rooms.append(StillRoom(seats)) or rooms[-1], variants=VARIANTS
    )
    first, other = _rejoinable("pat"), _seat("tcp")
    assert names.claim("pat", first)
    key = QueueKey(GAME, 3, "b")  # two at least, so the ready first seat waits
    lobby.join(key, first, rule=StartRule.READY)
    lobby.ready(first)
    lobby.join(key, other, rule=StartRule.READY)
    table = lobby.table_of(first)
    assert table is not None
    token = _token(first)
    with pytest.raises(UnknownToken):
        lobby.rejoin(_token(other), _rejoinable("x"))
    second = _rejoinable("")
    assert lobby.rejoin(token, second) is table
    assert second.name == "pat"
    assert names.holder("pat") is second
    assert table.seats == [second, other]
    assert lobby.is_ready(second)
    assert lobby.table_of(first) is None
    assert lobby.token_of(second) == token
    assert first.events[-1] == Replaced(table.id)
    lobby.disconnect(first)  # the first tab closes: nothing of the seat was its own
    assert table.seats == [second, other]
    room = lobby.ready(other)
    assert room is not None
    third = _rejoinable("")
    assert lobby.rejoin(token, third) is room
    assert lobby.room_of(third) is room
    assert lobby.room_of(second) is None
    assert second.events[-1] == Replaced(room.uid)
    assert names.holder("pat") is third
    lobby.disconnect(second)
    assert lobby.held == 0
    assert lobby.room_of(third) is room
    rooms[0].end()
    with pytest.raises(UnknownToken):
        lobby.rejoin(token, _rejoinable(""))


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=200))
def test_unknown_ids_and_tokens_are_refused(text: str) -> None:
    """Whatever a browser sends as a table id or a rejoin token, a missing one is a
    typed refusal and nothing changes."""
    lobby = Lobby(clock=VirtualClock())
    lobby.register_game(GAME, lambda key, seats: StillRoom(seats), variants=VARIANTS)
    table = lobby.create_table(GAME, "a", 2)
    seat = _seat("s")
    if text != table.id:
        with pytest.raises(NoSuchTable):
            lobby.sit(text, seat)
    with pytest.raises(UnknownToken):
        lobby.rejoin(text, seat)
    assert lobby.table_of(seat) is None
    assert [t.id for t in lobby.tables()] == [table.id]


def test_empty_tables_are_capped() -> None:
    """Tables nobody sat at are limited; one with a player does not count."""
    lobby = Lobby(clock=VirtualClock(), max_empty_tables=2)
    lobby.register_game(GAME, lambda key, seats: StillRoom(seats), variants=VARIANTS)
    first = lobby.create_table(GAME, "a", 2)
    lobby.create_table(GAME, "a", 2)
    with pytest.raises(TooManyTables):
        lobby.create_table(GAME, "b", 2)
    lobby.sit(first.id, _seat("s"))
    lobby.create_table(GAME, "b", 2)


def test_a_refused_join_opens_no_table() -> None:
    """A queue-style join refused (in a game already, a variant the seat cannot play)
    leaves no empty table behind."""
    lobby = Lobby(clock=VirtualClock())
    lobby.register_game(GAME, lambda key, seats: StillRoom(seats), variants=VARIANTS)
    a, b = _seat("a"), _seat("b")
    lobby.join(QueueKey(GAME, 2, "a"), a)
    assert lobby.join(QueueKey(GAME, 2, "a"), b) is not None
    with pytest.raises(AlreadyPlaying):
        lobby.join(QueueKey(GAME, 3, "a"), a)
    with pytest.raises(VariantNotExpressible):
        lobby.join(QueueKey(GAME, 2, "b"), _seat("c", {(GAME, "a")}))
    assert lobby.tables() == []

"""The lobby matches queued players into rooms; rooms run commands in order and survive bugs."""

from __future__ import annotations

import asyncio

import pytest
from tests.patience import PATIENCE

from meeple.server.lobby.tables import BadTable, Lobby, NameNotExpressible, QueueChanged, QueueKey
from meeple.server.rooms.room import Room, Seat


class FakeSeat:
    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[object] = []

    def deliver(self, event: object) -> None:
        if event == "explode":
            raise RuntimeError("dialect bug")
        self.events.append(event)


class EchoRoom(Room):
    """Broadcasts each command; 'end' finishes; 'bug' raises; a leaving seat ends the game."""

    def on_start(self) -> None:
        self.broadcast("started")

    def handle(self, seat: Seat | None, command: object) -> None:
        if command == "bug":
            raise ValueError("room bug")
        if command == "explode":
            self.broadcast("explode")
            return
        self.broadcast((seat.name if seat else None, command))
        if command == "end":
            self.finish()

    def on_seat_left(self, seat: Seat) -> None:
        self.broadcast(("left", seat.name))
        self.finish()


def _queue(seat: FakeSeat) -> list[object]:
    return [e for e in seat.events if isinstance(e, QueueChanged)]


def _lobby() -> Lobby:
    lobby = Lobby()
    lobby.register_game("echo", lambda key, seats: EchoRoom(seats))
    return lobby


async def test_a_full_queue_starts_a_room_and_others_keep_waiting() -> None:
    """Two queues fill independently; a room starts only when its queue is full."""
    lobby = _lobby()
    a, b, c, d = (FakeSeat(n) for n in "abcd")
    two, three = QueueKey("echo", 2), QueueKey("echo", 3)
    assert lobby.join(two, a) is None
    assert lobby.join(three, b) is None
    assert lobby.join(three, c) is None
    room = lobby.join(two, d)
    assert room is not None
    assert room.seats == [a, d]
    assert lobby.waiting(three) == [b, c]
    assert lobby.queue_of(a) is None
    assert lobby.room_of(d) is room
    assert _queue(a) == [QueueChanged(two, 1), QueueChanged(two, 2)]
    assert _queue(d) == [QueueChanged(two, 2)]
    assert _queue(c) == [QueueChanged(three, 2)]
    await asyncio.sleep(0)
    assert a.events[-1] == "started"


async def test_joining_another_queue_leaves_the_first() -> None:
    """A player waits in one queue at a time."""
    lobby = _lobby()
    a = FakeSeat("a")
    lobby.join(QueueKey("echo", 3), a)
    lobby.join(QueueKey("echo", 4), a)
    assert lobby.waiting(QueueKey("echo", 3)) == []
    assert lobby.queue_of(a) == QueueKey("echo", 4)


async def test_unknown_game_and_double_seating_are_refused() -> None:
    """Only registered games can be queued for; a seated player cannot queue again."""
    lobby = _lobby()
    a, b = FakeSeat("a"), FakeSeat("b")
    with pytest.raises(KeyError):
        lobby.join(QueueKey("chess", 2), a)
    lobby.join(QueueKey("echo", 2), a)
    lobby.join(QueueKey("echo", 2), b)
    with pytest.raises(ValueError, match="already in a game"):
        lobby.join(QueueKey("echo", 2), a)


async def test_room_runs_commands_in_order_and_survives_bugs() -> None:
    """Commands run in submission order; a failing command or seat does not stop the room."""
    lobby = _lobby()
    a, b = FakeSeat("a"), FakeSeat("b")
    lobby.join(QueueKey("echo", 2), a)
    room = lobby.join(QueueKey("echo", 2), b)
    assert room is not None
    room.submit(a, "one")
    room.submit(b, "bug")
    room.submit(None, "explode")
    room.submit(b, "two")
    room.submit(a, "end")
    await asyncio.wait_for(room.wait_finished(), PATIENCE)
    played = ["started", ("a", "one"), ("b", "two"), ("a", "end")]
    assert a.events[-4:] == played
    assert b.events[-4:] == played
    assert lobby.room_of(a) is None  # freed to queue again


async def test_disconnect_in_queue_and_in_room() -> None:
    """A player who vanishes leaves the queue, or the room hears of it."""
    lobby = _lobby()
    a, b, c = FakeSeat("a"), FakeSeat("b"), FakeSeat("c")
    lobby.join(QueueKey("echo", 3), c)
    lobby.disconnect(c)
    assert lobby.waiting(QueueKey("echo", 3)) == []
    lobby.join(QueueKey("echo", 2), a)
    room = lobby.join(QueueKey("echo", 2), b)
    assert room is not None
    lobby.disconnect(a)
    await asyncio.wait_for(room.wait_finished(), PATIENCE)
    assert b.events[-1] == ("left", "a")
    assert lobby.room_of(b) is None


async def test_a_name_rule_binds_other_protocols_seats_not_its_own() -> None:
    """A listener's name rule refuses a browser's name its clients cannot show, while its
    own clients (named by their protocol, e.g. a Clarkson address) sit as before."""
    lobby = _lobby()
    lobby.name_rule("echo", "standard", "letters", str.isalpha, "letters only")
    table = lobby.create_table("echo", "standard", 3)
    browser, client, fine = FakeSeat("x.y"), FakeSeat("127.0.0.1"), FakeSeat("bea")
    browser.protocol = "web"  # type: ignore[attr-defined]
    client.protocol = "letters"  # type: ignore[attr-defined]
    with pytest.raises(NameNotExpressible, match=r"Letters clients .* 'x\.y': letters only"):
        lobby.sit(table.id, browser)
    with pytest.raises(NameNotExpressible):
        lobby.join(QueueKey("echo", 3), browser)
    lobby.sit(table.id, client)
    lobby.sit(table.id, fine)
    assert [s.name for s in table.seats] == ["127.0.0.1", "bea"]
    # Another variant of the game has no such rule.
    other = lobby.create_table("echo", "fast", 2)
    lobby.sit(other.id, browser)


def test_a_table_opened_again_under_its_id_keeps_it_and_later_ids_do_not_collide() -> None:
    """A table taken over from another process (a cluster's lobby leader) keeps its id;
    the tables opened after it get ids above its number, never an id open already."""
    lobby = _lobby()
    first = lobby.create_table("echo", "standard", 2)
    number = int(first.id.removeprefix("table-"))
    kept = lobby.create_table("echo", "standard", 2, table_id=f"table-{number + 50}")
    assert kept.id == f"table-{number + 50}"
    later = lobby.create_table("echo", "standard", 2)
    assert int(later.id.removeprefix("table-")) > number + 50
    with pytest.raises(BadTable):
        lobby.create_table("echo", "standard", 2, table_id=kept.id)
    assert [t.id for t in lobby.tables()] == [first.id, kept.id, later.id]

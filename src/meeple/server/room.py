"""Rooms: one actor per running game, owning the engine state and the seats.

A room runs one task that takes commands from its inbox in order, so a game's
state is only ever touched by that task: no locks, and a later split of rooms onto
other nodes only has to carry the inbox. Seats are players bound to a dialect
(the protocol adapter that turns room events into that protocol's messages), so
players on different protocols can share a room when the variant allows it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from meeple.server.feed import Feed, game_topic

__all__ = ["Resumed", "Room", "Seat"]

logger = logging.getLogger(__name__)

_room_ids = itertools.count(1)


class Seat(Protocol):
    """A player at a table. The room calls :meth:`deliver` with events for this player."""

    name: str

    def deliver(self, event: object) -> None:
        """Render a room event in the seat's protocol and send it (must not block)."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """A seat is back after a dropped connection (:meth:`Room.rebind`): the game as it is.

    ``you`` is the seat's index, ``players`` the names in seat order and ``game`` the
    room's engine game (read it; do not change it). Each dialect renders its own resync
    (the browser: a full view for that seat).
    """

    room: str
    you: int
    players: tuple[str, ...]
    game: object


class Room:
    """Base of every game room: an inbox, a task draining it, seats, and an end.

    Subclasses implement :meth:`handle` (one command from one seat) and may override
    :meth:`on_start` and :meth:`on_seat_left`. They call :meth:`finish` when the game
    is over; the room then stops and ``on_finished`` callbacks run (the lobby frees
    the players, the store records the game).
    """

    # The game's name in URLs, records and the lobby; each subclass sets it.
    game_name = "game"

    def __init__(self, seats: list[Seat]) -> None:
        self.id = f"room-{next(_room_ids)}"
        # Stable and hard to guess: the game's URL (/games/<uid>) live and in the store.
        self.uid = secrets.token_hex(6)
        # Set by the lobby: viewers get a snapshot after every command (docs/web.md).
        self.feed: Feed | None = None
        self.on_changed: list[Callable[[Room], None]] = []
        self.seats = list(seats)
        self._inbox: asyncio.Queue[tuple[Seat | None, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.finished = False
        self.on_finished: list[Callable[[Room], None]] = []
        self.log = _RoomLog(logger, {"room": self.id})

    # --- the outside world talks to the room only through these -------------------

    def start(self) -> None:
        """Start the room's task; ``on_start`` runs first inside it."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self.id)

    def submit(self, seat: Seat | None, command: object) -> None:
        """Queue a command from a seat (None for the server itself, e.g. a timer)."""
        if not self.finished:
            self._inbox.put_nowait((seat, command))

    def leave(self, seat: Seat) -> None:
        """A seat's connection is gone; the room decides what that means for the game."""
        self.submit(None, _SeatLeft(seat))

    def rebind(self, old: Seat, new: Seat) -> None:
        """``new`` (a new connection) takes ``old``'s seat; it is told the game as it is."""
        self.submit(None, _SeatBack(old, new))

    async def wait_finished(self) -> None:
        if self._task is not None:
            await asyncio.shield(self._task)

    # --- for subclasses -------------------------------------------------------------

    def on_start(self) -> None:
        """Deal, announce the game, tell whose turn it is."""

    def handle(self, seat: Seat | None, command: object) -> None:
        """Apply one command; reply to the seat on a rule error. Must not block."""
        raise NotImplementedError

    def on_seat_left(self, seat: Seat) -> None:
        """A player disconnected mid-game."""

    def on_seat_back(self, index: int, seat: Seat) -> None:
        """Seat ``index`` is played by ``seat`` now: tell it the game as it is."""
        players = tuple(s.name for s in self.seats)
        self.deliver(seat, Resumed(self.id, index, players, getattr(self, "game", None)))

    def spectator_view(self) -> dict[str, Any] | None:
        """What anyone may see of the game (``games/<game>/view.py``); None: nothing."""
        return None

    def snapshot(self) -> dict[str, Any]:
        """The room for viewers: who plays on which protocol, and the spectator view."""
        return {
            "uid": self.uid,
            "game": self.game_name,
            "players": [s.name for s in self.seats],
            "protocols": [getattr(s, "protocol", "unknown") for s in self.seats],
            "finished": self.finished,
            "view": self.spectator_view(),
        }

    def publish(self) -> None:
        """Hand viewers a fresh snapshot (the feed drops it if nothing changed).

        Nobody watching this game: no snapshot is built, the last one is only marked
        stale (a viewer's subscription publishes again). ``on_changed`` callbacks (the
        lobby's scores) run either way.
        """
        if self.feed is None:
            return
        topic = game_topic(self.uid)
        if self.feed.subscribers(topic) == 0:
            self.feed.forget(topic)
        elif self.feed.publish(topic, self.snapshot) is None:
            return  # nothing changed
        for callback in self.on_changed:
            try:
                callback(self)
            except Exception:
                self.log.exception("on_changed callback failed")

    def broadcast(self, event: object) -> None:
        for seat in self.seats:
            self.deliver(seat, event)

    def deliver(self, seat: Seat, event: object) -> None:
        try:
            seat.deliver(event)
        except Exception:
            # One seat's failing dialect must not stop the game for the others.
            self.log.exception("delivering %s to %s failed", type(event).__name__, seat.name)

    def finish(self) -> None:
        """Mark the game over; the room's task ends after the current command."""
        self.finished = True

    # --- the actor loop -------------------------------------------------------------

    async def _run(self) -> None:
        try:
            self.on_start()
            self.publish()
            while not self.finished:
                seat, command = await self._inbox.get()
                try:
                    if isinstance(command, _SeatLeft):
                        self.on_seat_left(command.seat)
                    elif isinstance(command, _SeatBack):
                        self._seat_back(command.old, command.new)
                    else:
                        self.handle(seat, command)
                except Exception:
                    # A bug in one command's handling is logged; the game state is only
                    # changed by the engine's atomic apply, so the room can go on.
                    self.log.exception("command %r failed", command)
                self.publish()
        finally:
            self.finished = True
            self.publish()
            for callback in self.on_finished:
                try:
                    callback(self)
                except Exception:
                    self.log.exception("on_finished callback failed")

    def _seat_back(self, old: Seat, new: Seat) -> None:
        for i, seat in enumerate(self.seats):
            if seat is old:
                self.seats[i] = new
                self.on_seat_back(i, new)
                return


class _RoomLog(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        return f"[{self.extra['room'] if self.extra else '?'}] {msg}", kwargs


class _SeatLeft:
    __slots__ = ("seat",)

    def __init__(self, seat: Seat) -> None:
        self.seat = seat


class _SeatBack:
    __slots__ = ("new", "old")

    def __init__(self, old: Seat, new: Seat) -> None:
        self.old = old
        self.new = new

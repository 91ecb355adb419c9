"""The lobby: queues of waiting players, per game, player count and variant.

A player joins one queue at a time. When a queue holds enough players, the lobby
makes a room for them with the room factory registered for that game, starts it,
and forgets them until the room finishes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meeple.server.feed import Feed, game_topic
from meeple.server.room import Room, Seat

__all__ = ["LOBBY_TOPIC", "Lobby", "QueueChanged", "QueueKey"]

logger = logging.getLogger(__name__)

# The feed topic of the lobby's snapshot (see :meth:`Lobby.snapshot`).
LOBBY_TOPIC = "lobby"


@dataclass(frozen=True, slots=True)
class QueueKey:
    """Which game a player waits for: the game, how many players, and the variant."""

    game: str
    players: int
    variant: str = "standard"


@dataclass(frozen=True, slots=True)
class QueueChanged:
    """Delivered to every seat in a queue when it changes: ``waiting`` of ``key.players``.

    When a queue fills, the players matched are told ``waiting == key.players`` before
    their room starts (Twente INFORMQUEUE 2/2 comes before STARTGAME).
    """

    key: QueueKey
    waiting: int


RoomFactory = Callable[[QueueKey, list[Seat]], Room]


class Lobby:
    """Matches waiting players into rooms. Several queues and games run at once."""

    def __init__(self, feed: Feed | None = None) -> None:
        self._factories: dict[str, RoomFactory] = {}
        self._queues: dict[QueueKey, list[Seat]] = {}
        self._queued: dict[int, QueueKey] = {}
        self._rooms: dict[int, Room] = {}
        self._by_uid: dict[str, Room] = {}
        # Viewers (the web) watch the lobby and every room through this one feed.
        self.feed = feed if feed is not None else Feed()

    def register_game(self, game: str, factory: RoomFactory) -> None:
        self._factories[game] = factory

    def has_game(self, game: str) -> bool:
        return game in self._factories

    def queue_of(self, seat: Seat) -> QueueKey | None:
        return self._queued.get(id(seat))

    def room_of(self, seat: Seat) -> Room | None:
        return self._rooms.get(id(seat))

    def waiting(self, key: QueueKey) -> list[Seat]:
        return list(self._queues.get(key, ()))

    @property
    def rooms(self) -> list[Room]:
        return list(self._by_uid.values())

    def room_by_uid(self, uid: str) -> Room | None:
        """A running room by its uid (its URL); None once it has finished."""
        return self._by_uid.get(uid)

    def snapshot(self) -> dict[str, Any]:
        """The queues and running rooms, for viewers (JSON-safe; names and counts only)."""
        queues = [
            {
                "game": key.game,
                "players": key.players,
                "variant": key.variant,
                "waiting": [
                    {"name": s.name, "protocol": getattr(s, "protocol", "unknown")} for s in seats
                ],
            }
            for key, seats in sorted(
                self._queues.items(), key=lambda kv: (kv[0].game, kv[0].players, kv[0].variant)
            )
            if seats
        ]
        rooms = []
        for room in self._by_uid.values():
            last = self.feed.last(game_topic(room.uid))
            # The room's last snapshot if someone watches it, else a view made now.
            view = (last.data.get("view") if last is not None else room.spectator_view()) or {}
            rooms.append(
                {
                    "uid": room.uid,
                    "game": room.game_name,
                    "players": [s.name for s in room.seats],
                    "protocols": [getattr(s, "protocol", "unknown") for s in room.seats],
                    "scores": view.get("scores"),
                    "turn": view.get("turn"),
                }
            )
        return {"queues": queues, "rooms": rooms}

    def publish(self) -> None:
        """Hand viewers a fresh lobby snapshot (queues changed, a room started or ended).

        With nobody watching the lobby the snapshot (which lists every room) is not
        built, only marked stale; the first viewer's subscription publishes it.
        """
        if self.feed.subscribers(LOBBY_TOPIC) == 0:
            self.feed.forget(LOBBY_TOPIC)
            return
        self.feed.publish(LOBBY_TOPIC, self.snapshot)

    def join(self, key: QueueKey, seat: Seat) -> Room | None:
        """Queue ``seat`` (leaving any queue it was in); start and return a room when full."""
        if key.game not in self._factories:
            raise KeyError(f"no game named {key.game!r}")
        if id(seat) in self._rooms:
            raise ValueError(f"{seat.name} is already in a game")
        self.leave_queue(seat)
        queue = self._queues.setdefault(key, [])
        queue.append(seat)
        self._queued[id(seat)] = key
        if len(queue) < key.players:
            self._notify(key, queue)
            return None
        players, self._queues[key] = queue[: key.players], queue[key.players :]
        for p in players:
            del self._queued[id(p)]
        self._notify(key, players)
        room = self._factories[key.game](key, players)
        for p in players:
            self._rooms[id(p)] = room
        self._by_uid[room.uid] = room
        room.feed = self.feed
        room.on_changed.append(lambda _room: self.publish())
        room.on_finished.append(self._room_finished)
        logger.info("%s: %s for %s", room.id, key, ", ".join(p.name for p in players))
        if self._queues[key]:
            self._notify(key, self._queues[key])
        room.start()
        return room

    def leave_queue(self, seat: Seat) -> QueueKey | None:
        """Take ``seat`` out of its queue, if it is in one."""
        key = self._queued.pop(id(seat), None)
        if key is not None:
            self._queues[key].remove(seat)
            self._notify(key, self._queues[key])
        return key

    def disconnect(self, seat: Seat) -> None:
        """The seat's connection is gone: leave its queue, or tell its room."""
        self.leave_queue(seat)
        room = self._rooms.pop(id(seat), None)
        if room is not None and not room.finished:
            room.leave(seat)

    def _room_finished(self, room: Room) -> None:
        for seat in room.seats:
            if self._rooms.get(id(seat)) is room:
                del self._rooms[id(seat)]
        self._by_uid.pop(room.uid, None)
        # Its viewers had the final snapshot; from now on the store has the game.
        self.feed.forget(game_topic(room.uid))
        self.publish()

    def _notify(self, key: QueueKey, seats: list[Seat]) -> None:
        self.publish()
        notice = QueueChanged(key, len(seats))
        for seat in list(seats):
            try:
                seat.deliver(notice)
            except Exception:
                logger.exception("telling %s of the queue failed", seat.name)

"""The Spectrangle room: one game, its seats on any protocol that plays Spectrangle.

:class:`SpectrangleRoom` owns the engine game (:mod:`meeple.games.spectrangle`), dealt
by the room's seeded RNG; each :class:`TurnCommand` is logged, then applied, and
announced to every seat as an :class:`Update` (each seat sees its own hand only);
chat in a game is :class:`RoomChat` / :class:`ChatSaid`. Finished games are stored with
their deal and actions (:func:`record_json`, replayable). :func:`spectrangle_lobby`
registers the game's tables and how a room is rebuilt from its log; :func:`name_rule`
is the spec's name rule. The Spectrangle 1.4 dialect is
:mod:`meeple.server.edge.spectrangle`.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from meeple.games import spectrangle as engine
from meeple.games.spectrangle.record import record_actions, to_record
from meeple.games.spectrangle.view import event_for_seat, spectator_view
from meeple.protocols.spectrangle import (
    Exchange,
    Place,
    Skip,
    action_for,
    is_valid_name,
)
from meeple.server.lobby.tables import (
    QueueKey,
    RoomFactory,
    RoomRestorer,
    lobby_port,
)
from meeple.server.rooms.room import Room, Seat

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.ports import LobbyPort
    from meeple.server.store.database import ActionLog

__all__ = [
    "GAME",
    "TABLE_VARIANTS",
    "ChatSaid",
    "GameStarted",
    "RoomChat",
    "RoomRejected",
    "SpectrangleRoom",
    "TurnCommand",
    "Update",
    "name_rule",
    "new_game",
    "record_from_json",
    "record_json",
    "spectrangle_lobby",
]

GAME = "spectrangle"
# The lobby's tables: one variant, 2 to 4 players (spec: ``request`` 2–4).
TABLE_VARIANTS = {"standard": (2, 4)}
END_PLAYER_LEFT = "player-left"
END_FINISHED = "finished"


# --- commands a seat sends its room, and what the room delivers ---------------------


@dataclass(frozen=True, slots=True)
class TurnCommand:
    """A seat's place, skip or exchange, as the protocol read it."""

    message: Place | Skip | Exchange


@dataclass(frozen=True, slots=True)
class RoomChat:
    """A seat's chat line for the other players of its game."""

    text: str


@dataclass(frozen=True, slots=True)
class GameStarted:
    """The game begins; ``game`` is read for the opening lines (hands are public)."""

    game: engine.Game


@dataclass(frozen=True, slots=True)
class Update:
    """Everything one action caused, in engine order, and the game after it."""

    events: tuple[engine.Event, ...]
    game: engine.Game


@dataclass(frozen=True, slots=True)
class RoomRejected:
    """The seat's last turn command broke a rule."""

    error: engine.SpectrangleError


@dataclass(frozen=True, slots=True)
class ChatSaid:
    """A player's chat line, for every seat that hears it (those with the extension)."""

    sender: str
    text: str


def new_game(players: list[str], rng: random.Random) -> engine.Game:
    """A fresh game between ``players`` (seat order), its bag shuffled by ``rng``."""
    return engine.Game(players, rng)


class SpectrangleRoom(Room):
    """One Spectrangle game: the engine state, its seats, and what each is told."""

    game_name = "spectrangle"

    def __init__(
        self,
        seats: list[Seat],
        *,
        rng: random.Random,
        on_game_over: Callable[[SpectrangleRoom], None] | None = None,
        uid: str | None = None,
        game: engine.Game | None = None,
    ) -> None:
        super().__init__(seats, uid=uid)
        # ``game``: a game replayed from the room's log (restart recovery).
        players = [s.name for s in seats]
        self.game: engine.Game = game if game is not None else new_game(players, rng)
        self.left: set[int] = set()
        self.flagged: int | None = None  # whose clock ran out (the game is abandoned)
        self.started_at = time.time()
        self._on_game_over = on_game_over

    def spectator_view(self) -> dict[str, Any]:
        return spectator_view(self.game)

    def seat_event(self, event: object, index: int) -> object:
        return event_for_seat(event, index)

    def last_told(self, log: ActionLog) -> object | None:
        """The Update the room told of the last action in ``log`` (its events)."""
        if not log.entries:
            return None
        before = replace(log, entries=log.entries[:-1]).replay()
        return Update(tuple(self.game.events[len(before.events) :]), self.game)

    def record_header(self) -> dict[str, Any]:
        header = to_record(self.game, uid=self.uid)
        header["actions"], header["result"] = [], None
        return header

    def table_settings(self) -> dict[str, Any]:
        return {"variant": "standard"}

    def log_actions(self, start: int = 0) -> list[dict[str, Any]]:
        return record_actions(self.game, start)

    def on_start(self) -> None:
        self.broadcast(GameStarted(self.game))

    def handle(self, seat: Seat | None, command: object) -> None:
        if seat is None or self.game.is_over:
            return
        if isinstance(command, RoomChat):
            self.broadcast(ChatSaid(seat.name, command.text))
            return
        player = self.index(seat)
        if isinstance(command, TurnCommand):
            action = action_for(command.message, player)
        elif isinstance(command, engine.Place | engine.Exchange | engine.Skip):
            # An in-process seat (a bot) sends engine actions; the sender is the seat.
            action = replace(command, player=player)
        else:
            raise TypeError(f"not a Spectrangle room command: {command!r}")
        try:
            events = self.game.apply(action)
        except engine.SpectrangleError as error:
            self.deliver(seat, RoomRejected(error))
            return
        self._publish(events)

    def clock_turn(self) -> int | None:
        return None if self.game.is_over else self.game.turn

    def on_flag(self, player: int) -> None:
        # docs/web.md, "Clocks": the spec knows one early end, a player gone, and it
        # abandons the game with no points counted; a player out of time is treated so.
        if not self.game.is_over:
            # Still at the table (unlike a player gone): told of the end like the others.
            self.flagged = player
            self._publish(self.game.apply(engine.Abandon(player)))

    def on_seat_left(self, seat: Seat) -> None:
        # Spec, General information: a disconnect ends the game, no points are counted.
        self._gone(seat, engine.LEFT)

    def on_resign(self, seat: Seat) -> None:
        # Issue 34.9: the game ends "resigned", the others winning on the scores so far;
        # the protocol's players hear "player <name> left" (spec 1.4 has no resign).
        self._gone(seat, engine.RESIGNED)

    def _gone(self, seat: Seat, reason: str) -> None:
        """``seat`` left the game for ``reason``: it ends (no-op when already over)."""
        player = self.index(seat)
        if self.game.is_over:
            return
        self.left.add(player)
        self._publish(self.game.apply(engine.Abandon(player, reason)))

    def may_abort(self, player: int) -> bool:
        # Issue 34.4: until the player's own first place, exchange or skip.
        if self.game.is_over:
            return False
        return not any(
            isinstance(a, engine.Place | engine.Exchange | engine.Skip) and a.player == player
            for a in self.game.log
        )

    def on_abort(self, player: int) -> None:
        self._publish(self.game.apply(engine.Abandon(player, engine.ABORTED)))

    def _publish(self, events: list[engine.Event]) -> None:
        update = Update(tuple(events), self.game)
        if self.game.is_over:
            # Stored before anyone is told, so a player who has seen the end finds the record.
            self._game_over()
        for i, seat in enumerate(self.seats):
            if i not in self.left:
                self.deliver(seat, update)

    def on_halt(self) -> None:
        # Spectrangle 1.4 has no message for a game the server stops: the seats hear
        # Halted (their connections close, as at a shutdown) and the game is stored.
        super().on_halt()
        self._game_over()

    def game_over_at_restore(self) -> None:
        self._game_over()

    def _game_over(self) -> None:
        result = self.game.result
        if result is not None:
            scores = ", ".join(
                f"{n} {s}" for n, s in zip(self.game.players, result.scores, strict=True)
            )
            self.log.info("game over: %s", scores)
        else:
            self.log.info("game abandoned")
        self.report_over(() if self._on_game_over is None else (self._on_game_over,))


# --- game records ----------------------------------------------------------------------


def record_json(record: engine.GameRecord) -> str:
    """A game's record as JSON: players, the bag in deal order, and every action."""
    actions: list[list[Any]] = []
    for action in record.actions:
        if isinstance(action, engine.Place):
            actions.append(["place", action.player, str(action.tile), action.index])
        elif isinstance(action, engine.Exchange):
            actions.append(["exchange", action.player, str(action.tile)])
        elif isinstance(action, engine.Skip):
            actions.append(["skip", action.player])
        elif action.reason == engine.LEFT:
            actions.append(["abandon", action.player])
        else:
            actions.append(["abandon", action.player, action.reason])
    return json.dumps(
        {
            "players": list(record.players),
            "bag": [str(t) for t in record.bag],
            "actions": actions,
        }
    )


def record_from_json(text: str) -> engine.GameRecord:
    """The inverse of :func:`record_json` (default rules)."""
    data = json.loads(text)
    actions: list[engine.Action] = []
    for kind, player, *args in data["actions"]:
        if kind == "place":
            actions.append(engine.Place(player, engine.Tile.parse(args[0]), args[1]))
        elif kind == "exchange":
            actions.append(engine.Exchange(player, engine.Tile.parse(args[0])))
        elif kind == "skip":
            actions.append(engine.Skip(player))
        else:
            actions.append(engine.Abandon(player, *args[:1]))
    bag = tuple(engine.Tile.parse(t) for t in data["bag"])
    return engine.GameRecord(tuple(data["players"]), bag, actions=tuple(actions))


# --- wiring --------------------------------------------------------------------------


def spectrangle_lobby(services: Services) -> LobbyPort:
    """The process's lobby (:func:`~meeple.server.lobby.tables.lobby_port`) with
    Spectrangle registered and the store open."""
    lobby = lobby_port(services)
    if not lobby.has_game(GAME):
        create, restore = _room_factory(services)
        lobby.register_game(GAME, create, variants=TABLE_VARIANTS, restore=restore)
    return lobby


def name_rule(lobby: LobbyPort) -> None:
    """A browser's name at a Spectrangle table is shown in waiting, start, turn, move …:
    every seat there must have a name the protocol can carry (the lobby's rule)."""
    lobby.name_rule(
        GAME,
        "standard",
        "spectrangle",
        is_valid_name,
        "not a tile code such as RGB3, nor null, turn, skip, skipped, with, on or left",
    )


def _room_factory(services: Services) -> tuple[RoomFactory, RoomRestorer]:
    def record(room: SpectrangleRoom) -> None:
        game = room.game
        result = game.result
        summary: dict[str, Any]
        end = game.abandoned
        if end is not None and end.reason != engine.LEFT:
            # Resigned (the others win on the scores so far) or aborted (nobody wins).
            end_reason = end.reason
            summary = {
                "by": game.players[end.player],
                "scores": dict(zip(game.players, game.scores, strict=True)),
                "winners": [game.players[w] for w in game.abandon_winners()],
            }
        elif result is None:
            gone = room.left if room.flagged is None else {*room.left, room.flagged}
            left = [game.players[p] for p in sorted(gone)]
            end_reason, summary = END_PLAYER_LEFT, {"left": left}
            if room.flagged is not None:
                end_reason = "time"
        else:
            end_reason = END_FINISHED
            summary = {
                "scores": dict(zip(game.players, result.scores, strict=True)),
                "winners": [game.players[w] for w in result.winners],
            }
        room.conclude(
            {
                "game": GAME,
                "variant": "standard",
                "protocols": [getattr(s, "protocol", "unknown") for s in room.seats],
                "players": game.players,
                "started_at": room.started_at,
                "end_reason": end_reason,
                "result": summary,
                "record": record_json(game.record()),
                "data": to_record(game, uid=room.uid),
            }
        )

    def create(key: QueueKey, seats: list[Seat]) -> Room:
        return SpectrangleRoom(
            seats, rng=random.Random(services.rng.getrandbits(64)), on_game_over=record
        )

    def restore(log: ActionLog, seats: list[Seat]) -> Room:
        game = log.replay()
        room = SpectrangleRoom(
            seats, rng=random.Random(0), on_game_over=record, uid=log.uid, game=game
        )
        room.started_at = log.created_at
        if game.is_over:
            room.game_over_at_restore()
        return room

    return create, restore

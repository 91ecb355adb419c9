"""The Santorini room: one game, its seats on any protocol that plays Santorini.

:class:`SantoriniRoom` owns the engine game (:mod:`meeple.games.santorini`): the
challenger drawn by the room's seeded RNG, the gods offered and taken, then the moves
and builds, each logged before it is applied. Its seats (the AM27 dialect in
:mod:`meeple.server.edge.santorini`, browsers, server bots) get :class:`GameStarted`,
:class:`PickGod`, :class:`Changed`, :class:`Refused`, :class:`Fresh`, :class:`Dropped`
and :class:`ChatSaid`; spectators get :func:`~meeple.games.santorini.view.spectator_view`.
:func:`santorini_lobby` registers the game's tables and how a room is rebuilt from its
log.
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from meeple.games import santorini as engine
from meeple.games.santorini import Game, Phase, RuleError, Rules
from meeple.games.santorini.record import record_actions, to_record
from meeple.games.santorini.view import event_for_seat, spectator_view
from meeple.server.lobby.tables import QueueKey, lobby_port
from meeple.server.rooms.room import Room, Seat

if TYPE_CHECKING:
    from collections.abc import Callable

    from meeple.server.app import Services
    from meeple.server.ports import LobbyPort
    from meeple.server.store.database import ActionLog

__all__ = [
    "GAME",
    "TABLE_VARIANTS",
    "Changed",
    "Chat",
    "ChatSaid",
    "Dropped",
    "Fresh",
    "GameStarted",
    "PickGod",
    "Refresh",
    "Refused",
    "SantoriniRoom",
    "santorini_lobby",
]

logger = logging.getLogger(__name__)

GAME = "santorini"
ATHEIST = "Atheist"  # ERRATA: the god of a player in a game without gods
MAX_NICKNAME = 32
VARIANTS = {True: "gods", False: "standard"}
# The lobby's tables: each variant takes 2 or 3 players.
TABLE_VARIANTS = dict.fromkeys(VARIANTS.values(), (2, 3))


# --- room commands and deliveries ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class PickGod:
    """GODINIT: offer (challenger, pool phase) or take (gods phase) ``god``."""

    god: str


@dataclass(frozen=True, slots=True)
class Refresh:
    """Send the seat a fresh state message (after a refusal the session made itself)."""


# Every delivery of a game names its room (``room``: the room's uid), so a seat tells a
# game it left (out of a 3-player game, then at another table) from the one it plays now
# by the delivery alone, never by the room's engine game (issue 32.3): on a cluster edge
# the game in a delivery is the seat's own copy.


@dataclass(frozen=True, slots=True)
class GameStarted:
    players: tuple[str, ...]
    you: int
    game: Game
    room: str = ""


@dataclass(frozen=True, slots=True)
class Changed:
    """The game moved on from ``before``; ``events`` are the engine's."""

    game: Game
    before: engine.GameState
    events: tuple[engine.Event, ...]
    room: str = ""


@dataclass(frozen=True, slots=True)
class Refused:
    error: RuleError
    game: Game
    room: str = ""


@dataclass(frozen=True, slots=True)
class Fresh:
    game: Game
    room: str = ""


@dataclass(frozen=True, slots=True)
class Dropped:
    """``name`` (seat ``player``) disconnected; the game is over for everyone."""

    player: int
    name: str
    room: str = ""


# Chat (issue 13): for the seats whose protocol has it; AM27 has none.


@dataclass(frozen=True, slots=True)
class Chat:
    """A seat's chat line for the players of its game."""

    text: str


@dataclass(frozen=True, slots=True)
class ChatSaid:
    """A player's chat line; delivered to every seat (AM27 seats ignore it)."""

    sender: str
    text: str


class SantoriniRoom(Room):
    """One Santorini game between seats; commands are engine actions or :class:`PickGod`."""

    game_name = "santorini"

    def __init__(
        self,
        seats: list[Seat],
        *,
        gods: bool,
        rng: random.Random,
        uid: str | None = None,
        game: Game | None = None,
    ) -> None:
        super().__init__(seats, uid=uid)
        # Names as at the start: a seat forgets its name when its connection goes.
        self.names = tuple(s.name for s in seats)
        challenger = rng.randrange(len(seats))
        # The spec's LOSE exists because the client decides it cannot move
        # (§4.2.6): a stuck player is not eliminated by the server, it sends LOSE.
        rules = Rules(players=len(seats), gods=gods, auto_eliminate=False)
        # ``game``: a game replayed from the room's log (restart recovery).
        self.game: Game = game if game is not None else Game(rules, challenger)
        self.started_at = time.time()
        self.end_reason = ""
        self.dropped: int | None = None  # the seat whose disconnect ended the game
        self.aborted = False  # the ``dropped`` seat aborted it (issue 34.4)
        self.resigned = False  # the ``dropped`` seat resigned out of turn (issue 34.9)
        self.on_game_over: list[Callable[[SantoriniRoom], None]] = []

    def seat_event(self, event: object, index: int) -> object:
        return event_for_seat(event, index)

    def last_told(self, log: ActionLog) -> object | None:
        """The room's :class:`Changed` of the last action in ``log`` (from the state
        before it), or :class:`Dropped` when a dropped connection ended the game."""
        if not log.entries:
            return None
        last = log.entries[-1].entry.get("action")
        if isinstance(last, dict) and last.get("type") in ("disconnect", "abort", "resign"):
            player = int(last["player"])
            return Dropped(player, self.names[player], self.uid)
        if not self.game.log:
            return None
        before = replace(log, entries=log.entries[:-1]).replay()
        state = before.state
        events = before.apply(self.game.log[-1])
        return Changed(self.game, state, tuple(events), self.uid)

    def record_header(self) -> dict[str, Any]:
        header = to_record(self.game, players=self.names, uid=self.uid)
        header["actions"], header["result"] = [], None
        return header

    def table_settings(self) -> dict[str, Any]:
        return {"variant": VARIANTS[self.game.rules.gods]}

    def log_actions(self, start: int = 0) -> list[dict[str, Any]]:
        return record_actions(
            self.game,
            start,
            disconnected=self.dropped,
            aborted=self.aborted,
            resigned=self.resigned,
        )

    def on_start(self) -> None:
        players = self.names
        for i, seat in enumerate(self.seats):
            self.deliver(seat, GameStarted(players, i, self.game, self.uid))
        self.broadcast(Changed(self.game, self.game.state, (), self.uid))

    def handle(self, seat: Seat | None, command: object) -> None:
        if seat is None or self.game.is_over:
            return
        if isinstance(command, Chat):
            self.broadcast(ChatSaid(self.names[self.index(seat)], command.text))
            return
        player = self.index(seat)
        if not self.game.state.alive[player]:
            return
        if isinstance(command, Refresh):
            self.deliver(seat, Fresh(self.game, self.uid))
            return
        try:
            if isinstance(command, PickGod):
                action: engine.Action = (
                    engine.OfferGod(player, command.god)
                    if self.game.phase is Phase.POOL
                    else engine.ChooseGod(player, command.god)
                )
            elif isinstance(command, engine.Action):
                # The sender is the seat, never what the message claims.
                action = replace(command, player=player)
            else:
                raise TypeError(f"not a Santorini command: {command!r}")
            before = self.game.state
            events = self.game.apply(action)
        except RuleError as e:
            self.deliver(seat, Refused(e, self.game, self.uid))
            return
        changed = Changed(self.game, before, tuple(events), self.uid)
        if any(isinstance(e, engine.GameWon) for e in events):
            # Stored before anyone is told, so a player who has seen the end finds the record.
            self.end_reason = "win"
            self._over()
        for i, other in enumerate(self.seats):
            if before.alive[i]:  # a player already out (3 players) has left the table
                self.deliver(other, changed)

    def clock_turn(self) -> int | None:
        return self.game.turn

    def on_flag(self, player: int) -> None:
        # docs/web.md, "Clocks": a player whose clock runs out loses, as by LOSE (spec
        # §4.2.6): with two players the other wins, with three the others play on. Before
        # play (gods, workers) there is no LOSE: the game ends as at a disconnect.
        if self.game.is_over or not self.game.state.alive[player]:
            return
        if self.game.phase is not Phase.PLAY:
            self.end_reason = "time"
            self.dropped = player
            self._over()
            self.broadcast(Changed(self.game, self.game.state, (), self.uid))
            return
        before = self.game.state
        events = self.game.apply(engine.Lose(player))
        changed = Changed(self.game, before, tuple(events), self.uid)
        if any(isinstance(e, engine.GameWon) for e in events):
            self.end_reason = "time"
            self._over()
        for i, other in enumerate(self.seats):
            if before.alive[i]:
                self.deliver(other, changed)

    def on_seat_left(self, seat: Seat) -> None:
        if self.game.is_over:
            return
        player = self.index(seat)
        if not self.game.state.alive[player]:
            return  # already out of a 3-player game: the others play on
        self.end_reason = "disconnect"
        self.dropped = player
        notice = Dropped(player, self.names[player], self.uid)
        self._over()
        for i, other in enumerate(self.seats):
            if i != player and self.game.state.alive[i]:
                self.deliver(other, notice)

    def on_resign(self, seat: Seat) -> None:
        # Issue 34.9: a resignation is "resigned" in the record, the pages and the ratings,
        # never a dropped connection. On the player's own turn in play it is the rules'
        # give-up (LOSE, spec §4.2.6: with three players the others play on); out of turn
        # (the other's turn, or the set-up) the engine has no give-up, so the room ends
        # the game as at a disconnect, the others winning, with the reason "resigned".
        # AM27 seats hear EndGame (the resigner, not a winner), as at a drop.
        if self.game.is_over:
            return
        player = self.index(seat)
        if not self.game.state.alive[player]:
            return
        if self.game.phase is Phase.PLAY and self.game.turn == player:
            self.handle(seat, engine.Lose(player))
            return
        self.end_reason = "resigned"
        self.dropped, self.resigned = player, True
        self._over()
        notice = Dropped(player, self.names[player])
        for i, other in enumerate(self.seats):
            if i != player and self.game.state.alive[i]:
                self.deliver(other, notice)

    def may_abort(self, player: int) -> bool:
        # Issue 34.4: gods, the starter and the workers' placement are set-up, not moves:
        # a player may abort until their own first move.
        if self.game.is_over or not self.game.state.alive[player]:
            return False
        return not any(
            isinstance(a, engine.Move | engine.Build | engine.Lose) and a.player == player
            for a in self.game.log
        )

    def on_abort(self, player: int) -> None:
        self.end_reason = "aborted"
        self.dropped, self.aborted = player, True
        self._over()
        # AM27 has no word for an abort: its players hear the game end as at a dropped
        # connection (EndGame, not won); a browser's seat gets the game as it is.
        notice = Dropped(player, self.names[player], self.uid)
        for i, other in enumerate(self.seats):
            if i != player and self.game.state.alive[i]:
                self.deliver(other, notice)
        self.deliver(self.seats[player], Changed(self.game, self.game.state, (), self.uid))

    def early_result(self) -> dict[str, Any] | None:
        if self.dropped is None or not (self.aborted or self.resigned):
            return None
        if self.aborted:
            return {"reason": "aborted", "player": self.dropped, "winners": [], "scores": None}
        alive = self.game.state.alive
        winners = [i for i in range(len(self.names)) if alive[i] and i != self.dropped]
        return {
            "reason": "resigned",
            "player": self.dropped,
            "winners": winners,
            "scores": None,
            "how": f"{self.names[self.dropped]} resigned",
        }

    def spectator_view(self) -> dict[str, Any]:
        view = spectator_view(self.game, self.names)
        early = self.early_result()
        if early is not None and view.get("result") is None:
            view["result"] = early
        return view

    def on_halt(self) -> None:
        # AM27 has no message for a game the server stops: the seats hear Halted
        # (their connections close, as at a shutdown) and the game is stored.
        super().on_halt()
        self.end_reason = "halted"
        self._over()

    def _over(self) -> None:
        self.report_over(self.on_game_over)


# --- lobby wiring ---------------------------------------------------------------------


def santorini_lobby(services: Services) -> LobbyPort:
    """The process's lobby (:func:`~meeple.server.lobby.tables.lobby_port`) with
    Santorini registered and the store open."""
    lobby = lobby_port(services)
    if not lobby.has_game(GAME):

        def record(room: SantoriniRoom) -> None:
            game = room.game
            names = list(room.names)
            winner = game.winner
            early = room.early_result()  # a resignation out of turn names its winner
            if winner is None and early is not None and len(early["winners"]) == 1:
                winner = early["winners"][0]
            room.conclude(
                {
                    "game": GAME,
                    "variant": VARIANTS[game.rules.gods],
                    "protocols": [getattr(s, "protocol", "unknown") for s in room.seats],
                    "players": names,
                    "started_at": room.started_at,
                    "end_reason": room.end_reason,
                    "result": {
                        "winner": names[winner] if winner is not None else None,
                        "gods": [g or ATHEIST for g in game.state.gods] if game.rules.gods else [],
                    },
                    "record": json.dumps([repr(a) for a in game.log]),
                    "data": to_record(
                        game,
                        players=names,
                        disconnected=room.dropped,
                        aborted=room.aborted,
                        resigned=room.resigned,
                        uid=room.uid,
                    ),
                }
            )

        def create(key: QueueKey, seats: list[Seat]) -> Room:
            room = SantoriniRoom(
                seats,
                gods=key.variant == "gods",
                rng=random.Random(services.rng.getrandbits(64)),
            )
            room.on_game_over.append(record)
            return room

        def restore(log: ActionLog, seats: list[Seat]) -> Room:
            game = log.replay()
            room = SantoriniRoom(
                seats, gods=game.rules.gods, rng=random.Random(0), uid=log.uid, game=game
            )
            room.on_game_over.append(record)
            room.started_at = log.created_at
            last = log.entries[-1].entry.get("action") if log.entries else None
            if isinstance(last, dict) and last.get("type") in ("disconnect", "abort", "resign"):
                # A dropped player (an abort, a resignation) ended the game (the record's
                # own last action, not the engine's) and the process died before it was
                # stored.
                room.aborted = last["type"] == "abort"
                room.resigned = last["type"] == "resign"
                room.end_reason = (
                    "aborted" if room.aborted else "resigned" if room.resigned else "disconnect"
                )
                room.dropped = int(last["player"])
                room._over()
            elif game.is_over:
                room.end_reason = "win"
                room._over()
            return room

        lobby.register_game(GAME, create, variants=TABLE_VARIANTS, restore=restore)
    return lobby

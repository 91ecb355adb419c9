"""The Scrabble room: one game, its seats on any Scrabble protocol, and what they are told.

Seats send :data:`Command` values; the room turns each into an engine action for
the seat's own player index (a message never says who sent it: the connection
does), applies it, and delivers to every seat one :class:`Update` per action with
all the engine events it caused, so each protocol's dialect can render them in
the order its spec wants. A refused command is answered to its sender only, as
:class:`Rejected` carrying the engine's typed error.
"""

from __future__ import annotations

import dataclasses
import enum
import random
import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meeple.games.records import RecordError
from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.errors import NotYourTurn, ScrabbleError
from meeple.games.scrabble.game import (
    TWENTE_VARIANT,
    VARIANTS,
    Accept,
    Action,
    Challenge,
    ChallengeRule,
    End,
    EndReason,
    Event,
    Exchange,
    Game,
    GameResult,
    Pass,
    Play,
    TimePenalty,
    Variant,
)
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.record import record_actions, to_record
from meeple.games.scrabble.view import event_for_seat, spectator_view
from meeple.server.lobby.tables import QueueKey, RoomFactory, RoomRestorer, lobby_port
from meeple.server.rooms.room import Room, Seat

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.ports import LobbyPort
    from meeple.server.store.database import ActionLog

__all__ = [
    "DOUBLE_VARIANT",
    "ChallengePlay",
    "Chat",
    "ChatSaid",
    "Command",
    "ExchangeTiles",
    "GameStarted",
    "LeavePolicy",
    "NoChallenge",
    "PassTurn",
    "PlaceTiles",
    "PlaceWord",
    "PlayerLeft",
    "Rejected",
    "ScrabbleRoom",
    "Update",
    "scrabble_lobby",
]


# --- commands: what a seat asks for -------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlaceWord:
    """Write a whole word from a square, playing through the board (Twente, GCG)."""

    x: int
    y: int
    direction: Direction
    word: str


@dataclass(frozen=True, slots=True)
class PlaceTiles:
    """Put these new tiles down (Clarkson PLACE, CMPN402 PLAY)."""

    tiles: tuple[Placement, ...]
    claimed_score: int | None = None


@dataclass(frozen=True, slots=True)
class ExchangeTiles:
    tiles: str


@dataclass(frozen=True, slots=True)
class PassTurn:
    pass


@dataclass(frozen=True, slots=True)
class ChallengePlay:
    pass


@dataclass(frozen=True, slots=True)
class NoChallenge:
    pass


@dataclass(frozen=True, slots=True)
class Chat:
    text: str


Command = PlaceWord | PlaceTiles | ExchangeTiles | PassTurn | ChallengePlay | NoChallenge | Chat


# --- deliveries: what a seat is told ------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameStarted:
    """The game begins: the players in turn order, this seat's index, and the game to read."""

    players: tuple[str, ...]
    you: int
    game: Game
    opening: tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class Update:
    """Everything one action caused, in engine order; ``actor`` is who acted (None: the server)."""

    actor: int | None
    events: tuple[Event, ...]
    game: Game


@dataclass(frozen=True, slots=True)
class Rejected:
    """The seat's last command was refused, and why."""

    command: object  # as the seat submitted it (a :data:`Command`, or what is none)
    error: ScrabbleError


@dataclass(frozen=True, slots=True)
class ChatSaid:
    sender: str
    text: str


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    """A player's connection is gone (before any game-over that follows from it)."""

    player: int
    name: str


class LeavePolicy(enum.Enum):
    """What a player leaving mid-game does to the game."""

    END_GAME = "end"  # Twente (ERRATA): the game ends, reason DISCONNECT
    CONTINUE = "continue"  # Clarkson RFC §4: the others play on; none left ends it


class ScrabbleRoom(Room):
    """A Scrabble game between seats; see the module docstring."""

    game_name = "scrabble"

    def __init__(
        self,
        seats: list[Seat],
        *,
        variant: Variant,
        lexicon: Container[str],
        rng: random.Random,
        leave_policy: LeavePolicy = LeavePolicy.END_GAME,
        on_game_over: Callable[[ScrabbleRoom], None] | None = None,
        uid: str | None = None,
        game: Game | None = None,
    ) -> None:
        super().__init__(seats, uid=uid)
        self.variant = variant
        self.leave_policy = leave_policy
        self.lexicon_name: str | None = getattr(lexicon, "name", None)
        # ``game``: a game replayed from the room's log (restart recovery).
        self.game: Game = (
            game
            if game is not None
            else Game([s.name for s in seats], rng, variant=variant, lexicon=lexicon)
        )
        self.left: set[int] = set()
        self.started_at = 0.0
        self._on_game_over = on_game_over

    @property
    def result(self) -> GameResult | None:
        return self.game.result

    def spectator_view(self) -> dict[str, Any]:
        return spectator_view(self.game)

    def seat_event(self, event: object, index: int) -> object:
        return event_for_seat(event, index)

    def last_told(self, log: ActionLog) -> object | None:
        """The Update the room told of the last action in ``log``."""
        if not log.entries:
            return None
        earlier = dataclasses.replace(log, entries=log.entries[:-1])
        before = earlier.replay(lexicon=self.game.lexicon)
        events = self.game.events[len(before.events) :]
        actions = self.game.log
        last = actions[-1] if actions else None
        actor = None if isinstance(last, End) or last is None else getattr(last, "player", None)
        return Update(actor, tuple(events), self.game)

    def record_header(self) -> dict[str, Any]:
        header = to_record(self.game, lexicon=self.lexicon_name, uid=self.uid)
        header["actions"], header["result"] = [], None
        return header

    def table_settings(self) -> dict[str, Any]:
        return {"variant": self.variant.name, "leave": self.leave_policy.value}

    def log_actions(self, start: int = 0) -> list[dict[str, Any]]:
        return record_actions(self.game, start)

    def clock_turn(self) -> int | None:
        return self.game.turn

    def on_flag(self, player: int) -> None:
        # docs/web.md, "Clocks": past its overtime's limit (or at zero without one) the
        # game ends, out of time; the penalties come off the final scores.
        if not self.game.is_over:
            self._publish(None, self.game.apply(End(EndReason.TIME, player)))

    def _time_penalties(self) -> list[Event]:
        """The overtime penalties, once the game is over (WESPA/NASPA: 10 points per
        started minute over), applied to the final scores as engine actions, so that
        the record replays them."""
        timing = self.timing
        if timing is None:
            return []
        timing.stop()
        events: list[Event] = []
        for player, left in enumerate(timing.remaining):
            points = timing.control.penalty_for(left)
            if points:
                events += self.game.apply(TimePenalty(player, points))
        return events

    def on_start(self) -> None:
        opening = tuple(self.game.opening_events())
        players = tuple(s.name for s in self.seats)
        for i, seat in enumerate(self.seats):
            self.deliver(seat, GameStarted(players, i, self.game, opening))

    def handle(self, seat: Seat | None, command: object) -> None:
        if seat is None or self.game.is_over:
            return
        player = self.index(seat)
        if isinstance(command, Chat):
            self.broadcast(ChatSaid(seat.name, command.text))
            return
        try:
            action = self._action(player, command)
            events = self.game.apply(action)
        except ScrabbleError as e:
            self.deliver(seat, Rejected(command, e))
            return
        self._publish(player, events)

    def _action(self, player: int, command: object) -> Action:
        board = self.game.board
        if isinstance(command, PlaceWord):
            return Play.from_word(
                board, player, command.x, command.y, command.direction, command.word
            )
        if isinstance(command, PlaceTiles):
            return Play(player, command.tiles)
        if isinstance(command, ExchangeTiles):
            return Exchange(player, command.tiles)
        if isinstance(command, PassTurn):
            return Pass(player)
        if isinstance(command, ChallengePlay):
            return Challenge(player)
        if isinstance(command, NoChallenge):
            return Accept(player)
        raise NotYourTurn(f"unknown command {command!r}")

    def _publish(self, actor: int | None, events: list[Event]) -> None:
        if self.game.is_over:
            events = events + self._time_penalties()
        update = Update(actor, tuple(events), self.game)
        if self.game.is_over:
            # Stored before anyone is told, so a player who has seen the end finds the record.
            self._game_over()
        for i, seat in enumerate(self.seats):
            if i not in self.left:
                self.deliver(seat, update)

    def on_seat_left(self, seat: Seat) -> None:
        self._leave(seat, EndReason.DISCONNECT)

    def on_resign(self, seat: Seat) -> None:
        # Issue 34.9: as a player leaving (the table's leave rule), but a game it ends
        # ends "resigned". The other seats' protocols hear what they hear of a leave
        # (Twente: PLAYERDISCONNECTED, then GAMEOVER DISCONNECT; neither spec has a resign).
        self._leave(seat, EndReason.RESIGNED)

    def may_abort(self, player: int) -> bool:
        # Issue 34.4: until the player's own first play, exchange or pass.
        if self.game.is_over or player in self.left:
            return False
        moves = (Play, Exchange, Pass)
        return not any(isinstance(a, moves) and a.player == player for a in self.game.log)

    def on_abort(self, player: int) -> None:
        self._publish(None, self.game.apply(End(EndReason.ABORTED, player)))

    def _leave(self, seat: Seat, reason: EndReason) -> None:
        player = self.index(seat)
        if player in self.left or self.game.is_over:
            return
        self.left.add(player)
        notice = PlayerLeft(player, seat.name)
        for i, other in enumerate(self.seats):
            if i not in self.left:
                self.deliver(other, notice)
        remaining = len(self.seats) - len(self.left)
        if self.leave_policy is LeavePolicy.END_GAME or remaining == 0:
            self._publish(None, self.game.apply(End(reason, player)))
        else:
            self._publish(None, self.game.drop_player(player))

    def on_halt(self) -> None:
        # Every Scrabble protocol can say a game ended early: the referee's admin end.
        if not self.game.is_over:
            self._publish(None, self.game.apply(End(EndReason.ADMIN)))

    def game_over_at_restore(self) -> None:
        self._game_over()

    def departed(self) -> frozenset[int]:
        return frozenset(self.left)

    def _game_over(self) -> None:
        result = self.game.result
        if result is not None:
            scores = ", ".join(
                f"{n} {s}" for n, s in zip(self.game.players, result.scores, strict=True)
            )
            self.log.info("game over (%s): %s", result.reason.value, scores)
        self.report_over(() if self._on_game_over is None else (self._on_game_over,))


# --- wiring shared by every Scrabble listener ----------------------------------------

GAME = "scrabble"
# The variants a lobby table can be: Twente's (blanks; the browser's too) and Clarkson's
# (two random letters instead of blanks). CMPN402 games are the referee's, not tables.
TABLE_VARIANTS = {
    name: (VARIANTS[name].min_players, VARIANTS[name].max_players)
    for name in ("twente", "clarkson")
}
# Issue 13: a table for browsers and server bots with challenges: Twente's rules (real
# blanks) but words checked only when challenged, a wrong challenge costing the
# challenger's turn (double challenge, as CMPN402). Neither Twente nor Clarkson can
# express a challenge, so their clients are never seated there (VariantNotExpressible).
DOUBLE_VARIANT = TWENTE_VARIANT.but(name="double", challenge=ChallengeRule.DOUBLE)
TABLE_VARIANTS[DOUBLE_VARIANT.name] = (DOUBLE_VARIANT.min_players, DOUBLE_VARIANT.max_players)
_TABLE_RULES = {**VARIANTS, DOUBLE_VARIANT.name: DOUBLE_VARIANT}


def table_lexicon(services: Services) -> Lexicon:
    """The lexicon every Scrabble table checks words with, loaded once per server
    (``Services.lexicon``; a test may put one there first)."""
    if services.lexicon is None:
        services.lexicon = load_lexicon(services.config.lexicon)
    return services.lexicon


def load_table_lexicons(names: Sequence[str]) -> dict[str, Lexicon]:
    """Load the word lists ``names`` (the config's ``table_lexicons``), by their names."""
    loaded: dict[str, Lexicon] = {}
    for configured in names:
        lexicon = load_lexicon(configured)
        loaded[str(getattr(lexicon, "name", configured))] = lexicon
    return loaded


def table_lexicons(services: Services) -> Mapping[str, Lexicon]:
    """The word lists a browser's table may choose besides the default (docs/web.md,
    "Word lists"): those the server was started with (``table_lexicons``), by name."""
    if services.table_lexicons is None:
        services.table_lexicons = load_table_lexicons(services.config.table_lexicons)
    return services.table_lexicons


def lexicon_of(services: Services, name: str | None) -> Container[str]:
    """The loaded word list ``name`` (None: the default); KeyError if the server has not
    loaded it."""
    default = table_lexicon(services)
    if name is None or name == getattr(default, "name", None):
        return default
    return table_lexicons(services)[name]


def scrabble_lobby(services: Services) -> LobbyPort:
    """The process's lobby (:func:`~meeple.server.lobby.tables.lobby_port`) with Scrabble
    registered, the lexicon loaded and the store open.

    Every Scrabble listener calls this from its factory, so the lexicon is loaded
    (from its compiled cache after the first run) before any listener accepts.
    """
    lobby = lobby_port(services)
    lexicon = table_lexicon(services)
    table_lexicons(services)
    if not lobby.has_game(GAME):
        create, restore = _room_factory(lexicon, services)
        lobby.register_game(GAME, create, variants=TABLE_VARIANTS, restore=restore)
    return lobby


def _room_factory(lexicon: Container[str], services: Services) -> tuple[RoomFactory, RoomRestorer]:
    def record(room: ScrabbleRoom) -> None:
        result = room.game.result
        assert result is not None
        room.conclude(
            {
                "game": GAME,
                "variant": room.variant.name,
                "protocols": [getattr(s, "protocol", "unknown") for s in room.seats],
                "players": room.game.players,
                "started_at": room.started_at,
                "end_reason": result.reason.value,
                "result": {
                    "scores": dict(zip(room.game.players, result.scores, strict=True)),
                    "winners": [room.game.players[w] for w in result.winners],
                },
                "record": to_gcg(room.game, lexicon=room.lexicon_name),
                "data": to_record(room.game, lexicon=room.lexicon_name, uid=room.uid),
            }
        )

    def create(key: QueueKey, seats: list[Seat]) -> Room:
        variant = _TABLE_RULES[key.variant]
        # The table's own word list (docs/web.md, "Word lists"), else the server's.
        chosen = dict(key.settings).get("lexicon")
        # Clarkson RFC §4: a player quitting mid-game leaves the others playing.
        policy = LeavePolicy.CONTINUE if key.variant == "clarkson" else LeavePolicy.END_GAME
        room = ScrabbleRoom(
            seats,
            variant=variant,
            lexicon=lexicon if chosen is None else lexicon_of(services, chosen),
            rng=random.Random(services.rng.getrandbits(64)),
            leave_policy=policy,
            on_game_over=record,
        )
        room.started_at = time.time()
        return room

    def restore(log: ActionLog, seats: list[Seat]) -> Room:
        name = log.genesis["record"].get("lexicon")
        try:
            words = (
                lexicon if name == getattr(lexicon, "name", None) else lexicon_of(services, name)
            )
        except KeyError:
            raise RecordError(f"the word list {name!r} is not loaded by this server") from None
        game = log.replay(lexicon=words)
        game.resume(random.Random(services.rng.getrandbits(64)), words)
        room = ScrabbleRoom(
            seats,
            variant=game.variant,
            lexicon=words,
            rng=random.Random(0),  # unused: the game is the log's
            leave_policy=LeavePolicy(log.genesis["table"]["leave"]),
            on_game_over=record,
            uid=log.uid,
            game=game,
        )
        room.started_at = log.created_at
        room.left = set(game.state().left)  # who quit before the restart (Clarkson, RFC §4)
        if game.is_over:
            room.game_over_at_restore()
        return room

    return create, restore

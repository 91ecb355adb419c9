"""The Spectrangle 1.4 listener: each connection's handler is its seat in a Spectrangle room.

The sans-I/O :class:`~meeple.protocols.spectrangle.ServerSession` frames and checks
what a client may send and when; this module turns its requests into lobby and room
commands, and room deliveries into Spectrangle lines through the protocol's dialect
(:mod:`meeple.protocols.spectrangle.dialect`), so no line is formatted here.

The conversation (spec, "Tabular networking protocol"; ERRATA, Spectrangle)::

    connect <name> [chat]      -> welcome [chat]        | invalidName
    request <n>                -> waiting <names...>      (each time the queue changes)
      (queue full)             -> waiting <all>, start with <seats>, order <turns>,
                                  tiles <hands> turn|skip <name>
    place <tile> on <index>    -> move <name> <tile> <index> <points>, tiles ... | leaderboard
    skip                       -> player skipped <name>, tiles ...
    exchange <tile>            -> replace <name> <tile> with <new>, tiles ...
    (a player disconnects)     -> player <name> left      (to the others; no leaderboard)

Decisions where the spec is silent (docs/protocols/spectrangle.md has the list):

- Names are unique server-wide and case-insensitively (:class:`NameRegistry`), and a
  taken name is an ``invalidName`` like a malformed one; the client may try again.
- ``welcome`` names the extensions the client asked for that meeple supports (chat).
- When a queue fills, its players hear the full ``waiting`` line before ``start with``
  (as the transcript's server does); a player leaving a queue makes the others hear
  the shorter ``waiting`` line.
- Chat in a game goes to that game's players; chat outside a game goes to every
  Spectrangle player not in a game. Only connections that agreed the chat extension
  receive ``chat`` lines; the sender hears its own line too (the relay's receipt).
- A turn command is answered by the room: the announcement on success, else
  ``invalidMove`` (a rule broken) — out of turn is ``invalidCommand`` from the session.
- There is no turn clock: a silent player holds the game until the server's idle
  timeout closes the connection, which ends the game as a disconnect does.
- On shutdown nothing is sent: the spec has no line for a server going away.
- Finished games are stored with their deal and actions (replayable with
  :func:`meeple.games.spectrangle.replay`); games ended by a player leaving are stored
  too, with end reason ``player-left`` and no scores.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from meeple.games import spectrangle as engine
from meeple.games.spectrangle.record import record_actions, to_record
from meeple.games.spectrangle.view import spectator_view
from meeple.protocols.spectrangle import (
    DEFAULT_MAX_LINE_SIZE,
    Chat,
    ChatFrom,
    ClientMessage,
    Connect,
    ErrorReply,
    ErrorWord,
    Exchange,
    LocalProtocolError,
    PeerError,
    Place,
    Rejected,
    Request,
    ServerMessage,
    ServerSession,
    Skip,
    Waiting,
    action_for,
    error_word_for,
    is_valid_name,
    messages_for,
    opening_messages,
)
from meeple.server.config import ListenerConfig
from meeple.server.lobby import (
    Lobby,
    QueueChanged,
    QueueKey,
    RoomFactory,
    RoomRestorer,
    TableError,
    server_lobby,
)
from meeple.server.room import Halted, Room, Seat
from meeple.server.tcp import Connection, TcpListener

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.store import ActionLog

__all__ = [
    "GAME",
    "TABLE_VARIANTS",
    "ChatSaid",
    "GameStarted",
    "RoomChat",
    "RoomRejected",
    "SpectrangleHandler",
    "SpectrangleHub",
    "SpectrangleRoom",
    "TurnCommand",
    "Update",
    "create_listener",
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
        self.game = game if game is not None else new_game([s.name for s in seats], rng)
        self.left: set[int] = set()
        self.flagged: int | None = None  # whose clock ran out (the game is abandoned)
        self.started_at = time.time()
        self._on_game_over = on_game_over

    def index(self, seat: Seat) -> int:
        return next(i for i, s in enumerate(self.seats) if s is seat)

    def spectator_view(self) -> dict[str, Any]:
        return spectator_view(self.game)

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
        player = self.index(seat)
        if self.game.is_over:
            return
        # Spec, General information: a disconnect ends the game, no points are counted.
        self.left.add(player)
        self._publish(self.game.apply(engine.Abandon(player)))

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
        if self._on_game_over is not None:
            try:
                self._on_game_over(self)
            except Exception:
                self.log.exception("recording the game failed")
        self.finish()


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
        else:
            actions.append(["abandon", action.player])
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
            actions.append(engine.Abandon(player))
    bag = tuple(engine.Tile.parse(t) for t in data["bag"])
    return engine.GameRecord(tuple(data["players"]), bag, actions=tuple(actions))


# --- wiring --------------------------------------------------------------------------


def spectrangle_lobby(services: Services) -> Lobby:
    """The server's lobby with Spectrangle registered and the store open."""
    lobby = server_lobby(services)
    if not lobby.has_game(GAME):
        create, restore = _room_factory(services)
        lobby.register_game(GAME, create, variants=TABLE_VARIANTS, restore=restore)
    return lobby


def name_rule(lobby: Lobby) -> None:
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
        if result is None:
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


# The services' resource of the Spectrangle listeners' hub (a cluster edge puts its own
# there first: meeple.node.chat, so chat outside a game reaches every edge's players).
HUB_RESOURCE = "spectrangle.hub"


class SpectrangleHub:
    """The listener's registered players, for chat outside a game."""

    def __init__(self) -> None:
        self.handlers: set[SpectrangleHandler] = set()

    def lobby_chat(self, sender: str, text: str) -> None:
        for handler in list(self.handlers):
            if handler.room is None:
                handler.deliver(ChatSaid(sender, text))


def create_listener(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    lobby = spectrangle_lobby(services)
    name_rule(lobby)
    hub: SpectrangleHub = services.resource(HUB_RESOURCE, SpectrangleHub)
    max_line = services.config.max_message_size

    def handler(conn: Connection) -> SpectrangleHandler:
        return SpectrangleHandler(conn, services, lobby, hub, max_line_size=max_line)

    return TcpListener(
        name,
        services.config.host,
        config.port,
        handler,
        clock=services.clock,
        idle_timeout=services.config.idle_timeout,
        limits=services.config.limits,
        budget=None if services.connections is None else services.connections.share(name),
    )


# --- the handler: one connection, one seat --------------------------------------------


class SpectrangleHandler:
    """One Spectrangle client: its session, its name, and its seat in the lobby and a room."""

    protocol = "spectrangle"
    variants = frozenset({(GAME, "standard")})

    def __init__(
        self,
        conn: Connection,
        services: Services,
        lobby: Lobby,
        hub: SpectrangleHub,
        *,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
    ) -> None:
        self.conn = conn
        self.services = services
        self.lobby = lobby
        self.hub = hub
        self.session = ServerSession(max_line_size=max_line_size)
        self.name = ""
        self.room: SpectrangleRoom | None = None
        self._closed = False
        self._drain_scheduled = False

    # --- ConnectionHandler ------------------------------------------------------------

    # Spec: one command per line: the listener counts lines unread.
    message_end = b"\n"

    def partial_bytes(self) -> int:
        """Bytes of the client's unfinished message (the listener's slowloris timer)."""
        return self.session.partial

    def too_fast(self) -> bytes:
        """The reply to a line dropped unread by the rate limit: ``invalidCommand``
        (spec, "Errors"), what any line it cannot take gets."""
        return ErrorReply(ErrorWord.INVALID_COMMAND).encode()

    def connection_made(self) -> None:
        """The client speaks first (connect); nothing to send."""

    def data_received(self, data: bytes) -> None:
        for event in self.session.receive_data(data):
            self._on_event(event)
        self._drain()

    def connection_lost(self, reason: str) -> None:
        self._closed = True
        self.hub.handlers.discard(self)
        if self.name:
            self.services.names.release(self.name, self)
        self.lobby.disconnect(self)
        self.room = None

    def farewell(self) -> bytes | None:
        """The spec has no line for a server shutting down: say nothing."""
        return None

    # --- requests from the client ----------------------------------------------------

    def _drain(self) -> None:
        """Hand out lines held back while a verdict was due, now that it was sent."""
        self._drain_scheduled = False
        while not self._closed:
            events = self.session.next_events()
            if not events:
                return
            for event in events:
                self._on_event(event)

    def _schedule_drain(self) -> None:
        # Deliveries arrive inside a room's or the lobby's call: hand held lines out on
        # the next loop turn, once that call (and a room's ending) is complete.
        if self.session.held_lines and not self._drain_scheduled and not self._closed:
            self._drain_scheduled = True
            asyncio.get_running_loop().call_soon(self._drain)

    def _on_event(self, event: ClientMessage | Rejected | PeerError) -> None:
        if isinstance(event, PeerError):
            # Never answered: two peers answering each other's errors bounce for ever.
            self.conn.refusals.note("client sent %s; ignored", event.word.value)
        elif isinstance(event, Rejected):
            self.conn.refusals.note(
                "refused: %s (%.80s)", event.error.word.value, event.error.reason
            )
            self.conn.send(event.data)
        elif isinstance(event, Connect):
            self._connect(event)
        elif isinstance(event, Request):
            self._request(event.players)
        elif isinstance(event, Place | Skip | Exchange):
            self._turn(event)
        elif isinstance(event, Chat):
            self._chat(event.text)

    def _connect(self, event: Connect) -> None:
        # The session holds the client's next lines until the verdict (NAMING): on a
        # cluster edge the answer comes once every edge's names were consulted.
        self.services.names.claim_then(event.name, self, lambda given: self._named(event, given))

    def _named(self, event: Connect, given: bool) -> None:
        if self._closed or self.conn.closing:
            if given:  # gone while the name was asked for
                self.services.names.release(event.name, self)
            return
        if not given:
            self.conn.log.info("name %s is taken", event.name)
            self._send(ErrorReply(ErrorWord.INVALID_NAME))
            self._schedule_drain()  # the lines held while the verdict was due
            return
        self.name = event.name
        self.hub.handlers.add(self)
        welcome = self.session.welcome()
        self.conn.log.info("connected as %s (extensions: %s)", self.name, welcome.extensions)
        self._send(welcome)
        self._schedule_drain()  # the lines held while the verdict was due

    def _request(self, players: int) -> None:
        key = QueueKey(GAME, players)
        try:
            self.lobby.join(key, self)
        except (
            KeyError,
            ValueError,
            TableError,
        ) as error:  # the session keeps players in a game out
            self.conn.log.warning("request refused by the lobby: %s", error)
            self._send(ErrorReply(ErrorWord.INVALID_COMMAND))

    def _turn(self, message: Place | Skip | Exchange) -> None:
        room = self.room
        if room is None or room.finished:  # the session only lets these through in a game
            self._send(ErrorReply(ErrorWord.INVALID_COMMAND))
            return
        room.submit(self, TurnCommand(message))

    def _chat(self, text: str) -> None:
        if self.room is not None:
            self.room.submit(self, RoomChat(text))
        else:
            self.hub.lobby_chat(self.name, text)

    # --- deliveries from the lobby and the room (Seat) -------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, QueueChanged):
            # A full queue is announced with the game (GameStarted), whose seats are
            # the queue's players in order; the lobby no longer lists them here.
            if event.waiting < event.key.players:
                self._send(Waiting(event.names))
        elif isinstance(event, GameStarted):
            self._started(event.game)
        elif isinstance(event, Halted):
            # Spectrangle 1.4 has no line for a game the server stops: the connection closes.
            self.conn.close("the server stopped the game (its store cannot keep it)")
        elif isinstance(event, Update):
            for message in messages_for(event.game, event.events):
                self._send(message)
            if event.game.is_over:
                self.room = None
        elif isinstance(event, RoomRejected):
            self.conn.log.info("move refused: %s", event.error)
            self._send(ErrorReply(error_word_for(event.error)))
        elif isinstance(event, ChatSaid) and self.session.chat_enabled:
            self._send(ChatFrom(event.sender, event.text))
        self._schedule_drain()

    def _started(self, game: engine.Game) -> None:
        # The seat's room: a SpectrangleRoom, or on a cluster edge the remote room
        # (meeple.node.edge.RemoteRoom) that takes its commands to the room's node.
        self.room = self.lobby.room_of(self)  # type: ignore[assignment]
        self._send(Waiting(game.players))
        for message in opening_messages(game):
            self._send(message)

    # --- output ------------------------------------------------------------------------

    def _send(self, message: ServerMessage) -> None:
        # A room may still deliver to a seat whose connection just went: drop those.
        if self._closed or self.conn.closing:
            return
        try:
            data = self.session.send(message)
        except LocalProtocolError as error:
            self.conn.log.warning("not sent (%s): %s", error.reason, message.to_line())
            return
        self.conn.send(data)

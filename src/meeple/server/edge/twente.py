"""The Twente v2 listener: each connection's handler is also its seat in a Scrabble room.

The sans-I/O :class:`~meeple.protocols.twente.ServerSession` parses and checks what
the client may send; this module turns its requests into lobby and room commands,
and room deliveries into Twente messages in the order ERRATA gives ("Happy flow"):
STARTGAME to all → NEWTILES (7) to each → NOTIFYTURN to all; after a move, NEWTILES
to the mover (drawn tiles only) → INFORMMOVE to all → NOTIFYTURN to all (or GAMEOVER).
"""

from __future__ import annotations

from meeple.games.scrabble import game as g
from meeple.games.scrabble.tiles import BLANK
from meeple.protocols.twente import messages
from meeple.protocols.twente.errors import ErrorCode, error_code_for
from meeple.protocols.twente.events import (
    Chat as ChatRequest,
)
from meeple.protocols.twente.events import (
    ConnectionClosed,
    Enqueue,
    Join,
    PeerError,
    PlayWord,
    Rejected,
)
from meeple.protocols.twente.events import (
    Exchange as ExchangeRequest,
)
from meeple.protocols.twente.events import (
    Pass as PassRequest,
)
from meeple.protocols.twente.session import ServerSession, State
from meeple.server.app import Services
from meeple.server.config import ListenerConfig
from meeple.server.edge.tcp import Connection, SessionFraming, TcpListener
from meeple.server.lobby.tables import (
    AlreadyPlaying,
    Origin,
    QueueChanged,
    QueueKey,
    TableError,
)
from meeple.server.ports import LobbyPort, RoomPort
from meeple.server.rooms.scrabble import (
    GAME,
    Chat,
    ChatSaid,
    ExchangeTiles,
    GameStarted,
    PassTurn,
    PlaceWord,
    PlayerLeft,
    Update,
    scrabble_lobby,
)
from meeple.server.rooms.scrabble import (
    Rejected as RoomRejected,
)

__all__ = ["SERVER_FLAGS", "TwenteHandler", "create_listener"]

# meeple relays chat and runs 3- and 4-player games (ERRATA: TEAMPLAY means that).
SERVER_FLAGS = frozenset({messages.Flag.CHAT, messages.Flag.TEAMPLAY})
VARIANT = "twente"


def create_listener(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    lobby = scrabble_lobby(services)
    max_size = services.config.max_message_size

    def handler(conn: Connection) -> TwenteHandler:
        return TwenteHandler(conn, services, lobby, max_message_size=max_size)

    return TcpListener.serving(services, name, config, handler)


def _wire_tiles(rack: str) -> str:
    return rack.replace(BLANK, messages.BLANK_ON_RACK)


# The ends a player's leaving caused, told as GAMEOVER DISCONNECT (issue 34.9).
_LEFT_ENDS = (g.EndReason.DISCONNECT, g.EndReason.RESIGNED, g.EndReason.ABORTED)


class TwenteHandler(SessionFraming):
    """One Twente client: its session, its name, and its seat in the lobby and a room."""

    protocol = "twente"
    # ENQUEUE only ever seats a Twente client at a Twente-variant table (blanks).
    variants = frozenset({(GAME, VARIANT)})

    def __init__(
        self, conn: Connection, services: Services, lobby: LobbyPort, *, max_message_size: int
    ) -> None:
        self.conn = conn
        # Counted when it opens a table (issue 30.7: tables per address, per connection).
        self.origin = Origin(conn.peer_host, conn.id)
        self.services = services
        self.lobby = lobby
        self.session: ServerSession = ServerSession(max_message_size=max_message_size)
        self.name = ""
        self._flags: frozenset[messages.Flag] = frozenset()
        self._room: RoomPort | None = None
        self._you = -1
        # The game as this seat was last told it (its own view: its rack, no other),
        # which the dialect reads; never the room's engine game (issue 32.3).
        self._seen: g.Game | None = None
        self.told_the_end = False  # the shutdown's GAMEOVER was sent (see farewell)

    # --- ConnectionHandler ------------------------------------------------------------

    # The framing (SessionFraming): spec "Messages", every message ends with 0x1E; the
    # listener counts them unread.
    def too_fast(self) -> bytes:
        """The reply to a message dropped unread by the rate limit: E003 (spec "Errors",
        "Invalid argument"), what an unreadable message gets; the state is unchanged."""
        return Rejected(messages.Error(ErrorCode.INVALID_ARGUMENT), "too fast").data

    def connection_made(self) -> None:
        """Twente clients speak first (ANNOUNCE); nothing to send."""

    def data_received(self, data: bytes) -> None:
        for event in self.session.receive_data(data):
            self._on_event(event)

    def connection_lost(self, reason: str) -> None:
        self.session.receive_eof()
        if self.name:
            self.services.names.release(self.name, self)
        self.lobby.disconnect(self)

    def farewell(self) -> bytes | None:
        """On shutdown a player in a game hears it end (spec: GAMEOVER DISCONNECT)."""
        game = None if self._room is None else self._seen
        if game is None or game.is_over or self.session.state is not State.GAME:
            return None
        scores = tuple(zip(game.players, game.scores, strict=True))
        # A move of this player's still in the room's inbox must not change the game
        # after these scores were told (the room skips what this seat sent).
        self.told_the_end = True
        return self._encode(messages.GameOver(messages.GameOverReason.DISCONNECT, scores))

    # --- requests from the client ----------------------------------------------------

    def _on_event(self, event: object) -> None:
        if isinstance(event, Rejected):
            self.conn.refusals.note("refused: %s (%.80s)", event.code.value, event.reason)
            self.conn.send(event.data)
        elif isinstance(event, Join):
            self._join(event)
        elif isinstance(event, Enqueue):
            self._enqueue(event.players)
        elif isinstance(event, PlayWord):
            self._to_room(PlaceWord(event.x, event.y, event.direction, event.word))
        elif isinstance(event, ExchangeRequest):
            self._to_room(ExchangeTiles(event.tiles.replace(messages.BLANK_ON_RACK, BLANK)))
        elif isinstance(event, PassRequest):
            self._to_room(PassTurn())
        elif isinstance(event, ChatRequest):
            self._chat(event.text)
        elif isinstance(event, PeerError):
            code = "an unreadable ERROR" if event.code is None else event.code.value
            self.conn.refusals.note("client reported %s; not answered", code)
        elif isinstance(event, ConnectionClosed):
            pass

    def _join(self, event: Join) -> None:
        # The session holds what comes after the ANNOUNCE until its reply (ANNOUNCING):
        # on a cluster edge the answer comes once every edge's names were consulted.
        self.services.names.claim_then(event.name, self, lambda given: self._named(event, given))

    def _named(self, event: Join, given: bool) -> None:
        if self.conn.closing or self.session.state is State.CLOSED:
            if given:  # gone while the name was asked for
                self.services.names.release(event.name, self)
            return
        if not given:
            self._send(messages.Error(ErrorCode.NAME_TAKEN))  # spec E001
        else:
            self.name = event.name
            self._flags = event.flags
            self.conn.log.debug("announced as %s", self.name)  # per connection: DEBUG (issue 30.7)
            self._send(messages.Welcome(event.name, SERVER_FLAGS))
        # Messages that arrived while the ANNOUNCE awaited its reply are handed out now.
        for held in self.session.receive_data(b""):
            self._on_event(held)

    def _enqueue(self, players: int) -> None:
        try:
            self.lobby.join(QueueKey(GAME, players, VARIANT), self)
        except AlreadyPlaying:
            self._send(messages.Error(ErrorCode.GAME_ALREADY_STARTED))  # spec E015
        except TableError as error:
            # No table of this kind can be had (a player count or variant the lobby does
            # not seat): spec E010, the refusal of a game request that sends the client
            # back to the lobby (a Twente client only ever asks for Twente tables).
            self.conn.log.info("game request refused: %s", error)
            self._send(
                messages.Error(ErrorCode.WRONG_NUMBER_OF_PLAYERS, self._queue_players(players))
            )

    def _queue_players(self, asked: int) -> int:
        """E010's player count (the spec requires one: "the queue that already exists"):
        the oldest open Twente table with a free seat, where a request opens nothing
        (issue 30.7: the tables this address may open are capped); else the count
        asked for."""
        for table in self.lobby.tables(GAME):
            if table.variant == VARIANT and len(table.seats) < table.size:
                return table.size
        return asked

    def _to_room(self, command: object) -> None:
        if self._room is None:  # the session only lets moves through in a game
            self._send(messages.Error(ErrorCode.NOT_IN_GAME))
            return
        self._room.submit(self, command)

    def _chat(self, text: str) -> None:
        # Chat goes to the players of the same game (issue 3); outside a game there is
        # no one to hear it, and the spec defines no error for that.
        if self._room is not None:
            self._room.submit(self, Chat(text))

    # --- deliveries from the lobby and the room (Seat) -------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, QueueChanged):
            self._send(messages.InformQueue(event.waiting, event.key.players))
        elif isinstance(event, GameStarted):
            self._started(event)
        elif isinstance(event, Update):
            self._update(event)
        elif isinstance(event, RoomRejected):
            self._send(messages.Error(error_code_for(event.error)))
        elif isinstance(event, ChatSaid):
            if messages.Flag.CHAT in self._flags:
                self._send(messages.NotifyChat(event.sender, event.text))
        elif isinstance(event, PlayerLeft):
            self._send(messages.PlayerDisconnected(event.name))

    def _started(self, event: GameStarted) -> None:
        self._room = self.lobby.room_of(self)
        self._you = event.you
        self._seen = event.game
        self._send(messages.StartGame(event.players))
        for e in event.opening:
            if isinstance(e, g.TilesDrawn) and e.player == event.you:
                self._send(messages.NewTiles(_wire_tiles(e.tiles)))
        for e in event.opening:
            if isinstance(e, g.TurnPassedTo):
                self._send(self._notify_turn(event.game, e.player))

    def _notify_turn(self, game: g.Game, player: int) -> messages.NotifyTurn:
        return messages.NotifyTurn(player == self._you, game.players[player])

    def _update(self, update: Update) -> None:
        game = update.game
        self._seen = game
        tiles: list[messages.ServerMessage] = []
        moves: list[messages.ServerMessage] = []
        after: list[messages.ServerMessage] = []
        for e in update.events:
            if isinstance(e, g.TilesDrawn):
                if e.player == self._you and e.tiles:
                    tiles.append(messages.NewTiles(_wire_tiles(e.tiles)))
            elif isinstance(e, g.PlayMade):
                m = e.move
                moves.append(
                    messages.InformWord(game.players[e.player], m.x, m.y, m.direction, m.word)
                )
            elif isinstance(e, g.Exchanged):
                moves.append(messages.InformSwap(game.players[e.player], e.count))
            elif isinstance(e, g.Passed):
                # ERRATA: a pass is announced as a swap of no tiles.
                moves.append(messages.InformSwap(game.players[e.player], 0))
            elif isinstance(e, g.TurnPassedTo):
                after.append(self._notify_turn(game, e.player))
            elif isinstance(e, g.GameEnded):
                after = [self._game_over(game, e.result)]
        for message in (*tiles, *moves, *after):
            self._send(message)
        if game.is_over:
            self._room = None

    def _game_over(self, game: g.Game, result: g.GameResult) -> messages.GameOver:
        if result.reason in _LEFT_ENDS:
            # ERRATA: no winner; the disconnected player's score is 0. Twente has no word
            # for a resigned or aborted game: the player who quit counts as disconnected.
            scores = tuple(
                (name, 0 if i == result.player else score)
                for i, (name, score) in enumerate(zip(game.players, result.scores, strict=True))
            )
            return messages.GameOver(messages.GameOverReason.DISCONNECT, scores)
        return messages.GameOver(
            messages.GameOverReason.WIN, tuple(zip(game.players, result.scores, strict=True))
        )

    # --- output ------------------------------------------------------------------------

    def _encode(self, message: messages.ServerMessage) -> bytes:
        return self.session.send(message)

    def _send(self, message: messages.ServerMessage) -> None:
        # A room may still deliver to a seat whose connection just went (the room hears
        # of it through its inbox, after events already queued): drop those.
        if self.conn.closing or self.session.state is State.CLOSED:
            return
        self.conn.send(self._encode(message))

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
from typing import TYPE_CHECKING

from meeple.games import spectrangle as engine
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
    error_word_for,
    messages_for,
    opening_messages,
)
from meeple.server.config import ListenerConfig
from meeple.server.edge.tcp import Connection, SessionFraming, TcpListener
from meeple.server.lobby.tables import (
    Origin,
    QueueChanged,
    QueueKey,
    TableError,
)
from meeple.server.ports import LobbyPort, RoomPort
from meeple.server.rooms.room import Halted
from meeple.server.rooms.spectrangle import (
    GAME,
    ChatSaid,
    GameStarted,
    RoomChat,
    RoomRejected,
    TurnCommand,
    Update,
    name_rule,
    spectrangle_lobby,
)

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = [
    "SpectrangleHandler",
    "SpectrangleHub",
    "create_listener",
]


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
    # A cluster edge puts its own hub there first (meeple.node.chat), so that chat
    # outside a game reaches every edge's players.
    if services.chat_hub is None:
        services.chat_hub = SpectrangleHub()
    hub = services.chat_hub
    max_line = services.config.max_message_size

    def handler(conn: Connection) -> SpectrangleHandler:
        return SpectrangleHandler(conn, services, lobby, hub, max_line_size=max_line)

    return TcpListener.serving(services, name, config, handler)


# --- the handler: one connection, one seat --------------------------------------------


class SpectrangleHandler(SessionFraming):
    """One Spectrangle client: its session, its name, and its seat in the lobby and a room."""

    protocol = "spectrangle"
    variants = frozenset({(GAME, "standard")})

    def __init__(
        self,
        conn: Connection,
        services: Services,
        lobby: LobbyPort,
        hub: SpectrangleHub,
        *,
        max_line_size: int = DEFAULT_MAX_LINE_SIZE,
    ) -> None:
        self.conn = conn
        # Counted when it opens a table (issue 30.7: tables per address, per connection).
        self.origin = Origin(conn.peer_host, conn.id)
        self.services = services
        self.lobby = lobby
        self.hub = hub
        self.session: ServerSession = ServerSession(max_line_size=max_line_size)
        self.name = ""
        self.room: RoomPort | None = None
        self._closed = False
        self._drain_scheduled = False

    # --- ConnectionHandler ------------------------------------------------------------

    # The framing (SessionFraming): spec, one command per line; the listener counts lines
    # unread.
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
        self.conn.log.debug("connected as %s (extensions: %s)", self.name, welcome.extensions)
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
        self.room = self.lobby.room_of(self)
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

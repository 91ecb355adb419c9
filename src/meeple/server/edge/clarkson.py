"""The Clarkson listener: each connection's handler is also its seat at a table and a room.

The sans-I/O :class:`~meeple.protocols.clarkson.ServerSession` parses and checks what
the client may send; this module turns its requests into table, lobby and room
commands, and room deliveries into Clarkson messages in the RFC's order (§4.1).

Tables (how meeple reads "the server" of RFC §3.7–§3.9, §4): the RFC describes one
game per server, started once every connected client has said READY, with a lone
client allowed to play. meeple serves many games at once, so a client whose HELLO is
accepted sits at the lobby's oldest open READY table of the ``clarkson`` variant with a
free seat (4 seats, the most a Scrabble game takes; a new one opens when none has room).
Other seats may sit there too (a bot, a browser): the table is the lobby's, not this
listener's. It is told USERJOIN for everyone already there and they are told of it
(:class:`~meeple.server.lobby.tables.SeatJoined`, §3.7); USERCHANGE goes to the table (§3.6).
When everyone at a table is READY (one alone included, §3.8) the table becomes a game:
its players are seated in a :class:`ScrabbleRoom` of the ``clarkson`` variant, in the
order they joined, and the next client opens a new table. A client that leaves a
table before the game (QUIT or a dropped connection) is simply gone (the RFC has no
message for it); if the rest are all ready, their game starts. After WINNER a client
is back in the lobby at no table; READY seats it at the open table again (told
USERJOIN for who is there), already counted as ready, so players who linger after a
game never hold a table up.

Order of messages (§3.10–§3.16, §4.1): at the start STARTING, SCORE 0 for every
player, BOARDPUSH, TILES (own), TURN. After a turn the mover gets ``OK`` and its
TILES, then everyone SCORE (the mover's total), BOARDPUSH, and TURN — or, when the
game ended, SCORE for every player (final totals after the rack rule) and WINNER.
A player who quits mid-game leaves the others playing (ERRATA; LeavePolicy.CONTINUE):
they only hear TURN if it was the leaver's turn.

Names (§3.5) are claimed with ``claim_then``: on a cluster edge the answer comes after a
bus round trip (names are unique across edges, docs/cluster.md), and the client's next
lines are not read until it has come (at most :data:`HELD_LINES` lines' worth).
"""

from __future__ import annotations

import platform
from collections import deque
from collections.abc import Callable, Iterator

from meeple.games.scrabble import game as g
from meeple.protocols.clarkson import messages, replies
from meeple.protocols.clarkson.session import (
    Close,
    ConnectionClosed,
    Greeted,
    PeerNok,
    Reply,
    ServerEvent,
    ServerSession,
    State,
)
from meeple.server.app import Services
from meeple.server.config import ListenerConfig
from meeple.server.edge.tcp import Connection, SessionFraming, TcpListener
from meeple.server.lobby.tables import (
    Origin,
    QueueChanged,
    QueueKey,
    SeatJoined,
    SeatRenamed,
    StartRule,
    TableError,
    TooManyTables,
)
from meeple.server.ports import LobbyPort, RoomPort
from meeple.server.rooms.scrabble import (
    GAME,
    ExchangeTiles,
    GameStarted,
    PassTurn,
    PlaceTiles,
    PlayerLeft,
    Update,
    scrabble_lobby,
)
from meeple.server.rooms.scrabble import Rejected as RoomRejected

__all__ = ["VARIANT", "ClarksonHandler", "create_listener"]

VARIANT = "clarkson"
NO_TABLE = "no table here plays the Clarkson variant"
TABLE_SIZE = g.VARIANTS[VARIANT].max_players
# Lines a client may send while its connection waits for the name registry's answer
# (on a cluster edge, a bus round trip): at most this many bytes, times the line limit.
HELD_LINES = 16


def create_listener(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    lobby = scrabble_lobby(services)
    # Seats of other kinds (a browser) at a Clarkson table are shown in USERJOIN & co.
    lobby.name_rule(
        "scrabble",
        VARIANT,
        "clarkson",
        messages.is_valid_name,
        "RFC §2: a letter, then letters and digits",
    )
    hello = messages.meeple_hello(platform.platform())
    max_size = services.config.max_message_size

    def handler(conn: Connection) -> ClarksonHandler:
        return ClarksonHandler(conn, services, lobby, hello=hello, max_line_size=max_size)

    return TcpListener.serving(services, name, config, handler)


def _highest(scores: tuple[int, ...]) -> tuple[int, ...]:
    """The seats with the highest of ``scores`` (every seat when they are all equal)."""
    best = max(scores, default=0)
    return tuple(i for i, score in enumerate(scores) if score == best)


def _clamp(score: int) -> int:
    # RFC §2 <number> has no sign; a total below zero (rack penalties) is sent as 0.
    return max(0, score)


# Default names (<ip>, <ip>-2, …) tried before the connection is given up (issue 32.6:
# with the reserved names unreadable every one is refused).
DEFAULT_NAME_TRIES = 16


class ClarksonHandler(SessionFraming):
    """One Clarkson client: its session, its name, its table, and its seat in a room."""

    protocol = "clarkson"
    # The RFC has no blanks (two random letters, §4.2): only Clarkson-variant tables.
    variants = frozenset({(GAME, VARIANT)})

    def __init__(
        self,
        conn: Connection,
        services: Services,
        lobby: LobbyPort,
        *,
        hello: messages.ServerMessage,
        max_line_size: int,
    ) -> None:
        self.conn = conn
        # Counted when it opens a table (issue 30.7: tables per address, per connection).
        self.origin = Origin(conn.peer_host, conn.id)
        self.names = services.names
        self.lobby = lobby
        self.session: ServerSession = ServerSession(max_line_size=max_line_size)
        self.name = ""
        self._hello = hello
        self._room: RoomPort | None = None
        self._you = -1
        # The game as this seat was last told it (its own view: its rack, no other),
        # which the dialect reads; never the room's engine game (issue 32.3).
        self._seen: g.Game | None = None
        # While a name is asked for (the registry answers later on a cluster edge), the
        # client's next lines wait: the rest of a read, then later reads.
        self._asking = False
        self._paused: Iterator[ServerEvent] | None = None
        self._later: deque[bytes] = deque()
        self._held_bytes = 0
        self._max_held = HELD_LINES * max_line_size

    # --- ConnectionHandler ------------------------------------------------------------

    # The framing (SessionFraming): §2, lines end with CRLF (a bare LF, or NUL,
    # accepted); the listener counts them unread.
    def too_fast(self) -> bytes:
        """The reply to a line dropped unread by the rate limit: NOK (§3.4, the one
        error reply: the command failed and changed nothing)."""
        return messages.Nok(replies.TOO_FAST).encode()

    def connection_made(self) -> None:
        """§3.1: the server says HELLO first; §3.5: the default name is the client's IP."""
        self.send(self._hello)
        self._default_name("".join(self.conn.peer_host.split()) or "unknown", 1)

    def data_received(self, data: bytes) -> None:
        if self._asking:
            if self._held_bytes + len(data) > self._max_held:
                self.conn.refusals.note("%d bytes sent while a name was asked; dropped", len(data))
                return
            self._later.append(data)
            self._held_bytes += len(data)
            return
        self._read(self.session.events(data))

    def _read(self, events: Iterator[ServerEvent]) -> None:
        # One line at a time: the answer to each command goes out before the next line
        # (a QUIT in the same read, say) moves the session on.
        for event in events:
            self._on_event(event)
            if self._asking:  # the rest waits for the name registry's answer
                self._paused = events
                return

    def _ask_name(self, name: str, then: Callable[[bool], None]) -> None:
        """Claim ``name``; ``then`` is told whether it was given, and the lines that came
        meanwhile are read after it."""

        def answered(given: bool) -> None:
            self._asking = False
            try:
                then(given)
            finally:
                if not self._asking:  # ``then`` may ask for another name
                    self._read_on()

        self._asking = True
        self.names.claim_then(name, self, answered)

    def _read_on(self) -> None:
        events, self._paused = self._paused, None
        if events is not None:
            self._read(events)
        while self._later and not self._asking:
            data = self._later.popleft()
            self._held_bytes -= len(data)
            self._read(self.session.events(data))

    @property
    def _gone(self) -> bool:
        return self.conn.closing or self.session.state is State.CLOSED

    def connection_lost(self, reason: str) -> None:
        self.session.receive_eof()
        # Leaving the table first: the others, all ready, may start now (as before).
        self.lobby.leave(self)
        self.names.release(self.name, self)
        self.lobby.disconnect(self)

    def farewell(self) -> bytes | None:
        """On shutdown every client hears GOODBYE (§3.1: the server ends the connection)."""
        if self.session.closed:
            return None
        return self.session.send(messages.Goodbye())

    def _default_name(self, host: str, n: int, tries: int = 1) -> None:
        # Several clients from one address would share a name the RFC says must refer to
        # one client (§3.5): the second is "<ip>-2", and so on. Names held here are
        # skipped at once; one held elsewhere (another cluster edge) is refused later.
        candidate = host
        while True:
            candidate = host if n == 1 else f"{host}-{n}"
            if self.names.holder(candidate) in (None, self):
                break
            n += 1

        def answered(given: bool) -> None:
            if given and self._gone:
                self.names.release(candidate, self)
            elif given:
                self.name = self.session.name = candidate
            elif self._gone:
                pass
            elif tries < DEFAULT_NAME_TRIES:
                self._default_name(host, n + 1, tries + 1)
            else:
                # Every candidate refused: the names cannot be checked against the
                # reserved names now (fail closed, issue 32.6) and the client would have
                # no name; it hears why and GOODBYE rather than waiting on a loop.
                self.conn.log.warning("no default name for %s: closing", host)
                self.send(messages.Nok(replies.NO_NAME_NOW))
                self.conn.send(self.session.send(messages.Goodbye()))
                self.conn.close("no name can be given")

        self._ask_name(candidate, answered)

    # --- requests from the client ----------------------------------------------------

    def _on_event(self, event: object) -> None:
        if isinstance(event, Reply):
            self.conn.refusals.note("refused: %.80s", event.reason)
            self.conn.send(event.data)
        elif isinstance(event, PeerNok):
            self.conn.refusals.note("client sent NOK %r; not answered", event.description[:80])
        elif isinstance(event, Close):
            self.conn.log.debug("goodbye (%s)", event.reason)
            self.conn.send(event.data)
            self.conn.close(event.reason)
        elif isinstance(event, Greeted):
            self.conn.log.debug(
                "hello %s (%s, %s)", event.hello.version, event.hello.program, event.hello.system
            )
            self.conn.send(event.data)
            self._sit()
        elif isinstance(event, messages.UserSet):
            self._rename(event.name)
        elif isinstance(event, messages.Ready):
            self._ready()
        elif isinstance(event, messages.Place):
            self._to_room(PlaceTiles(event.placements))
        elif isinstance(event, messages.Pass):
            self._to_room(PassTurn())
        elif isinstance(event, messages.Exchange):
            self._exchange(event.tiles)
        elif isinstance(event, ConnectionClosed):
            pass

    def _rename(self, new: str) -> None:
        if self._seated:  # the table started; the game's names are fixed
            self.send(messages.Nok(replies.NAME_IN_GAME))
            return
        self._ask_name(new, lambda given: self._renamed(new, given))

    def _renamed(self, new: str, given: bool) -> None:
        old = self.name
        same = new.casefold() == old.casefold()  # one name to the registry
        if given and not same and (self._gone or self._seated):
            self.names.release(new, self)  # gone, or the table started meanwhile
        if self._gone:
            return
        if not given:
            self.send(messages.Nok(replies.NAME_TAKEN))  # §3.5
            return
        if self._seated:
            self.send(messages.Nok(replies.NAME_IN_GAME))
            return
        if not same:
            self.names.release(old, self)
        self.name = new
        self.conn.log.info("renamed %s -> %s", old, new)
        # §3.6: USERCHANGE to everyone at the table; the client itself first (§4.1).
        self.send(messages.UserChange(old, new))
        self.lobby.renamed(self, old)

    @property
    def _seated(self) -> bool:
        """The table started: in a game (or about to be)."""
        room = self.lobby.room_of(self)
        return room is not None and not room.finished

    def _sit(self) -> None:
        """Sit at the open Clarkson table (USERJOIN both ways come from the lobby)."""
        try:
            self.lobby.join(QueueKey(GAME, TABLE_SIZE, VARIANT), self, rule=StartRule.READY)
        except TableError as error:
            # §3.4: NOK with a description. Only the lobby's own state can bring this
            # (the client is only ever offered Clarkson-variant tables).
            self.conn.log.info("no table: %s", error)
            # Issue 30.7: the address's or connection's open tables are capped; say so.
            self.send(messages.Nok(str(error) if isinstance(error, TooManyTables) else NO_TABLE))

    def _ready(self) -> None:
        again = self.lobby.is_ready(self)
        self.send(messages.Ok(replies.ALREADY_READY if again else replies.READY_OK))
        if self.lobby.table_of(self) is None:
            # Back from a game (or never seated): READY seats the client again.
            self._sit()
        self.lobby.ready(self)

    def _exchange(self, tiles: str | None) -> None:
        game = None if self._room is None else self._seen
        if tiles is None and game is not None:
            # §3.16: a bare EXCHANGE swaps the whole hand.
            tiles = game.rack(self._you)
        self._to_room(ExchangeTiles(tiles or ""))

    def _to_room(self, command: object) -> None:
        if self._room is None:  # the session only lets turns through in a game
            self.send(messages.Nok(replies.NOT_STARTED))
            return
        self._room.submit(self, command)

    # --- from the table, the lobby and the room (Seat) -------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, QueueChanged):
            pass  # the table, not a queue, is what a Clarkson client knows of
        elif isinstance(event, SeatJoined):
            self.send(messages.UserJoin(event.name))  # §3.7
        elif isinstance(event, SeatRenamed):
            self.send(messages.UserChange(event.old, event.new))  # §3.6
        elif isinstance(event, GameStarted):
            self._started(event)
        elif isinstance(event, Update):
            self._update(event)
        elif isinstance(event, RoomRejected):
            self.send(replies.nok_for(event.error))
        elif isinstance(event, PlayerLeft):
            self.conn.log.info("%s left the game", event.name)

    def _started(self, event: GameStarted) -> None:
        # A ScrabbleRoom; on a cluster edge a RemoteRoom (meeple.node.edge) with the same
        # submit and the seat's view of the game.
        self._room = self.lobby.room_of(self)
        self._you = event.you
        self._seen = event.game
        game = event.game
        self.send(messages.Starting())
        for name in event.players:
            self.send(messages.Score(0, name))  # §3.10: SHOULD be sent at the beginning
        self.send(messages.BoardPush.from_board(game.board))
        for e in event.opening:
            if isinstance(e, g.TilesDrawn) and e.player == event.you:
                self.send(messages.Tiles(e.tiles))  # §3.12: also at the start of the game
        for e in event.opening:
            if isinstance(e, g.TurnPassedTo):
                self.send(messages.Turn(game.players[e.player]))

    def _update(self, update: Update) -> None:
        game = update.game
        self._seen = game
        for e in update.events:
            if isinstance(e, g.PlayMade | g.Exchanged | g.Passed):
                self._turn_done(game, e)
            elif isinstance(e, g.TurnPassedTo):
                self.send(messages.Turn(game.players[e.player]))
            elif isinstance(e, g.GameEnded):
                self._game_over(game, e.result)

    def _turn_done(self, game: g.Game, e: g.PlayMade | g.Exchanged | g.Passed) -> None:
        if e.player == self._you:
            text = (
                replies.TURN_OK
                if isinstance(e, g.PlayMade)
                else replies.EXCHANGE_OK
                if isinstance(e, g.Exchanged)
                else replies.PASS_OK
            )
            self.send(messages.Ok(text))
            self.send(
                messages.Tiles(game.rack(self._you))
            )  # §3.12: at the end of the client's turn
        self.send(messages.Score(_clamp(e.total), game.players[e.player]))  # §3.10: the total
        self.send(messages.BoardPush.from_board(game.board))  # §3.11: after every turn

    def _game_over(self, game: g.Game, result: g.GameResult) -> None:
        for name, score in zip(game.players, result.scores, strict=True):
            self.send(messages.Score(_clamp(score), name))  # final totals, after the rack rule
        # §3.17: the server MUST send WINNER when the game ends, an end with no winner
        # too (an abort from a browser seat, issue 34.4, stored unrated and winnerless):
        # then the highest score at that moment, as at an early QUIT (§4; ERRATA).
        winners = result.winners or _highest(result.scores)
        for w in winners:
            self.send(messages.Winner(_clamp(result.scores[w]), game.players[w]))
        self._room = None

    # --- output ------------------------------------------------------------------------

    def send(self, message: messages.ServerMessage) -> None:
        """Send one message now; dropped once the connection is closing."""
        # A room may still deliver to a seat whose connection just went (the room hears
        # of it through its inbox, after events already queued): drop those.
        if self.conn.closing or self.session.state is State.CLOSED:
            return
        self.conn.send(self.session.send(message))

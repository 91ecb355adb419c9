"""The Clarkson listener: each connection's handler is also its seat at a table and a room.

The sans-I/O :class:`~meeple.protocols.clarkson.ServerSession` parses and checks what
the client may send; this module turns its requests into table, lobby and room
commands, and room deliveries into Clarkson messages in the RFC's order (§4.1).

Tables (how meeple reads "the server" of RFC §3.7–§3.9, §4): the RFC describes one
game per server, started once every connected client has said READY, with a lone
client allowed to play. meeple serves many games at once, so each listener keeps
*tables*: a client whose HELLO is accepted sits at the open table (a new one opens
when it holds 4 players, the most a Scrabble game takes). It is told USERJOIN for
everyone already there and they are told USERJOIN for it (§3.7); USERCHANGE goes to
the table (§3.6). When everyone at a table is READY (one alone included, §3.8) the
table becomes a game: its players are seated in a :class:`ScrabbleRoom` of the
``clarkson`` variant through the shared lobby, in the order they joined, and the next
client opens a new table. A client that leaves a table before the game (QUIT or a
dropped connection) is simply gone (the RFC has no message for it); if the rest are
all ready, their game starts. After WINNER a client is back in the lobby at no
table; READY seats it at the open table again (told USERJOIN for who is there),
already counted as ready, so players who linger after a game never hold a table up.

Order of messages (§3.10–§3.16, §4.1): at the start STARTING, SCORE 0 for every
player, BOARDPUSH, TILES (own), TURN. After a turn the mover gets ``OK`` and its
TILES, then everyone SCORE (the mover's total), BOARDPUSH, and TURN — or, when the
game ended, SCORE for every player (final totals after the rack rule) and WINNER.
A player who quits mid-game leaves the others playing (ERRATA; LeavePolicy.CONTINUE):
they only hear TURN if it was the leaver's turn.
"""

from __future__ import annotations

import platform

from meeple.games.scrabble import game as g
from meeple.protocols.clarkson import replies
from meeple.protocols.clarkson.messages import (
    BoardPush,
    Exchange,
    Goodbye,
    Nok,
    Ok,
    Pass,
    Place,
    Ready,
    Score,
    ServerMessage,
    Starting,
    Tiles,
    Turn,
    UserChange,
    UserJoin,
    UserSet,
    Winner,
    meeple_hello,
)
from meeple.protocols.clarkson.session import (
    Close,
    ConnectionClosed,
    Greeted,
    PeerNok,
    Reply,
    ServerSession,
    State,
)
from meeple.server.app import Services
from meeple.server.config import ListenerConfig
from meeple.server.lobby import Lobby, QueueChanged, QueueKey
from meeple.server.names import NameRegistry
from meeple.server.scrabble import (
    GAME,
    ExchangeTiles,
    GameStarted,
    PassTurn,
    PlaceTiles,
    PlayerLeft,
    ScrabbleRoom,
    Update,
    scrabble_lobby,
)
from meeple.server.scrabble import Rejected as RoomRejected
from meeple.server.tcp import Connection, TcpListener

__all__ = ["VARIANT", "ClarksonHandler", "Table", "Tables", "create_listener"]

VARIANT = "clarkson"
TABLE_SIZE = g.VARIANTS[VARIANT].max_players


def create_listener(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    lobby = scrabble_lobby(services)
    tables = Tables(lobby)
    hello = meeple_hello(platform.platform())
    max_size = services.config.max_message_size

    def handler(conn: Connection) -> ClarksonHandler:
        return ClarksonHandler(conn, services.names, tables, hello=hello, max_line_size=max_size)

    return TcpListener(
        name,
        services.config.host,
        config.port,
        handler,
        clock=services.clock,
        idle_timeout=services.config.idle_timeout,
        limits=services.config.limits,
    )


class Table:
    """Clients waiting together for a game; it starts when all of them are READY."""

    def __init__(self) -> None:
        self.members: list[ClarksonHandler] = []
        self.ready: set[int] = set()  # id() of the members who said READY

    @property
    def all_ready(self) -> bool:
        return bool(self.members) and all(id(m) in self.ready for m in self.members)


class Tables:
    """One listener's tables (see the module docstring); turns a full-ready table into a game."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.open: list[Table] = []

    def join(self, member: ClarksonHandler) -> Table:
        """Seat ``member`` at the open table; USERJOIN both ways (§3.7)."""
        table = next((t for t in self.open if len(t.members) < TABLE_SIZE), None)
        if table is None:
            table = Table()
            self.open.append(table)
        for other in table.members:
            member.send(UserJoin(other.name))
            other.send(UserJoin(member.name))
        table.members.append(member)
        return table

    def ready(self, member: ClarksonHandler, table: Table) -> None:
        """``member`` said READY: start the table's game if everyone is ready (§3.8)."""
        table.ready.add(id(member))
        self._start_if_ready(table)

    def leave(self, member: ClarksonHandler, table: Table) -> None:
        """``member`` left before the game; the others may all be ready now."""
        if member in table.members:
            table.members.remove(member)
        table.ready.discard(id(member))
        if not table.members:
            if table in self.open:
                self.open.remove(table)
            return
        self._start_if_ready(table)

    def _start_if_ready(self, table: Table) -> None:
        if not table.all_ready or table not in self.open:
            return
        self.open.remove(table)
        players = list(table.members)
        key = QueueKey(GAME, len(players), VARIANT)
        for p in players:
            p.seated()
        # The queue of this key fills with exactly these players, synchronously: the
        # lobby makes the room and starts it (GameStarted comes from the room's task).
        for p in players:
            self.lobby.join(key, p)


def _clamp(score: int) -> int:
    # RFC §2 <number> has no sign; a total below zero (rack penalties) is sent as 0.
    return max(0, score)


class ClarksonHandler:
    """One Clarkson client: its session, its name, its table, and its seat in a room."""

    protocol = "clarkson"

    def __init__(
        self,
        conn: Connection,
        names: NameRegistry,
        tables: Tables,
        *,
        hello: ServerMessage,
        max_line_size: int,
    ) -> None:
        self.conn = conn
        self.names = names
        self.tables = tables
        self.lobby = tables.lobby
        self.session = ServerSession(max_line_size=max_line_size)
        self.name = ""
        self._hello = hello
        self._table: Table | None = None
        self._seated = False  # the table started: in a game (or about to be)
        self._room: ScrabbleRoom | None = None
        self._you = -1

    # --- ConnectionHandler ------------------------------------------------------------

    def partial_bytes(self) -> int:
        """Bytes of the client's unfinished message (the listener's slowloris timer)."""
        return self.session.partial

    def connection_made(self) -> None:
        """§3.1: the server says HELLO first; §3.5: the default name is the client's IP."""
        self.name = self._default_name(self.conn.peer_host)
        self.session.name = self.name
        self.send(self._hello)

    def data_received(self, data: bytes) -> None:
        for event in self.session.receive_data(data):
            self._on_event(event)

    def connection_lost(self, reason: str) -> None:
        self.session.receive_eof()
        if self._table is not None:
            table, self._table = self._table, None
            self.tables.leave(self, table)
        self.names.release(self.name, self)
        self.lobby.disconnect(self)

    def farewell(self) -> bytes | None:
        """On shutdown every client hears GOODBYE (§3.1: the server ends the connection)."""
        if self.session.closed:
            return None
        return self.session.send(Goodbye())

    def _default_name(self, host: str) -> str:
        # Several clients from one address would share a name the RFC says must refer to
        # one client (§3.5): the second is "<ip>-2", and so on.
        host = "".join(host.split()) or "unknown"
        candidate, n = host, 1
        while not self.names.claim(candidate, self):
            n += 1
            candidate = f"{host}-{n}"
        return candidate

    # --- requests from the client ----------------------------------------------------

    def _on_event(self, event: object) -> None:
        if isinstance(event, Reply):
            self.conn.log.info("refused: %s", event.reason)
            self.conn.send(event.data)
        elif isinstance(event, PeerNok):
            self.conn.log.info("client sent NOK %r; not answered", event.description[:80])
        elif isinstance(event, Close):
            self.conn.log.info("goodbye (%s)", event.reason)
            self.conn.send(event.data)
            self.conn.close(event.reason)
        elif isinstance(event, Greeted):
            self.conn.log.info(
                "hello %s (%s, %s)", event.hello.version, event.hello.program, event.hello.system
            )
            self.conn.send(event.data)
            self._table = self.tables.join(self)
        elif isinstance(event, UserSet):
            self._rename(event.name)
        elif isinstance(event, Ready):
            self._ready()
        elif isinstance(event, Place):
            self._to_room(PlaceTiles(event.placements))
        elif isinstance(event, Pass):
            self._to_room(PassTurn())
        elif isinstance(event, Exchange):
            self._exchange(event.tiles)
        elif isinstance(event, ConnectionClosed):
            pass

    def _rename(self, new: str) -> None:
        if self._seated:  # the table started; the game's names are fixed
            self.send(Nok(replies.NAME_IN_GAME))
            return
        if not self.names.claim(new, self):
            self.send(Nok(replies.NAME_TAKEN))  # §3.5
            return
        old = self.name
        if new != old:
            self.names.release(old, self)
        self.name = new
        self.conn.log.info("renamed %s -> %s", old, new)
        # §3.6: USERCHANGE to everyone at the table; the client itself first (§4.1).
        self.send(UserChange(old, new))
        if self._table is not None:
            for other in self._table.members:
                if other is not self:
                    other.send(UserChange(old, new))

    def _ready(self) -> None:
        table = self._table
        again = table is not None and id(self) in table.ready
        self.send(Ok(replies.ALREADY_READY if again else replies.READY_OK))
        if table is None:
            # Back from a game (or never seated): READY seats the client again.
            table = self._table = self.tables.join(self)
        self.tables.ready(self, table)

    def _exchange(self, tiles: str | None) -> None:
        room = self._room
        if tiles is None and room is not None:
            # §3.16: a bare EXCHANGE swaps the whole hand.
            tiles = room.game.rack(self._you)
        self._to_room(ExchangeTiles(tiles or ""))

    def _to_room(self, command: object) -> None:
        if self._room is None:  # the session only lets turns through in a game
            self.send(Nok(replies.NOT_STARTED))
            return
        self._room.submit(self, command)

    # --- from the table, the lobby and the room (Seat) -------------------------------

    def seated(self) -> None:
        """The table became a game: no more renames; the room's GameStarted follows."""
        self._seated = True
        self._table = None

    def deliver(self, event: object) -> None:
        if isinstance(event, QueueChanged):
            pass  # the table, not a queue, is what a Clarkson client knows of
        elif isinstance(event, GameStarted):
            self._started(event)
        elif isinstance(event, Update):
            self._update(event)
        elif isinstance(event, RoomRejected):
            self.send(replies.nok_for(event.error))
        elif isinstance(event, PlayerLeft):
            self.conn.log.info("%s left the game", event.name)

    def _started(self, event: GameStarted) -> None:
        room = self.lobby.room_of(self)
        self._room = room if isinstance(room, ScrabbleRoom) else None
        self._you = event.you
        game = event.game
        self.send(Starting())
        for name in event.players:
            self.send(Score(0, name))  # §3.10: SHOULD be sent at the beginning
        self.send(BoardPush.from_board(game.board))
        for e in event.opening:
            if isinstance(e, g.TilesDrawn) and e.player == event.you:
                self.send(Tiles(e.tiles))  # §3.12: also at the start of the game
        for e in event.opening:
            if isinstance(e, g.TurnPassedTo):
                self.send(Turn(game.players[e.player]))

    def _update(self, update: Update) -> None:
        game = update.game
        for e in update.events:
            if isinstance(e, g.PlayMade | g.Exchanged | g.Passed):
                self._turn_done(game, e)
            elif isinstance(e, g.TurnPassedTo):
                self.send(Turn(game.players[e.player]))
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
            self.send(Ok(text))
            self.send(Tiles(game.rack(self._you)))  # §3.12: at the end of the client's turn
        self.send(Score(_clamp(e.total), game.players[e.player]))  # §3.10: the total
        self.send(BoardPush.from_board(game.board))  # §3.11: after every turn

    def _game_over(self, game: g.Game, result: g.GameResult) -> None:
        for name, score in zip(game.players, result.scores, strict=True):
            self.send(Score(_clamp(score), name))  # final totals, after the rack rule
        for w in result.winners:
            self.send(Winner(_clamp(result.scores[w]), game.players[w]))  # §3.17
        self._room = None
        self._seated = False

    # --- output ------------------------------------------------------------------------

    def send(self, message: ServerMessage) -> None:
        """Send one message now; dropped once the connection is closing."""
        # A room may still deliver to a seat whose connection just went (the room hears
        # of it through its inbox, after events already queued): drop those.
        if self.conn.closing or self.session.state is State.CLOSED:
            return
        self.conn.send(self.session.send(message))

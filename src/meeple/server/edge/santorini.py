"""The AM27 Santorini listener: each connection's handler is also its seat in a room.

The sans-I/O :class:`~meeple.protocols.santorini.ServerSession` frames, parses and
checks what a client may send in its state; this module turns its messages into lobby
and room commands, and room deliveries into AM27 messages:

- greeting: the stream header and SERVERSTATE ``{open: true, active: <a game waits>}``.
  A SERVERSTATE is only ever the greeting, or the answer to a refused REGISTER or the
  end of the client's game: never pushed to a client that has not registered when
  ``active`` changes, as the group's server does (transcript 183.430), because another
  team's client read such a push as the answer to the REGISTER it had just sent
  (issue 22; docs/protocols/santorini.md "Flow and decisions");
- REGISTER (A) joins the lobby queue for (``nPlayers``, gods or not); (B) joins the
  fullest waiting game, and with none waiting starts a 2-player game without gods. A
  nickname taken (case-insensitive, server-wide) or unusable is INFO NICKNAME, an
  ``nPlayers`` other than 2 or 3 INFO INVALID; either is followed by SERVERSTATE and
  the client may register again;
- the room (:class:`~meeple.server.rooms.santorini.SantoriniRoom`) owns the engine game.
  The challenger is drawn by the room's seeded RNG; with gods the challenger offers
  ``players`` gods (GODINIT once per god, each answered by a fresh GODLISTMESSAGE naming
  who acts), then each player takes one (the challenger last); PLAYERSMESSAGE to all
  names the challenger, who sends CHOSESTARTER; then UPDATEs (ERRATA: off-turn players
  get empty maps and all flags false; ``boardUpdate`` lists the cells changed since the
  last update);
- a refused action (rules, turn, sender) gets INFO and a fresh state message: UPDATE
  with the whole board in play, GODLISTMESSAGE / PLAYERSMESSAGE in the set-up;
- a win: UPDATE, then ENDGAME ``{isWinner: true, player: winner}`` to all, then
  SERVERSTATE; the connection stays for another game. A player out of a 3-player game
  (LOSE, or stuck) gets ENDGAME ``{isWinner: false, player: self}`` and SERVERSTATE;
  the others play on. A player gone (closed, or silent for ``heartbeat_timeout``) ends
  the game: the others get ENDGAME ``{isWinner: false, player: gone}`` (ERRATA);
- heartbeat: PING every ``ping_interval`` on the injected clock (ERRATA);
- chat: AM27 has no chat message, so an AM27 client neither sends nor hears chat; the
  room still takes :class:`Chat` from the seats that have it (the browser) and
  broadcasts :class:`ChatSaid`, which the AM27 handler ignores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meeple.games import santorini as engine
from meeple.games.santorini import Game, Phase, RuleError
from meeple.protocols.santorini import messages as m
from meeple.protocols.santorini.events import ConnectionClosed, Ignored, Rejected
from meeple.protocols.santorini.framing import STREAM_HEADER
from meeple.protocols.santorini.session import Heartbeat, LocalProtocolError, ServerSession, State
from meeple.server.config import ListenerConfig
from meeple.server.edge.tcp import Connection, SessionFraming, TcpListener
from meeple.server.lobby.tables import Origin, QueueKey, TableError
from meeple.server.ports import LobbyPort, RoomPort
from meeple.server.rooms.room import Halted
from meeple.server.rooms.santorini import (
    ATHEIST,
    GAME,
    MAX_NICKNAME,
    VARIANTS,
    Changed,
    Dropped,
    Fresh,
    GameStarted,
    PickGod,
    Refresh,
    Refused,
    santorini_lobby,
)

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.clock import Timer

__all__ = [
    "SantoriniHandler",
    "SantoriniHub",
    "create_listener",
]


class SantoriniHub:
    """What the listener's connections share: whether a game waits for players, and
    which one a REGISTER (B) joins."""

    def __init__(self, lobby: LobbyPort) -> None:
        self.lobby = lobby

    def keys(self) -> list[QueueKey]:
        return [QueueKey(GAME, n, v) for n in (2, 3) for v in VARIANTS.values()]

    @property
    def active(self) -> bool:
        return any(self.lobby.waiting(k) for k in self.keys())

    def waiting_game(self) -> QueueKey | None:
        """The queue a REGISTER (B) joins: the one closest to starting."""
        best = max(self.keys(), key=lambda k: (len(self.lobby.waiting(k)), -k.players))
        return best if self.lobby.waiting(best) else None


def create_listener(services: Services, name: str, config: ListenerConfig) -> TcpListener:
    lobby = santorini_lobby(services)
    hub = SantoriniHub(lobby)

    def handler(conn: Connection) -> SantoriniHandler:
        return SantoriniHandler(conn, services, hub)

    return TcpListener.serving(services, name, config, handler)


# --- the handler = seat ---------------------------------------------------------------


def _cell(c: engine.Cell) -> m.Cell:
    row, column = engine.coordinates(c)
    return m.Cell(row, column)


def _engine_cell(c: m.Cell) -> engine.Cell:
    return engine.cell(c.row, c.column)


def _levels(state: engine.GameState, c: engine.Cell) -> tuple[int, ...]:
    """ERRATA: top first, ``[3,2,1,0]``; a dome adds 4 on top (``[4,0]`` on the ground)."""
    levels = tuple(range(state.levels[c], -1, -1))
    return (4, *levels) if state.domes[c] else levels


def _info_code(error: RuleError) -> m.InfoCode:
    if isinstance(error, engine.NotYourTurn | engine.WrongPhase | engine.GameIsOver):
        return m.InfoCode.WAIT
    if isinstance(error, engine.CellOccupied | engine.Occupied):
        return m.InfoCode.OCCUPIED
    return m.InfoCode.INVALID


class SantoriniHandler(SessionFraming):
    """One AM27 client: its session, heartbeat, nickname, and seat in a room."""

    protocol = "santorini"
    variants = frozenset((GAME, v) for v in VARIANTS.values())

    def __init__(self, conn: Connection, services: Services, hub: SantoriniHub) -> None:
        self.conn = conn
        # Counted when it opens a table (issue 30.7: tables per address, per connection).
        self.origin = Origin(conn.peer_host, conn.id)
        self.services = services
        self.hub = hub
        self.lobby = hub.lobby
        options = services.config.santorini
        self.session: ServerSession = ServerSession(
            max_message_size=services.config.max_message_size, framing=options.framing
        )
        self.heartbeat = Heartbeat(
            services.clock.now(),
            interval=options.ping_interval,
            timeout=options.heartbeat_timeout,
        )
        self.name = ""
        self._room: RoomPort | None = None
        # The room of the game this client plays now, as its deliveries name it: a left
        # game's deliveries (out of a 3-player game) name another (issue 32.3).
        self._uid = ""
        self._players: tuple[str, ...] = ()
        self._you = -1
        self._timer: Timer | None = None
        self._too_fast: tuple[str, bytes] | None = None  # (nickname, INFO WAIT bytes)

    # --- ConnectionHandler ------------------------------------------------------------

    # ERRATA (framing): clients send one JSON envelope per line, or (liberal) a Java
    # object stream of strings; either way the framer finds the messages' ends unread,
    # and the listener counts them against the budget (issue 30.2; SessionFraming).
    def skip_messages(self, data: bytes) -> None:
        """Messages the listener refused unread: the framer steps over them (an object
        stream's strings keep their handles); a stream found broken is closed."""
        super().skip_messages(data)
        if self.session.broken:
            self.conn.close("unreadable object stream")

    def too_fast(self) -> bytes:
        """The reply to a message refused unread by the rate limit: INFO WAIT (ERRATA:
        "not now"), the state unchanged. Encoded once per nickname: a flood gets
        thousands of them."""
        cached = self._too_fast
        if cached is not None and cached[0] == self.name and self.session.state is not State.CLOSED:
            return cached[1]
        try:
            data = self.session.send(m.Info(self.name, m.InfoCode.WAIT.value))
        except LocalProtocolError:
            return b""
        if not data.startswith(STREAM_HEADER):  # the header goes once only
            self._too_fast = (self.name, data)
        return data

    def connection_made(self) -> None:
        self._greet()
        self._timer = self.services.clock.call_later(self.heartbeat.interval, self._beat)

    def data_received(self, data: bytes) -> None:
        self.heartbeat.heard(self.services.clock.now())
        for event in self.session.receive_data(data):
            self._on_event(event)
        if self.session.broken:
            self.conn.close("unreadable object stream")

    def connection_lost(self, reason: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.session.receive_eof()
        self._release_name()
        self.lobby.disconnect(self)

    def farewell(self) -> bytes | None:
        return None

    # --- heartbeat ------------------------------------------------------------------

    def _beat(self) -> None:
        if self.conn.closing:
            return
        if self.heartbeat.expired(self.services.clock.now()):
            self.conn.log.info("silent for %.1f s; closing", self.heartbeat.timeout)
            self.conn.close("heartbeat timeout")
            return
        self._send(m.Ping("ping"))
        self._timer = self.services.clock.call_later(self.heartbeat.interval, self._beat)

    # --- requests from the client ----------------------------------------------------

    def _on_event(self, event: object) -> None:
        if isinstance(event, Rejected):
            self.conn.refusals.note("refused: %s (%.80s)", event.code.value, event.reason)
            self._send(m.Info(self.name, event.code.value))
            if self._room is not None:
                self._room.submit(self, Refresh())
        elif isinstance(event, Ignored):
            self.conn.refusals.note("ignored: %.80s", event.reason)
        elif isinstance(event, m.Register):
            self._register(event)
        elif isinstance(event, m.GodInit):
            self._to_room(PickGod(event.god_name))
        elif isinstance(event, m.ChooseStarter):
            seat = self._players.index(event.starter) if event.starter in self._players else -1
            self._to_room(engine.ChooseStarter(-1, seat))
        elif isinstance(event, m.WorkerInit):
            sex = engine.Sex(event.sex)
            self._to_room(engine.PlaceWorker(-1, _engine_cell(event.cell), sex))
        elif isinstance(event, m.Move):
            self._to_room(
                engine.Move(-1, _engine_cell(event.source), _engine_cell(event.destination))
            )
        elif isinstance(event, m.Build):
            src, dst = _engine_cell(event.source), _engine_cell(event.destination)
            self._to_room(engine.Build(-1, src, dst, event.level))
        elif isinstance(event, m.Undo):
            self._to_room(engine.Undo(-1, event.all))
        elif isinstance(event, m.Pass):
            self._to_room(engine.Pass(-1))
        elif isinstance(event, m.Lose):
            self._to_room(engine.Lose(-1))
        elif isinstance(event, m.Ping | ConnectionClosed):
            pass

    def _register(self, request: m.Register) -> None:
        nickname = request.nickname.strip()
        usable = 0 < len(nickname) <= MAX_NICKNAME and nickname.isprintable()
        if not usable:
            self._nickname_refused(request)
            return
        # The session takes nothing but PING until the reply (REGISTERED): on a cluster
        # edge the answer comes once every edge's names were consulted.
        self.services.names.claim_then(
            nickname, self, lambda given: self._named(request, nickname, given)
        )

    def _nickname_refused(self, request: m.Register) -> None:
        self.conn.log.info("nickname %r refused", request.nickname[:40])
        self._send(m.Info(request.nickname.strip(), m.InfoCode.NICKNAME.value))
        self._greet()

    def _named(self, request: m.Register, nickname: str, given: bool) -> None:
        if self.conn.closing or self.session.state is State.CLOSED:
            if given:  # gone while the name was asked for
                self.services.names.release(nickname, self)
            return
        if not given:
            self._nickname_refused(request)
            return
        self.name = nickname
        if request.n_players is None:
            # (B) joins the waiting game; with none waiting (it filled meanwhile) it
            # starts one with the defaults, as an (A) for 2 players without gods.
            key = self.hub.waiting_game() or QueueKey(GAME, 2, VARIANTS[False])
        else:
            if request.n_players not in (2, 3):
                self._send(m.Info(nickname, m.InfoCode.INVALID.value))
                self._release_name()
                self._greet()
                return
            key = QueueKey(GAME, request.n_players, VARIANTS[bool(request.gods)])
        self.conn.log.info("%s registers for %s", nickname, key)
        try:
            self.lobby.join(key, self)
        except (ValueError, TableError):  # still in a game that has not let it go
            self._send(m.Info(nickname, m.InfoCode.INVALID.value))
            self._release_name()
            self._greet()
            return

    def _to_room(self, command: object) -> None:
        if self._room is None:
            self._send(m.Info(self.name, m.InfoCode.WAIT.value))
            return
        self._room.submit(self, command)

    # --- deliveries (Seat) ----------------------------------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, GameStarted):
            self._room = self.lobby.room_of(self)
            self._uid = event.room
            self._players = event.players
            self._you = event.you
            return
        if isinstance(event, Halted):
            # AM27 has no word for a game the server stops: the connection closes.
            self.conn.close("the server stopped the game (its store cannot keep it)")
            return
        if self._room is None or getattr(event, "room", self._uid) != self._uid:
            return  # from a game this client has left (out of a 3-player game)
        if isinstance(event, Changed):
            self._changed(event)
        elif isinstance(event, Refused):
            self._send(m.Info(self.name, _info_code(event.error).value))
            self._fresh(event.game)
        elif isinstance(event, Fresh):
            self._fresh(event.game)
        elif isinstance(event, Dropped):
            self._send(m.EndGame(event.name, False))
            self._back_to_lobby()

    def _changed(self, event: Changed) -> None:
        game = event.game
        state = game.state
        for e in event.events:
            if isinstance(e, engine.PlayerLost) and e.player == self._you and not game.is_over:
                # Out of a 3-player game; the others play on.
                self._send(self._update(game, event.before))
                self._send(m.EndGame(self.name, False))
                # Free the seat in the lobby now (the room plays on without it); the
                # room ignores a leaving player who is already out.
                self.lobby.disconnect(self)
                self._back_to_lobby()
                return
        if state.phase in (Phase.POOL, Phase.GODS):
            self._send(self._god_list(game))
        elif state.phase is Phase.STARTER:
            self._send(self._players_message(game))
        elif state.phase in (Phase.PLACE, Phase.PLAY):
            self._send(self._update(game, event.before))
        else:  # OVER
            if event.before.phase is Phase.PLAY:
                self._send(self._update(game, event.before))
            winner = game.winner
            if winner is not None:
                self._send(m.EndGame(self._players[winner], True))
            self._back_to_lobby()

    def _fresh(self, game: Game) -> None:
        phase = game.phase
        if phase in (Phase.POOL, Phase.GODS):
            self._send(self._god_list(game))
        elif phase is Phase.STARTER:
            self._send(self._players_message(game))
        elif phase in (Phase.PLACE, Phase.PLAY):
            self._send(self._update(game, None))

    def _god_list(self, game: Game) -> m.GodList:
        gods = tuple(
            m.God(name, engine.power_of(name).description) for name in game.available_gods()
        )
        return m.GodList(self._players[game.state.turn], gods)

    def _players_message(self, game: Game) -> m.Players:
        gods = game.state.gods
        pairs = tuple(
            (name, (gods[i] if i < len(gods) else None) or ATHEIST)
            for i, name in enumerate(self._players)
        )
        return m.Players(self._players[game.challenger], pairs)

    def _update(self, game: Game, before: engine.GameState | None) -> m.Update:
        """The recipient's UPDATE: the cells changed since ``before`` (None: the whole
        board that holds something), and its options when it is its turn."""
        state = game.state
        if before is None:
            cells: tuple[int, ...] = tuple(
                c
                for c, w in enumerate(state.occupancy())
                if w is not None or state.levels[c] or state.domes[c]
            )
        else:
            cells = engine.changed_cells(before, state)
        occupancy = state.occupancy()
        board = []
        for c in cells:
            worker = occupancy[c]
            owner = sex = None
            if worker is not None:
                owner = self._players[engine.owner(worker)]
                sex = engine.sex_of(worker).value
            board.append((_cell(c), m.CellState(_levels(state, c), owner, sex)))
        me = self._you
        reachable = tuple(
            (_cell(w), tuple(_cell(c) for c in cells_))
            for w, cells_ in sorted(game.reachable_cells(me).items())
        )
        buildable = tuple(
            (_cell(w), tuple((_cell(c), levels) for c, levels in sorted(options.items())))
            for w, options in sorted(game.buildable_cells(me).items())
        )
        active = "" if state.is_over else self._players[state.turn]
        return m.Update(
            active,
            tuple(board),
            reachable,
            buildable,
            can_place_worker=game.can_place_worker(me),
            can_pass=game.can_pass(me),
            can_undo=game.can_undo(me),
        )

    def _back_to_lobby(self) -> None:
        """The game is over for this client: SERVERSTATE again, ready to register."""
        self._room = None
        self._uid = ""
        self._players = ()
        self._you = -1
        self._release_name()
        self._greet()

    # --- output -----------------------------------------------------------------------

    def _greet(self) -> None:
        # §2.1, once per time in the lobby: a stale ``active`` is harmless, since (A)
        # opens or joins the queue it names and (B) with no game waiting starts one.
        self._send(m.ServerState(True, self.hub.active))

    def _release_name(self) -> None:
        if self.name:
            self.services.names.release(self.name, self)
            self.name = ""

    def _send(self, message: m.ServerMessage) -> None:
        if self.conn.closing or self.session.state is State.CLOSED:
            return
        try:
            data = self.session.send(message)
        except LocalProtocolError:
            self.conn.log.exception("not sent: %s", message.TYPE.value)
            return
        self.conn.send(data)

"""The browser's seat: a dialect like Twente's, for every game, at the lobby's tables.

A :class:`WebSeat` is one WebSocket's player. The connection hands it the play
messages its session let through (:meth:`WebSeat.handle`); it turns them into lobby
calls (create a table, sit, rejoin, add a bot, ready, leave) and room commands, and
renders what the lobby and the room deliver as browser messages:

- ``Seated`` (table, name, rejoin token) when the lobby seats it, ``Unseated`` when
  another connection took the seat with the token;
- after every room delivery, the whole game as this seat may see it
  (``games/<game>/view.py`` ``seat_view``: the spectator view plus its own rack or
  hand) as one ``seat`` message — the browser never applies diffs, so a rejoin's
  resync is just the next view;
- a refused move as ``error`` ``illegal`` with the engine's reason, to this seat
  only (the room answers a refusal to its sender), then the view again;
- a lobby refusal as ``error`` ``refused``;
- chat: a ``chat`` line goes to the seat's room as that game's chat command (Scrabble
  ``Chat``, Spectrangle ``RoomChat``, Santorini ``Chat``); every chat line said in the
  room comes back as ``chat`` (this seat's own too). Before the game starts (or after
  it ends) there is no room: ``error`` ``not-now``. Faster than the session's chat
  rate limit: ``error`` ``too-fast``. The socket stays either way;
- a Scrabble ``preview`` as the engine's verdict on the tiles, never applied
  (``games/scrabble/view.py`` ``preview``), within the session's rate limit.

The seat is ``rejoinable``: when its WebSocket drops mid-game the lobby holds it for
the grace period, and a new WebSocket that sends ``rejoin`` with the token takes it
back. The token takes the seat from a WebSocket still open too (a second tab of the
browser): the old one is told ``unseated`` (reason ``rejoined``) and is back in the
lobby, its name gone with the seat. Outgoing messages go through a small outbox that
the connection drains; a view replaces a view not yet sent (only the latest matters),
so a slow browser never makes the server queue a game's history.

On a cluster edge (:mod:`meeple.node.web`) the same seat plays through the edge's lobby
(:class:`meeple.node.edge.EdgeLobby`): its lobby calls and rejoin are answered later by
other nodes (``Seated`` or a :class:`~meeple.server.lobby.tables.TableError` is delivered), and
its room is a stand-in whose view the room's owner built (``seat_data``,
:func:`seat_view_json`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meeple.games import santorini as santorini_engine
from meeple.games import spectrangle as spectrangle_engine
from meeple.games.santorini import view as santorini_view
from meeple.games.scrabble import game as scrabble_engine
from meeple.games.scrabble import view as scrabble_view
from meeple.games.scrabble.lexicon import LEXICONS, Lexicon, load_lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.spectrangle import view as spectrangle_view
from meeple.protocols import web as proto
from meeple.server.lobby.tables import (
    Dismissed,
    Origin,
    QueueChanged,
    Replaced,
    Seated,
    SeatJoined,
    SeatRenamed,
    StartRule,
    Table,
    TableError,
    lobby_port,
)
from meeple.server.rooms import santorini as santorini_room
from meeple.server.rooms import scrabble as scrabble_room
from meeple.server.rooms import spectrangle as spectrangle_room
from meeple.server.rooms.room import Abort, AbortRefused, Halted, Resign, Room

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.ports import LobbyPort, RoomPort

__all__ = [
    "OUTBOX_SIZE",
    "WebSeat",
    "games_ready",
    "lexicon_name",
    "register_games",
    "seat_view_json",
]

logger = logging.getLogger(__name__)

OUTBOX_SIZE = 32
# What a seat hears of a game the server stopped (Santorini, Spectrangle: their own
# protocols close the connection; docs/durability.md, Faults).
HALTED = "the server could not store this game and stopped it"
_REFUSALS = (scrabble_room.Rejected, santorini_room.Refused, spectrangle_room.RoomRejected)
_LOBBY_NOTICES = (QueueChanged, SeatJoined, SeatRenamed, Dismissed)
_CHAT_SAID = (scrabble_room.ChatSaid, santorini_room.ChatSaid, spectrangle_room.ChatSaid)


_TABLE_MESSAGES = (proto.CreateTable, proto.Sit, proto.Rejoin, proto.AddBot)


def register_games(services: Services) -> LobbyPort:
    """The server's lobby with every game registered, so a browser can open any table."""
    santorini_room.santorini_lobby(services)
    spectrangle_room.spectrangle_lobby(services)
    return scrabble_room.scrabble_lobby(services)


async def games_ready(services: Services) -> LobbyPort:
    """:func:`register_games` without blocking the event loop.

    With no Scrabble listener running, the first browser to open or join a table is
    the first to need the lexicon, and a first load compiles it (seconds for a large
    word list). It is loaded once, in a worker thread, while the loop goes on serving
    every other connection. If it cannot be loaded, the error is logged once and the
    other games are still registered (a Scrabble table is then refused as a game the
    lobby does not have)."""
    lobby = lobby_port(services)
    if services.table_lexicons is None:
        # The word lists a table may choose (docs/web.md, "Word lists"), off the loop too.
        if services.table_lexicons_loading is None:
            services.table_lexicons_loading = asyncio.ensure_future(
                asyncio.to_thread(scrabble_room.load_table_lexicons, services.config.table_lexicons)
            )
        try:
            more = await asyncio.shield(services.table_lexicons_loading)
        except Exception as e:
            logger.error("the tables' other word lists are unavailable: %s", e)
            more = {}
        if services.table_lexicons is None:
            services.table_lexicons = more
    if lobby.has_game(scrabble_room.GAME) or services.lexicon is not None:
        return register_games(services)
    if services.lexicon_loading is None:
        services.lexicon_loading = _load_lexicon(services)
    try:
        lexicon = await asyncio.shield(services.lexicon_loading)
    except Exception:  # reported by _lexicon_failed
        santorini_room.santorini_lobby(services)
        return spectrangle_room.spectrangle_lobby(services)
    if services.lexicon is None:
        services.lexicon = lexicon
    return register_games(services)


def _load_lexicon(services: Services) -> asyncio.Future[Lexicon]:
    task = asyncio.ensure_future(asyncio.to_thread(load_lexicon, services.config.lexicon))
    task.add_done_callback(_lexicon_failed)
    return task


def _lexicon_failed(task: asyncio.Future[Lexicon]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("scrabble tables are unavailable: %s", task.exception())


class WebSeat:
    """One browser's player; see the module docstring."""

    protocol = "web"
    rejoinable = True
    variants = None  # the browser can show every variant of every game

    def __init__(
        self,
        services: Services,
        session: proto.ServerSession,
        may_use: Callable[[str], bool] | None = None,
        origin: Origin | None = None,
    ) -> None:
        self.services = services
        # The browser's address and connection: tables it opens count against them
        # (issue 30.7; None: not counted, a cluster edge's, whose leader counts none).
        self.origin = origin
        # Whether this browser may play as a name (reserved names: web/accounts.py).
        self.may_use = may_use or (lambda _name: True)
        self.lobby = lobby_port(services)
        self.session = session
        self.name = ""
        self.token = ""
        self.table = ""
        self.outbox: list[proto.ServerMessage] = []
        self.ready = asyncio.Event()  # the outbox has something

    # --- requests from the browser --------------------------------------------------------

    async def prepare(self, message: object) -> None:
        """Before :meth:`handle`: a message that opens or joins a table needs every game
        at the lobby (the lexicon loads once, off the loop: :func:`games_ready`)."""
        if isinstance(message, (*_TABLE_MESSAGES, proto.Preview)):
            # A preview checks words with the table's word list (a cluster edge's
            # room has only the seat's view, without it: _preview).
            await games_ready(self.services)

    def handle(self, message: object) -> None:
        """Carry out one play message the session let through; replies go to the outbox."""
        try:
            if isinstance(message, proto.CreateTable):
                self._create(message)
            elif isinstance(message, proto.Sit):
                self._claim(message.name)
                self._sit(message.table)
            elif isinstance(message, proto.Rejoin):
                self._rejoin(message.token)
            elif isinstance(message, proto.AddBot):
                try:
                    self.lobby.add_bot(message.table, message.level, by=self)
                except ValueError as e:  # not one of the server's levels
                    raise _Refused(str(e)) from None
            elif isinstance(message, proto.Ready):
                self.lobby.ready(self)
            elif isinstance(message, proto.Leave):
                # Mid-game this resigns (issue 24): the room ends the game "resigned"
                # (issue 34.9), or applies its leave rule where the others play on.
                room = self.lobby.room_of(self)
                if room is not None and not room.finished:
                    room.submit(self, Resign())
                self.lobby.quit(self)
                self._stood_up()
            elif isinstance(message, proto.Abort):
                self._abort()
            elif isinstance(message, proto.Play):
                self._play(message)
            elif isinstance(message, proto.Chat):
                self._chat(message)
            elif isinstance(message, proto.Preview):
                self._preview(message)
        except TableError as e:
            taken = isinstance(e, _NameTaken)
            code = proto.ErrorCode.NAME_TAKEN if taken else proto.ErrorCode.REFUSED
            self._put(proto.Error(code, str(e)[:200]))

    def _claim(self, name: str) -> None:
        if name != self.name:
            if not self.may_use(name):
                raise _Refused(f"the name {name} is reserved: sign in as it at /account")
            if not self.services.names.claim(name, self):
                raise _NameTaken(f"the name {name} is taken")
            if self.name:
                self.services.names.release(self.name, self)
            self.name = name

    def _create(self, m: proto.CreateTable) -> None:
        rule = StartRule.READY if m.start == "ready" else StartRule.FULL
        # A table's own choices (issue 24): a clock, a Scrabble word list.
        settings = {"clock": m.clock} if m.clock else {}
        if m.lexicon:
            settings.update(self._lexicon_setting(m.game, m.lexicon))
        self._claim(m.name)
        table = self.lobby.create_table(m.game, m.variant, m.size, rule, settings, opener=self)
        try:
            self._sit(table.id)
        except TableError:
            self.lobby.leave(self)
            raise

    def _lexicon_setting(self, game: str, name: str) -> dict[str, str]:
        """A table's ``lexicon`` setting: none for the server's default word list; refused
        for a game without words or a list the server has not loaded."""
        if game != scrabble_room.GAME:
            raise _Refused(f"a {game} table has no word list")
        default = lexicon_name(self.services.config.lexicon)
        loaded = self.services.lexicon
        if name == getattr(loaded, "name", default):
            return {}
        offered = scrabble_room.table_lexicons(self.services)
        if name not in offered:
            choices = ", ".join([getattr(loaded, "name", default), *offered])
            raise _Refused(f"this server has no word list {name} for tables (it has {choices})")
        return {"lexicon": name}

    def _sit(self, table_id: str) -> None:
        try:
            self.lobby.sit(table_id, self)
        except TableError:
            if self.lobby.table_of(self) is None and self.lobby.room_of(self) is None:
                self._release()
            raise

    def _rejoin(self, token: str) -> None:
        self._release()  # the seat's own name comes back with it
        self.name = ""
        # Names this seat; in a game Resumed follows. None: a cluster edge's lobby.
        place = self.lobby.rejoin(token, self)
        if not isinstance(place, Room | Table):
            # A cluster edge asks the room's owner: Seated (or a refusal) is delivered
            # when it answers (meeple.node.edge.EdgeLobby.rejoin).
            return
        self.token = token
        self.table = place.uid if isinstance(place, Room) else place.id
        self.session.seated()
        self._put(proto.Seated(self.table, self.name, token))

    def _play(self, m: proto.Play) -> None:
        room = self.lobby.room_of(self)
        if room is None or room.finished:
            self._put(proto.Error(proto.ErrorCode.NOT_NOW, "the game has not started"))
            return
        try:
            command = _command(room, m)
        except ValueError as e:
            self._put(proto.Error(proto.ErrorCode.BAD_MESSAGE, str(e)[:200]))
            return
        room.submit(self, command)

    def _abort(self) -> None:
        """Issue 34.4: the room ends the game "aborted" if this seat's player has not
        moved yet, else refuses (``error`` ``illegal``); either way a view follows."""
        room = self.lobby.room_of(self)
        if room is None or room.finished:
            self._put(proto.Error(proto.ErrorCode.NOT_NOW, "no game to abort"))
            return
        room.submit(self, Abort())

    def _chat(self, m: proto.Chat) -> None:
        room = self.lobby.room_of(self)
        if room is None or room.finished:
            # Decision: chat is for the players of a game; a table's seats on other
            # protocols could not all hear it (Twente and AM27 have no chat outside one).
            self._put(proto.Error(proto.ErrorCode.NOT_NOW, "chat opens when the game starts"))
            return
        refusal = self.session.chat_refusal(self.services.clock.now())
        if refusal is not None:
            self._put(refusal)
            return
        room.submit(self, _chat_command(room, m.text))

    # --- the Scrabble preview (issue 13) -------------------------------------------------

    def _preview(self, m: proto.Preview) -> None:
        """The engine's verdict on ``m``'s tiles for this seat's own rack, not applied.

        Read from the room's game without going through the room: nothing changes and no
        other seat hears of it.
        """
        refusal = self.session.preview_refusal(self.services.clock.now())
        if refusal is not None:
            self._put(refusal)
            return
        room = self.lobby.room_of(self)
        game = None if room is None else room.game
        you = None if room is None else room.seat_index(self)
        if room is None or you is None or not isinstance(game, scrabble_engine.Game):
            self._put(proto.Error(proto.ErrorCode.NOT_NOW, "no Scrabble game to preview a play in"))
            return
        words = None
        if game.lexicon is None and game.variant.challenge.checks_on_play:
            # The seat's view of a room on another node (a cluster edge's): its table's
            # word list, loaded here too (prepare).
            try:
                words = scrabble_room.lexicon_of(self.services, getattr(room, "lexicon_name", None))
            except KeyError:
                self._put(
                    proto.Error(proto.ErrorCode.NOT_NOW, "this server lacks the game's words")
                )
                return
        tiles = tuple(Placement(y=y, x=x, tile=t) for x, y, t in m.tiles)
        result = scrabble_view.preview(game, you, tiles, lexicon=words)
        self._put(proto.PreviewReply(m.id, tuple(result.items())))

    # --- deliveries from the lobby and the room (Seat) ------------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, _CHAT_SAID):
            self._put(proto.ChatLine(event.sender, event.text))
            return  # the game did not change: no new view
        if isinstance(event, Replaced):
            # Another connection has the seat and the name now (lobby.rejoin).
            self.session.unseated()
            self.name = self.token = self.table = ""
            self._put(proto.Unseated(event.table, "rejoined"))
            return
        if isinstance(event, TableError):
            # A lobby on other nodes answers later (a cluster edge): its refusal.
            if self.lobby.table_of(self) is None and self.lobby.room_of(self) is None:
                self._stood_up()
            self._put(proto.Error(proto.ErrorCode.REFUSED, str(event)[:200]))
            return
        if isinstance(event, Seated):
            self.token, self.table = event.token, event.table
            self.session.seated()
            self._put(proto.Seated(event.table, self.name, event.token))
        elif isinstance(event, _LOBBY_NOTICES):
            return  # the lobby topic shows tables to every page
        elif isinstance(event, _REFUSALS):
            self._put(proto.Error(proto.ErrorCode.ILLEGAL, str(event.error)[:200]))
        elif isinstance(event, AbortRefused):
            self._put(proto.Error(proto.ErrorCode.ILLEGAL, event.reason[:200]))
        elif isinstance(event, Halted):
            self._put(proto.Error(proto.ErrorCode.NOT_NOW, HALTED))
            self._stood_up(keep_name=True)
            return
        self._view()

    def _view(self) -> None:
        room = self.lobby.room_of(self)
        if room is None:
            return
        told = getattr(room, "seat_data", None)
        if told is not None:
            # A room on another node (meeple.node.edge.RemoteRoom): the view its owner
            # built for this seat with seat_view_json, delivered with the event.
            data, text = told
        elif isinstance(room, Room):
            you = room.seat_index(self)
            if you is None:
                return
            data = _seat_view(room, you)
            if data is None:
                return
            text = json.dumps(data, separators=(",", ":"))
        else:
            return
        self._put(proto.SeatView(room.game_name, room.uid, text))
        if data.get("over") or getattr(room.game, "is_over", False):
            self._stood_up(keep_name=True)

    # --- the connection is gone -----------------------------------------------------------

    def connection_lost(self) -> None:
        """The WebSocket closed: the lobby holds the seat mid-game, else it leaves."""
        self._release()
        self.lobby.disconnect(self)

    # --- inside ---------------------------------------------------------------------------

    def _stood_up(self, *, keep_name: bool = False) -> None:
        self.session.unseated()
        if not keep_name:
            self._release()

    def _release(self) -> None:
        if self.name:
            self.services.names.release(self.name, self)

    def _put(self, message: proto.ServerMessage) -> None:
        if isinstance(message, proto.SeatView):
            # A full view makes any view not yet sent obsolete.
            self.outbox = [m for m in self.outbox if not isinstance(m, proto.SeatView)]
        if isinstance(message, proto.PreviewReply) or _too_fast(message):
            # Likewise a preview: only the answer to the latest question matters, and one
            # too-fast says it for a whole flood (which so never pushes a view out).
            kind = type(message)
            self.outbox = [
                m
                for m in self.outbox
                if not (type(m) is kind and (kind is not proto.Error or _too_fast(m)))
            ]
        self.outbox.append(message)
        del self.outbox[:-OUTBOX_SIZE]
        self.ready.set()

    def take(self) -> list[proto.ServerMessage]:
        """Everything queued for the browser, oldest first (the connection sends them)."""
        out, self.outbox = self.outbox, []
        self.ready.clear()
        return out


def _too_fast(message: proto.ServerMessage) -> bool:
    return isinstance(message, proto.Error) and message.code is proto.ErrorCode.TOO_FAST


class _Refused(TableError):
    pass


class _NameTaken(_Refused):
    """Another connection holds the name (answered ``name-taken``, not ``refused``)."""


def lexicon_name(configured: str) -> str:
    """The name a configured lexicon (a registered name or a word-list path) loads as."""
    return configured if configured in LEXICONS else Path(configured).name


def seat_view_json(room: Room, you: int) -> str | None:
    """The ``seat`` message's data for seat ``you`` of ``room`` (None: a game without a
    view): what a cluster's rooms node sends a browser seat on another node."""
    data = _seat_view(room, you)
    return None if data is None else json.dumps(data, separators=(",", ":"))


def _seat_view(room: Room, you: int) -> dict[str, Any] | None:
    game = getattr(room, "game", None)
    if isinstance(game, scrabble_engine.Game):
        view = scrabble_view.seat_view(game, you)
        view["lexicon"] = getattr(room, "lexicon_name", None)
    elif isinstance(game, santorini_engine.Game):
        names = getattr(room, "names", None)
        view = santorini_view.seat_view(game, you, names)
    elif isinstance(game, spectrangle_engine.Game):
        view = spectrangle_view.seat_view(game, you)
    else:
        return None
    # A game the room ended outside its engine's rules (a Santorini clock that ran out
    # before play) is over too.
    view["over"] = bool(game.is_over) or room.finished
    view["clocks"] = room.clock_view()
    early = room.early_result()
    if early is not None and view.get("result") is None:
        view["result"] = early  # an abort the engine does not model (Santorini's)
    # Issue 34.4: the page offers Abort while this is true, Resign after.
    view["may_abort"] = not view["over"] and room.may_abort(you)
    return view


def _command(room: RoomPort, m: proto.Play) -> object:
    """The room command for a play message; ValueError for one this game has not."""
    game = room.game
    kind = m.kind
    if isinstance(game, scrabble_engine.Game):
        if kind == "place" and m.get("tiles"):
            return scrabble_room.PlaceTiles(
                tuple(Placement(y=y, x=x, tile=t) for x, y, t in m.get("tiles"))
            )
        if kind == "exchange" and m.get("tiles"):
            return scrabble_room.ExchangeTiles(m.get("tiles"))
        if kind == "pass":
            return scrabble_room.PassTurn()
        if kind == "challenge":  # the pending play (a variant with challenges)
            return scrabble_room.ChallengePlay()
        if kind == "accept":
            return scrabble_room.NoChallenge()
    elif isinstance(game, santorini_engine.Game):
        return _santorini(game, m)
    elif isinstance(game, spectrangle_engine.Game):
        if kind in ("place", "exchange") and m.get("tile"):
            tile = spectrangle_engine.Tile.parse(m.get("tile"))  # NotationError: ValueError
            if kind == "exchange":
                return spectrangle_engine.Exchange(-1, tile)
            if m.get("index") is not None:
                return spectrangle_engine.Place(-1, tile, m.get("index"))
        if kind == "skip":
            return spectrangle_engine.Skip(-1)
    raise ValueError(f"no {kind} action of that shape in this game")


def _chat_command(room: RoomPort, text: str) -> object:
    """The room's own chat command for a chat line."""
    # By the game (a cluster edge's room is a stand-in for the one on its rooms node).
    game = room.game
    if isinstance(game, spectrangle_engine.Game):
        return spectrangle_room.RoomChat(text)
    if isinstance(game, santorini_engine.Game):
        return santorini_room.Chat(text)
    return scrabble_room.Chat(text)


def _santorini(game: santorini_engine.Game, m: proto.Play) -> object:
    def cell(key: str) -> santorini_engine.Cell:
        value = m.get(key)
        if value is None or not (0 <= value[0] < 5 and 0 <= value[1] < 5):
            raise ValueError(f"{key} must be a cell of the 5 x 5 board")
        return santorini_engine.cell(value[0], value[1])

    # -1: the room puts the seat's own player in (the sender is the seat).
    kind = m.kind
    if kind == "god" and m.get("god"):
        return santorini_room.PickGod(m.get("god"))
    if kind == "starter" and m.get("player") is not None:
        return santorini_engine.ChooseStarter(-1, m.get("player"))
    if kind == "place":
        sex = m.get("sex")
        return santorini_engine.PlaceWorker(
            -1, cell("cell"), santorini_engine.Sex(sex) if sex else None
        )
    if kind == "move":
        return santorini_engine.Move(-1, cell("from"), cell("to"))
    if kind == "build":
        dst = cell("to")
        level = m.get("level")
        if level is None:  # a block on top of what is there
            level = game.state.levels[dst] + 1
        return santorini_engine.Build(-1, cell("from"), dst, level)
    if kind == "undo":
        return santorini_engine.Undo(-1, bool(m.get("all", False)))
    if kind == "pass":
        return santorini_engine.Pass(-1)
    if kind == "lose":
        return santorini_engine.Lose(-1)
    raise ValueError(f"no {kind} action of that shape in Santorini")

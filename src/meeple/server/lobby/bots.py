"""Server-side bots: in-process seats that play with meeple's own AIs.

A bot is a seat like any protocol's connection (a dialect whose "wire" is a
function call): it sits at a lobby table, hears the room's deliveries and submits
commands back to the room. It never blocks the event loop: every decision is
computed in the loop's default executor (a thread) from a snapshot of what the
player may see (the board copied, its own rack or hand, the bag's size), and the
command is submitted when the thought comes back, unless the game moved on
meanwhile.

    add_bot(services, table_id, level="hard") -> BotSeat

Levels, with ``T`` the server's ``bot_think_time`` (1 s unless configured):

- ``hard``: Scrabble's strong player (:class:`meeple.ai.scrabble.StrongPlayer`: the
  candidates by equity with learned leaves, a simulation of ``T`` seconds that plays
  for the win near the end of a close game, the pre-endgame and the endgame search; at
  a table of three or four, where the simulation's one opponent does not hold, its
  equity alone); Santorini's alpha-beta search for ``T``; Spectrangle's greedy placement.
- ``medium``: the strong player's equity without simulation (score plus the leave's
  value); Santorini's search up to three turns deep in ``T/2``; the greedy placement.
- ``easy``: a random one of the eight top-scoring Scrabble plays; Santorini's search one
  turn deep in ``T/10``; a random legal Spectrangle action.

(Santorini levels: :data:`meeple.ai.santorini_search.LEVELS`.) Thinking time is read
from the monotonic clock, in the thinking thread.
At a Scrabble table with challenges both levels challenge an opponent's pending play
that forms a word not in the lexicon, and accept a good one when on turn.
Names are ``bot1``, ``bot2``, ... claimed in the server's name registry (case- and
protocol-wide unique like any player's) and released when the game ends or the bot
leaves its table. Bots never play among themselves for nobody: the lobby closes a
table left with only bots (they get :class:`~meeple.server.lobby.tables.Dismissed`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections.abc import Callable, Container, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from meeple.ai import santorini as santorini_ai
from meeple.ai import santorini_search
from meeple.ai import scrabble as scrabble_ai
from meeple.ai import spectrangle as spectrangle_ai
from meeple.ai.santorini_search import AlphaBetaPlayer
from meeple.games import santorini as santorini_engine
from meeple.games import spectrangle as spectrangle_engine
from meeple.games.scrabble import game as scrabble_engine
from meeple.games.scrabble import rules as scrabble_rules
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.server.lobby.tables import (
    Dismissed,
    Lobby,
    NoSuchTable,
    Seated,
    StartRule,
    UnknownGame,
    server_lobby,
)
from meeple.server.rooms import santorini as santorini_room
from meeple.server.rooms import scrabble as scrabble_room
from meeple.server.rooms import spectrangle as spectrangle_room
from meeple.server.rooms.room import Resumed, Room, Seat

if TYPE_CHECKING:
    from meeple.server.app import Services
    from meeple.server.lobby.names import NameRegistry

__all__ = [
    "LEVELS",
    "BotHost",
    "BotSeat",
    "SantoriniBot",
    "ScrabbleBot",
    "SpectrangleBot",
    "add_bot",
    "make_bot",
    "restore_bot",
]

logger = logging.getLogger(__name__)

LEVELS = ("easy", "medium", "hard")
# After this many refused commands in one turn a bot gives the turn up (a pass, a
# skip, LOSE in Santorini) rather than loop on a disagreement with the engine.
MAX_REFUSALS = 5
EASY_SPREAD = 8


class BotHost(Protocol):
    """What a bot asks of where it plays: the room its seat is in, and standing up from
    its table. In ``meeple serve`` the lobby that seated it
    (:class:`~meeple.server.lobby.tables.Lobby`); on a cluster the rooms node that runs
    its room (:class:`meeple.node.rooms.RoomBots`: the bot plays there, not on an edge)."""

    def room_of(self, seat: Seat) -> Room | None: ...

    def leave(self, seat: Seat) -> object: ...


class _AnyVariantOf:
    """Every ``(game, variant)`` of one game: what a bot can play."""

    def __init__(self, game: str) -> None:
        self.game = game

    def __contains__(self, item: object) -> bool:
        return isinstance(item, tuple) and len(item) == 2 and item[0] == self.game


class _CarriesGame(Protocol):
    """A room's delivery that carries the game as the seat may read it."""

    @property
    def game(self) -> object: ...


class _NoDelivery:
    """What no room delivers (the base seat's reactions: none)."""

    game: object = None


class BotSeat:
    """The game-independent part of a bot: its name, table, room and thinking thread."""

    protocol = "bot"
    bot = True  # the lobby never starts a table of bots alone
    variants: Container[tuple[str, str]] | None  # any variant of its own game
    rejoinable = False
    GAME = ""

    def __init__(
        self,
        name: str,
        lobby: BotHost,
        names: NameRegistry,
        *,
        level: str,
        rng: random.Random,
        think_time: float = santorini_search.DEFAULT_THINK_TIME,
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"no bot level {level!r} (levels: {', '.join(LEVELS)})")
        self.name = name
        self.variants = _AnyVariantOf(self.GAME)
        self.lobby = lobby
        self.names = names
        self.level = level
        self.rng = rng
        self.think_time = think_time  # the hard level's seconds a move (ServerConfig)
        self.token: str | None = None
        self.room: Room | None = None
        self.you = -1
        self.refusals = 0
        self.moves = 0  # game-changing deliveries seen: a thought is stale once it grows
        self.thinking: set[asyncio.Future[Any]] = set()
        self._released = False

    # --- Seat -------------------------------------------------------------------------

    def deliver(self, event: object) -> None:
        if isinstance(event, Seated):
            self.token = event.token
        elif isinstance(event, Dismissed):
            self.release()
        elif isinstance(event, Resumed):
            self._in_room(event.you)
            self._changed(event.game)
        elif isinstance(event, self.STARTED):
            self._in_room(self._seat_index(event))
            if self.THINK_AT_START:
                self.consider(event.game)
        elif isinstance(event, self.CHANGED):
            self._changed(event.game)
        elif isinstance(event, self.REFUSED):
            self.refusals += 1
            self.moves += 1
            game = getattr(self.room, "game", None)
            if game is not None:
                self.consider(game)

    def leave(self) -> None:
        """Stand up from the table (before the game starts) and free the name."""
        self.lobby.leave(self)
        self.release()

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.names.release(self.name, self)

    # --- for the game bots ------------------------------------------------------------

    # The room's deliveries a game bot reacts to: the game started (carrying ``game``),
    # the game changed (carrying ``game``), this bot's command was refused. The base
    # seat reacts to none of them.
    STARTED: type[_CarriesGame] = _NoDelivery
    CHANGED: type[_CarriesGame] = _NoDelivery
    REFUSED: type = _NoDelivery
    THINK_AT_START = True  # False where the room's first change follows the start at once

    def _seat_index(self, started: Any) -> int:
        return int(started.you)

    def _changed(self, game: Any) -> None:
        self.moves += 1
        self.refusals = 0
        self.consider(game)

    def consider(self, game: Any) -> None:
        """Think if it is this bot's turn in ``game``."""
        raise NotImplementedError

    def _in_room(self, you: int) -> None:
        room = self.lobby.room_of(self)
        if room is not None and room is not self.room:
            room.on_finished.append(lambda _room: self.release())
        self.room = room
        self.you = you

    def think(self, decide: Callable[[], object]) -> None:
        """Run ``decide`` off the loop; submit its command if the game did not move on."""
        room, moves = self.room, self.moves
        if room is None or room.finished:
            return
        future = asyncio.get_running_loop().run_in_executor(None, decide)
        self.thinking.add(future)

        def done(f: asyncio.Future[Any]) -> None:
            self.thinking.discard(f)
            if f.cancelled():
                return
            error = f.exception()
            if error is not None:
                logger.error("%s: thinking failed", self.name, exc_info=error)
                return
            if room.finished or moves != self.moves or self.room is not room:
                return  # the game moved on while the bot thought
            room.submit(self, f.result())

        future.add_done_callback(done)


class ScrabbleBot(BotSeat):
    """Plays Scrabble with :mod:`meeple.ai.scrabble` (any table variant)."""

    GAME = scrabble_room.GAME
    STARTED, CHANGED, REFUSED = (
        scrabble_room.GameStarted,
        scrabble_room.Update,
        scrabble_room.Rejected,
    )

    def __init__(self, *args: Any, lexicon: Lexicon, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lexicon = lexicon
        # How the last decision was made (the strong player's ``last_method``:
        # "static", "simulation", "simulation-win", "endgame", ...; "top-score" for
        # easy's pick among the top-scoring plays), for logs and tests.
        self.last_method = ""

    def consider(self, game: Any) -> None:
        if not isinstance(game, scrabble_engine.Game) or game.is_over:
            return
        if self._challenge_window(game):
            return
        if game.turn != self.you:
            return
        if self.refusals > MAX_REFUSALS:
            self.think(scrabble_room.PassTurn)
            return
        variant, you = game.variant, self.you
        board, rack, scores = game.board.copy(), game.rack(you), game.scores
        position = scrabble_ai.Position(
            board,
            rack,
            len(game.bag),
            tile_set=variant.tile_set,
            exchange_minimum=variant.exchange_minimum,
            scores=(scores[you], max(s for i, s in enumerate(scores) if i != you)),
            scoreless_turns=game.scoreless_turns,
            scoreless_limit=variant.scoreless_turns,
        )
        skip, lexicon = self.refusals, self.lexicon
        # The hard level simulates, and searches the endgame, only against one opponent:
        # with two or three the unseen tiles are not one rack, and both would misread them.
        seconds = self.think_time if self.level == "hard" and len(scores) == 2 else 0.0
        rng = random.Random(self.rng.getrandbits(64))
        easy_skip = skip + self.rng.randrange(EASY_SPREAD) if self.level == "easy" else 0

        def decide() -> object:
            if self.level == "easy":
                moves = scrabble_ai.ranked_moves(board, rack, lexicon, variant.tile_set)
                if moves:
                    move = moves[min(easy_skip, len(moves) - 1)]
                    self.last_method = "top-score"
                    logger.debug("%s: %s by top-score", self.name, move)
                    return scrabble_room.PlaceTiles(move.tiles)
            # A player of its own each time: it keeps per-choice state, and a stale
            # thought may still run beside a new one.
            player = scrabble_ai.StrongPlayer(lexicon)
            budget = scrabble_ai.Budget(seconds, time.monotonic if seconds > 0 else None)
            choice = player.choose(position, budget, rng, skip=skip)
            self.last_method = player.last_method
            logger.debug("%s: %s by %s", self.name, choice, player.last_method)
            return self._command(choice)

        self.think(decide)

    @staticmethod
    def _command(choice: object) -> object:
        if isinstance(choice, scrabble_ai.ExchangeChoice):
            return scrabble_room.ExchangeTiles(choice.tiles)
        if isinstance(choice, scrabble_ai.PassChoice):
            return scrabble_room.PassTurn()
        assert isinstance(choice, Move)
        return scrabble_room.PlaceTiles(choice.tiles)

    # --- the challenge window (variants with challenges, issue 13) --------------------

    def _challenge_window(self, game: scrabble_engine.Game) -> bool:
        """Challenge an opponent's phony, or accept a good play on turn; True if it did.

        A phony is a word the lexicon lacks (the same lexicon the engine judges by).
        Accepting first (rather than playing on, which accepts too) is also what a play
        that ends the game requires. After a refusal the bot leaves it to the engine.
        """
        pending = game.pending
        if pending is None or pending.player == self.you or self.refusals:
            return False
        if scrabble_rules.phonies(pending.result.words, self.lexicon):
            self.think(scrabble_room.ChallengePlay)
            return True
        if game.turn == self.you:
            self.think(scrabble_room.NoChallenge)
            return True
        return False


class SantoriniBot(BotSeat):
    """Plays Santorini (gods or not) with :mod:`meeple.ai.santorini`."""

    GAME = santorini_room.GAME
    STARTED, CHANGED, REFUSED = (
        santorini_room.GameStarted,
        santorini_room.Changed,
        santorini_room.Refused,
    )
    THINK_AT_START = False  # the room's first Changed follows GameStarted: think then

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # One player for the bot's games: its table and plan go from turn to turn.
        # The level's share of the server's think time (hard 1, medium 1/2, easy 1/10).
        share = santorini_search.LEVELS[self.level].think_time / santorini_search.DEFAULT_THINK_TIME
        self.player = AlphaBetaPlayer.at_level(
            self.level, clock=time.monotonic, think_time=share * self.think_time
        )

    def consider(self, game: Any) -> None:
        if not isinstance(game, santorini_engine.Game) or game.is_over:
            return
        state = game.state  # immutable: safe to read from the thinking thread
        if state.turn != self.you or not state.alive[self.you]:
            return
        you, rng, player = self.you, self.rng, self.player
        refused = self.refusals > 0
        give_up = self.refusals > MAX_REFUSALS

        def decide() -> object:
            if give_up:
                return santorini_engine.Lose(you)
            try:
                if refused:
                    return santorini_ai.random_action(state, rng)
                return player.choose(state, rng)
            except ValueError:
                return santorini_engine.Lose(you)  # stuck: the spec's LOSE (§4.2.6)

        self.think(decide)


class SpectrangleBot(BotSeat):
    """Plays Spectrangle with :mod:`meeple.ai.spectrangle`."""

    GAME = spectrangle_room.GAME
    STARTED, CHANGED, REFUSED = (
        spectrangle_room.GameStarted,
        spectrangle_room.Update,
        spectrangle_room.RoomRejected,
    )

    def _seat_index(self, started: Any) -> int:
        # Spectrangle's GameStarted names no seat: find this bot's in the room.
        room = self.lobby.room_of(self)
        return room.seats.index(self) if room is not None and self in room.seats else -1

    def consider(self, game: Any) -> None:
        if not isinstance(game, spectrangle_engine.Game) or game.is_over:
            return
        if game.turn != self.you:
            return
        you, rng = self.you, self.rng
        if self.level == "easy" or self.refusals > 0:
            actions = game.legal_actions(you)
            if not actions:
                return
            choice: object = rng.choice(actions)
            self.think(lambda: choice)
            return
        board, hand, bag = game.board.copy(), game.hand(you), game.bag_size
        self.think(lambda: spectrangle_ai.greedy_choice(board, hand, bag, you))


_BOTS: dict[str, type[BotSeat]] = {
    ScrabbleBot.GAME: ScrabbleBot,
    SantoriniBot.GAME: SantoriniBot,
    SpectrangleBot.GAME: SpectrangleBot,
}


def _claim_name(names: NameRegistry, owner: object, level: str) -> str:
    # The level is in the name (issue 24): a player sees whom they face, and ratings,
    # kept per name, are kept per level.
    for n in itertools.count(1):
        name = f"{level}bot{n}"
        if names.claim(name, owner):
            return name
    raise AssertionError("unreachable")


def add_bot(services: Services, table_id: str, *, level: str = "hard") -> BotSeat:
    """Seat a new bot at the open table ``table_id``; it says ready at once (READY tables).

    Raises the lobby's :class:`~meeple.server.lobby.tables.TableError` kinds (no such table, a
    full table, a game without bots) and ValueError for an unknown level.
    """
    lobby = server_lobby(services)
    table = lobby.table(table_id)
    if table is None:
        raise NoSuchTable(table_id)
    check_bot(table.game, level)
    if table.game == ScrabbleBot.GAME:
        _served_lexicon(services)
    placeholder = object()
    name = _claim_name(services.names, placeholder, level)
    # The bot plays with the table's word list (docs/web.md, "Word lists").
    words = dict(table.settings).get("lexicon")
    bot = make_bot(services, table.game, name, level, lobby, lexicon_name=words)
    services.names.release(name, placeholder)
    services.names.claim(name, bot)
    try:
        lobby.sit(table_id, bot)
    except Exception:
        bot.release()
        raise
    if table.start_rule is StartRule.READY:
        lobby.ready(bot)
    return bot


def check_bot(game: str, level: str) -> None:
    """Refuse a bot for ``game`` at ``level`` (UnknownGame: no bot plays it; ValueError:
    no such level), as :func:`add_bot` does; a cluster's lobby leader asks this before it
    seats one."""
    if game not in _BOTS:
        raise UnknownGame(f"no bot plays {game!r}")
    if level not in LEVELS:
        raise ValueError(f"no bot level {level!r} (levels: {', '.join(LEVELS)})")


def make_bot(
    services: Services,
    game: str,
    name: str,
    level: str,
    host: BotHost,
    *,
    lexicon_name: str | None = None,
    lexicon: Lexicon | None = None,
) -> BotSeat:
    """A bot named ``name`` (claimed already) that plays ``game`` at ``level`` in the
    rooms ``host`` seats it in; a Scrabble bot checks words with ``lexicon``, else the
    loaded word list ``lexicon_name`` (None: the server's)."""
    check_bot(game, level)
    cls = _BOTS[game]
    rng = random.Random(services.rng.getrandbits(64))
    extra: dict[str, Any] = {}
    if cls is ScrabbleBot:
        extra["lexicon"] = (
            lexicon if lexicon is not None else scrabble_room.lexicon_of(services, lexicon_name)
        )
    think_time = services.config.bot_think_time
    return cls(name, host, services.names, level=level, rng=rng, think_time=think_time, **extra)


def restore_bot(
    services: Services,
    room: Room,
    absent: Seat,
    info: Mapping[str, Any],
    *,
    host: BotHost | None = None,
) -> BotSeat:
    """Seat a server bot again in ``room``, restored from its log after a restart (or
    taken over by another rooms node: ``host``, that node's): the bot of the log's name
    and level takes the stand-in ``absent`` seat and plays on."""
    lobby: Lobby | None = None
    if host is None:
        lobby = server_lobby(services)
        host = lobby
    game = getattr(room, "game", None)
    # The restored game's own word list (the table's, or the server's).
    words = getattr(game, "lexicon", None) if room.game_name == ScrabbleBot.GAME else None
    if room.game_name == ScrabbleBot.GAME and words is None:
        words = _served_lexicon(services)
    level = str(info.get("bot")) if info.get("bot") in LEVELS else "hard"
    bot = make_bot(services, room.game_name, absent.name, level, host, lexicon=words)
    if not services.names.claim(bot.name, bot):
        logger.warning("%s: the name is taken; the restored bot plays under it anyway", bot.name)
    if lobby is not None:
        lobby.seat_restored(bot, room)
    room.rebind(absent, bot)
    return bot


def _served_lexicon(services: Services) -> Lexicon:
    """The lexicon this server's Scrabble tables check words with; a server that has not
    loaded one does not serve Scrabble (its bots are refused)."""
    if services.lexicon is None:
        raise UnknownGame("Scrabble is not served here (no lexicon loaded)")
    return services.lexicon

"""The CMPN402 referee: two seats, one Scrabble game at a time, clocks, a log per game, admin.

The referee is the spec's server (``scrabble-cmpn402-websocket.md``, "Server State
Machine"): its protocol state lives in a :class:`~meeple.protocols.cmpn402.ServerMachine`,
its game in a :class:`~meeple.games.scrabble.game.Game` of the ``cmpn402`` variant
(double challenge, exchange with ≥ 7 in the bag). It does no I/O itself: each seat is
a :class:`Link` (send bytes, close) that the listener provides, and every method runs
to completion on the event loop without awaiting, so the referee needs no lock.

Clocks (spec, "Play tiles"; ERRATA): the player on turn's clock and the game clock
run in IDLE; both pause in AWAIT_CHALLENGE while the challenge timer runs. Either
running out ends the game with END reason 1; an unanswered challenge window is a
NO_CHALLENGE. Times are charged in whole milliseconds from ``clock.now()``.

Every game is a log (ARCHITECTURE.md, "Durability"; spec, "Disconnection"): START
opens it with a genesis (the game's record header with its bag order, the agents,
the clock settings, the series), every settled action is an entry with both players'
times and the game clock, and the finished game is stored when the log closes. A PLAY
is logged with its verdict (NO_CHALLENGE, CHALLENGE, the window running out), so a
play still in its challenge window is in no log: the spec's "any action except PLAY".
Write-ahead: what the referee sends is held until the entries made before it are
written (:class:`~meeple.server.rooms.room.WriteAhead`, shared with every room). A
disconnect logs the times at that moment (an entry without an action), sends END
reason 2 to the other agent and goes to INIT; once two agents have sent NAME again
the game is folded from its log and resumes with a START to each. While it waits, only
the names it was started with may sit (another is closed with 1013), and with a secrets
file a NAME must be a ``name#secret`` line of it (:mod:`.cmpn402_names`; else 1008). After a server
restart the listener hands the referee its unfinished log (``recovered``) and the
same happens.

meeple decisions where the spec is silent are in ``docs/protocols/cmpn402.md``.
"""

from __future__ import annotations

import datetime
import enum
import functools
import logging
import random
import re
import time
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from meeple.games.records import RecordError
from meeple.games.scrabble import game as g
from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.moves import tiles_from_new_tiles
from meeple.games.scrabble.record import resume, to_record
from meeple.protocols.cmpn402 import messages
from meeple.protocols.cmpn402.errors import Answer, CloseCode, RemoteProtocolError
from meeple.protocols.cmpn402.session import ServerInput, ServerMachine, ServerState
from meeple.server.clock import Clock, Timer
from meeple.server.metrics import METRICS
from meeple.server.rooms.cmpn402_names import AgentSecrets
from meeple.server.rooms.room import LogSink, WriteAhead, log_genesis

if TYPE_CHECKING:
    from meeple.server.store.database import ActionLog

__all__ = [
    "GAME",
    "PROTOCOL",
    "Link",
    "Referee",
    "RefereeError",
    "RefereeSettings",
    "Seat",
    "end_reason",
    "moves_of",
    "new_game_id",
    "outermost",
    "series_first",
]

logger = logging.getLogger(__name__)

_R = TypeVar("_R")

VARIANT = g.VARIANTS["cmpn402"]
GAME = "scrabble"  # the game's name in logs and records
PROTOCOL = "cmpn402"
# Messages held while paused (an agent has at most one move to make; more is noise).
MAX_HELD = 16

# Engine end reasons to END's reason byte (ERRATA: the standard ends are reason 0).
_END_REASONS = {
    g.EndReason.WENT_OUT: messages.EndReason.ALL_TILES_USED,
    g.EndReason.SCORELESS_TURNS: messages.EndReason.ALL_TILES_USED,
    g.EndReason.PASSES: messages.EndReason.ALL_TILES_USED,
    g.EndReason.TIME: messages.EndReason.TIME_ENDED,
    g.EndReason.DISCONNECT: messages.EndReason.CONNECTION_ERROR,
    g.EndReason.ADMIN: messages.EndReason.STOPPED,
    # Browser seats' ends (issue 34.4, 34.9); a referee's game never has them, and END
    # has no word of its own for either.
    g.EndReason.RESIGNED: messages.EndReason.CONNECTION_ERROR,
    g.EndReason.ABORTED: messages.EndReason.STOPPED,
}


def end_reason(reason: g.EndReason) -> messages.EndReason:
    """END's reason byte for an engine end."""
    return _END_REASONS[reason]


class Link(Protocol):
    """One agent's connection as the referee sees it: ordered sends, and a close."""

    id: str

    def send(self, data: bytes) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


def new_game_id(players: tuple[str, ...]) -> str:
    """A game's id: UTC time to the microsecond, then the players' names. It names the
    game's log in the store, its record (``/games/<id>``) and the organiser's files."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    safe = "-vs-".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p)[:32] for p in players)
    return f"{stamp}-{safe}"


class GameLog(Protocol):
    """Where the referee writes what a contest organiser reads (see ``server.cmpn402``).

    ``game_id`` names the game for the console and its files; a resumed game keeps it.
    """

    game_id: str

    def message(self, direction: str, seat: str, message: object, data: bytes) -> None: ...

    def note(self, text: str) -> None: ...

    def finished(self, gcg: str) -> None: ...


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Time controls (ms) and the start policy; built from the ``[cmpn402]`` config table."""

    player_time: int = 600_000
    total_time: int = 1_200_000
    challenge_time: int = 10_000
    manual_start: bool = False
    games: int = 1
    # Between two games of a series. After NO_CHALLENGE the challenger is THINKING
    # (spec) and may send a move just as END goes out; that stale move must land in
    # READY (ignored), not in the next game. See docs/protocols/cmpn402.md.
    between_games: int = 1_000
    # A connection that has not sent NAME by then is closed (1008), so a stray client
    # cannot hold a seat; the server's idle_timeout.
    name_timeout: int = 900_000


@dataclass
class Seat:
    """A player slot (spec: "Assign Client to an empty player slot")."""

    link: Link
    name: str = ""

    @property
    def named(self) -> bool:
        return bool(self.name)


def series_first(played: int, swapped: bool) -> int:
    """The seat (0 or 1) that moves first in a series' next game, ``played`` games in:
    ``--games N`` alternates the first player; the console's ``swap`` flips the
    alternation (meeple serve's referee and a cluster's series, meeple.node.contest)."""
    return (played + swapped) % 2


class RefereeError(ValueError):
    """An admin action that cannot be done now, with the reason (the console's ConsoleError)."""


def outermost(
    after: Callable[[Any], None],
) -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Decorate an object's entry points, which call one another: ``after(obj)`` runs once
    the outermost call returns (or raises), never within. The object counts the depth in
    its ``_depth`` (an int, 0 to start)."""

    def decorate(method: Callable[..., _R]) -> Callable[..., _R]:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> _R:
            self._depth += 1
            try:
                return method(self, *args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    after(self)

        return wrapper

    return decorate


def _committed(referee: Referee) -> None:
    """After an entry point: its log entries are queued, then what it sent (write-ahead),
    and the referee's watcher is told."""
    try:
        referee._commit()
    except Exception:
        logger.exception("cmpn402: writing the log failed")
    if referee.on_change is not None:
        try:
            referee.on_change()
        except Exception:
            logger.exception("cmpn402: a change watcher failed")


_notifies = outermost(_committed)


class _Mode(enum.Enum):
    RUNNING = "running"
    PAUSED = "paused"


@dataclass
class _Series:
    games: int
    played: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def over(self) -> bool:
        return self.played >= self.games


@dataclass
class _Book:
    """The log of the game running or waiting to resume, as written: its uid (the game's
    id), genesis and entries in order (``actions``: how many carry an action)."""

    uid: str
    genesis: dict[str, Any]
    entries: list[dict[str, Any]]
    started_at: float
    actions: int = 0
    written: int = 0  # how many of ``entries`` are queued to the journal


class Referee:
    """The contest's server state, the game, its clocks, its log and admin controls.

    The listener calls :meth:`connect`, :meth:`receive`, :meth:`disconnect`; the admin
    endpoint calls :meth:`start`, :meth:`pause`, :meth:`stop` and reads :meth:`status`.

    ``key`` names the referee in its logs' genesis (``table.referee``), so that after a
    restart the listener finds them; ``secrets`` the organiser's ``name#secret`` lines
    that a NAME must match (:mod:`.cmpn402_names`); ``journal`` is where they are written (None: the
    logs are kept in memory only, and games are not stored); ``ahead`` the write-ahead
    queue its sends go through (a contest shares one among its boards); ``recovered``
    the unfinished log of this referee's game after a restart, to resume; ``metrics``
    whether it counts its games and commands (not inside a room that does).
    """

    def __init__(
        self,
        *,
        clock: Clock,
        lexicon: Container[str],
        rng: random.Random,
        settings: RefereeSettings,
        key: str = PROTOCOL,
        journal: LogSink | None = None,
        ahead: WriteAhead | None = None,
        recovered: ActionLog | None = None,
        open_log: Callable[[tuple[str, ...], str], GameLog] | None = None,
        on_change: Callable[[], None] | None = None,
        on_game_over: Callable[[dict[str, Any]], None] | None = None,
        secrets: AgentSecrets | None = None,
        metrics: bool = True,
    ) -> None:
        self.clock = clock
        # Its games and commands counted in the metrics as a room's (issue 35); False
        # inside a room that counts them itself (a cluster's RefereeRoom).
        self.metrics = metrics
        # The organiser's name#secret lines: a NAME must be one (None: any name will do).
        self.secrets = secrets
        self.lexicon = lexicon
        self._lexicon_name: str | None = getattr(lexicon, "name", None)
        self.rng = rng
        self.settings = settings
        self.key = key
        self.journal = journal
        self.ahead = ahead if ahead is not None else WriteAhead(key)
        self.wall_clock: Callable[[], float] = time.time
        self._open_log = open_log
        # A new game's id (its log's uid): a room on a cluster's rooms node gives its own.
        self.new_id: Callable[[tuple[str, ...]], str] = new_game_id
        # Called after every change (a move, a clock, a connection, an end): the console.
        self.on_change = on_change
        # Called with the result of each finished game (the contest's scheduler).
        self.on_game_over = on_game_over
        self._depth = 0
        self.machine = ServerMachine()
        self.seats: list[Seat | None] = [None, None]
        self.game: g.Game | None = None
        self.seat_of: list[int] = [0, 1]  # engine player -> seat index
        self.times = [settings.player_time, settings.player_time]
        self.total = settings.total_time
        self.mode = _Mode.RUNNING
        self.series = _Series(settings.games)
        self._file: GameLog | None = None
        self.game_id = ""  # the running game's id (its log's uid, its files' stem)
        self.first = 0  # the engine player who moved first in the running game
        self._swapped = False  # the admin's "swap": the next game's first player flips
        self._clock_since: float | None = None
        self._clock_timer: Timer | None = None
        self._challenge_timer: Timer | None = None
        self._challenge_left = settings.challenge_time
        self._challenge_since = 0.0
        self._held: deque[tuple[int, bytes]] = deque()
        self._next_game: Timer | None = None
        # What the referee sent during the entry point running: released at its end,
        # behind the log entries it made (write-ahead).
        self._outbox: list[Callable[[], object]] = []
        # When the commands of the entry point running arrived (counted at its end).
        self._arrivals: list[float] = []
        self._book: _Book | None = None
        # The game of the book is counted in meeple_rooms_running (issue 35): from its
        # first START (new, or resumed from its log after a restart) to its end, or to
        # the server's stop; an agent away meanwhile does not end it (as a cluster's
        # RefereeRoom, which runs on while the game waits for its agent).
        self._counted = False
        # The stored end reason of the last game that ended (its record's end_reason).
        self.last_end: str | None = None
        if recovered is not None:
            self._recover(recovered)

    # --- connections ---------------------------------------------------------------

    @_notifies
    def connect(self, link: Link) -> int | None:
        """Seat a new connection and send it NAME; None when both seats are taken."""
        for i, seat in enumerate(self.seats):
            if seat is None:
                new = self.seats[i] = Seat(link)
                self.machine.advance(ServerInput.CONNECT)
                logger.info("[%s] connected, seat %d", link.id, i + 1)
                self._send(i, messages.NameRequest())
                timeout = self.settings.name_timeout / 1000
                self.clock.call_later(timeout, functools.partial(self._name_timed_out, new))
                return i
        return None

    @_notifies
    def seat(self, link: Link, name: str) -> int | None:
        """Seat an agent that has named itself already (the contest did the NAME exchange).

        As :meth:`connect` then NAME, without the NAME request: a game starts (or resumes
        from its log) when both seats are named. None when both seats are taken, or when
        a game waits in its log for other names (the caller's mistake: nothing is sent).
        """
        for i, seat in enumerate(self.seats):
            if seat is None:
                if not self._may_sit(i, name):
                    logger.warning("[%s] %s is no agent of the waiting game", link.id, name)
                    return None
                self.seats[i] = Seat(link)
                self.machine.advance(ServerInput.CONNECT)
                logger.info("[%s] seated as %s, seat %d", link.id, name, i + 1)
                self._named(i, name)
                return i
        return None

    @_notifies
    def release(self) -> None:
        """Let go of every seat without a word (the contest moves its agents on)."""
        for i in range(len(self.seats)):
            if self.seats[i] is not None:
                self.seats[i] = None
                self.machine.advance(ServerInput.DISCONNECT)

    @_notifies
    def checkpoint(self) -> None:
        """Log the times as they stood when the clocks last stopped or started (an entry
        without an action): a cluster's referee room notes in its log who came back to a
        game waiting to resume, or that the admin paused or resumed a game (called in the
        same step as the pause or resume, when those times are the times of now)."""
        if self._book is None:
            return
        self._log_moves()  # (nothing: every step logs its settled actions at its end)
        self._append(self._book, None)

    @property
    def paused(self) -> bool:
        """The admin paused the referee (the spec's Pause button)."""
        return self.mode is _Mode.PAUSED

    @property
    def waiting(self) -> bool:
        """A game waits, in its log, for its agents to come back."""
        return self.game is None and self._book is not None

    @_notifies
    def _name_timed_out(self, seat: Seat) -> None:
        if not seat.named and any(s is seat for s in self.seats):
            logger.info("[%s] no NAME in time: closed", seat.link.id)
            self._close(seat.link, int(CloseCode.POLICY_VIOLATION), "no NAME in time")

    @_notifies
    def disconnect(self, index: int) -> None:
        """A seat's connection is gone (spec, "Disconnection" and State: * ANY)."""
        seat = self.seats[index]
        if seat is None:
            return
        self.seats[index] = None
        logger.info("[%s] disconnected (%s)", seat.link.id, seat.name or "no name")
        if self.game is not None:
            self._note(f"{seat.name} disconnected; the game waits to resume")
            self._interrupt()
        self.machine.advance(ServerInput.DISCONNECT)

    def _interrupt(self) -> None:
        """Log the times as they are now and send END reason 2 to whoever is here."""
        game = self.game
        assert game is not None
        self._halt_clocks()
        self._log_moves()
        if self._book is not None:
            # Spec, "Disconnection": the remaining times at the disconnect are kept.
            self._append(self._book, None)
        # The scores the game resumes with: a play in its challenge window is not logged.
        scores = list(game.scores)
        if game.pending is not None:
            scores[game.pending.player] -= game.pending.score
        for player, i in enumerate(self.seat_of):
            mine, theirs = scores[player], scores[1 - player]
            self._send(i, messages.EndMessage(messages.EndReason.CONNECTION_ERROR, mine, theirs))
        self.game = None
        self._file = None
        self._held.clear()

    @_notifies
    def receive(self, index: int, data: bytes) -> None:
        """One binary message from a seat."""
        if self.mode is _Mode.PAUSED and self.game is not None:
            if len(self._held) < MAX_HELD:
                self._held.append((index, data))  # answered when the admin resumes
            return
        seat = self.seats[index]
        if seat is None:
            return
        if seat.named:
            # A named agent's message is a command, refused or not (a room counts each
            # command its seats send; the NAME exchange is the lobby's part).
            self._counted_command(time.perf_counter())
        on_turn = self.game is not None and self.seat_of[self.game.turn or 0] == index
        try:
            message = self.machine.receive(data, named=seat.named, on_turn=on_turn)
        except RemoteProtocolError as e:
            self._refuse(index, e, data)
            return
        if isinstance(message, messages.Name):
            self._name(index, message)
            return
        self._log_message("in", index, message, data)
        assert self.game is not None
        player = self.game.turn
        assert player is not None
        if isinstance(message, messages.PassMove):
            self._pass(player)
        elif isinstance(message, messages.ExchangeMove):
            self._exchange(player, message)
        elif isinstance(message, messages.PlayMove):
            self._play(player, message)
        elif isinstance(message, messages.NoChallenge):
            self._accept(player, timed_out=False)
        elif isinstance(message, messages.ChallengeMove):
            self._challenge(player)

    def _counted_command(self, arrived: float) -> None:
        """A player's command (meeple_commands_total, meeple_command_seconds): counted when
        the last thing it made the referee send is released, behind its log entries
        (write-ahead), as a room counts a command once its deliveries are made."""
        if METRICS.enabled and self.metrics:
            self._arrivals.append(arrived)

    def _refuse(self, index: int, error: RemoteProtocolError, data: bytes) -> None:
        seat = self.seats[index]
        assert seat is not None
        # Issue 22: the first few refusals of a connection are logged, the rest counted.
        refusals = getattr(seat.link, "refusals", None)
        note = refusals.note if refusals is not None else logger.info
        # A NAME's bytes may hold a secret (a second NAME, a bad one): never logged.
        shown = data[:1] if data[:1] == b"\x00" else data
        note("%s: %s (%s)", error.answer.value, error.reason, shown[:32].hex())
        self._log_message("in", index, f"refused: {error.reason}", shown)
        if error.answer is Answer.INVALID and self.game is not None and self.game.turn is not None:
            self._send(index, messages.Invalid(*self._times_of(self.game.turn)))
        elif error.answer is Answer.CLOSE:
            code = int(error.close_code or CloseCode.PROTOCOL_ERROR)
            self._close(seat.link, code, error.reason)

    def _name(self, index: int, message: messages.Name) -> None:
        """A NAME: the team name alone (a secret checked and dropped), then :meth:`_named`;
        a NAME that is not a line of the secrets file is refused as a bad NAME (1008)."""
        seat = self.seats[index]
        assert seat is not None
        name = message.name if self.secrets is None else self.secrets.check(message.name)
        if name is None:
            logger.info("[%s] NAME refused: not a name#secret of the secrets file", seat.link.id)
            self._log_message("in", index, "NAME refused (wrong name or secret)", b"\x00")
            self._close(seat.link, int(CloseCode.POLICY_VIOLATION), "wrong name or secret")
            return
        named = messages.Name(name)
        self._log_message("in", index, named, named.encode())  # never the secret
        self._named(index, name)

    def _may_sit(self, index: int, name: str) -> bool:
        """Whether ``name`` may take seat ``index``: any name, unless a game waits in its log
        for its agents; then only a name it was started with that no other seat holds."""
        if self._book is None:
            return True
        wanted = list(self._book.genesis["record"]["players"])
        for i, other in enumerate(self.seats):
            if i != index and other is not None and other.named and other.name in wanted:
                wanted.remove(other.name)
        return name in wanted

    def _named(self, index: int, name: str) -> bool:
        """Seat ``index`` is ``name``'s; False when refused (module doc, "What protects a
        seat": a game waiting in its log resumes only with the names it started with)."""
        seat = self.seats[index]
        assert seat is not None
        if not self._may_sit(index, name):
            # Not its game: the seat waits for another agent. Try again later (the admin
            # may stop the waiting game), as a third connection is told.
            logger.info(
                "[%s] NAME %s refused: the game here waits for its agents", seat.link.id, name
            )
            self._note(f"NAME {name} refused: the waiting game resumes only with its own agents")
            self._close(
                seat.link, int(CloseCode.TRY_AGAIN_LATER), "a game waits here for its agents"
            )
            return False
        seat.name = name
        logger.info("[%s] NAME %s", seat.link.id, name)
        self.machine.advance(ServerInput.NAME)
        if all(s is not None and s.named for s in self.seats):
            self.machine.advance(ServerInput.PLAYERS_READY)
            if self._book is None and self.series.over:
                self.series = _Series(self.settings.games)  # a new pair: a new series
            self._auto_start()
        return True

    # --- admin controls (the spec's GUI buttons) -----------------------------------

    @_notifies
    def start(self) -> str:
        """Start Game (or resume after Pause). Returns what happened, for the admin.

        Raises RefereeError when there is nothing to start (no two named agents, or a
        game already running).
        """
        if self.mode is _Mode.PAUSED:
            return self.resume()
        if self.machine.state is not ServerState.READY:
            raise RefereeError(f"cannot start in {self.machine.state.value}")
        if self._book is None and self.series.over:
            self.series = _Series(self.settings.games)
        self._begin()
        return "started"

    @_notifies
    def resume(self) -> str:
        """Resume after Pause: the clocks run again and the moves held are answered."""
        if self.mode is not _Mode.PAUSED:
            raise RefereeError("not paused")
        self.mode = _Mode.RUNNING
        if self.game is not None:
            self._note("resumed by the admin")
            self._resume_clocks()
            while self._held and self.mode is _Mode.RUNNING and self.game is not None:
                self.receive(*self._held.popleft())
        else:
            self._auto_start()
        return "resumed"

    @_notifies
    def pause(self) -> str:
        """Pause: clocks stop and moves wait until Start; in READY, no game starts on its own."""
        if self.mode is _Mode.PAUSED:
            raise RefereeError("already paused")
        self.mode = _Mode.PAUSED
        if self.game is not None:
            self._halt_clocks()
            self._note("paused by the admin")
        return "paused"

    @_notifies
    def stop(self) -> str:
        """Stop: END reason 3 to both and the series ends. A game waiting for its agents
        ends as stopped too (its log is closed and the game stored; nobody is told)."""
        if self.game is None and self._book is None and self.series.over:
            raise RefereeError("nothing to stop")
        self.mode = _Mode.RUNNING
        result = "series stopped"
        if self.game is not None:
            self._halt_clocks()
            self._apply_end(g.End(g.EndReason.ADMIN))
            result = "stopped"
        elif self._book is not None:
            self._end_waiting(g.End(g.EndReason.ADMIN), "the waiting game is stopped by the admin")
            result = "the waiting game is stopped"
        self.series.played = max(self.series.played, self.series.games)
        self._cancel_next_game()
        return result

    @_notifies
    def swap(self) -> str:
        """The next game's first player is the other agent (the judge's swap button)."""
        self._swapped = not self._swapped
        return f"the next game's first player is seat {self._next_first() + 1}"

    def _next_first(self) -> int:
        return series_first(self.series.played, self._swapped)

    @_notifies
    def end_disconnected(self, name: str) -> bool:
        """The resume window is over: score the waiting game as the spec's disconnect end.

        ``name`` is the agent that did not come back: it cannot win (the engine's
        DISCONNECT end). The game is folded from its log; END reason 2 has already gone
        to the agent still here. False when no game waits.
        """
        if self.game is not None or self._book is None:
            return False
        players = self._book.genesis["record"]["players"]
        player = players.index(name) if name in players else None
        note = f"{name} did not come back in time: the game ends (connection error)"
        self._end_waiting(g.End(g.EndReason.DISCONNECT, player), note)
        return True

    def _end_waiting(self, action: g.End, note: str) -> None:
        """End the game waiting in its log with ``action``; nobody is told."""
        self._take_up()
        self.seat_of = [0, 1]
        game = self.game
        assert game is not None
        self._note(note)
        if not game.is_over:
            game.apply(action)
        assert game.result is not None
        self._ended(game.result, tell=False)

    def status(self) -> dict[str, Any]:
        """What the admin page shows."""
        game = self.game
        status: dict[str, Any] = {
            "state": self.machine.state.value,
            "paused": self.mode is _Mode.PAUSED,
            "seats": [None if s is None else (s.name or None) for s in self.seats],
            "series": {"games": self.series.games, "played": self.series.played},
            "results": list(self.series.results),
            "waiting": self.waiting,
            "game_id": self.game_id or None,
        }
        if game is not None:
            status["game"] = {
                "players": list(game.players),
                "scores": list(game.scores),
                "turn": None if game.turn is None else game.players[game.turn],
                "times": [self._times_of(p)[0] for p in range(2)],
                "total_time": self._times_of(0)[1],
                "bag": len(game.bag),
                "board": list(game.board.rows()),
            }
        return status

    def board_view(self, board: int = 1) -> dict[str, Any] | None:
        """The running game as the console shows it (no rack letters); None without a game.

        ``turn`` and ``first`` index ``players`` (the engine's order); clocks are as of now.
        """
        game = self.game
        if game is None:
            return None
        times = [self._times_of(p) for p in range(2)]
        pending = game.pending is not None
        if self._challenge_timer is not None:
            spent = round((self.clock.now() - self._challenge_since) * 1000)
            left = max(0, self._challenge_left - spent)
        else:
            left = self._challenge_left if pending else 0
        return {
            "board": board,
            "game_id": self.game_id,
            "players": list(game.players),
            "first": self.first,
            "turn": game.turn,
            "scores": list(game.scores),
            "bag": len(game.bag),
            "clocks": {
                "players_ms": [t[0] for t in times],
                "total_ms": times[0][1],
                "running": self._clock_since is not None,
            },
            "challenge": {"open": pending, "remaining_ms": left},
            "moves": moves_of(game),
            "game": game,
        }

    def admin_view(self) -> dict[str, Any] | None:
        """The game as an organiser sees it on a cluster's ``/admin/status`` (JSON-safe,
        no rack): :meth:`board_view` of the running game, or the game waiting in its log
        for its agents (folded from it, with its logged clocks); None without a game.
        ``waiting`` and ``paused`` say which."""
        view = self.board_view()
        if view is not None:
            view.pop("game")
            return {**view, "waiting": False, "paused": self.paused}
        book = self._book
        if book is None:
            return None
        try:
            game, times, total = self._fold(book, random.Random(0))  # the bag is the log's
        except (RecordError, KeyError, TypeError, ValueError, IndexError):
            return None
        return {
            "board": 1,
            "game_id": book.uid,
            "players": list(game.players),
            "first": int(book.genesis["record"]["setup"]["first_player"]),
            "turn": game.turn,
            "scores": list(game.scores),
            "bag": len(game.bag),
            "clocks": {"players_ms": times, "total_ms": total, "running": False},
            "challenge": {"open": False, "remaining_ms": 0},
            "moves": moves_of(game),
            "waiting": True,
            "paused": self.paused,
        }

    @_notifies
    def shutdown(self) -> None:
        """The server is stopping: log the times like a disconnect, tell both agents."""
        if self.game is not None:
            self._note("the server stops; the game waits to resume")
            self._interrupt()
        if self._counted and self.metrics:
            # A game on at the stop (running, or waiting for an agent) stays in its log,
            # counted as a room's: "unfinished".
            self._counted = False
            METRICS.room_finished(PROTOCOL, "unfinished")
        for i, seat in enumerate(self.seats):
            if seat is not None:
                self._close(seat.link, 1001, "server shutting down")
                self.disconnect(i)

    # --- starting and ending games -------------------------------------------------

    @_notifies
    def _auto_start(self) -> None:
        self._cancel_next_game()
        if self.machine.state is not ServerState.READY or self.mode is _Mode.PAUSED:
            return
        if self.settings.manual_start and self._book is None:
            return
        if self._book is None and self.series.over:
            return
        self._begin()

    def _cancel_next_game(self) -> None:
        if self._next_game is not None:
            self._next_game.cancel()
            self._next_game = None

    def _begin(self) -> None:
        self._cancel_next_game()
        seats = self.seats
        names = [s.name if s is not None else "" for s in seats]
        if self._book is not None:
            self._take_up()
            players = list(self._book.genesis["record"]["players"])
            # Seats by name: only the game's own agents sit while it waits (_may_sit). Two
            # agents of one name take the seats in order.
            if sorted(names) == sorted(players) and names[0] != names[1]:
                self.seat_of = [names.index(p) for p in players]
            else:
                self.seat_of = [0, 1]
            self._note(f"game resumes from its log (seats {self.seat_of})")
        else:
            first = self._next_first()
            new = self.game = g.Game(
                names,
                random.Random(self.rng.getrandbits(64)),
                variant=VARIANT,
                lexicon=self.lexicon,
                first_player=first,
            )
            self.seat_of = [0, 1]
            self.first = first
            self.times = [self.settings.player_time] * 2
            self.total = self.settings.total_time
            self._challenge_left = self.settings.challenge_time
            self.game_id = self.new_id(new.players)
            if self._open_log is not None:
                self._file = self._open_log(new.players, self.game_id)
            self._open_book(new)
            self._note(f"game {self.series.played + 1} of {self.series.games} starts")
        self.machine.advance(ServerInput.START)
        game = self.game
        assert game is not None
        self._count_start()
        if game.result is not None:
            # The log's last action ended the game, but the server stopped before it
            # stored the game: END now, from the log.
            self._ended(game.result)
            return
        for player, i in enumerate(self.seat_of):
            order = 1 if game.turn == player else 2
            mine, theirs = game.scores[player], game.scores[1 - player]
            self._send(
                i,
                messages.Start(order, game.rack(player), tuple(game.board.rows()), mine, theirs,
                      *self._times_of(player)),
            )  # fmt: skip
        if self.mode is _Mode.RUNNING:
            self._start_clock()

    def _count_start(self) -> None:
        if not self._counted and self.metrics:
            self._counted = True
            METRICS.room_started(PROTOCOL)

    def _after(self, events: list[g.Event]) -> bool:
        """After an action: end the game if it is over (True)."""
        game = self.game
        assert game is not None
        if game.is_over:
            ended = next(e for e in events if isinstance(e, g.GameEnded))
            self._ended(ended.result)
            return True
        return False

    def _apply_end(self, action: g.End) -> None:
        game = self.game
        assert game is not None
        events: list[g.Event] = []
        if game.pending is not None and game.turn is not None:
            events = game.apply(g.Accept(game.turn))  # a play in its challenge window stands
        if not game.is_over:
            events = game.apply(action)
        self._after(events)

    def _ended(self, result: g.GameResult, *, tell: bool = True) -> None:
        game = self.game
        assert game is not None
        self._halt_clocks()
        reason = _END_REASONS[result.reason]
        for player, i in enumerate(self.seat_of):
            if tell and self.seats[i] is not None:
                mine, theirs = result.scores[player], result.scores[1 - player]
                self._send(i, messages.EndMessage(reason, mine, theirs))
        if self.machine.can(ServerInput.GAME_OVER):
            self.machine.advance(ServerInput.GAME_OVER)
        self.series.played += 1
        winners = [game.players[w] for w in result.winners]
        outcome = {
            "game_id": self.game_id,
            "players": list(game.players),
            "first": self.first,
            "scores": list(result.scores),
            "reason": reason.name,
            "winners": winners,
            "winner": winners[0] if len(winners) == 1 else None,
        }
        self.series.results.append(outcome)
        self._note(f"game over: {reason.name} {list(result.scores)}")
        self._log_moves()
        try:
            gcg = self._close_book(game, reason)
            if self._file is not None:
                self._file.finished(gcg)
        except Exception:
            logger.exception("cmpn402: recording the game failed")
        # The room's counters, by the stored end reason (a game that waited in its log
        # since a restart and ends there, never resumed, counts as started now).
        self.last_end = reason.name.lower()
        if self.metrics:
            self._count_start()
            self._counted = False
            METRICS.room_finished(PROTOCOL, self.last_end)
        self.game = None
        self._book = None
        self._file = None
        self._held.clear()
        # END goes out (behind the log's last writes) before anyone hears of the end.
        self._commit()
        if self.on_game_over is not None:
            try:
                self.on_game_over(dict(outcome))
            except Exception:
                logger.exception("cmpn402: the game-over watcher failed")
        if not self.series.over and not self.settings.manual_start:
            self._next_game = self.clock.call_later(
                self.settings.between_games / 1000, self._auto_start
            )

    # --- the game's log (ARCHITECTURE.md, "Durability") ------------------------------

    def _open_book(self, game: g.Game) -> None:
        """A new game's log: its genesis, written before START goes out."""
        uid = self.game_id
        header = to_record(game, lexicon=self._lexicon_name, uid=uid)
        header["actions"], header["result"] = [], None
        seats = [
            {"name": p, "protocol": PROTOCOL, "rejoin": None, "bot": None} for p in game.players
        ]
        series = self.series
        table = {
            "referee": self.key,
            "variant": VARIANT.name,
            "series": {"games": series.games, "played": series.played, "results": series.results},
        }
        clocks = {
            "player_time": self.settings.player_time / 1000,
            "total_time": self.settings.total_time / 1000,
            "challenge_time": self.settings.challenge_time / 1000,
        }
        genesis = log_genesis(GAME, header, seats, table, clocks)
        self._book = _Book(uid, genesis, [], self.wall_clock())
        journal = self.journal
        if journal is not None:
            self.ahead.write(functools.partial(journal.open, uid, GAME, genesis), f"open {uid}")

    def _log_moves(self) -> None:
        """Append the running game's settled actions not logged yet, with the clocks.

        A PLAY in its challenge window is not settled: it is logged with its verdict, so
        a game resumed from its log has no play awaiting a challenge (spec, "Disconnection":
        its player plays again).
        """
        book, game = self._book, self.game
        if book is None or game is None:
            return
        actions = to_record(game)["actions"]
        if game.pending is not None:
            actions = actions[:-1]
        for action in actions[book.actions :]:
            book.actions += 1
            self._append(book, action)

    def _append(self, book: _Book, action: dict[str, Any] | None) -> None:
        """One entry: an action (None: the clocks stopped, at a disconnect) with both
        players' remaining times and the game clock, in seconds. It is written with the
        step's other entries by :meth:`_write_entries`."""
        clocks = [self.times[0] / 1000, self.times[1] / 1000, self.total / 1000]
        book.entries.append({"action": action, "clocks": clocks})

    def _write_entries(self) -> None:
        """Queue the entries made since the last write as ONE write: a PLAY and its
        verdict are two entries, and a log holding the play without its verdict (a crash
        between two writes) would resume with a play in its challenge window, which no
        START can say."""
        book, journal = self._book, self.journal
        if book is None:
            return
        first, new = book.written + 1, book.entries[book.written :]
        book.written = len(book.entries)
        if journal is None or not new:
            return
        last = first + len(new) - 1
        at = self.wall_clock()
        if len(new) == 1:
            call = functools.partial(journal.append, book.uid, first, new[0], at)
        else:
            call = functools.partial(journal.append_many, book.uid, first, new, at)
        self.ahead.write(call, f"append {book.uid}#{first}-{last}")

    def _close_book(self, game: g.Game, reason: messages.EndReason) -> str:
        """Store the finished game as its log closes; returns its GCG."""
        gcg = to_gcg(game, lexicon=self._lexicon_name)
        self._write_entries()
        book, result, journal = self._book, game.result, self.journal
        if book is None or result is None or journal is None:
            return gcg
        data = to_record(game, lexicon=self._lexicon_name, uid=book.uid)
        # The stored record's actions are the log's (ARCHITECTURE.md, "Durability").
        data["actions"] = [e["action"] for e in book.entries if e["action"] is not None]
        players = list(game.players)
        stored = {
            "game": GAME,
            "variant": VARIANT.name,
            "protocols": [PROTOCOL],
            "players": players,
            "started_at": book.started_at,
            "end_reason": reason.name.lower(),
            "result": {
                "scores": dict(zip(players, result.scores, strict=True)),
                "winners": [players[w] for w in result.winners],
            },
            "record": gcg,
            "data": data,
        }
        self.ahead.write(functools.partial(journal.finish, book.uid, stored), f"finish {book.uid}")
        return gcg

    def _fold(self, book: _Book, rng: random.Random | None = None) -> tuple[g.Game, list[int], int]:
        """The game, both players' times and the game clock (ms) as the log has them."""
        actions = [e["action"] for e in book.entries if e.get("action") is not None]
        record = {**book.genesis["record"], "actions": actions, "result": None}
        rng = rng or random.Random(self.rng.getrandbits(64))
        game = resume(record, rng, lexicon=self.lexicon)
        clocks = next((e["clocks"] for e in reversed(book.entries) if e.get("clocks")), None)
        if clocks is None:
            settings = book.genesis["clocks"]
            clocks = [settings["player_time"], settings["player_time"], settings["total_time"]]
        return game, [_ms(clocks[0]), _ms(clocks[1])], _ms(clocks[2])

    def _take_up(self) -> None:
        """The game waiting in its log becomes the running game (not started yet)."""
        book = self._book
        assert book is not None
        self.game, self.times, self.total = self._fold(book)
        if self.game.pending is not None and self.game.turn is not None:
            # A log written before plays and verdicts went in one write (or by a writer
            # that cannot write two at once) may end on a play whose verdict was lost in
            # a crash: nobody heard that verdict (write-ahead), so the play stands as if
            # its challenge window had run out, and the verdict is logged now.
            logger.warning("cmpn402: %s ends on a play without its verdict: it stands", book.uid)
            self.game.apply(g.Accept(self.game.turn))
        self.first = int(book.genesis["record"]["setup"]["first_player"])
        self.game_id = book.uid
        self._challenge_left = self.settings.challenge_time
        if self._open_log is not None:
            self._file = self._open_log(self.game.players, self.game_id)

    def _recover(self, log: ActionLog) -> None:
        """After a restart: this referee's unfinished log waits for its agents."""
        entries = [dict(e.entry) for e in log.entries]
        actions = sum(e.get("action") is not None for e in entries)
        book = _Book(log.uid, dict(log.genesis), entries, log.created_at, actions, len(entries))
        try:
            self._fold(book)
            series = book.genesis["table"]["series"]
            self.series = _Series(
                int(series["games"]), int(series["played"]), list(series["results"])
            )
        except (RecordError, KeyError, TypeError, ValueError, IndexError) as e:
            logger.error("cmpn402: the log %s does not replay (%s); left as it is", log.uid, e)
            return
        self._book = book
        logger.info("cmpn402: game %s waits in its log for two agents to resume", log.uid)

    def _commit(self) -> None:
        """Queue the log's new entries, then release what was sent (write-ahead)."""
        self._log_moves()
        self._write_entries()
        outbox, self._outbox = self._outbox, []
        arrivals, self._arrivals = self._arrivals, []
        if arrivals:
            if outbox:  # counted as the step's last delivery is made
                outbox[-1] = functools.partial(_counting, outbox[-1], arrivals)
            else:  # nothing to tell (a refusal the spec answers with silence)
                _counting(None, arrivals)
        for call in outbox:
            self.ahead.deliver(call)

    # --- moves ---------------------------------------------------------------------

    def _other(self, player: int) -> int:
        return self.seat_of[1 - player]

    def _pass(self, player: int) -> None:
        game = self.game
        assert game is not None
        self._stop_clock()
        try:
            events = game.apply(g.Pass(player))
        except ScrabbleError as e:
            self._start_clock()
            self._invalid(player, str(e))
            return
        self.machine.advance(ServerInput.PASS)
        if self._after(events):
            return
        self._send(self._other(player), messages.PassNotice(*self._times_of(1 - player)))
        self._start_clock()

    def _invalid(self, player: int, why: str) -> None:
        self.machine.advance(ServerInput.MOVE_INVALID)
        self._note(f"INVALID for {self.game.players[player] if self.game else player}: {why}")
        self._send(self.seat_of[player], messages.Invalid(*self._times_of(player)))

    def _exchange(self, player: int, message: messages.ExchangeMove) -> None:
        game = self.game
        assert game is not None
        self._stop_clock()
        try:
            events = game.apply(g.Exchange(player, message.tiles))
        except ScrabbleError as e:
            self._start_clock()
            self._invalid(player, str(e))
            return
        self.machine.advance(ServerInput.EXCHANGE_VALID)
        drawn = _drawn(events, player)
        self._send(self.seat_of[player], messages.ExchangeTiles(drawn))
        if self._after(events):
            return
        count = len(message.tiles)
        self._send(self._other(player), messages.ExchangeNotice(count, *self._times_of(1 - player)))
        self._start_clock()

    def _play(self, player: int, message: messages.PlayMove) -> None:
        game = self.game
        assert game is not None
        direction = Direction.ACROSS if message.direction == 0 else Direction.DOWN
        self._stop_clock()
        try:
            tiles = tiles_from_new_tiles(
                game.board, message.column - 1, message.row - 1, direction, message.tiles
            )
            result = game.validate(tiles)
            if result.score != message.score:
                # ERRATA: the claimed score must be the server's own.
                raise _ScoreMismatch(f"claimed {message.score}, the play scores {result.score}")
            game.apply(g.Play(player, tiles))
        except (ScrabbleError, _ScoreMismatch) as e:
            self._start_clock()
            self._invalid(player, str(e))
            return
        self.machine.advance(ServerInput.PLAY_VALID)
        # Not logged until its verdict (spec, "Disconnection": any action except PLAY).
        self._send(
            self._other(player),
            messages.PlayNotice(
                message.column,
                message.row,
                message.direction,
                message.tiles,
                message.score,
                self.settings.challenge_time,
                *self._times_of(1 - player),
            ),
        )
        self._challenge_left = self.settings.challenge_time
        if self.mode is _Mode.RUNNING:
            self._start_challenge_timer()

    def _accept(self, challenger: int, *, timed_out: bool) -> None:
        game = self.game
        assert game is not None
        self._cancel_challenge_timer()
        played = 1 - challenger
        events = game.apply(g.Accept(challenger))
        if timed_out:
            self.machine.advance(ServerInput.CHALLENGE_TIMEOUT)
            self._send(
                self.seat_of[challenger], messages.NoChallengeTimes(*self._times_of(challenger))
            )
        else:
            self.machine.advance(ServerInput.NO_CHALLENGE)
        self._send(self.seat_of[played], messages.NoChallengeTiles(_drawn(events, played)))
        if self._after(events):
            return
        self._start_clock()

    def _challenge(self, challenger: int) -> None:
        game = self.game
        assert game is not None
        self._cancel_challenge_timer()
        played = 1 - challenger
        events = game.apply(g.Challenge(challenger))
        if any(isinstance(e, g.ChallengeUpheld) for e in events):
            self.machine.advance(ServerInput.CHALLENGE_UPHELD)
            self._send(self.seat_of[played], messages.ChallengeAccepted())
            self._send(
                self.seat_of[challenger],
                messages.ChallengeAcceptedTimes(*self._times_of(challenger)),
            )
        else:
            self.machine.advance(ServerInput.CHALLENGE_REJECTED)
            tiles = _drawn(events, played)
            self._send(
                self.seat_of[played],
                messages.ChallengeRejectedTiles(tiles, *self._times_of(played)),
            )
            self._send(self.seat_of[challenger], messages.ChallengeRejected())
        if self._after(events):
            return
        self._start_clock()

    # --- clocks --------------------------------------------------------------------

    def _times_of(self, player: int) -> tuple[int, int]:
        """A player's remaining time and the game's, in ms, as of now."""
        mine, total = self.times[player], self.total
        game = self.game
        if self._clock_since is not None and game is not None and game.turn == player:
            spent = self._spent()
            mine, total = mine - spent, total - spent
        elif self._clock_since is not None:
            total -= self._spent()
        return max(0, mine), max(0, total)

    def _spent(self) -> int:
        assert self._clock_since is not None
        return round((self.clock.now() - self._clock_since) * 1000)

    def _start_clock(self) -> None:
        game = self.game
        if game is None or game.turn is None or self.mode is _Mode.PAUSED:
            return
        self._clock_since = self.clock.now()
        left = min(self.times[game.turn], self.total)
        self._clock_timer = self.clock.call_later(left / 1000, self._time_out)

    def _stop_clock(self) -> None:
        """Charge the running time to the player on turn and the game clock."""
        game = self.game
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        if self._clock_since is not None and game is not None and game.turn is not None:
            spent = self._spent()
            self.times[game.turn] = max(0, self.times[game.turn] - spent)
            self.total = max(0, self.total - spent)
        self._clock_since = None

    @_notifies
    def _time_out(self) -> None:
        self._clock_timer = None
        game = self.game
        if game is None or game.turn is None:
            return
        self._stop_clock()
        self._note(f"time out: {game.players[game.turn]}")
        self._apply_end(g.End(g.EndReason.TIME, game.turn))

    def _start_challenge_timer(self) -> None:
        self._challenge_since = self.clock.now()
        self._challenge_timer = self.clock.call_later(
            self._challenge_left / 1000, self._challenge_timed_out
        )

    def _cancel_challenge_timer(self) -> None:
        if self._challenge_timer is not None:
            self._challenge_timer.cancel()
            self._challenge_timer = None

    @_notifies
    def _challenge_timed_out(self) -> None:
        self._challenge_timer = None
        game = self.game
        if game is None or game.pending is None or game.turn is None:
            return
        self._note("challenge window over: NO_CHALLENGE")
        self._accept(game.turn, timed_out=True)

    def _halt_clocks(self) -> None:
        """Stop every running clock, remembering what is left (pause, disconnect, end)."""
        self._stop_clock()
        if self._challenge_timer is not None:
            spent = round((self.clock.now() - self._challenge_since) * 1000)
            self._challenge_left = max(0, self._challenge_left - spent)
            self._cancel_challenge_timer()

    def _resume_clocks(self) -> None:
        if self.machine.state is ServerState.AWAIT_CHALLENGE:
            self._start_challenge_timer()
        else:
            self._start_clock()

    # --- output --------------------------------------------------------------------

    def _send(self, index: int, message: messages.ServerMessage) -> None:
        seat = self.seats[index]
        if seat is None:
            return
        data = message.encode()
        self._log_message("out", index, message, data)
        self._outbox.append(functools.partial(seat.link.send, data))

    def _close(self, link: Link, code: int, reason: str) -> None:
        self._outbox.append(functools.partial(link.close, code, reason))

    def _log_message(self, direction: str, index: int, message: object, data: bytes) -> None:
        seat = self.seats[index]
        who = f"{index + 1}:{seat.name if seat else '?'}"
        if seat is not None:
            logger.debug("[%s] %s %s %s", seat.link.id, direction, message, data.hex())
        if self._file is not None:
            self._file.message(direction, who, message, data)

    def _note(self, text: str) -> None:
        logger.info("cmpn402: %s", text)
        if self._file is not None:
            self._file.note(text)


def _counting(deliver: Callable[[], object] | None, arrivals: list[float]) -> None:
    """Make a delivery, then count the commands that led to it (:meth:`Referee._commit`)."""
    try:
        if deliver is not None:
            deliver()
    finally:
        for arrived in arrivals:
            METRICS.command(PROTOCOL, arrived)


def moves_of(game: g.Game) -> list[dict[str, Any]]:
    """The game's move list for spectators: public facts only (no rack, no exchanged tiles)."""
    moves: list[dict[str, Any]] = []
    for e in game.events:
        if isinstance(e, g.PlayMade):
            text = f"{e.move.position} {e.move.word}"
            moves.append({"player": e.player, "text": text, "score": e.score, "total": e.total})
        elif isinstance(e, g.PlayWithdrawn):
            text = "play withdrawn (challenged)"
            moves.append({"player": e.player, "text": text, "score": -e.score, "total": e.total})
        elif isinstance(e, g.ChallengeFailed) and e.bonus:
            text = "challenge failed"
            moves.append({"player": e.player, "text": text, "score": e.bonus, "total": e.total})
        elif isinstance(e, g.Exchanged):
            text = f"exchange {e.count}"
            moves.append({"player": e.player, "text": text, "score": 0, "total": e.total})
        elif isinstance(e, g.Passed):
            moves.append({"player": e.player, "text": "pass", "score": 0, "total": e.total})
        elif isinstance(e, g.TurnLost):
            text = "turn lost (challenge failed)"
            moves.append({"player": e.player, "text": text, "score": 0, "total": e.total})
        elif isinstance(e, g.GameEnded):
            for player, adjustment in enumerate(e.result.adjustments):
                if adjustment:
                    moves.append(
                        {
                            "player": player,
                            "text": "end: rack" if adjustment < 0 else "end: out",
                            "score": adjustment,
                            "total": e.result.scores[player],
                        }
                    )
    return moves


def _ms(seconds: object) -> int:
    """A time from a log (seconds) in whole milliseconds."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise ValueError(f"not a time: {seconds!r}")
    return round(seconds * 1000)


def _drawn(events: list[g.Event], player: int) -> str:
    """The tiles a player drew in these events (what "new tiles" means on the wire)."""
    return "".join(e.tiles for e in events if isinstance(e, g.TilesDrawn) and e.player == player)


class _ScoreMismatch(Exception):
    """A PLAY whose claimed score is not the engine's (answered INVALID)."""

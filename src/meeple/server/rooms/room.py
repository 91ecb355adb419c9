"""Rooms: one actor per running game, owning the engine state and the seats.

A room runs one task that takes commands from its inbox in order, so a game's
state is only ever touched by that task: no locks, and a later split of rooms onto
other nodes only has to carry the inbox. Seats are players bound to a dialect
(the protocol adapter that turns room events into that protocol's messages), so
players on different protocols can share a room when the variant allows it.

Every room is a log (docs/durability.md). The one path of a command is: seat →
:meth:`Room.submit` → the room's inbox → :meth:`Room.handle` (the engine validates
and applies it; what seats are told is held in the room's outbox) → the new entries
are appended to the room's log through the :class:`~meeple.server.store.journal.Journal`
and awaited → the outbox is delivered to the seats and a snapshot to the feed. So
nobody hears of an action before its entry is durable, and a refused command, which
the engine never applied, is never logged. A room's log holds a genesis
(:meth:`Room.genesis`: the game's record header with its bag or seed, the seats and
their protocols, the table's settings) and one entry per action of the game's record
(:meth:`Room.log_actions`) with the players' clocks; the finished game's record is
built from the logged actions.

The write-ahead itself is :class:`WriteAhead`, one queue of log writes and deliveries in
the order they were made, shared with the rooms that are not :class:`Room` subclasses
(the CMPN402 referee, :mod:`meeple.server.rooms.cmpn402`, in ``meeple serve``). What a
room holds that keeps timers of its own (the referee, in a cluster's referee room) takes
a :class:`RoomClock`: its timers are the room's commands.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from meeple.games.records import RecordError
from meeple.server.clock import Clock, SystemClock, Timer
from meeple.server.feed import Feed, game_topic
from meeple.server.metrics import METRICS
from meeple.server.rooms.timecontrol import Clocks, TimeControl
from meeple.server.store.journal import Written

if TYPE_CHECKING:
    from meeple.server.store.database import ActionLog

__all__ = [
    "END_ABORTED",
    "END_RESIGNED",
    "END_SERVER_RESTART",
    "END_STORE_UNAVAILABLE",
    "LOG_VERSION",
    "Abort",
    "AbortRefused",
    "Halted",
    "LogSink",
    "Resign",
    "Resumed",
    "Room",
    "RoomClock",
    "Seat",
    "WriteAhead",
    "log_genesis",
    "token_hash",
]

# The version of a log's genesis and entries (docs/durability.md).
LOG_VERSION = 1
# The end reason of a game its players could not go on with after a restart.
END_SERVER_RESTART = "server-restart"
# The end reason of a game stopped because the store could not keep its log.
END_STORE_UNAVAILABLE = "store-unavailable"
# The end reasons of a game a player aborted before moving (not rated) or resigned
# (issue 34.4, 34.9; docs/web.md, "Abort and resign").
END_ABORTED = "aborted"
END_RESIGNED = "resigned"


def log_genesis(
    game: str,
    record: Mapping[str, Any],
    seats: Sequence[Mapping[str, Any]],
    table: Mapping[str, Any],
    clocks: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A log's genesis: the game's record header (its bag or seed, no action, no result),
    the seats (``name``, ``protocol``, ``rejoin``, ``bot``), what else rebuilds the table,
    and the clocks' settings."""
    return {
        "version": LOG_VERSION,
        "game": game,
        "record": dict(record),
        "seats": [dict(s) for s in seats],
        "table": dict(table),
        "clocks": None if clocks is None else dict(clocks),
    }


class LogSink(Protocol):
    """Where a room's log is written: the server's :class:`~meeple.server.store.journal.Journal`.

    Each call returns what to await until the write is taken (durable, or deferred while
    the store fails); a sink that writes inline (a test's) returns None.
    """

    def open(self, uid: str, game: str, genesis: Mapping[str, Any]) -> Awaitable[object] | None:
        """Start log ``uid`` with its genesis."""

    def append(
        self, uid: str, seq: int, entry: Mapping[str, Any], at: float
    ) -> Awaitable[object] | None:
        """Write entry number ``seq`` (from 1) of log ``uid``."""

    def append_many(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> Awaitable[object] | None:
        """Write entries ``seq``, ``seq + 1``, … of log ``uid`` at once: all or none."""

    def finish(self, uid: str, game: Mapping[str, Any]) -> Awaitable[object] | None:
        """Store the finished game (``Store.record_game``'s arguments) and close the log."""


@dataclass(slots=True)
class _Step:
    write: Callable[[], Awaitable[object] | None] | None = None
    running: Awaitable[object] | None = None
    deliver: Callable[[], object] | None = None
    on_error: Callable[[BaseException], object] | None = None
    what: str = ""
    on_taken: Callable[[object], object] | None = None


class WriteAhead:
    """Write-ahead: a room's log writes and its deliveries in one queue, in order.

    A room queues the writes of its log (:meth:`write`, a call to its :class:`LogSink`)
    and what it tells its players (:meth:`deliver`, any call: a seat's ``deliver``, a
    connection's send or close) in the order it makes them. A delivery runs only once
    every write queued before it is taken — at once when none is waiting. Writes run
    one at a time, in order, in a task of the queue's own (so a room that cannot await,
    the CMPN402 referee, uses it as it is); :meth:`drain` waits for the queue to empty.

    A write that fails (a log that refuses it: another writer owns it) is logged and
    its ``on_error`` told; the queue goes on with the next step.
    """

    def __init__(self, name: str = "room", *, inline: bool = False) -> None:
        self.name = name
        # ``inline``: the owner awaits :meth:`drain` after queueing (a room's task), so
        # the queue runs in the owner's task rather than in one of its own: no task to
        # create and switch to per command.
        self.inline = inline
        self._queue: deque[_Step] = deque()
        self._task: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> int:
        """Steps queued behind a write that is not taken yet."""
        return len(self._queue)

    def write(
        self,
        call: Callable[[], Awaitable[object] | None],
        what: str,
        on_error: Callable[[BaseException], object] | None = None,
        on_taken: Callable[[object], object] | None = None,
    ) -> None:
        """Queue a log write (``call`` is made when every step before it is done);
        ``on_taken`` is told what the write's awaitable gave (the journal's
        :class:`~meeple.server.store.journal.Written`) once it is taken."""
        if self._queue:
            self._queue.append(_Step(write=call, on_error=on_error, what=what, on_taken=on_taken))
            return
        try:
            running = call()
        except Exception as e:
            self._failed(what, e, on_error)
            return
        if running is not None:
            self._queue.append(
                _Step(running=running, on_error=on_error, what=what, on_taken=on_taken)
            )
            if not self.inline:
                self._kick()

    def deliver(self, call: Callable[[], object]) -> None:
        """Run ``call`` once every write queued before it is taken (now, if none is)."""
        if self._queue:
            self._queue.append(_Step(deliver=call))
        else:
            self._run_delivery(call)

    async def drain(self) -> None:
        """Wait until every queued write is taken and every delivery behind it made."""
        while self._queue:
            if self.inline and self._task is None:
                await self._steps()
                continue
            self._kick()
            assert self._task is not None
            await asyncio.shield(self._task)

    def _kick(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"{self.name}-write-ahead"
            )

    async def _run(self) -> None:
        try:
            await self._steps()
        finally:
            self._task = None

    async def _steps(self) -> None:
        while self._queue:
            step = self._queue[0]
            try:
                if step.deliver is not None:
                    self._run_delivery(step.deliver)
                    continue
                running = step.running
                if running is None and step.write is not None:
                    running = step.write()
                if running is not None:
                    taken = await running
                    if step.on_taken is not None:
                        step.on_taken(taken)
            except Exception as e:
                self._failed(step.what, e, step.on_error)
            finally:
                self._queue.popleft()

    def _failed(
        self, what: str, error: Exception, on_error: Callable[[BaseException], object] | None
    ) -> None:
        logger.error("[%s] log write %s failed: %s", self.name, what, error)
        if on_error is not None:
            try:
                on_error(error)
            except Exception:
                logger.exception("[%s] a write's error callback failed", self.name)

    def _run_delivery(self, call: Callable[[], object]) -> None:
        try:
            call()
        except Exception:
            # One player's failing connection must not stop the deliveries to the others.
            logger.exception("[%s] a delivery failed", self.name)


def token_hash(token: str) -> str:
    """What a log keeps of a rejoin token: enough to recognise it, not to use it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


logger = logging.getLogger(__name__)

_R = TypeVar("_R", bound="Room")

_room_ids = itertools.count(1)


class Seat(Protocol):
    """A player at a table. The room calls :meth:`deliver` with events for this player."""

    name: str

    def deliver(self, event: object) -> None:
        """Render a room event in the seat's protocol and send it (must not block)."""


@dataclass(frozen=True, slots=True)
class Abort:
    """A seat's command: end the game unrated, as lichess's abort, while the seat's own
    player has not made a move yet (:meth:`Room.may_abort`; issue 34.4)."""


@dataclass(frozen=True, slots=True)
class Resign:
    """A seat's command: its player gives the game up (issue 34.9); the room ends it with
    the reason ``resigned`` (or, where the game goes on without them, drops the player)."""


@dataclass(frozen=True, slots=True)
class AbortRefused:
    """The seat asked to abort once its player had moved: it may only resign now."""

    reason: str


@dataclass(frozen=True, slots=True)
class Halted:
    """The server stopped this game from outside its rules (its store cannot keep it)."""

    room: str


@dataclass(frozen=True, slots=True)
class Resumed:
    """A seat is back after a dropped connection (:meth:`Room.rebind`): the game as it is.

    ``you`` is the seat's index, ``players`` the names in seat order and ``game`` the
    room's engine game (read it; do not change it). Each dialect renders its own resync
    (the browser: a full view for that seat).
    """

    room: str
    you: int
    players: tuple[str, ...]
    game: object


class Room:
    """Base of every game room: an inbox, a task draining it, seats, and an end.

    Subclasses implement :meth:`handle` (one command from one seat) and may override
    :meth:`on_start` and :meth:`on_seat_left`. They call :meth:`finish` when the game
    is over; the room then stops and ``on_finished`` callbacks run (the lobby frees
    the players, the store records the game).
    """

    # The game's name in URLs, records and the lobby; each subclass sets it.
    game_name = "game"
    # The engine's game, which each subclass sets (its own type): a seat's dialect may
    # read it (do not change it); on a cluster edge the seat's view stands for it.
    game: object

    def __init__(self, seats: list[Seat], *, uid: str | None = None) -> None:
        self.id = f"room-{next(_room_ids)}"
        # Stable and hard to guess: the game's URL (/games/<uid>) live and in the store.
        self.uid = uid or secrets.token_hex(6)
        # Set by the lobby: where the room's log goes (None: the room keeps no log).
        self.journal: LogSink | None = None
        # Set by the lobby: the hashes of the seats' rejoin tokens, by seat (genesis).
        self.rejoin_hashes: list[str | None] = [None] * len(seats)
        self.wall_clock: Callable[[], float] = time.time
        self._outbox: list[tuple[Seat, object]] | None = None
        self._logged: list[Mapping[str, Any]] = []  # the actions in the log, in order
        self._log_open = False
        self._log_refused = False
        # The log's writes and the deliveries held behind them, in order (write-ahead).
        self._ahead = WriteAhead(self.id, inline=True)
        self._conclusion: dict[str, Any] | None = None
        self._concluded = False
        self._end_reason: str | None = None  # an end from outside the rules, while it happens
        # Set when a log write was deferred (the store failing): the journal holds it.
        self.unwritten = False
        # Set by the lobby: viewers get a snapshot after every command (docs/web.md).
        self.feed: Feed | None = None
        self.on_changed: list[Callable[[Room], None]] = []
        self.seats = list(seats)
        # (seat, command, when it arrived: time.perf_counter() for the latency metric)
        self._inbox: asyncio.Queue[tuple[Seat | None, Any, float]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.finished = False
        self.on_finished: list[Callable[[Room], None]] = []
        self.log = _RoomLog(logger, {"room": self.id, "uid": self.uid})
        # Hooks for a room served over the bus (meeple.node.rooms): the command being
        # applied and logged now (None between commands), and callbacks told of each
        # command once its entries are taken and its deliveries made ((None, None) for
        # the start).
        self.handling: tuple[Seat | None, object] | None = None
        self.on_committed: list[Callable[[Seat | None, object], None]] = []
        # Set by the lobby: the server's clock, and the table's time control (None: no
        # clocks). The players' clocks (``timing``) start with the game (docs/web.md).
        self.clock: Clock = SystemClock()
        self.time_control: TimeControl | None = None
        self.timing: Clocks | None = None
        self._resumed_clocks: list[float] | None = None

    # --- the outside world talks to the room only through these -------------------

    def start(self) -> None:
        """Start the room's task; ``on_start`` runs first inside it."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self.id)

    def submit(self, seat: Seat | None, command: object) -> None:
        """Queue a command from a seat (None for the server itself, e.g. a timer)."""
        if not self.finished:
            self._inbox.put_nowait((seat, command, time.perf_counter()))

    def seat_index(self, seat: Seat) -> int | None:
        """``seat``'s index in this room (None: not one of its seats)."""
        return next((i for i, s in enumerate(self.seats) if s is seat), None)

    def index(self, seat: Seat) -> int:
        """The index of ``seat``, one of this room's seats (a game's room asks it of the
        seat whose command it handles)."""
        return next(i for i, s in enumerate(self.seats) if s is seat)

    def leave(self, seat: Seat) -> None:
        """A seat's connection is gone; the room decides what that means for the game."""
        self.submit(None, _SeatLeft(seat))

    def rebind(self, old: Seat, new: Seat) -> None:
        """``new`` (a new connection) takes ``old``'s seat; it is told the game as it is."""
        self.submit(None, _SeatBack(old, new))

    async def wait_finished(self) -> None:
        if self._task is not None:
            await asyncio.shield(self._task)

    # --- for subclasses -------------------------------------------------------------

    def on_start(self) -> None:
        """Deal, announce the game, tell whose turn it is."""

    def handle(self, seat: Seat | None, command: object) -> None:
        """Apply one command; reply to the seat on a rule error. Must not block."""
        raise NotImplementedError

    def on_seat_left(self, seat: Seat) -> None:
        """A player disconnected mid-game."""

    def may_abort(self, player: int) -> bool:
        """Whether ``player`` may still abort the game: they have not made a move of
        their own yet (each game says what counts as one; docs/web.md). False: no abort."""
        return False

    def on_abort(self, player: int) -> None:
        """End the game unrated with the reason ``aborted`` (asked only while
        :meth:`may_abort`)."""

    def early_result(self) -> dict[str, Any] | None:
        """The result of a game the room ended outside its engine (an abort the engine
        does not model), for the views; None: the engine's own result stands."""
        return None

    def on_resign(self, seat: Seat) -> None:
        """``seat``'s player gives up; the base applies the room's leave rule."""
        self.on_seat_left(seat)

    def clock_turn(self) -> int | None:
        """Whose clock runs now (the seat to move); None: nobody's (the game is over).
        Asked after every command of a room with a time control."""
        return None

    def on_flag(self, player: int) -> None:
        """``player``'s clock ran out (its end: zero, or the overtime's limit); the game
        decides what follows (docs/web.md, "Clocks")."""

    def on_seat_back(self, index: int, seat: Seat) -> None:
        """Seat ``index`` is played by ``seat`` now: tell it the game as it is."""
        players = tuple(s.name for s in self.seats)
        self.deliver(seat, Resumed(self.id, index, players, getattr(self, "game", None)))

    # --- the room's log (docs/durability.md) ------------------------------------------

    def genesis(self) -> dict[str, Any] | None:
        """The log's first entry; None: this room keeps no log.

        The base builds it from :meth:`record_header` and :meth:`table_settings`, with
        the seats' names, protocols and rejoin-token hashes.
        """
        header = self.record_header()
        if header is None:
            return None
        seats = [
            {
                "name": s.name,
                "protocol": getattr(s, "protocol", "unknown"),
                "rejoin": self.rejoin_hashes[i] if i < len(self.rejoin_hashes) else None,
                "bot": getattr(s, "level", None) if getattr(s, "bot", False) else None,
                # A seat served over the bus: the edge's address of it (meeple.node).
                **({"route": getattr(s, "route")} if getattr(s, "route", None) else {}),  # noqa: B009
            }
            for i, s in enumerate(self.seats)
        ]
        return log_genesis(
            self.game_name, header, seats, self.table_settings(), self.clock_settings()
        )

    def record_header(self) -> dict[str, Any] | None:
        """The game's record (``games/<game>/record.py``) before any action: its format,
        variant, players and ``setup`` (bag order, rules). None: no log."""
        return None

    def table_settings(self) -> dict[str, Any]:
        """What else rebuilds this room: the table's variant and rules of play."""
        return {}

    def clock_settings(self) -> dict[str, Any] | None:
        """The clocks' settings, None for a game without clocks."""
        return None if self.time_control is None else self.time_control.to_json()

    def log_actions(self, start: int = 0) -> Sequence[Mapping[str, Any]]:
        """The game's actions from number ``start`` (0-based) on, as its record writes
        them; the record's action list only ever grows. Asked after every command with
        the number already logged, so it should cost what is new, not the whole game."""
        return ()

    def clocks(self) -> list[float] | None:
        """Each player's remaining time in seconds, None for a game without clocks."""
        return None if self.timing is None else self.timing.now()

    def clock_view(self) -> dict[str, Any] | None:
        """The clocks as the pages show them (:meth:`Clocks.view`); None: no clocks."""
        return None if self.timing is None else self.timing.view()

    def conclude(self, game: Mapping[str, Any]) -> None:
        """Store this finished game (``Store.record_game``'s arguments) after the log's
        last entry, in the transaction that closes the log; ``data["actions"]`` is taken
        from the log. Without a journal the game is not stored here."""
        self._conclusion = dict(game)
        if self._end_reason is not None:
            # The game ended from outside its rules: its players' connections died with
            # the old process, or the store could not keep it.
            self._conclusion["end_reason"] = self._end_reason

    def resume_log(self, log: ActionLog) -> None:
        """This room goes on with ``log`` (restart recovery): the next entry follows it.

        The room, rebuilt from the log, must write the same actions the log holds; a room
        that would not (its game lost one of them) raises RecordError rather than append
        a record that cannot replay.
        """
        logged = [e.entry["action"] for e in log.entries]
        if list(self.log_actions()) != logged:
            raise RecordError(f"room {log.uid}: the restored game's actions are not its log's")
        self._log_open = True
        self._logged = logged
        # The clocks come back from the log: the genesis's control, the last entry's times
        # (the time between that entry and the restart is charged to nobody).
        settings = log.genesis.get("clocks")
        if settings:
            self.time_control = TimeControl.from_json(settings)
            times = next(
                (e.entry["clocks"] for e in reversed(log.entries) if e.entry.get("clocks")), None
            )
            self._resumed_clocks = None if times is None else [float(t) for t in times]

    def departed(self) -> Collection[int]:
        """The seats whose players left the game before it was restored (their leave is
        in the log): nobody is held for them and they do not leave again."""
        return ()

    def leave_at_restart(self, seats: Sequence[Seat]) -> None:
        """These seats' connections died with the old process: the room's leave rule
        applies to each; a game that ends from it is stored as ``server-restart``."""
        self.submit(None, _LeftAtRestart(tuple(seats)))

    @property
    def logged_actions(self) -> Sequence[Mapping[str, Any]]:
        """The actions written to the log (or deferred), in order."""
        return self._logged

    def spectator_view(self) -> dict[str, Any] | None:
        """What anyone may see of the game (``games/<game>/view.py``); None: nothing."""
        return None

    def seat_event(self, event: object, index: int) -> object:
        """``event`` as seat ``index`` (``-1``: no seat of this room) may have it: what
        every seat is handed, in ``meeple serve`` and on a cluster's seat subject alike
        (issue 32.3). Each game's room hands this to ``games/<game>/view.py``'s
        ``event_for_seat``, the one place that hides what a seat may not know; a
        dialect never sees more. Here: the event as it is."""
        return event

    def last_told(self, log: ActionLog) -> object | None:
        """What this room, restored from ``log``, told its seats of the log's last action
        (before :meth:`seat_event`), for a node that takes the room over to tell again
        (its old owner may have died between logging it and telling it); None: nothing
        to tell again."""
        return None

    def snapshot(self) -> dict[str, Any]:
        """The room for viewers: who plays on which protocol, and the spectator view."""
        return {
            "uid": self.uid,
            "game": self.game_name,
            "players": [s.name for s in self.seats],
            "protocols": [getattr(s, "protocol", "unknown") for s in self.seats],
            "finished": self.finished,
            "view": self.spectator_view(),
            "clocks": self.clock_view(),
        }

    def publish(self) -> None:
        """Hand viewers a fresh snapshot (the feed drops it if nothing changed).

        Nobody watching this game: no snapshot is built, the last one is only marked
        stale (a viewer's subscription publishes again). ``on_changed`` callbacks (the
        lobby's scores) run either way.
        """
        if self.feed is None:
            return
        topic = game_topic(self.uid)
        if self.feed.subscribers(topic) == 0:
            self.feed.forget(topic)
        elif self.feed.publish(topic, self.snapshot) is None:
            return  # nothing changed
        for callback in self.on_changed:
            try:
                callback(self)
            except Exception:
                self.log.exception("on_changed callback failed")

    def broadcast(self, event: object) -> None:
        for seat in self.seats:
            self.deliver(seat, event)

    def deliver(self, seat: Seat, event: object) -> None:
        """Tell one seat of an event; inside a command, once the command's log entries
        are written (write-ahead)."""
        if self._outbox is not None:
            self._outbox.append((seat, event))
            return
        self._deliver_now(seat, event)

    def _deliver_now(self, seat: Seat, event: object) -> None:
        try:
            index = next((i for i, s in enumerate(self.seats) if s is seat), -1)
            seat.deliver(self.seat_event(event, index))
        except Exception:
            # One seat's failing dialect must not stop the game for the others.
            self.log.exception("delivering %s to %s failed", type(event).__name__, seat.name)

    def finish(self) -> None:
        """Mark the game over; the room's task ends after the current command."""
        self.finished = True

    def report_over(self: _R, watchers: Iterable[Callable[[_R], None]]) -> None:
        """The game is over: tell each watcher (the store's recorder), then :meth:`finish`.

        A watcher that raises is logged and the others still hear: a store that fails
        must not keep a finished game's room alive."""
        for watch in watchers:
            try:
                watch(self)
            except Exception:
                self.log.exception("recording the game failed")
        self.finish()

    # --- the actor loop -------------------------------------------------------------

    async def _run(self) -> None:
        METRICS.room_started(self.game_name)
        try:
            self._outbox = []
            try:
                self.on_start()
                self._run_clocks()
            finally:
                await self._commit()
            self._committed(None, None)
            self.publish()
            while not self.finished:
                seat, command, arrived = await self._inbox.get()
                played = False
                self._outbox = []
                self.handling = (seat, command)
                try:
                    if isinstance(command, _SeatLeft):
                        self.on_seat_left(command.seat)
                    elif isinstance(command, _LeftAtRestart):
                        self._leave_at_restart(command.seats)
                    elif isinstance(command, _Halt):
                        self._halt(command.reason)
                    elif isinstance(command, _SeatBack):
                        self._seat_back(command.old, command.new)
                    elif isinstance(command, Abort | Resign) and seat is not None:
                        self._abort_or_resign(seat, command)
                    elif isinstance(command, _RoomTimer):
                        command.fire()
                    elif isinstance(command, _Flag):
                        if self.timing is not None and self.timing.fall(command.player):
                            self.log.info("%s's clock ran out", self.seats[command.player].name)
                            self.on_flag(command.player)
                    elif seat is not None and getattr(seat, "told_the_end", False):
                        # The seat's protocol already told its player how the game ended
                        # (a shutdown's farewell): nothing it sent before that counts now,
                        # so the stored end is the one the player was told.
                        pass
                    else:
                        played = seat is not None
                        self.handle(seat, command)
                except Exception:
                    # A bug in one command's handling is logged; the game state is only
                    # changed by the engine's atomic apply, so the room can go on.
                    self.log.exception("command %r failed", command)
                self._run_clocks()
                await self._commit()
                self.handling = None
                self._committed(seat, command)
                if played:
                    METRICS.command(getattr(seat, "protocol", "unknown"), arrived)
                self.publish()
        finally:
            METRICS.room_finished(self.game_name, self._ended_why())
            self.finished = True
            if self.timing is not None:
                self.timing.stop()
            self.publish()
            for callback in self.on_finished:
                try:
                    callback(self)
                except Exception:
                    self.log.exception("on_finished callback failed")

    def _ended_why(self) -> str:
        """The end reason of the stored game (the metric's label): the rules' own, or
        one from outside them; "unfinished" when the process stops with the game on."""
        reason = (self._conclusion or {}).get("end_reason") or self._end_reason
        return str(reason) if reason else "unfinished"

    def _committed(self, seat: Seat | None, command: object) -> None:
        for callback in self.on_committed:
            try:
                callback(seat, command)
            except Exception:
                self.log.exception("on_committed callback failed")

    def _run_clocks(self) -> None:
        """Start, switch or stop the players' clocks after a command (before its log
        entries, which carry the times)."""
        if self.time_control is None:
            return
        if self.timing is None:
            self.timing = Clocks(
                self.time_control,
                len(self.seats),
                self.clock,
                lambda player: self.submit(None, _Flag(player)),
                self._resumed_clocks,
            )
        self.timing.run(None if self.finished else self.clock_turn())

    async def _commit(self) -> None:
        """Queue the command's new log entries, then what it told the seats; wait for both."""
        outbox, self._outbox = self._outbox or [], None
        try:
            if self.journal is not None and not self._log_refused:
                self._write_log(self.journal)
        except Exception:
            # A bug building the entries: the room cannot be kept, so it stops rather
            # than play on unlogged.
            self.log.exception("the room's log entries failed; the room stops")
            self.finished = True
        finally:
            if outbox:
                # One step for all of the command's deliveries, behind its entries.
                self._ahead.deliver(functools.partial(self._deliver_all, outbox))
        await self._ahead.drain()

    def _deliver_all(self, outbox: list[tuple[Seat, object]]) -> None:
        if self._log_refused:
            return  # write-ahead: what the refused entries said is heard by nobody
        for seat, event in outbox:
            self._deliver_now(seat, event)

    def _write_log(self, journal: LogSink) -> None:
        if not self._log_open:
            genesis = self.genesis()
            if genesis is None:
                return
            self._write(lambda: journal.open(self.uid, self.game_name, genesis), "open")
            self._log_open = True
        actions = self.log_actions(len(self._logged))
        if actions:
            # A command's entries are one write: all of them or none (docs/durability.md).
            clocks = self.clocks()
            first = len(self._logged) + 1
            entries = [{"action": action, "clocks": clocks} for action in actions]
            self._logged.extend(actions)
            append = functools.partial(self._append, journal, first, entries, self.wall_clock())
            self._write(
                append,
                f"#{first}" if len(entries) == 1 else f"#{first}-{len(self._logged)}",
                self._taken,
            )
        if self._conclusion is not None and not self._concluded:
            self._concluded = True
            game = dict(self._conclusion)
            if isinstance(game.get("data"), Mapping):
                # The stored record's actions are the log's (ARCHITECTURE.md, Durability).
                game["data"] = {**game["data"], "actions": list(self._logged)}
            self._write(functools.partial(journal.finish, self.uid, game), "finish")

    def _append(
        self, journal: LogSink, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> Awaitable[object] | None:
        if len(entries) == 1:
            return journal.append(self.uid, seq, entries[0], at)
        return journal.append_many(self.uid, seq, entries, at)

    def _taken(self, written: object) -> None:
        # Deferred: kept in the journal's memory while the store fails (the lobby halts
        # such rooms if the journal overflows).
        if written is Written.DEFERRED:
            self.unwritten = True

    def _write(
        self,
        call: Callable[[], Awaitable[object] | None],
        what: str,
        on_taken: Callable[[object], object] | None = None,
    ) -> None:
        # After a refused write the log is not the room's any more: nothing more is sent.
        self._ahead.write(
            lambda: None if self._log_refused else call(),
            f"{self.uid} {what}",
            self._refused,
            on_taken,
        )

    def _refused(self, error: BaseException) -> None:
        # The log refuses the room's entries (another writer owns it) or a bug: the room
        # cannot be kept, so it stops rather than play on unlogged.
        self.log.error("the room's log refused its entries (%s); the room stops", error)
        self._log_refused = True
        self.finished = True

    def _leave_at_restart(self, seats: tuple[Seat, ...]) -> None:
        self._end_reason = END_SERVER_RESTART
        try:
            for seat in seats:
                if not self.finished:
                    self.on_seat_left(seat)
        finally:
            self._end_reason = None

    def halt(self, reason: str) -> None:
        """Stop the game from outside its rules (the store cannot keep it): each seat is
        told in its protocol (:meth:`on_halt`) and the game is stored with ``reason``."""
        self.submit(None, _Halt(reason))

    def on_halt(self) -> None:
        """End the game as the protocols can say it and :meth:`conclude` it; the base
        tells every seat :class:`Halted` (a dialect without a word for it closes the
        connection)."""
        self.broadcast(Halted(self.uid))

    def _halt(self, reason: str) -> None:
        if self.finished:
            return
        self._end_reason = reason
        try:
            self.on_halt()
        finally:
            self._end_reason = None
        self.finish()

    def _abort_or_resign(self, seat: Seat, command: Abort | Resign) -> None:
        if self.finished:
            return
        player = next((i for i, s in enumerate(self.seats) if s is seat), None)
        if player is None:
            return
        if isinstance(command, Resign):
            self.on_resign(seat)
        elif self.may_abort(player):
            self.log.info("%s aborts the game", seat.name)
            self.on_abort(player)
        else:
            self.deliver(seat, AbortRefused("you have moved: the game can only be resigned now"))

    def _seat_back(self, old: Seat, new: Seat) -> None:
        for i, seat in enumerate(self.seats):
            if seat is old:
                self.seats[i] = new
                self.on_seat_back(i, new)
                return


class RoomClock:
    """A clock for what a room holds (the CMPN402 referee's clocks and windows): time is
    ``clock``'s; a timer that is due is a command in the room's inbox, run in the room's
    task. So what it changes is one step of the room's, as a seat's command: its log
    entries written and its deliveries made in that step's commit, then published to
    viewers and told to ``on_committed``. A timer cancelled once due, while its command
    waits in the inbox, does nothing."""

    def __init__(self, room: Room, clock: Clock) -> None:
        self.room = room
        self.clock = clock

    def now(self) -> float:
        return self.clock.now()

    async def sleep(self, seconds: float) -> None:
        await self.clock.sleep(seconds)

    def call_later(self, seconds: float, callback: Callable[[], object]) -> _RoomTimer:
        timer = _RoomTimer(callback)
        timer.due = self.clock.call_later(seconds, lambda: self.room.submit(None, timer))
        return timer


class _RoomTimer:
    """A :class:`RoomClock`'s timer; once due, the room's command that runs it."""

    __slots__ = ("callback", "cancelled", "due")

    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback = callback
        self.cancelled = False
        self.due: Timer | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.due is not None:
            self.due.cancel()

    def fire(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.callback()


class _RoomLog(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        kwargs["extra"] = {**(self.extra or {}), **kwargs.get("extra", {})}
        return f"[{self.extra['room'] if self.extra else '?'}] {msg}", kwargs


class _SeatLeft:
    __slots__ = ("seat",)

    def __init__(self, seat: Seat) -> None:
        self.seat = seat


class _Halt:
    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _LeftAtRestart:
    __slots__ = ("seats",)

    def __init__(self, seats: tuple[Seat, ...]) -> None:
        self.seats = seats


class _Flag:
    __slots__ = ("player",)

    def __init__(self, player: int) -> None:
        self.player = player


class _SeatBack:
    __slots__ = ("new", "old")

    def __init__(self, old: Seat, new: Seat) -> None:
        self.old = old
        self.new = new

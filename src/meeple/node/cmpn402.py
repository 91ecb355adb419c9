"""The CMPN402 referee's games on a cluster: a referee room on a rooms node.

An edge runs the CMPN402 WebSocket listener (:mod:`meeple.node.cmpn402_edge`): it sends
the NAME request and reads NAME (spec, "State: INIT"), then seats the agent at a table
of the lobby (game ``cmpn402``, two players), so two agents on any two edges meet there.
The started table is a :class:`RefereeRoom` on a rooms node, served like every room
(:mod:`meeple.node.rooms`: the lease, the inbox, the fenced JetStream log, the takeover):

- the room holds ``meeple serve``'s own :class:`~meeple.server.rooms.cmpn402.Referee`
  for one game, seated with the two named agents (``Referee.seat``, as a contest board
  is); an agent's binary message crosses as :class:`AgentMessage` and goes to
  ``Referee.receive``; what the referee sends one agent crosses as :class:`ToAgent` (the
  encoded message) or :class:`CloseAgent` on that seat's subject;
- the referee writes its game's log itself (the spec's checkpoints, as in ``meeple
  serve``: docs/protocols/cmpn402.md) through the room's journal, the log's uid being the
  room's, and through the room's write-ahead queue; every entry also notes each seat's
  edge route and whether its agent is there, so a new owner knows where the agents are;
- the referee's timers (the players' clocks, the game's, a challenge window) are the
  room's commands (:class:`~meeple.server.rooms.room.RoomClock`): the referee changes
  only in the room's task, and each step is published to spectators as a move is;
- every seat of a running game is kept in the rejoin bucket under its agent's name
  (:func:`rejoin_hash`, :class:`SeatFinder`): an agent that sends NAME on any edge takes
  its seat back if a game holds one for that name (:class:`~meeple.node.wire.Rejoin`), as
  ``meeple serve`` resumes a game with whoever sends NAME;
- a dropped agent (its connection closed, its edge silent, or it came back on another
  connection) is the spec's "Disconnection": the times are logged, END reason 2 goes to
  the other agent, and the game waits; once the agent is back the game resumes with
  START to both;
- **a takeover** (the owner killed) rebuilds the referee from the log as ``meeple serve``
  does after a restart: the game folded from its entries with the times of the last one,
  so the time between the last entry and the takeover — the failover gap, and what the
  agent on move had spent of it — is charged to nobody. The agents kept their edge
  connections: each is told END reason 2 then START with the logged state (the spec's
  recovery from a connection error). A PLAY still in its challenge window at the kill is
  in no log (spec: "any action except PLAY" is a checkpoint): its player plays again.
- Every START opens a new *session* of the seat: what the agent sends is stamped with
  the session of the last START it heard (the edge does), and the room drops what was
  sent before it heard the current one (a move in flight while the room moved to another
  node, or while the other agent was away), so no stale move lands in a resumed game.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from meeple.bus.base import Bus, BusError, Subscription
from meeple.bus.subjects import Namespace
from meeple.cluster.registry import RejoinSeat, RejoinTokens
from meeple.games.records import RecordError
from meeple.games.scrabble.game import Game
from meeple.games.scrabble.record import resume
from meeple.games.scrabble.view import spectator_view
from meeple.node import wire
from meeple.protocols.cmpn402.errors import CloseCode
from meeple.protocols.cmpn402.messages import EndMessage, EndReason, MessageType
from meeple.server.app import Services
from meeple.server.lobby.tables import Lobby, QueueKey, RoomFactory, RoomRestorer
from meeple.server.rooms.cmpn402 import Referee, RefereeError, RefereeSettings, end_reason
from meeple.server.rooms.room import Room, RoomClock, Seat
from meeple.server.store.database import ActionLog

__all__ = [
    "GAME",
    "KEY",
    "TABLE_VARIANTS",
    "AgentMessage",
    "CloseAgent",
    "RefereeRoom",
    "SeatFinder",
    "ToAgent",
    "referee_rooms",
    "rejoin_hash",
]

logger = logging.getLogger(__name__)

GAME = "cmpn402"  # the rooms' game in the lobby and in the logs' headers
KEY = QueueKey(GAME, 2, GAME)  # the table every CMPN402 agent sits at
TABLE_VARIANTS = {GAME: (2, 2)}
# The room's uid token the edges ask for a dropped agent's seat (meeple.room.<it>.cmd).
FINDER = "cmpn402-seats"


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """One binary message from an agent, with the session of the last START it heard."""

    data: bytes
    session: str = ""


@dataclass(frozen=True, slots=True)
class ToAgent:
    """One encoded message from the referee to the seat's agent; ``session`` is set on a
    START (the seat's new session, module doc)."""

    data: bytes
    session: str = ""


@dataclass(frozen=True, slots=True)
class CloseAgent:
    """The referee closes the agent's connection (a WebSocket close code and reason)."""

    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class GameOver:
    """A finished game's END, for every seat (seat ``i``'s score is ``scores[i]``): what
    a node that finishes a room whose owner died after logging its end tells again
    (:meth:`RefereeRoom.last_told`); an edge whose agent heard it already drops it."""

    reason: int
    scores: tuple[int, ...]


def seat_view(event: object, seat: int) -> object:
    """A referee room's event as seat ``seat``'s agent hears it (:meth:`RefereeRoom.seat_event`):
    its own messages as they are; a :class:`GameOver` as its END."""
    if isinstance(event, GameOver):
        mine, theirs = event.scores[seat], event.scores[1 - seat]
        return ToAgent(EndMessage(EndReason(event.reason), mine, theirs).encode())
    return event


def last_told(room: object, log: ActionLog) -> object | None:
    """What a referee room told its agents of its log's last action, for a replay: only
    the END of a finished game (an open log's room resumes with END 2 and START, which
    hold everything)."""
    if log.end_reason is None or not isinstance(room, RefereeRoom):
        return None
    game = room.logged_game(log)
    if game is None or game.result is None:
        return None
    return GameOver(int(end_reason(game.result.reason)), tuple(game.result.scores))


class _Resume:
    """A restored room's first command: seat the agents who are there (the game resumes)."""


class _Over:
    """The referee's game is over: the room finishes, in the next command, once the END
    of the step that ended it is out (behind the log's end): the room's "over" must not
    overtake it (an edge lets a contest's agent go once its game is over there,
    :class:`meeple.node.contest.LeaveContest`)."""


# The admin's actions a referee room takes (docs/protocols/cmpn402.md, "Admin"; on a
# cluster: "On a cluster"): each is the referee's own button.
ADMIN_ACTIONS = ("stop", "pause", "resume")


class AdminRefused(Exception):
    """An admin action the referee cannot do now (its RefereeError): ``str()`` says why."""


class _Admin:
    """An organiser's action, in the room's inbox: ``done`` is resolved with its outcome
    once what it wrote is logged and what it told is sent (``Room.on_committed``)."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.outcome: str | AdminRefused = AdminRefused("not applied")


def rejoin_hash(name: str) -> str:
    """The rejoin bucket's key of a CMPN402 agent's name (the spec's agents come back by
    name: ``meeple serve`` resumes a game with whoever sends NAME)."""
    return hashlib.sha256(f"cmpn402:{name}".encode()).hexdigest()


class _SeatLink:
    """The referee's :class:`~meeple.server.rooms.cmpn402.Link` for seat ``index``."""

    def __init__(self, room: RefereeRoom, index: int) -> None:
        self.room = room
        self.index = index
        self.id = f"seat-{index + 1}"  # the room's uid once it starts

    def send(self, data: bytes) -> None:
        self.room.to_seat(self.index, data)

    def close(self, code: int, reason: str) -> None:
        self.room.close_seat(self.index, code, reason)


class _Journal:
    """The referee's log sink: the room's journal, the log named ``cmpn402`` (its
    restorer's game), each entry with the seats' routes and presence (module doc)."""

    def __init__(self, room: RefereeRoom) -> None:
        self.room = room

    def open(self, uid: str, game: str, genesis: Mapping[str, Any]) -> Awaitable[object] | None:
        seats = [
            {**info, "route": getattr(seat, "route", None)}
            for info, seat in zip(genesis["seats"], self.room.seats, strict=True)
        ]
        journal = self.room.journal
        assert journal is not None
        return journal.open(uid, GAME, {**genesis, "seats": seats})

    def append(
        self, uid: str, seq: int, entry: Mapping[str, Any], at: float
    ) -> Awaitable[object] | None:
        journal = self.room.journal
        assert journal is not None
        noted = self._noted(entry)
        self.room.entries.append(noted)
        return journal.append(uid, seq, noted, at)

    def append_many(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> Awaitable[object] | None:
        journal = self.room.journal
        assert journal is not None
        noted = [self._noted(e) for e in entries]
        self.room.entries.extend(noted)
        return journal.append_many(uid, seq, noted, at)

    def finish(self, uid: str, game: Mapping[str, Any]) -> Awaitable[object] | None:
        journal = self.room.journal
        assert journal is not None
        return journal.finish(uid, game)

    def _noted(self, entry: Mapping[str, Any]) -> Mapping[str, Any]:
        room = self.room
        routes = [getattr(s, "route", None) for s in room.seats]
        paused = room.referee.paused  # the admin's pause, for a new owner (RefereeRoom)
        return {**entry, "routes": routes, "present": list(room.present), "paused": paused}


class RefereeRoom(Room):
    """One CMPN402 game on a rooms node; see the module doc."""

    game_name = GAME

    def seat_event(self, event: object, index: int) -> object:
        return seat_view(event, index)

    def last_told(self, log: ActionLog) -> object | None:
        return last_told(self, log)

    def __init__(
        self,
        seats: list[Seat],
        make_referee: Callable[..., Referee],
        *,
        recovered: ActionLog | None = None,
        seats_kept: SeatKeeper | None = None,
    ) -> None:
        super().__init__(seats)
        self.present = [True] * len(seats)
        self.sessions = [""] * len(seats)
        self.slot_of: list[int | None] = [None] * len(seats)  # seat -> the referee's slot
        self.kept = seats_kept
        self.restored = recovered is not None
        self._tell_end: set[int] = set()  # seats told END 2 before their resumed START
        # The room counts its game and commands in the metrics (Room), not the referee.
        # Its log writes and sends go through the room's own write-ahead queue, drained
        # in each command's commit (its timers are commands too: RoomClock).
        self.referee = make_referee(
            journal=_Journal(self), ahead=self._ahead, recovered=recovered, metrics=False
        )
        # Its timers are the room's commands: the referee changes only in the room's task.
        self.referee.clock = RoomClock(self, self.referee.clock)
        self.referee.new_id = lambda _players: self.uid
        self.referee.on_game_over = lambda _outcome: self.submit(None, _Over())
        self.links = [_SeatLink(self, i) for i in range(len(seats))]
        # The log's entries as written (its length numbers what the seats are told).
        self.entries: list[Mapping[str, Any]] = []
        self._view: dict[str, Any] | None = None
        self._game: Game | None = None
        if recovered is not None:
            self.entries = [e.entry for e in recovered.entries]
            game = self.logged_game(recovered)
            self._view = None if game is None else spectator_view(game)
        self.on_committed.append(self._admin_committed)
        if recovered is not None and recovered.entries:
            last = recovered.entries[-1].entry
            if last.get("paused"):
                # The admin paused it before the takeover: it stays paused until resumed
                # (the agents hear START then: Referee.resume).
                self.referee.pause()
            present = last.get("present")
            if isinstance(present, list) and len(present) == len(seats):
                self.present = [bool(p) for p in present]
            routes = last.get("routes")
            if isinstance(routes, list) and len(routes) == len(seats):
                for seat, route in zip(seats, routes, strict=True):
                    if isinstance(route, str) and hasattr(seat, "route"):
                        seat.route = route

    def _ended_why(self) -> str:
        # The referee stores its game itself (its _Journal, not Room.conclude): the
        # metric's end reason is the one its record got, as meeple serve counts it.
        return self.referee.last_end or super()._ended_why()

    def logged_game(self, log: ActionLog) -> Game | None:
        """The game in ``log``, folded from its actions (the spectators' view until the
        referee resumes it; its end, for a replay); None if it does not fold."""
        actions = [e.entry["action"] for e in log.entries if e.entry.get("action") is not None]
        record = {**log.genesis["record"], "actions": actions, "result": None}
        try:
            return resume(record, random.Random(0), lexicon=self.referee.lexicon)
        except (RecordError, KeyError, TypeError, ValueError):
            return None  # the referee says why it cannot resume it

    @property
    def logged_actions(self) -> Sequence[Mapping[str, Any]]:
        """The referee's log entries (each delivery says how many were logged)."""
        return self.entries

    # --- the room ------------------------------------------------------------------------

    def start(self) -> None:
        for link in self.links:
            link.id = f"{self.uid}-{link.index + 1}"
        super().start()

    def on_start(self) -> None:
        if self.restored:
            # After the start's commit: a restored room's start is a replay, and what
            # it tells must reach the agents (meeple.node.rooms "replaying").
            self.submit(None, _Resume())
            return
        for i, seat in enumerate(self.seats):
            self.slot_of[i] = self.referee.seat(self.links[i], seat.name)
            self._keep(i)

    def handle(self, seat: Seat | None, command: object) -> None:
        if isinstance(command, _Over):
            self.finish()
            if self.kept is not None:
                self.kept.forget(self)
        elif isinstance(command, _Resume):
            self._resume()
        elif isinstance(command, _Admin) and seat is None:
            self._admin(command)
        elif isinstance(command, wire.Rejoin) and seat is not None:
            self._rejoin(self.seats.index(seat), command)
        elif isinstance(command, AgentMessage) and seat is not None:
            i = self.seats.index(seat)
            slot = self.slot_of[i]
            if self.present[i] and slot is not None and command.session == self.sessions[i]:
                self.referee.receive(slot, command.data)
            # else: sent before the agent heard the game's current START (module doc)

    def on_seat_left(self, seat: Seat) -> None:
        i = self.seats.index(seat)
        if not self.present[i]:
            return
        self.present[i] = False
        slot, self.slot_of[i] = self.slot_of[i], None
        if slot is not None:
            self.referee.disconnect(slot)  # spec, "Disconnection": END 2 to the other
        self._keep(i)

    def spectator_view(self) -> dict[str, Any] | None:
        """The board, scores and moves as anyone may see them (no rack); while the game
        waits in its log (a drop, a takeover) or once it ended, as it was last."""
        game = self.referee.game
        if game is not None:
            self._game = game  # the referee lets go of it at the end: its last state
        elif self._game is None:
            return self._view  # taken over, not resumed yet: the game in its log
        return spectator_view(self._game)

    # --- the admin (docs/protocols/cmpn402.md, "On a cluster") ----------------------------

    def admin_view(self) -> dict[str, Any]:
        """The game as ``/admin/status`` lists it: :meth:`Referee.admin_view` (running or
        waiting in its log; before a taken-over room's first step, its log's game) with
        the room's uid and each agent, whether it is connected and through which edge."""
        view = self.referee.admin_view()
        if view is None:  # over, or not started yet
            view = {"game_id": self.uid, "over": self.finished or bool(self.referee.series.results)}
        agents = [
            {
                "name": seat.name,
                "connected": self.present[i],
                "edge": str(getattr(seat, "route", "") or "").rsplit("-", 1)[0] or None,
            }
            for i, seat in enumerate(self.seats)
        ]
        # The board picture of the console (meeple.web.console): anyone's view, no rack.
        return {**view, "uid": self.uid, "agents": agents, "spectator": self.spectator_view()}

    async def admin(self, action: str) -> str:
        """Do the admin's ``action`` (:data:`ADMIN_ACTIONS`) through the room's inbox, as
        the referee's own button; its outcome once logged, or :class:`AdminRefused`."""
        if action not in ADMIN_ACTIONS:
            raise AdminRefused(f"no admin action {action!r} on a cluster")
        command = _Admin(action)
        self.submit(None, command)
        return await command.done

    def _admin(self, command: _Admin) -> None:
        referee = self.referee
        actions: dict[str, Callable[[], str]] = {
            "stop": referee.stop,
            "pause": referee.pause,
            "resume": referee.resume,
        }
        waiting = referee.waiting
        try:
            result = actions[command.action]()
        except RefereeError as e:
            command.outcome = AdminRefused(str(e))
            return
        command.outcome = result
        logger.info("cmpn402: room %s: the admin's %s: %s", self.uid, command.action, result)
        if command.action == "stop" and waiting:
            self._stopped_waiting()
        elif command.action in ("pause", "resume"):
            referee.checkpoint()  # the log says paused or not (_Journal), for a new owner

    def _stopped_waiting(self) -> None:
        """A game that waited for an agent was stopped: the referee tells nobody (as in
        ``meeple serve``); here the agents still connected, who heard END 2 and wait for
        the game to resume, hear its end, END reason 3, behind the log's close."""
        results = self.referee.series.results
        if not results:
            return
        # Room seat i is the game's player i (seated in order: on_start).
        scores = tuple(int(x) for x in results[-1]["scores"])
        for i, seat in enumerate(self.seats):
            if self.present[i]:
                end = seat_view(GameOver(int(EndReason.STOPPED), scores), i)
                self._ahead.deliver(functools.partial(self._deliver_now, seat, end))

    def _admin_committed(self, seat: Seat | None, command: object) -> None:
        if isinstance(command, _Admin) and not command.done.done():
            if isinstance(command.outcome, AdminRefused):
                command.done.set_exception(command.outcome)
            else:
                command.done.set_result(command.outcome)

    def resume_log(self, log: ActionLog) -> None:
        """The referee folds its log itself (``Referee(recovered=…)``)."""

    # --- the agents ---------------------------------------------------------------------

    def _resume(self) -> None:
        """A taken-over room: seat the agents that are there; the referee resumes the game
        from its log once both are (END 2 first to each: module doc)."""
        for i, seat in enumerate(self.seats):
            # (A seat asked back before this ran — its agent's Rejoin was queued first —
            # is seated already.)
            if self.present[i] and self.slot_of[i] is None:
                self._tell_end.add(i)
                self.slot_of[i] = self.referee.seat(self.links[i], seat.name)
            self._keep(i)

    def _keep(self, i: int) -> None:
        if self.kept is None:
            return
        # Two agents of one name (the spec does not forbid it): the bucket keeps one seat
        # per name, the one whose agent is away if either is, so that its coming back
        # does not take the other's seat.
        name = self.seats[i].name
        away = [j for j, s in enumerate(self.seats) if s.name == name and not self.present[j]]
        self.kept.keep(self, away[0] if away else i)

    def _rejoin(self, i: int, command: wire.Rejoin) -> None:
        seat = self.seats[i]
        if self.present[i] and getattr(seat, "route", None) == command.route:
            return  # asked again
        if self.present[i]:
            # The seat's old connection is still here for the room (its edge died and is
            # not yet known dead, or a second connection sent the agent's name): it
            # leaves first, and is closed if it is still there.
            self.close_seat(i, int(CloseCode.POLICY_VIOLATION), "the seat was taken back")
            self.on_seat_left(seat)
        seat.route = command.route  # type: ignore[attr-defined]
        if hasattr(seat, "gone"):
            seat.gone = False
        self.present[i] = True
        self.sessions[i] = ""
        self.referee.checkpoint()  # the log notes the seat's new route
        self.slot_of[i] = self.referee.seat(self.links[i], self.seats[i].name)
        self._keep(i)

    def to_seat(self, i: int, data: bytes) -> None:
        if not self.present[i]:
            return
        session = ""
        if data and data[0] == MessageType.START:
            session = self.sessions[i] = secrets.token_hex(4)
            if i in self._tell_end:
                self._tell_end.discard(i)
                end = self._resume_end(i)
                if end is not None:
                    self._deliver_now(self.seats[i], ToAgent(end))
        self._deliver_now(self.seats[i], ToAgent(data, session))

    def close_seat(self, i: int, code: int, reason: str) -> None:
        if self.present[i]:
            self._deliver_now(self.seats[i], CloseAgent(code, reason))

    def _resume_end(self, i: int) -> bytes | None:
        """END reason 2 with the logged scores, to seat ``i``, before its resumed START."""
        referee, link = self.referee, self.links[i]
        # Not slot_of: the START goes out inside Referee.seat, before it returns the slot.
        slots = [k for k, s in enumerate(referee.seats) if s is not None and s.link is link]
        game = referee.game
        if game is None or not slots or slots[0] not in referee.seat_of:
            return None
        slot = slots[0]
        player = referee.seat_of.index(slot)
        mine, theirs = game.scores[player], game.scores[1 - player]
        return EndMessage(EndReason.CONNECTION_ERROR, mine, theirs).encode()


def _settings(services: Services) -> RefereeSettings:
    c = services.config.cmpn402
    return RefereeSettings(
        player_time=round(c.player_time * 1000),
        total_time=round(c.total_time * 1000),
        challenge_time=round(c.challenge_time * 1000),
        manual_start=False,
        games=1,
        name_timeout=round(services.config.idle_timeout * 1000),
    )


def referee_rooms(
    services: Services,
    lobby: Lobby,
    lexicon: Container[str],
    seats_kept: SeatKeeper | None = None,
) -> None:
    """Register the referee's rooms with a rooms node's ``lobby`` (its factories)."""
    settings = _settings(services)

    def make_referee(**kwargs: Any) -> Referee:
        return Referee(
            clock=services.clock,
            lexicon=lexicon,
            rng=services.rng,
            settings=settings,
            key="cmpn402:cluster",
            **kwargs,
        )

    def create(key: QueueKey, seats: list[Seat]) -> Room:
        return RefereeRoom(seats, make_referee, seats_kept=seats_kept)

    def restore(log: ActionLog, seats: list[Seat]) -> Room:
        # The referee folds the log as the store's ActionLog (its own game, scrabble).
        room = RefereeRoom(seats, make_referee, recovered=log, seats_kept=seats_kept)
        room.uid = log.uid
        return room

    factory: RoomFactory = create
    restorer: RoomRestorer = restore
    lobby.register_game(GAME, factory, variants=TABLE_VARIANTS, restore=restorer)


class SeatKeeper(Protocol):
    """Where a referee room keeps its seats for their agents to take back by name."""

    def keep(self, room: RefereeRoom, index: int) -> None: ...

    def forget(self, room: RefereeRoom) -> None: ...


class SeatFinder:
    """On a rooms node: keeps the referee rooms' seats in the rejoin bucket and answers an
    edge's ``<ns>.room.cmpn402-seats.cmd`` (an agent's name) with the seat it takes
    back — a :class:`~meeple.cluster.registry.RejoinSeat`, spent — or ``none``, also for
    a seat of a game whose log has ended (``closed``: its owner died before forgetting
    its seats)."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        tokens: RejoinTokens,
        *,
        closed: Callable[[str], Awaitable[bool]] | None = None,
        ttl: float = 24 * 3600.0,
    ) -> None:
        """``ttl``: how long a dropped agent's seat waits in the rejoin bucket (its game
        waits as long: ``token_ttl`` of :class:`~meeple.server.config.ClusterConfig`)."""
        self.bus = bus
        self.ttl = ttl
        self.ns = ns
        self.tokens = tokens
        self.closed = closed
        self._sub: Subscription | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        self._sub = await self.bus.serve(self.ns.room_commands(FINDER), self._find, queue="room")

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(BusError):
                await self._sub.close()
        for task in list(self._tasks):
            task.cancel()

    def keep(self, room: RefereeRoom, index: int) -> None:
        """Seat ``index`` of ``room`` is its agent's to take back by its name."""
        seat = RejoinSeat(room.uid, index)
        key = rejoin_hash(room.seats[index].name)
        self._spawn(self.tokens.put(key, seat, ttl=int(self.ttl)), room.uid)

    def forget(self, room: RefereeRoom) -> None:
        """``room`` is over: its seats are nobody's to take back."""
        self._spawn(self._forget(room.uid, [s.name for s in room.seats]), room.uid)

    async def _forget(self, uid: str, names: list[str]) -> None:
        for name in names:
            key = rejoin_hash(name)
            found = await self.tokens.find(key)
            if found is not None and found.room == uid:
                await self.tokens.take(key)

    def _spawn(self, write: Awaitable[None], uid: str) -> None:
        task = asyncio.get_running_loop().create_task(self._write(write, uid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, write: Awaitable[None], uid: str) -> None:
        try:
            await write
        except Exception:
            logger.exception("cmpn402: room %s: its seats in the rejoin bucket", uid)

    async def _find(self, payload: bytes) -> bytes:
        name: str = wire.loads(payload, str)  # the schema's; else a WireError
        seat = await self.tokens.take(rejoin_hash(name))
        if seat is None or (self.closed is not None and await self.closed(seat.room)):
            return wire.dumps(None)
        return wire.dumps(seat)

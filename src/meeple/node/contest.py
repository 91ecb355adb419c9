"""CMPN402 contests on a cluster: a policy of the lobby's leader over referee rooms.

``meeple serve --contest`` runs a :class:`~meeple.server.lobby.contest.Contest` beside
its one listener. On a cluster the same contest (``[cmpn402.contest]`` in every node's
config: round robin or Swiss, games per pairing, rounds, boards, the agents that start
it) is split where every game is split (docs/contests.md, "On a cluster"):

- **Edges** (:mod:`meeple.node.cmpn402_edge`): an agent that sent NAME *enters* the
  contest, a lobby call (``join`` at :data:`CONTEST_KEY`) that tells the leader its
  name and its seat's route; a closed connection is the call ``disconnect``.
- **The lobby's leader** (:class:`ClusterContest`, held by
  :class:`~meeple.node.lobby.LobbyRole`): the roster, the schedule, the results and
  the standings, with ``meeple serve``'s own rules (:func:`round_robin`,
  :func:`next_swiss_round`, :func:`standings`). A game that is due, its two agents
  present and free, becomes an ordinary referee room opened on a rooms node as a
  table's room is (:class:`~meeple.node.lobby.RoomTicket`, the two agents' seats in the
  schedule's order: the first moves first). Up to ``boards`` at once.
- **A game's result is its log's end** (:class:`~meeple.cluster.log.LogEnds`): the leader
  reads it when the room says it is over (``roomdone``) and every ``heartbeat`` for each
  running game, so a result lost with a rooms node or with a leader is read again; a
  game is counted once (by its room's uid). The game is stored once by its room
  (ratings with it), as every game of the cluster.
- **The contest survives the leader**: its state is part of the lobby's state (the
  lobby bucket, fenced by the lease's epoch, written before anything the change caused
  goes out); a standby that takes the lease carries on from it, the running games'
  rooms untouched.
- **The console** (:class:`RemoteConsole`, on every edge): ``/cmpn402`` on the edge's
  web port and ``/admin/…`` on its CMPN402 port read and act through the bus: a
  :class:`ContestCall` to the leader (``lobby.req.contest``, asked with
  :func:`~meeple.node.ask.ask`), answered with a :class:`ContestAnswer`; the running
  boards' clocks, scores and moves from their rooms' owners
  (:class:`~meeple.node.cmpn402_admin.ClusterAdmin`). The leader checks the admin token
  again (a stolen edge credential alone acts on nothing).

Drops and absentees are ``meeple serve``'s rules: a game whose agent is not there when
it is due waits ``show_timeout``, then that agent forfeits it; an agent that dropped
mid-game has ``resume_window`` to come back by its NAME through any edge (the room's own
rejoin, :class:`~meeple.node.cmpn402.SeatFinder`), after which the leader stops the game
(END reason 3, stored) and it counts as the absent agent's loss.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meeple.bus.base import Bus, BusClosed, BusError
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.ask import NoAnswer, ask
from meeple.node.cmpn402 import GAME, KEY, CloseAgent
from meeple.node.store import BusRecords
from meeple.protocols.cmpn402.errors import CloseCode
from meeple.server.clock import Clock, SystemClock
from meeple.server.config import ClusterConfig, Cmpn402Config, ContestConfig
from meeple.server.lobby.cmpn402_console import (
    ConsoleError,
    Watchers,
    check_token,
    file_wanted,
    result_entry,
    standings,
)
from meeple.server.lobby.contest import (
    CLOSE_DONE,
    STATES,
    ContestGame,
    contest_results,
    games_left,
    next_swiss_round,
    planned_games,
    round_robin,
    swiss_round_count,
)
from meeple.server.lobby.tables import QueueKey
from meeple.server.rooms.cmpn402 import series_first

if TYPE_CHECKING:
    from meeple.node.cmpn402_admin import ClusterAdmin
    from meeple.node.lobby import LobbyRole, ProxySeat
    from meeple.server.rooms.room import Seat

__all__ = [
    "CONTEST_GAME",
    "CONTEST_KEY",
    "CONTEST_OP",
    "CONTEST_VARIANTS",
    "SERIES",
    "ClusterContest",
    "ContestAnswer",
    "ContestCall",
    "LeaveContest",
    "RemoteConsole",
    "cluster_contest",
]

logger = logging.getLogger(__name__)

CONTEST_GAME = "cmpn402-contest"  # the lobby "game" an agent joins to enter the contest
CONTEST_KEY = QueueKey(CONTEST_GAME, 2, GAME)
CONTEST_VARIANTS = {GAME: (2, 2)}
CONTEST_OP = "contest"  # the lobby request of the console: lobby.req.contest.<edge>
# What a ContestCall may ask: the console's reads and actions (meeple serve's buttons).
CALL_ACTIONS = ("status", "start", "pause", "resume", "stop", "abort", "withdraw", "swap")
# The longest agent name a call may carry (the spec's NAME: 1–64 bytes).
MAX_NAME = 64
# The two-agent series (``[cmpn402] games`` > 1 or ``manual_start``, no contest table):
# a contest of this format between the first two agents (cluster_contest).
SERIES = "series"


def cluster_contest(cmpn402: Cmpn402Config) -> ContestConfig | None:
    """What the lobby's leader runs for ``[cmpn402]``: its contest table, or a two-agent
    series (``games`` N, ``manual_start``: meeple serve's two-agent mode) as a contest of
    format :data:`SERIES` on one board; None: one game per pairing (the lobby's table)."""
    if cmpn402.contest is not None:
        return cmpn402.contest
    if cmpn402.games > 1 or cmpn402.manual_start:
        return ContestConfig(
            format=SERIES, games=cmpn402.games, boards=1, agents=0 if cmpn402.manual_start else 2
        )
    return None


@dataclass(frozen=True, slots=True)
class ContestCall:
    """An edge's console asks the leader: ``status`` or an action (``name``: whom
    ``withdraw`` takes out); ``token``: the organiser's admin token, checked again by the
    leader for an action."""

    action: str
    name: str = ""
    token: str = ""


@dataclass(frozen=True, slots=True)
class ContestAnswer:
    """The leader's answer: ``ok`` with what the action said (``text``), or not with why;
    ``snapshot``: the contest as the console shows it (JSON-safe, no live game)."""

    ok: bool
    text: str = ""
    snapshot: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class LeaveContest:
    """The leader lets an agent go (the contest is over, or the agent withdrawn): its
    edge closes the connection with ``code`` once the agent's game, if one is still
    open on the edge, is over there (its END comes from the room, on another subject:
    the close must not overtake it)."""

    code: int
    reason: str


class ClusterContest:
    """The contest on the lobby's leader (module doc). Every change runs inside the
    role's :meth:`~meeple.node.lobby.LobbyRole._change` (the lock held, the state
    written before what it caused goes out); the reads of the logs' ends are outside."""

    def __init__(
        self,
        role: LobbyRole,
        config: ContestConfig,
        *,
        token: str | None,
        ended: Callable[[str], Awaitable[Mapping[str, Any] | None]],
        clock: Clock | None = None,
        between_games: float = 1.0,
    ) -> None:
        self.role = role
        self.config = config
        self.token = token
        self.ended = ended
        self.clock = clock or SystemClock()
        self.between_games = between_games
        self.state = "waiting"
        self.serial = 0
        self.roster: list[str] = []
        self.withdrawn: set[str] = set()
        self.games: list[ContestGame] = []
        self.rounds_made = 0
        self.present: dict[str, ProxySeat] = {}  # name -> its seat now (its edge's route)
        self.away_since: dict[str, float] = {}  # a roster agent not connected, since
        self.cooling: dict[str, float] = {}  # name -> until when it rests between games
        self.due_since: dict[int, float] = {}  # a game held up by an absent agent, since
        # A series (SERIES): the console's swap, and a manual start's "start the next game".
        self.series = config.format == SERIES
        self.swapped = False
        self.armed = False

    # --- the state (a part of the lobby's) ---------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "serial": self.serial,
            "roster": list(self.roster),
            "withdrawn": sorted(self.withdrawn),
            "games": [copy.deepcopy(g.to_dict()) for g in self.games],
            "rounds_made": self.rounds_made,
            "present": {n: dict(s.info) for n, s in self.present.items()},
            "swapped": self.swapped,
            "armed": self.armed,
        }

    def restore(self, saved: Mapping[str, Any] | None) -> None:
        """Carry on from a leader's saved state (or start afresh with None)."""
        self.present.clear()
        self.away_since.clear()
        self.cooling.clear()
        self.due_since.clear()
        if not saved:
            return
        try:
            state = str(saved["state"])
            if state not in STATES:
                raise ValueError(f"state {state!r}")
            games = [ContestGame.from_dict(g) for g in saved["games"]]
            roster = [str(n) for n in saved["roster"]]
            present = {str(n): dict(info) for n, info in saved.get("present", {}).items()}
            self.serial = int(saved["serial"])
            self.rounds_made = int(saved["rounds_made"])
            self.withdrawn = {str(n) for n in saved["withdrawn"]}
            swapped, armed = saved.get("swapped", False), saved.get("armed", False)
            if not isinstance(swapped, bool) or not isinstance(armed, bool):
                raise ValueError("swapped and armed are flags")
            self.swapped, self.armed = swapped, armed
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            logger.error("contest: the saved contest is unreadable (%s); a new one", e)
            self.state, self.roster, self.games, self.rounds_made = "waiting", [], [], 0
            return
        self.state, self.roster, self.games = state, roster, games
        for name, info in present.items():
            self.present[name] = self.role.seat_of(info)
        now = self.clock.now()
        for name in self.roster:
            if name not in self.present:
                self.away_since[name] = now

    # --- agents (the edges' calls) -----------------------------------------------------

    def enter(self, seat: ProxySeat) -> None:
        """An agent sent NAME on an edge (spec, "State: INIT") and asks to play."""
        name = seat.name
        held = self.present.get(name)
        if held is not None and held is not seat:
            seat.deliver(CloseAgent(int(CloseCode.TRY_AGAIN_LATER), "this name is connected"))
            return
        if (
            self.series
            and name not in self.roster
            and (self.state in ("running", "paused") or len(self.present) >= 2)
        ):
            # meeple serve's referee: two seats; a third agent may try again later.
            seat.deliver(CloseAgent(int(CloseCode.TRY_AGAIN_LATER), "the series has two agents"))
            return
        if name in self.roster and self.state in ("finished", "aborted"):
            seat.deliver(CloseAgent(CLOSE_DONE, f"contest {self.state}"))
            return
        if name not in self.roster and self.state in ("running", "paused"):
            seat.deliver(CloseAgent(int(CloseCode.POLICY_VIOLATION), "the contest has started"))
            return
        if name in self.withdrawn:
            seat.deliver(CloseAgent(int(CloseCode.POLICY_VIOLATION), "withdrawn from the contest"))
            return
        self.present[name] = seat
        self.away_since.pop(name, None)
        logger.info("contest: %s is here (%s)", name, seat.route)
        if self.state == "waiting":
            wanted = self.config.agents
            if wanted and len(self.present) >= wanted:
                self.start()
            return
        self.schedule()

    def gone(self, seat: ProxySeat) -> None:
        """An agent's connection is gone (its edge says, or its edge fell silent). Its
        running game, if any, is its room's: the spec's "Disconnection" there."""
        name = seat.name
        if self.present.get(name) is not seat:
            return
        del self.present[name]
        if name in self.roster:
            self.away_since[name] = self.clock.now()
        logger.info("contest: %s left (%s)", name, seat.route)

    # --- the console's actions ---------------------------------------------------------

    def act(self, action: str, name: str = "") -> str:
        if self.series:
            return self._series_act(action, name)
        if action == "withdraw":
            if not name:
                raise ConsoleError("withdraw takes name=AGENT")
            return self.withdraw(name)
        if name:
            raise ConsoleError(f"{action} takes no parameters")
        if action == "swap":
            raise ConsoleError("in a contest the schedule decides who moves first")
        actions: dict[str, Callable[[], str]] = {
            "start": self.start,
            "pause": self.pause,
            "resume": self.resume,
            "stop": self.abort,
            "abort": self.abort,
        }
        if action not in actions:
            raise ConsoleError(f"no action {action!r}")
        return actions[action]()

    def _series_act(self, action: str, name: str) -> str:
        """meeple serve's two-agent buttons (SeriesConsole.act): start (each game, with
        a manual start), pause, resume, stop, swap."""
        if action in ("abort", "withdraw"):
            raise ConsoleError(f"{action} is for contests (meeple serve --contest)")
        if name:
            raise ConsoleError(f"{action} takes no parameters")
        if action == "swap":
            self.swapped = not self.swapped
            first = series_first(self._played(), self.swapped)
            return f"the next game's first player is seat {first + 1}"
        actions: dict[str, Callable[[], str]] = {
            "start": self.start,
            "pause": self.pause,
            "resume": self.resume,
            "stop": self._stop_series,
        }
        if action not in actions:
            raise ConsoleError(f"no action {action!r}")
        return actions[action]()

    def _stop_series(self) -> str:
        """The series ends: END reason 3 on a running game (stored, counted as any)."""
        if self.state in ("finished", "aborted"):
            raise ConsoleError("nothing to stop")
        said = "series stopped"
        for game in self.games:
            if game.status == "playing":
                self._board(game, "stop")
                said = "stopped"
            elif game.status == "pending":
                game.status = "cancelled"
        self.state = "finished"
        self._finish("series stopped")
        return said

    def _played(self) -> int:
        return sum(g.status == "done" for g in self.games)

    def start(self) -> str:
        if self.state == "paused":
            return self.resume()
        if self.state == "running" and self.series:
            # A manual start: the next game of the series, once the last is over.
            if any(g.status in ("pending", "playing") for g in self.games):
                raise ConsoleError("cannot start in a game")
            self.armed = True
            self.schedule()
            return "started"
        if self.state == "running":
            raise ConsoleError("the contest is running")
        names = list(self.present)
        if self.series:
            names = names[:2]
        if len(names) < 2:
            raise ConsoleError(f"a contest needs two agents at least ({len(names)} connected)")
        self.serial += 1
        self.roster = names
        self.withdrawn = set()
        self.games = []
        self.rounds_made = 0
        self.away_since.clear()
        self.due_since.clear()
        self.armed = True
        if self.config.format == "round-robin":
            for i, (first, second, r) in enumerate(round_robin(names, self.config.games)):
                self.games.append(ContestGame(i, [first, second], r))
        self.state = "running"
        logger.info("contest: %s of %d agents starts", self.config.format, len(names))
        self.schedule()
        return "started"

    def pause(self) -> str:
        if self.state != "running":
            raise ConsoleError(f"cannot pause a contest that is {self.state}")
        self.state = "paused"
        self._boards("pause")
        return "paused"

    def resume(self) -> str:
        if self.state != "paused":
            raise ConsoleError("the contest is not paused")
        self.state = "running"
        self._boards("resume")
        self.schedule()
        return "resumed"

    def abort(self) -> str:
        if self.state not in ("running", "paused"):
            raise ConsoleError(f"cannot abort a contest that is {self.state}")
        self.state = "aborted"
        self._boards("stop")
        for game in self.games:
            if game.status == "pending":
                game.status = "cancelled"
        # A running game's stop is its room's END 3, stored: its result is read as any.
        self._finish("contest aborted")
        return "aborted"

    def withdraw(self, name: str) -> str:
        if name not in self.roster:
            raise ConsoleError(f"no agent {name[:MAX_NAME]!r} in the contest")
        if name in self.withdrawn:
            raise ConsoleError(f"{name} is withdrawn already")
        if self.state not in ("running", "paused"):
            raise ConsoleError(f"cannot withdraw from a contest that is {self.state}")
        self.withdrawn.add(name)
        for game in self.games:
            if game.status == "playing" and name in game.players:
                game.loser = name
                self._board(game, "stop")
            elif game.status == "pending" and name in game.players:
                self._forfeit(game, [p for p in game.players if p in self.withdrawn])
        seat = self.present.pop(name, None)
        if seat is not None:
            seat.deliver(LeaveContest(int(CloseCode.POLICY_VIOLATION), "withdrawn by the admin"))
        self.schedule()
        return f"{name} withdrawn"

    def _boards(self, action: str) -> None:
        for game in self.games:
            if game.status == "playing":
                self._board(game, action)

    def _board(self, game: ContestGame, action: str) -> None:
        """The referee's own button on a running game's room (once the state is written)."""
        uid = game.game_id
        if uid is not None:
            self.role.later(lambda: self.role.admin_room(uid, action))

    # --- the schedule ------------------------------------------------------------------

    def _busy(self, name: str) -> bool:
        return any(g.status == "playing" and name in g.players for g in self.games)

    def _idle(self, name: str, now: float) -> bool:
        return (
            name not in self.withdrawn
            and not self._busy(name)
            and self.cooling.get(name, 0.0) <= now
        )

    def schedule(self) -> None:
        """Pair the next Swiss round when due, put due games on free boards, notice the end."""
        if self.state != "running":
            return
        if self.series:
            self._next_in_series()
        if self.config.format == "swiss":
            paired = next_swiss_round(
                self.games, self.roster, self.withdrawn, self.rounds_made, self.config
            )
            if paired is not None:
                self.rounds_made, added = paired
                self.games.extend(added)
        now = self.clock.now()
        boards = {g.board for g in self.games if g.status == "playing"}
        for game in self.games:
            if len(boards) >= self.config.boards:
                break
            if game.status != "pending":
                continue
            if not all(self._idle(p, now) for p in game.players):
                continue
            if all(p in self.present for p in game.players):
                number = next(n for n in range(1, self.config.boards + 1) if n not in boards)
                boards.add(number)
                self._open(game, number)
            else:
                # Someone is absent: the game waits show_timeout for them (tick).
                self.due_since.setdefault(game.id, now)
        if self.series:
            rounds_done = self._played() >= self.config.games
        else:
            rounds_done = self.config.format != "swiss" or self.rounds_made >= swiss_round_count(
                len(self.roster), self.config
            )
        if rounds_done and all(g.status in ("done", "cancelled") for g in self.games):
            self.state = "finished"
            self._finish("contest finished")

    def _next_in_series(self) -> None:
        """A series' next game, once the last is over (with a manual start, once the
        organiser said start): its first player by meeple serve's rule (series_first),
        the roster in the order the agents came (seat 1, seat 2)."""
        if any(g.status in ("pending", "playing") for g in self.games):
            return
        played = self._played()
        if played >= self.config.games or len(self.roster) != 2:
            return
        if self.config.agents == 0 and not self.armed:
            return
        self.armed = False
        first = series_first(played, self.swapped)
        order = [self.roster[first], self.roster[1 - first]]
        self.games.append(ContestGame(len(self.games), order, played + 1))

    def _open(self, game: ContestGame, number: int) -> None:
        seats: list[Seat] = [self.present[p] for p in game.players]
        ticket = self.role.contest_room(KEY, seats)
        game.status, game.board, game.game_id = "playing", number, ticket.uid
        self.due_since.pop(game.id, None)
        logger.info(
            "contest: game %d %s on board %d: room %s", game.id, game.players, number, ticket.uid
        )
        ticket.start()

    def _forfeit(self, game: ContestGame, losers: list[str]) -> None:
        logger.info("contest: game %d %s forfeited by %s", game.id, game.players, losers)
        winners = [p for p in game.players if p not in losers]
        game.status, game.board = "done", None
        game.result = {
            "game_id": None,
            "players": list(game.players),
            "scores": [0] * len(game.players),
            "winners": winners,
            "winner": winners[0] if len(winners) == 1 else None,
            "reason": "FORFEIT",
        }
        self.due_since.pop(game.id, None)

    def _finish(self, reason: str) -> None:
        logger.info("contest: %s", reason)
        for name, seat in list(self.present.items()):
            if not self._busy(name):
                seat.deliver(LeaveContest(CLOSE_DONE, reason))

    # --- results and time (the role's tick) --------------------------------------------

    def playing(self) -> list[str]:
        """The rooms of the games running now (their results still to read)."""
        return [g.game_id for g in self.games if g.status == "playing" and g.game_id]

    def record(self, uid: str, end: Mapping[str, Any]) -> bool:
        """Room ``uid``'s log ended with ``end`` (the stored game): its result, once."""
        game = next((g for g in self.games if g.game_id == uid and g.status == "playing"), None)
        if game is None:
            return False
        try:
            players = [str(p) for p in end["players"]]
            scores_of = end["result"]["scores"]
            scores = [int(scores_of[p]) for p in game.players]
            winners = [str(w) for w in end["result"]["winners"]]
            reason = str(end["end_reason"]).upper()
        except (KeyError, TypeError, ValueError) as e:
            logger.error("contest: room %s's end is unreadable (%s): %r", uid, e, end)
            return False
        if sorted(players) != sorted(game.players):
            logger.error("contest: room %s's players %s are not game %d's", uid, players, game.id)
            return False
        if game.loser is not None:
            # Withdrawn, or away past the resume window: that agent cannot win (both
            # away: "" — neither wins).
            winners = [p for p in game.players if p != game.loser] if game.loser else []
            reason = "WITHDRAWN" if game.loser in self.withdrawn else reason
        game.result = {
            "game_id": uid,
            "players": list(game.players),
            "scores": scores,
            "winners": winners,
            "winner": winners[0] if len(winners) == 1 else None,
            "reason": reason,
        }
        game.status, game.board = "done", None
        until = self.clock.now() + self.between_games
        for p in game.players:
            self.cooling[p] = until
        logger.info("contest: game %d over: %s %s (%s)", game.id, game.players, scores, reason)
        if self.state in ("aborted", "finished"):
            seats = [self.present.get(p) for p in game.players]
            for seat in seats:
                if seat is not None:
                    seat.deliver(LeaveContest(CLOSE_DONE, "contest aborted"))
        self.schedule()
        return True

    def due(self) -> bool:
        """Whether time alone changes something now (a rest over, an absentee's wait)."""
        if self.state != "running":
            return False
        now = self.clock.now()
        if any(until <= now for until in self.cooling.values()):
            return True
        if any(now - since >= self.config.show_timeout for since in self.due_since.values()):
            return True
        if any(self._resume_over(g, now) for g in self.games if g.status == "playing"):
            return True
        return self._startable(now)

    def _startable(self, now: float) -> bool:
        """A free board and a game that could take it now, or a Swiss round to pair: a
        leader that took the contest over (or a change that left one) starts them."""
        running = sum(g.status == "playing" for g in self.games)
        if running >= self.config.boards:
            return False
        if not any(g.status in ("pending", "playing") for g in self.games):
            if self.series:  # the next game of the series, unless it waits for start
                return self.armed or self.config.agents != 0
            return True  # the next Swiss round, or the end to notice
        return any(
            g.status == "pending"
            and all(self._idle(p, now) and p in self.present for p in g.players)
            for g in self.games
        )

    def _resume_over(self, game: ContestGame, now: float) -> bool:
        return game.loser is None and any(
            p not in self.present and now - self.away_since.get(p, now) >= self.config.resume_window
            for p in game.players
        )

    def tick(self) -> None:
        """What time changed: rests over, absentees' forfeits, dropped agents' games
        stopped after ``resume_window`` (the absent agent loses)."""
        if self.state != "running":
            return
        now = self.clock.now()
        self.cooling = {p: until for p, until in self.cooling.items() if until > now}
        for game in self.games:
            since = self.due_since.get(game.id)
            if game.status == "pending" and since is not None:
                if now - since >= self.config.show_timeout:
                    absent = [p for p in game.players if p not in self.present]
                    if absent:
                        self._forfeit(game, absent)
                    else:
                        self.due_since.pop(game.id, None)
            elif game.status == "playing" and self._resume_over(game, now):
                absent = [p for p in game.players if p not in self.present]
                game.loser = absent[0] if len(absent) == 1 else None
                if game.loser is None:
                    game.loser = ""  # both away: nobody wins (record: no winner)
                self._board(game, "stop")
        self.schedule()

    # --- reading -----------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """The console's snapshot (``meeple serve``'s ContestConsole shape, JSON-safe):
        each running board as the leader knows it (the edge adds the room's own view)."""
        results = contest_results(self.games)
        left = games_left(
            self.games, self.roster, self.withdrawn, self.state, self.rounds_made, self.config
        )
        if self.series:
            left = dict.fromkeys(self.roster, max(0, self.config.games - self._played()))
            if self.state in ("finished", "aborted"):
                left = dict.fromkeys(self.roster, 0)
        rows = standings(self.roster, results, left)
        for row in rows:
            row["withdrawn"] = row["name"] in self.withdrawn
        running = sorted(
            (g for g in self.games if g.status == "playing"), key=lambda g: g.board or 0
        )
        boards: list[dict[str, Any]] = [
            {"board": g.board, "game_id": g.game_id, "players": list(g.players), "round": g.round}
            for g in running
        ]
        on_board = {p: g.board for g in running for p in g.players}
        names = list(dict.fromkeys([*self.roster, *self.present]))
        agents = [
            {
                "name": n,
                "address": _edge(self.present[n].route) if n in self.present else "?",
                "connected": n in self.present,
                "board": on_board.get(n),
                "withdrawn": n in self.withdrawn,
            }
            for n in names
        ]
        state = self.state
        if state == "running" and not boards:
            state = "between-games"
        planned = planned_games(self.games, self.roster, self.state, self.rounds_made, self.config)
        if self.series:
            planned = self.config.games
        return {
            "mode": self.config.format,
            "state": state,
            "manual_start": self.config.agents == 0,
            "agents": agents,
            "boards": boards,
            "series": {
                "games": planned,
                "played": sum(g.status == "done" for g in self.games),
                "results": [result_entry(r) for r in results],
            },
            "standings": rows,
            "files": [],
        }

    def answer(self, call: ContestCall) -> ContestAnswer:
        """A console's call (module doc), the lock held: ``status``, or an action."""
        if call.action == "status":
            return ContestAnswer(True, "", self.view())
        if call.action not in CALL_ACTIONS or len(call.name) > MAX_NAME:
            return ContestAnswer(False, f"no action {call.action[:20]!r}")
        if self.token is None or not check_token(self.token, call.token):
            logger.warning("contest: a %s without the admin token refused", call.action)
            return ContestAnswer(False, "the admin token is not this node's")
        try:
            said = self.act(call.action, call.name)
        except ConsoleError as e:
            return ContestAnswer(False, str(e), self.view())
        logger.info("contest: the admin's %s: %s", call.action, said)
        return ContestAnswer(True, said, self.view())


def _edge(route: str) -> str:
    return route.rsplit("-", 1)[0]


class RemoteConsole:
    """The contest's console on an edge (``meeple serve``'s console contract,
    :class:`~meeple.server.lobby.cmpn402_console.Console`): its snapshot is the leader's
    last answer with each running board's room view, refreshed every ``heartbeat``; an
    action is asked of the leader and answered once it is written (module doc)."""

    def __init__(
        self,
        bus: Bus,
        ns: Namespace,
        token: str,
        admin: ClusterAdmin,
        *,
        timing: ClusterConfig | None = None,
    ) -> None:
        self.bus = bus
        self.ns = ns
        self._token = token
        self.admin = admin
        self.timing = timing or ClusterConfig()
        self._watchers = Watchers()
        self._snapshot: dict[str, Any] = {
            "mode": "contest",
            "state": "unknown",
            "manual_start": True,
            "agents": [],
            "boards": [],
            "series": {"games": 0, "played": 0, "results": []},
            "standings": [],
            "files": [],
        }
        self._task: asyncio.Task[None] | None = None
        self.records = BusRecords(bus, ns, self.timing.store_wait)

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._refreshing(), name="console")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _refreshing(self) -> None:
        while True:
            try:
                await self.refresh()
            except BusClosed:
                return
            except Exception:
                logger.exception("contest console: refreshing failed")
            await asyncio.sleep(self.timing.heartbeat)

    async def _call(self, call: ContestCall) -> ContestAnswer:
        try:
            reply = await ask(
                self.bus, self.ns.lobby_request(CONTEST_OP), wire.dumps(call), self.timing
            )
        except NoAnswer as e:
            raise ConsoleError("no lobby leader answers now; try again") from e
        except BusError as e:
            raise ConsoleError(f"the lobby's leader refused it: {e}") from e
        answer: ContestAnswer = wire.loads(reply, ContestAnswer)
        return answer

    async def refresh(self) -> None:
        """The leader's snapshot, each running board with its room's view (scores,
        clocks, moves, turn: the room's owner answers); watchers told if it changed."""
        try:
            answer = await self._call(ContestCall("status"))
        except ConsoleError as e:
            logger.info("contest console: %s", e)
            return
        if answer.snapshot is not None:
            self._update(answer.snapshot, await self._views())

    async def _views(self) -> dict[str, dict[str, Any]]:
        try:
            status = await self.admin.status(pictures=True)
        except BusError:
            return {}
        boards = status.get("status", {}).get("boards", [])
        return {str(b.get("uid")): b for b in boards if isinstance(b, dict)}

    def _update(self, snapshot: dict[str, Any], views: Mapping[str, Mapping[str, Any]]) -> None:
        boards = []
        for board in snapshot.get("boards", []):
            view = views.get(str(board.get("game_id")))
            merged = dict(board)
            if view is not None:
                for key in ("first", "turn", "scores", "bag", "clocks", "challenge", "moves"):
                    if key in view:
                        merged[key] = view[key]
                merged["players"] = view.get("players", board["players"])
                merged["owner"] = view.get("owner")
                if isinstance(view.get("spectator"), dict):
                    merged["view"] = view["spectator"]
            else:
                merged.update(_quiet_board(len(board["players"])))
            boards.append(merged)
        # The stored games' downloads (file): the games the contest counted.
        ids = [r.get("game_id") for r in snapshot.get("series", {}).get("results", [])]
        stored = [{"game_id": i, "log": True, "gcg": True} for i in ids if isinstance(i, str)]
        fresh = {**snapshot, "boards": boards, "files": stored}
        if fresh != self._snapshot:
            self._snapshot = fresh
            self._watchers.notify()

    # --- the console contract ----------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return self._snapshot

    async def act(self, action: str, **params: str) -> str:
        if action == "withdraw" and set(params) != {"name"}:
            raise ConsoleError("withdraw takes name=AGENT")
        if action != "withdraw" and params:
            raise ConsoleError(f"{action} takes no parameters")
        answer = await self._call(ContestCall(action, params.get("name", ""), self._token))
        if not answer.ok:
            raise ConsoleError(answer.text)
        if answer.snapshot is not None:
            self._update(answer.snapshot, await self._views())
        return answer.text

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._watchers.subscribe(callback)

    async def file(self, game_id: str, kind: str) -> bytes | None:
        """A counted game's ``gcg`` (the stored game's GCG) or ``log`` (its stored record:
        the setup and every action with its time, JSON), read from a store node as
        ``/games/<uid>`` is (:class:`~meeple.node.store.BusRecords`); None for a game
        the contest did not count or not stored. The wire bytes of ``meeple serve``'s
        message log are not kept on a cluster (docs/contests.md)."""
        if not file_wanted(game_id, kind):
            return None
        if game_id not in {f["game_id"] for f in self._snapshot.get("files", [])}:
            return None
        record = await self.records.game_by_uid(game_id)
        if record is None:
            return None
        if kind == "gcg":
            return record.record.encode()
        return (json.dumps(record.data, indent=1, sort_keys=True) + "\n").encode()

    def check_token(self, token: str) -> bool:
        return check_token(self._token, token)

    def running_games(self) -> list[str]:
        return [str(b["game_id"]) for b in self._snapshot.get("boards", []) if b.get("game_id")]


def _quiet_board(players: int) -> dict[str, Any]:
    """A board whose room has not answered yet (opening, or being taken over)."""
    return {
        "first": 0,
        "turn": None,
        "scores": [0] * players,
        "bag": 0,
        "clocks": {"players_ms": [0] * players, "total_ms": 0, "running": False},
        "challenge": {"open": False, "remaining_ms": 0},
        "moves": [],
    }

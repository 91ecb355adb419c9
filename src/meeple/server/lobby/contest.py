"""Contest mode of the CMPN402 referee: many agents, a schedule, up to B games at once.

``meeple serve --contest round-robin|swiss`` (issue 15). Any number of agents connect
to the one referee port and send NAME; the :class:`Contest` pairs them by the schedule
and runs each game on a *board*: a :class:`~meeple.server.rooms.cmpn402.Referee` of
its own, seating the two agents as the spec describes for two (START, moves, clocks,
challenges, END, a log per game). The contest only decides who plays whom, when, and on
which board; the game itself is the two-agent code path, unchanged.

- An agent waiting for its next pairing stays connected and hears nothing (pings
  aside). Its stray messages are ignored, as the spec's READY state ignores moves.
- Round robin: every pairing plays ``games`` games, the first player alternating.
  Swiss: ``rounds`` rounds, each paired by score (wins, a draw half) then spread,
  without repeats while that is possible; an odd field gives the lowest-ranked agent
  without one a bye (a win, 0–0).
- An agent that drops mid-game has ``resume_window`` seconds to come back (the game
  resumes from its log); after that the game ends as the spec's disconnect end (END
  reason 2 already went to the other; the absent agent cannot win).
- A game whose agent is not connected when it is due waits ``show_timeout`` seconds on
  its board, then that agent forfeits the game (0–0, a loss; both absent: a loss each).
- Between two games of one agent there is ``between_games`` (1 s), so that a move sent
  just as END went out lands nowhere (see ``docs/protocols/cmpn402.md``).
- The schedule, results and roster are saved in the store's checkpoints table after
  every change (the contest is no game, so it has no log); each game is its board
  referee's log (``table.referee`` is ``<listener key>:contest<serial>:game<id>``). A
  restarted server loads the contest and hands each board its unfinished log: games
  that were running resume when both agents are back (or end by the resume window),
  pending ones are played.
- Admin: start, pause, resume, abort (``stop`` is the same), withdraw an agent (its
  running game is stopped and lost, its remaining games are forfeits).

Like the referee, the contest does no I/O and never awaits: the listener calls
:meth:`Contest.connect`, :meth:`Contest.receive`, :meth:`Contest.disconnect`. What it
sends and closes goes through the write-ahead queue its boards share (``ahead``), so a
close never overtakes a game's END that waits for its log.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meeple.protocols.cmpn402.errors import Answer, CloseCode, RemoteProtocolError
from meeple.protocols.cmpn402.messages import Name, NameRequest, decode_client
from meeple.server.clock import Clock, Timer
from meeple.server.config import ContestConfig
from meeple.server.lobby.cmpn402_console import (
    ConsoleBase,
    ConsoleError,
    files,
    result_entry,
    standings,
)
from meeple.server.rooms.cmpn402 import Link, Referee, RefereeError, outermost
from meeple.server.rooms.cmpn402_names import AgentSecrets
from meeple.server.rooms.room import WriteAhead

__all__ = [
    "Contest",
    "ContestConsole",
    "ContestGame",
    "contest_results",
    "games_left",
    "next_swiss_round",
    "planned_games",
    "round_robin",
    "swiss_pairs",
    "swiss_round_count",
]

logger = logging.getLogger(__name__)


STATES = ("waiting", "running", "paused", "finished", "aborted")
# Close codes: 1000 the contest is over for everyone; 1008 this agent may not play
# (withdrawn, not in the contest): do not come back; 1013 try again (the name is held
# by a connection that is still open).
CLOSE_DONE = 1000
# Connections at once (agents and unnamed ones); more are refused with 1013.
MAX_CONNECTIONS = 1024


@dataclass
class ContestGame:
    """One scheduled game: ``players[0]`` moves first. Saved as a dict in the checkpoint."""

    id: int
    players: list[str]
    round: int
    status: str = "pending"  # pending | playing | done | cancelled
    result: dict[str, Any] | None = None
    board: int | None = None
    game_id: str | None = None
    loser: str | None = None  # withdrawn mid-game: this agent loses whatever the score

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "players": list(self.players),
            "round": self.round,
            "status": self.status,
            "result": self.result,
            "board": self.board,
            "game_id": self.game_id,
            "loser": self.loser,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContestGame:
        return cls(
            id=int(data["id"]),
            players=[str(p) for p in data["players"]],
            round=int(data["round"]),
            status=str(data["status"]),
            result=data.get("result"),
            board=None if data.get("board") is None else int(data["board"]),
            game_id=data.get("game_id"),
            loser=data.get("loser"),
        )


def round_robin(names: list[str], games: int) -> list[tuple[str, str, int]]:
    """Every pairing ``games`` times as (first, second, round), by the circle method.

    Each agent meets everyone once before any rematch; a pairing's games alternate
    the first player.
    """
    field_: list[str | None] = list(names)
    if len(field_) % 2:
        field_.append(None)
    n = len(field_)
    out: list[tuple[str, str, int]] = []
    for k in range(games):
        ring = list(field_)
        for r in range(n - 1):
            for i in range(n // 2):
                a, b = ring[i], ring[n - 1 - i]
                if a is None or b is None:
                    continue
                if (r + i + k) % 2:
                    a, b = b, a
                out.append((a, b, k * (n - 1) + r + 1))
            ring = [ring[0], ring[-1], *ring[1:-1]]
    return out


def swiss_pairs(ranked: list[str], met: dict[frozenset[str], int]) -> list[tuple[str, str]]:
    """Pair an even field ranked best first: each with the best-ranked opponent not met
    yet (backtracking); if no repeat-free pairing exists, the fewest repeats."""

    def search(rest: list[str], limit: int) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        a = rest[0]
        for j in range(1, len(rest)):
            b = rest[j]
            if met.get(frozenset((a, b)), 0) > limit:
                continue
            tail = search(rest[1:j] + rest[j + 1 :], limit)
            if tail is not None:
                return [(a, b), *tail]
        return None

    for limit in range(max(met.values(), default=0) + 1):
        found = search(list(ranked), limit)
        if found is not None:
            return found
    return [(ranked[i], ranked[i + 1]) for i in range(0, len(ranked) - 1, 2)]


def swiss_round_count(agents: int, config: ContestConfig) -> int:
    """How many Swiss rounds a field of ``agents`` plays: ``config.rounds`` (0: ceil(log2)),
    at most ``agents - 1`` (plus one for an odd field's byes)."""
    wanted = config.rounds or max(1, math.ceil(math.log2(max(2, agents))))
    return min(wanted, max(1, agents - 1 + agents % 2))


def next_swiss_round(
    games: list[ContestGame],
    roster: list[str],
    withdrawn: set[str],
    rounds_made: int,
    config: ContestConfig,
) -> tuple[int, list[ContestGame]] | None:
    """The next Swiss round once every game of the last one is over: the new count of
    rounds made and the round's games (a bye first, for an odd field), numbered after
    ``games``; None when no round is due. The one pairing rule of ``meeple serve``'s
    contest and of a cluster's (``meeple.node.contest``)."""
    rounds = swiss_round_count(len(roster), config)
    if rounds_made >= rounds:
        return None
    if any(g.status in ("pending", "playing") for g in games):
        return None
    active = [n for n in roster if n not in withdrawn]
    if len(active) < 2:
        return rounds, []
    results = [g.result for g in games if g.status == "done" and g.result is not None]
    ranked = [r["name"] for r in standings(roster, results) if r["name"] in active]
    round_no = rounds_made + 1
    added: list[ContestGame] = []
    if len(ranked) % 2:
        byes = {g.players[0] for g in games if len(g.players) == 1}
        bye = next((n for n in reversed(ranked) if n not in byes), ranked[-1])
        ranked.remove(bye)
        game = ContestGame(len(games), [bye], round_no, status="done")
        game.result = {
            "game_id": None, "players": [bye], "scores": [0], "winners": [bye],
            "winner": bye, "reason": "BYE",
        }  # fmt: skip
        added.append(game)
    met: dict[frozenset[str], int] = {}
    firsts: dict[str, int] = dict.fromkeys(active, 0)
    for g in games:
        if len(g.players) == 2 and g.status != "cancelled":
            key = frozenset(g.players)
            met[key] = met.get(key, 0) + 1
            firsts[g.players[0]] = firsts.get(g.players[0], 0) + 1
    for a, b in swiss_pairs(ranked, met):
        if firsts[a] > firsts[b]:
            a, b = b, a
        for k in range(config.games):
            first, second = (a, b) if k % 2 == 0 else (b, a)
            added.append(ContestGame(len(games) + len(added), [first, second], round_no))
    logger.info("contest: Swiss round %d paired", round_no)
    return round_no, added


def games_left(
    games: list[ContestGame],
    roster: list[str],
    withdrawn: set[str],
    state: str,
    rounds_made: int,
    config: ContestConfig,
) -> dict[str, int]:
    """Each agent's games still to play: scheduled, and a Swiss contest's rounds to come."""
    left = dict.fromkeys(roster, 0)
    for g in games:
        if g.status in ("pending", "playing"):
            for p in g.players:
                left[p] = left.get(p, 0) + 1
    if config.format == "swiss" and state in ("running", "paused"):
        future = max(0, swiss_round_count(len(roster), config) - rounds_made) * config.games
        for n in roster:
            if n not in withdrawn:
                left[n] += future
    return left


def planned_games(
    games: list[ContestGame], roster: list[str], state: str, rounds_made: int, config: ContestConfig
) -> int:
    """The games of the whole contest, the Swiss rounds to come counted (their byes too)."""
    planned = len(games)
    if config.format == "swiss" and state in ("running", "paused"):
        per_round = (len(roster) // 2) * config.games
        rounds_left = max(0, swiss_round_count(len(roster), config) - rounds_made)
        planned += rounds_left * (per_round + len(roster) % 2)
    return planned


def contest_results(games: list[ContestGame]) -> list[dict[str, Any]]:
    """The results of the games played (byes and forfeits too), in the schedule's order."""
    return [g.result for g in games if g.status == "done" and g.result is not None]


class _Conn:
    """One WebSocket connection: unnamed until NAME, then an agent's."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.name = ""
        self.seat: int | None = None  # the seat in its board's referee
        self.open = True


@dataclass
class _Agent:
    name: str
    conn: _Conn | None = None
    table: _Table | None = None
    withdrawn: bool = False
    cooling: bool = False
    address: str = "?"


@dataclass
class _Table:
    """A board: the game on it, its referee once both agents are there, its timer."""

    number: int
    game: ContestGame
    referee: Referee | None = None
    timer: Timer | None = None
    seats: dict[str, int] = field(default_factory=dict)


def _told(contest: Contest) -> None:
    contest._tell()


# Tell the watcher once, after the outermost contest entry point.
_notifies = outermost(_told)


class Contest:
    """The scheduler: agents, the schedule, the boards, the standings; see the module doc."""

    def __init__(
        self,
        *,
        clock: Clock,
        config: ContestConfig,
        make_referee: Callable[[str], Referee],
        save: Callable[[dict[str, Any] | None], None],
        load: Callable[[], dict[str, Any] | None],
        name_timeout: float = 900.0,
        between_games: float = 1.0,
        ahead: WriteAhead | None = None,
        secrets: AgentSecrets | None = None,
    ) -> None:
        self.clock = clock
        # The organiser's name#secret lines: then a NAME must be one of them, and the
        # names they list are the only ones that may enter (None: any name may).
        self.secrets = secrets
        self.ahead = ahead if ahead is not None else WriteAhead("contest")
        self.config = config
        self._make_referee = make_referee
        self._save = save
        self.name_timeout = name_timeout
        self.between_games = between_games
        self.on_change: Callable[[], None] | None = None
        self._depth = 0
        self._closing = False
        self.state = "waiting"
        self.serial = 0  # one per contest, in the referees' keys
        self.agents: dict[str, _Agent] = {}
        self.roster: list[str] = []
        self.games: list[ContestGame] = []
        self.rounds_made = 0
        self.tables: dict[int, _Table] = {}
        self._unnamed: list[_Conn] = []
        self._wake: Timer | None = None
        saved = load()
        if saved is not None:
            try:
                self._restore(saved)
            except (KeyError, TypeError, ValueError) as e:
                logger.error("contest: the saved contest is unreadable (%s); a new one", e)
                self.state, self.roster, self.games, self.rounds_made = "waiting", [], [], 0
                self.agents, self.tables = {}, {}
                save(None)

    # --- persistence ---------------------------------------------------------------

    def _restore(self, saved: dict[str, Any]) -> None:
        state = str(saved["state"])
        if state not in STATES:
            raise ValueError(f"state {state!r}")
        self.serial = int(saved["serial"])
        self.roster = [str(n) for n in saved["roster"]]
        withdrawn = set(saved["withdrawn"])
        self.agents = {n: _Agent(n, withdrawn=n in withdrawn) for n in self.roster}
        self.games = [ContestGame.from_dict(g) for g in saved["games"]]
        self.rounds_made = int(saved["rounds_made"])
        self.state = state
        if state == "waiting":
            self.roster, self.games = [], []
            self.agents = {}
            return
        # Games that were running: back on their boards, waiting for both agents.
        for game in self.games:
            if game.status == "playing":
                number = game.board
                if number is None or number in self.tables or number > self.config.boards:
                    number = next(
                        (n for n in range(1, self.config.boards + 1) if n not in self.tables), None
                    )
                if number is None:
                    game.board = None
                    continue  # more interrupted games than boards: later
                self._open_table(number, game, resuming=True)
        logger.info(
            "contest: restored (%s, %d of %d games played)",
            state,
            sum(g.status == "done" for g in self.games),
            len(self.games),
        )

    def _persist(self) -> None:
        state = {
            "format": self.config.format,
            "state": self.state,
            "serial": self.serial,
            "roster": list(self.roster),
            "withdrawn": [n for n in self.roster if self.agents[n].withdrawn],
            "games": [copy.deepcopy(g.to_dict()) for g in self.games],
            "rounds_made": self.rounds_made,
        }
        # In the write-ahead queue, behind the boards' log writes: the contest never says
        # a game is done before that game is stored (a crash in between replays it).
        self.ahead.write(functools.partial(self._save, state), "contest checkpoint")

    def _tell(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:
                logger.exception("contest: a change watcher failed")

    def _changed(self) -> None:
        """A referee changed something (a move, a clock): tell, unless we are inside a call."""
        if self._depth == 0:
            self._tell()

    # --- connections -----------------------------------------------------------------

    @_notifies
    def connect(self, link: Link) -> _Conn | None:
        """A new connection: ask its NAME (spec, State INIT); None when there are too many."""
        connected = len(self._unnamed) + sum(a.conn is not None for a in self.agents.values())
        if connected >= MAX_CONNECTIONS:
            return None
        conn = _Conn(link)
        self._unnamed.append(conn)
        self.ahead.deliver(functools.partial(link.send, NameRequest().encode()))
        self.clock.call_later(self.name_timeout, functools.partial(self._name_timed_out, conn))
        return conn

    def _name_timed_out(self, conn: _Conn) -> None:
        if conn.open and not conn.name:
            logger.info("[%s] no NAME in time: closed", conn.link.id)
            self._close(conn, int(CloseCode.POLICY_VIOLATION), "no NAME in time")

    @_notifies
    def receive(self, conn: _Conn, data: bytes) -> None:
        """One binary message from a connection."""
        if not conn.open:
            return
        if not conn.name:
            self._naming(conn, data)
            return
        agent = self.agents.get(conn.name)
        table = agent.table if agent is not None else None
        if table is not None and table.referee is not None and conn.seat is not None:
            table.referee.receive(conn.seat, data)
        else:
            # Not in a game: the spec's READY ignores moves; nothing is answered.
            shown = data[:1] if data[:1] == b"\x00" else data  # a NAME may hold a secret
            logger.debug("[%s] %s between games: ignored %s", conn.link.id, conn.name, shown.hex())

    def _naming(self, conn: _Conn, data: bytes) -> None:
        try:
            message = decode_client(data)
        except RemoteProtocolError as e:
            if e.answer is Answer.CLOSE:
                logger.info("[%s] bad NAME: %s", conn.link.id, e.reason)
                self._close(conn, int(e.close_code or CloseCode.PROTOCOL_ERROR), e.reason)
            return
        if not isinstance(message, Name):
            logger.debug("[%s] %s before NAME: ignored", conn.link.id, type(message).__name__)
            return
        checked = message.name if self.secrets is None else self.secrets.check(message.name)
        if checked is None:
            # As a bad NAME: the secret is the agent's proof that the name is its own.
            logger.info("[%s] NAME refused: not a name#secret of the file", conn.link.id)
            self._close(conn, int(CloseCode.POLICY_VIOLATION), "wrong name or secret")
            return
        name = checked
        agent = self.agents.get(name)
        if agent is not None and agent.conn is not None:
            self._close(conn, int(CloseCode.TRY_AGAIN_LATER), "this name is connected already")
            return
        if agent is not None and self.state in ("finished", "aborted") and name in self.roster:
            self._close(conn, CLOSE_DONE, f"contest {self.state}")
            return
        if agent is None and self.state in ("running", "paused"):
            self._close(conn, int(CloseCode.POLICY_VIOLATION), "the contest has started")
            return
        if agent is not None and agent.withdrawn:
            self._close(conn, int(CloseCode.POLICY_VIOLATION), "withdrawn from the contest")
            return
        if agent is None:
            agent = self.agents[name] = _Agent(name)
        conn.name = name
        self._unnamed.remove(conn)
        agent.conn = conn
        agent.address = getattr(conn.link, "address", "?")
        logger.info("[%s] NAME %s", conn.link.id, name)
        if self.state != "running" and self.state != "paused":
            wanted = self.config.agents if self.state == "waiting" else 0
            if wanted and sum(a.conn is not None for a in self.agents.values()) >= wanted:
                self.start()
            return
        if agent.table is not None:
            self._rejoin(agent.table, agent)
        self._schedule()

    @_notifies
    def disconnect(self, conn: _Conn) -> None:
        """A connection is gone (spec, "Disconnection")."""
        conn.open = False
        if not conn.name:
            if conn in self._unnamed:
                self._unnamed.remove(conn)
            return
        agent = self.agents.get(conn.name)
        if agent is None or agent.conn is not conn:
            return
        agent.conn = None
        if self.state not in ("running", "paused") and conn.name not in self.roster:
            del self.agents[conn.name]  # not in a contest (yet): forget it
            return
        table = agent.table
        if table is None or self._closing:
            return
        referee = table.referee
        if referee is not None and conn.seat is not None:
            referee.disconnect(conn.seat)
            conn.seat = None
            table.seats.pop(agent.name, None)
            if referee.waiting:
                self._arm(table, self.config.resume_window)
            elif referee.game is None:
                # Seated, but the game had not started (paused): back to waiting for both.
                referee.release()
                for other in table.game.players:
                    other_conn = self.agents[other].conn
                    if other_conn is not None:
                        other_conn.seat = None
                table.referee, table.seats = None, {}
                self._arm(table, self.config.show_timeout)

    def _close(self, conn: _Conn, code: int, reason: str) -> None:
        """Close a connection and let go of it now: nothing more is sent on it, and its
        agent counts as gone (the listener's disconnect comes later and finds nothing)."""
        if conn.open:
            conn.open = False
            self.ahead.deliver(functools.partial(conn.link.close, code, reason))
        agent = self.agents.get(conn.name) if conn.name else None
        if agent is not None and agent.conn is conn:
            agent.conn = None

    @_notifies
    def shutdown(self) -> None:
        """The server stops: every game saves its times (END 2), every agent is let go."""
        self._closing = True
        for table in list(self.tables.values()):
            if table.timer is not None:
                table.timer.cancel()
            if table.referee is not None:
                table.referee.shutdown()
        for agent in self.agents.values():
            if agent.conn is not None:
                self._close(agent.conn, 1001, "server shutting down")
        for conn in self._unnamed:
            self._close(conn, 1001, "server shutting down")

    # --- admin ---------------------------------------------------------------------

    @_notifies
    def start(self) -> str:
        """Start the contest with the agents connected now (or resume it after pause)."""
        if self.state == "paused":
            return self.resume()
        if self.state == "running":
            raise ConsoleError("the contest is running")
        if self.state in ("finished", "aborted"):
            # A new contest, with whoever is connected.
            self.agents = {n: a for n, a in self.agents.items() if a.conn is not None}
            for a in self.agents.values():
                a.withdrawn, a.table, a.cooling = False, None, False
        names = [n for n, a in self.agents.items() if a.conn is not None]
        if len(names) < 2:
            raise ConsoleError(f"a contest needs two agents at least ({len(names)} connected)")
        self.serial += 1
        self.roster = names
        self.games = []
        self.rounds_made = 0
        if self.config.format == "round-robin":
            for i, (first, second, r) in enumerate(round_robin(names, self.config.games)):
                self.games.append(ContestGame(i, [first, second], r))
        self.state = "running"
        logger.info("contest: %s of %d agents starts", self.config.format, len(names))
        self._schedule()
        self._persist()
        return "started"

    @_notifies
    def pause(self) -> str:
        if self.state != "running":
            raise ConsoleError(f"cannot pause a contest that is {self.state}")
        self.state = "paused"
        for table in self.tables.values():
            if table.referee is not None:
                with contextlib.suppress(RefereeError):  # paused already
                    table.referee.pause()
        self._persist()
        return "paused"

    @_notifies
    def resume(self) -> str:
        if self.state != "paused":
            raise ConsoleError("the contest is not paused")
        self.state = "running"
        for table in list(self.tables.values()):
            if table.referee is not None:
                with contextlib.suppress(RefereeError):  # not paused
                    table.referee.resume()
        self._schedule()
        self._persist()
        return "resumed"

    @_notifies
    def abort(self) -> str:
        """End the contest now: running games are stopped (END 3), the rest cancelled."""
        if self.state not in ("running", "paused"):
            raise ConsoleError(f"cannot abort a contest that is {self.state}")
        self.state = "aborted"
        for table in list(self.tables.values()):
            self._stop_table(table)
        for game in self.games:
            if game.status in ("pending", "playing"):
                game.status = "cancelled"
        self._finish("contest aborted")
        return "aborted"

    @_notifies
    def withdraw(self, name: str) -> str:
        """Take an agent out: its running game is stopped and lost, the rest forfeited."""
        agent = self.agents.get(name)
        if agent is None or name not in self.roster:
            raise ConsoleError(f"no agent {name!r} in the contest")
        if agent.withdrawn:
            raise ConsoleError(f"{name} is withdrawn already")
        if self.state not in ("running", "paused"):
            raise ConsoleError(f"cannot withdraw from a contest that is {self.state}")
        agent.withdrawn = True
        if agent.table is not None:
            agent.table.game.loser = name
            self._stop_table(agent.table, forfeit=[name])
        for game in self.games:
            if game.status == "pending" and name in game.players:
                self._forfeit(game, [p for p in game.players if self.agents[p].withdrawn])
        if agent.conn is not None:
            self._close(agent.conn, int(CloseCode.POLICY_VIOLATION), "withdrawn by the admin")
        self._schedule()
        self._persist()
        return f"{name} withdrawn"

    def _stop_table(self, table: _Table, forfeit: list[str] | None = None) -> None:
        referee = table.referee
        if referee is not None and referee.game is not None:
            referee.stop()  # END 3 to both; the game over comes back through _game_over
            return
        if referee is not None and referee.waiting:
            # The game waiting in its log ends as stopped (stored, its log closed); the
            # contest scores it itself, below, as a forfeit or a cancelled game.
            referee.on_game_over = None
            referee.stop()
        elif referee is None and table.game.status == "playing":
            # Interrupted by a restart, nobody back: its log is closed the same way.
            with contextlib.suppress(RefereeError):
                self._make_referee(self._key(table.game)).stop()
        if forfeit is not None:
            self._forfeit(table.game, forfeit)
        else:
            table.game.status = "cancelled"
            self._close_table(table, cool=False)

    # --- scheduling ----------------------------------------------------------------

    def _available(self, name: str) -> bool:
        agent = self.agents[name]
        return (
            agent.conn is not None
            and agent.table is None
            and not agent.cooling
            and not agent.withdrawn
        )

    def _idle(self, name: str) -> bool:
        agent = self.agents[name]
        return agent.table is None and not agent.cooling and not agent.withdrawn

    def _schedule(self) -> None:
        """Put due games on free boards; pair the next Swiss round; notice the end."""
        if self.state != "running" or self._closing:
            return
        if self.config.format == "swiss":
            self._next_swiss_round()
        while len(self.tables) < self.config.boards:
            game = self._next_game()
            if game is None:
                break
            number = next(n for n in range(1, self.config.boards + 1) if n not in self.tables)
            self._open_table(number, game, resuming=game.status == "playing")
        if all(g.status in ("done", "cancelled") for g in self.games) and self._rounds_done():
            self.state = "finished"
            self._finish("contest finished")

    def _rounds_done(self) -> bool:
        return self.config.format != "swiss" or self.rounds_made >= self._swiss_rounds()

    def _next_game(self) -> ContestGame | None:
        waiting = [g for g in self.games if g.status in ("pending", "playing") and g.board is None]
        # Interrupted games first (after a restart), then the schedule in order.
        waiting.sort(key=lambda g: (g.status != "playing", g.id))
        for game in waiting:
            if all(self._available(p) for p in game.players):
                return game
        for game in waiting:
            if all(self._idle(p) for p in game.players):
                return game  # someone is absent: the board waits for them (show_timeout)
        return None

    def _open_table(self, number: int, game: ContestGame, *, resuming: bool) -> None:
        table = self.tables[number] = _Table(number, game)
        game.board = number
        for p in game.players:
            self.agents[p].table = table
        wait = self.config.resume_window if resuming else self.config.show_timeout
        if not self._try_start(table):
            self._arm(table, wait)

    def _arm(self, table: _Table, seconds: float) -> None:
        if table.timer is not None:
            table.timer.cancel()
        table.timer = self.clock.call_later(seconds, functools.partial(self._timed_out, table))

    def _try_start(self, table: _Table) -> bool:
        """Both agents here: give the board its referee and seat them. False if not yet."""
        if table.referee is not None:
            return True
        game = table.game
        if not all(self._present(p) for p in game.players):
            return False
        if table.timer is not None:
            table.timer.cancel()
            table.timer = None
        referee = self._make_referee(self._key(game))
        referee.on_change = self._changed
        referee.on_game_over = functools.partial(self._game_over, table)
        table.referee = referee
        if self.state == "paused":
            referee.pause()
        game.status = "playing"
        self._persist()
        for p in game.players:  # players[0] takes seat 1 and moves first
            self._seat(table, p)
        return True

    def _present(self, name: str) -> bool:
        agent = self.agents[name]
        return agent.conn is not None and not agent.cooling

    def _seat(self, table: _Table, name: str) -> None:
        conn = self.agents[name].conn
        referee = table.referee
        assert conn is not None
        assert referee is not None
        index = referee.seat(conn.link, name)
        conn.seat = index
        if index is not None:
            table.seats[name] = index
        if table.game.game_id is None and referee.game is not None:
            table.game.game_id = referee.game_id
            self._persist()

    def _rejoin(self, table: _Table, agent: _Agent) -> None:
        """An agent of this board is back (after a drop or a restart)."""
        if table.referee is None:
            self._try_start(table)
            return
        if agent.name not in table.seats:
            self._seat(table, agent.name)
        if table.referee.game is not None and table.timer is not None:
            table.timer.cancel()
            table.timer = None

    def _timed_out(self, table: _Table) -> None:
        """The board waited long enough: a forfeit, or the spec's disconnect end."""
        table.timer = None
        if self.tables.get(table.number) is not table or self.state not in ("running", "paused"):
            return
        if self.state == "paused":
            self._arm(table, self.config.show_timeout)
            return
        game = table.game
        absent = [p for p in game.players if self.agents[p].conn is None]
        if table.referee is not None and table.referee.game is not None:
            return  # playing after all
        if not absent:
            if not self._try_start(table):
                self._arm(table, self.between_games)
            return
        referee = table.referee
        if referee is None:
            referee = self._make_referee(self._key(game))
            referee.on_change = self._changed
            referee.on_game_over = functools.partial(self._game_over, table)
            table.referee = referee
        if referee.waiting:
            # Spec, "Disconnection": the END reason 2 has gone out; the game ends so.
            referee.end_disconnected(absent[0] if len(absent) == 1 else "")
        else:
            referee.release()
            table.referee = None
            self._forfeit(game, absent)
        self._tell()

    def _forfeit(self, game: ContestGame, losers: list[str]) -> None:
        logger.info("contest: game %d %s forfeited by %s", game.id, game.players, losers)
        game.status = "done"
        game.result = {
            "game_id": None,
            "players": list(game.players),
            "scores": [0] * len(game.players),
            "winners": [p for p in game.players if p not in losers],
            "winner": None,
            "reason": "FORFEIT",
        }
        winners = game.result["winners"]
        game.result["winner"] = winners[0] if len(winners) == 1 else None
        table = self.tables.get(game.board) if game.board is not None else None
        if table is not None and table.game is game:
            self._close_table(table, cool=False)
        game.board = None
        if not self._closing:
            self._schedule()
            self._persist()

    def _game_over(self, table: _Table, outcome: dict[str, Any]) -> None:
        """A board's referee ended its game (any END): record it, free the agents."""
        game = table.game
        result = dict(outcome)
        if game.loser is not None:
            winners = [p for p in game.players if p != game.loser]
            result["winners"], result["reason"] = winners, "WITHDRAWN"
        winners = result["winners"]
        result["winner"] = winners[0] if len(winners) == 1 else None
        game.result = result
        game.game_id = result.get("game_id") or game.game_id
        game.status = "done"
        logger.info("contest: game %d over: %s %s", game.id, result["players"], result["scores"])
        self._close_table(table, cool=True)
        self._schedule()
        self._persist()

    def _close_table(self, table: _Table, *, cool: bool) -> None:
        if table.timer is not None:
            table.timer.cancel()
            table.timer = None
        if table.referee is not None:
            table.referee.release()
            table.referee.on_change = None
            table.referee = None
        if self.tables.get(table.number) is table:
            del self.tables[table.number]
        table.game.board = None
        for p in table.game.players:
            agent = self.agents[p]
            if agent.table is table:
                agent.table = None
            if agent.conn is not None:
                agent.conn.seat = None
            if cool and not agent.withdrawn:
                agent.cooling = True
        if cool:
            # The next START comes ``between_games`` after END (stale moves land nowhere).
            players = list(table.game.players)
            self.clock.call_later(self.between_games, functools.partial(self._cooled, players))

    @_notifies
    def _cooled(self, players: list[str]) -> None:
        for p in players:
            if p in self.agents:
                self.agents[p].cooling = False
        for table in list(self.tables.values()):
            if table.referee is None:
                self._try_start(table)
        self._schedule()

    def _finish(self, reason: str) -> None:
        logger.info("contest: %s", reason)
        self._persist()
        for agent in self.agents.values():
            if agent.conn is not None and agent.table is None:
                self._close(agent.conn, CLOSE_DONE, reason)
        for conn in list(self._unnamed):
            self._close(conn, CLOSE_DONE, reason)

    def _key(self, game: ContestGame) -> str:
        return f"contest{self.serial}:game{game.id}"

    # --- Swiss -----------------------------------------------------------------------

    def _swiss_rounds(self) -> int:
        return swiss_round_count(len(self.roster), self.config)

    def _next_swiss_round(self) -> None:
        withdrawn = self._withdrawn()
        paired = next_swiss_round(self.games, self.roster, withdrawn, self.rounds_made, self.config)
        if paired is not None:
            self.rounds_made, added = paired
            self.games.extend(added)

    # --- reading -------------------------------------------------------------------

    def results(self) -> list[dict[str, Any]]:
        return contest_results(self.games)

    def _withdrawn(self) -> set[str]:
        """The roster's withdrawn agents (a name the agents no longer hold, after a new
        contest was refused for want of agents, is not)."""
        return {n for n in self.roster if (a := self.agents.get(n)) is not None and a.withdrawn}

    def games_left(self) -> dict[str, int]:
        withdrawn = self._withdrawn()
        return games_left(
            self.games, self.roster, withdrawn, self.state, self.rounds_made, self.config
        )

    def standings(self) -> list[dict[str, Any]]:
        rows = standings(self.roster, self.results(), self.games_left())
        for row in rows:
            agent = self.agents.get(row["name"])
            row["withdrawn"] = agent is not None and agent.withdrawn
        return rows


class ContestConsole(ConsoleBase):
    """The console (see :mod:`.cmpn402_console`) of a contest: ``mode`` is its format."""

    def __init__(self, contest: Contest, *, token: str, log_dir: Path | None) -> None:
        super().__init__(token=token, log_dir=log_dir)
        self.contest = contest
        contest.on_change = self._watchers.notify

    def snapshot(self) -> dict[str, Any]:
        contest = self.contest
        boards = []
        for number in sorted(contest.tables):
            table = contest.tables[number]
            view = table.referee.board_view(number) if table.referee is not None else None
            if view is not None:
                boards.append(view)
        agents: list[dict[str, Any]] = []
        for agent in contest.agents.values():
            seat = agent.table
            agents.append(
                {
                    "name": agent.name,
                    "address": agent.address,
                    "connected": agent.conn is not None,
                    "board": seat.number if seat is not None else None,
                    "withdrawn": agent.withdrawn,
                }
            )
        for conn in contest._unnamed:
            address = getattr(conn.link, "address", "?")
            agents.append({"name": None, "address": address, "connected": True, "board": None})
        state = contest.state
        if state == "running" and not boards:
            state = "between-games"
        done = [g for g in contest.games if g.status == "done"]
        planned = planned_games(
            contest.games, contest.roster, contest.state, contest.rounds_made, contest.config
        )
        results = [result_entry(r) for r in contest.results()]
        ids = [r["game_id"] for r in results if r["game_id"]] + [b["game_id"] for b in boards]
        return {
            "mode": contest.config.format,
            "state": state,
            "manual_start": contest.config.agents == 0,
            "agents": agents,
            "boards": boards,
            "series": {"games": planned, "played": len(done), "results": results},
            "standings": contest.standings(),
            "files": files(self._log_dir, ids),
        }

    def act(self, action: str, **params: str) -> str:
        contest = self.contest
        if action == "withdraw":
            if set(params) != {"name"}:
                raise ConsoleError("withdraw takes name=AGENT")
            return contest.withdraw(params["name"])
        if params:
            raise ConsoleError(f"{action} takes no parameters")
        actions: dict[str, Callable[[], str]] = {
            "start": contest.start,
            "pause": contest.pause,
            "resume": contest.resume,
            "stop": contest.abort,
            "abort": contest.abort,
        }
        if action == "swap":
            raise ConsoleError("in a contest the schedule decides who moves first")
        if action not in actions:
            raise ConsoleError(f"no action {action!r}")
        return actions[action]()

    def running_games(self) -> list[str]:
        tables = self.contest.tables
        return [
            t.referee.game_id
            for _, t in sorted(tables.items())
            if t.referee is not None and t.referee.game is not None and t.referee.game_id
        ]

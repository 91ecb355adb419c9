"""The CMPN402 WebSocket listener on a cluster edge (:mod:`meeple.node.cmpn402`).

The connection handling is ``meeple serve``'s own
(:class:`~meeple.server.edge.cmpn402.Cmpn402Listener`: the heartbeat, the message budget, the
limits per address): only its hub differs. Where ``meeple serve``'s hub is the referee,
an edge's is an :class:`EdgeHub`:

- on a connection it sends the NAME request and reads NAME (spec, "State: INIT"; a
  connection with no NAME within the server's ``idle_timeout`` is closed with 1008, a
  bad NAME as the referee closes it; with ``[cmpn402] agent_secrets`` a NAME must be a
  ``name#secret`` line of the file, else 1008, and only the bare name goes on:
  :mod:`meeple.server.rooms.cmpn402_names`);
- with the name, it asks the rooms nodes whether a game waits for that agent (it dropped,
  and comes back through this edge: :class:`~meeple.node.cmpn402.SeatFinder`); if one
  does, the seat takes it back (:class:`~meeple.node.wire.Rejoin`), else the agent sits at
  the lobby's CMPN402 table (two agents from any edges make a game);
- once its game's room told it START, every binary message goes to the room
  (:class:`~meeple.node.edge.RemoteRoom`, numbered, asked again across a failover),
  stamped with the session of the last START; what the room sends is written to the
  WebSocket as it is;
- a closed connection is the seat's disconnection (the lobby frees its table seat; its
  room applies the spec's "Disconnection").

The admin endpoint (``/admin/status``, ``/admin/stop|pause|resume?game=<uid>``) is the
cluster's: :mod:`meeple.node.cmpn402_admin` asks the games' owners over the bus.
"""

from __future__ import annotations

import asyncio
import http
import logging
import secrets
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import Server, ServerConnection
from websockets.http11 import Request, Response

from meeple.bus import schema
from meeple.bus.base import BusClosed, BusError
from meeple.cluster.registry import RejoinSeat
from meeple.node import wire
from meeple.node.ask import NoAnswer, ask
from meeple.node.cmpn402 import (
    ADMIN_ACTIONS,
    FINDER,
    GAME,
    KEY,
    TABLE_VARIANTS,
    AgentMessage,
    CloseAgent,
    ToAgent,
)
from meeple.node.cmpn402_admin import (
    ELSEWHERE,
    AdminError,
    ClusterAdmin,
    params_or_error,
)
from meeple.node.contest import (
    CONTEST_GAME,
    CONTEST_KEY,
    CONTEST_VARIANTS,
    LeaveContest,
    RemoteConsole,
    cluster_contest,
)
from meeple.node.edge import EdgeLobby
from meeple.protocols.cmpn402.errors import Answer, CloseCode, RemoteProtocolError
from meeple.protocols.cmpn402.messages import Name, NameRequest, decode_client
from meeple.server.app import Services
from meeple.server.config import ListenerConfig
from meeple.server.edge.attempts import admin_attempts
from meeple.server.edge.cmpn402 import ADMIN_ACTIONS as CONTEST_ACTIONS
from meeple.server.edge.cmpn402 import ADMIN_READS as CONTEST_READS
from meeple.server.edge.cmpn402 import Cmpn402Listener, _json, admin_gate, admin_params
from meeple.server.edge.limits import AddressLimiter, peer_address
from meeple.server.lobby.cmpn402_console import ConsoleError, public
from meeple.server.rooms.cmpn402_names import AgentSecrets, load_secrets
from meeple.server.rooms.room import WriteAhead

__all__ = ["EdgeAgent", "EdgeCmpn402Listener", "EdgeHub", "create_listener"]

logger = logging.getLogger(__name__)


def _not_closed(error: BusError) -> bool:
    """Every error but a closed bus is asked again (a room moving, none started yet)."""
    return True


def create_listener(services: Services, name: str, config: ListenerConfig) -> EdgeCmpn402Listener:
    return EdgeCmpn402Listener(services, name, config)


class EdgeAgent:
    """An agent's seat on this edge: what the lobby and its room know of it."""

    protocol = "cmpn402"
    bot = False
    level = None
    variants = None

    def __init__(
        self,
        link: Any,
        playing: Callable[[], bool] = lambda: False,
        *,
        leave_pause: float = 0.05,
        leave_wait: float = 10.0,
    ) -> None:
        self.link = link
        # Whether a game of the agent is still open on this edge (its room's END and
        # "over" not heard yet): a contest's LeaveContest waits for it, looking every
        # ``leave_pause`` seconds for ``leave_wait`` at most (ClusterConfig's ask_pause
        # and command_wait), then closes anyway.
        self.playing = playing
        self.leave_pause = leave_pause
        self.leave_wait = leave_wait
        self.name = ""
        self.session = ""  # the session of the last START it heard (meeple.node.cmpn402)
        self.gone = False
        self.closing = False  # closed by the edge or its room: what it sends is not read

    def close(self, code: int, reason: str) -> None:
        self.closing = True
        self.link.close(code, reason)

    def deliver(self, event: object) -> None:
        if self.gone:
            return
        if isinstance(event, ToAgent):
            if event.session:
                self.session = event.session
            self.link.send(event.data)
        elif isinstance(event, CloseAgent):
            self.close(event.code, event.reason)
        elif isinstance(event, LeaveContest):
            self._leave(event, int(self.leave_wait / self.leave_pause))
        # The lobby's news of its table: the spec has no word for it (the agent waits).

    def _leave(self, event: LeaveContest, tries: int) -> None:
        """Close once the agent's game on this edge is over (its END first), or after
        ``tries`` looks (a room that never says it is over)."""
        if self.gone or self.closing:
            return
        if tries > 0 and self.playing():
            loop = asyncio.get_running_loop()
            loop.call_later(self.leave_pause, self._leave, event, tries - 1)
            return
        self.close(event.code, event.reason)


class EdgeHub:
    """The listener's hub on an edge (``Cmpn402Listener``'s ``_Hub``); module doc."""

    def __init__(
        self,
        services: Services,
        lobby: EdgeLobby,
        secrets: AgentSecrets | None = None,
        *,
        contest: bool = False,
    ) -> None:
        self.services = services
        self.lobby = lobby
        # A contest ([cmpn402.contest]): an agent enters it (the leader schedules its
        # games: meeple.node.contest) instead of sitting at the two-agent table.
        self.contest = contest
        self.timing = services.config.cluster
        # The organiser's name#secret lines (``meeple serve``'s: cmpn402_names).
        self.secrets = secrets
        self.agents: set[EdgeAgent] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def connect(self, link: Any) -> EdgeAgent:
        agent = EdgeAgent(
            link, leave_pause=self.timing.ask_pause, leave_wait=self.timing.command_wait
        )
        agent.playing = lambda: self.lobby.room_of(agent) is not None
        self.agents.add(agent)
        link.send(NameRequest().encode())  # spec, "State: INIT": send NAME to the client
        timeout = self.services.config.idle_timeout
        self.services.clock.call_later(timeout, lambda: self._name_timed_out(agent))
        return agent

    def _name_timed_out(self, agent: EdgeAgent) -> None:
        if not agent.name and not agent.gone:
            agent.close(int(CloseCode.POLICY_VIOLATION), "no NAME in time")

    def receive(self, agent: EdgeAgent, data: bytes, /) -> None:
        if agent.closing:
            return  # its close is on the way: nothing it sent after counts
        room = self.lobby.room_of(agent)
        if room is not None:
            room.submit(agent, AgentMessage(data, agent.session))
            return
        if agent.name:
            return  # not in a game yet (the spec's READY): nothing to answer
        try:
            message = decode_client(data)
        except RemoteProtocolError as e:
            if e.answer is Answer.CLOSE:
                agent.close(int(e.close_code or CloseCode.PROTOCOL_ERROR), e.reason)
            return
        if not isinstance(message, Name):
            return  # INIT takes NAME only
        name = message.name if self.secrets is None else self.secrets.check(message.name)
        if name is None:  # as a bad NAME (docs/protocols/cmpn402.md, "What protects a seat")
            logger.info("[%s] NAME refused: not a name#secret of the file", agent.link.id)
            agent.close(int(CloseCode.POLICY_VIOLATION), "wrong name or secret")
            return
        agent.name = name
        task = asyncio.get_running_loop().create_task(self._seat(agent))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _seat(self, agent: EdgeAgent) -> None:
        """Back to a game that waits for the agent, or to the lobby's table; in a contest,
        into the contest first (its leader learns the agent's route), then back to its
        game if one waits for it."""
        if self.contest:
            self.lobby.join(CONTEST_KEY, agent)
        try:
            found = await self._find(agent.name)
            if found is not None and not agent.gone and await self._rejoin(agent, found):
                logger.info(
                    "cmpn402: %s takes seat %d of %s back", agent.name, found.seat, found.room
                )
                return
        except BusClosed:
            return
        if not agent.gone and not self.contest:
            self.lobby.join(KEY, agent)

    async def _find(self, name: str) -> RejoinSeat | None:
        """The seat a dropped agent ``name`` had, from any rooms node (asked while none
        answers, for ``ask_patience``: a rooms node may be starting or taking over)."""
        subject = self.lobby.ns.room_command(FINDER)
        try:
            answer = await ask(
                self.lobby.bus, subject, wire.dumps(name), self.timing, again=_not_closed
            )
        except NoAnswer as e:
            logger.warning("cmpn402: no rooms node finds %s's seat: %s", name, e)
            return None
        found: RejoinSeat | None = wire.loads(answer, RejoinSeat | None)
        return found

    async def _rejoin(self, agent: EdgeAgent, found: RejoinSeat) -> bool:
        """Ask room ``found.room`` to give the agent its seat back; whether it did."""
        route = await self.lobby.listen(agent)
        command = wire.Command(found.seat, 0, wire.Rejoin(route, agent.name))
        subject = self.lobby.ns.room_command(found.room)
        try:  # its room may be moving to another node
            answer = await ask(
                self.lobby.bus,
                subject,
                wire.dumps(command),
                self.timing,
                going=lambda: not agent.gone,
                again=_not_closed,
            )
        except NoAnswer:
            return False  # its room is gone, or the agent
        if answer not in (schema.OK, schema.DONE):
            return False  # its game is over
        self.lobby.bind(agent, found.room, found.seat)
        return True

    def disconnect(self, agent: EdgeAgent, /) -> None:
        agent.gone = True
        self.agents.discard(agent)
        if agent.name:
            self.lobby.disconnect(agent)

    def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for agent in list(self.agents):
            agent.close(1001, "server shutting down")


def _no_room(key: Any, seats: Any) -> Any:
    raise RuntimeError("an edge makes no rooms: the rooms nodes do")


class EdgeCmpn402Listener(Cmpn402Listener):
    """``meeple serve``'s CMPN402 listener with an :class:`EdgeHub` (module doc)."""

    def __init__(self, services: Services, name: str, config: ListenerConfig) -> None:
        # Not Cmpn402Listener.__init__: no referee, store or journal on an edge.
        self.name = name
        self.services = services
        self.config = config
        self.ping_interval = services.config.cmpn402.ping_interval
        token = services.config.cmpn402.admin_token
        self.admin_token = token or secrets.token_urlsafe(16)
        if token is None:
            logger.warning(
                "%s: admin token (meeple node --admin-token, or cmpn402.admin_token): %s",
                name,
                self.admin_token,
            )
        self.ahead = WriteAhead(name)
        self.referee = None
        self.contest = None
        lobby = services.lobby
        if not isinstance(lobby, EdgeLobby):
            raise TypeError("the edge's CMPN402 listener needs the edge's lobby")
        lobby.register_game(GAME, _no_room, variants=TABLE_VARIANTS)
        contest = cluster_contest(services.config.cmpn402) is not None
        if contest:
            lobby.register_game(CONTEST_GAME, _no_room, variants=CONTEST_VARIANTS)
        self.secrets = load_secrets(services.config.cmpn402.agent_secrets)
        self.hub = EdgeHub(services, lobby, self.secrets, contest=contest)
        self.admin = ClusterAdmin(
            lobby.bus, lobby.ns, self.admin_token, timing=services.config.cluster
        )
        # The contest's console (meeple.node.contest): /admin/… here, /cmpn402 on the
        # edge's web port (the same resource meeple serve's listener registers).
        self.contest_console: RemoteConsole | None = None
        if contest:
            console = RemoteConsole(
                lobby.bus, lobby.ns, self.admin_token, self.admin, timing=services.config.cluster
            )
            self.contest_console = console
            if services.console is None:
                services.console = console
        self._hub = self.hub
        self._server: Server | None = None
        self._bound = 0
        self._handlers: set[asyncio.Task[None]] = set()
        self.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
        self.attempts = admin_attempts(services)  # wrong admin tokens, as meeple serve's

    async def start(self) -> None:
        await self.admin.start()
        if self.contest_console is not None:
            await self.contest_console.start()
        await super().start()

    async def close(self, grace: float = 5.0) -> None:
        # The hub's shutdown first, at once, as meeple serve's listener does: an await
        # before it lets a seat's task start a flush that the shutdown then cancels (a
        # flush cancelled in flight breaks nats-py's connection: its PONG finds the
        # future cancelled).
        await super().close(grace)
        if self.contest_console is not None:
            await self.contest_console.stop()
        await self.admin.stop()

    async def _http(  # type: ignore[override]
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        refusal: Response | None = self.addresses.refusal(connection)
        if refusal is not None:
            return refusal
        if not request.path.startswith("/admin"):
            return None  # a WebSocket handshake
        if self.contest_console is not None:
            return await self._contest_http(connection, request, self.contest_console)
        gate = admin_gate(
            request,
            ("status",),
            ADMIN_ACTIONS,
            self.admin.check_token,
            ELSEWHERE,
            attempts=self.attempts,
            address=peer_address(connection),
        )
        if isinstance(gate, Response):
            return gate
        action, query = gate
        try:
            if action == "status":
                return _json(http.HTTPStatus.OK, await self.admin.status())
            body = await self.admin.act(action, params_or_error(query))
        except AdminError as e:
            logger.info("%s: admin %s refused: %s", self.name, action, e)
            return _json(e.status, {"error": str(e)})
        return _json(http.HTTPStatus.OK, body)

    async def _contest_http(
        self, connection: ServerConnection, request: Request, console: RemoteConsole
    ) -> Response:
        """``meeple serve``'s contest admin (``/admin/status|standings``, ``/admin/start|
        pause|resume|stop|abort|withdraw``), through the contest's leader (module doc)."""
        gate = admin_gate(
            request,
            CONTEST_READS,
            CONTEST_ACTIONS,
            console.check_token,
            attempts=self.attempts,
            address=peer_address(connection),
        )
        if isinstance(gate, Response):
            return gate
        action, query = gate
        if action in CONTEST_READS:
            await console.refresh()
            snapshot = console.snapshot()
            if action == "standings":
                body = {"mode": snapshot["mode"], "standings": snapshot["standings"]}
                return _json(http.HTTPStatus.OK, body)
            return _json(http.HTTPStatus.OK, {"status": public(snapshot)})
        try:
            result = await console.act(action, **admin_params(query))
        except ConsoleError as e:
            logger.info("%s: admin %s refused: %s", self.name, action, e)
            return _json(http.HTTPStatus.CONFLICT, {"error": str(e)})
        logger.info("%s: admin %s: %s", self.name, action, result)
        return _json(http.HTTPStatus.OK, {"result": result, "status": public(console.snapshot())})

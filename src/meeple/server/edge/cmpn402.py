"""The CMPN402 listener: WebSocket (``websockets``), the referee, the admin endpoint, the logs.

- Each WebSocket connection gets a seat in the one :class:`~.cmpn402_referee.Referee`
  (a third is closed with code 1013, ERRATA). Binary messages go to the referee;
  a text message is not CMPN402 and is ignored (logged), so the game goes on.
- Heartbeat (spec, "Websockets"; ERRATA): ``websockets``' keepalive pings every
  ``ping_interval`` seconds and drops a client whose pong has not come back by the
  next ping (``ping_timeout = ping_interval``).
- Admin (the spec's GUI buttons): plain HTTP on the same port, answered in
  ``process_request`` before any WebSocket handshake. Reads are GETs
  (``/admin/status``, ``/admin/standings``); actions change state only on POST
  (``/admin/start|pause|resume|stop|swap``, in contest mode ``abort`` and
  ``withdraw?name=…``), a GET of them is 405. The token goes in
  ``Authorization: Bearer <token>``: none is 401, a wrong one 403; an address that sent
  5 wrong ones within a minute gets 429 for any token until the minute is over (the
  console sign-in's limiter, :mod:`meeple.server.edge.attempts`). Answers are JSON.
  Without a configured token a random one is made and logged.
- The console (:mod:`.cmpn402_console`): registered as the ``cmpn402.console``
  service for the web page; the admin endpoint is a thin shell over it.
- Every game is a log in the store, written through the server's journal (see
  :mod:`.cmpn402_referee`); the finished game is stored when its log closes, like
  every other game. At start-up the listener looks for its referees' unfinished logs
  (:func:`referee_logs`) and hands each to the referee that resumes it.
- A per-game file for the organiser under ``<database dir>/cmpn402/``: every message
  in and out with its time and bytes, and ``<same name>.gcg`` when the game ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import http
import itertools
import json
import logging
import math
import secrets
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from meeple.private import private_dir, private_file, write_private
from meeple.protocols.cmpn402.errors import CloseCode
from meeple.protocols.cmpn402.messages import Start
from meeple.server.app import Services
from meeple.server.config import ListenerConfig
from meeple.server.edge.attempts import AttemptLimiter, admin_attempts
from meeple.server.edge.limits import AddressLimiter, MessageBudget, RefusalLog, peer_address
from meeple.server.edge.tcp import BACKLOG, ConnectionLog
from meeple.server.lobby.cmpn402_console import Console, ConsoleError, SeriesConsole, public
from meeple.server.lobby.contest import Contest, ContestConsole
from meeple.server.rooms.cmpn402 import GAME, Referee, RefereeSettings, new_game_id
from meeple.server.rooms.cmpn402_names import load_secrets
from meeple.server.rooms.room import WriteAhead
from meeple.server.rooms.scrabble import table_lexicon
from meeple.server.store.database import ActionLog, Store, sqlite_path
from meeple.server.store.journal import server_journal, server_store

__all__ = [
    "Cmpn402Listener",
    "FileGameLog",
    "admin_gate",
    "admin_params",
    "create_listener",
    "referee_logs",
]

logger = logging.getLogger(__name__)

_conn_ids = itertools.count(1)
# The largest client message is a NAME: 1 + 64 bytes. Anything bigger closes with 1009.
MAX_MESSAGE_SIZE = 1024
# The admin endpoint: reads are GETs, actions POSTs (never a state change on a GET).
ADMIN_READS = ("status", "standings")
ADMIN_ACTIONS = ("start", "pause", "resume", "stop", "swap", "abort", "withdraw")
MAX_PARAM = 64  # characters of an admin parameter (an agent's name is at most 64 bytes)


def create_listener(services: Services, name: str, config: ListenerConfig) -> Cmpn402Listener:
    return Cmpn402Listener(services, name, config)


def referee_logs(store: Store, prefix: str) -> dict[str, str]:
    """The unfinished logs of the referees named ``prefix`` or ``prefix:…`` (a contest's
    boards): the referee's key (the genesis's ``table.referee``) to the newest log's uid.

    Other games' logs (``open_logs("scrabble")`` holds the Scrabble rooms' too) are
    not the referee's: their genesis names no referee.
    """
    found: dict[str, str] = {}
    for uid in store.open_logs(GAME):
        log = store.action_log(uid)
        table = log.genesis.get("table") if log is not None else None
        key = table.get("referee") if isinstance(table, dict) else None
        if isinstance(key, str) and (key == prefix or key.startswith(prefix + ":")):
            if key in found:
                logger.warning("cmpn402: %s has more than one unfinished log; %s left", key, uid)
            found[key] = uid  # oldest first: the newest wins
    return found


class FileGameLog:
    """One game's log file: a line per message (time, direction, seat, message, hex).

    A resumed game passes its ``game_id`` and appends to the same file.
    """

    def __init__(
        self, directory: Path, players: tuple[str, ...], game_id: str | None = None
    ) -> None:
        self.stem = self.game_id = game_id or new_game_id(players)
        # Both agents' racks, written during play: private (issue 30.5).
        private_dir(directory)
        self.path = directory / f"{self.stem}.log"
        self._gcg = directory / f"{self.stem}.gcg"

    def _write(self, line: str) -> None:
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        try:
            with private_file(self.path).open("a", encoding="utf-8") as f:
                f.write(f"{now} {line}\n")
        except OSError:
            logger.exception("cmpn402: cannot write %s", self.path)

    def message(self, direction: str, seat: str, message: object, data: bytes) -> None:
        arrow = "<-" if direction == "in" else "->"
        text = str(message)
        if isinstance(message, Start):  # the board is in the bytes; keep the line short
            tiles = sum(c != "." for row in message.board for c in row)
            text = str(replace(message, board=(f"<{tiles} tiles>",)))
        self._write(f"{arrow} {seat} {text} | {data.hex(' ')}")

    def note(self, text: str) -> None:
        self._write(f"## {text}")

    def finished(self, gcg: str) -> None:
        try:
            write_private(self._gcg, gcg)
        except OSError:
            logger.exception("cmpn402: cannot write %s", self._gcg)


class _Link:
    """A seat's connection: an ordered outbox drained by one writer task."""

    def __init__(self, ws: ServerConnection) -> None:
        self.id = f"cmpn402-{next(_conn_ids)}"
        self.ws = ws
        peer = ws.remote_address
        self.address = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.log = ConnectionLog(logger, {"conn": self.id, "protocol": "cmpn402"})
        # The referee's refusals of this agent's messages too: the first few, then a count.
        self.refusals = RefusalLog(self.log)
        self.outbox: asyncio.Queue[bytes | tuple[int, str]] = asyncio.Queue()

    def send(self, data: bytes) -> None:
        self.outbox.put_nowait(data)

    def close(self, code: int, reason: str) -> None:
        self.outbox.put_nowait((code, reason))

    async def drain(self) -> None:
        while True:
            item = await self.outbox.get()
            if isinstance(item, tuple):
                await self.ws.close(*item)
                return
            await self.ws.send(item)


class _Hub(Protocol):
    """Who takes the connections: the two-agent Referee, or a Contest (both fit)."""

    def connect(self, link: Any) -> Any: ...

    def receive(self, handle: Any, data: bytes, /) -> None: ...

    def disconnect(self, handle: Any, /) -> None: ...

    def shutdown(self) -> None: ...


class Cmpn402Listener:
    """The referee on a WebSocket port; see the module docstring.

    Without a ``[cmpn402.contest]`` table this is today's two-agent referee
    (:attr:`referee`); with one, a :class:`~meeple.server.lobby.contest.Contest`
    (:attr:`contest`) that runs a referee per board.
    """

    def __init__(self, services: Services, name: str, config: ListenerConfig) -> None:
        self.name = name
        self.services = services
        self.config = config
        settings = services.config.cmpn402
        self.ping_interval = settings.ping_interval
        self.admin_token = settings.admin_token or secrets.token_urlsafe(16)
        if settings.admin_token is None:
            logger.warning("%s: admin token (set cmpn402.admin_token): %s", name, self.admin_token)
        lexicon = table_lexicon(services)
        database = sqlite_path(services.config.database)
        self.store: Store = server_store(services)
        # The referee's message logs lie beside the SQLite file (var/ for another store).
        self.log_dir = (
            None
            if database == ":memory:"
            else Path(database or "var/meeple.sqlite3").parent / "cmpn402"
        )
        key = f"cmpn402:{name}"
        # The games' logs go through the server's journal; what the referees send goes
        # out behind them, in one queue for the whole listener (a contest's boards and
        # the contest's own closes share it, so nothing overtakes a game's END).
        self.journal = server_journal(services)
        self.ahead = WriteAhead(name)
        self._recovered = referee_logs(self.store, key)
        referee_settings = RefereeSettings(
            player_time=round(settings.player_time * 1000),
            total_time=round(settings.total_time * 1000),
            challenge_time=round(settings.challenge_time * 1000),
            manual_start=settings.manual_start,
            games=settings.games,
            name_timeout=round(services.config.idle_timeout * 1000),
        )
        # [cmpn402] agent_secrets: the organiser's name#secret lines (checked at start).
        self.secrets = load_secrets(settings.agent_secrets)
        self.referee: Referee | None = None
        self.contest: Contest | None = None
        self.console: Console
        self._hub: _Hub
        if settings.contest is None:
            self.referee = self._referee(key, referee_settings, lexicon)
            self.console = SeriesConsole(self.referee, token=self.admin_token, log_dir=self.log_dir)
            self._hub = self.referee
        else:
            # One referee per board, each game's log under its own key. The contest's
            # own state (roster, schedule, results) is no game: it stays a checkpoint.
            board_settings = replace(referee_settings, games=1, manual_start=False)

            def make_referee(game_key: str) -> Referee:
                return self._referee(f"{key}:{game_key}", board_settings, lexicon)

            def save(state: dict[str, Any] | None) -> None:
                if state is None:
                    self.store.delete_checkpoint(f"{key}:contest")
                else:
                    self.store.save_checkpoint(f"{key}:contest", state)

            self.contest = Contest(
                clock=services.clock,
                config=settings.contest,
                make_referee=make_referee,
                save=save,
                load=lambda: self.store.load_checkpoint(f"{key}:contest"),
                name_timeout=services.config.idle_timeout,
                between_games=referee_settings.between_games / 1000,
                ahead=self.ahead,
                secrets=self.secrets,
            )
            self.console = ContestConsole(
                self.contest, token=self.admin_token, log_dir=self.log_dir
            )
            self._hub = self.contest
        if services.console is None:
            services.console = self.console
        self._server: Server | None = None
        self._bound = 0  # the port bound, kept once it stops accepting
        self._handlers: set[asyncio.Task[None]] = set()
        # [limits]: connections per address (HTTP 503 past it); see server/edge/limits.py.
        self.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
        # Wrong admin tokens per address: the console sign-in's limiter (one count).
        self.attempts = admin_attempts(services)

    def _referee(self, key: str, settings: RefereeSettings, lexicon: Any) -> Referee:
        """A referee (the series', or a contest board's) with its log, if it left one."""
        return Referee(
            clock=self.services.clock,
            lexicon=lexicon,
            rng=self.services.rng,
            settings=settings,
            key=key,
            journal=self.journal,
            ahead=self.ahead,
            recovered=self._recovered_log(key),
            open_log=self._open_log,
            secrets=self.secrets,
        )

    def _recovered_log(self, key: str) -> ActionLog | None:
        """The unfinished log that referee ``key`` left before the restart, if still open."""
        uid = self._recovered.get(key)
        log = None if uid is None else self.store.action_log(uid)
        return None if log is None or log.finished else log

    @property
    def port(self) -> int:
        assert self._server is not None
        sockets = list(self._server.sockets)
        return int(sockets[0].getsockname()[1]) if sockets else self._bound

    def stop_accepting(self) -> None:
        """A drain (issue 35): the port closes (asyncio's server, not websockets': its
        close would end the agents' connections too); the agents connected play on."""
        if self._server is not None and self._server.sockets:
            self._bound = self.port
            self._server.server.close()
            logger.info("%s: draining: no new connection on port %d", self.name, self._bound)

    async def start(self) -> None:
        self._server = await serve(
            self._handle,
            self.services.config.host,
            self.config.port,
            process_request=self._http,
            ping_interval=self.ping_interval,
            ping_timeout=self.ping_interval,
            close_timeout=max(1.0, self.ping_interval),
            # Slowloris: an unfinished handshake is dropped after this; an unfinished
            # frame holds back the client's pong, so the keepalive drops it.
            open_timeout=self.services.config.limits.partial_message_timeout,
            max_size=MAX_MESSAGE_SIZE,
            compression=None,
            backlog=BACKLOG,  # a contest's agents connect in a burst (see server.tcp)
        )
        self._bound = self.port
        logger.info("%s: listening on %s:%d", self.name, self.services.config.host, self.port)

    async def close(self, grace: float = 5.0) -> None:
        if self._server is None:
            return
        self._server.close(close_connections=False)
        self._hub.shutdown()
        # The times at the stop are logged, then END 2 and the closes go out.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ahead.drain(), grace)
        tasks = [t for t in self._handlers if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        self._server.close(close_connections=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), grace)

    # --- the organiser's files --------------------------------------------------------

    def _open_log(self, players: tuple[str, ...], game_id: str) -> FileGameLog | _NullLog:
        if self.log_dir is None:
            return _NullLog(game_id)
        log = FileGameLog(self.log_dir, players, game_id)
        logger.info("%s: game log %s", self.name, log.path)
        return log

    # --- WebSocket --------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        link = _Link(ws)
        budget = self.services.connections
        share = None if budget is None else budget.share(self.name)
        if share is not None and not share.acquire():
            # The server's connection budget (issue 22): descriptors kept for the rest.
            self._handlers.discard(task)
            await ws.close(CloseCode.TRY_AGAIN_LATER, "the server is full")
            return
        try:
            with self.addresses.hold(ws) as admitted:
                if admitted:
                    await self._play(ws, link)
                else:  # a race past process_request's check
                    await ws.close(CloseCode.TRY_AGAIN_LATER, "too many from one address")
        finally:
            if share is not None:
                share.release()
            self._handlers.discard(task)

    async def _play(self, ws: ServerConnection, link: _Link) -> None:
        try:
            index = self._hub.connect(link)
            if index is None:
                logger.info("[%s] refused: no free seat", link.id)
                await ws.close(CloseCode.TRY_AGAIN_LATER, "no free seat")
                return
            writer = asyncio.create_task(link.drain(), name=f"{link.id}-writer")
            limits = self.services.config.limits
            budget = MessageBudget(
                self.services.clock,
                limits.message_rate,
                limits.message_burst,
                limits.hard_message_rate,
                limits.hard_message_burst,
            )
            refusals = link.refusals
            turn = 0
            try:
                async for message in ws:
                    # Issue 22: the rate budget before decoding. The spec has no reply for
                    # a message the server will not take but INVALID for a move (spec,
                    # server state IDLE), so one past the soft limit is ignored, unread
                    # (Answer.IGNORE); past the hard limit the agent is closed (1008).
                    allowed, over = budget.charge(1)
                    if over:
                        link.log.info("closed: past the hard message rate limit")
                        await ws.close(CloseCode.POLICY_VIOLATION, "too many messages")
                        break
                    turn += 1
                    if turn >= limits.messages_per_turn:
                        turn = 0
                        await asyncio.sleep(0)  # queued messages: let the others run
                    if not allowed:
                        refusals.add(1)  # counted; the summary at the close says how many
                        continue
                    if isinstance(message, str):
                        # The spec sends binary messages only; a text one is no message.
                        refusals.note("text message ignored: %.40r", message)
                        continue
                    try:
                        self._hub.receive(index, message)
                    except Exception:
                        # A bug must not cost the agents their game: log it, go on.
                        logger.exception("[%s] message %s failed", link.id, message.hex())
            except ConnectionClosed:
                pass
            finally:
                summary = refusals.summary()
                if summary is not None:
                    link.log.info("%s", summary)
                self._hub.disconnect(index)
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await writer
        except Exception:
            logger.exception("[%s] handler failed", link.id)

    # --- admin over HTTP --------------------------------------------------------------

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        refusal: Response | None = self.addresses.refusal(connection)
        if refusal is not None:
            return refusal
        if not request.path.startswith("/admin"):
            return None  # a WebSocket handshake, on any other path
        gate = admin_gate(
            request,
            ADMIN_READS,
            ADMIN_ACTIONS,
            self.console.check_token,
            attempts=self.attempts,
            address=peer_address(connection),
        )
        if isinstance(gate, Response):
            return gate
        action, query = gate
        snapshot = self.console.snapshot()
        if action == "standings":
            body = {"mode": snapshot["mode"], "standings": snapshot["standings"]}
            return _json(http.HTTPStatus.OK, body)
        if action == "status":
            return _json(http.HTTPStatus.OK, self._status(snapshot))
        try:
            params = admin_params(query)
            result = self.console.act(action, **params)
        except ConsoleError as e:
            logger.info("%s: admin %s refused: %s", self.name, action, e)
            return _json(http.HTTPStatus.CONFLICT, {"error": str(e)})
        logger.info("%s: admin %s: %s", self.name, action, result)
        return _json(http.HTTPStatus.OK, {"result": result, **self._status()})

    def _status(self, snapshot: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"status": public(snapshot or self.console.snapshot())}
        if self.referee is not None:
            body["referee"] = self.referee.status()
        return body


def admin_gate(
    request: Request,
    reads: Sequence[str],
    actions: Sequence[str],
    check_token: Callable[[str], bool],
    elsewhere: Mapping[str, str] | None = None,
    *,
    attempts: AttemptLimiter | None = None,
    address: str = "unknown",
) -> Response | tuple[str, str]:
    """An ``/admin/…`` request's action and query string, or the answer that refuses it:
    404 for a path that is no action (``elsewhere``: actions served elsewhere, and
    where), 405 for a GET of an action (``Allow: POST``) or a POST of a read, 401 with
    no bearer token, 403 with a wrong one (module doc); 429 (``Retry-After``) for any
    token from an ``address`` that offered too many wrong ones lately (``attempts``, the
    console sign-in's limiter: wrong tokens count, a right one does not)."""
    path, _, query = request.path.partition("?")
    action = path.removeprefix("/admin/")
    if action in reads:
        allowed = "GET"
    elif action in actions:
        allowed = "POST"
    elif elsewhere is not None and action in elsewhere:
        return _json(http.HTTPStatus.NOT_FOUND, {"error": f"{path}: {elsewhere[action]}"})
    else:
        return _json(http.HTTPStatus.NOT_FOUND, {"error": f"no admin action {path[:80]}"})
    if request.method != allowed:
        return _json(
            http.HTTPStatus.METHOD_NOT_ALLOWED,
            {"error": f"{path} takes {allowed} only"},
            [("Allow", allowed)],
        )
    auth = request.headers.get("Authorization", "")
    if not auth.startswith("Bearer ") or not auth.removeprefix("Bearer ").strip():
        return _json(
            http.HTTPStatus.UNAUTHORIZED,
            {"error": "the admin token is needed (Authorization: Bearer …)"},
            [("WWW-Authenticate", "Bearer")],
        )
    # Issue 30: guesses are limited as at the console's sign-in. While an address is
    # over the limit no token it offers is checked (a right one would say it is right).
    wait = None if attempts is None else attempts.wait(address)
    if wait is not None:
        logger.info("admin: %s is over the limit of wrong tokens: refused", address)
        return _json(
            http.HTTPStatus.TOO_MANY_REQUESTS,
            {"error": "too many wrong admin tokens from your address; wait a minute"},
            [("Retry-After", str(max(1, math.ceil(wait))))],
        )
    if not check_token(auth.removeprefix("Bearer ").strip()):
        if attempts is not None:
            attempts.allow(address)
        return _json(http.HTTPStatus.FORBIDDEN, {"error": "wrong admin token"})
    return action, query


def admin_params(query: str) -> dict[str, str]:
    """An admin action's parameters from the query string: small, and each given once."""
    if len(query) > 4 * MAX_PARAM:
        raise ConsoleError("the query string is too long")
    try:
        pairs = urllib.parse.parse_qsl(query, strict_parsing=bool(query), max_num_fields=4)
    except ValueError as e:
        raise ConsoleError(f"bad query string: {e}") from None
    params: dict[str, str] = {}
    for key, value in pairs:
        if key in params or len(value) > MAX_PARAM or not key.isidentifier():
            raise ConsoleError(f"bad parameter {key[:MAX_PARAM]!r}")
        params[key] = value
    return params


class _NullLog:
    def __init__(self, game_id: str) -> None:
        self.stem = self.game_id = game_id

    def message(self, direction: str, seat: str, message: object, data: bytes) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def finished(self, gcg: str) -> None:
        pass


def _json(
    status: http.HTTPStatus, body: dict[str, Any], extra: list[tuple[str, str]] | None = None
) -> Response:
    data = json.dumps(body).encode()
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
            *(extra or []),
        ]
    )
    return Response(status.value, status.phrase, headers, data)

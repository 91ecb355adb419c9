"""The CMPN402 listener: WebSocket (``websockets``), the referee, the admin endpoint, the logs.

- Each WebSocket connection gets a seat in the one :class:`~.cmpn402_referee.Referee`
  (a third is closed with code 1013, ERRATA). Binary messages go to the referee;
  a text message is not CMPN402 and is ignored (logged), so the game goes on.
- Heartbeat (spec, "Websockets"; ERRATA): ``websockets``' keepalive pings every
  ``ping_interval`` seconds and drops a client whose pong has not come back by the
  next ping (``ping_timeout = ping_interval``).
- Admin (the spec's GUI buttons): plain HTTP on the same port, answered in
  ``process_request`` before any WebSocket handshake. ``websockets`` parses GET
  requests only, so the endpoint is ``GET /admin/status``, ``/admin/start``,
  ``/admin/pause``, ``/admin/stop`` with ``Authorization: Bearer <token>``; the
  answer is JSON. Without a configured token a random one is made and logged.
- A per-game log for the organiser under ``<database dir>/cmpn402/``: every message
  in and out with its time and bytes, and ``<same name>.gcg`` when the game ends;
  finished games also go to the store like every other game.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hmac
import http
import itertools
import json
import logging
import re
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from meeple.games.scrabble import game as g
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.lexicon import load_lexicon
from meeple.protocols.cmpn402.errors import CloseCode
from meeple.protocols.cmpn402.messages import Start
from meeple.server.app import Services
from meeple.server.cmpn402_referee import Referee, RefereeSettings
from meeple.server.config import ListenerConfig
from meeple.server.limits import AddressLimiter
from meeple.server.store import Store

__all__ = ["Cmpn402Listener", "FileGameLog", "create_listener"]

logger = logging.getLogger(__name__)

_conn_ids = itertools.count(1)
# The largest client message is a NAME: 1 + 64 bytes. Anything bigger closes with 1009.
MAX_MESSAGE_SIZE = 1024


def create_listener(services: Services, name: str, config: ListenerConfig) -> Cmpn402Listener:
    return Cmpn402Listener(services, name, config)


class FileGameLog:
    """One game's log file: a line per message (time, direction, seat, message, hex)."""

    def __init__(self, directory: Path, players: tuple[str, ...]) -> None:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        safe = "-vs-".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p)[:32] for p in players)
        self.stem = f"{stamp}-{safe}"
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{self.stem}.log"
        self._gcg = directory / f"{self.stem}.gcg"

    def _write(self, line: str) -> None:
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        try:
            with self.path.open("a", encoding="utf-8") as f:
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
            self._gcg.write_text(gcg, encoding="utf-8")
        except OSError:
            logger.exception("cmpn402: cannot write %s", self._gcg)


class _Link:
    """A seat's connection: an ordered outbox drained by one writer task."""

    def __init__(self, ws: ServerConnection) -> None:
        self.id = f"cmpn402-{next(_conn_ids)}"
        self.ws = ws
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


class Cmpn402Listener:
    """The referee on a WebSocket port; see the module docstring."""

    def __init__(self, services: Services, name: str, config: ListenerConfig) -> None:
        self.name = name
        self.services = services
        self.config = config
        settings = services.config.cmpn402
        self.ping_interval = settings.ping_interval
        self.admin_token = settings.admin_token or secrets.token_urlsafe(16)
        if settings.admin_token is None:
            logger.warning("%s: admin token (set cmpn402.admin_token): %s", name, self.admin_token)
        lexicon = services.resource(
            "scrabble.lexicon", lambda: load_lexicon(services.config.lexicon)
        )
        database = services.config.database
        self.store: Store = services.resource("store", lambda: Store(database))
        self.log_dir = None if database == ":memory:" else Path(database).parent / "cmpn402"
        key = f"cmpn402:{name}"

        def save(state: dict[str, Any] | None) -> None:
            if state is None:
                self.store.delete_checkpoint(key)
            else:
                self.store.save_checkpoint(key, state)

        self.referee = Referee(
            clock=services.clock,
            lexicon=lexicon,
            rng=services.rng,
            settings=RefereeSettings(
                player_time=round(settings.player_time * 1000),
                total_time=round(settings.total_time * 1000),
                challenge_time=round(settings.challenge_time * 1000),
                manual_start=settings.manual_start,
                games=settings.games,
                name_timeout=round(services.config.idle_timeout * 1000),
            ),
            save=save,
            load=lambda: self.store.load_checkpoint(key),
            record=self._record,
            open_log=self._open_log,
        )
        self._lexicon_name = getattr(lexicon, "name", None)
        self._server: Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        # [limits]: connections per address (HTTP 503 past it); see server/limits.py.
        self.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
        self._started_at = time.time()

    @property
    def port(self) -> int:
        assert self._server is not None
        sockets = list(self._server.sockets)
        return int(sockets[0].getsockname()[1])

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
        )
        logger.info("%s: listening on %s:%d", self.name, self.services.config.host, self.port)

    async def close(self, grace: float = 5.0) -> None:
        if self._server is None:
            return
        self._server.close(close_connections=False)
        self.referee.shutdown()
        tasks = [t for t in self._handlers if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        self._server.close(close_connections=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), grace)

    # --- game records -----------------------------------------------------------------

    def _open_log(self, players: tuple[str, ...]) -> FileGameLog | _NullLog:
        self._started_at = time.time()  # wall time of the game's (re)start, for the store
        if self.log_dir is None:
            return _NullLog()
        log = FileGameLog(self.log_dir, players)
        logger.info("%s: game log %s", self.name, log.path)
        return log

    def _record(self, game: g.Game, reason: str) -> str:
        """Store a finished game; returns its GCG for the game's log."""
        gcg = to_gcg(game, lexicon=self._lexicon_name)
        result = game.result
        assert result is not None
        self.store.record_game(
            game="scrabble",
            variant="cmpn402",
            protocols=["cmpn402"],
            players=game.players,
            started_at=self._started_at,
            end_reason=reason.lower(),
            result={
                "scores": dict(zip(game.players, result.scores, strict=True)),
                "winners": [game.players[w] for w in result.winners],
            },
            record=gcg,
        )
        return gcg

    # --- WebSocket --------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        link = _Link(ws)
        try:
            with self.addresses.hold(ws) as admitted:
                if admitted:
                    await self._play(ws, link)
                else:  # a race past process_request's check
                    await ws.close(CloseCode.TRY_AGAIN_LATER, "too many from one address")
        finally:
            self._handlers.discard(task)

    async def _play(self, ws: ServerConnection, link: _Link) -> None:
        try:
            index = self.referee.connect(link)
            if index is None:
                logger.info("[%s] refused: two agents are connected", link.id)
                await ws.close(CloseCode.TRY_AGAIN_LATER, "two agents are connected")
                return
            writer = asyncio.create_task(link.drain(), name=f"{link.id}-writer")
            try:
                async for message in ws:
                    if isinstance(message, str):
                        # The spec sends binary messages only; a text one is no message.
                        logger.info("[%s] text message ignored: %.40r", link.id, message)
                        continue
                    try:
                        self.referee.receive(index, message)
                    except Exception:
                        # A bug must not cost the agents their game: log it, go on.
                        logger.exception("[%s] message %s failed", link.id, message.hex())
            except ConnectionClosed:
                pass
            finally:
                self.referee.disconnect(index)
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
        path = request.path.split("?", 1)[0]
        if not path.startswith("/admin"):
            return None  # a WebSocket handshake, on any other path
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ").strip()
        if not hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return _json(http.HTTPStatus.UNAUTHORIZED, {"error": "a valid bearer token is needed"})
        actions = {
            "/admin/status": None,
            "/admin/start": self.referee.start,
            "/admin/pause": self.referee.pause,
            "/admin/stop": self.referee.stop,
        }
        if path not in actions:
            return _json(http.HTTPStatus.NOT_FOUND, {"error": f"no admin action {path}"})
        action = actions[path]
        body: dict[str, Any] = {}
        if action is not None:
            body["result"] = action()
            logger.info("%s: admin %s: %s", self.name, path, body["result"])
        body["status"] = self.referee.status()
        return _json(http.HTTPStatus.OK, body)


class _NullLog:
    stem = ""

    def message(self, direction: str, seat: str, message: object, data: bytes) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def finished(self, gcg: str) -> None:
        pass


def _json(status: http.HTTPStatus, body: dict[str, Any]) -> Response:
    data = json.dumps(body).encode()
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status.value, status.phrase, headers, data)

"""The web app: pages rendered on the server, static files, and the browser's WebSocket.

Routes (docs/web.md):

- ``/`` the lobby; ``/games`` running and finished games; ``/games/<uid>`` one game,
  live while it runs, a replay once it is stored; ``/games/<uid>.gcg`` its GCG;
- ``/cmpn402`` the contest console (see :mod:`meeple.web.console`);
- ``/ratings``, ``/players/<name>`` (:mod:`meeple.web.ratings`) and ``/account``
  (reserved names, :mod:`meeple.web.accounts`);
- ``/ws`` the browser protocol (:mod:`meeple.protocols.web`), fed by the server's
  one :class:`~meeple.server.feed.Feed`;
- ``/static/...`` the front end: CSS and ES modules shipped in this package.

Every page works without JavaScript; the scripts only add live updates and keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from meeple.protocols import web as proto
from meeple.server.feed import Feed, Subscription, game_topic
from meeple.server.lobby import LOBBY_TOPIC, Lobby, server_lobby
from meeple.server.store import Store
from meeple.web import accounts, replays
from meeple.web import console as console_pages
from meeple.web import ratings as ratings_pages
from meeple.web.boards import spectrangle_geometry
from meeple.web.seat import WebSeat

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = ["LISTENER_INFO", "Hub", "WebContext", "create_app"]

logger = logging.getLogger(__name__)

HERE = Path(__file__).parent
CONSOLE_TOPIC = "console"

# What the lobby says about each listener: the game, the protocol, how to connect.
LISTENER_INFO: dict[str, tuple[str, str, str]] = {
    "twente": (
        "Scrabble",
        "Twente v2 (TCP)",
        "meeple play scrabble --protocol twente --port {port}",
    ),
    "clarkson": (
        "Scrabble",
        "Clarkson RFC (TCP lines)",
        "meeple play scrabble --protocol clarkson --port {port}",
    ),
    "cmpn402": (
        "Scrabble contest",
        "CMPN402 (WebSocket)",
        "meeple play scrabble --protocol cmpn402 --port {port}",
    ),
    "santorini": ("Santorini", "AM27 (TCP JSON)", "meeple play santorini --port {port}"),
    "spectrangle": (
        "Spectrangle",
        "Spectrangle 1.4 (TCP lines)",
        "meeple play spectrangle --port {port}",
    ),
    "web": ("all three", "meeple-web/1 (HTTP, WebSocket)", "open http://{host}:{port}/"),
}


class WebContext:
    """What the pages read: the lobby, its feed, the store, the listeners, the console."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.lobby: Lobby = server_lobby(services)
        self.feed: Feed = self.lobby.feed
        self._console_unsubscribe: Callable[[], None] | None = None

    @property
    def store(self) -> Store:
        services = self.services
        store: Store = services.resource("store", lambda: Store(services.config.database))
        return store

    def listeners(self) -> list[dict[str, Any]]:
        host = self.services.config.host
        rows = []
        for name, port in sorted(self.services.listening.items()):
            game, protocol, how = LISTENER_INFO.get(name, ("?", name, ""))
            rows.append(
                {
                    "name": name,
                    "game": game,
                    "protocol": protocol,
                    "address": f"{host}:{port}",
                    "how": how.format(host=host, port=port),
                }
            )
        return rows

    def console(self) -> Any | None:
        """The CMPN402 console when that listener runs; its changes go to the feed."""
        console = self.services.get("cmpn402.console")
        if console is not None and self._console_unsubscribe is None:

            def changed() -> None:
                self.feed.publish(CONSOLE_TOPIC, lambda: console_pages.public_snapshot(console))

            self._console_unsubscribe = console.subscribe(changed)
            changed()
        return console

    def recent_games(self, limit: int = 20) -> list[dict[str, Any]]:
        return [replays.summary(r) for r in self.store.games(limit=limit)]


class Hub:
    """The open WebSockets, so that shutting down can close them (their feeds end)."""

    def __init__(self) -> None:
        self.connections: set[WebConnection] = set()
        self.closing = False

    def close(self) -> None:
        self.closing = True
        for conn in list(self.connections):
            conn.stop()


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = lambda t: datetime.datetime.fromtimestamp(t, datetime.UTC).strftime(
        "%Y-%m-%d %H:%M UTC"
    )
    env.globals["geometry"] = spectrangle_geometry()
    # For <script type="application/json">: no "</" can end the element early.
    env.filters["json_script"] = lambda v: markupsafe.Markup(
        json.dumps(v, separators=(",", ":")).replace("<", "\\u003c")
    )
    return env


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    env: jinja2.Environment = request.app.state.templates
    html = env.get_template(name).render(request=request, **context)
    return HTMLResponse(html, status_code=status)


# --- pages ------------------------------------------------------------------------------


async def lobby_page(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    return render(
        request,
        "lobby.html",
        listeners=ctx.listeners(),
        lobby=ctx.lobby.snapshot(),
        recent=ctx.recent_games(),
    )


async def play_page(request: Request) -> Response:
    """Sit at a table and play (issue 13); the page talks meeple-web/1 (web-play.md)."""
    return render(request, "play.html")


async def games_page(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    return render(
        request, "games.html", lobby=ctx.lobby.snapshot(), recent=ctx.recent_games(limit=200)
    )


async def game_page(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    uid = request.path_params["uid"]
    room = ctx.lobby.room_by_uid(uid)
    last = ctx.feed.last(game_topic(uid))
    if room is not None and last is not None:
        return render(request, "live.html", uid=uid, snapshot=last.data, seq=last.seq)
    record = replays.find(ctx.store, uid)
    if record is None:
        return render(request, "missing.html", status=404, uid=uid)
    replay = replays.build(record)
    step = _int(request.query_params.get("step"), default=len(replay["steps"]) - 1)
    step = max(0, min(step, len(replay["steps"]) - 1)) if replay["steps"] else 0
    return render(request, "replay.html", uid=uid, replay=replay, step=step)


async def gcg_download(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    uid = request.path_params["uid"]
    record = replays.find(ctx.store, uid)
    if record is None or record.game != "scrabble":
        return PlainTextResponse("no Scrabble game with that id\n", status_code=404)
    return PlainTextResponse(
        record.record,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="meeple-{uid}.gcg"'},
    )


def _int(text: str | None, *, default: int) -> int:
    if text is None or not text.lstrip("-").isdigit() or len(text) > 9:
        return default
    return int(text)


# --- the WebSocket ----------------------------------------------------------------------


def _wire_topic(topic: str) -> tuple[str, str | None]:
    if topic.startswith("game:"):
        return "game", topic.removeprefix("game:")
    return topic, None


def _feed_topic(topic: str, uid: str | None) -> str:
    return game_topic(uid) if topic == "game" and uid is not None else topic


class WebConnection:
    """One browser's WebSocket: a protocol session, a feed subscription, one writer."""

    def __init__(self, websocket: WebSocket, ctx: WebContext, max_message_size: int) -> None:
        self.websocket = websocket
        self.ctx = ctx
        self.session = proto.ServerSession(max_message_size=max_message_size)
        self.subscription: Subscription = ctx.feed.subscribe()
        # The browser's player (issue 13): lobby tables and play; see web/seat.py.
        self.seat = WebSeat(
            ctx.services,
            self.session,
            may_use=lambda name: accounts.may_use(name, accounts.session_of(websocket)),
        )
        self._send_lock = asyncio.Lock()
        self._stopped = asyncio.Event()

    def stop(self) -> None:
        self._stopped.set()
        self.subscription.close()

    async def send(self, message: proto.ServerMessage) -> None:
        text = self.session.send(message)
        async with self._send_lock:
            await self.websocket.send_text(text)

    async def run(self) -> None:
        reader = asyncio.create_task(self._read())
        writer = asyncio.create_task(self._write())
        seat_writer = asyncio.create_task(self._write_seat())
        stopped = asyncio.create_task(self._stopped.wait())
        tasks = (reader, writer, seat_writer, stopped)
        try:
            await asyncio.wait(set(tasks), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(BaseException):
                    await task
            self.subscription.close()
            self.session.close()
            self.seat.connection_lost()

    async def _read(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            request = self.session.receive(data)
            for reply in request.replies:
                await self.send(reply)
            if isinstance(request.message, proto.Subscribe):
                await self._subscribe(request.message)
            elif isinstance(request.message, proto.Unsubscribe):
                m = request.message
                self.subscription.remove(_feed_topic(m.topic, m.uid))
            elif request.message is not None:
                self.seat.handle(request.message)

    async def _write_seat(self) -> None:
        """Send what the browser's seat has for it (its views, refusals, seating)."""
        while True:
            await self.seat.ready.wait()
            for message in self.seat.take():
                await self.send(message)

    async def _subscribe(self, message: proto.Subscribe) -> None:
        topic = _feed_topic(message.topic, message.uid)
        if message.topic == "game":
            uid = message.uid or ""
            if self.ctx.lobby.room_by_uid(uid) is None and self.ctx.feed.last(topic) is None:
                await self.send(self.session.not_found(message))
                return
        elif message.topic == "console":
            self.ctx.console()
        elif message.topic == "lobby" and self.ctx.feed.last(LOBBY_TOPIC) is None:
            self.ctx.lobby.publish()
        self.subscription.add(topic)

    async def _write(self) -> None:
        while True:
            try:
                item = await self.subscription.get()
            except EOFError:
                return
            topic, uid = _wire_topic(item.topic)
            if (topic, uid) not in self.session.subscriptions:
                continue
            await self.send(proto.Snapshot(topic, uid, item.seq, item.json()))


async def websocket_endpoint(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    if hub.closing:
        await websocket.close(code=1001)
        return
    await websocket.accept()
    conn = WebConnection(websocket, websocket.app.state.ctx, websocket.app.state.max_message_size)
    hub.connections.add(conn)
    try:
        await conn.run()
    except WebSocketDisconnect:
        pass
    finally:
        hub.connections.discard(conn)
        with contextlib.suppress(Exception):
            await websocket.close(code=1001 if hub.closing else 1000)


def create_app(services: Services, *, max_message_size: int | None = None) -> Starlette:
    """The ASGI app for ``services`` (the listener serves it; tests call it directly)."""
    ctx = WebContext(services)
    routes = [
        Route("/", lobby_page),
        Route("/play", play_page),
        Route("/games", games_page),
        Route("/games/{uid:str}.gcg", gcg_download),
        Route("/games/{uid:str}", game_page),
        *console_pages.routes(),
        *ratings_pages.routes(),
        *accounts.routes(),
        WebSocketRoute("/ws", websocket_endpoint),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.ctx = ctx
    app.state.hub = Hub()
    app.state.templates = _templates()
    app.state.console_sessions = console_pages.Sessions()
    app.state.accounts = accounts.Accounts(lambda: ctx.store, services.clock)
    app.state.max_message_size = max_message_size or proto.DEFAULT_MAX_MESSAGE_SIZE
    return app

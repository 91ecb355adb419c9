"""An edge's web port: the pages a player needs, the browser's WebSocket, ``/api/cluster``.

The browser speaks the web protocol (docs/protocols/web.md) as with ``meeple serve``, and
its seat is ``meeple serve``'s own :class:`~meeple.web.seat.WebSeat`: what it sees as its
lobby is the edge's :class:`~meeple.node.edge.EdgeLobby` and a room it plays in a
:class:`~meeple.node.edge.RemoteRoom`, exactly as a Twente connection on the same edge
(one mechanism: the seat's calls go to the lobby's leader in order, its commands to the
room's owner numbered, its events come on its seat subject). What differs is where a
view is built: the room's owner builds the seat's whole view (its own rack only) and
sends it with each event (:attr:`meeple.node.wire.Delivery.view`).

Served here:

- ``/`` the lobby (open tables from the edge's copy of the leader's, running rooms from
  the nodes' heartbeats, the recent games), ``/play`` (sit, create a table, play,
  rejoin), ``/games/<uid>`` a running game, live (its spectator view over the bus), or
  a finished one's replay;
- the pages that read the database, as ``meeple serve``'s own (the same handlers and
  templates): ``/games`` (running and recent games), a finished game's replay
  (``/games/<uid>``, ``/games/n/<number>``, ``/games/<uid>.gcg``), ``/ratings`` and
  ``/players/<name>``. Their data comes from any ``store`` node over the bus
  (:class:`meeple.node.store.BusRecords`: finished records and ratings only); with no
  store node answering within ``store_wait`` seconds
  (:class:`~meeple.server.config.ClusterConfig`) such a page answers 503 (the site's
  "unavailable" page) and the edge goes on;
- ``/ws``: the ``lobby`` topic (the same snapshot as ``/``, published when the edge hears
  a table change and every ``lobby_refresh`` seconds while someone watches), the
  ``game`` topic of a running room (:class:`meeple.node.views.ViewRelay`: each edge hears
  a room once for all its spectators), and the play messages;
- ``/api/cluster`` and ``/static``.

- the spectators' chat of a running game (issue 34.5): a line from a watcher on any edge
  reaches the game's watchers on every edge (:class:`meeple.node.chat.WatchChatRelay`,
  ``<ns>.watchchat.<uid>``), never its players' seats;
- ``/games/<uid>/history.json``: a running game's steps so far, asked of its room's
  owner (:class:`meeple.node.wire.History`: spectator views only, as ``meeple serve``'s).

As in ``meeple serve`` (issue 32.6): the web's "add a bot" (and the lobby's one-click
"Play X now"), a lobby call the leader answers by seating a server bot that plays on the
room's rooms node (:mod:`meeple.node.lobby`, :class:`meeple.node.rooms.RoomBots`); the
Scrabble ``preview``, scored here from the seat's view with the table's word list, which
the edge loads as ``meeple serve`` does; a finished game's move analysis
(:meth:`meeple.web.app.WebContext.analysis`, with the same word lists).

Accounts (``/account``: reserve, sign in, sign out) as ``meeple serve``'s, from a store
node (:mod:`meeple.node.accounts`): a browser's seat and its spectators' chat check
reserved names against the browser's session there, refused when no store node answers.

The CMPN402 contest's console, ``/cmpn402`` and the ``console`` topic, is served when
the edge's CMPN402 listener runs a contest (:mod:`meeple.node.contest`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from meeple.bus.base import BusError, NoResponder
from meeple.node import wire
from meeple.node.contest import cluster_contest
from meeple.protocols import web as proto
from meeple.protocols.web.errors import ErrorCode
from meeple.server.feed import Feed, game_topic
from meeple.server.lobby.tables import LOBBY_TOPIC, TableInfo
from meeple.server.ops import ops_routes
from meeple.server.store.database import StoreUnavailable
from meeple.web.accounts import COOKIE
from meeple.web.app import CONSOLE_TOPIC, WebConnection, WebContext
from meeple.web.fanout import Fanout
from meeple.web.seat import WebSeat

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.websockets import WebSocket

    from meeple.node.accounts import BusAccounts
    from meeple.node.chat import WatchChatRelay
    from meeple.node.edge import EdgeLobby
    from meeple.node.status import ClusterView
    from meeple.node.views import ViewRelay
    from meeple.server.app import Services
    from meeple.web.records import Records

__all__ = ["EdgeConnection", "edge_web_app"]

NOT_ON_EDGES = "this cluster edge does not serve that topic (it needs the database)"
NO_ACCOUNTS = "names cannot be checked against the accounts now (no store node answers); try again"


def _table_json(info: TableInfo) -> dict[str, Any]:
    """An open table as the lobby's snapshot shows it (meeple.server.lobby.tables's shape)."""
    return {
        "id": info.id,
        "game": info.game,
        "players": info.size,
        "variant": info.variant,
        "start": info.start_rule.value,
        "settings": dict(info.settings),
        "waiting": [{"name": s.name, "protocol": s.protocol, "ready": s.ready} for s in info.seats],
    }


class EdgeTables:
    """What the pages read as ``ctx.lobby``: the snapshot of ``meeple serve``'s lobby,
    from this edge's copy of the open tables and the nodes' heartbeats."""

    def __init__(
        self,
        edge: EdgeLobby,
        view: ClusterView,
        trouble: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.trouble = trouble  # the banner's words while the store fails (None: fine)
        self.edge = edge
        self.view = view

    def snapshot(self) -> dict[str, Any]:
        tables = [_table_json(t) for t in self.edge.tables()]
        rooms = [
            {
                "uid": r["uid"],
                "game": r["game"],
                "players": r.get("players", []),
                "protocols": r.get("protocols", []),
                "scores": None,
                "turn": None,
            }
            for r in self.view.rooms()
        ]
        return {
            "queues": [t for t in tables if t["waiting"]],
            "tables": tables,
            "rooms": rooms,
            "store": self.trouble(),
        }


class _EdgeContext(WebContext):
    """What an edge's pages and sockets read: the services, the relayed feed, the
    tables, the store nodes' records over the bus; a contest's console if one runs."""

    def __init__(
        self, services: Services, feed: Feed, tables: EdgeTables, records: Records
    ) -> None:
        self.services = services
        self.feed = feed
        self.tables = tables
        self.records = records
        self.lobby = tables  # type: ignore[assignment]  # what the pages read of it
        # A finished game's analysis, as meeple serve's (WebContext.analysis): with the
        # word lists this edge loads (the Scrabble preview's too).
        self._analyses: dict[str, list[dict[str, Any] | None]] = {}
        self._refresher: asyncio.Task[None] | None = None
        # The CMPN402 contest's console (meeple.node.contest.RemoteConsole), when this
        # edge's CMPN402 listener runs a contest: WebContext.console() finds it.
        self._console_unsubscribe: Callable[[], None] | None = None

    def store_trouble(self) -> str | None:
        return self.tables.trouble()

    def publish_lobby(self) -> None:
        """A fresh lobby snapshot for its watchers (none built while nobody watches)."""
        if self.feed.subscribers(LOBBY_TOPIC) == 0:
            self.feed.forget(LOBBY_TOPIC)
            return
        self.feed.publish(LOBBY_TOPIC, self.tables.snapshot)
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.ensure_future(self._refresh())

    async def _refresh(self) -> None:
        while self.feed.subscribers(LOBBY_TOPIC) > 0:
            await asyncio.sleep(self.services.config.cluster.lobby_refresh)
            self.feed.publish(LOBBY_TOPIC, self.tables.snapshot)  # dropped if unchanged

    def close(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()


class EdgeConnection(WebConnection):
    """One browser's WebSocket on an edge: spectating through ``relay``, playing through
    the edge's lobby (module doc)."""

    def __init__(
        self,
        websocket: WebSocket,
        ctx: _EdgeContext,
        fanout: Fanout,
        size: int,
        relay: ViewRelay,
        accounts: BusAccounts,
        chat: WatchChatRelay,
    ) -> None:
        super().__init__(websocket, ctx, fanout, size)
        self.edge_ctx = ctx
        self.relay = relay
        self.accounts = accounts
        # The name this browser's last create or sit asked for: may it use it (one entry:
        # the seat asks right after, in the same message's turn).
        self._allowed: dict[str, bool] = {}
        self.chat = chat

    def _say_to_spectators(self, uid: str, sender: str, text: str) -> None:
        # This edge's watchers now, the other edges' over the bus (issue 34.5).
        self.chat.say(uid, sender, text)

    async def _subscribe(self, message: proto.Subscribe) -> None:
        if message.topic == "lobby":
            topic = LOBBY_TOPIC
        elif message.topic == "console" and self.ctx.console() is not None:
            topic = CONSOLE_TOPIC  # a contest's console (meeple.node.contest)
        elif message.topic == "game" and message.uid is not None:
            if not await self.relay.exists(message.uid):
                await self.send(self.session.not_found(message))
                return
            topic = game_topic(message.uid)
        else:
            self.session.not_found(message)  # forgets the subscription
            await self.send(proto.Error(ErrorCode.REFUSED, NOT_ON_EDGES))
            return
        if self._sink is None:
            raise RuntimeError("the edge's web needs its listener's FrameProtocol")
        if self.spectator is None:
            self.spectator = self.fanout.spectator(self._sink)
        self.fanout.watch(self.spectator, topic, delta=message.delta)
        if topic == LOBBY_TOPIC and self.ctx.feed.last(LOBBY_TOPIC) is None:
            self.edge_ctx.publish_lobby()  # stale while nobody watched: build it now

    async def _may_use(self, name: str) -> bool:
        """``meeple serve``'s check, asked of a store node; False when none answers
        (fail closed: :mod:`meeple.node.accounts`)."""
        try:
            return await self.accounts.may_use(name, self.websocket.cookies.get(COOKIE))
        except StoreUnavailable:
            return False

    async def _play(self, message: proto.ClientMessage) -> None:
        """As ``meeple serve``'s, with the name a ``create`` or ``sit`` takes checked
        first against the accounts (a store node's answer: the seat's check is sync)."""
        if isinstance(message, (proto.CreateTable, proto.Sit)):
            key = message.name.casefold()
            try:
                allowed = await self.accounts.may_use(
                    message.name, self.websocket.cookies.get(COOKIE)
                )
            except StoreUnavailable:
                await self.send(proto.Error(ErrorCode.REFUSED, NO_ACCOUNTS))
                return
            self._allowed.clear()
            self._allowed[key] = allowed
        await super()._play(message)

    def _player(self) -> WebSeat:
        if self.seat is None:
            allowed = self._allowed
            self.seat = WebSeat(
                self.ctx.services,
                self.session,
                may_use=lambda name: allowed.get(name.casefold(), False),
            )
            self._seat_writer = asyncio.create_task(self._write_seat(self.seat))
        return self.seat


def edge_web_app(
    services: Services,
    view: ClusterView,
    relay: ViewRelay,
    edge: EdgeLobby,
    records: Records,
    accounts: BusAccounts,
    chat: WatchChatRelay,
    trouble: Callable[[], str | None] = lambda: None,
) -> Starlette:
    """The edge's ASGI app; serve it with :class:`meeple.web.listener.WebListener`. Its
    WebSockets pass the same gate as ``meeple serve``'s (origin, connections per address:
    :func:`meeple.web.app.websocket_endpoint`), its pages get the same headers. ``chat``:
    the spectators' chat across the edges (its watch follows the fanout's, as the views'
    relay does). ``trouble``: what every page's banner says while this process's store
    fails (a one-process node's write-behind, :mod:`meeple.node.writebehind`)."""
    from starlette.middleware import Middleware
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles

    from meeple.node.accounts import edge_routes as edge_account_routes
    from meeple.server.edge.attempts import AttemptLimiter
    from meeple.server.edge.churn import server_churn
    from meeple.server.edge.hosts import HostAllowlist
    from meeple.server.edge.limits import AddressLimiter
    from meeple.server.lobby.bots import LEVELS as BOT_LEVELS
    from meeple.web import console as console_pages
    from meeple.web import guide
    from meeple.web import ratings as ratings_pages
    from meeple.web.accounts import ATTEMPTS, WINDOW
    from meeple.web.app import (
        HERE,
        Hub,
        SecurityHeaders,
        _WebApp,
        game_by_number,
        games_page,
        gcg_download,
        lobby_page,
        replay_page,
        store_timeout,
        websocket_endpoint,
    )
    from meeple.web.templating import environment, render

    tables = EdgeTables(edge, view, trouble)
    ctx = _EdgeContext(services, relay.feed, tables, records)
    edge.on_change.append(lambda _event: ctx.publish_lobby())

    def first(topic: str) -> None:
        relay.watch(topic)
        chat.watch(topic)

    def last(topic: str) -> None:
        relay.unwatch(topic)
        chat.unwatch(topic)

    fanout = Fanout(relay.feed, on_first=first, on_last=last)
    chat.say_here = fanout.say
    max_size = services.config.web.max_message_size

    async def cluster(request: Request) -> Response:
        return JSONResponse(view.snapshot())

    async def play_page(request: Request) -> Response:
        try:
            session = await accounts.session(request.cookies.get(COOKIE))
        except StoreUnavailable:
            session = None  # the page without the name filled in; the seat asks again
        return render(
            request,
            "play.html",
            signed_in=None if session is None else session.name,
            lexicon=ctx.lexicon(),
            lexicons=ctx.lexicons(),
            invited=request.query_params.get("table"),
            bot_levels=BOT_LEVELS,
        )

    async def game_page(request: Request) -> Response:
        uid = request.path_params["uid"]
        if await relay.exists(uid):
            last = relay.feed.last(game_topic(uid))
            if last is not None and last.data.get("view") is not None:
                snapshot = last.data
                return render(
                    request,
                    "live.html",
                    uid=uid,
                    snapshot=snapshot,
                    seq=last.seq,
                    lexicon=(snapshot.get("view") or {}).get("lexicon") or ctx.lexicon(),
                    clocks=snapshot.get("clocks"),
                )
        # A finished game's replay, from a store node (404 if it has none).
        return await replay_page(request, ctx, uid)

    async def history_json(request: Request) -> Response:
        """A running game's steps so far (``meeple serve``'s ``history.json``), asked of
        the room's owner (:class:`meeple.node.wire.History`: spectator views only)."""
        uid = request.path_params["uid"]
        try:
            answer = await relay.bus.request(
                relay.ns.room_command(uid),
                wire.dumps(wire.History()),
                timeout=services.config.cluster.history_wait,
            )
        except (ValueError, NoResponder):  # no such subject, or no owner: no running room
            steps = None
        except BusError:
            return JSONResponse({"error": "the game's node did not answer"}, status_code=503)
        else:
            try:
                steps = wire.loads(answer, list[dict[str, Any]] | None)
            except wire.WireError:
                return JSONResponse({"error": "the game's node did not answer"}, status_code=503)
        if steps is None:
            return JSONResponse({"error": "no running game with that uid"}, status_code=404)
        return JSONResponse({"uid": uid, "steps": steps})

    def connection(websocket: WebSocket) -> EdgeConnection:
        return EdgeConnection(websocket, ctx, fanout, max_size, relay, accounts, chat)

    app = _WebApp(
        routes=[
            Route("/", lobby_page),
            Route("/play", play_page),
            Route("/check", guide.check_page),
            Route("/games", games_page),
            Route("/games/n/{number:int}", game_by_number),
            Route("/games/{uid:str}.gcg", gcg_download),
            Route("/games/{uid:str}/history.json", history_json),
            Route("/games/{uid:str}", game_page),
            *ratings_pages.routes(),
            *edge_account_routes(accounts, AttemptLimiter(services.clock, ATTEMPTS, WINDOW)),
            *console_pages.routes(),  # a CMPN402 contest's console, when one runs
            Route("/api/cluster", cluster),
            *ops_routes(services),
            WebSocketRoute("/ws", websocket_endpoint),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={StoreUnavailable: store_timeout},
        middleware=[Middleware(SecurityHeaders)],
    )
    app.state.ctx = ctx
    app.state.console_sessions = console_pages.Sessions()
    app.state.templates = environment()
    # The nav leaves out the CMPN402 console while no contest runs on the edge.
    app.state.templates.globals["cluster_edge"] = True
    app.state.templates.globals["contest_console"] = (
        cluster_contest(services.config.cmpn402) is not None
    )
    app.state.hub = Hub(fanout)
    app.state.connection = connection
    app.state.origins = frozenset(services.config.web.origins)
    app.state.hosts = HostAllowlist(services.config.host, services.config.web.hosts)
    app.state.churn = server_churn(services)
    app.state.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
    return app

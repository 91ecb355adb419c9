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
import itertools
import logging
import os
import socket
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from meeple.ai import analysis
from meeple.games import records
from meeple.protocols import web as proto
from meeple.server.edge.churn import ChurnLog, server_churn
from meeple.server.edge.hosts import HostAllowlist
from meeple.server.edge.limits import AddressLimiter
from meeple.server.feed import Feed, game_topic
from meeple.server.lobby.bots import LEVELS as BOT_LEVELS
from meeple.server.lobby.cmpn402_console import Console
from meeple.server.lobby.names import server_reservations
from meeple.server.lobby.tables import LOBBY_TOPIC, Lobby, Origin, server_lobby
from meeple.server.ops import OPS_PATHS, ops_routes
from meeple.server.store.database import OUTCOMES, GameRecord, Store, StoreUnavailable
from meeple.server.store.journal import server_journal, server_store
from meeple.web import accounts, guide, replays
from meeple.web import console as console_pages
from meeple.web import ratings as ratings_pages
from meeple.web.fanout import Fanout, Spectator, frame_sink, text_frame
from meeple.web.records import MAX_KEY, LocalRecords, Records
from meeple.web.seat import WebSeat, lexicon_name
from meeple.web.templating import environment, render

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "LISTENER_INFO",
    "SECURITY_HEADERS",
    "Hub",
    "SecurityHeaders",
    "WebContext",
    "allowed_origin",
    "create_app",
    "render",
]

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
    """What the pages read: the lobby, its feed, the store (its finished games and
    ratings through :attr:`records`), the listeners, the console."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.lobby: Lobby = server_lobby(services)
        self.feed: Feed = self.lobby.feed
        self._console_unsubscribe: Callable[[], None] | None = None
        self._analyses: dict[str, list[dict[str, Any] | None]] = {}
        # ``meeple serve`` is one node with every role, named after its host.
        self.node_name = socket.gethostname()
        # What the replay, games, ratings and player pages read (meeple.web.records).
        self.records: Records = LocalRecords(lambda: self.store)

    @property
    def store(self) -> Store:
        services = self.services
        store: Store = server_store(services)
        return store

    def store_trouble(self) -> str | None:
        """The banner every page shows while the store fails to take writes."""
        return server_journal(self.services).trouble()

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

    def console(self) -> Console | None:
        """The CMPN402 console when that listener runs; its changes go to the feed."""
        console = self.services.console
        if console is not None and self._console_unsubscribe is None:

            def changed() -> None:
                self.feed.publish(CONSOLE_TOPIC, lambda: console_pages.public_snapshot(console))

            self._console_unsubscribe = console.subscribe(changed)
            changed()
        return console

    def lexicon(self) -> str:
        """The name of the lexicon the server's Scrabble tables check words with."""
        loaded = getattr(self.services.lexicon, "name", None)
        return str(loaded or lexicon_name(self.services.config.lexicon))

    def lexicons(self) -> list[str]:
        """The word lists a browser's Scrabble table may choose, the default first (the
        others as configured: ``table_lexicons``; docs/web.md, "Word lists")."""
        default = self.lexicon()
        loaded = self.services.table_lexicons
        more = (
            list(loaded)
            if loaded is not None
            else [lexicon_name(n) for n in self.services.config.table_lexicons]
        )
        return [default, *(n for n in more if n != default)]

    async def analysis(self, record: GameRecord) -> list[dict[str, Any] | None] | None:
        """A finished game's moves against the engine's best (issues 24, 34): Scrabble's
        when the server has the lexicon it was played with, Spectrangle's and
        Santorini's always; kept in the store beside the record (by uid and
        :data:`meeple.ai.analysis.VERSION`) and in memory for the last games asked.
        Computed in a worker thread: a 25-move Scrabble game is ~0.2 s, a 40-turn
        Santorini game well under a second (docs/benchmarks.md, "Replay analysis")."""
        data = record.data
        lexicon = self.services.lexicon
        if data is None or record.game not in ("scrabble", "spectrangle", "santorini"):
            return None
        if record.game == "scrabble" and lexicon is None:
            return None
        if record.game == "scrabble" and data.get("lexicon") != getattr(lexicon, "name", None):
            # A table's own word list, if the server has it loaded.
            wanted = data.get("lexicon")
            tables = self.services.table_lexicons or {}
            lexicon = tables.get(wanted) if isinstance(wanted, str) else None
            if lexicon is None:
                return None
        key = str(data.get("uid") or record.id)
        if key in self._analyses:
            return self._analyses[key]
        # Kept beside the record (issue 34): computed once, read back after a restart,
        # computed again by a newer analysis (its version).
        uid = data.get("uid")
        kept: dict[str, Any] | None = None
        if isinstance(uid, str):
            try:
                kept = await self.records.analysis(uid, analysis.VERSION)
            except StoreUnavailable as e:
                logger.warning("analysis of %s not read: %s", uid, e)
        steps = kept.get("steps") if kept is not None else None
        found: list[dict[str, Any] | None] | None = steps if isinstance(steps, list) else None
        if found is None:
            try:
                found = await asyncio.to_thread(analysis.analyse_game, data, lexicon)
            except Exception:  # a record that does not replay has no analysis
                logger.exception("analysis of %s failed", key)
                return None
            if found is None:
                return None
            if isinstance(uid, str):
                try:
                    await self.records.keep_analysis(uid, analysis.VERSION, {"steps": found})
                except StoreUnavailable as e:
                    logger.warning("analysis of %s not kept: %s", uid, e)
        self._analyses[key] = found
        while len(self._analyses) > 64:
            self._analyses.pop(next(iter(self._analyses)))
        return found

    async def recent_games(self, limit: int = 20) -> list[dict[str, Any]]:
        """The last stored games; none while the database does not answer (the page
        still shows the live tables, and the banner says what is wrong)."""
        try:
            games = await self.records.games(limit=limit)
        except Exception as e:
            logger.warning("recent games not read: %s", e)
            return []
        return [replays.summary(r) for r in games]


class Hub:
    """The open WebSockets, so that shutting down can close them (and the fan-out)."""

    def __init__(self, fanout: Fanout) -> None:
        self.connections: set[WebConnection] = set()
        self.fanout = fanout
        self.closing = False

    def close(self) -> None:
        self.closing = True
        for conn in list(self.connections):
            conn.stop()
        self.fanout.close()


# --- pages ------------------------------------------------------------------------------


async def store_timeout(request: Request, exc: Exception) -> Response:
    """A page whose read of the store failed or got no answer: 503 (the banner says
    when writes fail too); the cause is in the server's log."""
    logger.warning("%s: %s", request.url.path, exc, exc_info=exc.__cause__)
    return render(request, "unavailable.html", status=503)


async def cluster_api(request: Request) -> Response:
    """``GET /api/cluster`` (docs/cluster.md): the nodes with their roles, the lobby's
    leader and each running room with its owner. ``meeple serve`` is one node with every
    role; a cluster's edges answer the same shape for all its nodes."""
    ctx: WebContext = request.app.state.ctx
    node = ctx.node_name
    rooms = [
        {"uid": room.uid, "game": room.game_name, "owner": node}
        for room in ctx.lobby.rooms
        if not room.finished
    ]
    console = ctx.console()
    if console is not None:
        rooms += [
            {"uid": uid, "game": "scrabble", "owner": node} for uid in console.running_games()
        ]
    body = {
        "nodes": [
            {
                "name": node,
                "roles": ["edge", "rooms", "lobby", "store"],
                "pid": os.getpid(),
                "address": [row["address"] for row in ctx.listeners()],
            }
        ],
        "lobby_leader": node,
        "rooms": rooms,
    }
    return JSONResponse(body)


# The lobby's "Play a person" grid (issue 34): (label, game/variant, [(clock, words)]);
# the clocks are the play form's (docs/web.md, "Clocks"), "" for none.
SEEKS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("Scrabble", "scrabble/twente", (("", "no clock"), ("25+0", "25 min"), ("5+0", "5 min"))),
    ("Santorini", "santorini/standard", (("", "no clock"), ("10+5", "10+5"), ("2+1", "2+1"))),
    ("Santorini, gods", "santorini/gods", (("", "no clock"), ("5+3", "5+3"))),
    ("Spectrangle", "spectrangle/standard", (("", "no clock"), ("5+3", "5+3"))),
)


async def lobby_page(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    console = ctx.console()
    return render(
        request,
        "lobby.html",
        contest=None if console is None else console_pages.public_snapshot(console),
        listeners=ctx.listeners(),
        lobby=ctx.lobby.snapshot(),
        recent=await ctx.recent_games(),
        lexicon=ctx.lexicon(),
        seeks=SEEKS,
        bot_levels=BOT_LEVELS,
    )


async def play_page(request: Request) -> Response:
    """Sit at a table and play (issue 13).

    The page talks meeple-web/1 (docs/protocols/web.md, "Playing"). A browser signed in
    as a reserved name (``/account``) finds that name filled in."""
    ctx: WebContext = request.app.state.ctx
    return render(
        request,
        "play.html",
        signed_in=accounts.session_of(request).name,
        lexicon=ctx.lexicon(),
        lexicons=ctx.lexicons(),
        invited=request.query_params.get("table"),
        bot_levels=BOT_LEVELS,
    )


# Finished games a page of /games lists; "Older games" goes on from the last one.
GAMES_PAGE = 50


async def games_page(request: Request) -> Response:
    """The tables and games running, then the finished games newest first, filtered by
    player, game, result and the days they ended on (issue 34:
    ``?player=ann&game=scrabble&result=won&from=2026-01-01&to=2026-01-31``; days in UTC,
    both inclusive), ``GAMES_PAGE`` a page, ``?before=N`` for the next. A result or a
    day the form could not have sent is a 400 with the form's error; other bad
    parameters are ignored."""
    ctx: WebContext = request.app.state.ctx
    params = request.query_params
    player = params.get("player", "").strip()[:MAX_KEY] or None
    game = params.get("game") if params.get("game") in records.GAMES else None
    cursor = _int(params.get("before"), default=0)
    before = cursor if cursor > 0 else None
    errors: list[str] = []
    result = params.get("result", "").strip() or None
    if result is not None and result not in OUTCOMES:
        errors.append(f"Result: one of {', '.join(OUTCOMES)}.")
        result = None
    days: dict[str, datetime.date | None] = {}
    for key, label in (("from", "From"), ("to", "To")):
        days[key] = _day(params.get(key, ""))
        if days[key] is None and params.get(key, "").strip():
            errors.append(f"{label}: a day as YYYY-MM-DD.")
    start, end = days["from"], days["to"]
    if start is not None and end is not None and start > end:
        errors.append("From: a day on or before To.")
    ended_from = None if start is None else _midnight(start)
    ended_to = None if end is None else _midnight(end) + 86400
    search = {
        "player": player or "",
        "game": game or "",
        "result": result or "",
        "from": "" if start is None else start.isoformat(),
        "to": "" if end is None else end.isoformat(),
        "paged": before is not None,
    }
    found = []
    if not errors:
        try:
            found = await ctx.records.search_games(
                game=game,
                player=player,
                result=result,
                ended_from=ended_from,
                ended_to=ended_to,
                before=before,
                limit=GAMES_PAGE + 1,
            )
        except StoreUnavailable as e:
            logger.warning("finished games not read: %s", e)
    more = len(found) > GAMES_PAGE
    found = found[:GAMES_PAGE]
    older = None
    if more and found:
        query = {**{k: str(v) for k, v in search.items() if k != "paged"}}
        query["before"] = str(found[-1].id)
        older = "/games?" + urllib.parse.urlencode({k: v for k, v in query.items() if v})
    return render(
        request,
        "games.html",
        status=400 if errors else 200,
        lobby=ctx.lobby.snapshot(),
        recent=[replays.summary(r) for r in found],
        search=search,
        errors=errors,
        games=records.GAMES,
        outcomes=OUTCOMES,
        older=older,
    )


def _day(text: str) -> datetime.date | None:
    """A day as the form's date field sends it (YYYY-MM-DD, years 1970 to 9999), else
    None."""
    text = text.strip()
    if len(text) != 10 or not text.isascii():
        return None
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        return None
    return day if day.year >= 1970 else None


def _midnight(day: datetime.date) -> int:
    """The Unix time of ``day``'s start in UTC."""
    return int(datetime.datetime.combine(day, datetime.time(), datetime.UTC).timestamp())


async def game_page(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    uid = request.path_params["uid"]
    room = ctx.lobby.room_by_uid(uid)
    if room is not None:
        # Read between two of the room's commands (one thread): a consistent state.
        last = ctx.feed.last(game_topic(uid))
        snapshot, seq = (last.data, last.seq) if last is not None else (room.snapshot(), 0)
        if snapshot["view"] is not None:
            lexicon = getattr(room, "lexicon_name", None)
            # The clocks as of now (a snapshot's are as of its last move).
            return render(
                request,
                "live.html",
                uid=uid,
                snapshot=snapshot,
                seq=seq,
                lexicon=lexicon,
                clocks=room.clock_view(),
            )
    return await replay_page(request, ctx, uid)


async def replay_page(request: Request, ctx: WebContext, uid: str) -> Response:
    """The replay of the stored game ``uid`` (404 if none), from ``ctx.records``: the
    one page for ``meeple serve`` and a cluster edge."""
    record = await ctx.records.game_by_uid(uid)
    if record is None:
        return render(request, "missing.html", status=404, uid=uid)
    replay = replays.build(record)
    replay["analysis"] = await ctx.analysis(record) if replay["steps"] else None
    step = _int(request.query_params.get("step"), default=len(replay["steps"]) - 1)
    step = max(0, min(step, len(replay["steps"]) - 1)) if replay["steps"] else 0
    return render(request, "replay.html", uid=uid, replay=replay, step=step)


async def game_by_number(request: Request) -> Response:
    """A stored game by its row number: games stored before they had a uid."""
    ctx: WebContext = request.app.state.ctx
    record = await ctx.records.game(request.path_params["number"])
    if record is None:
        return render(request, "missing.html", status=404, uid=str(request.path_params["number"]))
    uid = replays.summary(record)["uid"]
    if uid is not None:
        return RedirectResponse(f"/games/{uid}", status_code=301)
    return render(request, "replay.html", uid=None, replay=replays.build(record), step=0)


async def history_json(request: Request) -> Response:
    """A running game's steps so far with their spectator views (issue 24: the play
    page's history during the game); 404 once it is over (its replay has them)."""
    ctx: WebContext = request.app.state.ctx
    room = ctx.lobby.room_by_uid(request.path_params["uid"])
    steps = None if room is None or room.finished else replays.live_steps(room)
    if room is None or steps is None:
        return JSONResponse({"error": "no running game with that uid"}, status_code=404)
    return JSONResponse({"uid": room.uid, "steps": steps})


async def gcg_download(request: Request) -> Response:
    ctx: WebContext = request.app.state.ctx
    uid = request.path_params["uid"]
    record = await ctx.records.game_by_uid(uid)
    if record is None or record.game != "scrabble":
        return PlainTextResponse("no Scrabble game with that id\n", status_code=404)
    return PlainTextResponse(
        record.record,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="meeple-{uid}.gcg"'},
    )


def _int(text: str | None, *, default: int) -> int:
    """A whole number from a URL, else ``default`` (ASCII digits only: "²" is a digit to
    ``str.isdigit`` but not to ``int``)."""
    if text is None or not text.isascii() or not text.lstrip("-").isdigit() or len(text) > 9:
        return default
    return int(text)


# --- the WebSocket ----------------------------------------------------------------------


_web_ids = itertools.count(1)


def _feed_topic(topic: str, uid: str | None) -> str:
    return game_topic(uid) if topic == "game" and uid is not None else topic


class WebConnection:
    """One browser's WebSocket: a protocol session, its watching, its seat.

    What it watches reaches it through the edge's :class:`~meeple.web.fanout.Fanout`
    (one frame for all spectators of a topic), never through a queue of its own."""

    def __init__(
        self, websocket: WebSocket, ctx: WebContext, fanout: Fanout, max_message_size: int
    ) -> None:
        self.websocket = websocket
        self.ctx = ctx
        self.fanout = fanout
        self.session = proto.ServerSession(max_message_size=max_message_size)
        self._sink = frame_sink(websocket.scope)
        self.spectator: Spectator | None = None  # made on the first subscribe
        # The browser's player (issue 13), made on its first play message (a spectator
        # never has one, nor its writer task): lobby tables and play; see web/seat.py.
        self.seat: WebSeat | None = None
        self._seat_writer: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._reader: asyncio.Task[Any] | None = None
        self._stopped = False

    def stop(self) -> None:
        """Shutting down: end :meth:`run` (the endpoint then closes the socket)."""
        self._stopped = True
        if self._reader is not None:
            self._reader.cancel()

    async def send(self, message: proto.ServerMessage, encoded: str | None = None) -> None:
        text = self.session.send(message, encoded)
        async with self._send_lock:
            # Issue 30.7: never a send after the close (the listener closed the socket for
            # a flood, or the peer went): the connection ends instead.
            if _closing(self.websocket):
                raise WebSocketDisconnect(1006)
            await self.websocket.send_text(text)

    async def run(self) -> None:
        """Read the browser's messages until it goes or :meth:`stop`; then clean up.

        Reads in the connection's own task (no task more per spectator)."""
        task = self._reader = asyncio.current_task()
        try:
            if not self._stopped:
                await self._read()
        except asyncio.CancelledError:
            if not self._stopped or task is None:
                raise
            task.uncancel()  # stop() asked for it: end normally
        finally:
            self._reader = None
            if self._seat_writer is not None:
                self._seat_writer.cancel()
                with contextlib.suppress(BaseException):
                    await self._seat_writer
            if self.spectator is not None:
                self.fanout.leave(self.spectator)
            self.session.close()
            if self.seat is not None:
                self.seat.connection_lost()

    async def _read(self) -> None:
        # The message budget is the listener's (web/listener.py): a message past it never
        # reaches this queue. Here only: let the others run between queued messages.
        per_turn = self.ctx.services.config.limits.messages_per_turn
        turn = 0
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            turn += 1
            if turn >= per_turn:
                turn = 0
                await asyncio.sleep(0)
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
                if self.spectator is not None:
                    self.fanout.unwatch(self.spectator, _feed_topic(m.topic, m.uid))
            elif isinstance(request.message, proto.WatchChat):
                await self._watch_chat(request.message)
            elif request.message is not None:
                await self._play(request.message)

    async def _play(self, message: proto.ClientMessage) -> None:
        """A play message (lobby tables, moves, chat): the browser's seat takes it."""
        seat = self._player()
        await seat.prepare(message)
        seat.handle(message)

    async def _watch_chat(self, m: proto.WatchChat) -> None:
        """A spectators' chat line (issue 34.5; docs/web.md, "Live game"): to everyone
        watching the game (:meth:`_say_to_spectators`), never to its players' seats.
        Refused to a player of the game while it runs, as a player's name, or a name
        reserved by an account."""
        refusal = self.session.watch_chat_refusal(m, self.ctx.services.clock.now())
        if refusal is not None:
            await self.send(refusal)
            return
        topic = game_topic(m.uid)
        last = self.ctx.feed.last(topic)
        data = last.data if last is not None and isinstance(last.data, dict) else {}
        players = [str(p) for p in data.get("players") or ()]
        playing = None if self.seat is None else self.seat.lobby.room_of(self.seat)
        problem = None
        if playing is not None and playing.uid == m.uid and not playing.finished:
            problem = "players do not write to the spectators during their game"
        elif m.name in players:
            problem = f"{m.name} plays this game: pick another name to chat as a spectator"
        elif not await self._may_use(m.name):
            problem = f"the name {m.name} is reserved: sign in as it at /account"
        if problem is not None:
            await self.send(proto.Error(proto.ErrorCode.REFUSED, problem))
            return
        self._say_to_spectators(m.uid, m.name, m.text)

    async def _may_use(self, name: str) -> bool:
        """Whether this browser may use ``name`` (reserved names: web/accounts.py); a
        cluster edge asks a store node (meeple.node.web)."""
        return accounts.may_use(name, accounts.session_of(self.websocket))

    def _say_to_spectators(self, uid: str, sender: str, text: str) -> None:
        """A checked spectators' chat line: to every watcher of game ``uid`` here (a
        cluster edge also tells the other edges': meeple.node.chat.WatchChatRelay)."""
        line = proto.WatchChatLine(uid, sender, text)
        self.fanout.say(game_topic(uid), text_frame(line.encode().encode()))

    def _player(self) -> WebSeat:
        if self.seat is None:
            websocket = self.websocket
            client = websocket.client
            self.seat = WebSeat(
                self.ctx.services,
                self.session,
                may_use=lambda name: accounts.may_use(name, accounts.session_of(websocket)),
                # Tables it opens count against its address and connection (issue 30.7).
                origin=Origin(client.host if client else "unknown", f"web-{next(_web_ids)}"),
            )
            self._seat_writer = asyncio.create_task(self._write_seat(self.seat))
        return self.seat

    async def _write_seat(self, seat: WebSeat) -> None:
        """Send what the browser's seat has for it (its views, refusals, seating)."""
        try:
            while True:
                await seat.ready.wait()
                for message in seat.take():
                    await self.send(message)
        except Exception:
            # The socket is gone (or going): end the connection.
            self.stop()
            raise

    async def _subscribe(self, message: proto.Subscribe) -> None:
        topic = _feed_topic(message.topic, message.uid)
        room = self.ctx.lobby.room_by_uid(message.uid or "")
        if message.topic == "game" and room is None and self.ctx.feed.last(topic) is None:
            await self.send(self.session.not_found(message))
            return
        if self._sink is None:
            raise RuntimeError("the web app needs its listener's FrameProtocol (web/listener.py)")
        if message.topic == "console":
            self.ctx.console()
        if self.spectator is None:
            self.spectator = self.fanout.spectator(self._sink)
        # The edge's one subscription to the topic, then this browser in its list: the
        # newest snapshot comes at once if there is one.
        self.fanout.watch(self.spectator, topic, delta=message.delta)
        if room is not None and self.ctx.feed.last(topic) is None:
            room.publish()  # stale while nobody watched: build it now
        if message.topic == "lobby" and self.ctx.feed.last(LOBBY_TOPIC) is None:
            self.ctx.lobby.publish()  # stale while nobody watched: build it now


def _closing(websocket: WebSocket) -> bool:
    """Whether the socket under ``websocket`` has sent its close or is gone."""
    sink = frame_sink(websocket.scope)
    return bool(getattr(sink, "closing", False))


def allowed_origin(websocket: WebSocket) -> bool:
    """A WebSocket handshake's ``Origin`` is one of the server's hosts (issue 30.7:
    :class:`~meeple.server.edge.hosts.HostAllowlist`, not the ``Host`` the request
    names, which a rebinding page chooses) or one of ``[web] origins``; none at all is a
    client that is no browser. (With ``[web] hosts = ["*"]`` the request's own ``Host``
    is its origin too, as before the allowlist.)"""
    origin = websocket.headers.get("origin")
    if origin is None:
        return True
    allowed: frozenset[str] = websocket.app.state.origins
    if origin in allowed:
        return True
    hosts: HostAllowlist = websocket.app.state.hosts
    if hosts.allows_origin(origin, _bound_port(websocket.scope)):
        return True
    scheme, _, rest = origin.partition("://")
    host = websocket.headers.get("host", "")
    return hosts.anything and scheme in ("http", "https") and bool(host) and rest == host


def _bound_port(scope: Scope) -> int | None:
    """The port the request came in on (the listener's socket), None if unknown."""
    server = scope.get("server")
    if isinstance(server, tuple | list) and len(server) == 2 and isinstance(server[1], int):
        return server[1]
    return None


BAD_HOST = b"this server does not answer to that host name\n"


async def _refuse_host(scope: Scope, receive: Receive, send: Send) -> None:
    """400 to a request for a host not on the allowlist (a WebSocket's handshake gets the
    same answer, as a denial response)."""
    prefix = "websocket." if scope["type"] == "websocket" else ""
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(BAD_HOST)).encode()),
        *SECURITY_HEADERS,
    ]
    if prefix:
        await send({"type": "websocket.http.response.start", "status": 400, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": BAD_HOST})
        return
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": BAD_HOST})


# Issue 22: every page says where its scripts, styles and frames may come from. No inline
# script anywhere (templates load /static/js/*.js; data goes in JSON script elements);
# inline style attributes only (boards.html sets a CSS variable).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


class SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [h for h in SECURITY_HEADERS if h[0] not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def websocket_endpoint(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    # Issue 30.7: opened, closed and refused WebSockets are counted (one line a period,
    # meeple.server.edge.churn), each one logged at DEBUG only.
    churn: ChurnLog = websocket.app.state.churn
    address = websocket.client.host if websocket.client else "unknown"
    if hub.closing:
        churn.refused("web", "server stopping", address)
        await websocket.close(code=1001)
        return
    # Issue 22: a page of another origin must not ride the visitor's cookies here.
    if not allowed_origin(websocket):
        churn.refused("web", "foreign origin", f"{address} {websocket.headers.get('origin')!r:.80}")
        await websocket.close(code=1008)
        return
    # [limits] max_connections_per_address, as every listener: refused before the
    # handshake completes (the browser sees the WebSocket fail, HTTP 403).
    addresses: AddressLimiter = websocket.app.state.addresses
    if not addresses.acquire(address):
        churn.refused("web", "too many from the address", address)
        await websocket.close(code=1013)
        return
    reason, opened = "closed", False
    try:
        await websocket.accept()
        churn.opened("web", address)
        opened = True
        conn: WebConnection = websocket.app.state.connection(websocket)
        hub.connections.add(conn)
        try:
            await conn.run()
        except WebSocketDisconnect:
            pass
        finally:
            hub.connections.discard(conn)
            sink = frame_sink(websocket.scope)
            reason = getattr(sink, "close_reason", None) or (
                "server stopping" if hub.closing else "closed"
            )
            if not _closing(websocket):
                with contextlib.suppress(Exception):
                    await websocket.close(code=1001 if hub.closing else 1000)
    finally:
        addresses.release(address)
        if opened:
            churn.closed("web", reason, address)


class _WebApp(Starlette):
    """Starlette, with ``/ws`` taken before its middleware and router: a socket held
    for hours by each of thousands of spectators should not hold their coroutine
    frames too (about 4 KiB a socket; docs/benchmarks.md, "Web fan-out")."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # /metrics, /healthz, /readyz answer a scraper or a load balancer by address:
        # read-only, nothing a rebound page could use (issue 35).
        if scope["type"] == "websocket" or (
            scope["type"] == "http" and scope["path"] not in OPS_PATHS
        ):
            # Issue 30.7: a Host not on the allowlist (DNS rebinding) is 400, /ws too.
            hosts: HostAllowlist = self.state.hosts
            host = next((v for k, v in scope["headers"] if k == b"host"), None)
            text = None if host is None else host.decode("latin-1")
            if not hosts.allows(text, _bound_port(scope), scope.get("scheme", "http")):
                churn: ChurnLog = self.state.churn
                churn.refused("web", "unknown host", f"{text!r:.80}")
                await _refuse_host(scope, receive, send)
                return
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            scope["app"] = self
            await websocket_endpoint(WebSocket(scope, receive, send))
            return
        await super().__call__(scope, receive, send)


def create_app(services: Services, *, max_message_size: int | None = None) -> Starlette:
    """The ASGI app for ``services`` (the listener serves it; tests call it directly)."""
    ctx = WebContext(services)
    routes = [
        Route("/", lobby_page),
        Route("/api/cluster", cluster_api),
        Route("/play", play_page),
        Route("/check", guide.check_page),
        Route("/games", games_page),
        Route("/games/n/{number:int}", game_by_number),
        Route("/games/{uid:str}.gcg", gcg_download),
        Route("/games/{uid:str}/history.json", history_json),
        Route("/games/{uid:str}", game_page),
        *console_pages.routes(),
        *ratings_pages.routes(),
        *accounts.routes(),
        *ops_routes(services),
        WebSocketRoute("/ws", websocket_endpoint),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = _WebApp(
        routes=routes,
        exception_handlers={StoreUnavailable: store_timeout},
        middleware=[Middleware(SecurityHeaders)],
    )
    app.state.ctx = ctx
    app.state.fanout = Fanout(ctx.feed)
    app.state.hub = Hub(app.state.fanout)
    app.state.max_message_size = max_message_size or proto.DEFAULT_MAX_MESSAGE_SIZE
    app.state.connection = lambda websocket: WebConnection(
        websocket, ctx, app.state.fanout, app.state.max_message_size
    )
    app.state.templates = environment()
    app.state.console_sessions = console_pages.Sessions()
    app.state.origins = frozenset(services.config.web.origins)
    app.state.hosts = HostAllowlist(services.config.host, services.config.web.hosts)
    app.state.churn = server_churn(services)
    app.state.accounts = accounts.Accounts(
        lambda: ctx.store, services.clock, reservations=lambda: server_reservations(services)
    )
    app.state.addresses = AddressLimiter(services.config.limits.max_connections_per_address)
    return app

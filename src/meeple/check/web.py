"""Conformance checks for servers of meeple-web/1 (``docs/protocols/web.md``): JSON over
WebSocket, for teams who write their own browser client and want a server to try it
against, or who serve the protocol themselves.

Sections are the document's headings ("Messages", "Error codes", "Playing", "Deltas",
"Framing and limits", …); the document has no RFC keywords, so its rules ("every
malformed or untimely message gets one error reply; the connection stays") are MUST,
and what it calls a decision of meeple's is SHOULD. The kit talks through the
``websockets`` library's sans-I/O client (:class:`meeple.check.cmpn402.WsPeer`), so it
can put two messages in one TCP write or split one over many.

The game played is Spectrangle at a 2-seat table the kit creates: the kit rebuilds the
board from each ``seat`` view, asks meeple's engine for the legal placements, compares
them with the server's ``fits`` and plays the engine's best one. The lobby's other
play messages (``bot``, ``ready``, ``leave``, ``rejoin`` and ``unseated``), ``chat`` and
its rate limit (``too-fast``), the subscription limit (``too-many``), the ``console`` topic
and ``unsubscribe`` have a check each; so does the Scrabble ``preview`` (at a ``double``
table of two kit browsers, so the centre stays free and no word is looked up: the score is
the letters' values doubled). Scrabble and Santorini are played too, with moves from
meeple's engine: at a Scrabble ``double`` table the engine's best move (from the kit's
word list), its ``accept`` and a challenge of it; at a Santorini table 24 steps, the
seat's ``legal`` compared with the engine's at each. Every message and error code the
document defines has at least one check (``tests/check/test_web_kit.py`` holds the list).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from websockets.frames import Frame, Opcode

from meeple.check.cmpn402 import WsPeer
from meeple.check.core import CannotTest, CheckFailed, Context, Level, registry
from meeple.check.scrabble import best_move
from meeple.check.wire import names
from meeple.games import santorini
from meeple.games.santorini.view import legal_view
from meeple.games.scrabble.board import Board as ScrabbleBoard
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH
from meeple.games.spectrangle import Board, Tile
from meeple.protocols.web.delta import apply_patch

__all__ = ["SERVER_CHECKS", "WebPeer"]

PROTOCOL = "meeple-web/1"
ERROR_CODES = (
    "too-large",
    "bad-json",
    "bad-message",
    "unknown-type",
    "not-now",
    "not-found",
    "too-many",
    "too-fast",
    "refused",
    "name-taken",
    "illegal",
)


class WebPeer(WsPeer):
    """A browser of the kit: one JSON object per text message."""

    binary_frames = 0

    @staticmethod
    def default_uri(ctx: Context) -> str:
        return f"ws://{ctx.target.host}:{ctx.target.port}/ws"

    def on_frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.TEXT:
            self.queue.append(bytes(frame.data))
        elif frame.opcode is Opcode.BINARY:
            self.binary_frames += 1  # the protocol's messages are text: ``json`` fails
            self.queue.append(bytes(frame.data))
        else:
            super().on_frame(frame)

    async def json(self, timeout: float | None = None, what: str = "a message") -> dict[str, Any]:
        """The next message as a JSON object with a string ``type``."""
        data = await self.raw(timeout, what)
        if self.binary_frames:
            raise CheckFailed(f"{self.name}: a binary message (the protocol: text messages)")
        try:
            message = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise CheckFailed(f"{self.name}: not JSON: {data[:80]!r}") from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise CheckFailed(f"{self.name}: not a JSON object with a type: {data[:80]!r}")
        return message

    async def say(self, message: dict[str, Any], *, bytewise: bool = False) -> None:
        data = json.dumps(message, separators=(",", ":")).encode()
        await self.peer.send(self.frames(data, text=True), bytewise=bytewise)

    async def say_together(self, *messages: dict[str, Any]) -> None:
        raw = [json.dumps(m, separators=(",", ":")).encode() for m in messages]
        await self.peer.send(self.frames(*raw, text=True))

    async def expect_type(
        self, kind: str, *, skip: tuple[str, ...] = ("lobby",), timeout: float | None = None
    ) -> dict[str, Any]:
        while True:
            m = await self.json(timeout, kind)
            if m["type"] == kind:
                return m
            if m["type"] in skip:
                continue
            raise CheckFailed(f"{self.name}: expected {kind}, got {json.dumps(m)[:200]}")

    async def error(
        self, ctx: Context, code: str, why: str, *, skip: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """The next message (past those of a ``skip`` type) is ``error`` ``code``."""
        while True:
            m = await self.json(ctx.wait, f"error {code}")
            if m["type"] not in skip:
                break
        ctx.expect(
            m.get("type") == "error" and m.get("code") == code,
            f"{why}: expected error {code}, got {json.dumps(m)[:200]}",
        )
        ctx.expect(isinstance(m.get("message"), str), f"{why}: the error has no message")
        return m

    async def alive(self, ctx: Context, id: int = 7) -> None:
        """The connection still serves: a ping gets its pong."""
        await self.say({"type": "ping", "id": id})
        m = await self.expect_type("pong", skip=("lobby", "game", "seat", "error"))
        ctx.expect(m.get("id") == id, f"pong {m}")


# Set-up steps' sections: the heading of the rule each relies on, and the rule itself
# (the document's headings are coarse: every table check is under "Playing"); the check
# of that rule owns the step (``own=``), every other check could not test when it fails.
HELLO = "Messages: hello"
CREATE_SIT = "Playing: create and sit, answered seated"
FIRST_VIEW = "Playing: the first seat view when the table fills"
PLACE = "Playing: a legal place, answered a seat view to every seat"
BOT = "Playing: bot, the game starts"


async def hello(ctx: Context, label: str) -> WebPeer:
    """A browser of the kit, welcomed (set-up step: hello, answered welcome)."""
    with ctx.setup(f"hello from {label}", HELLO):
        p = await WebPeer.open(ctx, label)
        await p.say({"type": "hello", "protocol": PROTOCOL})
        welcome = await p.expect_type("welcome")
        if welcome.get("protocol") != PROTOCOL:
            raise CheckFailed(f"welcome {welcome}", got=json.dumps(welcome).encode()[:200])
    return p


# --- a game at a table ------------------------------------------------------------------


@dataclass
class Table:
    seats: dict[str, WebPeer]  # by name
    seated: dict[str, dict[str, Any]]
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # the last seat view
    uid: str = ""

    def on_turn(self) -> str:
        view = next(iter(self.views.values()))["data"]
        return str(view["players"][view["turn"]])

    def other(self, name: str) -> str:
        return next(n for n in self.seats if n != name)


async def table(ctx: Context, tags: tuple[str, str], game: str = "spectrangle") -> Table:
    """A 2-seat table of ``game`` (Scrabble: the ``double`` variant) of two kit browsers,
    after each one's first seat view."""
    a_name, b_name = names(ctx, *tags)
    a = await hello(ctx, a_name)
    variant = "double" if game == "scrabble" else "standard"
    with ctx.setup(f"create a 2-seat {game} table", CREATE_SIT):
        await a.say({"type": "create", "game": game, "variant": variant, "size": 2, "name": a_name})
        seated_a = await a.expect_type("seated")
    b = await hello(ctx, b_name)
    with ctx.setup("sit at the table", CREATE_SIT):
        await b.say({"type": "sit", "table": seated_a["table"], "name": b_name})
        seated_b = await b.expect_type("seated")
    t = Table({a_name: a, b_name: b}, {a_name: seated_a, b_name: seated_b})
    with ctx.setup("each seat's first seat view", FIRST_VIEW):
        for n, p in t.seats.items():
            t.views[n] = await p.expect_type(
                "seat", skip=("lobby", "seated"), timeout=_seat_wait(ctx)
            )
    t.uid = str(t.views[a_name].get("uid", ""))
    return t


def engine_fits(view: dict[str, Any]) -> tuple[dict[str, list[list[int]]], list[Any]]:
    """The engine's placements for the seat on turn, from its view: per rotation the
    (field, points) pairs, as ``fits`` gives them; and the engine's placements."""
    board = Board()
    for f in view["fields"]:
        if f.get("tile"):
            board.put(Tile.parse(f["tile"]), int(f["index"]))
    hand = [Tile.parse(t) for t in view["hands"][view["you"]]]
    found = list(board.placements(hand))
    fits: dict[str, list[list[int]]] = {}
    for p in found:
        fits.setdefault(p.tile.code, []).append([p.index, p.points])
    return {k: sorted(v) for k, v in fits.items()}, sorted(found, key=lambda p: -p.points)


async def play_one(ctx: Context, t: Table) -> tuple[str, Any, dict[str, dict[str, Any]]]:
    """The seat on turn plays the engine's best placement; each seat's next view."""
    mover = t.on_turn()
    _, found = engine_fits(t.views[mover]["data"])
    if not found:
        raise CannotTest("no placement for the first hand")
    best = found[0]
    with ctx.setup(f"{mover} places {best.tile.code} at {best.index}", PLACE):
        await t.seats[mover].say(
            {
                "type": "play",
                "action": {"kind": "place", "tile": best.tile.code, "index": best.index},
            }
        )
        views = {}
        for n, p in t.seats.items():
            views[n] = await p.expect_type("seat", skip=("lobby",))
    t.views.update(views)
    return mover, best, views


# --- the checks ------------------------------------------------------------------------

SERVER_CHECKS, check = registry("web.server")


@check("hello", "Messages", Level.MUST, "hello is answered welcome: protocol, max_message_size")
async def _hello(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "hello")
    await p.say({"type": "hello", "protocol": PROTOCOL})
    m = await p.expect_type("welcome")
    ctx.expect(m.get("protocol") == PROTOCOL, f"welcome {m}")
    ctx.expect(isinstance(m.get("max_message_size"), int), f"welcome {m}")


@check("ping", "Messages", Level.MUST, "ping is answered pong with the same id (even before hello)")
async def _ping(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "ping")
    await p.say({"type": "ping", "id": 2147483647})
    m = await p.expect_type("pong")
    ctx.expect(m.get("id") == 2147483647, f"pong {m}")


@check("not-now", "Error codes", Level.MUST, "subscribe before hello is error not-now")
async def _not_now(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "early")
    await p.say({"type": "subscribe", "topic": "lobby"})
    await p.error(ctx, "not-now", "subscribe before hello")
    await p.alive(ctx)


# Errors one message provokes after hello (document "Error codes"): (id, title, message).
ERRORS: list[tuple[str, str, str, Any]] = [
    ("bad-json", "bad-json", "a message that is not JSON is error bad-json", b"{nope"),
    (
        "bad-message",
        "bad-message",
        "a topic the protocol has not is error bad-message",
        {"type": "subscribe", "topic": "racks"},
    ),
    (
        "bad-message-field",
        "bad-message",
        "an unknown field is error bad-message (no typo is silently ignored)",
        {"type": "ping", "id": 1, "idd": 2},
    ),
    (
        "unknown-type",
        "unknown-type",
        "a type the protocol has not is error unknown-type",
        {"type": "dance"},
    ),
    (
        "not-found",
        "not-found",
        "subscribe to a game that does not exist is error not-found",
        {"type": "subscribe", "topic": "game", "uid": "0123456789ab"},
    ),
    (
        "refused",
        "refused",
        "sit at a table that does not exist is error refused",
        {"type": "sit", "table": "table-999999", "name": "{name}"},
    ),
]


def _provoke(code: str, message: Any, tag: str) -> Any:
    async def run(ctx: Context) -> None:
        (name,) = names(ctx, tag)
        p = await hello(ctx, name)
        if isinstance(message, bytes):
            await p.peer.send(p.frames(message, text=True))
        else:
            await p.say(json.loads(json.dumps(message).replace("{name}", name)))
        await p.error(ctx, code, json.dumps(message) if not isinstance(message, bytes) else "")
        await p.alive(ctx)

    return run


for _n, (_id, _code, _title, _message) in enumerate(ERRORS):
    check(_id, "Error codes", Level.MUST, _title + "; the connection stays")(
        _provoke(_code, _message, f"e{_n}")
    )


@check(
    "too-large",
    "Framing and limits",
    Level.MUST,
    "a message over max_message_size is error too-large; the connection stays",
)
async def _too_large(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "big")
    await p.say({"type": "hello", "protocol": PROTOCOL})
    welcome = await p.expect_type("welcome")
    limit = int(welcome.get("max_message_size", 4096))
    await p.say({"type": "ping", "id": 1, "pad": "x" * (limit + 10)})
    await p.error(ctx, "too-large", f"a message of {limit + 40} bytes")
    await p.alive(ctx)


@check("lobby", "Messages", Level.MUST, "subscribe lobby: a lobby snapshot (uid null, seq, data)")
async def _lobby(ctx: Context) -> None:
    (name,) = names(ctx, "lb")
    p = await hello(ctx, name)
    await p.say({"type": "subscribe", "topic": "lobby"})
    m = await p.expect_type("lobby", skip=())
    data = m.get("data")
    ctx.expect(m.get("uid") is None and isinstance(m.get("seq"), int), f"lobby {str(m)[:200]}")
    ctx.expect(
        isinstance(data, dict) and all(k in data for k in ("queues", "tables", "rooms")),
        f"lobby data {str(data)[:200]}",
    )


@check(
    "seated",
    "Playing",
    Level.MUST,
    "create and sit: each gets seated (table, name, token), then a seat view as the game starts",
    own=(CREATE_SIT, FIRST_VIEW),
)
async def _seated(ctx: Context) -> None:
    t = await table(ctx, ("sa", "sb"))
    for n, s in t.seated.items():
        ok = s.get("name") == n and bool(s.get("token")) and bool(s.get("table"))
        ctx.expect(ok, f"seated {s}")
    for n, v in t.views.items():
        data = v.get("data", {})
        ctx.expect(v.get("game") == "spectrangle", f"{n}: seat {str(v)[:200]}")
        ctx.expect(data.get("players") == list(t.seats), f"{n}: players {data.get('players')}")


@check(
    "seat-private",
    "Playing",
    Level.MUST,
    "a seat view is the seat's own: you names it, fits only on its turn",
)
async def _seat_private(ctx: Context) -> None:
    t = await table(ctx, ("pa", "pb"))
    mover = t.on_turn()
    for n, v in t.views.items():
        data = v["data"]
        ctx.expect(data["players"][data["you"]] == n, f"{n}: you = {data.get('you')}")
        if n != mover:
            ctx.expect(not data.get("fits"), f"{n}, off turn, has fits {data.get('fits')}")


@check(
    "fits",
    "Spectrangle: where a tile fits",
    Level.MUST,
    "fits for the seat on turn are the rules' placements and points (meeple's engine)",
)
async def _fits(ctx: Context) -> None:
    t = await table(ctx, ("fa", "fb"))
    data = t.views[t.on_turn()]["data"]
    want, _ = engine_fits(data)
    got = {k: sorted(map(list, v)) for k, v in (data.get("fits") or {}).items() if v}
    ctx.expect(got == want, f"fits {got}; the rules: {want}")


@check(
    "play",
    "Playing",
    Level.MUST,
    "a legal place: every seat gets a new view with the tile on the board and the turn passed",
    own=(PLACE,),
)
async def _play(ctx: Context) -> None:
    t = await table(ctx, ("ma", "mb"))
    mover, best, views = await play_one(ctx, t)
    for n, v in views.items():
        data = v["data"]
        tile = data["fields"][best.index].get("tile")
        ctx.expect(tile is not None, f"{n}: field {best.index} is empty after the place")
        ctx.expect(data["players"][data["turn"]] != mover, f"{n}: the turn stayed with {mover}")
        ctx.expect(
            data["scores"][data["players"].index(mover)] == best.points,
            f"{n}: scores {data['scores']}",
        )


@check(
    "illegal",
    "Playing",
    Level.MUST,
    "an illegal move is error illegal to its sender only; the others hear nothing",
)
async def _illegal(ctx: Context) -> None:
    t = await table(ctx, ("ia", "ib"))
    mover = t.on_turn()
    hand = t.views[mover]["data"]["hands"][t.views[mover]["data"]["you"]]
    await t.seats[mover].say(
        {"type": "play", "action": {"kind": "place", "tile": hand[0], "index": 11}}
    )
    await t.seats[mover].error(ctx, "illegal", "a first tile on a bonus field")
    other = t.seats[t.other(mover)]
    heard = []
    with contextlib.suppress(CheckFailed):
        heard.append(await other.json(0.3))
    ctx.expect(
        not [m for m in heard if m.get("type") in ("seat", "error")],
        f"the other seat heard {heard[:1]}",
    )


@check(
    "out-of-turn",
    "Playing",
    Level.MUST,
    "a move by the seat not on turn is refused (error illegal)",
)
async def _out_of_turn(ctx: Context) -> None:
    t = await table(ctx, ("oa", "ob"))
    other = t.other(t.on_turn())
    data = t.views[other]["data"]
    await t.seats[other].say(
        {
            "type": "play",
            "action": {"kind": "place", "tile": data["hands"][data["you"]][0], "index": 1},
        }
    )
    await t.seats[other].error(ctx, "illegal", "a place off turn")


@check(
    "game-topic", "Messages", Level.MUST, "subscribe game: the game's snapshot (uid, players, view)"
)
async def _game_topic(ctx: Context) -> None:
    t = await table(ctx, ("ga", "gb"))
    if not t.uid:
        raise CheckFailed(f"the seat view has no uid: {str(next(iter(t.views.values())))[:200]}")
    (name,) = names(ctx, "gw")
    w = await hello(ctx, name)
    await w.say({"type": "subscribe", "topic": "game", "uid": t.uid})
    m = await w.expect_type("game")
    data = m.get("data", {})
    ctx.expect(m.get("uid") == t.uid and isinstance(m.get("seq"), int), f"game {str(m)[:200]}")
    ctx.expect(data.get("players") == list(t.seats), f"players {data.get('players')}")
    ctx.expect("view" in data, "no view")


@check(
    "delta",
    "Deltas",
    Level.MUST,
    "with delta: a whole snapshot, then patches that give each next snapshot exactly",
)
async def _delta(ctx: Context) -> None:
    t = await table(ctx, ("da", "db"))
    (wn, fn) = names(ctx, "dw", "df")
    w = await hello(ctx, wn)
    full = await hello(ctx, fn)
    await w.say({"type": "subscribe", "topic": "game", "uid": t.uid, "delta": True})
    await full.say({"type": "subscribe", "topic": "game", "uid": t.uid})
    held = await w.expect_type("game")
    await full.expect_type("game")
    ctx.expect("data" in held, f"the first message of a delta subscription: {str(held)[:200]}")
    await play_one(ctx, t)
    nxt = await w.expect_type("game")
    whole = await full.expect_type("game")
    if "data" in nxt:
        doc = nxt["data"]
    else:
        ctx.expect(
            nxt.get("base") == held.get("seq"), f"base {nxt.get('base')} for seq {held.get('seq')}"
        )
        try:
            doc = apply_patch(held["data"], nxt.get("patch"))
        except Exception as e:
            raise CheckFailed(f"the patch does not apply: {e}") from None
    ctx.expect(doc == whole["data"], "the patched snapshot differs from the whole one")
    ctx.expect(nxt.get("seq") == whole.get("seq"), f"seq {nxt.get('seq')} / {whole.get('seq')}")


@check(
    "rejoin",
    "Playing",
    Level.MUST,
    "rejoin with the token from a new connection: seated again, and the seat view",
)
async def _rejoin(ctx: Context) -> None:
    t = await table(ctx, ("ra", "rb"))
    name = next(iter(t.seats))
    await t.seats[name].close()
    p = await hello(ctx, name + "x")
    await p.say({"type": "rejoin", "token": t.seated[name]["token"]})
    s = await p.expect_type("seated")
    ctx.expect(s.get("name") == name, f"seated {s}")
    v = await p.expect_type("seat", skip=("lobby",))
    ctx.expect(
        v["data"]["players"][v["data"]["you"]] == name, f"seat view for {v['data'].get('you')}"
    )


@check(
    "coalesced",
    "Framing and limits",
    Level.MUST,
    "hello and ping in one TCP write: welcome, then pong",
)
async def _coalesced(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "co")
    await p.say_together({"type": "hello", "protocol": PROTOCOL}, {"type": "ping", "id": 5})
    await p.expect_type("welcome")
    m = await p.expect_type("pong")
    ctx.expect(m.get("id") == 5, f"pong {m}")


@check("split", "Framing and limits", Level.MUST, "a message sent one byte per write is understood")
async def _split(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "sp")
    await p.say({"type": "hello", "protocol": PROTOCOL}, bytewise=True)
    await p.expect_type("welcome")
    ctx.passed()


@check(
    "binary",
    "Framing and limits",
    Level.SHOULD,
    "a binary message is read as UTF-8 text",
)
async def _binary(ctx: Context) -> None:
    p = await WebPeer.open(ctx, "bi")
    await p.peer.send(p.frames(json.dumps({"type": "ping", "id": 9}).encode()))
    m = await p.json(ctx.wait, "pong")
    ctx.expect(m.get("type") == "pong" and m.get("id") == 9, f"got {m}")


# --- the lobby's other play messages, chat, preview, the limits ---------------------------


async def open_table(
    ctx: Context, name: str, *, start: str = "full", size: int = 2, game: str = "spectrangle"
) -> tuple[WebPeer, dict[str, Any]]:
    """A browser that opened a table and sits at it alone: its peer and ``seated``."""
    p = await hello(ctx, name)
    variant = "double" if game == "scrabble" else "standard"
    with ctx.setup(f"create a {size}-seat {game} table", CREATE_SIT):
        await p.say(
            {
                "type": "create",
                "game": game,
                "variant": variant,
                "size": size,
                "name": name,
                "start": start,
            }
        )
        m = await p.expect_type("seated", skip=("lobby",))
    return p, m


def resign_on_cleanup(ctx: Context, p: WebPeer) -> None:
    """Leave the table or resign the game when the check ends, so the target is left
    with no table or game of the kit's (a closed socket would hold the seat instead)."""

    async def leave() -> None:
        with contextlib.suppress(Exception):
            await p.say({"type": "leave"})

    ctx.cleanups.append(leave)


async def heard(p: WebPeer, seconds: float) -> list[dict[str, Any]]:
    """Every message that arrives within ``seconds``."""
    out: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (left := deadline - loop.time()) > 0:
        try:
            out.append(await p.json(left))
        except CheckFailed:
            break
    return out


# What must come (a filled table's first seat views, the other seat's view after a
# leave, the lobby after a table opens) is waited for at least this long whatever --wait
# says: a short --wait is for answers that may rightly never come, and a loaded server
# is neither one that could not be tested nor one that failed.
SEAT_WAIT_FLOOR = 5.0


def _seat_wait(ctx: Context) -> float:
    return max(ctx.wait * 2, SEAT_WAIT_FLOOR)


async def with_bot(ctx: Context, name: str) -> tuple[WebPeer, dict[str, Any]]:
    """A game of ``name`` and an ``easy`` server bot: its peer and first seat view."""
    p, seated = await open_table(ctx, name)
    resign_on_cleanup(ctx, p)
    with ctx.setup("bot easy, then the first seat view", BOT):
        await p.say({"type": "bot", "table": seated["table"], "level": "easy"})
        return p, await p.expect_type("seat", timeout=_seat_wait(ctx))


@check(
    "bot",
    "Playing",
    Level.MUST,
    "bot seats a server bot named after its level; the table fills and the game starts",
    own=(BOT,),
)
async def _bot(ctx: Context) -> None:
    (name,) = names(ctx, "bt")
    _, view = await with_bot(ctx, name)
    players = view["data"].get("players", [])
    ctx.expect(len(players) == 2 and name in players, f"players {players}")
    bot = str(players[1 - players.index(name)])
    ctx.expect(bot.startswith("easy"), f"the bot is named {bot!r}, not after its level (easy)")


@check("bot-level", "Playing", Level.MUST, "bot with a level the server has not is error refused")
async def _bot_level(ctx: Context) -> None:
    (name,) = names(ctx, "bl")
    p, seated = await open_table(ctx, name)
    resign_on_cleanup(ctx, p)
    await p.say({"type": "bot", "table": seated["table"], "level": "nosuchlevel"})
    await p.error(ctx, "refused", "an unknown bot level", skip=("lobby",))
    await p.alive(ctx)


@check(
    "name-taken",
    "Playing",
    Level.MUST,
    "create with a name a player has is error name-taken (names are unique on the server)",
)
async def _name_taken(ctx: Context) -> None:
    a_name, b_name = names(ctx, "na", "nb")
    a, _ = await open_table(ctx, a_name)
    resign_on_cleanup(ctx, a)
    b = await hello(ctx, b_name)
    await b.say(
        {"type": "create", "game": "spectrangle", "variant": "standard", "size": 2, "name": a_name}
    )
    await b.error(ctx, "name-taken", f"create as {a_name}, who sits at a table", skip=("lobby",))
    await b.alive(ctx)


@check(
    "ready",
    "Playing",
    Level.MUST,
    "a table opened with start ready starts when every seat has said ready, not before",
)
async def _ready(ctx: Context) -> None:
    a_name, b_name = names(ctx, "ya", "yb")
    a, seated = await open_table(ctx, a_name, start="ready")
    resign_on_cleanup(ctx, a)
    b = await hello(ctx, b_name)
    await b.say({"type": "sit", "table": seated["table"], "name": b_name})
    await b.expect_type("seated")
    resign_on_cleanup(ctx, b)
    await a.say({"type": "ready"})
    early = [m for m in await heard(b, 0.3) if m["type"] == "seat"]
    ctx.expect(not early, "the game started before every seat said ready")
    await b.say({"type": "ready"})
    for p in (a, b):
        v = await p.expect_type("seat", timeout=_seat_wait(ctx))
        ctx.expect(v.get("game") == "spectrangle", f"{p.name}: seat {str(v)[:200]}")


@check(
    "leave",
    "Playing",
    Level.MUST,
    "leave before the game starts stands up: the session is open again (ready is not-now)",
)
async def _leave(ctx: Context) -> None:
    (name,) = names(ctx, "lv")
    p, _ = await open_table(ctx, name, start="ready")
    await p.say({"type": "leave"})
    await p.say({"type": "ready"})
    await p.error(ctx, "not-now", "ready after leave", skip=("lobby",))
    await p.alive(ctx)


@check(
    "leave-game",
    "Playing",
    Level.MUST,
    "leave mid-game resigns: the room's leave rule applies at once (the other seat hears it)",
)
async def _leave_game(ctx: Context) -> None:
    t = await table(ctx, ("la", "lb"))
    leaver = next(iter(t.seats))
    before = t.views[t.other(leaver)]["data"]
    await t.seats[leaver].say({"type": "leave"})
    after = (await t.seats[t.other(leaver)].expect_type("seat", timeout=_seat_wait(ctx)))["data"]
    ctx.expect(after != before, "the other seat's view did not change")
    await t.seats[leaver].say({"type": "play", "action": {"kind": "skip"}})
    await t.seats[leaver].error(ctx, "not-now", "play after leave", skip=("lobby", "seat"))


@check(
    "unseated",
    "Playing",
    Level.MUST,
    "rejoin from a second connection: the first, still open, is told unseated (reason rejoined)",
)
async def _unseated(ctx: Context) -> None:
    t = await table(ctx, ("ua", "ub"))
    name = next(iter(t.seats))
    second = await hello(ctx, name + "z")
    await second.say({"type": "rejoin", "token": t.seated[name]["token"]})
    s = await second.expect_type("seated")
    m = await t.seats[name].expect_type("unseated", skip=("lobby", "seat"))
    ctx.expect(m.get("reason") == "rejoined", f"unseated {m}")
    ctx.expect(m.get("table") == s.get("table"), f"unseated {m}; the rejoin: seated {s}")
    # Back in state open: a play message of a seat is not-now.
    await t.seats[name].say({"type": "leave"})
    await t.seats[name].error(ctx, "not-now", "leave after unseated", skip=("lobby", "seat"))


@check(
    "chat",
    "Chat",
    Level.MUST,
    "chat in a game comes to every browser seat as chat (from, text), the sender's own too",
)
async def _chat(ctx: Context) -> None:
    t = await table(ctx, ("ha", "hb"))
    sender = next(iter(t.seats))
    await t.seats[sender].say({"type": "chat", "text": "good luck, é ✓"})
    for n, p in t.seats.items():
        m = await p.expect_type("chat", skip=("lobby", "seat"))
        ok = m.get("from") == sender and m.get("text") == "good luck, é ✓"
        ctx.expect(ok, f"{n} got {m}")


@check(
    "chat-not-now",
    "Chat",
    Level.MUST,
    "chat at a table whose game has not started is error not-now",
)
async def _chat_not_now(ctx: Context) -> None:
    (name,) = names(ctx, "hn")
    p, _ = await open_table(ctx, name)
    resign_on_cleanup(ctx, p)
    await p.say({"type": "chat", "text": "anyone?"})
    await p.error(ctx, "not-now", "chat before the game starts", skip=("lobby",))
    await p.alive(ctx)


@check(
    "chat-bad",
    "Chat",
    Level.MUST,
    "a chat line with a control character is error bad-message and not relayed",
)
async def _chat_bad(ctx: Context) -> None:
    t = await table(ctx, ("hx", "hy"))
    sender = next(iter(t.seats))
    await t.seats[sender].say({"type": "chat", "text": "two\nlines"})
    await t.seats[sender].error(ctx, "bad-message", "a chat line of two lines", skip=("lobby",))
    relayed = [m for m in await heard(t.seats[t.other(sender)], 0.3) if m["type"] == "chat"]
    ctx.expect(not relayed, f"the other seat heard {relayed[:1]}")


@check(
    "too-fast",
    "Chat",
    Level.MUST,
    "six chat lines at once: five relayed, the sixth is error too-fast and not relayed",
)
async def _too_fast(ctx: Context) -> None:
    t = await table(ctx, ("qa", "qb"))
    sender = next(iter(t.seats))
    p = t.seats[sender]
    await p.say_together(*({"type": "chat", "text": f"line {i}"} for i in range(6)))
    chats: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    while len(chats) + len(errors) < 6:
        m = await p.json(ctx.wait, "chat or error")
        if m["type"] == "chat":
            chats.append(m)
        elif m["type"] == "error":
            errors.append(m)
        elif m["type"] not in ("lobby", "seat"):
            ctx.fail(f"expected chat or error, got {json.dumps(m)[:200]}")
    ctx.expect([e.get("code") for e in errors] == ["too-fast"], f"errors {errors}")
    ctx.expect(len(chats) == 5, f"{len(chats)} lines relayed of 6")
    other = t.seats[t.other(sender)]
    got = [m for m in await heard(other, 0.5) if m["type"] == "chat"]
    ctx.expect(len(got) == 5, f"the other seat heard {len(got)} lines of 6, not 5")
    await p.alive(ctx)


@check(
    "too-many",
    "Error codes",
    Level.MUST,
    "a 9th subscription on one connection is error too-many; the connection stays",
    timeout=20.0,
)
async def _too_many(ctx: Context) -> None:
    uids = []
    for i in range(7):
        (name,) = names(ctx, f"m{i}")
        _, view = await with_bot(ctx, name)
        uids.append(str(view.get("uid")))
    (wn,) = names(ctx, "mw")
    w = await hello(ctx, wn)
    topics: list[dict[str, Any]] = [{"topic": "lobby"}, {"topic": "console"}]
    topics += [{"topic": "game", "uid": u} for u in uids[:6]]
    for topic in topics:
        await w.say({"type": "subscribe", **topic})
    await w.say({"type": "ping", "id": 8})
    while (m := await w.json(ctx.wait, "pong"))["type"] != "pong":
        if m["type"] == "error":
            if m.get("code") == "too-many":
                ctx.fail(f"error too-many with at most 8 subscriptions: {m}")
            raise CannotTest(f"eight subscriptions were not all taken: {m}")
    await w.say({"type": "subscribe", "topic": "game", "uid": uids[6]})
    await w.error(ctx, "too-many", "a 9th subscription", skip=("lobby", "game", "console"))
    await w.alive(ctx)


@check(
    "console",
    "Messages",
    Level.MUST,
    "subscribe console is taken (no error); a console snapshot has uid null, seq and data",
)
async def _console(ctx: Context) -> None:
    (name,) = names(ctx, "cs")
    w = await hello(ctx, name)
    await w.say({"type": "subscribe", "topic": "console"})
    await w.say({"type": "ping", "id": 4})
    seen = []
    while (m := await w.json(ctx.wait, "pong"))["type"] != "pong":
        ctx.expect(m["type"] != "error", f"subscribe console: {m}")
        seen.append(m)
    seen += await heard(w, 0.3)
    for m in seen:
        if m["type"] == "console" and "data" in m:
            ok = m.get("uid") is None and isinstance(m.get("seq"), int)
            ctx.expect(ok and isinstance(m["data"], dict), f"console {str(m)[:200]}")
    if not any(m["type"] == "console" for m in seen):
        ctx.passed("no console snapshot: the server has no CMPN402 contest")
    else:
        ctx.passed()


@check(
    "unsubscribe",
    "Messages",
    Level.MUST,
    "after unsubscribe lobby no lobby snapshot comes, while a subscriber gets the change",
)
async def _unsubscribe(ctx: Context) -> None:
    wn, cn, tn = names(ctx, "wu", "wc", "wt")
    w = await hello(ctx, wn)
    control = await hello(ctx, cn)
    for p in (w, control):
        await p.say({"type": "subscribe", "topic": "lobby"})
        await p.expect_type("lobby", skip=())
    await w.say({"type": "unsubscribe", "topic": "lobby"})
    await w.say({"type": "ping", "id": 6})
    await w.expect_type("pong", skip=("lobby",))
    opener, _ = await open_table(ctx, tn)  # the lobby changes: a table opens
    resign_on_cleanup(ctx, opener)
    m = await control.expect_type("lobby", skip=(), timeout=_seat_wait(ctx))
    ctx.expect(tn in json.dumps(m), f"the subscriber's lobby has no {tn}: {str(m)[:200]}")
    late = [m for m in await heard(w, 0.3) if m["type"] == "lobby"]
    ctx.expect(not late, f"a lobby snapshot after unsubscribe: {str(late[:1])[:200]}")


@check(
    "preview-not-now",
    "Score preview (Scrabble)",
    Level.MUST,
    "preview in a game that is not Scrabble is error not-now",
)
async def _preview_not_now(ctx: Context) -> None:
    t = await table(ctx, ("va", "vb"))
    p = next(iter(t.seats.values()))
    action = {"kind": "place", "tiles": [[7, 7, "A"], [8, 7, "B"]]}
    await p.say({"type": "preview", "id": 3, "action": action})
    await p.error(ctx, "not-now", "a preview at a Spectrangle table", skip=("lobby",))
    await p.alive(ctx)


@check(
    "preview",
    "Score preview (Scrabble)",
    Level.MUST,
    "preview of two rack tiles on the centre: the id back, the word and its score (double "
    "word), nothing applied",
)
async def _preview(ctx: Context) -> None:
    # Two browsers of the kit, neither moving: the centre stays free (a bot might play).
    a_name, b_name = names(ctx, "pv", "pw")
    try:
        a, seated = await open_table(ctx, a_name, game="scrabble")
    except CheckFailed as e:
        raise CannotTest(f"no Scrabble table at the double variant: {e}") from None
    resign_on_cleanup(ctx, a)
    b = await hello(ctx, b_name)
    await b.say({"type": "sit", "table": seated["table"], "name": b_name})
    await b.expect_type("seated")
    resign_on_cleanup(ctx, b)
    p = a
    view = await p.expect_type("seat", timeout=ctx.wait * 4)
    data = view["data"]
    letters = [c for c in str(data.get("rack", "")) if c.isalpha() and c.isupper()][:2]
    if len(letters) < 2:
        raise CannotTest(f"no two letter tiles on the rack {data.get('rack')!r}")
    word = "".join(letters)
    tiles = [[7, 7, letters[0]], [8, 7, letters[1]]]
    await p.say({"type": "preview", "id": 41, "action": {"kind": "place", "tiles": tiles}})
    r = await p.expect_type("preview", skip=("lobby", "seat"))
    score = 2 * sum(ENGLISH.value(c) for c in letters)  # the centre is a double word
    ctx.expect(r.get("id") == 41, f"preview {r}")
    ctx.expect("refusal" not in r, f"a double table checks no word on preview: {r}")
    ctx.expect(r.get("score") == score, f"preview {r}; {word} on the centre scores {score}")
    ctx.expect(r.get("words") == [{"word": word, "score": score}], f"words {r.get('words')}")
    late = [m for m in await heard(p, 0.2) if m["type"] == "seat"]
    ctx.expect(not late or late[-1]["data"].get("board") == data.get("board"), "board changed")


# --- Scrabble and Santorini moves (the play checks on all three games) -------------------


def _shaped(run: Callable[[Context], Awaitable[None]]) -> Callable[[Context], Awaitable[None]]:
    """A scenario that reads game views field by field: a view not of the protocol's shape
    (a field missing, of another type, an index off the board) fails the check; the kit
    never breaks on what the target sends."""

    async def shaped(ctx: Context) -> None:
        try:
            await run(ctx)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise CheckFailed(f"a seat view not of the protocol's shape: {e!r}"[:200]) from None

    return shaped


def _lexicon(ctx: Context) -> Lexicon:
    lexicon: Lexicon | None = ctx.target.options.get("lexicon")
    if lexicon is None:
        raise CannotTest("no word list to find the engine's moves with (--lexicon)")
    return lexicon


async def game_table(ctx: Context, tags: tuple[str, str], game: str) -> Table:
    """A 2-seat table of ``game`` of two kit browsers, both left (resigned) when the check
    ends; could not test where the server has no such table."""
    try:
        t = await table(ctx, tags, game)
    except CheckFailed as e:
        raise CannotTest(f"no 2-seat {game} table of two browsers: {e}") from None
    for p in t.seats.values():
        resign_on_cleanup(ctx, p)
    return t


async def next_views(t: Table) -> dict[str, dict[str, Any]]:
    """Each seat's next seat view (the change every seat is told of)."""
    views = {n: await p.expect_type("seat", skip=("lobby",)) for n, p in t.seats.items()}
    t.views.update(views)
    return views


async def _scrabble_opening(
    ctx: Context, names: tuple[str, str]
) -> tuple[Table, str, int, Move, list[list[Any]]]:
    """A Scrabble table of two kit browsers; the one on turn places the engine's best
    move. The table, the mover, the mover's seat, the move and its tiles as sent."""
    lexicon = _lexicon(ctx)
    t = await game_table(ctx, names, "scrabble")
    mover = t.on_turn()
    data = t.views[mover]["data"]
    seat = data["players"].index(mover)
    move = best_move(ScrabbleBoard.from_rows(data["board"]), data["rack"], lexicon, ENGLISH)
    if move is None:
        raise CannotTest(f"no move for the rack {data['rack']!r}")
    tiles = [[p.x, p.y, p.tile] for p in move.tiles]
    await t.seats[mover].say({"type": "play", "action": {"kind": "place", "tiles": tiles}})
    return t, mover, seat, move, tiles


@check(
    "scrabble-play",
    "Playing",
    Level.MUST,
    "a Scrabble place (the engine's best move): every seat's next view has the tiles on the "
    "board, the turn passed and the play pending at the engine's score; accept scores it",
)
@_shaped
async def _scrabble_play(ctx: Context) -> None:
    t, mover, seat, move, tiles = await _scrabble_opening(ctx, ("zs1", "zs2"))
    for n, v in (await next_views(t)).items():
        d = v["data"]
        laid = "".join(d["board"][y][x] for x, y, _ in tiles)
        ctx.expect(
            laid == "".join(str(c) for *_, c in tiles), f"{n}: the board has {laid!r}, not {tiles}"
        )
        ctx.expect(d["players"][d["turn"]] != mover, f"{n}: the turn stayed with {mover}")
        pending = d.get("pending") or {}
        ctx.expect(
            pending.get("player") == seat and pending.get("score") == move.score,
            f"{n}: pending {pending}; the engine scores {move.word} {move.score}",
        )
    # The other seat, on turn, accepts the pending play (double challenge): it counts.
    await t.seats[t.other(mover)].say({"type": "play", "action": {"kind": "accept"}})
    for n, v in (await next_views(t)).items():
        d = v["data"]
        ctx.expect(d.get("pending") is None, f"{n}: still pending after accept: {d.get('pending')}")
        ctx.expect(
            d["scores"][seat] == move.score,
            f"{n}: scores {d['scores']} after accept; the engine scores {move.word} {move.score}",
        )
    ctx.passed(f"{move.word} for {move.score}")


@check(
    "scrabble-challenge",
    "Playing",
    Level.MUST,
    "a challenge of a good word at a double table: the play stands, the challenger's turn is lost",
)
@_shaped
async def _scrabble_challenge(ctx: Context) -> None:
    lexicon = _lexicon(ctx)
    t, mover, seat, move, tiles = await _scrabble_opening(ctx, ("zc1", "zc2"))
    await next_views(t)
    await t.seats[t.other(mover)].say({"type": "play", "action": {"kind": "challenge"}})
    views = await next_views(t)
    for n, v in views.items():
        d = v["data"]
        if d.get("pending") is not None:  # a view between the challenge and its verdict
            d = (await t.seats[n].expect_type("seat", skip=("lobby",)))["data"]
        laid = "".join(d["board"][y][x] for x, y, _ in tiles)
        ctx.expect(
            laid == "".join(str(c) for *_, c in tiles),
            f"{n}: {move.word} ({'in' if move.word.upper() in lexicon else 'not in'} the kit's "
            f"word list) was taken off after a challenge: the board has {laid!r}",
        )
        ctx.expect(d["scores"][seat] == move.score, f"{n}: scores {d['scores']}")
        ctx.expect(
            d["players"][d["turn"]] == mover,
            f"{n}: after a wrong challenge the turn is {d['players'][d['turn']]}'s, not {mover}'s",
        )


def _santorini_action(action: santorini.Action) -> dict[str, Any]:
    """The engine's action as meeple-web/1 ``play`` (cells as [row, column])."""

    def at(c: int) -> list[int]:
        return list(santorini.coordinates(c))

    if isinstance(action, santorini.ChooseStarter):
        return {"kind": "starter", "player": action.starter}
    if isinstance(action, santorini.PlaceWorker):
        out: dict[str, Any] = {"kind": "place", "cell": at(action.cell)}
        if action.sex is not None:
            out["sex"] = action.sex.value
        return out
    if isinstance(action, santorini.Move):
        return {"kind": "move", "from": at(action.src), "to": at(action.dst)}
    if isinstance(action, santorini.Build):
        return {
            "kind": "build",
            "from": at(action.src),
            "to": at(action.dst),
            "level": action.level,
        }
    return {"kind": "pass"}


def _santorini_state(data: dict[str, Any]) -> santorini.GameState:
    """The position of a game without gods from a seat view (between turns)."""
    n = len(data["players"])
    rules = santorini.Rules(players=n, gods=False, auto_eliminate=False)
    workers: list[int | None] = [None] * (2 * n)
    for w in data["workers"]:
        workers[santorini.worker_of(int(w["owner"]), santorini.Sex(w["sex"]))] = int(w["cell"])
    return replace(
        santorini.new_game(rules, challenger=int(data["challenger"])),
        phase=santorini.Phase(data["phase"]),
        turn=int(data["turn"]),
        starter=data["starter"],
        levels=tuple(data["levels"]),
        domes=tuple(data["domes"]),
        workers=tuple(workers),
        alive=tuple(data["alive"]),
    )


def _legal_of(legal: dict[str, Any]) -> dict[str, Any]:
    """A ``legal`` object with its lists in one order, ``undo`` left out (the game's)."""
    return {
        k: sorted(map(repr, v)) if isinstance(v, list) else v
        for k, v in legal.items()
        if k != "undo"
    }


@check(
    "santorini-legal",
    "Santorini: what the seat may do (`legal`)",
    Level.MUST,
    "legal is the rules' (meeple's engine) for the seat on turn through the set-up and "
    "turns of play, null for the seat off turn",
)
@_shaped
async def _santorini_legal(ctx: Context) -> None:
    t = await game_table(ctx, ("zl1", "zl2"), "santorini")
    first = next(iter(t.views.values()))["data"]
    if first.get("gods_in_play"):
        raise CannotTest("a standard table with gods")
    state = _santorini_state(first)
    rng = random.Random(23)
    compared = played = 0
    for _ in range(24):
        data = next(iter(t.views.values()))["data"]
        if data.get("turn") is None or state.is_over:
            break
        for n, v in t.views.items():
            d = v["data"]
            if d["you"] != d["turn"]:
                ctx.expect(d.get("legal") is None, f"{n}, off turn: legal {d.get('legal')}")
                continue
            want = legal_view(state, state.turn)
            got = d.get("legal")
            ctx.expect(isinstance(got, dict), f"{n}, on turn: legal {got!r}")
            assert want is not None
            assert isinstance(got, dict)
            ctx.expect(
                _legal_of(got) == _legal_of(want),
                f"{n} in phase {d['phase']}: legal {json.dumps(got)[:300]}; the rules: "
                f"{json.dumps(want)[:300]}",
            )
            compared += 1
            played += bool(got.get("moves"))
        actions = [
            a
            for a in santorini.legal_actions(state)
            if not isinstance(a, santorini.Lose | santorini.Undo)
        ]
        if not actions:
            break
        action = rng.choice(actions)
        mover = t.seats[str(data["players"][state.turn])]
        await mover.say({"type": "play", "action": _santorini_action(action)})
        state, _ = santorini.advance(state, action)
        await next_views(t)
    ctx.expect(played > 0, f"no view with moves to compare ({compared} compared)")
    ctx.passed(f"{compared} views on turn compared, {played} of them with moves")

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
them with the server's ``fits`` and plays the engine's best one.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.frames import Frame, Opcode

from meeple.check.cmpn402 import WsPeer
from meeple.check.core import CannotTest, CheckFailed, Context, Level, registry
from meeple.check.wire import names
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

    async def error(self, ctx: Context, code: str, why: str) -> dict[str, Any]:
        m = await self.json(ctx.wait, f"error {code}")
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


async def hello(ctx: Context, label: str) -> WebPeer:
    p = await WebPeer.open(ctx, label)
    await p.say({"type": "hello", "protocol": PROTOCOL})
    welcome = await p.expect_type("welcome")
    if welcome.get("protocol") != PROTOCOL:
        raise CheckFailed(f"welcome {welcome}")
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


async def table(ctx: Context, tags: tuple[str, str]) -> Table:
    a_name, b_name = names(ctx, *tags)
    a = await hello(ctx, a_name)
    await a.say(
        {"type": "create", "game": "spectrangle", "variant": "standard", "size": 2, "name": a_name}
    )
    seated_a = await a.expect_type("seated")
    b = await hello(ctx, b_name)
    await b.say({"type": "sit", "table": seated_a["table"], "name": b_name})
    seated_b = await b.expect_type("seated")
    t = Table({a_name: a, b_name: b}, {a_name: seated_a, b_name: seated_b})
    for n, p in t.seats.items():
        t.views[n] = await p.expect_type("seat", skip=("lobby", "seated"), timeout=ctx.wait * 2)
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
    await t.seats[mover].say(
        {"type": "play", "action": {"kind": "place", "tile": best.tile.code, "index": best.index}}
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

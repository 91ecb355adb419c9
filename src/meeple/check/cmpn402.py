"""Conformance checks for CMPN402 referees (scrabble-cmpn402-websocket.md).

Sections are the spec's headings ("Websockets", "Scenarios: Play tiles", "State:
AWAIT_CHALLENGE", …) and "ERRATA" where only the ERRATA's reading fixes the rule. The
kit speaks WebSocket through the ``websockets`` library's sans-I/O client
(:class:`websockets.client.ClientProtocol`) over its own recorded TCP connection, so it
controls every byte: two frames in one TCP write, a frame split over many, a client
that never answers a ping. Messages are decoded with
:func:`meeple.protocols.cmpn402.decode_server`.

A CMPN402 referee seats two agents at a time and resumes a game whose agent dropped.
So every check that starts a game ends it before it lets go: both agents pass until
END (six scoreless turns, ERRATA), and a check that drops an agent brings it back
first. Run the kit against a referee that nobody else is using, which starts games by
itself (meeple: the default; not ``--manual-start``).

Moves come from meeple's engine (:func:`meeple.check.scrabble.best_move`), the PLAY's
claimed score is the engine's (ERRATA: the referee checks it), and the kit keeps both
racks, the board and the scores to grade what the referee says.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from meeple.check.core import (
    CannotTest,
    CheckFailed,
    Context,
    Differs,
    Fault,
    Level,
    registry,
    shared,
)
from meeple.check.scrabble import Table, best_move, non_word
from meeple.check.wire import Peer, missing, names
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import RuleError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move, Placement
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import BLANK, ENGLISH
from meeple.protocols.cmpn402 import (
    ChallengeAccepted,
    ChallengeAcceptedTimes,
    ChallengeMove,
    ChallengeRejected,
    ChallengeRejectedTiles,
    EndMessage,
    ExchangeMove,
    ExchangeNotice,
    ExchangeTiles,
    Invalid,
    MessageType,
    Name,
    NameRequest,
    NoChallenge,
    NoChallengeTiles,
    NoChallengeTimes,
    PassMove,
    PassNotice,
    PlayMove,
    PlayNotice,
    RemoteProtocolError,
    ServerMessage,
    Start,
    decode_server,
)

__all__ = [
    "SERVER_CHECKS",
    "WsPeer",
    "placed_play",
    "play_of",
    "ws_frame",
    "ws_frame_parts",
    "ws_units",
]

TRY_AGAIN_LATER = 1013  # ERRATA: a third connection is closed with 1013
MAX_WINDOW = 15.0  # the longest challenge window the kit waits out (s)
# A connection closed with 1013 ("try again later", which the spec allows) before NAME
# is tried again after a back-off, doubled each time: 0.1 + 0.2 + ... + 3.2 s at most.
RETRIES = 6
BACKOFF = 0.1
# The heartbeat checks' limit: this much for the set-up and the rejoin, plus
# HEARTBEAT_INTERVALS ping intervals (``--ping-interval``). The registered timeout is a
# ceiling (the kit refuses a ping interval that would not fit under it).
HEARTBEAT_BASE = 15.0
HEARTBEAT_INTERVALS = 4
HEARTBEAT_CEILING = 300.0
SIX_PASSES = "ERRATA (cmpn402): six scoreless turns end the game"
# The spec's framing rule (Websockets: binary messages): a check of it FAILs on text
# frames, every other check they stop could not test.
TEXT_FRAMES = Fault(
    "text WebSocket frames",
    "send every message as a binary frame (opcode 2): the spec's messages are bytes",
    sections=("Websockets",),
)
M = TypeVar("M")


class WsPeer:
    """A WebSocket client of the kit: binary messages in and out, pings seen."""

    def __init__(self, peer: Peer, uri: str) -> None:
        self.peer = peer
        self.protocol = ClientProtocol(parse_uri(uri), max_size=1 << 20)
        self.queue: list[bytes] = []
        self.pings = 0
        self.text_frames = 0
        self.silent = False  # writes nothing more (no pong either): a dead client
        self.closed_with: int | None = None
        self._opened = False
        self._reader: asyncio.Future[None] | None = None
        self._arrived = asyncio.Event()
        self.eof = False
        self.broken = ""

    @property
    def name(self) -> str:
        return self.peer.label

    @staticmethod
    def default_uri(ctx: Context) -> str:
        return f"ws://{ctx.target.host}:{ctx.target.port}/"

    @classmethod
    async def open(cls, ctx: Context, label: str, *, own_close: bool = True) -> Self:
        """Connect and shake hands; closed with the check (``own_close``) or by whoever
        holds it (a :class:`Game` closes its agents once the game is over)."""
        uri: str = ctx.target.options.get("uri", cls.default_uri(ctx))
        p = cls(await Peer.open(ctx, label, b""), uri)
        ctx.cleanups.remove(p.peer.close)  # closed by p.close: after the game's end
        if own_close:
            ctx.cleanups.append(p.close)
        p.protocol.send_request(p.protocol.connect())
        await p._flush()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ctx.wait
        while p.protocol.handshake_exc is None and not p._opened:
            left = deadline - loop.time()
            if left <= 0:
                raise CannotTest(f"no WebSocket handshake within {ctx.wait:g} s")
            if not await p._pump(left, "the handshake"):
                raise CannotTest("the server closed during the WebSocket handshake")
        if p.protocol.handshake_exc is not None:
            raise CannotTest(f"WebSocket handshake failed: {p.protocol.handshake_exc}")
        # From here a task reads all the time: pings are answered while the check waits
        # on the other agent (a referee drops an agent whose pong is late).
        p._reader = asyncio.ensure_future(p._read_forever())
        return p

    async def _read_forever(self) -> None:
        try:
            while await self._pump(3600.0, "anything"):
                self._arrived.set()
        except Exception as e:  # the connection broke: as closed
            self.broken = repr(e)
        finally:
            self.eof = True
            self._arrived.set()

    async def _flush(self) -> None:
        data = b"".join(self.protocol.data_to_send())
        if data and not self.silent:
            await self.peer.send(data)

    async def _pump(self, left: float, what: str) -> bool:
        try:
            more = await self.peer.fill(left)
        except TimeoutError:
            raise CheckFailed(f"{self.name}: {missing(what)} within {left:.1f} s") from None
        data = bytes(self.peer.buffer)
        self.peer.buffer.clear()
        if data:
            self.protocol.receive_data(data)
        if not more:
            self.protocol.receive_eof()
        for event in self.protocol.events_received():
            if isinstance(event, Response):
                self._opened = True
            elif isinstance(event, Frame):
                self.on_frame(event)
        with contextlib.suppress(OSError, CheckFailed):
            await self._flush()  # pongs, the close handshake
        return more

    def on_frame(self, frame: Frame) -> None:
        """One frame received: a binary one is a message (CMPN402), a text one not."""
        if frame.opcode is Opcode.PING:
            self.pings += 1
        elif frame.opcode is Opcode.TEXT:
            self.text_frames += 1
        elif frame.opcode is Opcode.BINARY:
            self.queue.append(bytes(frame.data))
        elif frame.opcode is Opcode.CLOSE:
            self.closed_with = self.protocol.close_code

    async def _wait(self, left: float) -> None:
        self._arrived.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._arrived.wait(), left)

    async def raw(self, timeout: float | None = None, what: str = "a message") -> bytes:
        """The next binary message's bytes; CheckFailed on timeout or close."""
        limit = self.peer.wait if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while not self.queue:
            if self.text_frames:
                raise CheckFailed(
                    f"{self.name}: a text frame (the spec: binary messages only)",
                    got=b"",
                    fault=TEXT_FRAMES,
                )
            if self.eof:
                code = self.closed_with or self.protocol.close_code
                raise CheckFailed(f"{self.name}: closed ({code}) while waiting for {what}")
            left = deadline - loop.time()
            if left <= 0:
                raise CheckFailed(f"{self.name}: {missing(what)} within {limit:g} s")
            await self._wait(left)
        return self.queue.pop(0)

    async def next(self, timeout: float | None = None, what: str = "a message") -> ServerMessage:
        data = await self.raw(timeout, what)
        try:
            return decode_server(data)
        except RemoteProtocolError as e:
            raise CheckFailed(f"{self.name}: not a CMPN402 message ({e}): {data[:40]!r}") from None

    async def expect(self, kind: type[M], timeout: float | None = None) -> M:
        m = await self.next(timeout, kind.__name__)
        if not isinstance(m, kind):
            raise CheckFailed(f"{self.name}: expected {kind.__name__}, got {m!r}"[:300])
        return m

    async def quiet(self, timeout: float) -> list[ServerMessage]:
        """Whatever arrives within ``timeout`` (no failure on silence or close)."""
        got: list[ServerMessage] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with contextlib.suppress(CheckFailed):
            while (left := deadline - loop.time()) > 0:
                got.append(await self.next(left))
        return got

    async def closed(self, timeout: float, *, eof: bool = False) -> int | None:
        """The close code if the server closes within ``timeout`` (0: closed, no code);
        with ``eof``, once it has closed the TCP connection too."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.eof and (eof or self.closed_with is None):
            left = deadline - loop.time()
            if left <= 0:
                return None
            await self._wait(left)
        return self.closed_with or self.protocol.close_code or 0

    def frames(self, *messages: bytes, text: bool = False) -> bytes:
        """The bytes of ``messages`` as binary (or text) frames, masked as a client's
        are; CheckFailed once the connection is closing (the server closed it)."""
        try:
            for m in messages:
                if text:
                    self.protocol.send_text(m)
                else:
                    self.protocol.send_binary(m)
        except InvalidState:
            code = self.closed_with or self.protocol.close_code
            raise CheckFailed(f"{self.name}: the server closed the connection ({code})") from None
        return b"".join(self.protocol.data_to_send())

    async def send(self, message: Any, *, bytewise: bool = False) -> None:
        data = message if isinstance(message, bytes) else message.encode()
        await self.peer.send(self.frames(data), bytewise=bytewise)

    async def send_together(self, *messages: Any) -> None:
        """Several messages as frames in one TCP write."""
        raw = [m if isinstance(m, bytes) else m.encode() for m in messages]
        await self.peer.send(self.frames(*raw))

    async def close(self) -> None:
        """Close with 1000 and wait (up to the peer's wait) until the referee has closed
        its side: it has then seen the close, and the next check's connections do not
        find this one's seat still taken (the course's referee refuses them, 1013)."""
        with contextlib.suppress(Exception):
            if not self.silent and not self.eof:
                self.protocol.send_close(1000)
                await self._flush()
                if self._reader is not None:
                    await self.closed(self.peer.wait, eof=True)
        if self._reader is not None:
            self._reader.cancel()
        await self.peer.close()


def ws_units(buffer: bytes) -> tuple[list[bytes], bytes]:
    """A WebSocket byte stream cut into units: the HTTP head (up to its empty line),
    then whole frames (masked or not); the unfinished rest. For relays that look at or
    reshape frames (the client kit's, the tests' broken referees)."""
    units: list[bytes] = []
    at = 0
    if buffer.startswith((b"GET ", b"HTTP/")):
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return units, buffer
        units.append(buffer[: end + 4])
        at = end + 4
    while len(buffer) - at >= 2:
        size = buffer[at + 1] & 0x7F
        head = 2
        if size == 126:
            head = 4
        elif size == 127:
            head = 10
        if len(buffer) - at < head:
            break
        if size >= 126:
            size = int.from_bytes(buffer[at + 2 : at + head], "big")
        if buffer[at + 1] & 0x80:
            head += 4
        if len(buffer) - at < head + size:
            break
        units.append(buffer[at : at + head + size])
        at += head + size
    return units, buffer[at:]


def ws_frame_parts(unit: bytes) -> tuple[int, bytes] | None:
    """A frame's opcode and (unmasked) payload; None for the HTTP head."""
    if unit.startswith((b"GET ", b"HTTP/")) or len(unit) < 2:
        return None
    size = unit[1] & 0x7F
    head = 2 if size < 126 else 4 if size == 126 else 10
    payload = unit[head:]
    if unit[1] & 0x80:
        mask, payload = payload[:4], payload[4:]
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return unit[0] & 0x0F, payload


def ws_frame(opcode: int, payload: bytes, mask: bytes | None = None) -> bytes:
    """One final frame (masked with ``mask``, as a client's, if given)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, n | (0x80 if mask else 0)))
    elif n < 65536:
        head = bytes((0x80 | opcode, 126 | (0x80 if mask else 0))) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 127 | (0x80 if mask else 0))) + n.to_bytes(8, "big")
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return head + mask + payload
    return head + payload


def placed_play(board: Board, rack: str) -> PlayMove | None:
    """A one-tile PLAY beside the tiles on ``board``, scored by the engine with no word
    looked up (ERRATA: the referee checks words only on CHALLENGE, so it must take it at
    PLAY time): a PLAY for an agent whose rack makes no word. None for blanks only."""
    letters = [c for c in rack if c != BLANK]
    if not letters:
        return None
    for y in range(board.size):
        for x in range(board.size):
            if not board.is_empty_at(x, y):
                continue
            try:
                result = validate_play(board, (Placement(y=y, x=x, tile=letters[0]),))
            except RuleError:
                continue
            return PlayMove(x + 1, y + 1, 0, letters[0], result.score)
    return None


def play_of(move: Move) -> PlayMove:
    """The engine's move as PLAY: the new tiles in board order from the first (ERRATA)."""
    tiles = sorted(move.tiles, key=lambda p: (p.y, p.x))
    first = tiles[0]
    direction = 0 if move.direction is Direction.ACROSS else 1
    return PlayMove(first.x + 1, first.y + 1, direction, "".join(p.tile for p in tiles), move.score)


# --- the set-up -----------------------------------------------------------------------


def _lexicon(ctx: Context) -> Lexicon:
    lexicon: Lexicon | None = ctx.target.options.get("lexicon")
    if lexicon is None:
        raise CannotTest("no lexicon")
    return lexicon


async def named(ctx: Context, name: str, *, own_close: bool = True) -> WsPeer:
    """A connection that got NAME and answered with ``name``. A referee that closes it
    with 1013 ("try again later": the spec allows it, e.g. while it still holds the
    seats of the last check's agents) is tried again after a back-off, RETRIES times."""
    with ctx.setup(f"NAME {name}", "State: INIT"):
        delay = BACKOFF
        for attempt in range(RETRIES + 1):
            p = await WsPeer.open(ctx, name, own_close=own_close)
            try:
                request = await p.next(ctx.wait, "NAME")
                break
            except CheckFailed:
                code = p.closed_with or p.protocol.close_code
                if code != TRY_AGAIN_LATER or attempt == RETRIES:
                    raise
            await p.close()
            await asyncio.sleep(delay)
            delay *= 2
        if attempt:
            ctx.notes.append(f"{name}: closed with 1013 {attempt}x, connected after a back-off")
        if not isinstance(request, NameRequest):
            raise CheckFailed(f"{name}: the first message is {request!r}, not NAME"[:200])
        await p.send(Name(name))
    return p


@dataclass
class Game:
    """Both agents of a game the kit plays, after START."""

    peers: dict[str, WsPeer]
    starts: dict[str, Start]
    table: Table
    turn: str
    window: bool = False  # a PLAY awaits NO_CHALLENGE or CHALLENGE from the other
    ended: bool = False
    ends: dict[str, EndMessage] = field(default_factory=dict)

    @property
    def mover(self) -> WsPeer:
        return self.peers[self.turn]

    @property
    def other(self) -> WsPeer:
        return next(p for n, p in self.peers.items() if n != self.turn)

    def swap(self) -> None:
        self.turn = self.other.name

    async def pass_turn(self) -> None:
        """The mover passes; the other hears of it; the turn goes over."""
        await self.mover.send(PassMove())
        await self.other.expect(PassNotice)
        self.swap()

    async def finish(self, ctx: Context) -> None:
        """End the game so the referee does not keep it to resume: pass until END."""
        if self.window:
            await self.other.send(NoChallenge())
            self.window = False
            self.swap()
        for _ in range(16):
            if self.ended:
                return
            await self.mover.send(PassMove())
            try:
                m = await self.other.next(0.3, "PASS")
            except CheckFailed:
                self.swap()  # the kit's idea of the turn was wrong: the other passes
                continue
            if isinstance(m, EndMessage):
                self.ended = True
            elif isinstance(m, PassNotice):
                self.swap()

    async def rejoin(self, ctx: Context, name: str) -> dict[str, Start]:
        """``name`` connects again and names itself; the game resumes: each one's START."""
        self.peers[name] = await named(ctx, name, own_close=False)
        return {n: await p.expect(Start) for n, p in self.peers.items()}

    async def close(self, ctx: Context) -> None:
        with contextlib.suppress(CheckFailed, OSError):
            await self.finish(ctx)
        for p in self.peers.values():
            await p.close()


async def game(ctx: Context, tags: tuple[str, str]) -> Game:
    a_name, b_name = names(ctx, *tags)
    a = await named(ctx, a_name)
    b = await named(ctx, b_name)
    peers = {a_name: a, b_name: b}
    starts: dict[str, Start] = {}
    with ctx.setup("START to both", "State: READY"):
        for n, p in peers.items():
            m = await p.next(ctx.wait, "START")
            if not isinstance(m, Start):
                raise CheckFailed(f"{n}: after NAME from both, {m!r} instead of START"[:200])
            starts[n] = m
        first = [n for n, s in starts.items() if s.order == 1]
        if len(first) != 1:
            raise CheckFailed(f"START orders {[s.order for s in starts.values()]}: not one 1st")
    if any("".join(row) != "." * 15 for s in starts.values() for row in s.board):
        raise CannotTest("the referee resumed a game (START with tiles on the board)")
    table = Table(ENGLISH, _lexicon(ctx), list(peers))
    for n, s in starts.items():
        table.racks[n] = "".join(sorted(s.tiles))
    g = Game(peers, starts, table, first[0])
    # Registered after the peers: runs before their closes (cleanups run last first).
    ctx.cleanups.append(lambda: g.close(ctx))
    return g


async def play_best(ctx: Context, g: Game) -> tuple[PlayMove, dict[str, ServerMessage]]:
    """The mover plays the engine's best move; what each agent gets first."""
    move = best_move(g.table.board, g.table.racks[g.turn], _lexicon(ctx), ENGLISH)
    if move is None:
        raise CannotTest("no move for the first rack")
    play = play_of(move)
    await g.mover.send(play)
    got = {g.other.name: await g.other.next(ctx.wait, "the PLAY echo")}
    g.window = isinstance(got[g.other.name], PlayNotice)
    return play, got


# --- the checks ------------------------------------------------------------------------

SERVER_CHECKS, check = registry("cmpn402.server")


@check("name", "State: INIT", Level.MUST, "a new connection gets NAME (the single byte 0)")
async def _name(ctx: Context) -> None:
    (name,) = names(ctx, "n")
    p = await WsPeer.open(ctx, name)
    data = await p.raw(ctx.wait, "NAME")
    ctx.expect(data == b"\x00", f"the first message is {data[:20]!r}")


@check(
    "binary",
    "Websockets",
    Level.MUST,
    "every message is a binary WebSocket message (no text frames)",
)
async def _binary(ctx: Context) -> None:
    g = await game(ctx, ("ba", "bb"))
    await g.pass_turn()
    ctx.expect(
        all(p.text_frames == 0 for p in g.peers.values()),
        "a text frame from the referee",
    )


@check(
    "start",
    "State: READY",
    Level.MUST,
    "two named agents get START: orders 1 and 2, 7 tiles, an empty board, 0 0, times",
)
async def _start(ctx: Context) -> None:
    g = await game(ctx, ("sa", "sb"))
    orders = sorted(s.order for s in g.starts.values())
    ctx.expect(orders == [1, 2], f"orders {orders}")
    for n, s in g.starts.items():
        ctx.expect(len(s.tiles) == 7, f"{n}: {len(s.tiles)} tiles")
        ctx.expect((s.score, s.opponent_score) == (0, 0), f"{n}: scores {s.score}")
        ctx.expect(s.player_time > 0 and s.total_time > 0, f"{n}: times {s.player_time}")
    bag = 100 - sum(len(s.tiles) for s in g.starts.values())
    ctx.expect(bag == 86, f"{100 - bag} tiles dealt")


@check(
    "third-connection",
    "ERRATA (cmpn402): connections",
    Level.SHOULD,
    "a third connection is closed with 1013 (Try Again Later)",
    errata="CMPN402: a third connection is closed with WebSocket close code 1013",
)
async def _third(ctx: Context) -> None:
    await game(ctx, ("ta", "tb"))
    (name,) = names(ctx, "tc")
    try:
        p = await WsPeer.open(ctx, name)
    except CannotTest:
        ctx.passed("refused at the handshake")
        return
    code = await p.closed(ctx.wait)
    ctx.expect(code == TRY_AGAIN_LATER, f"the third connection: close code {code}")


@check(
    "pass",
    "Scenarios: Passing a turn",
    Level.MUST,
    "PASS from the player on turn: the other gets PASS with its times",
)
async def _pass(ctx: Context) -> None:
    g = await game(ctx, ("pa", "pb"))
    other = g.other.name
    await g.mover.send(PassMove())
    notice = await g.other.expect(PassNotice)
    g.swap()
    start = g.starts[other]
    ctx.expect(notice.player_time > 0 and notice.total_time > 0, f"{other}: {notice}")
    ctx.expect(notice.total_time <= start.total_time, f"the game clock went up: {notice}")


@check(
    "clocks",
    "State: IDLE",
    Level.MUST,
    "the clocks: the mover's and the game's run, the waiting player's stands",
)
async def _clocks(ctx: Context) -> None:
    g = await game(ctx, ("ka", "kb"))
    other, mover = g.other.name, g.turn
    await asyncio.sleep(0.5)
    await g.mover.send(PassMove())
    notice = await g.other.expect(PassNotice)
    g.swap()
    waited = g.starts[other]
    ctx.expect(
        abs(notice.player_time - waited.player_time) <= 100,
        f"{other}'s clock moved while it waited: {waited.player_time} → {notice.player_time}",
    )
    ctx.expect(
        notice.total_time <= waited.total_time - 400,
        f"the game clock did not run: {waited.total_time} → {notice.total_time} after 0.5 s",
    )
    await g.mover.send(PassMove())
    back = await g.peers[mover].expect(PassNotice)
    g.swap()
    ctx.expect(
        back.player_time <= g.starts[mover].player_time - 400,
        f"{mover}'s clock did not run while it thought 0.5 s: {back.player_time}",
    )


@check(
    "exchange",
    "Scenarios: Exchanging tiles",
    Level.MUST,
    "EXCHANGE: new tiles to the exchanger, the count and times to the other",
)
async def _exchange(ctx: Context) -> None:
    g = await game(ctx, ("xa", "xb"))
    rack = g.table.racks[g.turn]
    give = rack[:3]
    await g.mover.send(ExchangeMove(give))
    mine = await g.mover.expect(ExchangeTiles)
    theirs = await g.other.expect(ExchangeNotice)
    g.swap()
    ctx.expect(len(mine.tiles) == 3, f"{len(mine.tiles)} new tiles for 3 given")
    ctx.expect(theirs.count == 3, f"the other is told {theirs.count}")
    ctx.expect(theirs.player_time > 0 and theirs.total_time > 0, f"times {theirs}")


@check(
    "exchange-invalid",
    "State: IDLE",
    Level.MUST,
    "EXCHANGE of tiles not held: INVALID with the mover's times",
)
async def _exchange_invalid(ctx: Context) -> None:
    g = await game(ctx, ("ia", "ib"))
    rack = g.table.racks[g.turn]
    absent = next(c for c in "QZXJKVW" if c not in rack) * 2
    await g.mover.send(ExchangeMove(absent))
    got = await g.mover.expect(Invalid)
    ctx.expect(got.player_time > 0 and got.total_time > 0, f"INVALID {got}")


@dataclass
class Played:
    game: Game
    play: PlayMove
    echo: PlayNotice


async def _played(ctx: Context, tags: tuple[str, str]) -> Played:
    g = await game(ctx, tags)
    play, got = await play_best(ctx, g)
    echo = got[g.other.name]
    if not isinstance(echo, PlayNotice):
        raise CheckFailed(f"{g.other.name} got {echo!r} for a legal PLAY, not its echo"[:200])
    return Played(g, play, echo)


@check(
    "play",
    "Scenarios: Play tiles",
    Level.MUST,
    "a legal PLAY is echoed to the other with the challenge time and its times",
)
async def _play(ctx: Context) -> None:
    pl = await _played(ctx, ("la", "lb"))
    e, p = pl.echo, pl.play
    ctx.expect(
        (e.column, e.row, e.direction, e.tiles, e.score)
        == (p.column, p.row, p.direction, p.tiles, p.score),
        f"the echo {e} of {p}",
    )
    ctx.expect(e.challenge_time > 0, f"challenge time {e.challenge_time}")
    ctx.expect(e.player_time > 0 and e.total_time > 0, f"times {e}")


@check(
    "no-challenge",
    "State: AWAIT_CHALLENGE",
    Level.MUST,
    "NO_CHALLENGE: the player gets NO_CHALLENGE with its new tiles",
)
async def _no_challenge(ctx: Context) -> None:
    pl = await _played(ctx, ("ma", "mb"))
    g = pl.game
    await g.other.send(NoChallenge())
    g.window = False
    got = await g.mover.expect(NoChallengeTiles)
    g.swap()
    ctx.expect(len(got.tiles) == len(pl.play.tiles), f"{got.tiles!r} for {pl.play.tiles!r}")


@check(
    "challenge-rejected",
    "State: AWAIT_CHALLENGE",
    Level.MUST,
    "CHALLENGE of good words: CHALLENGE_REJECTED to both, new tiles and times to the player",
)
async def _challenge_rejected(ctx: Context) -> None:
    pl = await _played(ctx, ("ra", "rb"))
    g = pl.game
    challenger, player = g.other, g.mover
    await challenger.send(ChallengeMove())
    g.window = False  # rejected: the challenger loses its turn, the player moves again
    mine = await player.next(ctx.wait, "CHALLENGE_REJECTED")
    if isinstance(mine, ChallengeAccepted | ChallengeAcceptedTimes):
        raise CannotTest("the referee's lexicon refused the kit's word (name it: --lexicon)")
    ctx.expect(isinstance(mine, ChallengeRejectedTiles), f"the player got {mine!r}"[:200])
    theirs = await challenger.expect(ChallengeRejected)
    ctx.expect(theirs is not None, "")


@check(
    "challenge-accepted",
    "State: AWAIT_CHALLENGE",
    Level.MUST,
    "CHALLENGE of a phony: CHALLENGE_ACCEPTED to both (times to the challenger)",
    errata="CMPN402: the server does not check words at PLAY time, only on CHALLENGE",
)
async def _challenge_accepted(ctx: Context) -> None:
    g = await game(ctx, ("ca", "cb"))
    rack = g.table.racks[g.turn]
    phony = non_word(rack, _lexicon(ctx))
    if phony is None:
        raise CannotTest(f"every two tiles of {rack!r} make a word")
    tiles = (Placement(7, 7, phony[0]), Placement(8, 7, phony[1]))
    score = validate_play(g.table.board, tiles, tile_set=ENGLISH).score
    await g.mover.send(PlayMove(8, 8, 0, phony, score))
    echo = await g.other.next(ctx.wait, "the PLAY echo")
    if isinstance(echo, Invalid):
        raise CheckFailed("a phony PLAY was refused at PLAY time (ERRATA: only on CHALLENGE)")
    ctx.expect(isinstance(echo, PlayNotice), f"{g.other.name} got {echo!r}"[:200])
    await g.other.send(ChallengeMove())
    theirs = await g.other.expect(ChallengeAcceptedTimes)
    mine = await g.mover.expect(ChallengeAccepted)
    g.swap()  # the play is taken back; the challenger moves
    ctx.expect(theirs.player_time > 0 and mine is not None, f"times {theirs}")


@check(
    "challenge-timeout",
    "State: AWAIT_CHALLENGE",
    Level.MUST,
    "no reply in the challenge window: NO_CHALLENGE to both; the clocks stood still",
    timeout=MAX_WINDOW + 10,
)
async def _challenge_timeout(ctx: Context) -> None:
    pl = await _played(ctx, ("wa", "wb"))
    g = pl.game
    window = pl.echo.challenge_time / 1000
    if window > MAX_WINDOW:
        raise CannotTest(f"the challenge window is {window:g} s (the kit waits {MAX_WINDOW:g})")
    challenger = await g.other.expect(NoChallengeTimes, timeout=window + 2)
    player = await g.mover.expect(NoChallengeTiles, timeout=2)
    g.window = False
    g.swap()
    ctx.expect(len(player.tiles) == len(pl.play.tiles), f"new tiles {player.tiles!r}")
    ctx.expect(
        abs(challenger.total_time - pl.echo.total_time) <= 200,
        f"the game clock ran in the window: {pl.echo.total_time} → {challenger.total_time}",
    )


@check(
    "play-score",
    "ERRATA (cmpn402): PLAY",
    Level.MUST,
    "a PLAY claiming the wrong score is INVALID",
    errata="CMPN402: the claimed score is checked against the server's own scoring",
)
async def _play_score(ctx: Context) -> None:
    g = await game(ctx, ("sc", "sd"))
    move = best_move(g.table.board, g.table.racks[g.turn], _lexicon(ctx), ENGLISH)
    if move is None:
        raise CannotTest("no move for the first rack")
    play = play_of(move)
    await g.mover.send(PlayMove(play.column, play.row, play.direction, play.tiles, play.score + 7))
    await g.mover.expect(Invalid)
    ctx.expect(not await g.other.quiet(0.2), "the other agent was told of the refused PLAY")


@check(
    "play-invalid",
    "State: IDLE",
    Level.MUST,
    "a PLAY off the centre on the first turn is INVALID, and the player may play again",
)
async def _play_invalid(ctx: Context) -> None:
    g = await game(ctx, ("va", "vb"))
    rack = g.table.racks[g.turn]
    letters = rack.replace("?", "")[:2] or "AA"
    await g.mover.send(PlayMove(1, 1, 0, letters, 2))
    await g.mover.expect(Invalid)
    await g.pass_turn()
    ctx.passed()


@check(
    "out-of-turn",
    "State: IDLE",
    Level.MUST,
    "a move from the player not on turn changes nothing (the spec has no reply for it)",
)
async def _out_of_turn(ctx: Context) -> None:
    g = await game(ctx, ("oa", "ob"))
    await g.other.send(PassMove())
    heard = await g.mover.quiet(0.4)
    ctx.expect(not heard, f"the player on turn got {heard[:1]!r}"[:200])
    await g.pass_turn()


async def six_passes(ctx: Context, g: Game) -> dict[str, EndMessage]:
    """Six scoreless turns (passes), then each agent's END. That they end the game is the
    ERRATA's rule only (the spec names no such end): a referee that sends no END is
    :class:`Differs`, and so is one whose END gives another reason than 0. A referee
    that ends the game for one agent only breaks the spec's own rule (END to both)."""
    with ctx.setup("five passes", "Scenarios: Passing a turn"):
        for _ in range(5):
            await g.pass_turn()
    await g.mover.send(PassMove())
    g.swap()
    ends: dict[str, EndMessage] = {}
    loop = asyncio.get_running_loop()
    for n, p in g.peers.items():
        deadline = loop.time() + ctx.wait  # the sixth PASS told, then END
        while n not in ends and (left := deadline - loop.time()) > 0:
            try:
                m = await p.next(left, "END")
            except CheckFailed:
                break
            if isinstance(m, EndMessage):
                ends[n] = m
    if not ends:
        raise Differs(
            "six scoreless turns did not end the game (no END within "
            f"{ctx.wait:g} s): {SIX_PASSES}, the spec names no such end"
        )
    g.ended = True
    g.ends.update(ends)
    missing = [n for n in g.peers if n not in ends]
    if missing:
        raise CheckFailed(f"END to {sorted(ends)} only, none to {missing} (END to both)")
    return ends


@check(
    "end",
    "State: * ANY",
    Level.MUST,
    "END goes to both agents with the same final scores (after six scoreless turns, ERRATA)",
    errata=SIX_PASSES + " with END reason 0",
)
async def _end(ctx: Context) -> None:
    g = await game(ctx, ("ea", "eb"))
    ends = await six_passes(ctx, g)
    ea, eb = ends.values()
    ctx.expect(
        (ea.score, ea.opponent_score) == (eb.opponent_score, eb.score),
        f"the two ENDs disagree: {ea} / {eb}",
    )
    reasons = sorted({int(e.reason) for e in ends.values()})
    if reasons != [0]:
        raise Differs(f"six scoreless turns ended the game with END reason {reasons}, not 0")


@check(
    "late-move",
    "State: * ANY",
    Level.MUST,
    "a PLAY sent after END is not scored: the other agent hears nothing of it",
    errata=SIX_PASSES + " (the check ends its game so)",
)
async def _late_move(ctx: Context) -> None:
    g = await game(ctx, ("za", "zb"))
    move = best_move(g.table.board, g.table.racks[g.turn], _lexicon(ctx), ENGLISH)
    try:
        with ctx.setup("six passes to end the game", SIX_PASSES):
            await six_passes(ctx, g)
    except Differs as e:
        raise CannotTest(f"the check ends its game by the ERRATA's rule; here {e}") from None
    if move is None:
        raise CannotTest("no move to send late")
    await g.mover.send(play_of(move))
    heard = await g.other.quiet(0.6)
    ctx.expect(
        not any(isinstance(m, PlayNotice) for m in heard),
        f"the late PLAY was echoed to the other agent: {heard[:1]!r}"[:200],
    )
    starts = [m for m in heard if isinstance(m, Start)]
    ctx.expect(
        all((s.score, s.opponent_score) == (0, 0) for s in starts),
        f"the next game starts with the late PLAY's score: {starts[:1]!r}"[:200],
    )


RACE_READING = (
    "meeple's reading: the game is over once the PLAY that used the "
    "last tiles stands, so a PLAY behind its NO_CHALLENGE, in the same write, arrives in "
    "READY and is ignored"
)


async def _heard_until_end(ctx: Context, g: Game) -> dict[str, list[ServerMessage]]:
    """What each agent hears until its END (a whole move's replies: 3 × ``--wait``),
    then half a second more: what a referee sends after END shows there."""
    heard: dict[str, list[ServerMessage]] = {n: [] for n in g.peers}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 3 * ctx.wait
    for n, p in g.peers.items():
        while not any(isinstance(m, EndMessage) for m in heard[n]):
            if (left := deadline - loop.time()) <= 0:
                break
            try:
                heard[n].append(await p.next(left, "END"))
            except CheckFailed:
                break
    for n, p in g.peers.items():
        heard[n] += await p.quiet(0.5)
    return heard


def _kinds(messages: list[ServerMessage]) -> str:
    """The messages' types as the spec names them: "NO_CHALLENGE, END"."""
    return ", ".join(MessageType(m.encode()[0]).name for m in messages) or "nothing"


@check(
    "end-race",
    "State: * ANY",
    Level.MUST,
    "a PLAY in the same write as the NO_CHALLENGE that ends the game: END to both, and the "
    "PLAY not taken after END",
    timeout=60.0,
    errata="CMPN402 (proposed): a move behind the game-ending answer is ignored",
)
async def _end_race(ctx: Context) -> None:
    """Spec, AWAIT_AGENT_CHALLENGE → THINKING: an agent answers the window and may play at
    once, before it can read END. The tables decide the end: the PLAY that used the last
    tiles stands on NO_CHALLENGE, the game-ending condition (END reason 0, all tiles used)
    sends END to both and the referee is READY, which takes no PLAY. They do not say
    whether a referee reads the rest of the write before it sees the end: a referee that
    takes the PLAY first differs; one that answers it after its END fails."""
    with ctx.setup("a whole game up to the PLAY that uses the last tiles", "Scenarios: Play tiles"):
        r = await _whole_game(ctx, ("gr1", "gr2"), to_the_last_play=True)
    g = r.game
    assert g is not None
    if r.out is None:
        raise CannotTest("the game ended without a PLAY that used the last tiles")
    t = g.table
    out, racer = g.turn, g.other.name
    final = t.final_scores()
    move = best_move(t.board, t.racks[racer], _lexicon(ctx), ENGLISH)
    late = play_of(move) if move is not None else placed_play(t.board, t.racks[racer])
    if late is None:
        raise CannotTest(f"{racer} holds only blanks: no PLAY to send behind its NO_CHALLENGE")
    if move is None:
        ctx.notes.append(f"{racer}'s rack makes no word: its PLAY is {late.tiles} alone")
    await g.other.send_together(NoChallenge(), late)  # two frames, one TCP write
    g.window = False
    heard = await _heard_until_end(ctx, g)
    told = "; ".join(f"{n} got {_kinds(ms)}" for n, ms in heard.items())
    ends = {n: [m for m in ms if isinstance(m, EndMessage)] for n, ms in heard.items()}
    g.ended = all(ends.values())
    differs: list[str] = []
    for n, ms in heard.items():
        if not ends[n]:
            continue
        after = ms[ms.index(ends[n][0]) + 1 :]
        went_on = any(isinstance(m, PlayNotice | EndMessage) for m in after) or any(
            isinstance(m, Start) and (m.score, m.opponent_score) != (0, 0) for m in after
        )  # echoed, a second END, or the next game's START counting it
        ctx.expect(
            not went_on,
            f"after END the referee went on with {racer}'s PLAY: {n} got {_kinds(after)} "
            f"(the game is over: READY takes no PLAY); {told}",
        )
    if not g.ended:
        if any(isinstance(m, PlayNotice) for m in heard[out]):
            raise Differs(
                f"the referee took {racer}'s PLAY and played on: {told}, no END to "
                f"{[n for n in ends if not ends[n]]} within {3 * ctx.wait:g} s; {RACE_READING}"
            )
        ctx.fail(
            f"no END to {[n for n in ends if not ends[n]]} after the PLAY that used the last "
            f"tiles stood (END reason 0, all tiles used, goes to both); {told}"
        )
    before = heard[out][: heard[out].index(ends[out][0])]
    if any(isinstance(m, PlayNotice) for m in before):
        differs.append(f"{out} got {racer}'s PLAY before END ({_kinds(heard[out])})")
    if any(isinstance(m, Invalid) for m in heard[racer]):
        differs.append(f"{racer}'s PLAY was answered INVALID ({_kinds(heard[racer])})")
    end = ends[racer][0]
    if end.score > final[racer]:
        differs.append(
            f"{racer}'s END gives {end.score}-{end.opponent_score}: its PLAY counted (the "
            f"standard end without it: {final[racer]}-{final[out]})"
        )
    elif (end.score, end.opponent_score) != (final[racer], final[out]):
        ctx.notes.append(
            f"END {end.score}-{end.opponent_score}, the standard end {final[racer]}-"
            f"{final[out]} (game-end's rule)"
        )
    if differs:
        raise Differs("; ".join(differs) + f"; {RACE_READING}")
    ctx.passed()


@check(
    "disconnect",
    "Scenarios: Disconnection",
    Level.MUST,
    "an agent dropping mid-game: the other gets END reason 2",
)
async def _disconnect(ctx: Context) -> None:
    g = await game(ctx, ("da", "db"))
    gone = g.other
    await gone.close()
    end = await g.mover.expect(EndMessage)
    ctx.expect(int(end.reason) == 2, f"END reason {int(end.reason)}")
    # Back and out again properly, so the referee holds no game for the next check.
    await g.rejoin(ctx, gone.name)


@check(
    "resume",
    "Scenarios: Disconnection",
    Level.MUST,
    "the dropped agent reconnects and names itself: START to both with the checkpoint",
    errata="CMPN402: after a disconnect both agents receive START with the checkpoint state",
)
async def _resume(ctx: Context) -> None:
    g = await game(ctx, ("ra1", "rb1"))
    # A scoring move first, so the checkpoint is not the empty start.
    play, got = await play_best(ctx, g)
    if not isinstance(got[g.other.name], PlayNotice):
        raise CheckFailed(f"a legal PLAY got {got!r}"[:200])
    await g.other.send(NoChallenge())
    g.window = False
    await g.mover.expect(NoChallengeTiles)
    scorer, gone = g.turn, g.other
    g.swap()
    await gone.close()
    await g.peers[scorer].expect(EndMessage)
    starts = await g.rejoin(ctx, gone.name)
    s = starts[scorer]
    ctx.expect(
        (s.score, s.opponent_score) == (play.score, 0),
        f"{scorer} resumes with {s.score}-{s.opponent_score}, scored {play.score}",
    )
    tiles_on_board = sum(c != "." for row in s.board for c in row)
    ctx.expect(tiles_on_board == len(play.tiles), f"{tiles_on_board} tiles on the board")
    g.turn = next(n for n, st in starts.items() if st.order == 1)


@check(
    "heartbeat-ping",
    "Websockets",
    Level.MUST,
    "the referee pings every agent (the heartbeat)",
    timeout=HEARTBEAT_CEILING,
)
async def _ping(ctx: Context) -> None:
    async with _heartbeat_limit(ctx) as interval:
        (name,) = names(ctx, "hp")
        p = await named(ctx, name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 2 * interval + 0.5
        while p.pings == 0 and not p.eof and (left := deadline - loop.time()) > 0:
            await p._wait(left)
        ctx.expect(p.pings >= 1, f"no ping in {2 * interval + 0.5:g} s")


def _ping_interval(ctx: Context) -> float:
    """The referee's ping interval (``--ping-interval``, the ERRATA's 1 s by default)."""
    interval = float(ctx.target.options.get("ping_interval", 1.0))
    if HEARTBEAT_BASE + HEARTBEAT_INTERVALS * interval > HEARTBEAT_CEILING:
        raise CannotTest(f"a ping interval of {interval:g} s is longer than the kit waits")
    return interval


@contextlib.asynccontextmanager
async def _heartbeat_limit(ctx: Context) -> AsyncIterator[float]:
    """The heartbeat checks' own limit, scaled with the referee's ping interval (a fixed
    15 s FAILed them against a referee pinging every 8 s); yields the interval."""
    interval = _ping_interval(ctx)
    limit = HEARTBEAT_BASE + HEARTBEAT_INTERVALS * interval
    try:
        async with asyncio.timeout(limit):
            yield interval
    except TimeoutError:
        raise CheckFailed(
            f"the scenario did not finish within {limit:g} s "
            f"({HEARTBEAT_BASE:g} s and {HEARTBEAT_INTERVALS} ping intervals of {interval:g} s)",
            got=b"",
        ) from None


@check(
    "heartbeat-drop",
    "Websockets",
    Level.MUST,
    "an agent that answers no ping is dropped: the other gets END reason 2",
    timeout=HEARTBEAT_CEILING,
)
async def _drop(ctx: Context) -> None:
    async with _heartbeat_limit(ctx) as interval:
        g = await game(ctx, ("hd", "he"))
        dead = g.other
        dead.silent = True
        end = await g.mover.expect(EndMessage, timeout=3 * interval + 2)
        ctx.expect(int(end.reason) == 2, f"END reason {int(end.reason)}")
        await g.rejoin(ctx, dead.name)


# --- framing ----------------------------------------------------------------------------


@check(
    "coalesced",
    "Websockets",
    Level.MUST,
    "two frames in one TCP write are both acted on",
)
async def _coalesced(ctx: Context) -> None:
    g = await game(ctx, ("co", "cp"))
    rack = g.table.racks[g.turn]
    absent = next(c for c in "QZXJKVW" if c not in rack) * 2
    await g.mover.send_together(ExchangeMove(absent), PassMove())
    await g.mover.expect(Invalid)
    await g.other.expect(PassNotice)
    g.swap()
    ctx.passed()


@check(
    "split",
    "Websockets",
    Level.MUST,
    "a frame sent one byte per write is understood",
)
async def _split(ctx: Context) -> None:
    g = await game(ctx, ("sp", "sq"))
    await g.mover.send(PassMove(), bytewise=True)
    await g.other.expect(PassNotice)
    g.swap()
    ctx.passed()


@check(
    "malformed",
    "State: IDLE",
    Level.SHOULD,
    "a malformed PLAY from the player on turn is INVALID, and the game goes on",
)
async def _malformed(ctx: Context) -> None:
    g = await game(ctx, ("mf", "mg"))
    await g.mover.send(b"\x04\x00\x10\x02")
    got = await g.mover.quiet(0.5)
    ctx.expect(any(isinstance(m, Invalid) for m in got), f"got {got[:1]!r}"[:200])
    await g.pass_turn()


# --- a whole game -----------------------------------------------------------------------


@dataclass
class WholeGame:
    ends: dict[str, EndMessage]
    scores: dict[str, int]
    final: dict[str, int]
    refused: list[str]
    turns: int
    game: Game | None = None
    out: PlayMove | None = None  # the play that used the last tiles, its window open


async def _whole_game(
    ctx: Context, tags: tuple[str, str] = ("wg1", "wg2"), *, to_the_last_play: bool = False
) -> WholeGame:
    """A whole game of the engine's best moves, every PLAY answered NO_CHALLENGE. With
    ``to_the_last_play`` it stops at the PLAY that empties its player's rack with the bag
    empty, once the other agent has its echo (the window open, the game not yet over):
    ``out`` is that PLAY (None if the game ended otherwise, six scoreless turns)."""
    g = await game(ctx, tags)
    lexicon = _lexicon(ctx)
    t = g.table
    result = WholeGame({}, {}, {}, [], 0, game=g)
    scoreless = 0
    while not g.ended:
        result.turns += 1
        if result.turns > 200:
            raise CannotTest("the game does not end")
        me = g.turn
        move = best_move(t.board, t.racks[me], lexicon, ENGLISH)
        if move is not None:
            play = play_of(move)
            await g.mover.send(play)
            try:
                echo: object = await g.other.next(ctx.wait, "the PLAY echo")
            except CheckFailed as e:  # no echo: what the mover got says why (INVALID)
                echo = e
            if isinstance(echo, Invalid | EndMessage) or not isinstance(echo, PlayNotice):
                mine = await g.mover.quiet(0.2)
                result.refused.append(f"{play} got {mine[:1] or echo!r}")
                raise CheckFailed(f"a legal PLAY was refused: {result.refused[-1]}"[:300])
            t.play(me, move.tiles)
            g.window = True
            if to_the_last_play and not t.racks[me] and t.bag <= 0:
                result.out = play
                return result
            await g.other.send(NoChallenge())
            g.window = False
            new = await g.mover.next(ctx.wait, "NO_CHALLENGE")
            if isinstance(new, EndMessage):
                g.ends[me] = new
            else:
                if not isinstance(new, NoChallengeTiles):
                    raise CheckFailed(f"after NO_CHALLENGE the player got {new!r}"[:200])
                t.racks[me] += new.tiles
            scoreless = 0
        else:
            await g.mover.send(PassMove())
            told = await g.other.next(ctx.wait, "PASS")
            if isinstance(told, EndMessage):
                g.ends[g.other.name] = told
            scoreless += 1
        if (not t.racks[me] and t.bag <= 0) or scoreless >= 6:
            for n, p in g.peers.items():
                while n not in g.ends:
                    m = await p.next(ctx.wait, "END")
                    if isinstance(m, EndMessage):
                        g.ends[n] = m
            g.ended = True
        g.swap()
    result.ends = g.ends
    result.scores = dict(t.scores)
    result.final = t.final_scores()
    return result


whole_game = shared("whole game", _whole_game)


@check(
    "game-plays",
    "Scenarios: Play tiles",
    Level.MUST,
    "through a whole game every legal PLAY (score claimed as the engine's) is accepted",
    errata="CMPN402: the claimed score is checked against the server's own scoring",
)
async def _game_plays(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.refused, f"refused: {g.refused[:2]}")
    ctx.expect(g.turns > 6, f"only {g.turns} turns")


@check(
    "game-end",
    "Scenarios: Ending a game",
    Level.SHOULD,
    "a whole game ends with END reason 0 and the standard end's scores",
    errata="CMPN402: END reason 0 for the standard end; racks are subtracted",
)
async def _game_end(ctx: Context) -> None:
    g = await whole_game(ctx)
    for n, end in g.ends.items():
        other = next(p for p in g.final if p != n)
        ctx.expect(int(end.reason) == 0, f"{n}: END reason {int(end.reason)}")
        ctx.expect(
            (end.score, end.opponent_score) == (g.final[n], g.final[other]),
            f"{n}: END {end.score}-{end.opponent_score}; the standard end: "
            f"{g.final[n]}-{g.final[other]}",
        )

"""Conformance checks for servers of Santorini over AM27 (santorini-am27.md).

Sections are the spec's numbered headings ("2.1 serverState", "4.2.2 move", …) and
"ERRATA" where only the ERRATA's reading fixes the rule (the framing, INFO codes, the
heartbeat). The kit reads the server's stream by the lengths it carries, never by
searching for braces or newlines: the Java object stream (header ``AC ED 00 05``, then
per message ``79`` and ``74`` + u16 length, or ``7C`` + u64) or, if the server offers
that option, JSON lines; meeple's own incremental decoders
(:mod:`meeple.protocols.santorini.framing`) do the cutting. Every message is decoded
with :func:`meeple.protocols.santorini.decode`.

Moves come from meeple's engine: at the start of each of the kit's turns in the game
without gods, the position is rebuilt from the board the server announced, and the
server's ``reachableCells``/``buildableCells``/``canPass`` are compared with the
engine's own lists after every step (:func:`meeple.games.santorini.reachable_cells`).
In the game with gods the kit plays from the server's lists (their rules are the
server's) and checks that every listed step is accepted.

Each connection of the kit PINGs every half second (ERRATA) unless the check is about
silence.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from meeple.ai.santorini import search_action
from meeple.check.core import (
    CannotTest,
    CheckFailed,
    Context,
    Differs,
    Level,
    registry,
    shared,
)
from meeple.check.wire import Peer, missing, names
from meeple.games import santorini as engine
from meeple.protocols.santorini import (
    STREAM_HEADER,
    AutoDecoder,
    BrokenStream,
    Build,
    Cell,
    CellState,
    ChooseStarter,
    EndGame,
    GodInit,
    GodList,
    Info,
    Lose,
    Message,
    MessageError,
    Move,
    OversizedMessage,
    Pass,
    Ping,
    Players,
    Register,
    ServerState,
    Text,
    UndecodableMessage,
    Undo,
    Update,
    WorkerInit,
    decode,
)

__all__ = ["SERVER_CHECKS", "AmPeer", "envelope", "object_stream_units"]

PING_INTERVAL = 0.5  # ERRATA: PING both ways every 0.5 s
HEARTBEAT_TIMEOUT = 5.0  # ERRATA: 5 s of silence is a disconnect
MAX_MESSAGE = 1024 * 1024
LAST_BYTES = 120  # a timeout's detail shows this much of what the connection last received
M = TypeVar("M", bound=Message)


def object_stream_units(buffer: bytes) -> tuple[list[bytes], bytes]:
    """A Java object stream of strings cut into units by the lengths it carries: the
    header, then per message ``79`` (TC_RESET, kept with what follows) and ``74`` + u16
    length + text, or ``7C`` + u64 length + text; the unfinished rest. Anything else
    ends the cutting: the rest is one unit (relays pass it through as it is)."""
    units: list[bytes] = []
    at = 0
    while at < len(buffer):
        if buffer.startswith(STREAM_HEADER, at):
            units.append(buffer[at : at + 4])
            at += 4
            continue
        start = at
        while at < len(buffer) and buffer[at] == 0x79:  # TC_RESET
            at += 1
        if at >= len(buffer):
            return units, buffer[start:]
        code = buffer[at]
        head = {0x74: 3, 0x7C: 9}.get(code)
        if head is None:
            units.append(buffer[start:])
            return units, b""
        if len(buffer) < at + head:
            return units, buffer[start:]
        length = int.from_bytes(buffer[at + 1 : at + head], "big")
        if len(buffer) < at + head + length:
            return units, buffer[start:]
        at += head + length
        units.append(buffer[start:at])
    return units, b""


def envelope(kind: str, body: dict[str, Any], *, nested: bool = False) -> bytes:
    """A client line: ``{"type": kind, "message": "<body as JSON text>"}`` (spec §1)."""
    inner: Any = body if nested else json.dumps(body, separators=(",", ":"))
    return json.dumps({"type": kind, "message": inner}, separators=(",", ":")).encode() + b"\n"


def line(message: Message) -> bytes:
    return message.encode().encode("utf-8") + b"\n"


class AmPeer:
    """An AM27 connection of the kit: messages cut by their lengths, PINGs kept aside."""

    def __init__(self, peer: Peer, name: str) -> None:
        self.peer = peer
        self.name = name
        self.decoder = AutoDecoder(MAX_MESSAGE)
        self.queue: deque[Message] = deque()
        self.pings = 0
        self.pings_since = 0  # PINGs since the last other message
        self.last_text: str | None = None  # the last message other than PING
        self.board: dict[Cell, CellState] = {}
        self.pinging = False
        self._pinger: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, ctx: Context, label: str, *, ping: bool = True) -> AmPeer:
        p = cls(await Peer.open(ctx, label, b""), label)
        if ping:
            p.start_pinging()
        ctx.cleanups.append(p.close)
        return p

    def start_pinging(self) -> None:
        self.pinging = True
        if self._pinger is None:
            self._pinger = asyncio.ensure_future(self._ping_forever())

    async def _ping_forever(self) -> None:
        # Not recorded: a failure's transcript shows the kit's commands, not its PINGs.
        with contextlib.suppress(Exception):
            while True:
                if self.pinging:
                    self.peer._writer.write(line(Ping("AIping")))
                await asyncio.sleep(PING_INTERVAL)

    async def close(self) -> None:
        if self._pinger is not None:
            self._pinger.cancel()
        await self.peer.close()

    @property
    def framing(self) -> str | None:
        return self.decoder.framing

    async def send(self, data: bytes | Message, *, bytewise: bool = False) -> None:
        raw = line(data) if isinstance(data, Message) else data
        paused, self.pinging = self.pinging, self.pinging and not bytewise
        try:
            await self.peer.send(raw, bytewise=bytewise)
        finally:
            self.pinging = paused

    def _decode(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, Text):
                try:
                    message = decode(event.text)
                except MessageError as e:
                    raise CheckFailed(
                        f"{self.name}: not an AM27 message ({e}): {event.text[:80]!r}"
                    ) from None
                if isinstance(message, Ping):
                    self.pings += 1
                    self.pings_since += 1
                    continue
                self.last_text, self.pings_since = event.text, 0
                if isinstance(message, Update):
                    for c, state in message.board:
                        self.board[c] = state
                self.queue.append(message)
            elif isinstance(event, BrokenStream):
                raise CheckFailed(f"{self.name}: the object stream is broken: {event.reason}")
            elif isinstance(event, OversizedMessage | UndecodableMessage):
                raise CheckFailed(f"{self.name}: a message the kit cannot read: {event}")

    def _late(self, what: str, limit: float) -> CheckFailed:
        """A wait that ran out: says the last bytes this connection received (docs/check.md:
        a failure shows what came back), or that nothing came."""
        return CheckFailed(f"{self.name}: {missing(what)} within {limit:g} s; {self.last_bytes()}")

    def last_bytes(self) -> str:
        """What this connection last received other than PINGs (the ERRATA's heartbeat
        would hide it), as the report shows bytes; or that nothing, or only PINGs, came."""
        if self.last_text is not None:
            text = self.last_text.encode("utf-8")
            shown = repr(text[:LAST_BYTES])[2:-1] + ("[...]" if len(text) > LAST_BYTES else "")
            return f"last bytes received: {shown}" + (
                f" (then {self.pings_since} PINGs)" if self.pings_since else ""
            )
        if self.peer.recorder.received:
            return f"last bytes received: only PINGs ({self.pings})"
        return "nothing received on this connection"

    async def _pump(self, left: float, what: str, limit: float) -> bool:
        """Read once and decode; False once the connection is closed."""
        try:
            more = await self.peer.fill(left)
        except TimeoutError:
            raise self._late(what, limit) from None
        data = bytes(self.peer.buffer)
        self.peer.buffer.clear()
        self._decode(self.decoder.receive_data(data))
        return more

    async def next(self, timeout: float | None = None, what: str = "message") -> Message:
        """The next message other than PING; CheckFailed on timeout, close or garbage."""
        limit = self.peer.wait if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while not self.queue:
            left = deadline - loop.time()
            if left <= 0:
                raise self._late(what, limit)
            if not await self._pump(left, what, limit) and not self.queue:
                raise CheckFailed(
                    f"{self.name}: connection closed while waiting for {what}; " + self.last_bytes()
                )
        return self.queue.popleft()

    async def expect(
        self, kind: type[M], *, skip: tuple[type[Message], ...] = (), timeout: float | None = None
    ) -> M:
        """The next message (past any of ``skip``); it must be a ``kind``."""
        what = getattr(kind, "TYPE", None)
        label = what.value if what is not None else "reply"
        while True:
            m = await self.next(timeout, label)
            if isinstance(m, kind):
                return m
            if isinstance(m, skip):
                continue
            raise CheckFailed(f"{self.name}: expected {label}, got {m.encode()[:160]}")

    async def drain(
        self, timeout: float, until: Callable[[list[Message]], bool] | None = None
    ) -> list[Message]:
        """What arrives within ``timeout`` seconds in all, or until ``until(got)`` holds,
        or the connection closes (no failure on silence)."""
        got: list[Message] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with contextlib.suppress(CheckFailed):
            while not (until is not None and until(got)):
                left = deadline - loop.time()
                if left <= 0:
                    break
                got.append(await self.next(left))
        return got

    async def unrefused(self, within: float = 0.3) -> bool:
        """No INFO (a refusal) comes within ``within`` seconds."""
        return not [m for m in await self.drain(within) if isinstance(m, Info)]

    async def pings_within(self, count: int, timeout: float) -> int:
        """Read on until ``count`` PINGs came (or ``timeout``); how many came."""
        start = self.pings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with contextlib.suppress(CheckFailed):
            while self.pings - start < count:
                left = deadline - loop.time()
                if left <= 0 or not await self._pump(left, "PING", timeout):
                    break
        return self.pings - start

    async def refusal(self, ctx: Context, code: str | None, why: str) -> Info:
        """An INFO (with ``code``, if given) before any other reply."""
        m = await self.next(ctx.wait, f"INFO {code or ''}".strip())
        ctx.expect(isinstance(m, Info), f"{why}: expected INFO, got {m.encode()[:160]}")
        assert isinstance(m, Info)
        if code is not None:
            ctx.expect(m.information == code, f"{why}: INFO {m.information!r}, not {code!r}")
        return m


# --- the set-up -----------------------------------------------------------------------


async def lobby(
    ctx: Context, name: str, *, ping: bool = True, joining: bool = False, own: bool = False
) -> tuple[AmPeer, ServerState]:
    """A connection and its SERVERSTATE (§2.1), following the spec's flow: a server that
    answers ``open: false`` has not accepted the client (one game at a time, say), so the
    kit closes and asks again; ``joining`` (before REGISTER (B), §2.3) also waits for
    ``active: true``, the sign that the game of REGISTER (A) is waiting. Both for up to
    twice the kit's wait, asking again every 0.2 s. A set-up step unless ``own`` (the
    check's own rule is what the wait shows: the framing of REGISTER (A), say)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 2 * ctx.wait
    what = f"SERVERSTATE to {name}" + (" with active: true" if joining else "")
    section = "2.2 register (A)" if joining else "2.1 serverState"
    with contextlib.nullcontext() if own else ctx.setup(what, section):
        while True:
            p = await AmPeer.open(ctx, name, ping=ping)
            state = await p.expect(ServerState)
            if state.open and (state.active or not joining):
                return p, state
            await p.close()
            if loop.time() >= deadline:
                if not state.open:
                    raise CannotTest(
                        f"the server answered open: false (§2.1: not accepted) to every "
                        f"connection for {2 * ctx.wait:g} s: {state.encode()[:120]}"
                    )
                raise CheckFailed(
                    f"{name}: after REGISTER (A) no new connection's SERVERSTATE said "
                    f"active: true within {2 * ctx.wait:g} s: {state.encode()[:120]}"
                )
            await asyncio.sleep(0.2)


@dataclass
class Table:
    """Two players of the kit at one game, after PLAYERSMESSAGE."""

    peers: dict[str, AmPeer]
    players: Players
    states: dict[str, ServerState] = field(default_factory=dict)
    god_lists: list[GodList] = field(default_factory=list)

    @property
    def challenger(self) -> AmPeer:
        return self.peers[self.players.player]

    @property
    def other(self) -> AmPeer:
        return next(p for n, p in self.peers.items() if n != self.players.player)

    def peer(self, name: str) -> AmPeer:
        if name not in self.peers:
            raise CheckFailed(f"the server names {name!r}, not a player of this game")
        return self.peers[name]


async def registered(
    ctx: Context, tags: tuple[str, str], *, gods: bool = False, a_ping: bool = True
) -> tuple[AmPeer, AmPeer, dict[str, ServerState]]:
    """REGISTER (A) on one connection, (B) on the next (§2.2, §2.3)."""
    a_name, b_name = names(ctx, *tags)
    a, sa = await lobby(ctx, a_name, ping=a_ping)
    await a.send(Register(a_name, 2, gods))
    b, sb = await lobby(ctx, b_name, joining=True)
    await b.send(Register(b_name))
    return a, b, {a_name: sa, b_name: sb}


async def table(
    ctx: Context, tags: tuple[str, str], *, gods: bool = False, a_ping: bool = True
) -> Table:
    a, b, states = await registered(ctx, tags, gods=gods, a_ping=a_ping)
    peers = {a.name: a, b.name: b}
    god_lists: list[GodList] = []
    first: Players | None = None
    if gods:
        # §3.1: GODLISTMESSAGE to all, naming who acts; that player sends GODINIT. The
        # spec's flow gives one list per player (2 in a 2-player game); servers with the
        # published rule's offer step first give 2 more. PLAYERSMESSAGE ends the choosing.
        # Set-up steps: the first list answers REGISTER (§3.1.1), the rest GODINIT (§3.1.2).
        for _ in range(8):
            if god_lists:
                last = god_lists[-1]
                step_ = ctx.setup(f"GODINIT {last.player} {last.gods[0].name}", "3.1.2 chooseGod")
            else:
                step_ = ctx.setup("GODLISTMESSAGE after REGISTER with gods", "3.1.1 godList")
            with step_:
                m = await a.expect(Message, skip=(ServerState,))
                if isinstance(m, Players):
                    first = m
                    break
                if not isinstance(m, GodList):
                    raise CheckFailed(
                        f"{a.name}: expected GODLISTMESSAGE or PLAYERSMESSAGE, "
                        f"got {m.encode()[:160]}",
                        got=m.encode().encode()[:160],
                    )
                gl = m
                for p in peers.values():
                    if p is not a:
                        await p.expect(GodList, skip=(ServerState,))
                god_lists.append(gl)
                if gl.player not in peers or not gl.gods:
                    raise CheckFailed(
                        f"GODLISTMESSAGE names {gl.player!r} with {len(gl.gods)} gods",
                        got=gl.encode().encode()[:160],
                    )
            chooser = peers[gl.player]
            await chooser.send(GodInit(gl.player, gl.gods[0].name))
        else:
            with ctx.setup("GODINIT until PLAYERSMESSAGE", "3.1.2 chooseGod"):
                raise CheckFailed(f"{len(god_lists)} GODLISTMESSAGEs and no PLAYERSMESSAGE")
    # PLAYERSMESSAGE answers REGISTER (B) (§2.3), or the last GODINIT (§3.1.2).
    what, section = (
        ("PLAYERSMESSAGE after the last GODINIT", "3.1.2 chooseGod")
        if gods
        else (f"PLAYERSMESSAGE after REGISTER (B) {b.name}", "2.3 register (B)")
    )
    with ctx.setup(what, section):
        players = {
            n: first
            if p is a and first is not None
            else await p.expect(Players, skip=(ServerState,))
            for n, p in peers.items()
        }
    return Table(peers, players[a.name], states, god_lists)


@dataclass
class Placed:
    """A table after CHOSESTARTER and the four WORKERINITs; ``update`` the last UPDATE."""

    table: Table
    starter: str
    update: Update
    updates: dict[str, list[Update]]


async def step(t: Table, sender: AmPeer, message: Message | bytes) -> dict[str, Message]:
    """Send ``message``; the next UPDATE, INFO or ENDGAME each player gets."""
    await sender.send(message)
    got: dict[str, Message] = {}
    for name in sorted(t.peers, key=lambda n: n != sender.name):
        peer = t.peers[name]
        m = await peer.expect(Message, skip=(ServerState,))
        got[name] = m
        if isinstance(m, Info) and name == sender.name:
            return got  # a refusal goes to the sender alone
    return got


def _free_cells(board: dict[Cell, CellState]) -> list[Cell]:
    return [
        Cell(r, c)
        for r in range(5)
        for c in range(5)
        if board.get(Cell(r, c), CellState((0,))).owner is None
    ]


async def placed(ctx: Context, tags: tuple[str, str], *, gods: bool = False) -> Placed:
    """A table after CHOSESTARTER (§3.2.2) and four WORKERINITs (§4.2.1): set-up steps."""
    t = await table(ctx, tags, gods=gods)
    starter = t.players.player
    with ctx.setup(f"CHOSESTARTER {starter}", "3.2.2 chooseStarter"):
        got = await step(t, t.challenger, ChooseStarter(starter, starter))
        update = _next(got, starter, "CHOSESTARTER")
    updates: dict[str, list[Update]] = {n: [] for n in t.peers}
    with ctx.setup("four WORKERINITs, each answered by UPDATEs", "4.2.1 workerInit"):
        for _ in range(4):
            mover = t.peer(update.player)
            if not update.can_place_worker:
                raise CheckFailed(
                    f"the set-up's UPDATE for {mover.name} has canPlaceWorker false: "
                    f"{update.encode()[:200]}"
                )
            mine = [s.sex for s in mover.board.values() if s.owner == mover.name]
            sex = "F" if "M" in mine else "M"
            cells = sorted(
                _free_cells(mover.board), key=lambda c: abs(c.row - 2) + abs(c.column - 2)
            )
            got = await step(t, mover, WorkerInit(mover.name, cells[0], sex))
            for n, m in got.items():
                if isinstance(m, Update):
                    updates[n].append(m)
            update = _next(got, mover.name, "WORKERINIT")
    return Placed(t, starter, update, updates)


def _update(got: dict[str, Message], sender: str, what: str) -> Update:
    for name, m in got.items():
        if not isinstance(m, Update):
            raise CheckFailed(f"{name} got {m.encode()[:200]} after {what}, not an UPDATE")
    u = got[sender]
    assert isinstance(u, Update)
    return u


def _next(got: dict[str, Message], sender: str, what: str) -> Update:
    """The UPDATE of the player it names to act next (the one with that player's lists)."""
    u = _update(got, sender, what)
    nxt = got.get(u.player)
    if not isinstance(nxt, Update):
        raise CheckFailed(f"the UPDATE after {what} names {u.player!r}, not a player")
    return nxt


# --- the engine's view ---------------------------------------------------------------


def wire(c: int) -> Cell:
    row, column = engine.coordinates(c)
    return Cell(row, column)


def position(board: dict[Cell, CellState], seats: list[str], me: str) -> engine.GameState:
    """The position at the start of ``me``'s turn in a game without gods, from the board."""
    n = len(seats)
    workers: list[int | None] = [None] * (2 * n)
    levels = [0] * 25
    domes = [False] * 25
    for c, state in board.items():
        at = engine.cell(c.row, c.column)
        top = state.levels[0] if state.levels else 0
        domes[at] = top == 4
        levels[at] = min(state.levels[1] if top == 4 and len(state.levels) > 1 else top, 3)
        if state.owner in seats:
            sex = engine.Sex(state.sex or "M")
            workers[engine.worker_of(seats.index(state.owner), sex)] = at
    me_at = seats.index(me)
    return engine.GameState(
        rules=engine.Rules(players=n, gods=False, auto_eliminate=False),
        challenger=0,
        phase=engine.Phase.PLAY,
        turn=me_at,
        gods=(None,) * n,
        starter=me_at,
        levels=tuple(levels),
        domes=tuple(domes),
        workers=tuple(workers),
        alive=(True,) * n,
        moved_up=(False,) * n,
    )


def lists_of(update: Update) -> tuple[set[tuple[Cell, Cell]], set[tuple[Cell, Cell, int]]]:
    moves = {(w, d) for w, cells in update.reachable for d in cells}
    builds = {(w, c, lv) for w, options in update.buildable for c, lvs in options for lv in lvs}
    return moves, builds


def engine_lists(
    s: engine.GameState,
) -> tuple[set[tuple[Cell, Cell]], set[tuple[Cell, Cell, int]], bool]:
    me = s.turn
    moves = {(wire(w), wire(d)) for w, ds in engine.reachable_cells(s, me).items() for d in ds}
    builds = {
        (wire(w), wire(c), lv)
        for w, cells in engine.buildable_cells(s, me).items()
        for c, lvs in cells.items()
        for lv in lvs
    }
    return moves, builds, engine.can_pass(s, me)


def to_wire(name: str, action: engine.Action) -> Message | None:
    if isinstance(action, engine.Move):
        return Move(name, wire(action.src), wire(action.dst))
    if isinstance(action, engine.Build):
        return Build(name, wire(action.src), wire(action.dst), action.level)
    if isinstance(action, engine.Pass):
        return Pass(name)
    if isinstance(action, engine.Lose):
        return Lose(name)
    return None


# --- the checks ------------------------------------------------------------------------

# A server that stops accepting connections or answering is the runner's to say, once
# (core.run_checks with the kit's probe: a new connection, its first bytes).
SERVER_CHECKS, check = registry("santorini.server")


@check("serverstate", "2.1 serverState", Level.MUST, "the first message is SERVERSTATE")
async def _serverstate(ctx: Context) -> None:
    (name,) = names(ctx, "ss")
    _, state = await lobby(ctx, name)
    ctx.passed(f"open {state.open}, active {state.active}")


@check(
    "object-stream",
    "ERRATA (santorini-am27): framing",
    Level.MUST,
    "the server writes a Java object stream: header AC ED 00 05, then length-prefixed strings",
    errata="AM27: by default a Java object stream; plain JSON lines is an option",
)
async def _object_stream(ctx: Context) -> None:
    (name,) = names(ctx, "os")
    p, _ = await lobby(ctx, name, own=True)
    if p.framing == "lines":
        raise Differs("the server writes JSON lines (meeple's option), not an object stream")
    ctx.expect(p.framing == "object-stream", f"framing {p.framing!r}")
    ctx.expect(
        bytes(p.peer.recorder.received[:4]) == STREAM_HEADER,
        f"the stream starts {bytes(p.peer.recorder.received[:8])!r}",
    )


@check("ping", "1 Introduction", Level.MUST, "the server sends PING heartbeats")
async def _ping(ctx: Context) -> None:
    (name,) = names(ctx, "pg")
    p, _ = await lobby(ctx, name)
    within = 4 * PING_INTERVAL
    pings = await p.pings_within(2, within)
    ctx.expect(pings >= 2, f"{pings} PINGs in {within:g} s")


@check(
    "register-a",
    "2.2 register (A)",
    Level.MUST,
    "after REGISTER (A) a new connection's SERVERSTATE says a game is waiting (active)",
)
async def _register_a(ctx: Context) -> None:
    a_name, b_name = names(ctx, "ra", "rb")
    a, first = await lobby(ctx, a_name)
    ctx.expect(first.open, f"SERVERSTATE open false for a new client: {first}")
    await a.send(Register(a_name, 2, False))
    ctx.expect(await a.unrefused(), "REGISTER (A) refused")
    _, state = await lobby(ctx, b_name)
    ctx.expect(state.active, f"SERVERSTATE after a REGISTER (A): {state.encode()}")


@check(
    "register-b",
    "2.3 register (B)",
    Level.MUST,
    "REGISTER (B) joins the waiting game: both get PLAYERSMESSAGE",
)
async def _register_b(ctx: Context) -> None:
    t = await table(ctx, ("ba", "bb"))
    ctx.expect(set(dict(t.players.players)) == set(t.peers), f"players {t.players.players}")


@check(
    "nickname",
    "ERRATA (santorini-am27): INFO codes",
    Level.MUST,
    "a nickname already taken is INFO NICKNAME",
)
async def _nickname(ctx: Context) -> None:
    (name,) = names(ctx, "nk")
    a, _ = await lobby(ctx, name)
    await a.send(Register(name, 2, False))
    b, _ = await lobby(ctx, "second")
    await b.send(Register(name.upper() if name.islower() else name, 2, False))
    await b.send(Register(name))
    info = await b.refusal(ctx, "NICKNAME", f"REGISTER {name} (taken)")
    ctx.expect(info is not None, "no INFO")


@check(
    "playersmessage",
    "3.2.1 players",
    Level.MUST,
    "PLAYERSMESSAGE names every player with its god (Atheist without gods), the same to all",
    errata="AM27: players is an object {nick: god}; Atheist without gods",
)
async def _playersmessage(ctx: Context) -> None:
    t = await table(ctx, ("pa", "pb"))
    players = dict(t.players.players)
    ctx.expect(set(players) == set(t.peers), f"players {players}")
    ctx.expect(
        all(g == "Atheist" for g in players.values()), f"gods in a game without gods: {players}"
    )
    ctx.expect(t.players.player in t.peers, f"the challenger is {t.players.player!r}")


@check(
    "starter",
    "3.2.2 chooseStarter",
    Level.MUST,
    "CHOSESTARTER by the challenger: UPDATEs; the starter may place a worker, the other not",
    errata="AM27: the type is CHOSESTARTER; others get empty maps and flags false",
)
async def _starter(ctx: Context) -> None:
    t = await table(ctx, ("sa", "sb"))
    starter = t.other.name
    got = await step(t, t.challenger, ChooseStarter(t.challenger.name, starter))
    u = _update(got, t.challenger.name, "CHOSESTARTER")
    ctx.expect(u.player == starter, f"the UPDATE names {u.player!r}, the starter is {starter!r}")
    mine = got[starter]
    assert isinstance(mine, Update)
    ctx.expect(mine.can_place_worker, f"the starter's UPDATE: {mine.encode()[:200]}")
    ctx.expect(not u.can_place_worker, f"the challenger's UPDATE: {u.encode()[:200]}")


@check(
    "starter-spec-name",
    "3.2.2 chooseStarter",
    Level.SHOULD,
    "the spec's own type name STARTER is accepted too",
    errata="AM27: accept STARTER too",
)
async def _starter_spec(ctx: Context) -> None:
    t = await table(ctx, ("na", "nb"))
    c = t.challenger.name
    got = await step(t, t.challenger, envelope("STARTER", {"player": c, "starter": c}))
    _update(got, c, "STARTER")
    ctx.passed()


@check(
    "starter-wait",
    "ERRATA (santorini-am27): INFO codes",
    Level.MUST,
    "CHOSESTARTER from a player who is not the challenger is INFO WAIT",
)
async def _starter_wait(ctx: Context) -> None:
    t = await table(ctx, ("wa", "wb"))
    o = t.other.name
    await t.other.send(ChooseStarter(o, o))
    await t.other.refusal(ctx, "WAIT", "CHOSESTARTER by the other player")


async def _chose_starter(ctx: Context, t: Table) -> None:
    """Set-up step: the challenger chooses itself to start (§3.2.2); UPDATEs to all."""
    c = t.challenger.name
    with ctx.setup(f"CHOSESTARTER {c}", "3.2.2 chooseStarter"):
        _next(await step(t, t.challenger, ChooseStarter(c, c)), c, "CHOSESTARTER")


@check(
    "workerinit",
    "4.2.1 workerInit",
    Level.MUST,
    "WORKERINIT: an UPDATE to all shows the worker (levelList [0], owner, sex)",
)
async def _workerinit(ctx: Context) -> None:
    t = await table(ctx, ("ia", "ib"))
    c = t.challenger.name
    await _chose_starter(ctx, t)
    got = await step(t, t.challenger, WorkerInit(c, Cell(1, 1), "M"))
    _update(got, c, "WORKERINIT")
    for name, m in got.items():
        assert isinstance(m, Update)
        shown = dict(m.board).get(Cell(1, 1))
        ctx.expect(
            shown is not None and shown.owner == c and shown.sex == "M" and shown.levels == (0,),
            f"{name}: boardUpdate {m.encode()[:240]}",
        )


@check(
    "occupied",
    "ERRATA (santorini-am27): INFO codes",
    Level.MUST,
    "WORKERINIT on a cell that holds a worker is INFO OCCUPIED",
)
async def _occupied(ctx: Context) -> None:
    t = await table(ctx, ("oa", "ob"))
    c = t.challenger.name
    await _chose_starter(ctx, t)
    with ctx.setup(f"WORKERINIT {c} (2, 2)", "4.2.1 workerInit"):
        _update(await step(t, t.challenger, WorkerInit(c, Cell(2, 2), "M")), c, "WORKERINIT")
    await t.challenger.send(WorkerInit(c, Cell(2, 2), "F"))
    await t.challenger.refusal(ctx, "OCCUPIED", "WORKERINIT on the worker just placed")


@check(
    "worker-wait",
    "ERRATA (santorini-am27): INFO codes",
    Level.MUST,
    "WORKERINIT by the player not to act is INFO WAIT",
)
async def _worker_wait(ctx: Context) -> None:
    t = await table(ctx, ("xa", "xb"))
    await _chose_starter(ctx, t)
    await t.other.send(WorkerInit(t.other.name, Cell(0, 0), "M"))
    await t.other.refusal(ctx, "WAIT", "WORKERINIT out of turn")


@check(
    "update-off-turn",
    "4.1.1 update",
    Level.MUST,
    "a player whose turn it is not gets empty maps and every flag false",
    errata="AM27: players whose turn it is not get empty maps and all flags false",
)
async def _off_turn(ctx: Context) -> None:
    pl = await placed(ctx, ("fa", "fb"))
    for name, updates in pl.updates.items():
        for u in updates:
            if u.player == name:
                continue
            ctx.expect(
                not (u.reachable or u.buildable or u.can_pass or u.can_place_worker or u.can_undo),
                f"{name}, not on turn, got {u.encode()[:240]}",
            )


@check(
    "reachable",
    "4.1.1 update",
    Level.MUST,
    "the first turn's reachableCells are the rules' moves (meeple's engine)",
)
async def _reachable(ctx: Context) -> None:
    pl = await placed(ctx, ("ca", "cb"))
    mover = pl.table.peer(pl.update.player)
    s = position(mover.board, list(dict(pl.table.players.players)), mover.name)
    want, _, _ = engine_lists(s)
    got, _ = lists_of(pl.update)
    ctx.expect(got == want, f"reachableCells {sorted(got)}; the rules: {sorted(want)}")


@dataclass
class FirstSteps:
    placed: Placed
    after_move: dict[str, Message]
    after_build: dict[str, Message]
    move: Move
    build: Build
    state: engine.GameState  # after the build


async def _first_steps(ctx: Context, tags: tuple[str, str]) -> FirstSteps:
    pl = await placed(ctx, tags)
    t = pl.table
    mover = t.peer(pl.update.player)
    s = position(mover.board, list(dict(t.players.players)), mover.name)
    moves = [a for a in engine.legal_steps(s) if isinstance(a, engine.Move)]
    if not moves:
        raise CannotTest("no move for the first player")
    mv = moves[0]
    with ctx.setup("the first MOVE, answered by UPDATEs", "4.2.2 move"):
        after_move = await step(t, mover, to_wire(mover.name, mv) or b"")
        _update(after_move, mover.name, "MOVE")
    s = engine.advance(s, mv)[0]
    builds = [a for a in engine.legal_steps(s) if isinstance(a, engine.Build)]
    if not builds:
        raise CannotTest("no build after the first move")
    bd = builds[0]
    with ctx.setup("the first BUILD, answered by UPDATEs", "4.2.3 build"):
        after_build = await step(t, mover, to_wire(mover.name, bd) or b"")
        _update(after_build, mover.name, "BUILD")
    s = engine.advance(s, bd)[0]
    mw, bw = to_wire(mover.name, mv), to_wire(mover.name, bd)
    assert isinstance(mw, Move)
    assert isinstance(bw, Build)
    return FirstSteps(pl, after_move, after_build, mw, bw, s)


@check(
    "move",
    "4.2.2 move",
    Level.MUST,
    "MOVE: an UPDATE to all moves the worker; buildableCells are the rules' builds",
)
async def _move(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("ma", "mb"))
    me = fs.move.player
    u = _update(fs.after_move, me, "MOVE")
    for name, m in fs.after_move.items():
        assert isinstance(m, Update)
        board = dict(m.board)
        dst, src = board.get(fs.move.destination), board.get(fs.move.source)
        ctx.expect(dst is not None and dst.owner == me, f"{name}: {m.encode()[:240]}")
        ctx.expect(src is not None and src.owner is None, f"{name}: source {src}")
    _, builds = lists_of(u)
    ctx.expect(bool(builds), f"no buildableCells after the move: {u.encode()[:240]}")


@check(
    "build",
    "4.2.3 build",
    Level.MUST,
    "BUILD: an UPDATE to all raises the cell (levelList top first); canPass true",
    errata="AM27: levelList lists levels top first, [1,0]",
)
async def _build(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("ua", "ub"))
    me = fs.build.player
    u = _update(fs.after_build, me, "BUILD")
    want = tuple(range(fs.build.level, -1, -1))
    for name, m in fs.after_build.items():
        assert isinstance(m, Update)
        cell = dict(m.board).get(fs.build.destination)
        ctx.expect(
            cell is not None and cell.levels == want,
            f"{name}: the built cell {cell}, want levelList {list(want)}",
        )
    ctx.expect(u.can_pass, f"canPass false after a complete turn: {u.encode()[:240]}")


@check(
    "lists-follow-steps",
    "4.1.1 update",
    Level.MUST,
    "after MOVE the mover's buildableCells and canPass are the rules' (meeple's engine)",
)
async def _lists_follow(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("la", "lb"))
    t = fs.placed.table
    me = fs.move.player
    seats = list(dict(t.players.players))
    # The position after the move: rebuilt at the turn's start, advanced by the move.
    start = position(_board_before(fs), seats, me)
    s = engine.advance(start, engine.Move(seats.index(me), *_cells(fs.move)))[0]
    want_moves, want_builds, want_pass = engine_lists(s)
    u = fs.after_move[me]
    assert isinstance(u, Update)
    got_moves, got_builds = lists_of(u)
    ctx.expect(
        got_builds == want_builds,
        f"buildableCells {sorted(got_builds)}; the rules: {sorted(want_builds)}",
    )
    ctx.expect(got_moves == want_moves, f"reachableCells {sorted(got_moves)} after the move")
    ctx.expect(u.can_pass == want_pass, f"canPass {u.can_pass} after the move")


def _cells(m: Move) -> tuple[int, int]:
    return (
        engine.cell(m.source.row, m.source.column),
        engine.cell(m.destination.row, m.destination.column),
    )


def _board_before(fs: FirstSteps) -> dict[Cell, CellState]:
    board = {}
    for u in fs.placed.updates[fs.move.player]:
        board.update(dict(u.board))
    return board


@check(
    "undo",
    "4.2.4 undo",
    Level.MUST,
    "UNDO after a build takes it back: the cell is as before",
    errata="AM27: undo carries all (isAll accepted)",
)
async def _undo(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("da", "db"))
    t = fs.placed.table
    me = fs.build.player
    u = fs.after_build[me]
    assert isinstance(u, Update)
    if not u.can_undo:
        raise CheckFailed(f"canUndo false after a build in the turn: {u.encode()[:200]}")
    got = await step(t, t.peer(me), Undo(me, False))
    _update(got, me, "UNDO")
    for name in t.peers:
        cell = t.peers[name].board.get(fs.build.destination)
        ctx.expect(
            cell is not None and cell.levels == (0,),
            f"{name}: the cell after UNDO is {cell}",
        )


@check(
    "undo-isall",
    "4.2.4 undo",
    Level.SHOULD,
    "UNDO with the spec's isAll: true takes back the whole turn",
    errata="AM27: undo carries all (isAll accepted)",
)
async def _undo_all(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("ea", "eb"))
    t = fs.placed.table
    me = fs.build.player
    got = await step(t, t.peer(me), envelope("UNDO", {"player": me, "isAll": True}))
    _update(got, me, "UNDO isAll")
    board = t.peers[me].board
    back = board.get(fs.move.source)
    ctx.expect(back is not None and back.owner == me, f"the worker is not back: {back}")


@check(
    "pass",
    "4.2.5 pass",
    Level.MUST,
    "PASS ends the turn: the UPDATE names the other player",
)
async def _pass(ctx: Context) -> None:
    fs = await _first_steps(ctx, ("qa", "qb"))
    t = fs.placed.table
    me = fs.build.player
    got = await step(t, t.peer(me), Pass(me))
    u = _update(got, me, "PASS")
    other = next(n for n in t.peers if n != me)
    ctx.expect(u.player == other, f"after PASS the UPDATE names {u.player!r}")
    theirs = got[other]
    assert isinstance(theirs, Update)
    ctx.expect(bool(theirs.reachable), f"{other} gets no reachableCells: {theirs.encode()[:200]}")


@check(
    "move-illegal",
    "4.2.2 move",
    Level.SHOULD,
    "an illegal MOVE is answered INFO and a fresh UPDATE",
    errata="AM27: meeple answers an illegal move with INFO and an UPDATE; the group's "
    "server ignores it",
)
async def _move_illegal(ctx: Context) -> None:
    pl = await placed(ctx, ("ga", "gb"))
    t = pl.table
    me = pl.update.player
    mover = t.peer(me)
    legal, _ = lists_of(pl.update)
    worker = next(
        iter({w for w, _ in legal} or {c for c, s in mover.board.items() if s.owner == me})
    )
    far = next(
        Cell(r, c)
        for r in range(5)
        for c in range(5)
        if max(abs(r - worker.row), abs(c - worker.column)) >= 2
    )
    await mover.send(Move(me, worker, far))
    got = await mover.drain(ctx.wait, lambda g: any(isinstance(m, Update) for m in g))
    # The rules forbid the move (a real failure if carried out); how to refuse it only
    # the ERRATA says: any other answer differs from meeple's reading.
    moved = [
        u for u in got if isinstance(u, Update) and (c := dict(u.board).get(far)) and c.owner == me
    ]
    if moved:
        ctx.fail(f"the illegal MOVE was carried out: {moved[0].encode()[:200]}")
    if not got:
        raise Differs("the illegal MOVE was ignored without a word, as the group's server does")
    if not (isinstance(got[0], Info) and any(isinstance(m, Update) for m in got[1:])):
        shown = [m.encode()[:80] for m in got]
        raise Differs(f"the illegal MOVE was answered {shown}, not INFO and a fresh UPDATE")
    ctx.passed()


@check(
    "player-field",
    "ERRATA (santorini-am27): the sender",
    Level.SHOULD,
    "a MOVE whose player field names someone else is refused",
    errata="AM27: do not trust the player field",
)
async def _player_field(ctx: Context) -> None:
    pl = await placed(ctx, ("ha", "hb"))
    t = pl.table
    me = pl.update.player
    other = next(n for n in t.peers if n != me)
    legal, _ = lists_of(pl.update)
    if not legal:
        raise CannotTest("no move to send")
    w, d = sorted(legal)[0]
    await t.peer(other).send(Move(me, w, d))
    got = await t.peer(other).drain(ctx.wait, bool)
    moved = [m for m in await t.peer(me).drain(0.2) if isinstance(m, Update)]
    ctx.expect(
        not moved or all(dict(u.board).get(d) is None for u in moved),
        "the other player's connection moved the worker",
    )
    ctx.expect(not got or isinstance(got[0], Info), f"got {got[0].encode()[:200]}" if got else "")
    if not got:
        raise Differs("ignored without a word, as the group's server does")


@check(
    "lose",
    "4.2.6 lose",
    Level.MUST,
    "LOSE in a 2-player game ends it: ENDGAME names the other player as winner",
)
async def _lose(ctx: Context) -> None:
    pl = await placed(ctx, ("za", "zb"))
    t = pl.table
    me = pl.update.player
    other = next(n for n in t.peers if n != me)
    await t.peer(me).send(Lose(me))
    # §4.2.6: LOSE removes the sender; the other player, the last one left, has won.
    # The spec does not say the loser hears ENDGAME: graded only if one comes.
    end = await t.peer(other).expect(EndGame, skip=(Update, Info))
    ok = (end.player == other and end.is_winner) or (end.player == me and not end.is_winner)
    ctx.expect(ok, f"{other} got {end.encode()}")
    for m in await t.peer(me).drain(0.5, lambda g: any(isinstance(m, EndGame) for m in g)):
        if isinstance(m, EndGame):
            right = (m.player == other and m.is_winner) or (m.player == me and not m.is_winner)
            ctx.expect(right, f"{me}, who sent LOSE, got {m.encode()}")


@check(
    "disconnect",
    "4.1.3 endGame",
    Level.MUST,
    "a player disconnecting: the other gets ENDGAME naming it, isWinner not true",
    errata="AM27: the others get ENDGAME naming the dropped player with isWinner false",
)
async def _disconnect(ctx: Context) -> None:
    pl = await placed(ctx, ("ka", "kb"))
    t = pl.table
    gone = pl.update.player
    stays = next(p for n, p in t.peers.items() if n != gone)
    await t.peer(gone).close()
    end = await stays.expect(EndGame, skip=(Update, Info), timeout=ctx.wait + 2)
    ctx.expect(end.player == gone and not end.is_winner, f"got {end.encode()}")


@check(
    "serverstate-after-end",
    "2.1 serverState",
    Level.SHOULD,
    "after ENDGAME the player gets SERVERSTATE and may register again",
)
async def _serverstate_after(ctx: Context) -> None:
    pl = await placed(ctx, ("ya", "yb"))
    t = pl.table
    gone = pl.update.player
    stays = next(p for n, p in t.peers.items() if n != gone)
    await t.peer(gone).close()
    await stays.expect(EndGame, skip=(Update, Info), timeout=ctx.wait + 2)
    await stays.expect(ServerState, skip=(Update, Info))
    ctx.passed()


@check(
    "heartbeat-timeout",
    "1 Introduction",
    Level.MUST,
    "a player silent for the heartbeat timeout counts as gone: ENDGAME to the other",
    timeout=20.0,
    errata="AM27: 5 s of silence is a disconnect",
)
async def _heartbeat(ctx: Context) -> None:
    limit = float(ctx.target.options.get("heartbeat", HEARTBEAT_TIMEOUT))
    t = await table(ctx, ("ta", "tb"), a_ping=False)
    silent = next(p for p in t.peers.values() if not p.pinging)
    live = next(p for p in t.peers.values() if p.pinging)
    end = await live.expect(EndGame, skip=(Update, Info, GodList), timeout=limit + 3)
    ctx.expect(end.player == silent.name and not end.is_winner, f"got {end.encode()}")


@check(
    "heartbeat-kept",
    "1 Introduction",
    Level.MUST,
    "a player who PINGs and sends nothing else stays in the game past the timeout",
    timeout=20.0,
    errata="AM27: PING both ways every 0.5 s; 5 s of silence is a disconnect",
)
async def _heartbeat_kept(ctx: Context) -> None:
    limit = float(ctx.target.options.get("heartbeat", HEARTBEAT_TIMEOUT))
    t = await table(ctx, ("ka", "kb"))
    for peer in t.peers.values():
        got = await peer.drain(limit + 1)
        ends = [m for m in got if isinstance(m, EndGame)]
        ctx.expect(not ends, f"{peer.name} got {ends[0].encode() if ends else ''}")
        break
    c = t.challenger.name
    got2 = await step(t, t.challenger, ChooseStarter(c, c))
    _update(got2, c, "CHOSESTARTER after the wait")


# --- framing --------------------------------------------------------------------------


@check(
    "split",
    "ERRATA (santorini-am27): framing",
    Level.MUST,
    "a REGISTER line sent one byte per write is understood",
)
async def _split(ctx: Context) -> None:
    a_name, b_name = names(ctx, "sp", "sq")
    a, _ = await lobby(ctx, a_name)
    await a.send(line(Register(a_name, 2, False)), bytewise=True)
    b, _ = await lobby(ctx, b_name, joining=True, own=True)
    await b.send(line(Register(b_name)), bytewise=True)
    await a.expect(Players, skip=(ServerState,))
    ctx.passed()


@check(
    "coalesced",
    "ERRATA (santorini-am27): framing",
    Level.MUST,
    "MOVE, BUILD and PASS in one write are each answered, in order",
)
async def _coalesced(ctx: Context) -> None:
    pl = await placed(ctx, ("co", "cp"))
    t = pl.table
    me = pl.update.player
    mover = t.peer(me)
    s = position(mover.board, list(dict(t.players.players)), me)
    mv = next((a for a in engine.legal_steps(s) if isinstance(a, engine.Move)), None)
    if mv is None:
        raise CannotTest("no move for the first player")
    s = engine.advance(s, mv)[0]
    bd = next(a for a in engine.legal_steps(s) if isinstance(a, engine.Build))
    commands = [to_wire(me, mv), to_wire(me, bd), Pass(me)]
    await mover.send(b"".join(line(c) for c in commands if c is not None))
    updates = [await mover.expect(Update, skip=(ServerState,)) for _ in range(3)]
    other = next(n for n in t.peers if n != me)
    ctx.expect(
        updates[-1].player == other,
        f"after MOVE, BUILD, PASS in one write: {[u.encode()[:100] for u in updates]}",
    )
    built = mover.board.get(wire(bd.dst))
    ctx.expect(built is not None and built.levels[0] == bd.level, f"the built cell: {built}")


@check(
    "coalesced-ping",
    "1 Introduction",
    Level.MUST,
    "PING and REGISTER in one write: the REGISTER is acted on",
)
async def _coalesced_ping(ctx: Context) -> None:
    a_name, b_name = names(ctx, "pa", "pb")
    a, _ = await lobby(ctx, a_name)
    await a.send(line(Ping("AIping")) + line(Register(a_name, 2, False)) + line(Ping("AIping")))
    b, _ = await lobby(ctx, b_name, joining=True, own=True)
    await b.send(line(Ping("AIping")) + line(Register(b_name)))
    for p in (a, b):
        await p.expect(Players, skip=(ServerState,))
    ctx.passed()


@check(
    "unicode-length",
    "ERRATA (santorini-am27): framing",
    Level.MUST,
    "a nickname outside ASCII: every message's length prefix counts its bytes",
    errata="AM27: TC_STRING + u16 length + modified UTF-8",
)
async def _unicode(ctx: Context) -> None:
    a_name, b_name = names(ctx, "zoë", "😀")
    a, _ = await lobby(ctx, a_name)
    await a.send(Register(a_name, 2, False))
    b, _ = await lobby(ctx, b_name, joining=True, own=True)
    await b.send(Register(b_name))
    for p in (a, b):
        players = await p.expect(Players, skip=(ServerState,))
        ctx.expect(set(dict(players.players)) == {a_name, b_name}, f"{p.name}: {players.encode()}")
    c = a if players.player == a_name else b
    await c.send(ChooseStarter(c.name, c.name))
    u = await c.expect(Update, skip=(ServerState,))
    ctx.expect(u.player == c.name, f"the UPDATE names {u.player!r}")


@check(
    "max-length",
    "ERRATA (santorini-am27): framing",
    Level.SHOULD,
    "a 64 KiB line is refused (INFO or close), and the server keeps serving",
)
async def _max_length(ctx: Context) -> None:
    big, after = names(ctx, "big", "after")
    p, _ = await lobby(ctx, big)
    await p.send(envelope("REGISTER", {"nickname": "x" * 65536}))
    got = await p.drain(ctx.wait, bool)
    ctx.expect(
        p.peer.eof or any(isinstance(m, Info) for m in got),
        f"a 64 KiB line got {[m.encode()[:80] for m in got]}",
    )
    q, _ = await lobby(ctx, after)
    await q.send(Register(after, 2, False))
    ctx.expect(
        await q.unrefused(),
        "the next REGISTER refused",
    )


@check(
    "malformed",
    "1 Introduction",
    Level.SHOULD,
    "a line that is not JSON is answered INFO, and the connection keeps serving",
)
async def _malformed(ctx: Context) -> None:
    (name,) = names(ctx, "mf")
    p, _ = await lobby(ctx, name)
    await p.send(b"{this is not json\n")
    got = await p.drain(ctx.wait, bool)
    ctx.expect(any(isinstance(m, Info) for m in got), f"got {[m.encode()[:80] for m in got]}")
    await p.send(Register(name, 2, False))
    ctx.expect(
        await p.unrefused(),
        "REGISTER refused after a bad line",
    )


@check(
    "nested-message",
    "1 Introduction",
    Level.SHOULD,
    "a message given as a nested object (not a string) is accepted",
    errata="AM27: accept a nested object too",
)
async def _nested(ctx: Context) -> None:
    a_name, b_name = names(ctx, "nx", "ny")
    a, _ = await lobby(ctx, a_name)
    await a.send(
        envelope("REGISTER", {"nickname": a_name, "nPlayers": 2, "gods": False}, nested=True)
    )
    b, _ = await lobby(ctx, b_name, joining=True, own=True)
    await b.send(envelope("REGISTER", {"nickname": b_name}, nested=True))
    await a.expect(Players, skip=(ServerState,))
    ctx.passed()


# --- whole games ------------------------------------------------------------------------


@dataclass
class WholeGame:
    end: dict[str, EndGame]
    winner: str | None  # who the engine says won
    steps: int
    mismatches: list[str]
    refused: list[str]
    gods: dict[str, str]
    god_lists: list[GodList]


async def _play(ctx: Context, tags: tuple[str, str], *, gods: bool) -> WholeGame:
    pl = await placed(ctx, tags, gods=gods)
    t = pl.table
    seats = list(dict(t.players.players))
    rng = random.Random(27)
    result = WholeGame({}, None, 0, [], [], dict(t.players.players), t.god_lists)
    update = pl.update
    state: engine.GameState | None = None
    # The play to ENDGAME is a set-up step of the rule of the check that reads it: the
    # end (§4.1.3) without gods, the whole game (§4) with them; lists-game could not test.
    play = ctx.setup("the game's steps to ENDGAME", "4 Game" if gods else "4.1.3 endGame")
    with play:
        while len(result.end) < len(t.peers):
            result.steps += 1
            if result.steps > 400:
                raise CannotTest("the game does not end")
            me = update.player
            mover = t.peer(me)
            moves, builds = lists_of(update)
            if not (moves or builds or update.can_pass):
                # Nothing offered: the game ended (ENDGAME follows) or the player is stuck.
                pending = await mover.drain(0.3)
                ends = [m for m in pending if isinstance(m, EndGame)]
                if ends:
                    for name, peer in t.peers.items():
                        result.end[name] = (
                            ends[0] if name == me else await peer.expect(EndGame, skip=(Update,))
                        )
                    break
                command: Message | None = Lose(me)
            elif gods:
                command = _from_lists(me, update, mover.board, rng)
            else:
                if state is None or state.turn != seats.index(me):
                    state = position(mover.board, seats, me)
                want_moves, want_builds, want_pass = engine_lists(state)
                if (moves, builds, update.can_pass) != (want_moves, want_builds, want_pass):
                    result.mismatches.append(
                        f"{me} step {result.steps}: reachable {sorted(moves)} builds "
                        f"{sorted(builds)} canPass {update.can_pass}; the rules: "
                        f"{sorted(want_moves)} {sorted(want_builds)} {want_pass}"
                    )
                action = search_action(state, rng, width=2)
                command = to_wire(me, action)
                state, events = engine.advance(state, action)
                if any(isinstance(e, engine.GameWon) for e in events):
                    result.winner = me
                if isinstance(action, engine.Pass):
                    state = None
            assert command is not None
            got = await step(t, mover, command)
            for name, m in got.items():
                if isinstance(m, EndGame):
                    result.end[name] = m
                elif isinstance(m, Info):
                    result.refused.append(f"{command.encode()[:160]} got INFO {m.information}")
            if result.refused:
                raise CheckFailed(f"a legal step was refused: {result.refused[0]}")
            if result.end:
                for name, peer in t.peers.items():
                    if name not in result.end:
                        result.end[name] = await peer.expect(EndGame, skip=(Update,))
                break
            done = _update(got, me, command.TYPE.value)
            if done.player not in t.peers:
                # The last UPDATE of a won game names no one to act (meeple: ""); ENDGAME follows.
                for name, peer in t.peers.items():
                    result.end[name] = await peer.expect(EndGame, skip=(Update,))
                break
            update = _next(got, me, command.TYPE.value)
    return result


def _from_lists(
    me: str, update: Update, board: dict[Cell, CellState], rng: random.Random
) -> Message:
    def level(c: Cell) -> int:
        s = board.get(c)
        return s.levels[0] if s and s.levels else 0

    moves, builds = lists_of(update)
    for w, d in sorted(moves):
        if level(d) == 3 and level(w) == 2:
            return Move(me, w, d)
    if update.can_pass:
        return Pass(me)
    if moves:
        w, d = max(sorted(moves), key=lambda wd: (level(wd[1]), rng.random()))
        return Move(me, w, d)
    if builds:
        w, c, lv = rng.choice(sorted(builds))
        return Build(me, w, c, lv)
    return Lose(me)


whole_game = shared("whole game", lambda c: _play(c, ("wg1", "wg2"), gods=False))
gods_game = shared("game with gods", lambda c: _play(c, ("gd1", "gd2"), gods=True))


@check(
    "endgame-win",
    "4.1.3 endGame",
    Level.MUST,
    "a whole game (the engine's moves) ends with ENDGAME isWinner true for the winner, to all",
)
async def _endgame_win(ctx: Context) -> None:
    g = await whole_game(ctx)
    for name, end in g.end.items():
        ctx.expect(end.is_winner is True, f"{name} got {end.encode()}")
        if g.winner is not None:
            ctx.expect(end.player == g.winner, f"{name} got {end.encode()}; {g.winner} won")


@check(
    "lists-game",
    "4.1.1 update",
    Level.MUST,
    "through a whole game every UPDATE's lists and canPass are the rules' (meeple's engine)",
)
async def _lists_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.mismatches, f"{len(g.mismatches)} differ, e.g. {g.mismatches[:2]}")
    ctx.expect(g.steps > 6, f"only {g.steps} steps")


@check(
    "godlist",
    "3.1.1 godList",
    Level.MUST,
    "with gods: GODLISTMESSAGE to all names who acts and the gods left, each with a name",
)
async def _godlist(ctx: Context) -> None:
    t = await table(ctx, ("ga1", "ga2"), gods=True)
    ctx.expect(len(t.god_lists) >= 2, f"{len(t.god_lists)} GODLISTMESSAGEs")
    ctx.expect(all(g.name for gl in t.god_lists for g in gl.gods), "a god without a name")


@check(
    "godinit",
    "3.1.2 chooseGod",
    Level.MUST,
    "the gods chosen with GODINIT are the gods PLAYERSMESSAGE gives the players",
)
async def _godinit(ctx: Context) -> None:
    t = await table(ctx, ("gi1", "gi2"), gods=True)
    players = dict(t.players.players)
    ctx.expect(all(g != "Atheist" for g in players.values()), f"players {players}")
    offered = {g.name for gl in t.god_lists for g in gl.gods}
    ctx.expect(set(players.values()) <= offered, f"{players} not among {sorted(offered)}")


@check(
    "gods-game",
    "4 Game",
    Level.MUST,
    "a whole game with gods, every step from the UPDATE's lists, is accepted and ends",
)
async def _gods_game(ctx: Context) -> None:
    g = await gods_game(ctx)
    ctx.expect(bool(g.end), "no ENDGAME")
    ctx.expect(not g.refused, f"refused: {g.refused[:2]}")
    ctx.passed(f"gods {g.gods}, {g.steps} steps")

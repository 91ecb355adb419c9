"""Conformance checks for servers of the Clarkson Scrabble RFC (scrabble-clarkson-rfc.txt).

Sections are the RFC's numbered ones. The RFC describes one table per server: every
connected client is at it and the game starts once all are READY (a lone client
included, §3.8), so these checks run one after the other and each closes its
connections before the next begins; run them against a server nobody else is using.

Each check makes its own set-up in steps named after the RFC section they rely on
(HELLO/OK, USERSET, READY/STARTING, the opening up to TURN): a failure there FAILs only
the checks of that section; the others could not test. NUL padding around lines and a
bare LF for CRLF are read past and reported "tolerated" (ERRATA).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from meeple.check.core import (
    CannotTest,
    CheckFailed,
    Context,
    Differs,
    Level,
    registry,
    shared,
)
from meeple.check.scrabble import Table, best_move, non_word
from meeple.check.wire import LinePeer, Peer, diagnose, names
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import CLARKSON

__all__ = ["HELLO", "SERVER_CHECKS", "ClPeer"]

HELLO = b"HELLO 1.0.1,Linux,Python/3.11,meeple check\r\n"
# §3.1 <hellocmd>: "HELLO " <version> ',' <system> ',' <program> ',' <author>
_HELLO = re.compile(r"HELLO (\d+\.\d+\.?\d*),([^,]+),([^,]+),(.+)")
_PROGRAM = re.compile(r"[^/]+/.+")  # §3.1: language, '/', version information
_CELL = re.compile(r"\(([A-Za-z]|0),([0-4])\)")  # §3.11 <board-tile>
_SETTLE = 0.05  # lets the server see the previous check's connections close
GRAMMAR = "2 Grammar"  # the RFC's section on lines: the transport faults' rule
# ERRATA (Clarkson): accept <LF> for <CRLF>; strip NULs around lines.
TOLERATED = frozenset({"NUL padding", "a bare LF as the line end"})


class ClPeer(LinePeer):
    """A Clarkson connection of the kit: ASCII lines, the kit's ending in CRLF; a
    BOARDPUSH stepped over is read to its end."""

    line_end = b"\r\n"
    encoding = "ascii"
    section = GRAMMAR
    tolerates = TOLERATED

    def __init__(self, peer: Peer, name: str = "", ctx: Context | None = None) -> None:
        super().__init__(peer, name, ctx)
        self.hello = ""

    @classmethod
    async def open(cls, ctx: Context, label: str) -> ClPeer:
        await asyncio.sleep(_SETTLE)
        return await super().open(ctx, label)

    def matches(self, line: str, start: str) -> bool:
        return line.split(" ", 1)[0] == start

    async def skipped(self, line: str) -> None:
        if line.split(" ", 1)[0] == "BOARDPUSH":
            await self.board()

    async def board(self) -> list[list[str]]:
        """The 15 rows (and the closing empty line) of a BOARDPUSH whose first line was read."""
        rows = []
        for i in range(15):
            line = await self.line(self.peer.wait * 3, f"BOARDPUSH row {i + 1}")
            cells = _CELL.findall(line)
            if len(cells) != 15 or _CELL.sub("", line).strip():
                raise CheckFailed(f"BOARDPUSH row {i + 1} is not 15 (X,m) cells: {line!r}")
            rows.append([c[0] for c in cells])
        end = await self.line(self.peer.wait * 3, "the empty line ending BOARDPUSH")
        if end.strip():
            raise CheckFailed(f"BOARDPUSH has no empty line after its rows: {end!r}")
        return rows


def _lexicon(ctx: Context) -> Lexicon:
    lexicon: Lexicon = ctx.target.options["lexicon"]
    return lexicon


async def greeted(ctx: Context, label: str) -> ClPeer:
    """A connection past HELLO and OK (set-up steps "3.1 HELLO", "3.3 OK")."""
    with ctx.setup(f"HELLO from the server to {label}", "3.1 HELLO"):
        p = await ClPeer.open(ctx, label)
        p.hello = await p.expect("HELLO")
    with ctx.setup(f"OK to {label}'s HELLO 1.0.1", "3.3 OK"):
        await p.peer.send(HELLO)
        await p.expect("OK", skip=("USERJOIN", "USERCHANGE"))
    ctx.passed()
    return p


async def named(ctx: Context, name: str) -> ClPeer:
    """A greeted connection that set its name (set-up step "3.6 USERCHANGE")."""
    p = await greeted(ctx, name)
    with ctx.setup(f"USERSET {name}", "3.6 USERCHANGE"):
        await p.send(f"USERSET {name}")
        while True:
            line = await p.expect("USERCHANGE", skip=("USERJOIN",))
            if line.split(" ")[-1] == name:
                break
    p.name = name
    return p


@dataclass
class Opening:
    lines: list[str] = field(default_factory=list)
    board: list[list[str]] = field(default_factory=list)
    tiles: str = ""
    turn: str = ""


async def _opening(p: ClPeer) -> Opening:
    """What follows STARTING up to the first TURN (§3.9–§3.13, §4.1)."""
    o = Opening()
    ctx = p.ctx
    assert ctx is not None
    with ctx.setup(f"READY by {p.name}", "3.9 STARTING"):
        await p.expect("STARTING", skip=("OK", "USERJOIN", "USERCHANGE"))
    while True:
        with ctx.setup(f"the opening up to TURN, to {p.name}", "3.13 TURN"):
            line = await p.line(p.peer.wait * 3, "the opening up to TURN")
        o.lines.append(line)
        if line == "BOARDPUSH":
            with ctx.setup(f"the opening BOARDPUSH to {p.name}", "3.11 BOARDPUSH"):
                o.board = await p.board()
        elif line.startswith("TILES"):
            o.tiles = line[6:]
        elif line.startswith("TURN "):
            o.turn = line[5:]
            return o
        elif line.startswith(("NOK", "WINNER")):
            with ctx.setup(f"the opening up to TURN, to {p.name}", "3.13 TURN"):
                raise CheckFailed(
                    f"{p.peer.label}: {line!r} before the first TURN", got=line.encode()
                )


def _rack(tiles: str) -> str:
    """A rack the kit can play from; could not test without one (§3.12 TILES is a SHOULD)."""
    if re.fullmatch("[A-Z]{2,7}", tiles) is None:
        raise CannotTest(f"no usable TILES to play from: {tiles!r}")
    return tiles


async def solo(ctx: Context, tag: str) -> tuple[ClPeer, Opening]:
    """One client alone, READY: the game starts at once (§3.8)."""
    (name,) = names(ctx, tag)
    p = await named(ctx, name)
    await p.send("READY")
    return p, await _opening(p)


async def duo(ctx: Context, tags: tuple[str, str]) -> tuple[dict[str, ClPeer], dict[str, Opening]]:
    a_name, b_name = names(ctx, *tags)
    a = await named(ctx, a_name)
    b = await named(ctx, b_name)
    await a.send("READY")
    await b.send("READY")
    peers = {a_name: a, b_name: b}
    openings = {n: await _opening(p) for n, p in peers.items()}
    return peers, openings


def _place(move: Move) -> str:
    # ERRATA: x is the column, y the row, 0-14
    return "PLACE " + " ".join(f"({t.tile.upper()},{t.x},{t.y})" for t in move.tiles)


SERVER_CHECKS, check = registry("clarkson.server")


@check(
    "hello-first",
    "3.1 HELLO",
    Level.MUST,
    "the server sends HELLO right after the connection opens",
)
async def _hello_first(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    line = await p.line(ctx.wait, "HELLO")
    ctx.expect(line.startswith("HELLO "), f"the first line is {line!r}")


@check("hello-grammar", "3.1 HELLO", Level.MUST, "HELLO is version,system,program,author")
async def _hello_grammar(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    line = await p.expect("HELLO")
    ctx.expect(_HELLO.fullmatch(line) is not None, f"HELLO does not match §3.1: {line!r}")


@check("hello-program", "3.1 HELLO", Level.MUST, "HELLO's program field is language/version")
async def _hello_program(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    line = await p.expect("HELLO")
    m = _HELLO.fullmatch(line)
    if m is None:
        ctx.fail(f"HELLO does not match §3.1: {line!r}")
    else:
        ctx.expect(_PROGRAM.fullmatch(m.group(3)) is not None, f"program is {m.group(3)!r}")


@check("hello-version", "3.1 HELLO", Level.SHOULD, "the server reports version 1.0.1")
async def _hello_version(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    line = await p.expect("HELLO")
    ctx.expect(line.startswith("HELLO 1.0.1,"), f"HELLO is {line!r}")


@check("ok", "3.3 OK", Level.MUST, "a 1.0.1 client's HELLO is acknowledged with OK")
async def _ok(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    await p.expect("HELLO")
    await p.peer.send(HELLO)
    line = await p.line(ctx.wait, "OK")
    ctx.expect(line == "OK" or line.startswith("OK "), f"the reply to HELLO is {line!r}")


@check("nok-version", "3.4 NOK", Level.SHOULD, "an unsupported version (1.4.7) gets NOK")
async def _nok_version(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    await p.expect("HELLO")
    await p.send("HELLO 1.4.7,Temple OS,Holy-C/1,Hunter")
    line = await p.line(ctx.wait, "NOK")
    ctx.expect(line == "NOK" or line.startswith("NOK "), f"the reply is {line!r}")


@check("nok-unknown", "3.4 NOK", Level.MUST, "an unrecognized command gets NOK")
async def _nok_unknown(ctx: Context) -> None:
    p = await greeted(ctx, "c")
    await p.send("FOOBAR")
    line = await p.expect("NOK", skip=("USERJOIN", "USERCHANGE"))
    ctx.passed(line)


@check(
    "before-hello",
    "3.1 HELLO",
    Level.SHOULD,
    "a command before HELLO ends the connection with GOODBYE",
)
async def _before_hello(ctx: Context) -> None:
    p = await ClPeer.open(ctx, "c")
    await p.expect("HELLO")
    await p.send("READY")
    line = await p.line(ctx.wait, "GOODBYE")
    ctx.expect(line == "GOODBYE", f"the reply is {line!r}")
    ctx.expect(await p.peer.closed(ctx.wait), "the connection stayed open after GOODBYE")


@check("quit", "3.2 QUIT", Level.MUST, "QUIT is answered GOODBYE and the connection closed")
async def _quit(ctx: Context) -> None:
    p = await greeted(ctx, "c")
    await p.send("QUIT")
    await p.expect("GOODBYE", skip=("USERJOIN", "USERCHANGE"))
    ctx.expect(await p.peer.closed(ctx.wait), "the connection stayed open after GOODBYE")


@check("userset", "3.6 USERCHANGE", Level.MUST, "USERSET is answered USERCHANGE old new")
async def _userset(ctx: Context) -> None:
    (name,) = names(ctx, "us")
    p = await greeted(ctx, name)
    await p.send(f"USERSET {name}")
    line = await p.expect("USERCHANGE", skip=("USERJOIN",))
    parts = line.split(" ")
    ctx.expect(len(parts) == 3 and parts[2] == name, f"got {line!r}")


@check("userset-taken", "3.5 USERSET", Level.SHOULD, "USERSET of a name in use gets NOK")
async def _userset_taken(ctx: Context) -> None:
    (name,) = names(ctx, "tk")
    await named(ctx, name)
    q = await greeted(ctx, "second")
    await q.send(f"USERSET {name}")
    line = await q.expect("NOK", skip=("USERJOIN", "USERCHANGE"))
    ctx.passed(line)


@check(
    "userjoin-newcomer",
    "3.7 USERJOIN",
    Level.MUST,
    "a newcomer is told USERJOIN for everyone already there",
)
async def _userjoin_newcomer(ctx: Context) -> None:
    (first, second) = names(ctx, "j1", "j2")
    await named(ctx, first)
    q = await ClPeer.open(ctx, second)
    await q.expect("HELLO")
    await q.peer.send(HELLO)
    seen = []
    while True:
        line = await q.line(ctx.wait, f"USERJOIN {first}")
        seen.append(line)
        if line == f"USERJOIN {first}":
            break
        ctx.expect(line.startswith(("OK", "USERJOIN", "USERCHANGE")), f"got {seen}")
    ctx.passed()


@check(
    "userjoin-others",
    "3.7 USERJOIN",
    Level.MUST,
    "clients already there are told USERJOIN of a newcomer",
)
async def _userjoin_others(ctx: Context) -> None:
    (first,) = names(ctx, "o1")
    p = await named(ctx, first)
    await greeted(ctx, "newcomer")
    line = await p.expect("USERJOIN")
    ctx.passed(line)


@check(
    "userchange-others",
    "3.6 USERCHANGE",
    Level.MUST,
    "USERCHANGE goes to every client, not only the renamed one",
)
async def _userchange_others(ctx: Context) -> None:
    (first, second) = names(ctx, "u1", "u2")
    p = await named(ctx, first)
    await named(ctx, second)
    line = await p.expect("USERCHANGE", skip=("USERJOIN",))
    ctx.expect(line.endswith(f" {second}"), f"got {line!r}")


@check(
    "ready-starting", "3.9 STARTING", Level.MUST, "a lone client's READY starts the game: STARTING"
)
async def _ready_starting(ctx: Context) -> None:
    (name,) = names(ctx, "rs")
    p = await named(ctx, name)
    await p.send("READY")
    line = await p.expect("STARTING", skip=("OK",))
    ctx.passed(line)


@check("score-initial", "3.10 SCORE", Level.SHOULD, "at the start every player gets SCORE 0 name")
async def _score_initial(ctx: Context) -> None:
    _, o = await solo(ctx, "si")
    (name,) = names(ctx, "si")
    ctx.expect(f"SCORE 0 {name}" in o.lines, f"the opening is {o.lines}")


@check(
    "boardpush-initial",
    "3.11 BOARDPUSH",
    Level.MUST,
    "the opening BOARDPUSH is 15 rows of 15 empty (0,m) cells",
)
async def _boardpush_initial(ctx: Context) -> None:
    _, o = await solo(ctx, "bi")
    ctx.expect(bool(o.board), f"no BOARDPUSH before the first TURN: {o.lines}")
    ctx.expect(all(c == "0" for row in o.board for c in row), "the opening board is not empty")


@check(
    "tiles-initial",
    "3.12 TILES",
    Level.SHOULD,
    "at the start each player gets TILES with 7 letters",
)
async def _tiles_initial(ctx: Context) -> None:
    _, o = await solo(ctx, "ti")
    ctx.expect(re.fullmatch("[A-Z]{7}", o.tiles) is not None, f"TILES is {o.tiles!r}")


@check("turn", "3.13 TURN", Level.MUST, "the first player is told TURN with their name")
async def _turn(ctx: Context) -> None:
    _, o = await solo(ctx, "tu")
    (name,) = names(ctx, "tu")
    ctx.expect(o.turn == name, f"TURN names {o.turn!r}")


@check(
    "place",
    "3.14 PLACE",
    Level.MUST,
    "a legal PLACE is acknowledged OK, then TILES, SCORE, BOARDPUSH",
)
async def _place_check(ctx: Context) -> None:
    p, o = await solo(ctx, "pl")
    move = best_move(Board(), o.tiles, _lexicon(ctx), CLARKSON)
    if move is None:
        raise CannotTest(f"no opening move for {o.tiles}")
    await p.send(_place(move))
    ok = await p.line(p.peer.wait * 3, "OK")
    ctx.expect(ok.startswith("OK"), f"a legal {_place(move)!r} got {ok!r}")
    seen = []
    board: list[list[str]] = []
    while True:
        line = await p.line(p.peer.wait * 3, "TILES, SCORE, BOARDPUSH and TURN")
        seen.append(line.split(" ")[0])
        if line == "BOARDPUSH":
            board = await p.board()
        if line.startswith("TURN"):
            break
    for word in ("TILES", "SCORE", "BOARDPUSH"):
        ctx.expect(word in seen, f"after the move the server sent {seen}, no {word}")
    for t in move.tiles:
        ctx.expect(board[t.y][t.x] == t.tile.upper(), f"BOARDPUSH lacks {t.tile} at ({t.x},{t.y})")


@check(
    "score-after-turn",
    "3.10 SCORE",
    Level.MUST,
    "after a turn SCORE gives the mover's total, as the rules score it",
)
async def _score_after(ctx: Context) -> None:
    p, o = await solo(ctx, "sa")
    (name,) = names(ctx, "sa")
    move = best_move(Board(), o.tiles, _lexicon(ctx), CLARKSON)
    if move is None:
        raise CannotTest(f"no opening move for {o.tiles}")
    await p.send(_place(move))
    line = await p.expect("SCORE", skip=("OK", "TILES"))
    ctx.expect(line == f"SCORE {move.score} {name}", f"got {line!r}, the move scores {move.score}")


@check("place-not-turn", "3.13 TURN", Level.MUST, "PLACE by a player whose turn it is not gets NOK")
async def _place_not_turn(ctx: Context) -> None:
    peers, openings = await duo(ctx, ("nt1", "nt2"))
    waiting = next(p for n, p in peers.items() if n != openings[n].turn)
    await waiting.send("PLACE (A,7,7)")
    line = await waiting.line(ctx.wait * 3, "NOK")
    ctx.expect(line.startswith("NOK"), f"got {line!r}")


@check("place-not-in-hand", "3.14 PLACE", Level.MUST, "PLACE of a tile not in hand gets NOK")
async def _place_not_in_hand(ctx: Context) -> None:
    p, o = await solo(ctx, "nh")
    absent = next(c for c in "QZXJKVWYBCFHMP" if c not in o.tiles)
    await p.send(f"PLACE ({absent},7,7) ({absent},8,7)")
    line = await p.line(p.peer.wait * 3, "NOK")
    ctx.expect(line.startswith("NOK"), f"got {line!r}")


@check("place-not-centre", "3.14 PLACE", Level.MUST, "a first word off the centre square gets NOK")
async def _place_not_centre(ctx: Context) -> None:
    p, o = await solo(ctx, "nc")
    rack = _rack(o.tiles)
    await p.send(f"PLACE ({rack[0]},0,0) ({rack[1]},1,0)")
    line = await p.line(p.peer.wait * 3, "NOK")
    ctx.expect(line.startswith("NOK"), f"got {line!r}")


@check("place-unknown-word", "3.10 SCORE", Level.SHOULD, "a word not in the dictionary gets NOK")
async def _place_unknown(ctx: Context) -> None:
    p, o = await solo(ctx, "uw")
    bad = non_word(o.tiles, _lexicon(ctx))
    if bad is None:
        raise CannotTest(f"every pair of letters in {o.tiles} is a word")
    await p.send(f"PLACE ({bad[0]},7,7) ({bad[1]},8,7)")
    line = await p.line(p.peer.wait * 3, "NOK")
    ctx.expect(line.startswith("NOK"), f"PLACE of {bad!r} got {line!r}")


@check(
    "place-not-connected", "3.14 PLACE", Level.MUST, "a later word not touching the board gets NOK"
)
async def _place_not_connected(ctx: Context) -> None:
    p, o = await solo(ctx, "cn")
    move = best_move(Board(), o.tiles, _lexicon(ctx), CLARKSON)
    if move is None:
        raise CannotTest(f"no opening move for {o.tiles}")
    await p.send(_place(move))
    tiles = _rack((await p.expect("TILES", skip=("OK",)))[6:])
    await p.expect("TURN", skip=("SCORE", "BOARDPUSH"))
    await p.send(f"PLACE ({tiles[0]},0,0) ({tiles[1]},1,0)")
    line = await p.line(p.peer.wait * 3, "NOK")
    ctx.expect(line.startswith("NOK"), f"got {line!r}")


@check("pass", "3.15 PASS", Level.MUST, "PASS ends the turn: the next TURN follows")
async def _pass(ctx: Context) -> None:
    peers, openings = await duo(ctx, ("pa1", "pa2"))
    first = next(iter(openings.values())).turn
    if first not in peers:
        raise CheckFailed(f"TURN names {first!r}")
    await peers[first].send("PASS")
    other = next(n for n in peers if n != first)
    line = await peers[other].expect("TURN", skip=("SCORE", "BOARDPUSH"))
    ctx.expect(line == f"TURN {other}", f"after {first}'s PASS: {line!r}")


@check(
    "pass-twice", "3.15 PASS", Level.MUST, "PASS twice in a row by a player ends the game (WINNER)"
)
async def _pass_twice(ctx: Context) -> None:
    p, _ = await solo(ctx, "p2")
    await p.send("PASS")
    await p.expect("TURN", skip=("OK", "TILES", "SCORE", "BOARDPUSH"))
    await p.send("PASS")
    line = await p.expect("WINNER", skip=("OK", "TILES", "SCORE", "BOARDPUSH"))
    ctx.expect(re.fullmatch(r"WINNER \d+ \S+", line) is not None, f"got {line!r}")


@check(
    "exchange-one",
    "3.16 EXCHANGE",
    Level.MUST,
    "EXCHANGE of one tile: OK, TILES, and SCORE even for no points",
)
async def _exchange_one(ctx: Context) -> None:
    p, o = await solo(ctx, "x1")
    (name,) = names(ctx, "x1")
    await p.send(f"EXCHANGE {_rack(o.tiles)[0]}")
    ok = await p.line(p.peer.wait * 3, "OK")
    ctx.expect(ok.startswith("OK"), f"got {ok!r}")
    tiles = await p.expect("TILES", skip=("OK",))
    ctx.expect(len(tiles) == 6 + 7, f"got {tiles!r}")
    score = await p.expect("SCORE", skip=("BOARDPUSH",))
    ctx.expect(score == f"SCORE 0 {name}", f"got {score!r}")


@check(
    "exchange-all", "3.16 EXCHANGE", Level.MUST, "EXCHANGE with no tile exchanges the whole hand"
)
async def _exchange_all(ctx: Context) -> None:
    p, _ = await solo(ctx, "xa")
    await p.send("EXCHANGE")
    ok = await p.line(p.peer.wait * 3, "OK")
    ctx.expect(ok.startswith("OK"), f"got {ok!r}")
    tiles = await p.expect("TILES", skip=("OK",))
    ctx.expect(re.fullmatch("TILES [A-Z]{7}", tiles) is not None, f"got {tiles!r}")


@check(
    "quit-midgame",
    "4 Protocol Overview and Examples",
    Level.SHOULD,
    "a player quitting mid-game leaves the others playing",
    errata="Clarkson: a player quitting mid-game: the game continues for the rest",
)
async def _quit_midgame(ctx: Context) -> None:
    peers, openings = await duo(ctx, ("q1", "q2"))
    first = next(iter(openings.values())).turn
    other = next(n for n in peers if n != first)
    await peers[other].send("QUIT")
    await peers[other].expect("GOODBYE", skip=("SCORE", "BOARDPUSH", "TILES"))
    await peers[first].send("PASS")
    line = await peers[first].expect(
        "TURN", skip=("OK", "SCORE", "BOARDPUSH", "TILES"), timeout=ctx.wait * 3
    )
    ctx.expect(line == f"TURN {first}", f"got {line!r}")


@check("crlf", "2 Grammar", Level.SHOULD, "the server ends its lines with CRLF")
async def _crlf(ctx: Context) -> None:
    # ERRATA: a bare LF and NUL padding are tolerated ("tolerated", never a failure);
    # a line ended some other way (CR alone, UTF-16...) is not.
    p, _ = await solo(ctx, "lf")
    raw = bytes(p.peer.recorder.received)
    fault = diagnose(raw, b"\n", GRAMMAR, TOLERATED, b"\r\n")
    if fault is not None and not fault.tolerated:
        ctx.decided += 1
        raise CheckFailed(f"{fault.name}: {fault.evidence!r}", got=fault.evidence, fault=fault)
    ctx.passed()


@check(
    "lf-accepted",
    "2 Grammar",
    Level.SHOULD,
    "a line ended by a bare LF is accepted",
    errata="Clarkson: accept <LF> for <CRLF>",
)
async def _lf(ctx: Context) -> None:
    (name,) = names(ctx, "bl")
    p = await greeted(ctx, name)
    await p.peer.send(f"USERSET {name}\n".encode())
    line = await p.line(ctx.wait, "USERCHANGE")
    if line.startswith("NOK"):
        raise Differs(f"a bare LF line got {line!r}")
    ctx.expect(line.startswith("USERCHANGE") and line.endswith(name), f"got {line!r}")


@check(
    "nul-padding",
    "2 Grammar",
    Level.SHOULD,
    "a line padded with NUL bytes (a 4096-byte buffer) is accepted",
    errata="Clarkson: strip NULs around lines",
)
async def _nul(ctx: Context) -> None:
    (name,) = names(ctx, "nul")
    p = await greeted(ctx, name)
    await p.peer.send(f"USERSET {name}\r\n".encode().ljust(4096, b"\x00"))
    line = await p.line(ctx.wait, "USERCHANGE")
    if line.startswith("NOK"):
        raise Differs(f"a NUL-padded line got {line!r}")
    ctx.expect(line.startswith("USERCHANGE") and line.endswith(name), f"got {line!r}")


@check("split", "2 Grammar", Level.MUST, "a line sent one byte per write is understood")
async def _split(ctx: Context) -> None:
    (name,) = names(ctx, "sp")
    p = await greeted(ctx, name)
    await p.send(f"USERSET {name}", bytewise=True)
    line = await p.expect("USERCHANGE")
    ctx.expect(line.endswith(f" {name}"), f"got {line!r}")


@check(
    "coalesced", "2 Grammar", Level.MUST, "several lines in one write get their replies in order"
)
async def _coalesced(ctx: Context) -> None:
    (name,) = names(ctx, "co")
    p = await ClPeer.open(ctx, name)
    await p.expect("HELLO")
    # Each command is answered before the next is acted on, the QUIT that ends the
    # write included: USERSET's USERCHANGE goes out before QUIT's GOODBYE closes.
    await p.peer.send(HELLO + f"USERSET {name}\r\nFOOBAR\r\nQUIT\r\n".encode())
    await p.expect("OK")
    line = await p.expect("USERCHANGE")
    ctx.expect(line.endswith(f" {name}"), f"got {line!r}")
    await p.expect("NOK")
    await p.expect("GOODBYE")


@check(
    "max-length",
    "2 Grammar",
    Level.SHOULD,
    "a 64 KiB line is refused (NOK or close), and the server keeps serving",
)
async def _max_length(ctx: Context) -> None:
    p = await greeted(ctx, "big")
    await p.peer.send(b"USERSET " + b"x" * 65536 + b"\r\n")
    try:
        line = await p.line(ctx.wait, "a reply to a 64 KiB line")
        ctx.expect(line.startswith(("NOK", "GOODBYE")), f"got {line[:60]!r}")
    except CheckFailed as e:
        if not p.peer.eof:
            raise
        ctx.passed(f"closed ({e})")
    await p.peer.close()
    q = await ClPeer.open(ctx, "after")
    await q.expect("HELLO")


# --- a whole game -----------------------------------------------------------------------


@dataclass
class WholeGame:
    table: Table
    winners: list[str]
    last_scores: dict[str, int]
    score_bad: list[str]
    board_bad: list[str]
    moves: int


async def _whole_game(ctx: Context) -> WholeGame:
    """Two kit players play a whole game with the engine's best moves."""
    peers, openings = await duo(ctx, ("wg1", "wg2"))
    lexicon = _lexicon(ctx)
    table = Table(CLARKSON, lexicon, list(peers))
    table.racks = {n: o.tiles for n, o in openings.items()}
    turn = next(iter(openings.values())).turn
    result = WholeGame(table, [], {}, [], [], 0)
    last: dict[str, str] = {}
    while True:
        if turn not in peers:
            raise CheckFailed(f"TURN names {turn!r}")
        rack = table.racks[turn]
        move = best_move(table.board, rack, lexicon, CLARKSON)
        if move is not None:
            command = _place(move)
            table.play(turn, move.tiles)
        elif table.bag >= 7:
            command = "EXCHANGE"
        else:
            command = "PASS"
        await peers[turn].send(command)
        # The game ends here (ERRATA: PASS twice in a row; or the bag and a rack empty):
        # what does not come then is WINNER's, otherwise the next TURN's.
        ending = (command == "PASS" and last.get(turn) == "PASS") or (
            move is not None and table.bag <= 0 and not table.racks[turn]
        )
        last[turn] = command.split(" ")[0]
        step = ("WINNER", "3.17 WINNER") if ending else ("the next TURN", "3.13 TURN")
        result.moves += 1
        if result.moves > 200:
            raise CannotTest("the game does not end")
        nxt = None
        for name, peer in peers.items():
            said: list[str] = []
            while True:
                with ctx.setup(f"{command} by {turn}, up to {step[0]}", step[1]):
                    line = await peer.line(peer.peer.wait * 3, "the turn's messages")
                word = line.split(" ")[0]
                if word == "NOK":
                    with ctx.setup(f"{command} by {turn}, a legal move", "3.14 PLACE"):
                        raise CheckFailed(f"a legal {command!r} got {line!r}", got=line.encode())
                if word == "TILES" and name == turn:
                    table.racks[turn] = line[6:]
                elif word == "SCORE":
                    parts = line.split(" ")
                    if len(parts) == 3 and parts[1].lstrip("-").isdigit():
                        result.last_scores[parts[2]] = int(parts[1])
                        if parts[2] == turn:
                            said.append(line)
                elif word == "BOARDPUSH":
                    rows = await peer.board()
                    for x, y, tile in table.board.tiles():
                        if rows[y][x].upper() != tile.upper():
                            result.board_bad.append(f"({x},{y}) is {rows[y][x]}, not {tile}")
                elif word == "TURN":
                    nxt = line[5:]
                    # §3.10: the mover's total (the SCOREs before WINNER are the final
                    # totals, which the RFC leaves to the server's end rule)
                    want = table.scores.get(turn, 0)
                    bad = [s for s in said if s != f"SCORE {want} {turn}"]
                    result.score_bad.extend(f"{s} (the rules: {want})" for s in bad)
                    break
                elif word == "WINNER":
                    result.winners.append(line)
                    break
        if len(result.winners) == len(peers):
            return result
        if result.winners:
            raise CheckFailed(f"WINNER reached only some players: {result.winners}")
        turn = nxt or ""


whole_game = shared("whole game", _whole_game)


@check(
    "winner",
    "3.17 WINNER",
    Level.MUST,
    "a whole game ends with WINNER score name, the top scorer, to all",
)
async def _winner(ctx: Context) -> None:
    g = await whole_game(ctx)
    best = max(g.last_scores.values(), default=None)
    for line in g.winners:
        m = re.fullmatch(r"WINNER (\d+) (\S+)", line)
        ctx.expect(m is not None, f"WINNER line {line!r}")
        assert m is not None
        ctx.expect(
            int(m.group(1)) == best and g.last_scores.get(m.group(2)) == best,
            f"{line!r} but the scores are {g.last_scores}",
        )


@check(
    "score-game",
    "3.10 SCORE",
    Level.MUST,
    "through a whole game SCORE is the mover's total, as the rules score it",
)
async def _score_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.score_bad, f"wrong SCORE: {g.score_bad[:3]}")


@check(
    "boardpush-game",
    "3.11 BOARDPUSH",
    Level.MUST,
    "through a whole game every BOARDPUSH shows every tile laid",
)
async def _boardpush_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.board_bad, f"BOARDPUSH differs from the game: {g.board_bad[:3]}")
    ctx.expect(g.moves > 2, f"only {g.moves} moves")

"""Conformance checks for servers of the Twente Scrabble protocol (scrabble-twente-v2.md).

Each check names the spec's own heading as its section. The kit connects as several
clients, plays legal moves from meeple's engine, provokes every error code E001–E015,
and sends split, coalesced and oversized messages. Readings of unclear points follow
``ERRATA.md`` (Twente); a server that takes the other reading is reported as
"differs", not failed.

Each check makes its own set-up (names, a game) in steps named after the message they
wait for (:meth:`~meeple.check.core.Context.setup`): a server that breaks ANNOUNCE
fails the ANNOUNCE checks, and the others could not test. While waiting for an answer
the kit steps over what the spec allows at any time (NOTIFYCHAT, PLAYERDISCONNECTED)
and over commands the spec does not define (the ``announce`` check fails on those); a
line end after RS is read past and reported "tolerated" (ERRATA).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from meeple.check.core import (
    CannotTest,
    CheckFailed,
    Context,
    Differs,
    Fault,
    Level,
    NotApplicable,
    Scenario,
    registry,
    shared,
)
from meeple.check.scrabble import Table, best_move, non_word, two_letter_word
from meeple.check.wire import Peer, diagnose, joined_or_split, names
from meeple.games.scrabble.board import Board, Direction, format_square
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import tiles_from_word
from meeple.games.scrabble.tiles import BLANK, ENGLISH
from meeple.protocols.twente.errors import RemoteProtocolError
from meeple.protocols.twente.messages import decode

__all__ = ["SERVER_CHECKS", "TwPeer", "frame"]

US, RS = "\x1f", "\x1e"
_RS = RS.encode()
DELIMITERS = "Delimiters"  # the spec's section on framing: the transport faults' rule
LINE_END_AFTER_RS = "a line end after RS"  # ERRATA: tolerated
# Every command the spec defines (spec "Commands"); anything else is stepped over while
# the kit waits for an answer, and the ``announce`` check fails on it.
COMMANDS = frozenset(
    {
        "ANNOUNCE",
        "WELCOME",
        "REQUESTGAME",
        "INFORMQUEUE",
        "STARTGAME",
        "NOTIFYTURN",
        "MAKEMOVE",
        "NEWTILES",
        "INFORMMOVE",
        "ERROR",
        "GAMEOVER",
        "PLAYERDISCONNECTED",
        "SENDCHAT",
        "NOTIFYCHAT",
    }
)
# Messages the spec allows at any time: never the answer the kit waits for.
ANY_TIME = ("NOTIFYCHAT", "PLAYERDISCONNECTED")
_CODE = re.compile(r"E0\d\d")
TEXT_FOR_CODE = "text where the spec has an error code"
_TEXT_ADVICE = "send ERROR, US, the code (E001-E015, spec 'Errors'), RS: a code, not prose"


def frame(*fields: str) -> bytes:
    """``COMMAND US ARG ... RS`` (spec "Delimiters")."""
    return US.join(fields).encode() + _RS


def show(fields: list[str] | tuple[str, ...]) -> str:
    return "|".join(fields)


class TwPeer:
    """A Twente connection of the kit: messages as lists of fields."""

    def __init__(self, peer: Peer, name: str = "", ctx: Context | None = None) -> None:
        self.peer = peer
        self.name = name
        self.ctx = ctx
        self.flags: list[str] = []
        self.seen: list[list[str]] = []
        self.stepped: list[list[str]] = []  # unknown commands stepped over
        peer.section = DELIMITERS
        peer.tolerates = frozenset({LINE_END_AFTER_RS})
        peer.probe_line_end = True

    @classmethod
    async def open(cls, ctx: Context, label: str) -> TwPeer:
        return cls(await Peer.open(ctx, label, _RS), ctx=ctx)

    async def send(self, *fields: str, bytewise: bool = False) -> None:
        await self.peer.send(frame(*fields), bytewise=bytewise)

    async def next(self, timeout: float | None = None, what: str = "a message") -> list[str]:
        """The next message's fields. A line end right after RS (ERRATA tolerance) is
        skipped here; the strict check "delimiters" reports it."""
        data = await self.peer.message(timeout, what)
        body = data[:-1].lstrip(b"\r\n")
        if len(body) < len(data) - 1 and self.ctx is not None:
            # the line end after the previous message's RS, as diagnose sees it
            fault = self.peer.diagnose(_RS + data[: len(data) - 1 - len(body)])
            if fault is not None and fault.tolerated:
                self.ctx.tolerate(fault)
        if not body:
            return await self.next(timeout, what)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise self.peer.not_text(data, "message is not UTF-8 text", body) from None
        fields = text.split(US)
        self.seen.append(fields)
        return fields

    async def reply(self, timeout: float | None = None, what: str = "a reply") -> list[str]:
        """The next message that is not one the spec allows at any time, nor a command it
        does not define (both stepped over: see :meth:`expect`)."""
        while True:
            fields = await self.next(timeout, what)
            if fields[0].upper() in ANY_TIME:
                continue
            if fields[0].upper() not in COMMANDS:
                self.stepped.append(fields)
                continue
            return fields

    def failed(self, why: str, fields: list[str], expected: str = "") -> CheckFailed:
        """A CheckFailed for an unexpected message, with its bytes and what it shows."""
        got = frame(*fields)
        fault = self.peer.diagnose(got) or joined_or_split(expected, US.join(fields), DELIMITERS)
        return CheckFailed(
            f"{self.peer.label}: {why}" + (f" ({fault.name})" if fault else ""),
            got=got,
            fault=fault,
        )

    async def expect(
        self, command: str, *, skip: tuple[str, ...] = ("NOTIFYCHAT",), timeout: float | None = None
    ) -> list[str]:
        """The next message that is not a ``skip`` one; CheckFailed unless it is ``command``.

        Commands the spec does not define are stepped over too (kept in ``stepped``).
        The message must also decode as the spec defines it (meeple's codec)."""
        skip = (*skip, "PLAYERDISCONNECTED")
        while True:
            fields = await self.next(timeout, command)
            if fields[0].upper() in skip and command not in skip:
                continue
            if (
                fields[0].upper() not in COMMANDS
                and joined_or_split(command, US.join(fields), DELIMITERS) is None
                and self.peer.diagnose(frame(*fields)) is None
            ):
                self.stepped.append(fields)
                continue
            if fields[0].upper() != command:
                raise self.failed(f"expected {command}, got {show(fields)!r}", fields, command)
            try:
                decode(fields)
            except RemoteProtocolError as e:
                raise self.failed(f"malformed {command}: {show(fields)!r} ({e})", fields) from None
            return fields

    async def error(self, ctx: Context, code: str, why: str) -> None:
        """Expect ``ERROR US code``; a different code or text instead of a code fails
        (named: "text where the spec has an error code")."""
        fields = await self.reply(self.peer.wait * 3, f"ERROR {code}")
        self.is_error(ctx, fields, code, why)

    @staticmethod
    def error_of(ctx: Context, fields: list[str], code: str, why: str) -> None:
        """:meth:`is_error` for a message read earlier (a shared game's)."""
        if fields[:2] == ["ERROR", code]:
            ctx.passed()
            return
        failure = CheckFailed(
            f"{why}: expected ERROR|{code}, got {show(fields)!r}", got=frame(*fields)
        )
        if fields[0] == "ERROR" and (len(fields) < 2 or not _CODE.fullmatch(fields[1])):
            failure.fault = Fault(TEXT_FOR_CODE, _TEXT_ADVICE, evidence=frame(*fields))
        ctx.decided += 1
        raise failure

    def is_error(self, ctx: Context, fields: list[str], code: str, why: str) -> None:
        """Decide that ``fields`` are ``ERROR US code``; text instead of a code is named."""
        ctx.decided += 1
        if fields[0] == "ERROR" and len(fields) >= 2 and fields[1] == code:
            return
        failure = self.failed(f"{why}: expected ERROR|{code}, got {show(fields)!r}", fields)
        if fields[0] == "ERROR" and (len(fields) < 2 or not _CODE.fullmatch(fields[1])):
            failure.fault = Fault(TEXT_FOR_CODE, _TEXT_ADVICE, evidence=failure.got or b"")
        raise failure

    async def quiet(self, wait: float = 0.2) -> bool:
        return await self.peer.quiet(wait)


def _lexicon(ctx: Context) -> Lexicon:
    lexicon: Lexicon = ctx.target.options["lexicon"]
    return lexicon


async def announced(ctx: Context, name: str, *flags: str) -> TwPeer:
    """A connection that announced ``name`` and was welcomed (set-up step "ANNOUNCE")."""
    with ctx.setup(f"ANNOUNCE {name}", "ANNOUNCE"):
        p = await TwPeer.open(ctx, name)
        p.name = name
        await p.send("ANNOUNCE", name, *flags)
        welcome = await p.expect("WELCOME")
        if len(welcome) < 2 or welcome[1] != name:
            ctx.decided += 1
            raise p.failed(f"WELCOME names {welcome[1:2]}, not {name!r}", welcome)
        p.flags = [f.upper() for f in welcome[2:]]
        ctx.passed()
    return p


@dataclass
class Game:
    """Two announced players in a game: who they are, their racks, who moves first."""

    peers: dict[str, TwPeer]
    order: list[str]
    racks: dict[str, str]
    first: str
    opening: dict[str, list[list[str]]] = field(default_factory=dict)

    @property
    def mover(self) -> TwPeer:
        return self.peers[self.first]

    @property
    def other(self) -> TwPeer:
        return next(p for n, p in self.peers.items() if n != self.first)


async def two_player_game(ctx: Context, *flags: str, tags: tuple[str, str] = ("a", "b")) -> Game:
    """Alice and Bob announced and in a 2-player game (spec "Happy Flow", ERRATA v2 order)."""
    a_name, b_name = names(ctx, *tags)
    a = await announced(ctx, a_name, *flags)
    b = await announced(ctx, b_name, *flags)
    with ctx.setup(f"REQUESTGAME|2 by {a_name}", "INFORMQUEUE"):
        await a.send("REQUESTGAME", "2")
        await a.expect("INFORMQUEUE")
    await b.send("REQUESTGAME", "2")
    peers = {a_name: a, b_name: b}
    opening: dict[str, list[list[str]]] = {}
    racks: dict[str, str] = {}
    turns: dict[str, list[str]] = {}
    order: list[str] = []
    for name, peer in peers.items():
        msgs = opening[name] = []
        for command in ("INFORMQUEUE", "STARTGAME", "NEWTILES", "NOTIFYTURN"):
            with ctx.setup(f"{command} to {name} as the game starts", command):
                msgs.append(await peer.expect(command))
        start, tiles, turn = msgs[1:]
        order = start[1:]
        racks[name] = tiles[1].replace("!", BLANK) if len(tiles) > 1 else ""
        turns[name] = turn
    first = turns[a_name][2] if len(turns[a_name]) > 2 else ""
    if first not in peers:
        with ctx.setup("NOTIFYTURN as the game starts", "NOTIFYTURN"):
            raise a.failed(f"NOTIFYTURN names {first!r}, not one of {list(peers)}", turns[a_name])
    return Game(peers, order, racks, first, opening)


# --- the checks -------------------------------------------------------------------------

SERVER_CHECKS, check = registry("twente.server")


@check("announce", "ANNOUNCE", Level.MUST, "ANNOUNCE is answered with WELCOME and the name")
async def _announce(ctx: Context) -> None:
    (name,) = names(ctx, "an")
    p = await announced(ctx, name)
    if p.stepped:  # a message the spec does not define, before WELCOME
        ctx.decided += 1
        raise p.failed(
            f"{show(p.stepped[0])!r} came before WELCOME (a command the spec does not define)",
            p.stepped[0],
        )


@check("announce-chat", "ANNOUNCE", Level.MUST, "ANNOUNCE with the CHAT flag is welcomed")
async def _announce_chat(ctx: Context) -> None:
    (name,) = names(ctx, "ac")
    await announced(ctx, name, "CHAT")


@check("welcome-flags", "WELCOME", Level.SHOULD, "WELCOME's flags are ones the spec defines")
async def _welcome_flags(ctx: Context) -> None:
    (name,) = names(ctx, "wf")
    p = await announced(ctx, name)
    unknown = [f for f in p.flags if f not in ("CHAT", "TEAMPLAY")]
    ctx.expect(not unknown, f"WELCOME carries flags the spec does not define: {unknown}")


@check(
    "e001", "E001 - Name already taken", Level.MUST, "a second ANNOUNCE of a taken name gets E001"
)
async def _e001(ctx: Context) -> None:
    (name,) = names(ctx, "dup")
    p = await announced(ctx, name)
    q = await TwPeer.open(ctx, "second")
    await q.send("ANNOUNCE", name)
    try:
        await q.error(ctx, "E001", f"ANNOUNCE of the taken name {name!r}")
    except CheckFailed as e:
        # A server that closed the first connection has freed the name: not E001's fault.
        if e.fault is None and await p.peer.closed(0.1):
            e.fault = p.peer.closes_fault()
        raise


# Errors one message from an announced client provokes (spec "Errors"), as a table:
# (id, the spec's section, title, the message's fields, the player's tag). "{name}" in a
# field is the player's name.
ANNOUNCED_ERRORS = [
    ("e002", "E002 - Unknown command", "an unknown command gets E002", ("FOOBAR", "x"), "uc"),
    (
        "e003",
        "E003 - Invalid argument",
        "REQUESTGAME for 5 players gets E003",
        ("REQUESTGAME", "5"),
        "ia",
    ),
    (
        "e012",
        "E012 - Client has already announced themselves",
        "ANNOUNCE twice gets E012",
        ("ANNOUNCE", "{name}"),
        "twice",
    ),
    (
        "e014",
        "E014 - Client is not in a game",
        "MAKEMOVE outside a game gets E014",
        ("MAKEMOVE", "SWAP", "ABC"),
        "ng",
    ),
]


def _refused(code: str, fields: tuple[str, ...], tag: str) -> Scenario:
    async def run(ctx: Context) -> None:
        (name,) = names(ctx, tag)
        p = await announced(ctx, name)
        sent = [f.format(name=name) for f in fields]
        await p.send(*sent)
        await p.error(ctx, code, show(sent))

    return run


for _id, _section, _title, _fields, _tag in ANNOUNCED_ERRORS:
    check(_id, _section, Level.MUST, _title)(_refused(_section[:4], _fields, _tag))


@check(
    "e002-extension",
    "E002 - Unknown command",
    Level.SHOULD,
    "SENDCHAT from a client that did not announce CHAT gets E002",
    errata="Twente: E002 for commands of an extension the peer did not announce",
)
async def _e002_extension(ctx: Context) -> None:
    (name,) = names(ctx, "nc")
    p = await announced(ctx, name)
    await p.send("SENDCHAT", "hello")
    fields = await p.next(ctx.wait, "ERROR E002")
    while fields[0] == "PLAYERDISCONNECTED":
        fields = await p.next(ctx.wait, "ERROR E002")
    if fields[:2] == ["ERROR", "E002"]:
        ctx.passed()
    elif fields[0] == "ERROR" and len(fields) > 1 and re.fullmatch(r"E0\d\d", fields[1]):
        raise Differs(f"answered {show(fields)!r} instead of ERROR|E002")
    elif fields[0] == "NOTIFYCHAT":
        raise Differs("relayed the chat of a client that did not announce CHAT")
    else:
        p.is_error(ctx, fields, "E002", "SENDCHAT without the CHAT flag")


@check(
    "e013",
    "E013 - Client has not yet announced themselves",
    Level.MUST,
    "REQUESTGAME before ANNOUNCE gets E013",
)
async def _e013(ctx: Context) -> None:
    p = await TwPeer.open(ctx, "anon")
    await p.send("REQUESTGAME")
    await p.error(ctx, "E013", "REQUESTGAME before ANNOUNCE")


@check(
    "informqueue",
    "INFORMQUEUE",
    Level.MUST,
    "REQUESTGAME (default 2) is answered INFORMQUEUE 1 2",
    errata="Twente: REQUESTGAME without a count is a 2-player game",
)
async def _informqueue(ctx: Context) -> None:
    (name,) = names(ctx, "q")
    p = await announced(ctx, name)
    await p.send("REQUESTGAME")
    fields = await p.expect("INFORMQUEUE")
    ctx.expect(fields[1:] == ["1", "2"], f"expected INFORMQUEUE|1|2, got {show(fields)!r}")


@check(
    "requestgame-3",
    "REQUESTGAME",
    Level.MUST,
    "REQUESTGAME 3: a queue for 3 with TEAMPLAY, E003 without",
    errata="Twente: REQUESTGAME for 3 or 4 players is REQUESTGAME|3; TEAMPLAY means 3-4 players",
)
async def _requestgame_3(ctx: Context) -> None:
    (name,) = names(ctx, "r3")
    p = await announced(ctx, name)
    await p.send("REQUESTGAME", "3")
    fields = await p.reply(ctx.wait, "a reply to REQUESTGAME|3")
    if "TEAMPLAY" in p.flags:
        ctx.expect(fields == ["INFORMQUEUE", "1", "3"], f"with TEAMPLAY: got {show(fields)!r}")
    else:
        ctx.expect(fields[:2] == ["ERROR", "E003"], f"without TEAMPLAY: got {show(fields)!r}")


@check(
    "e010",
    "E010 - Wrong number of players game request",
    Level.MUST,
    "a single-game server answers a request for another count with E010 and the queue's count",
    errata="Twente: E010/E015 only in a single-game server",
)
async def _e010(ctx: Context) -> None:
    a_name, b_name = names(ctx, "w1", "w2")
    a = await announced(ctx, a_name)
    b = await announced(ctx, b_name)
    if "TEAMPLAY" not in a.flags:
        raise NotApplicable("the server has no TEAMPLAY: every count but 2 is E003")
    await a.send("REQUESTGAME", "2")
    await a.expect("INFORMQUEUE")
    await b.send("REQUESTGAME", "3")
    fields = await b.reply(ctx.wait, "a reply to REQUESTGAME|3")
    if fields[0] == "INFORMQUEUE":
        ctx.expect(fields[1:] == ["1", "3"], f"a second queue should say 1|3: {show(fields)!r}")
        raise NotApplicable("the server runs several queues at once (multi-game)")
    ctx.expect(fields == ["ERROR", "E010", "2"], f"expected ERROR|E010|2, got {show(fields)!r}")


@check(
    "startgame",
    "STARTGAME",
    Level.MUST,
    "STARTGAME names every player (none empty), same order to all",
)
async def _startgame(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("sa", "sb"))
    starts = {n: m[1] for n, m in game.opening.items()}
    for name, start in starts.items():
        ctx.expect(all(start[1:]), f"STARTGAME to {name} has an empty name: {show(start)!r}")
        ctx.expect(
            sorted(start[1:]) == sorted(game.peers),
            f"STARTGAME to {name} names {start[1:]}, the players are {list(game.peers)}",
        )
    ctx.expect(
        len({tuple(s) for s in starts.values()}) == 1, f"players told different orders: {starts}"
    )


@check(
    "informqueue-full",
    "INFORMQUEUE",
    Level.MUST,
    "when the queue fills, everyone in it gets INFORMQUEUE 2 2",
)
async def _informqueue_full(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("fa", "fb"))
    for name, msgs in game.opening.items():
        ctx.expect(msgs[0] == ["INFORMQUEUE", "2", "2"], f"{name} got {show(msgs[0])!r}")


@check(
    "newtiles-opening",
    "NEWTILES",
    Level.MUST,
    "after STARTGAME each player gets NEWTILES with 7 tiles (A-Z, !)",
    errata="Twente: happy flow STARTGAME, NEWTILES (7 tiles), NOTIFYTURN",
)
async def _newtiles_opening(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("na", "nb"))
    for name, msgs in game.opening.items():
        tiles = msgs[2][1] if len(msgs[2]) > 1 else ""
        ok = len(tiles) == 7 and all("A" <= c <= "Z" or c == "!" for c in tiles)
        ctx.expect(ok, f"{name}'s opening NEWTILES is {show(msgs[2])!r}")


@check(
    "notifyturn-opening",
    "NOTIFYTURN",
    Level.MUST,
    "NOTIFYTURN: 1 to the player to move, 0 to the others",
)
async def _notifyturn_opening(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("ta", "tb"))
    for name, msgs in game.opening.items():
        turn = msgs[3]
        ctx.expect(turn[2] == game.first, f"{name} told {show(turn)!r}, others told {game.first}")
        ctx.expect(turn[1] == ("1" if name == game.first else "0"), f"{name} told {show(turn)!r}")


# A move made from the game the check started: its fields and how the report names it.
MoveOf = Callable[[Context, Game], tuple[tuple[str, ...], str]]


def _two_letters_at(square: str) -> MoveOf:
    """A 2-letter word of the mover's rack, across from ``square``."""

    def move(ctx: Context, game: Game) -> tuple[tuple[str, ...], str]:
        word = two_letter_word(game.racks[game.first], _lexicon(ctx))
        if word is None:
            raise CannotTest(f"no 2-letter word in the rack {game.racks[game.first]}")
        fields = ("MAKEMOVE", "WORD", square, "H", word)
        return fields, show(fields)

    return move


def _tiles_not_held(ctx: Context, game: Game) -> tuple[tuple[str, ...], str]:
    rack = game.racks[game.first]
    absent = next(c for c in "QZXJKVWYBCFHMP" if c not in rack)
    fields = ("MAKEMOVE", "WORD", "H8", "H", absent * 2)
    return fields, f"{show(fields)} with rack {rack}"


def _not_a_word(ctx: Context, game: Game) -> tuple[tuple[str, ...], str]:
    rack = game.racks[game.first]
    bad = non_word(rack, _lexicon(ctx))
    if bad is None:
        raise CannotTest(f"every pair of letters in {rack} is a word")
    fields = ("MAKEMOVE", "WORD", "H8", "H", bad)
    return fields, show(fields)


# Errors one message provokes in a game (spec "Errors"): (id, section, title, who sends,
# the message's fields or a move made from the game (the mover's), the players' tags).
IN_GAME_ERRORS: list[tuple[str, str, str, str, tuple[str, ...] | MoveOf, tuple[str, str]]] = [
    (
        "e009",
        "E009 - It is not your turn",
        "a move out of turn gets E009",
        "other",
        ("MAKEMOVE", "SWAP", "A"),
        ("ea", "eb"),
    ),
    (
        "e004",
        "E004 - Invalid coordinate",
        "MAKEMOVE at C16 gets E004",
        "mover",
        ("MAKEMOVE", "WORD", "C16", "H", "CAT"),
        ("ca", "cb"),
    ),
    (
        "e003-direction",
        "E003 - Invalid argument",
        "MAKEMOVE in direction D gets E003",
        "mover",
        ("MAKEMOVE", "WORD", "H8", "D", "CAT"),
        ("da", "db"),
    ),
    (
        "e003-swap",
        "E003 - Invalid argument",
        "MAKEMOVE with no move type gets E003",
        "mover",
        ("MAKEMOVE", "JUMP", "H8"),
        ("xa", "xb"),
    ),
    (
        "e005",
        "E005 - Word does not fit on board",
        "a word running off the board gets E005",
        "mover",
        _two_letters_at("O8"),
        ("fa5", "fb5"),
    ),
    (
        "e011",
        "E011 - Word not connected to other tiles",
        "a first word off the centre square gets E011",
        "mover",
        _two_letters_at("A1"),
        ("ja", "jb"),
    ),
    (
        "e008",
        "E008 - You do not have the required tiles",
        "a word with tiles not on the rack gets E008",
        "mover",
        _tiles_not_held,
        ("ha", "hb"),
    ),
    (
        "e006",
        "E006 - Unknown word",
        "a word not in the dictionary gets E006",
        "mover",
        _not_a_word,
        ("ua", "ub"),
    ),
]


def _refused_in_game(
    code: str, who: str, move: tuple[str, ...] | MoveOf, tags: tuple[str, str]
) -> Scenario:
    async def run(ctx: Context) -> None:
        game = await two_player_game(ctx, tags=tags)
        sender = game.mover if who == "mover" else game.other
        if callable(move):
            fields, why = move(ctx, game)
        else:
            fields, why = move, f"{show(move)} by the {who}"
        await sender.send(*fields)
        await sender.error(ctx, code, why)

    return run


for _id, _section, _title, _who, _move, _tags in IN_GAME_ERRORS:
    check(_id, _section, Level.MUST, _title)(_refused_in_game(_section[:4], _who, _move, _tags))


@dataclass
class MoveSeen:
    sent: list[str]
    mover: list[list[str]]
    other: list[list[str]]
    used: int


async def _first_move(ctx: Context, tags: tuple[str, str]) -> tuple[Game, MoveSeen]:
    game = await two_player_game(ctx, tags=tags)
    rack = game.racks[game.first]
    move = best_move(Board(), rack, _lexicon(ctx), ENGLISH)
    if move is None:
        raise CannotTest(f"no opening move for the rack {rack}")
    d = "H" if move.direction is Direction.ACROSS else "V"
    sent = ["MAKEMOVE", "WORD", format_square(move.x, move.y), d, move.word]
    await game.mover.send(*sent)
    with ctx.setup(f"{show(sent)}, a legal first move", "MAKEMOVE"):
        mover = [await game.mover.reply(ctx.wait * 3, "the reply to a legal move")]
        if mover[0][0] == "ERROR":
            raise game.mover.failed(f"the legal {show(sent)!r} got {show(mover[0])!r}", mover[0])
        mover += [await game.mover.reply(ctx.wait * 3, "the reply to a legal move") for _ in "12"]
        other = [await game.other.reply(ctx.wait * 3, "the move's INFORMMOVE") for _ in "12"]
    return game, MoveSeen(sent, mover, other, len(move.tiles))


@check(
    "newtiles-after-move",
    "NEWTILES",
    Level.MUST,
    "after a word the mover gets NEWTILES with as many tiles as it laid",
    errata="Twente: after a WORD move, NEWTILES to the mover, INFORMMOVE to all, NOTIFYTURN",
)
async def _newtiles_after(ctx: Context) -> None:
    _, seen = await _first_move(ctx, ("ma", "mb"))
    first = seen.mover[0]
    ctx.expect(first[0] == "NEWTILES", f"the mover's first reply is {show(first)!r}, not NEWTILES")
    ctx.expect(
        len(first) > 1 and len(first[1]) == seen.used,
        f"NEWTILES {show(first)!r} after laying {seen.used} tiles",
    )


@check(
    "informmove-word",
    "INFORMMOVE",
    Level.MUST,
    "every player gets INFORMMOVE with the move as sent",
)
async def _informmove_word(ctx: Context) -> None:
    game, seen = await _first_move(ctx, ("ia1", "ib1"))
    want = ["INFORMMOVE", game.first, *seen.sent[1:]]
    ctx.expect(seen.mover[1] == want, f"mover got {show(seen.mover[1])!r}, want {show(want)!r}")
    ctx.expect(seen.other[0] == want, f"other got {show(seen.other[0])!r}, want {show(want)!r}")


@check(
    "notifyturn-after-move",
    "NOTIFYTURN",
    Level.MUST,
    "after a move the turn passes to the next player",
)
async def _notifyturn_after(ctx: Context) -> None:
    game, seen = await _first_move(ctx, ("pa", "pb"))
    nxt = next(n for n in game.peers if n != game.first)
    ctx.expect(seen.mover[2] == ["NOTIFYTURN", "0", nxt], f"mover got {show(seen.mover[2])!r}")
    ctx.expect(seen.other[1] == ["NOTIFYTURN", "1", nxt], f"other got {show(seen.other[1])!r}")


@check("swap", "MAKEMOVE", Level.MUST, "SWAP of 3 tiles: NEWTILES with 3, INFORMMOVE name SWAP 3")
async def _swap(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("sw1", "sw2"))
    tiles = game.racks[game.first][:3].replace(BLANK, "!")
    await game.mover.send("MAKEMOVE", "SWAP", tiles)
    new = await game.mover.reply(ctx.wait * 3, "NEWTILES")
    ctx.expect(new[0] == "NEWTILES" and len(new) > 1 and len(new[1]) == 3, f"got {show(new)!r}")
    inform = await game.other.reply(ctx.wait * 3, "INFORMMOVE")
    want = ["INFORMMOVE", game.first, "SWAP", "3"]
    ctx.expect(inform == want, f"other got {show(inform)!r}, want {show(want)!r}")


@check(
    "pass",
    "MAKEMOVE",
    Level.SHOULD,
    "an empty SWAP is a pass, announced as SWAP 0",
    errata="Twente: MAKEMOVE|SWAP| (no tiles) is a pass, INFORMMOVE|name|SWAP|0",
)
async def _pass(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("ps1", "ps2"))
    await game.mover.send("MAKEMOVE", "SWAP", "")
    reply = await game.other.reply(ctx.wait * 3, "INFORMMOVE")
    if reply == ["INFORMMOVE", game.first, "SWAP", "0"]:
        ctx.passed()
        return
    mover_reply = await game.mover.reply(ctx.wait, "a reply")
    if mover_reply[0] == "ERROR":
        raise Differs(f"an empty SWAP was refused: {show(mover_reply)!r}")
    ctx.fail(f"expected INFORMMOVE|{game.first}|SWAP|0, got {show(reply)!r}")


@check(
    "e015",
    "E015 - Game already started",
    Level.MUST,
    "REQUESTGAME while in a game gets E015 (single-game)",
)
async def _e015(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("ga", "gb"))
    await game.mover.send("REQUESTGAME", "2")
    fields = await game.mover.reply(ctx.wait, "a reply to REQUESTGAME")
    if fields[0] == "INFORMQUEUE":
        raise NotApplicable("the server queues players already in a game (multi-game)")
    game.mover.is_error(ctx, fields, "E015", "REQUESTGAME|2 in a game")


@check(
    "playerdisconnected",
    "PLAYERDISCONNECTED",
    Level.MUST,
    "a player dropping: the others get PLAYERDISCONNECTED with the name",
    errata="Twente: a disconnect is PLAYERDISCONNECTED, then GAMEOVER DISCONNECT",
)
async def _playerdisconnected(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("dc1", "dc2"))
    await game.other.peer.close()
    fields = await game.mover.next(ctx.wait, "PLAYERDISCONNECTED")
    ctx.expect(
        fields == ["PLAYERDISCONNECTED", game.other.name],
        f"expected PLAYERDISCONNECTED, got {show(fields)!r}",
    )


@check(
    "gameover-disconnect",
    "GAMEOVER",
    Level.MUST,
    "a player dropping ends the game: GAMEOVER DISCONNECT, their score 0",
    errata="Twente: a disconnect is PLAYERDISCONNECTED, then GAMEOVER DISCONNECT",
)
async def _gameover_disconnect(ctx: Context) -> None:
    game = await two_player_game(ctx, tags=("go1", "go2"))
    gone = game.other.name
    await game.other.peer.close()
    fields = await game.mover.expect("GAMEOVER", skip=("PLAYERDISCONNECTED", "NOTIFYCHAT"))
    ctx.expect(len(fields) >= 2 and fields[1] == "DISCONNECT", f"got {show(fields)!r}")
    scores = dict(zip(fields[2::2], fields[3::2], strict=False))
    ctx.expect(scores.get(gone) == "0", f"{gone} dropped; GAMEOVER gives {show(fields)!r}")
    ctx.expect(set(scores) == set(game.peers), f"GAMEOVER names {list(scores)}")


@check(
    "chat", "NOTIFYCHAT", Level.MUST, "SENDCHAT reaches every CHAT player as NOTIFYCHAT name text"
)
async def _chat(ctx: Context) -> None:
    game = await two_player_game(ctx, "CHAT", tags=("ch1", "ch2"))
    if "CHAT" not in game.mover.flags:
        raise NotApplicable("the server does not announce CHAT")
    await game.mover.send("SENDCHAT", "hello there")
    want = ["NOTIFYCHAT", game.first, "hello there"]
    for peer in game.peers.values():
        got = await peer.next(ctx.wait, "NOTIFYCHAT")
        while got[0] == "PLAYERDISCONNECTED":
            got = await peer.next(ctx.wait, "NOTIFYCHAT")
        ctx.expect(got == want, f"{peer.name} got {show(got)!r}, want {show(want)!r}")


# --- framing ----------------------------------------------------------------------------


@check("split", "Delimiters", Level.MUST, "a message sent one byte per write is understood")
async def _split(ctx: Context) -> None:
    (name,) = names(ctx, "by")
    p = await TwPeer.open(ctx, name)
    await p.send("ANNOUNCE", name, bytewise=True)
    fields = await p.expect("WELCOME")
    ctx.expect(fields[1] == name, f"got {show(fields)!r}")


@check(
    "coalesced", "Delimiters", Level.MUST, "three messages in one write get three replies in order"
)
async def _coalesced(ctx: Context) -> None:
    (name,) = names(ctx, "co")
    p = await TwPeer.open(ctx, name)
    await p.peer.send(frame("ANNOUNCE", name) + frame("FOOBAR") + frame("REQUESTGAME", "2"))
    await p.expect("WELCOME")
    # The order of the three answers is the rule here; which error FOOBAR gets is e002's.
    error = await p.reply(ctx.wait, "the ERROR for FOOBAR")
    if error[0] != "ERROR":
        raise p.failed(f"FOOBAR, second of three messages, got {show(error)!r}", error, "ERROR")
    fields = await p.expect("INFORMQUEUE")
    ctx.expect(fields[1:] == ["1", "2"], f"got {show(fields)!r}")


@check(
    "line-end-after-rs",
    "Delimiters",
    Level.SHOULD,
    "a line end after RS (Java clients) is tolerated",
    errata="Twente: accept \\n or \\r\\n right after RS",
)
async def _line_end(ctx: Context) -> None:
    (name,) = names(ctx, "lf")
    p = await TwPeer.open(ctx, name)
    await p.peer.send(frame("ANNOUNCE", name) + b"\n" + frame("REQUESTGAME", "2") + b"\r\n")
    await p.expect("WELCOME")
    fields = await p.reply(ctx.wait, "INFORMQUEUE")
    if fields[0] == "ERROR":
        raise Differs(f"REQUESTGAME after a line end was refused: {show(fields)!r}")
    ctx.expect(fields == ["INFORMQUEUE", "1", "2"], f"got {show(fields)!r}")


@check(
    "max-length",
    "Delimiters",
    Level.SHOULD,
    "a 64 KiB message is refused (ERROR or close), and the server keeps serving",
)
async def _max_length(ctx: Context) -> None:
    (name, other) = names(ctx, "big", "after")
    p = await announced(ctx, name)
    await p.peer.send(frame("SENDCHAT", "x" * 65536))
    try:
        reply = await p.reply(ctx.wait, "a reply to a 64 KiB message")
        ctx.expect(reply[0] == "ERROR", f"a 64 KiB message got {show(reply)[:80]!r}")
        await p.send("REQUESTGAME", "2")
        await p.expect("INFORMQUEUE")
    except CheckFailed as e:
        if not p.peer.eof:
            raise
        ctx.passed(f"closed the connection ({e})")
    await announced(ctx, other)


@check(
    "delimiters-strict",
    "Delimiters",
    Level.MUST,
    "the server's messages are UTF-8 fields split by US, each ended by RS, nothing between",
)
async def _delimiters(ctx: Context) -> None:
    # The server's own bytes are judged whatever the set-up reached: a transport fault
    # that stops the game from starting is this check's to report.
    failure: CheckFailed | None = None
    peers: list[TwPeer] = []
    try:
        game = await two_player_game(ctx, tags=("st1", "st2"))
        peers = list(game.peers.values())
    except CheckFailed as e:
        failure = e
    raws = [bytes(r.received) for r in ctx.recorders]
    if peers:
        raws = [bytes(p.peer.recorder.received) for p in peers]
    for raw in raws:
        fault = diagnose(raw, _RS, DELIMITERS, frozenset({LINE_END_AFTER_RS}))
        if fault is not None and fault.tolerated:
            ctx.tolerate(fault)
            raw = raw.replace(b"\x1e\r\n", _RS).replace(b"\x1e\n", _RS)
        elif fault is not None:
            ctx.decided += 1
            raise CheckFailed(f"{fault.name}: {fault.evidence!r}", got=fault.evidence, fault=fault)
        for part in raw.split(_RS)[:-1]:
            ctx.expect(bool(part), "an empty message")
            ctx.expect(part.split(b"\x1f")[0].isalpha(), f"bytes between messages: {part[:20]!r}")
        ctx.expect(not raw or raw.endswith(_RS), f"trailing bytes after the last RS: {raw[-20:]!r}")
    if failure is not None:
        raise failure


# --- a whole game -----------------------------------------------------------------------


@dataclass
class WholeGame:
    table: Table
    gameover: dict[str, list[str]]
    informs_ok: int
    informs_bad: list[str]
    e007: list[str] | None  # the reply to a swap of more tiles than the bag held
    newtiles_bad: list[str]
    moves: int


async def _whole_game(ctx: Context) -> WholeGame:
    """Two kit players play a whole game with the engine's best moves (spec "Happy Flow")."""
    game = await two_player_game(ctx, tags=("wg1", "wg2"))
    lexicon = _lexicon(ctx)
    table = Table(ENGLISH, lexicon, list(game.order))
    table.racks = dict(game.racks)
    turn = game.first
    result = WholeGame(table, {}, 0, [], None, [], 0)
    passes = 0
    while True:
        me = game.peers[turn]
        rack = table.racks[turn]
        bag = table.bag
        if result.e007 is None and 0 < bag < len(rack):
            # spec E007: swapping more tiles than the bag holds
            await me.send("MAKEMOVE", "SWAP", rack.replace(BLANK, "!"))
            with ctx.setup("MAKEMOVE|SWAP of more tiles than the bag holds", _E007):
                result.e007 = await me.reply(ctx.wait * 3, "ERROR E007")
            # The spec does not say whose turn it is after an ERROR: follow the server.
            moved_on = await _after_error(ctx, game, turn)
            if moved_on is not None:
                turn = moved_on
                continue
        move = best_move(table.board, rack, lexicon, ENGLISH)
        if move is not None:
            d = "H" if move.direction is Direction.ACROSS else "V"
            sent = ["WORD", format_square(move.x, move.y), d, move.word]
            passes = 0
        elif bag >= 7:
            sent = ["SWAP", rack.replace(BLANK, "!")]
        else:
            sent = ["SWAP", ""]
            passes += 1
        await me.send("MAKEMOVE", *sent)
        result.moves += 1
        if move is not None:
            placed = tiles_from_word(table.board, move.x, move.y, move.direction, move.word)
            table.play(turn, tuple(placed))
        elif sent[1]:
            table.racks[turn] = ""
        # NEWTILES (unless nothing was drawn), INFORMMOVE to all, then NOTIFYTURN or GAMEOVER.
        nxt: str | None = None
        for name, peer in game.peers.items():
            while True:
                with ctx.setup(f"MAKEMOVE|{show(sent)} by {turn}, a legal move", "MAKEMOVE"):
                    fields = await peer.reply(peer.peer.wait * 3, "the move's messages")
                    if fields[0] == "ERROR":
                        raise peer.failed(
                            f"the legal MAKEMOVE|{show(sent)} got {show(fields)!r}", fields
                        )
                cmd = fields[0]
                if cmd == "NEWTILES" and name == turn:
                    drawn = fields[1].replace("!", BLANK) if len(fields) > 1 else ""
                    table.racks[turn] += drawn
                    want = min(len(sent[-1]) if move is None else len(move.tiles), max(bag, 0))
                    if len(drawn) != want and sent[1]:
                        result.newtiles_bad.append(f"{show(fields)} (expected {want} tiles)")
                elif cmd == "INFORMMOVE":
                    if (fields[1:3] == [turn, "WORD"] and fields[3:] == sent[1:]) or (
                        fields[1:3] == [turn, "SWAP"] and move is None
                    ):
                        result.informs_ok += 1
                    else:
                        result.informs_bad.append(f"{show(fields)} after MAKEMOVE|{show(sent)}")
                elif cmd == "NOTIFYTURN":
                    nxt = fields[2] if len(fields) > 2 else None
                    break
                elif cmd == "GAMEOVER":
                    result.gameover[name] = fields
                    break
        if len(result.gameover) == len(game.peers):
            return result
        if result.gameover:
            raise CheckFailed(f"GAMEOVER reached only {list(result.gameover)}")
        if nxt not in game.peers:
            raise CheckFailed(f"NOTIFYTURN names {nxt!r}")
        if passes > 8 or result.moves > 200:
            raise CannotTest("the game does not end")
        turn = nxt


async def _after_error(ctx: Context, game: Game, mover: str) -> str | None:
    """After an ERROR to ``mover`` in a game: the player the server gives the turn to, if
    it moves the turn on (NOTIFYTURN to all, perhaps after an INFORMMOVE of a pass);
    None if it says nothing more (the turn stays, as meeple reads it)."""
    me = game.peers[mover]
    try:
        first = await me.reply(max(ctx.wait / 3, 0.2), "what follows the ERROR")
    except CheckFailed:
        return None
    nxt = ""
    turn = first
    for peer in game.peers.values():
        pending = [first] if peer is me else []
        while True:
            fields = pending.pop() if pending else await peer.reply(ctx.wait * 3, "NOTIFYTURN")
            if fields[0] == "NOTIFYTURN":
                nxt, turn = (fields[2] if len(fields) > 2 else ""), fields
                break
            if fields[0] != "INFORMMOVE":
                raise peer.failed(
                    f"after an ERROR, expected NOTIFYTURN, got {show(fields)!r}", fields
                )
    if nxt not in game.peers:
        raise me.failed(f"NOTIFYTURN after the ERROR names {nxt!r}", turn)
    return nxt


whole_game = shared("whole game", _whole_game)
_E007 = "E007 - Too few letters left in tilebag"


@check(
    "gameover-win",
    "GAMEOVER",
    Level.MUST,
    "a whole game ends with GAMEOVER WIN naming every player",
)
async def _gameover_win(ctx: Context) -> None:
    g = await whole_game(ctx)
    for name, fields in g.gameover.items():
        ctx.expect(fields[1] == "WIN", f"{name} got {show(fields)!r}")
        ctx.expect(sorted(fields[2::2]) == sorted(g.table.players), f"{name} got {show(fields)!r}")


@check(
    "gameover-scores",
    "GAMEOVER",
    Level.SHOULD,
    "GAMEOVER's scores are the Scrabble scores of the game",
)
async def _gameover_scores(ctx: Context) -> None:
    g = await whole_game(ctx)
    want = g.table.final_scores()
    for name, fields in g.gameover.items():
        try:
            got = {n: int(s) for n, s in zip(fields[2::2], fields[3::2], strict=True)}
        except ValueError:
            ctx.fail(f"GAMEOVER scores are not numbers: {show(fields)!r}")
        ctx.expect(got == want, f"{name} got {got}, the engine scores {want}")


@check(
    "informmove-game",
    "INFORMMOVE",
    Level.MUST,
    "through a whole game every move is told to everyone as made",
)
async def _informmove_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.informs_bad, f"wrong INFORMMOVE: {g.informs_bad[:3]}")
    ctx.expect(g.informs_ok == 2 * g.moves, f"{g.informs_ok} INFORMMOVE for {g.moves} moves")


@check(
    "newtiles-game",
    "NEWTILES",
    Level.MUST,
    "through a whole game NEWTILES gives as many tiles as were used",
)
async def _newtiles_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.newtiles_bad, f"wrong NEWTILES: {g.newtiles_bad[:3]}")


@check(
    "e007",
    _E007,
    Level.MUST,
    "swapping more tiles than the bag holds gets E007",
)
async def _e007(ctx: Context) -> None:
    g = await whole_game(ctx)
    if g.e007 is None:
        raise CannotTest("the bag never held fewer tiles than a rack in the game")
    TwPeer.error_of(ctx, g.e007, "E007", "MAKEMOVE|SWAP of more tiles than the bag holds")

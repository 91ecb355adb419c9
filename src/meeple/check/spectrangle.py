"""Conformance checks for servers of Spectrangle 1.4 (spectrangle-1.4.md).

Sections are the spec's command headings ("connect <name> <extensions>", "tiles …",
"Errors to be defined", …). Moves come from meeple's engine
(:meth:`meeple.games.spectrangle.Board.placements`), so every placement the kit sends
is legal by the ERRATA's rules, and the points the server announces are compared with
the engine's. Readings follow ``ERRATA.md`` (Spectrangle): one line per command, the
1.4 ``tiles`` line with four slots per player (``null`` for none) and ``skip <name>``
in place of ``turn <name>``, errors as the words ``invalidMove``, ``invalidCommand``,
``invalidName``.
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
    Level,
    Scenario,
    registry,
    shared,
)
from meeple.check.wire import LinePeer, names
from meeple.games.spectrangle import TILE_SET, Board, Tile

__all__ = ["SERVER_CHECKS", "SpPeer"]

ERRORS = ("invalidMove", "invalidCommand", "invalidName")
_TILE = re.compile(r"[RGBYPW]{3}[1-6]")


TILES = "tiles [<name> [tiles]] turn <name>"


class SpPeer(LinePeer):
    """A Spectrangle connection of the kit: lines without their line end; chat skipped."""

    skip = ("chat ",)
    section = "Tabular networking protocol"


async def connected(ctx: Context, name: str, *extensions: str) -> SpPeer:
    """A connection that said connect and was welcomed (set-up step "welcome")."""
    with ctx.setup(f"connect {name}", "welcome [extension]"):
        p = await SpPeer.open(ctx, name)
        await p.send(" ".join(("connect", name, *extensions)))
        line = await p.expect("welcome")
        ctx.expect(line.split()[0] == "welcome", f"got {line!r}")
    return p


@dataclass
class Hand:
    name: str
    tiles: list[str]


@dataclass
class TilesLine:
    hands: dict[str, list[str]]
    turn: str
    skip: bool


def parse_tiles(line: str, players: list[str]) -> TilesLine:
    """``tiles <name> t1 t2 t3 t4 … turn|skip <name>`` (ERRATA, 1.4: four slots each)."""
    words = line.split()
    if len(words) < 3 or words[0] != "tiles" or words[-2] not in ("turn", "skip"):
        raise CheckFailed(f"not a tiles line: {line!r}")
    body = words[1:-2]
    hands: dict[str, list[str]] = {}
    i = 0
    while i < len(body):
        name = body[i]
        slots = body[i + 1 : i + 5]
        if name not in players or len(slots) != 4:
            raise CheckFailed(f"tiles line: {name!r} is not followed by 4 slots: {line!r}")
        if any(s != "null" and not _TILE.fullmatch(s) for s in slots):
            raise CheckFailed(f"tiles line: a slot is neither a tile nor null: {line!r}")
        hands[name] = [s for s in slots if s != "null"]
        i += 5
    return TilesLine(hands, words[-1], words[-2] == "skip")


@dataclass
class Game:
    peers: dict[str, SpPeer]
    start: dict[str, str] = field(default_factory=dict)
    order: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, list[str]] = field(default_factory=dict)
    tiles: TilesLine | None = None
    tiles_lines: dict[str, str] = field(default_factory=dict)

    @property
    def mover(self) -> SpPeer:
        assert self.tiles is not None
        return self.peers[self.tiles.turn]

    @property
    def other(self) -> SpPeer:
        assert self.tiles is not None
        return next(p for n, p in self.peers.items() if n != self.tiles.turn)


async def two_player_game(ctx: Context, tags: tuple[str, str], *extensions: str) -> Game:
    a_name, b_name = names(ctx, *tags)
    a = await connected(ctx, a_name, *extensions)
    b = await connected(ctx, b_name, *extensions)
    game = Game({a_name: a, b_name: b})
    with ctx.setup(f"request 2 by {a_name}", "waiting [names in queue]"):
        await a.send("request 2")
        game.waiting[a_name] = [await a.expect("waiting")]
    await b.send("request 2")
    for name, peer in game.peers.items():
        with ctx.setup(f"start with, to {name}", "start with [names]"):
            while True:
                line = await peer.line(ctx.wait, "start with")
                if line.startswith("waiting"):
                    game.waiting.setdefault(name, []).append(line)
                    continue
                if not line.startswith("start with"):
                    raise CheckFailed(
                        f"{name}: expected 'start with', got {line!r}", got=line.encode()
                    )
                game.start[name] = line
                break
        with ctx.setup(f"order, to {name}", "order [names]"):
            game.order[name] = await peer.expect("order")
        with ctx.setup(f"the first tiles line, to {name}", TILES):
            game.tiles_lines[name] = await peer.expect("tiles")
    players = list(game.peers)
    with ctx.setup("the first tiles line", TILES):
        game.tiles = parse_tiles(game.tiles_lines[a_name], players)
        if game.tiles.turn not in game.peers:
            raise CheckFailed(f"the tiles line names {game.tiles.turn!r} to move")
    return game


def _board_moves(board: Board, hand: list[str]) -> list[tuple[Tile, int, int]]:
    tiles = [Tile.parse(t) for t in hand]
    found = sorted(board.placements(tiles), key=lambda p: -p.points)
    return [(p.tile, p.index, p.points) for p in found]


SERVER_CHECKS, check = registry("spectrangle.server")


@check("welcome", "welcome [extension]", Level.MUST, "connect is answered welcome")
async def _welcome(ctx: Context) -> None:
    (name,) = names(ctx, "w")
    await connected(ctx, name)


@check(
    "welcome-chat",
    "welcome [extension]",
    Level.SHOULD,
    "welcome echoes the chat extension asked for",
)
async def _welcome_chat(ctx: Context) -> None:
    (name,) = names(ctx, "wc")
    p = await SpPeer.open(ctx, name)
    await p.send(f"connect {name} chat")
    line = await p.expect("welcome")
    ctx.expect(line == "welcome chat", f"got {line!r}")


@check("invalid-name", "Errors to be defined", Level.MUST, "a name already taken is invalidName")
async def _invalid_name(ctx: Context) -> None:
    (name,) = names(ctx, "dup")
    await connected(ctx, name)
    q = await SpPeer.open(ctx, "second")
    await q.send(f"connect {name}")
    await q.error(ctx, ("invalidName",), f"connect {name} (taken)")


# Errors one line from a connected client provokes (spec "Errors to be defined"):
# (id, section, title, the line, the error words accepted, the player's tag).
CONNECTED_ERRORS = [
    (
        "invalid-command",
        "Errors to be defined",
        "an unknown command is invalidCommand",
        "foobar 1 2",
        ("invalidCommand",),
        "ic",
    ),
    (
        "request-validated",
        "request < number of players >",
        "request 5 is refused (input is to be validated)",
        "request 5",
        ERRORS,
        "rv",
    ),
]


def _refused(line: str, words: tuple[str, ...], tag: str) -> Scenario:
    async def run(ctx: Context) -> None:
        (name,) = names(ctx, tag)
        p = await connected(ctx, name)
        await p.send(line)
        await p.error(ctx, words, line)

    return run


for _id, _section, _title, _line, _words, _tag in CONNECTED_ERRORS:
    check(_id, _section, Level.MUST, _title)(_refused(_line, _words, _tag))


@check(
    "waiting",
    "waiting [names in queue]",
    Level.MUST,
    "request 2 is answered waiting with the queue's names",
)
async def _waiting(ctx: Context) -> None:
    (name,) = names(ctx, "wt")
    p = await connected(ctx, name)
    await p.send("request 2")
    line = await p.expect("waiting")
    ctx.expect(line.split()[1:] == [name], f"got {line!r}")


@check(
    "start-with",
    "start with [names]",
    Level.MUST,
    "a full queue starts a game: start with every player",
)
async def _start_with(ctx: Context) -> None:
    game = await two_player_game(ctx, ("sa", "sb"))
    for name, line in game.start.items():
        ctx.expect(sorted(line.split()[2:]) == sorted(game.peers), f"{name} got {line!r}")


@check("order", "order [names]", Level.MUST, "order names every player once, the same to all")
async def _order(ctx: Context) -> None:
    game = await two_player_game(ctx, ("oa", "ob"))
    orders = set(game.order.values())
    ctx.expect(len(orders) == 1, f"different orders: {game.order}")
    line = orders.pop()
    ctx.expect(sorted(line.split()[1:]) == sorted(game.peers), f"got {line!r}")


@check(
    "tiles",
    "tiles [<name> [tiles]] turn <name>",
    Level.MUST,
    "one tiles line: 4 slots per player (null for none), then turn <name>",
    errata="Spectrangle: tiles <name> t1 t2 t3 t4 … turn <name>, one line",
)
async def _tiles(ctx: Context) -> None:
    game = await two_player_game(ctx, ("ta", "tb"))
    for name, line in game.tiles_lines.items():
        t = parse_tiles(line, list(game.peers))
        ctx.expect(set(t.hands) == set(game.peers), f"{name}: hands of {list(t.hands)}")
        ctx.expect(all(len(h) == 4 for h in t.hands.values()), f"{name}: {line!r}")
    ctx.expect(
        len(set(game.tiles_lines.values())) == 1,
        f"players told different tiles: {game.tiles_lines}",
    )


@dataclass
class FirstMove:
    game: Game
    sent: tuple[str, int, int]
    replies: dict[str, list[str]]


async def _first_move(ctx: Context, tags: tuple[str, str]) -> FirstMove:
    game = await two_player_game(ctx, tags)
    assert game.tiles is not None
    moves = _board_moves(Board(), game.tiles.hands[game.tiles.turn])
    if not moves:
        raise CannotTest("no placement for the first hand")
    tile, index, points = moves[0]
    await game.mover.send(f"place {tile.code} on {index}")
    replies = {}
    for name, peer in game.peers.items():
        got = [await peer.line(ctx.wait * 3, "reply to the move")]
        if got[0].startswith("move"):
            got.append(await peer.line(ctx.wait * 3, "tiles line after the move"))
        replies[name] = got
    return FirstMove(game, (tile.code, index, points), replies)


@check(
    "move",
    "move <name> <tile> <index> <points>",
    Level.MUST,
    "a legal place is announced to all: move name tile index points",
)
async def _move(ctx: Context) -> None:
    fm = await _first_move(ctx, ("ma", "mb"))
    assert fm.game.tiles is not None
    tile, index, _ = fm.sent
    for name, lines in fm.replies.items():
        parts = lines[0].split()
        ok = parts[:2] == ["move", fm.game.tiles.turn] and len(parts) == 5
        ctx.expect(ok and parts[3] == str(index), f"{name} got {lines[0]!r}")
        ctx.expect(
            Tile.parse(parts[2]).code in {r.code for r in Tile.parse(tile).rotations()},
            f"{name} got {lines[0]!r}",
        )


@check(
    "move-points",
    "move <name> <tile> <index> <points>",
    Level.MUST,
    "the points announced are the rules' points",
)
async def _move_points(ctx: Context) -> None:
    fm = await _first_move(ctx, ("pa", "pb"))
    _, _, points = fm.sent
    for name, lines in fm.replies.items():
        ctx.expect(
            lines[0].split()[-1] == str(points),
            f"{name} got {lines[0]!r}, the rules score {points}",
        )


@check(
    "tiles-after-move",
    "tiles [<name> [tiles]] turn <name>",
    Level.MUST,
    "after a move a tiles line gives the turn to the next player",
)
async def _tiles_after(ctx: Context) -> None:
    fm = await _first_move(ctx, ("na", "nb"))
    assert fm.game.tiles is not None
    nxt = next(n for n in fm.game.peers if n != fm.game.tiles.turn)
    for name, lines in fm.replies.items():
        ctx.expect(len(lines) == 2, f"{name} got {lines}")
        t = parse_tiles(lines[1], list(fm.game.peers))
        ctx.expect(t.turn == nxt, f"{name}: the turn went to {t.turn!r}, not {nxt!r}")


# A line made from the game the check started: who sends it ("mover" or "other"), the
# line, the error words that refuse it, and how the report names it.
LineOf = Callable[[Game], tuple[str, str, tuple[str, ...], str]]


def _bonus_first(game: Game) -> tuple[str, str, tuple[str, ...], str]:
    assert game.tiles is not None
    tile = game.tiles.hands[game.tiles.turn][0]
    line = f"place {tile} on 11"
    return "mover", line, ("invalidMove",), f"{line} (a ×4 field) first"


def _not_in_hand(game: Game) -> tuple[str, str, tuple[str, ...], str]:
    assert game.tiles is not None
    held = {Tile.parse(t).code for h in game.tiles.hands.values() for t in h}
    absent = next(t for t in TILE_SET if all(r.code not in held for r in t.rotations()))
    line = f"place {absent.code} on 0"
    return "mover", line, ("invalidMove",), f"place {absent.code} (not in hand)"


def _out_of_turn(game: Game) -> tuple[str, str, tuple[str, ...], str]:
    assert game.tiles is not None
    other = next(n for n in game.peers if n != game.tiles.turn)
    tile = game.tiles.hands[other][0]
    return "other", f"place {tile} on 0", ("invalidMove", "invalidCommand"), "place out of turn"


def _skip_with_a_placement(game: Game) -> tuple[str, str, tuple[str, ...], str]:
    assert game.tiles is not None
    if not _board_moves(Board(), game.tiles.hands[game.tiles.turn]):
        raise CannotTest("the first player has no placement, so may skip")
    # The spec names the error words but assigns none to this case: any of them refuses.
    return "mover", "skip", ERRORS, "skip with a placement in hand"


def _exchange_with_a_placement(game: Game) -> tuple[str, str, tuple[str, ...], str]:
    assert game.tiles is not None
    hand = game.tiles.hands[game.tiles.turn]
    if not _board_moves(Board(), hand):
        raise CannotTest("the first player has no placement, so may exchange")
    return "mover", f"exchange {hand[0]}", ERRORS, "exchange with a placement in hand"


_MUST_SKIP = "Spectrangle: a player with no legal placement must skip or exchange"

# Errors one line provokes in a game: (id, section, title, the ERRATA point, the players'
# tags, the line made from the game).
IN_GAME_ERRORS: list[tuple[str, str, str, str | None, tuple[str, str], LineOf]] = [
    (
        "invalid-move-bonus",
        "Errors to be defined",
        "a first tile on a bonus field is invalidMove",
        "Spectrangle: first tile not on a bonus field",
        ("ba", "bb"),
        _bonus_first,
    ),
    (
        "invalid-move-hand",
        "Errors to be defined",
        "placing a tile not in hand is invalidMove",
        None,
        ("ha", "hb"),
        _not_in_hand,
    ),
    (
        "out-of-turn",
        "Errors to be defined",
        "a place by the player not to move is refused",
        None,
        ("ua", "ub"),
        _out_of_turn,
    ),
    (
        "skip-when-can-place",
        "skip | | exchange <tile>",
        "skip by a player who can place is refused with an error word (the rules)",
        _MUST_SKIP,
        ("ka", "kb"),
        _skip_with_a_placement,
    ),
    (
        "exchange-when-can-place",
        "skip | | exchange <tile>",
        "exchange by a player who can place is refused with an error word (the rules)",
        _MUST_SKIP,
        ("xa", "xb"),
        _exchange_with_a_placement,
    ),
]


def _refused_in_game(tags: tuple[str, str], line_of: LineOf) -> Scenario:
    async def run(ctx: Context) -> None:
        game = await two_player_game(ctx, tags)
        who, line, words, why = line_of(game)
        sender = game.mover if who == "mover" else game.other
        await sender.send(line)
        await sender.error(ctx, words, why)

    return run


for _id, _section, _title, _errata, _tags, _line_of in IN_GAME_ERRORS:
    check(_id, _section, Level.MUST, _title, errata=_errata)(_refused_in_game(_tags, _line_of))


@check(
    "chat",
    "chat <name> <message>",
    Level.MUST,
    "chat is relayed as chat name message to chat players",
)
async def _chat(ctx: Context) -> None:
    game = await two_player_game(ctx, ("ca", "cb"), "chat")
    sender = next(iter(game.peers.values()))
    await sender.send("chat hello there")
    want = f"chat {sender.name} hello there"
    for name, peer in game.peers.items():
        if name == sender.name:
            continue
        line = await peer.expect("chat", skip=())
        ctx.expect(line == want, f"{name} got {line!r}, want {want!r}")


@check(
    "player-left",
    "player <name> left",
    Level.MUST,
    "a player disconnecting: the others get player name left",
)
async def _player_left(ctx: Context) -> None:
    game = await two_player_game(ctx, ("la", "lb"))
    await game.other.peer.close()
    line = await game.mover.expect("player")
    ctx.expect(line == f"player {game.other.name} left", f"got {line!r}")


# --- framing ----------------------------------------------------------------------------


@check(
    "split",
    "Tabular networking protocol",
    Level.MUST,
    "a line sent one byte per write is understood",
)
async def _split(ctx: Context) -> None:
    (name,) = names(ctx, "by")
    p = await SpPeer.open(ctx, name)
    await p.send(f"connect {name}", bytewise=True)
    await p.expect("welcome")
    ctx.passed()


@check(
    "coalesced",
    "Tabular networking protocol",
    Level.MUST,
    "several lines in one write are answered in order",
)
async def _coalesced(ctx: Context) -> None:
    (name,) = names(ctx, "co")
    p = await SpPeer.open(ctx, name)
    await p.peer.send(f"connect {name}\nfoobar\nrequest 2\n".encode())
    await p.expect("welcome")
    await p.error(ctx, ("invalidCommand",), "foobar, second of three lines in one write")
    await p.expect("waiting")


@check(
    "crlf",
    "Tabular networking protocol",
    Level.SHOULD,
    "a line ended by CRLF is accepted",
    errata="Spectrangle: accept \\r\\n",
)
async def _crlf(ctx: Context) -> None:
    (name,) = names(ctx, "cr")
    p = await SpPeer.open(ctx, name)
    await p.peer.send(f"connect {name}\r\n".encode())
    line = await p.line(ctx.wait, "welcome")
    if line in ERRORS:
        raise Differs(f"a CRLF line got {line!r}")
    # Accepted is welcomed: judged as the welcome check judges a plain connect.
    ctx.expect(line.split()[:1] == ["welcome"], f"got {line!r}")


@check(
    "max-length",
    "Tabular networking protocol",
    Level.SHOULD,
    "a 64 KiB line is refused (error or close), and the server keeps serving",
)
async def _max_length(ctx: Context) -> None:
    (name, after) = names(ctx, "big", "after")
    p = await connected(ctx, name)
    await p.peer.send(b"chat " + b"x" * 65536 + b"\n")
    try:
        line = await p.line(ctx.wait, "reply to a 64 KiB line")
        ctx.expect(line in ERRORS, f"got {line[:60]!r}")
    except CheckFailed as e:
        if not p.peer.eof:
            raise
        ctx.passed(f"closed ({e})")
    await connected(ctx, after)


# --- a whole game -----------------------------------------------------------------------


@dataclass
class WholeGame:
    leaderboards: dict[str, str]
    points: dict[str, int]
    hands: dict[str, list[str]]
    bad_points: list[str]
    moves: int
    skips: int
    replaces: int
    # What the kit's exchanges and skips were announced as, per player told:
    # (the mover, the tile it gave back or "" for a skip, the line each player got).
    announced: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


async def _whole_game(ctx: Context) -> WholeGame:
    return await _whole_game_tagged(ctx, ("wg1", "wg2"))


async def _whole_game_tagged(ctx: Context, tags: tuple[str, str]) -> WholeGame:
    game = await two_player_game(ctx, tags)
    assert game.tiles is not None
    players = list(game.peers)
    board = Board()
    state = game.tiles
    hands = {n: list(h) for n, h in state.hands.items()}
    result = WholeGame({}, dict.fromkeys(players, 0), hands, [], 0, 0, 0)
    in_bag = len(TILE_SET) - sum(len(h) for h in state.hands.values())
    while True:
        me = game.peers[state.turn]
        hand = state.hands[state.turn]
        moves = [] if state.skip else _board_moves(board, hand)
        told: dict[str, str] = dict.fromkeys(game.peers, "")
        if moves:
            tile, index, points = moves[0]
            await me.send(f"place {tile.code} on {index}")
            expected: int | None = points
        elif hand and in_bag > 0:
            await me.send(f"exchange {hand[0]}")
            expected = None
            result.announced.append((state.turn, hand[0], told))
        else:
            await me.send("skip")
            expected = None
            result.announced.append((state.turn, "", told))
        result.moves += 1
        if result.moves > 200:
            raise CannotTest("the game does not end")
        nxt: TilesLine | None = None
        retried = False
        # the mover first: a refusal goes to it alone
        for name in sorted(game.peers, key=lambda n: n != state.turn):
            peer = game.peers[name]
            while True:
                line = await peer.line(ctx.wait * 3, "the turn's lines")
                word = line.split(" ", 1)[0]
                if line in ERRORS and expected is None and not retried:
                    # The kit's count of the bag may be off (tiles set aside by an
                    # exchange): only the server knows. Skip instead.
                    retried = True
                    await me.send("skip")
                    result.announced[-1] = (state.turn, "", told)
                    continue
                if word == "replace" or line.startswith("player skipped"):
                    told[name] = line
                if line in ERRORS:
                    raise CheckFailed(f"a legal turn got {line!r}")
                if word == "move" and name == state.turn:
                    parts = line.split()
                    placed = Tile.parse(parts[2])
                    board.put(placed, int(parts[3]))
                    # the hand as it ends the game: no tiles line follows the last move
                    codes = {r.code for r in placed.rotations()}
                    hand_now = result.hands.get(parts[1], [])
                    gone = next((t for t in hand_now if t in codes), None)
                    if gone is not None:
                        hand_now.remove(gone)
                    result.points[parts[1]] += int(parts[4])
                    if expected is not None and int(parts[4]) != expected:
                        result.bad_points.append(f"{line} (the rules: {expected})")
                elif word == "replace" and name == state.turn:
                    result.replaces += 1
                elif line.startswith("player skipped") and name == state.turn:
                    result.skips += 1
                elif word == "tiles":
                    nxt = parse_tiles(line, players)
                    break
                elif line.startswith("game finished"):
                    result.leaderboards[name] = line
                    break
        if len(result.leaderboards) == len(players):
            return result
        if result.leaderboards:
            raise CheckFailed(f"only some players got the leaderboard: {result.leaderboards}")
        assert nxt is not None
        in_bag = (
            len(TILE_SET)
            - sum(len(h) for h in nxt.hands.values())
            - sum(1 for _ in board.tiles())
            - result.replaces
        )
        result.hands = {n: list(h) for n, h in nxt.hands.items()}
        state = nxt


whole_game = shared("whole game", _whole_game)


@check(
    "leaderboard",
    "game finished leaderboard [<name> <points>]",
    Level.MUST,
    "a whole game ends with the leaderboard of every player, best first",
)
async def _leaderboard(ctx: Context) -> None:
    g = await whole_game(ctx)
    for name, line in g.leaderboards.items():
        words = line.split()[3:]
        ctx.expect(words[:1] != [] and len(words) % 2 == 0, f"{name} got {line!r}")
        try:
            scores = [int(s) for s in words[1::2]]
        except ValueError:
            ctx.fail(f"{name}: points are not numbers: {line!r}")
        ctx.expect(sorted(words[0::2]) == sorted(g.points), f"{name} got {line!r}")
        ctx.expect(scores == sorted(scores, reverse=True), f"not ordered by points: {line!r}")


@check(
    "move-points-game",
    "move <name> <tile> <index> <points>",
    Level.MUST,
    "through a whole game every move's points are the rules' points",
)
async def _points_game(ctx: Context) -> None:
    g = await whole_game(ctx)
    ctx.expect(not g.bad_points, f"wrong points: {g.bad_points[:3]}")
    ctx.expect(g.moves > 2, f"only {g.moves} turns")


@check(
    "leaderboard-points",
    "game finished leaderboard [<name> <points>]",
    Level.SHOULD,
    "the leaderboard is the moves' points less the tiles left in hand",
    errata="Spectrangle: tiles left in hand are subtracted",
)
async def _leaderboard_points(ctx: Context) -> None:
    g = await whole_game(ctx)
    want = {
        n: p - sum(Tile.parse(t).value for t in g.hands.get(n, [])) for n, p in g.points.items()
    }
    for name, line in g.leaderboards.items():
        words = line.split()[3:]
        got = {
            n: int(s)
            for n, s in zip(words[0::2], words[1::2], strict=False)
            if s.lstrip("-").isdigit()
        }
        ctx.expect(got == want, f"{name} got {got}, the moves less the hands give {want}")


Announced = list[tuple[str, str, dict[str, str]]]


async def _more_games(ctx: Context) -> Announced:
    """Exchanges and skips depend on the deal: more games (up to eight, a tenth of a
    second each) until both came."""
    first = await whole_game(ctx)
    seen = list(first.announced)
    for n in range(7):
        if any(a[1] for a in seen) and any(not a[1] for a in seen):
            break
        more = await _whole_game_tagged(ctx, (f"xg{n}a", f"xg{n}b"))
        seen += more.announced
    return seen


exchanges_and_skips = shared("exchanges and skips", _more_games)


async def _announced(ctx: Context, exchange: bool) -> tuple[list[str], Announced]:
    seen = await exchanges_and_skips(ctx)
    g = await whole_game(ctx)
    return list(g.points), [a for a in seen if bool(a[1]) == exchange]


@check(
    "replace",
    "replace <name> <tile> with <new tile>",
    Level.MUST,
    "an exchange is announced to every player: replace name tile with new-tile",
)
async def _replace(ctx: Context) -> None:
    _, exchanges = await _announced(ctx, exchange=True)
    if not exchanges:
        raise CannotTest("in eight games no player had to exchange (it depends on the deal)")
    for mover, tile, told in exchanges:
        for name in told:
            line = told.get(name, "")
            words = line.split()
            ok = (
                len(words) == 5
                and words[0] == "replace"
                and words[1] == mover
                and words[3] == "with"
                and _TILE.fullmatch(words[4]) is not None
                and Tile.parse(words[2]).code in {r.code for r in Tile.parse(tile).rotations()}
                if len(words) == 5 and _TILE.fullmatch(words[2])
                else False
            )
            ctx.expect(ok, f"{name} was told {line!r} of {mover}'s exchange of {tile}")


@check(
    "player-skipped",
    "player skipped <name>",
    Level.MUST,
    "a player's skip is announced to every player: player skipped name",
)
async def _player_skipped(ctx: Context) -> None:
    _, skips = await _announced(ctx, exchange=False)
    if not skips:
        raise CannotTest("in eight games no player had to skip (it depends on the deal)")
    for mover, _, told in skips:
        for name in told:
            line = told.get(name, "")
            ctx.expect(
                line == f"player skipped {mover}",
                f"{name} was told {line!r} of {mover}'s skip",
            )

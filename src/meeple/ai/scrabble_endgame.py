"""Scrabble endgame and pre-endgame search (issue 37).

- :class:`EndgameSolver`: the bag is empty, so both racks are known (the opponent's is
  the unseen tiles). Negamax with alpha-beta over every play and a pass of both sides,
  the final spread as the value, deepened one ply at a time while time lasts. Call
  :meth:`EndgameSolver.solve`; its :class:`EndgameResult` says whether the value is
  exact.
- :func:`preendgame`: one tile in the bag. Every candidate play is weighed over the
  tile it may draw (each unseen tile is the one in the bag with the same chance): the
  opponent then holds the rest and the bag is empty, so each case is an endgame the
  solver scores. Call it with the candidates; its :class:`PreendgameResult` ranks them.

The rules are the referee's (``games.scrabble.game``, standard variant): going out
gains the other rack's points and costs the other side as much, so twice that rack in
the spread (Hasbro rule); the game also ends after six scoreless turns in a row, each
side losing its own rack. With the bag empty a scoreless turn is a pass, and two passes
in a row bring back the position they started from, so "two passes in a row end the
game" gives the same value at the root as six scoreless turns (a player offered the
same position again can only choose as before); the one exception is a root with five
scoreless turns behind it, where a pass ends the game at once (``passed=True``).

The search in the bots' time (0.2–1 s) cannot see a full seven-tile endgame, so it runs
in two phases, as Macondo's does. First a *narrow* search: at each node only the
:data:`WIDTH` plays that look best (:data:`ROOT_WIDTH` at the root) by the order
estimate, deepened until every line it keeps is played out; its value is labelled not
exact. Then, if time is left, the full-width search, whose every finished iteration with
no line cut off is exact. Plays are tried in order of score plus a cheap estimate of
what follows, computed by the compiled generator as a "leave value" of the tiles kept:
going out adds twice the other rack, any other play subtracts the points it keeps; the
best play of the previous iteration (the transposition table's) goes first. A line cut
off at the depth limit is scored by the spread so far plus the points of the racks as
they stand (what both would lose if the game ended there): the side holding more points
is the one likely to be caught with them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import MoveGenerator, sort_leave
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = [
    "MAX_TABLE",
    "ROOT_WIDTH",
    "WIDTH",
    "Draw",
    "EndgameLeave",
    "EndgameResult",
    "EndgameSolver",
    "PreendgameResult",
    "Timeout",
    "draws",
    "preendgame",
    "rack_points",
]

WIDTH = 6  # plays kept at a node of the narrow search
ROOT_WIDTH = 24  # ... and at its root
MAX_TABLE = 1 << 20  # transposition-table entries before it is cleared
_ALL = 1 << 16  # "every play" for the generator's best-N
_DONE = 1 << 30  # an entry's depth when no line below it was cut off: good for any depth
_MAX_PLIES = 4 * 7  # no endgame of two seven-tile racks lasts longer (passes included)
_EXACT, _LOWER, _UPPER = range(3)

Key = tuple[frozenset[tuple[int, int, str]], str, str, bool]


class Timeout(Exception):
    """The time ran out inside a search; the caller keeps its last finished result."""


def rack_points(rack: str, tile_set: TileSet = ENGLISH) -> int:
    """The face value of the tiles on a rack (blanks 0)."""
    return sum(tile_set.value(t) for t in rack)


def _minus(rack: str, tiles: str) -> str:
    left = list(rack)
    for t in tiles:
        left.remove(t)
    return "".join(left)


@dataclass(frozen=True, slots=True)
class EndgameResult:
    """What a search found: the play to make (``None``: pass), its value and how sure.

    ``value`` is the final spread from here for the side to move when ``exact``;
    otherwise the deepest finished iteration's estimate. ``complete``: no line was cut
    off at the depth limit (with ``narrow``, among the plays kept); ``exact``: complete
    and full width. ``line`` is the best sequence found, both sides in turn (``None`` is
    a pass). ``narrow`` says the value came from the width-limited search.
    """

    move: Move | None
    value: float
    exact: bool
    complete: bool
    depth: int
    line: tuple[Move | None, ...]
    nodes: int
    narrow: bool


@dataclass(frozen=True, slots=True)
class _Entry:
    depth: int
    value: float
    bound: int
    best: Move | None  # None: passing was best
    narrowed: bool  # some node below kept only part of its plays


class EndgameLeave:
    """The value of a leave with the bag empty, as a leave table for the generator's
    best-N by equity: the solver's move order and the simulation's plays once the bag
    has run out.

    Keeping nothing (going out) is worth twice the other rack (``opp_points``); keeping
    tiles costs their points. The generator adds it to each play's score in C, so it
    costs no Python per play.
    """

    __slots__ = ("out", "tile_set")

    def __init__(self, opp_points: int, tile_set: TileSet) -> None:
        self.out = 2.0 * opp_points
        self.tile_set = tile_set

    def get(self, leave: str, default: float = 0.0, /) -> float:
        if not leave:
            return self.out
        return -float(rack_points(leave, self.tile_set))


class EndgameSolver:
    """Negamax with alpha-beta for a two-player endgame with the bag empty.

    ``expired`` is polled every few nodes (a :class:`~meeple.ai.scrabble.Budget`'s
    ``expired``); when it says so the running iteration is dropped. A transposition
    table keyed by the tiles put down since the root (a set, so two orders of the same
    plays meet; with the root's board that is the board), both racks and whether the
    last turn was a pass holds each position's value with its bound, the depth searched
    (unlimited when no line below was cut off) and its best action, tried first on the
    next, deeper iteration.
    """

    def __init__(
        self,
        generator: MoveGenerator,
        lexicon: Lexicon,
        tile_set: TileSet = ENGLISH,
        *,
        expired: Callable[[], bool] | None = None,
        width: int = WIDTH,
        root_width: int = ROOT_WIDTH,
    ) -> None:
        self.gen = generator
        self.lexicon = lexicon
        self.tile_set = tile_set
        self.expired = expired if expired is not None else (lambda: False)
        self.width = max(1, width)
        self.root_width = max(1, root_width)
        self.nodes = 0
        self._narrow = False
        self._cut = False  # some line stopped at the depth limit
        self._truncated = False  # some node's plays were cut to the width
        self._placed: set[tuple[int, int, str]] = set()
        self._table: dict[Key, _Entry] = {}
        self._hints: dict[Key, Move | None] = {}
        self._orders: dict[int, EndgameLeave] = {}

    # --- the API ---

    def solve(
        self,
        board: Board,
        rack: str,
        opp: str,
        *,
        passed: bool = False,
        max_depth: int = _MAX_PLIES,
        narrow: bool = True,
        full: bool = True,
    ) -> EndgameResult | None:
        """The best play for ``rack`` against ``opp`` (to move second), deepening in time.

        ``None`` only when time ran out before the first iteration finished. ``passed``:
        a pass now ends the game (the last turn was the fifth scoreless one in a row).
        ``narrow``/``full`` choose the phases (both by default: narrow, then full width).
        """
        board = board.copy()
        self._table.clear()
        self._hints.clear()
        self._placed = set()
        best: EndgameResult | None = None
        phases = [p for p, on in ((True, narrow), (False, full)) if on]
        for phase in phases:
            self._narrow = phase
            if not phase:  # the narrow values are not the full tree's: keep only the orders
                self._hints = {k: e.best for k, e in self._table.items()}
                self._table.clear()
            depth = 1
            while depth <= max_depth:
                try:
                    result = self._root(board, rack, opp, depth, passed)
                except Timeout:
                    return best
                # A full-width iteration replaces the narrow search's answer once it is
                # exact or as deep.
                if (
                    best is None
                    or phase
                    or not best.narrow
                    or result.exact
                    or result.depth >= best.depth
                ):
                    best = result
                if result.exact:
                    return result
                if not self._cut:  # every kept line played out: deeper adds nothing
                    break
                depth += 1
        return best

    # --- the search ---

    def _key(self, rack: str, opp: str, passed: bool) -> Key:
        return frozenset(self._placed), sort_leave(rack), sort_leave(opp), passed

    def _root(self, board: Board, rack: str, opp: str, depth: int, passed: bool) -> EndgameResult:
        self._cut = False
        self._truncated = False
        value = self._negamax(board, rack, opp, depth, -math.inf, math.inf, passed, 0)
        entry = self._table.get(self._key(rack, opp, passed))
        move = entry.best if entry is not None else None
        complete = not self._cut
        exact = complete and not self._truncated
        line = self._line(board, rack, opp, passed)
        return EndgameResult(move, value, exact, complete, depth, line, self.nodes, self._narrow)

    def _line(self, board: Board, rack: str, opp: str, passed: bool) -> tuple[Move | None, ...]:
        out: list[Move | None] = []
        saved = self._placed
        self._placed = set(saved)
        try:
            while len(out) < _MAX_PLIES:
                entry = self._table.get(self._key(rack, opp, passed))
                if entry is None:
                    break
                if entry.best is None:
                    out.append(None)
                    if passed:
                        break
                    rack, opp, passed = opp, rack, True
                    continue
                m = entry.best
                out.append(m)
                self._placed.update((t.x, t.y, t.tile) for t in m.tiles)
                rack = _minus(rack, m.rack_tiles)
                if not rack:
                    break
                rack, opp, passed = opp, rack, False
        finally:
            self._placed = saved
        return tuple(out)

    def _order(self, opp: str) -> EndgameLeave:
        points = rack_points(opp, self.tile_set)
        hit = self._orders.get(points)
        if hit is None:
            hit = self._orders[points] = EndgameLeave(points, self.tile_set)
        return hit

    def _moves(
        self, board: Board, rack: str, opp: str, ply: int, first: Move | None
    ) -> Iterator[Move]:
        """The plays to try, best-looking first; narrow: only the first few."""
        order = self._order(opp)
        lex, ts = self.lexicon, self.tile_set
        if first is not None:
            yield first
        if self._narrow:
            n = self.root_width if ply == 0 else self.width
            moves = self.gen.best(board, rack, lex, ts, n=n + 1, leave=order)
            if len(moves) > n:
                self._truncated = True
                moves = moves[:n]
            for m in moves:
                if m != first:
                    yield m
            return
        # Staged: most nodes are cut off after a play or two, so build the few first.
        head = self.gen.best(board, rack, lex, ts, n=self.width, leave=order)
        for m in head:
            if m != first:
                yield m
        if len(head) < self.width:
            return
        seen = set(head)
        for m in self.gen.best(board, rack, lex, ts, n=_ALL, leave=order):
            if m not in seen and m != first:
                yield m

    def _static(self, rack: str, opp: str) -> float:
        # A cut-off line: the racks' points as they stand (what each would lose if the
        # game stopped here). Not exact; the iteration is labelled so.
        return float(rack_points(opp, self.tile_set) - rack_points(rack, self.tile_set))

    def _after(
        self,
        board: Board,
        m: Move,
        rack: str,
        opp: str,
        depth: int,
        alpha: float,
        beta: float,
        ply: int,
    ) -> float:
        """The opponent's best outcome after ``m`` (from their side)."""
        left = _minus(rack, m.rack_tiles)
        if not left:  # went out: the opponent's rack counts twice in the spread
            return -2.0 * rack_points(opp, self.tile_set)
        new = [(t.x, t.y, t.tile) for t in m.tiles]
        for t in m.tiles:
            board.place(t.x, t.y, t.tile)
        self._placed.update(new)
        try:
            return self._negamax(board, opp, left, depth, alpha, beta, False, ply)
        finally:
            self._placed.difference_update(new)
            for t in m.tiles:
                board.remove(t.x, t.y)

    def _negamax(
        self,
        board: Board,
        rack: str,
        opp: str,
        depth: int,
        alpha: float,
        beta: float,
        passed: bool,
        ply: int,
    ) -> float:
        self.nodes += 1
        if self.nodes % 16 == 0 and self.expired():
            raise Timeout
        if depth <= 0:
            self._cut = True
            return self._static(rack, opp)
        key = self._key(rack, opp, passed)
        entry = self._table.get(key)
        first: Move | None
        if entry is not None:
            first = entry.best
            if entry.depth >= depth:
                v = entry.value
                if (
                    entry.bound == _EXACT
                    or (entry.bound == _LOWER and v >= beta)
                    or (entry.bound == _UPPER and v <= alpha)
                ):
                    if entry.depth != _DONE:
                        self._cut = True
                    if entry.narrowed:  # its value is the narrow tree's, not the full one's
                        self._truncated = True
                    return v
        else:
            first = self._hints.get(key)
        alpha0 = alpha
        cut_above = self._cut
        truncated_above = self._truncated
        self._cut = False
        self._truncated = False
        best = -math.inf
        best_action: Move | None = None
        for m in self._moves(board, rack, opp, ply, first):
            # The child's window is this one's less the play's score (value = score -
            # child): unshifted, a child would be cut off against the wrong bounds.
            window = (m.score - beta, m.score - alpha)
            value = m.score - self._after(board, m, rack, opp, depth - 1, *window, ply + 1)
            if value > best:
                best, best_action = value, m
            if best > alpha:
                alpha = best
            if alpha >= beta:
                break
        if alpha < beta:
            # Passing: after two passes in a row the game ends and each loses their rack.
            if passed:
                value = float(rack_points(opp, self.tile_set) - rack_points(rack, self.tile_set))
            else:
                value = -self._negamax(board, opp, rack, depth - 1, -beta, -alpha, True, ply + 1)
            if value > best:
                best, best_action = value, None
        bound = _UPPER if best <= alpha0 else _LOWER if best >= beta else _EXACT
        if len(self._table) >= MAX_TABLE:
            self._table.clear()
        self._table[key] = _Entry(
            depth if self._cut else _DONE, best, bound, best_action, self._truncated
        )
        self._cut = self._cut or cut_above
        self._truncated = self._truncated or truncated_above
        return best


def _replaces(full: EndgameResult, narrow: EndgameResult) -> bool:
    return not narrow.narrow or full.exact or full.depth >= narrow.depth


# --- pre-endgame: one tile in the bag ---


@dataclass(frozen=True, slots=True)
class Draw:
    """One way the bag can be: ``tile`` is in it (``weight``: its chance), ``opp`` the
    opponent's rack then."""

    tile: str
    weight: float
    opp: str


def draws(unseen: str) -> list[Draw]:
    """With one tile in the bag: each distinct unseen tile may be it, weighted by count."""
    counts = Counter(unseen)
    total = len(unseen)
    return [
        Draw(t, n / total, _minus(unseen, t))
        for t, n in sorted(counts.items(), key=lambda kv: (kv[0] == BLANK, kv[0]))
    ]


@dataclass(frozen=True, slots=True)
class PreendgameResult:
    """Candidates ranked by the pre-endgame: ``values[i]`` is candidate ``i``'s expected
    final spread from here, ``wins[i]`` its chance to win (draws half) given ``lead``,
    ``depth`` the deepest round every candidate finished, ``exact`` whether every
    endgame in that round was solved exactly."""

    values: tuple[float, ...]
    wins: tuple[float, ...]
    depth: int
    exact: bool

    def best(self, *, by_wins: bool) -> int:
        """The index of the best candidate: by win chance (then spread) or by spread."""
        keys = range(len(self.values))
        if by_wins:
            return max(keys, key=lambda i: (self.wins[i], self.values[i], -i))
        return max(keys, key=lambda i: (self.values[i], -i))


def preendgame(
    generator: MoveGenerator,
    lexicon: Lexicon,
    board: Board,
    rack: str,
    unseen: str,
    candidates: Sequence[Move],
    *,
    tile_set: TileSet = ENGLISH,
    lead: int = 0,
    expired: Callable[[], bool] | None = None,
    max_depth: int = _MAX_PLIES,
) -> PreendgameResult | None:
    """Weigh ``candidates`` (plays of ``rack``) with one tile in the bag.

    For each candidate and each tile the bag may hold (:func:`draws`): the play is made,
    that tile drawn, the opponent holds the rest of ``unseen`` and moves in an endgame
    the solver scores. Rounds go deeper one ply at a time (a round solves every case to
    that depth with the narrow search, then exactly once the narrow one has played
    every line out); the last round every case finished decides. ``None`` when time ran
    out before the first round finished. ``lead`` is our score minus theirs, for the
    win chances.
    """
    expired = expired if expired is not None else (lambda: False)
    cases = draws(unseen)
    done: PreendgameResult | None = None
    depth = 1
    exact_round = False
    while True:
        values: list[float] = []
        wins: list[float] = []
        all_exact = True
        all_complete = True
        try:
            for m in candidates:
                after = board.copy()
                for t in m.tiles:
                    after.place(t.x, t.y, t.tile)
                left = _minus(rack, m.rack_tiles)
                value = 0.0
                win = 0.0
                for case in cases:
                    solver = EndgameSolver(generator, lexicon, tile_set, expired=expired)
                    # The opponent moves first in the endgame after our play and draw.
                    result = solver.solve(
                        after,
                        case.opp,
                        left + case.tile,
                        max_depth=max_depth if exact_round else depth,
                        narrow=not exact_round,
                        full=exact_round,
                    )
                    if result is None or (exact_round and not result.exact):
                        raise Timeout
                    if not result.complete and result.depth < depth:
                        raise Timeout  # stopped short of this round's depth
                    all_exact = all_exact and result.exact
                    all_complete = all_complete and result.complete
                    spread = m.score - result.value
                    value += case.weight * spread
                    final = lead + spread
                    win += case.weight * (1.0 if final > 0 else 0.5 if final == 0 else 0.0)
                values.append(value)
                wins.append(win)
        except Timeout:
            return done
        done = PreendgameResult(tuple(values), tuple(wins), depth, all_exact)
        if all_exact or exact_round or expired():
            return done
        if all_complete or depth >= max_depth:
            exact_round = True  # every kept line played out: now the full width
        else:
            depth += 1

"""A Santorini player that searches: iterative deepening alpha-beta with a clock.

:class:`AlphaBetaPlayer` picks a whole turn by searching, then plays it step by step
(a bot asks once per step; the later steps of a planned turn come from the plan, not a
new search). :func:`search_turn` is the search itself.

The search
==========

- **Nodes are turn starts.** A node's children are every way to complete the turn
  (engine :func:`~meeple.games.santorini.turns`, gods included), so one ply is one
  player's whole turn. The game without gods between two players has a *fast twin*
  (:func:`mortal_children`, plain tuples and an incrementally updated Zobrist key);
  ``tests/ai/test_santorini_search.py`` proves on random positions that it yields
  exactly the engine's turns. Every other game (any god, three players, a turn
  already begun) is searched through the engine's own ``turns``.
- **Alpha-beta minimax from the root player's view** (for two players this is
  negamax; with three the opponents are assumed to gang up, "paranoid"), fail-soft,
  iterative deepening from depth 1 until the budget is spent (past depth 2 no
  iteration starts after 55 % of the time); the move of the last finished depth is
  played, or a root move that beat it in an iteration cut short. Wins are scored
  ``WIN - ply`` so the quickest win (and the slowest loss) is preferred.
- **Transposition table** keyed by a Zobrist hash of the heights, the workers, the
  side to move, the root seat and, through the engine, the gods, who moved up last
  turn (Athena) and who is still alive; it keeps depth, value, bound and best move,
  and lives across the moves of a game (bounded size).
- **Move ordering:** the table's move, winning turns, turns that block an
  opponent's climb to level 3 (a dome, or standing on the cell), two killer moves per
  ply, then a static guess (and a history table for engine nodes next to the
  horizon); turns that hand the opponent a level-3 step come last.
- **Forward pruning through the engine** (gods, three players), whose turns cost
  far more to generate: a node two or more turns from the horizon searches only the
  :data:`BEAM` turns the evaluation likes best, and the root from depth 2 on the
  :data:`ROOT_BEAM` best of the previous iteration (all of them when those all lose).
  The fast twin searches full width.
- **Level-3 extensions:** at the horizon, a side to move that can step up to level 3
  has won (fast twin), and a side to move facing such a threat gets one more ply to
  find its block (at most :data:`MAX_EXTENSIONS` per line).
- **Budget:** :class:`SearchBudget` (seconds on an injected clock, and/or a node
  count, and/or a depth). The clock is read every :data:`CLOCK_EVERY` nodes.

The evaluation (:mod:`meeple.ai.santorini_eval`) is a weighted sum of features fitted
from self-play (``scripts/train_santorini_eval.py``).

The compiled core
=================

Where the twins apply (two players at a turn's start, no gods or the god twin's gods)
:func:`search_turn` hands the position to the compiled core
(:mod:`meeple.ai.santorini_native`, ``_santorini_core.c``) when it is built: the same
turns, keys, evaluation and rules of search (proved equal at fixed depths by
``tests/ai/test_santorini_core.py``) at 30-130 times the nodes a second, principal
variation search with aspiration windows on top. Everything above is then the
reference and the fallback (three players, a turn begun, no compiled core).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from meeple.ai.santorini import _setup_action
from meeple.ai.santorini_eval import (
    EvalWeights,
    GodWeights,
    evaluate_board,
    evaluate_gods,
    evaluate_mortal,
    god_weights,
    play_weights,
)
from meeple.ai.santorini_native import (
    SELECTIVE,
    CoreBusy,
    NativeSearch,
    core_module,
    god_indices,
)
from meeple.ai.santorini_net import NetWeights, evaluate_net, net_weights
from meeple.ai.santorini_twin import BUILD_FLAG, GodTwin
from meeple.games.santorini import (
    NEIGHBOURS,
    Action,
    Build,
    GameState,
    Lose,
    Move,
    MoveStep,
    Pass,
    Phase,
    advance,
    turns,
)

if TYPE_CHECKING:
    from random import Random

__all__ = [
    "CLOCK_EVERY",
    "DEFAULT_THINK_TIME",
    "EVALUATIONS",
    "LEVELS",
    "MAX_EXTENSIONS",
    "PLAY_EVALUATION",
    "PLAY_SELECTIVE",
    "WIN",
    "AlphaBetaPlayer",
    "Level",
    "SearchBudget",
    "SearchResult",
    "engine_key",
    "mortal_children",
    "mortal_node",
    "play_net",
    "search_turn",
    "selective_mask",
]

WIN = 1_000_000
_MATE = WIN - 1000  # values beyond this are wins or losses found by the search
MAX_EXTENSIONS = 2
CLOCK_EVERY = 32
MAX_DEPTH = 64
TT_LIMIT = 400_000  # entries kept before the table is cleared
BEAM = 8  # engine nodes (gods, three players) at depth 2 or more search this many turns
ROOT_BEAM = 12  # and the root, from depth 2 on, this many of the last iteration's best
EXPANDED_LIMIT = 3000  # engine nodes whose turns are kept (iterative deepening re-expands)
DEFAULT_THINK_TIME = 1.0
PLAY_SELECTIVE = sum(SELECTIVE[f] for f in ("lmr", "rfp", "nmp", "qs", "lmp", "iir", "blk"))


def selective_mask(spec: str) -> int:
    """A mask of the core's selective features by name: ``lmr,qs`` → those features
    (:data:`~meeple.ai.santorini_native.SELECTIVE`), ``none`` → 0 (the exact search),
    ``play`` → :data:`PLAY_SELECTIVE`. ValueError for an unknown name."""
    if spec == "none":
        return 0
    if spec == "play":
        return PLAY_SELECTIVE
    mask = 0
    for name in spec.split(","):
        if name not in SELECTIVE:
            raise ValueError(f"unknown feature {name!r}: {', '.join(SELECTIVE)}, none, play")
        mask |= SELECTIVE[name]
    return mask


"""The compiled core's selective features the players search with (issue 36; each
was kept after a self-match against the search without it, docs/santorini-engine.md)."""

_EXACT, _LOWER, _UPPER = 0, 1, 2

# ------------------------------------------------------------------------ zobrist keys

_MASK = (1 << 64) - 1
_zstate = [0x5A7041]


def _z() -> int:
    """The next Zobrist key: a fixed splitmix64 sequence (the same keys every run,
    and no :mod:`random` in this layer)."""
    _zstate[0] = (_zstate[0] + 0x9E3779B97F4A7C15) & _MASK
    x = _zstate[0]
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


Z_HEIGHT: tuple[tuple[int, ...], ...] = tuple(tuple(_z() for _h in range(5)) for _c in range(25))
Z_WORKER: tuple[tuple[int, ...], ...] = tuple(tuple(_z() for _c in range(25)) for _w in range(6))
Z_TURN: tuple[int, ...] = tuple(_z() for _ in range(3))
Z_ROOT: tuple[int, ...] = tuple(_z() for _ in range(3))
Z_MOVED_UP: tuple[int, ...] = tuple(_z() for _ in range(3))
Z_DEAD: tuple[int, ...] = tuple(_z() for _ in range(3))
Z_OVER = _z()
_GOD_KEYS: dict[tuple[int, str | None], int] = {}


def _god_key(seat: int, god: str | None) -> int:
    key = _GOD_KEYS.get((seat, god))
    if key is None:
        key = _GOD_KEYS[(seat, god)] = _z()
    return key


def _heights(s: GameState) -> tuple[int, ...]:
    """Each cell's height, 4 for a dome (whatever is below it)."""
    return tuple(4 if d else lv for lv, d in zip(s.levels, s.domes, strict=True))


def engine_key(s: GameState) -> int:
    """The Zobrist key of an engine state: heights, workers, side to move, gods,
    Athena's "moved up" flags, who is alive, and the steps of a turn begun."""
    k = 0
    for c, h in enumerate(_heights(s)):
        k ^= Z_HEIGHT[c][h]
    for w, at in enumerate(s.workers):
        if at is not None:
            k ^= Z_WORKER[w][at]
    if s.phase is Phase.OVER:
        k ^= Z_OVER ^ Z_TURN[s.winner or 0]
    else:
        k ^= Z_TURN[s.turn]
    for seat in range(s.players):
        if s.rules.gods:
            k ^= _god_key(seat, s.gods[seat])
        if s.moved_up[seat]:
            k ^= Z_MOVED_UP[seat]
        if not s.alive[seat]:
            k ^= Z_DEAD[seat]
    if s.steps:
        k ^= hash(s.steps) & _MASK
    return k


# ------------------------------------------------------------- the fast mortal twin

MortalNode = tuple[int, tuple[int, ...], tuple[int, ...], int, int]
"""``(key, heights, workers, turn, winner)``: two players, no gods, a turn's start.
``heights`` per cell (4: dome), ``workers`` four cells (seat 0's male, female, seat 1's),
``winner`` -1 while the game goes on (``turn`` is then the side to move)."""

MortalMove = tuple[int, int, int]
"""``(worker, destination, build cell)``; the build cell is -1 for a winning move."""


def mortal_node(s: GameState) -> MortalNode | None:
    """The fast twin's node for ``s``, or None when the twin does not cover it (gods,
    three players, a turn begun, a worker missing, not in play)."""
    if (
        s.rules.gods
        or s.players != 2
        or s.phase is not Phase.PLAY
        or s.steps
        or any(at is None for at in s.workers)
    ):
        return None
    h = _heights(s)
    workers = tuple(at for at in s.workers if at is not None)
    key = Z_TURN[s.turn]
    for c in range(25):
        key ^= Z_HEIGHT[c][h[c]]
    for w, at in enumerate(workers):
        key ^= Z_WORKER[w][at]
    return (key, h, workers, s.turn, -1)


def mortal_children(node: MortalNode) -> list[tuple[MortalMove, MortalNode]]:
    """Every turn of the side to move (move one worker, build next to it; a step up
    onto level 3 wins at once), each with the node after it. The same turns as the
    engine's :func:`~meeple.games.santorini.turns` for that position."""
    key, h, wk, me, _ = node
    other = 1 - me
    zt = Z_TURN[me] ^ Z_TURN[other]
    out: list[tuple[MortalMove, MortalNode]] = []
    for i in (2 * me, 2 * me + 1):
        src = wk[i]
        top = h[src] + 1
        zw = Z_WORKER[i]
        for dst in NEIGHBOURS[src]:
            hd = h[dst]
            if hd > top or hd == 4 or dst in wk:
                continue
            nw = (*wk[:i], dst, *wk[i + 1 :])
            k1 = key ^ zw[src] ^ zw[dst]
            if hd == 3 and top < 4:
                out.append(((i, dst, -1), (k1 ^ zt, h, nw, other, me)))
                continue
            for b in NEIGHBOURS[dst]:
                hb = h[b]
                if hb == 4 or b in nw:
                    continue
                zh = Z_HEIGHT[b]
                nh = (*h[:b], hb + 1, *h[b + 1 :])
                out.append(((i, dst, b), (k1 ^ zh[hb] ^ zh[hb + 1] ^ zt, nh, nw, other, -1)))
    return out


def _mortal_moves(
    h: Sequence[int], wk: Sequence[int], me: int, hash_move: int, killers: Sequence[Any]
) -> list[int]:
    """The fast twin's turns as ints, best guess first: ``score << 12 | code`` with
    ``code = worker << 10 | destination << 5 | (build cell + 1)`` (build -1: a win).
    The table's move first, then wins, blocks of the opponent's level-3 steps, killers;
    handing the opponent a level-3 step last."""
    danger: set[int] = set()
    for j in (2 - 2 * me, 3 - 2 * me):
        o = wk[j]
        if h[o] == 2:
            for d in NEIGHBOURS[o]:
                hd = h[d]
                if (hd == 2 or hd == 3) and d not in wk:
                    danger.add(d)
    k0, k1 = killers
    out: list[int] = []
    for i in (2 * me, 2 * me + 1):
        src = wk[i]
        top = h[src] + 1
        for dst in NEIGHBOURS[src]:
            hd = h[dst]
            if hd > top or hd == 4 or dst in wk:
                continue
            base = (i << 10) | (dst << 5)
            if hd == 3 and top < 4:
                out.append((1 << 40) | base)
                continue
            s0 = 64 + hd * 16 + (400 if dst in danger else 0)
            for b in NEIGHBOURS[dst]:
                hb = h[b]
                if hb == 4 or (b in wk and b != src):
                    continue
                code = base | (b + 1)
                s = s0
                if b in danger:
                    s += 1000 if hb == 3 else -500 if hb == 2 else 0
                if code == hash_move:
                    s = 1 << 30
                elif code in (k0, k1):
                    s += 2000
                out.append((s << 12) | code)
    out.sort(reverse=True)
    return out


def _mortal_can_win(h: Sequence[int], wk: Sequence[int], seat: int) -> bool:
    """Whether ``seat`` has a worker on level 2 next to a free level-3 cell."""
    for i in (2 * seat, 2 * seat + 1):
        src = wk[i]
        if h[src] == 2:
            for d in NEIGHBOURS[src]:
                if h[d] == 3 and d not in wk:
                    return True
    return False


def _threat_cells(h: Sequence[int], wk: Sequence[int | None], seat: int) -> set[int]:
    """Free level-3 cells next to ``seat``'s workers on level 2 (its wins next turn),
    and the level-2 cells next to them (where a third block would give it one)."""
    out: set[int] = set()
    for i in (2 * seat, 2 * seat + 1):
        src = wk[i]
        if src is not None and h[src] == 2:
            for d in NEIGHBOURS[src]:
                if h[d] in (2, 3) and d not in wk:
                    out.add(d)
    return out


def _mortal_route(s: GameState, move: MortalMove) -> tuple[Move | Build | Pass, ...]:
    """The engine actions of a fast-twin move, from state ``s``."""
    i, dst, b = move
    me = s.turn
    src = s.workers[i]
    assert src is not None
    step = Move(me, src, dst)
    if b < 0:
        return (step,)
    level = 4 if s.levels[b] == 3 else s.levels[b] + 1
    return (step, Build(me, dst, b, level), Pass(me))


# --------------------------------------------------------------------------- budget


class SearchBudget:
    """When to stop: ``seconds`` on ``clock`` (no clock: no time limit), ``max_nodes``
    nodes, ``max_depth`` plies (turns). A search stopped inside depth 1 plays the turn
    its move ordering put first."""

    __slots__ = ("_clock", "_deadline", "max_depth", "max_nodes", "seconds")

    @property
    def clock(self) -> Callable[[], float] | None:
        return self._clock

    def __init__(
        self,
        seconds: float | None = None,
        clock: Callable[[], float] | None = None,
        *,
        max_nodes: int | None = None,
        max_depth: int | None = None,
    ) -> None:
        self._clock = clock
        self.seconds = seconds
        self.max_nodes = max_nodes
        self.max_depth = max_depth if max_depth is not None else MAX_DEPTH
        if clock is not None and seconds is not None:
            self._deadline: float | None = clock() + max(seconds, 0.0)
        else:
            self._deadline = None

    def expired(self, nodes: int) -> bool:
        return self.out_of_nodes(nodes) or self.out_of_time()

    def out_of_nodes(self, nodes: int) -> bool:
        return self.max_nodes is not None and nodes >= self.max_nodes

    def out_of_time(self) -> bool:
        return (
            self._deadline is not None
            and self._clock is not None
            and (self._clock() >= self._deadline)
        )

    def remaining(self) -> float | None:
        """Seconds left (None without a time limit)."""
        if self._deadline is None or self._clock is None:
            return None
        return max(0.0, self._deadline - self._clock())

    def elapsed_fraction(self) -> float:
        """How much of the time is spent (0 without a time limit)."""
        if self._deadline is None or self._clock is None or not self.seconds:
            return 0.0
        return 1.0 - max(0.0, self._deadline - self._clock()) / self.seconds


class _Abort(Exception):
    pass


@dataclass
class SearchResult:
    """What :func:`search_turn` found: the turn (engine actions), its value from the
    mover's view, the depth of the last finished iteration and the nodes visited."""

    route: tuple[Action, ...]
    value: int
    depth: int
    nodes: int
    pv_depths: list[tuple[int, int]] = field(default_factory=list)  # (depth, value) per iteration


# ---------------------------------------------------------------------------- search


class _Searcher:
    """One search from one root; the table, killers and history outlive it."""

    def __init__(
        self,
        root_seat: int,
        budget: SearchBudget,
        table: dict[int, tuple[int, int, int, Any]],
        weights: EvalWeights,
        history: dict[Any, int],
        mortal: bool,
        expanded: dict[int, tuple[GameState, list[tuple[Any, Any]]]] | None = None,
        twin: GodTwin | None = None,
        gweights: GodWeights | None = None,
        net: NetWeights | None = None,
    ) -> None:
        self.twin = twin
        self.gweights = gweights
        self.net = net
        self.root = root_seat
        self.expanded = expanded if expanded is not None else {}
        self.zroot = Z_ROOT[root_seat]
        self.budget = budget
        self.table = table
        self.weights = weights
        self.history = history
        self.mortal = mortal
        self.killers: list[list[Any]] = [
            [None, None] for _ in range(MAX_DEPTH + MAX_EXTENSIONS + 4)
        ]
        self.nodes = 0
        self.partial: tuple[Any, int] | None = None  # a root move better than the last best
        self.node_limit = budget.max_nodes if budget.max_nodes is not None else 1 << 62

    # -- the two kinds of node

    def _children(self, node: Any, key: int | None = None) -> list[tuple[Any, Any]]:
        if self.mortal:
            return mortal_children(node)
        if self.twin is not None:
            return self.twin.children(node)
        s: GameState = node
        if key is not None:
            hit = self.expanded.get(key)
            if hit is not None and hit[0] == s:
                return hit[1]
        out: list[tuple[Any, Any]] = list(turns(s))
        if not out and s.phase is Phase.PLAY:
            # Stuck without auto-elimination: the only way on is to lose.
            after = advance(s, Lose(s.turn))[0]
            out = [((Lose(s.turn),), after)]
        if key is not None:
            if len(self.expanded) >= EXPANDED_LIMIT:
                self.expanded.clear()
            self.expanded[key] = (s, out)
        return out

    def _info(self, node: Any) -> tuple[int, int, tuple[int, ...], Sequence[int | None]]:
        """(winner or -1, side to move, heights, workers)."""
        if self.mortal or self.twin is not None:
            return node[4], node[3], node[1], node[2]
        s: GameState = node
        if s.phase is Phase.OVER:
            return (s.winner if s.winner is not None else -2), -1, (), ()
        return -1, s.turn, _heights(s), s.workers

    def _key(self, node: Any) -> int:
        return (node[0] if self.mortal else engine_key(node)) ^ self.zroot

    def _evaluate(
        self, node: Any, heights: tuple[int, ...], workers: Sequence[int | None], turn: int
    ) -> int:
        if self.mortal:
            return evaluate_mortal(heights, workers, self.root, turn, self.weights.weights)  # type: ignore[arg-type]
        s: GameState = node
        alive = s.alive
        return evaluate_board(heights, workers, self.root, turn, s.players, self.weights, alive)

    # -- ordering

    def _order(
        self,
        children: list[tuple[Any, Any]],
        heights: tuple[int, ...],
        workers: Sequence[int | None],
        turn: int,
        hash_move: Any,
        ply: int,
    ) -> list[tuple[Any, Any]]:
        killers = self.killers[ply]
        history = self.history
        danger: set[int] = set()
        for seat in range(len(workers) // 2):
            if seat != turn:
                danger |= _threat_cells(heights, workers, seat)
        mortal = self.mortal
        if self.twin is not None:
            return self._twin_order(children, heights, turn, hash_move, ply, danger)

        def score(item: tuple[Any, Any]) -> int:
            move, child = item
            if move == hash_move:
                return 1 << 40
            if mortal:
                if child[4] >= 0:
                    return 1 << 39
                _i, dst, b = move
                hb = heights[b]
                s_ = history.get(move, 0)
                if b in danger:
                    s_ += 1 << 30 if hb in (3,) else -(1 << 30) if hb == 2 else 0
                if dst in danger:
                    s_ += 1 << 29
                s_ += heights[dst] * 64
            else:
                if child.phase is Phase.OVER:
                    return 1 << 39 if child.winner == turn else -(1 << 39)
                s_ = history.get(move, 0)
                for a in move:
                    if isinstance(a, Move):
                        s_ += heights[a.dst] * 64 if heights[a.dst] < 4 else 0
                        if a.dst in danger:
                            s_ += 1 << 29
                    elif isinstance(a, Build) and a.dst in danger:
                        s_ += 1 << 30 if a.level == 4 else -(1 << 30) if a.level == 3 else 0
            if move == killers[0] or move == killers[1]:
                s_ += 1 << 35
            return s_

        return sorted(children, key=score, reverse=True)

    # -- the recursion

    def alphabeta(self, node: Any, depth: int, alpha: int, beta: int, ply: int, ext: int) -> int:
        if self.nodes >= self.node_limit or (
            self.nodes % CLOCK_EVERY == 0 and self.budget.out_of_time()
        ):
            raise _Abort
        self.nodes += 1
        winner, turn, heights, workers = self._info(node)
        if winner != -1:
            return WIN - ply if winner == self.root else -(WIN - ply)
        maximizing = turn == self.root
        if self.mortal and _mortal_can_win(heights, workers, turn):  # type: ignore[arg-type]
            return WIN - ply - 1 if maximizing else -(WIN - ply - 1)
        if depth <= 0:
            threatened = any(
                self._can_climb3(heights, workers, seat)
                for seat in range(len(workers) // 2)
                if seat != turn
            )
            if threatened and ext < MAX_EXTENSIONS:
                depth, ext = 1, ext + 1
            else:
                return self._evaluate(node, heights, workers, turn)
        key = self._key(node)
        entry = self.table.get(key)
        hash_move = None
        if entry is not None:
            e_depth, e_value, e_flag, hash_move = entry
            if e_depth >= depth:
                v = (
                    e_value - ply
                    if e_value > _MATE
                    else e_value + ply
                    if e_value < -_MATE
                    else e_value
                )
                if e_flag == _EXACT:
                    return v
                if e_flag == _LOWER and v >= beta:
                    return v
                if e_flag == _UPPER and v <= alpha:
                    return v
        children = self._children(node, key)
        if not children:
            # Stuck (fast twin, two players): the side to move loses.
            return -(WIN - ply) if maximizing else WIN - ply
        if depth >= 2:
            ordered = self._beam(children, maximizing, hash_move)
        else:
            ordered = self._order(children, heights, workers, turn, hash_move, ply)
        a0, b0 = alpha, beta
        best_move = ordered[0][0]
        if maximizing:
            best = -WIN - 1
            for move, child in ordered:
                v = self.alphabeta(child, depth - 1, alpha, beta, ply + 1, ext)
                if v > best:
                    best, best_move = v, move
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            self._cut(move, ply, depth)
                            break
        else:
            best = WIN + 1
            for move, child in ordered:
                v = self.alphabeta(child, depth - 1, alpha, beta, ply + 1, ext)
                if v < best:
                    best, best_move = v, move
                    if v < beta:
                        beta = v
                        if alpha >= beta:
                            self._cut(move, ply, depth)
                            break
        flag = _UPPER if best <= a0 else _LOWER if best >= b0 else _EXACT
        stored = best + ply if best > _MATE else best - ply if best < -_MATE else best
        if len(self.table) >= TT_LIMIT:
            self.table.clear()
        self.table[key] = (depth, stored, flag, best_move)
        return best

    def _can_climb3(
        self, heights: tuple[int, ...], workers: Sequence[int | None], seat: int
    ) -> bool:
        """A worker of ``seat`` on level 2 next to a free level-3 cell."""
        for i in (2 * seat, 2 * seat + 1):
            src = workers[i]
            if src is not None and heights[src] == 2:
                for d in NEIGHBOURS[src]:
                    if heights[d] == 3 and d not in workers:
                        return True
        return False

    def _cut(self, move: Any, ply: int, depth: int) -> None:
        k = self.killers[ply]
        if k[0] != move:
            k[1] = k[0]
            k[0] = move
        self.history[move] = self.history.get(move, 0) + depth * depth

    # -- the fast twin's own recursion: moves as ints, children built when visited

    def mortal_ab(
        self, node: MortalNode, depth: int, alpha: int, beta: int, ply: int, ext: int
    ) -> int:
        """:meth:`alphabeta` for fast-twin nodes (same values, same table)."""
        if self.nodes >= self.node_limit or (
            self.nodes % CLOCK_EVERY == 0 and self.budget.out_of_time()
        ):
            raise _Abort
        self.nodes += 1
        key, h, wk, turn, winner = node
        root = self.root
        if winner != -1:
            return WIN - ply if winner == root else -(WIN - ply)
        maximizing = turn == root
        if _mortal_can_win(h, wk, turn):
            return WIN - ply - 1 if maximizing else -(WIN - ply - 1)
        if depth <= 0:
            if ext < MAX_EXTENSIONS and _mortal_can_win(h, wk, 1 - turn):
                depth, ext = 1, ext + 1
            else:
                return self._mortal_leaf(h, wk, turn)
        tkey = key ^ self.zroot
        entry = self.table.get(tkey)
        hash_move = -1
        if entry is not None:
            e_depth, e_value, e_flag, hash_move = entry
            if e_depth >= depth:
                v = (
                    e_value - ply
                    if e_value > _MATE
                    else e_value + ply
                    if e_value < -_MATE
                    else e_value
                )
                if e_flag == _EXACT:
                    return v
                if e_flag == _LOWER and v >= beta:
                    return v
                if e_flag == _UPPER and v <= alpha:
                    return v
        moves = _mortal_moves(h, wk, turn, hash_move, self.killers[ply])
        if not moves:
            return -(WIN - ply) if maximizing else WIN - ply  # stuck: the side to move loses
        a0, b0 = alpha, beta
        best_move = moves[0] & 0xFFF
        best = -WIN - 1 if maximizing else WIN + 1
        other = 1 - turn
        zt = Z_TURN[turn] ^ Z_TURN[other]
        leaf = depth == 1
        for code in moves:
            m = code & 0xFFF
            i, dst, b = m >> 10, (m >> 5) & 31, (m & 31) - 1
            src = wk[i]
            nw = (*wk[:i], dst, *wk[i + 1 :])
            zw = Z_WORKER[i]
            k1 = key ^ zw[src] ^ zw[dst] ^ zt
            if b < 0:
                child: MortalNode = (k1, h, nw, other, turn)
                v = WIN - ply - 1 if maximizing else -(WIN - ply - 1)
                self.nodes += 1
            else:
                hb = h[b]
                nh = (*h[:b], hb + 1, *h[b + 1 :])
                zh = Z_HEIGHT[b]
                child = (k1 ^ zh[hb] ^ zh[hb + 1], nh, nw, other, -1)
                if leaf:
                    # The horizon, inline: a win for the side to move, or an extension
                    # when it is threatened, or the evaluation.
                    if self.nodes >= self.node_limit or (
                        self.nodes % CLOCK_EVERY == 0 and self.budget.out_of_time()
                    ):
                        raise _Abort
                    if _mortal_can_win(nh, nw, other):
                        self.nodes += 1
                        v = WIN - ply - 2 if other == root else -(WIN - ply - 2)
                    elif ext < MAX_EXTENSIONS and _mortal_can_win(nh, nw, turn):
                        v = self.mortal_ab(child, 0, alpha, beta, ply + 1, ext)
                    else:
                        self.nodes += 1
                        v = self._mortal_leaf(nh, nw, other)
                else:
                    v = self.mortal_ab(child, depth - 1, alpha, beta, ply + 1, ext)
            if maximizing:
                if v > best:
                    best, best_move = v, m
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            self._cut(m, ply, depth)
                            break
            elif v < best:
                best, best_move = v, m
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        self._cut(m, ply, depth)
                        break
        self._store(tkey, depth, best, best_move, ply, a0, b0)
        return best

    def _mortal_leaf(self, h: Sequence[int], wk: Sequence[int], turn: int) -> int:
        """A horizon node of a game without gods, from the root's view: the network's
        value when the search has one (the core's, computed from scratch), else the
        weights'."""
        if self.net is not None:
            v = evaluate_net(self.net, h, wk, turn)
            v = v if turn == self.root else -v
            if self.net.residual:
                v += evaluate_mortal(h, wk, self.root, turn, self.weights.weights)
            return v
        return evaluate_mortal(h, wk, self.root, turn, self.weights.weights)

    def _store(
        self, tkey: Any, depth: int, best: int, best_move: Any, ply: int, a0: int, b0: int
    ) -> None:
        """Keep a node's value in the table: a bound or exact (by the window it was
        searched in), a win or loss counted from this node rather than the root."""
        flag = _UPPER if best <= a0 else _LOWER if best >= b0 else _EXACT
        stored = best + ply if best > _MATE else best - ply if best < -_MATE else best
        if len(self.table) >= TT_LIMIT:
            self.table.clear()
        self.table[tkey] = (depth, stored, flag, best_move)

    # -- the god twin's recursion (two players with gods): full width, as mortal_ab

    def _twin_order(
        self,
        children: list[tuple[Any, Any]],
        h: Sequence[int],
        turn: int,
        hash_move: Any,
        ply: int,
        danger: set[int],
    ) -> list[tuple[Any, Any]]:
        """Twin turns best guess first: the table's move, wins, killers, blocks of the
        opponent's level-3 steps (a dome there, or standing there), climbs; a turn that
        loses at once (Chronus' towers for the opponent) or builds a level 3 next to
        an opponent's level-2 worker last."""
        k0, k1 = self.killers[ply]
        history = self.history
        scored: list[tuple[int, int, tuple[Any, Any]]] = []
        for n, item in enumerate(children):
            move, child = item
            if move == hash_move:
                s_ = 1 << 40
            elif child[4] != -1:
                s_ = 1 << 39 if child[4] == turn else -(1 << 39)
            else:
                s_ = history.get(move, 0)
                if move in (k0, k1):
                    s_ += 1 << 35
                for x in move:
                    if x & BUILD_FLAG:
                        if x & 31 in danger:
                            lv = (x >> 10) & 7
                            s_ += 1 << 30 if lv == 4 else -(1 << 30) if lv == 3 else 0
                    else:
                        d = x & 31
                        s_ += h[d] * 64
                        if d in danger:
                            s_ += 1 << 29
            scored.append((s_, -n, item))
        scored.sort(reverse=True)
        return [item for _s, _n, item in scored]

    def twin_ab(self, node: Any, depth: int, alpha: int, beta: int, ply: int, ext: int) -> int:
        """:meth:`alphabeta` for god-twin nodes (full width, same table)."""
        if self.nodes >= self.node_limit or (
            self.nodes % CLOCK_EVERY == 0 and self.budget.out_of_time()
        ):
            raise _Abort
        self.nodes += 1
        key, h, wk, turn, winner, mu = node
        root = self.root
        if winner != -1:
            return WIN - ply if winner == root else -(WIN - ply)
        maximizing = turn == root
        twin = self.twin
        assert twin is not None
        if twin.can_win(h, wk, turn, mu):
            return WIN - ply - 1 if maximizing else -(WIN - ply - 1)
        if depth <= 0:
            if ext < MAX_EXTENSIONS and twin.can_win(h, wk, 1 - turn, mu):
                depth, ext = 1, ext + 1
            else:
                return self._twin_eval(node)
        tkey = key ^ self.zroot
        entry = self.table.get(tkey)
        hash_move = None
        if entry is not None:
            e_depth, e_value, e_flag, hash_move = entry
            if e_depth >= depth:
                v = (
                    e_value - ply
                    if e_value > _MATE
                    else e_value + ply
                    if e_value < -_MATE
                    else e_value
                )
                if e_flag == _EXACT:
                    return v
                if e_flag == _LOWER and v >= beta:
                    return v
                if e_flag == _UPPER and v <= alpha:
                    return v
        children = twin.children(node)
        if not children:
            return -(WIN - ply) if maximizing else WIN - ply  # stuck: the side to move loses
        ordered = self._twin_order(
            children, h, turn, hash_move, ply, _threat_cells(h, wk, 1 - turn)
        )
        a0, b0 = alpha, beta
        best_move = ordered[0][0]
        best = -WIN - 1 if maximizing else WIN + 1
        for move, child in ordered:
            v = self.twin_ab(child, depth - 1, alpha, beta, ply + 1, ext)
            if maximizing:
                if v > best:
                    best, best_move = v, move
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            self._cut(move, ply, depth)
                            break
            elif v < best:
                best, best_move = v, move
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        self._cut(move, ply, depth)
                        break
        self._store(tkey, depth, best, best_move, ply, a0, b0)
        return best

    def _twin_eval(self, node: Any) -> int:
        _key, h, wk, turn, _winner, mu = node
        gw = self.gweights
        if gw is None:
            return evaluate_mortal(h, wk, self.root, turn, self.weights.weights)
        assert self.twin is not None
        return evaluate_gods(h, wk, self.root, turn, mu, self.twin.gods, gw.weights)

    def _beam(
        self, children: list[tuple[Any, Any]], maximizing: bool, hash_move: Any
    ) -> list[tuple[Any, Any]]:
        """Engine nodes two or more plies from the horizon: the :data:`BEAM` children
        the evaluation likes best for the side to move (the table's move first)."""
        scored: list[tuple[int, int, tuple[Any, Any]]] = []
        for n, (move, child) in enumerate(children):
            s: GameState = child
            if s.phase is Phase.OVER:
                v = WIN if s.winner == self.root else -WIN
            else:
                v = self._evaluate(s, _heights(s), s.workers, s.turn)
            if move == hash_move:
                v = WIN + 1 if maximizing else -WIN - 1
            scored.append((v if maximizing else -v, -n, (move, child)))
        scored.sort(reverse=True)
        return [item for _v, _n, item in scored[:BEAM]]

    def root_search(self, node: Any, depth: int, order: list[tuple[Any, Any]]) -> tuple[Any, int]:
        """Search the root moves to ``depth`` (engine nodes from depth 2 on: the
        :data:`ROOT_BEAM` best of the last iteration); returns the best move and its
        value, and reorders ``order`` in place, best first."""
        alpha, beta = -WIN - 1, WIN + 1
        self.partial = None
        scored: list[tuple[int, int]] = []
        best_move, best = order[0][0], -WIN - 1
        search = (
            self.mortal_ab
            if self.mortal
            else self.twin_ab
            if self.twin is not None
            else self.alphabeta
        )
        full = self.mortal or self.twin is not None
        limit = len(order) if full or depth < 2 else min(len(order), ROOT_BEAM)
        n = 0
        while n < limit:
            move, child = order[n]
            v = search(child, depth - 1, alpha, beta, 1, 0)
            scored.append((v, n))
            if v > best:
                best, best_move = v, move
                alpha = max(alpha, v)
                if n > 0:
                    self.partial = (move, v)
            n += 1
            if n == limit and best < -_MATE:
                limit = len(order)  # every move searched so far loses: try the rest
        ranked = sorted(scored, key=lambda x: (-x[0], x[1]))
        order[:] = [order[n] for _v, n in ranked] + order[limit:]
        return best_move, best


_TWINS: dict[tuple[str | None, str | None], GodTwin] = {}


def _twin_for(g0: str | None, g1: str | None) -> GodTwin:
    twin = _TWINS.get((g0, g1))
    if twin is None:
        twin = _TWINS[(g0, g1)] = GodTwin((g0, g1))
    return twin


_local = threading.local()


def _thread_core() -> NativeSearch | None:
    """The calling thread's compiled search context (None without the core)."""
    core: NativeSearch | None = getattr(_local, "core", None)
    if core is None:
        mod = core_module()
        if mod is None:
            return None
        core = _local.core = NativeSearch(mod)
    return core


def _twin_covers(s: GameState) -> bool:
    """Whether the god twin plays ``s``. The twin is written for rules that eliminate a
    stuck player by themselves; with two players a game that asks for LOSE instead
    (the server's rooms, ``auto_eliminate=False``, spec §4.2.6) has the same turns and
    values: a side with no turn loses either way (the search answers LOSE), and a turn
    the twin ends without a Pass (a win, Chronus' towers) ends the game in both."""
    if not s.rules.auto_eliminate and s.players == 2:
        s = replace(s, rules=replace(s.rules, auto_eliminate=True))
    return GodTwin.covers(s)


def _native_search(
    s: GameState,
    budget: SearchBudget,
    weights: EvalWeights,
    gweights: GodWeights | None,
    core: NativeSearch | None,
    selective: int = 0,
    net: NetWeights | None = None,
) -> SearchResult | None:
    """:func:`search_turn` by the compiled core, or None where it does not apply (no
    core built, three players, a turn begun, a god the core lacks)."""
    if (
        s.players != 2
        or s.phase is not Phase.PLAY
        or s.steps
        or any(at is None for at in s.workers)
    ):
        return None
    mortal = not s.rules.gods
    if not mortal and not _twin_covers(s):
        return None
    mod = core_module()
    if mod is None:
        return None
    gods = (None, None) if mortal else (s.gods[0], s.gods[1])
    if god_indices(mod, gods) is None:
        return None  # pragma: no cover - the core has every god the twin has
    if core is None:
        # No context of the caller's: the thread's, its table forgotten (a search on
        # its own is deterministic, as the Python search with a fresh table is).
        core = _thread_core()
        if core is None:  # pragma: no cover - core_module() said it is built
            return None
        core.clear()
    twin = _twin_for(gods[0], gods[1])
    node = twin.node(s)
    gw = None
    if not mortal:
        g = gweights if gweights is not None else god_weights()
        gw = None if g is None else g.weights
    remaining = budget.remaining()
    try:
        found = core.search(
            twin,
            node,
            weights.weights,
            gw,
            max_depth=budget.max_depth,
            max_nodes=budget.max_nodes,
            clock=budget.clock,
            seconds=remaining,
            selective=selective,
            net=net,
        )
    except CoreBusy:
        # The caller's context is searching in another thread (a bot asked twice):
        # this search takes the thread's own, its table forgotten.
        spare = _thread_core()
        if spare is None:  # pragma: no cover - the core is built
            return None
        spare.clear()
        found = spare.search(
            twin,
            node,
            weights.weights,
            gw,
            max_depth=budget.max_depth,
            max_nodes=budget.max_nodes,
            clock=budget.clock,
            seconds=remaining,
            selective=selective,
            net=net,
        )
    if found is None:  # pragma: no cover - checked above
        return None
    me = s.turn
    if not found.steps:
        return SearchResult((Lose(me),), -WIN, 0, found.nodes)
    return SearchResult(
        twin.route(found.steps, me, found.ended),
        found.value,
        found.depth,
        found.nodes,
        list(found.iterations),
    )


def search_turn(
    s: GameState,
    budget: SearchBudget,
    *,
    weights: EvalWeights | None = None,
    table: dict[int, tuple[int, int, int, Any]] | None = None,
    history: dict[Any, int] | None = None,
    rng: Random | None = None,
    engine_only: bool = False,
    expanded: dict[int, tuple[GameState, list[tuple[Any, Any]]]] | None = None,
    gweights: GodWeights | None = None,
    native: bool | None = None,
    core: NativeSearch | None = None,
    selective: int | None = None,
    net: NetWeights | None = None,
) -> SearchResult:
    """The best turn for the seat on turn in ``s`` (phase PLAY) within ``budget``.

    Two players at a turn's start, no gods or gods the god twin covers, are searched by
    the compiled core (:mod:`meeple.ai.santorini_native`) when it is built, unless
    ``native`` is False (``native=True`` insists: RuntimeError without it); ``core`` is
    the search context whose table lives on (the player's), else one per thread.
    ``selective`` is the core's mask of selective features
    (:data:`~meeple.ai.santorini_native.SELECTIVE`; None: :data:`PLAY_SELECTIVE`, 0:
    the exact full-width search); the Python search ignores it. ``net`` evaluates a
    game without gods by the network (:mod:`meeple.ai.santorini_net`) instead of
    ``weights``: incrementally in the core, from scratch in the Python search (its
    reference, some ten times slower a node; the player passes it only to the core).

    ``table``, ``history`` and ``expanded`` (engine nodes' turns, which iterative
    deepening would otherwise generate again) may be kept across calls (the player does).
    ``engine_only`` searches through the engine's ``turns`` even where the fast twin
    applies (tests compare the two). ``rng`` shuffles the root moves first, so equal
    moves are not always the same one. ValueError when the game is over.
    """
    if s.phase is not Phase.PLAY:
        raise ValueError("no turn to search: not in play")
    weights = weights if weights is not None else play_weights()
    if native is not False and not engine_only:
        mask = PLAY_SELECTIVE if selective is None else selective
        found = _native_search(s, budget, weights, gweights, core, mask, net)
        if found is not None:
            return found
        if native:
            raise RuntimeError("the compiled Santorini core does not cover this position")
    table = table if table is not None else {}
    history = history if history is not None else {}
    me = s.turn
    node: Any = None if engine_only else mortal_node(s)
    mortal = node is not None
    twin: GodTwin | None = None
    if not mortal:
        node = s
        if not engine_only and s.rules.gods and _twin_covers(s):
            twin = _twin_for(s.gods[0], s.gods[1])
            node = twin.node(s)
    gw = gweights if gweights is not None else god_weights()
    searcher = _Searcher(me, budget, table, weights, history, mortal, expanded, twin, gw, net)
    children = searcher._children(node)
    if (mortal or twin is not None) and not children:
        return SearchResult((Lose(me),), -WIN, 0, 1)

    def route_of(move: Any) -> tuple[Action, ...]:
        if mortal:
            return _mortal_route(s, move)
        if twin is not None:
            ended = any(c[4] != -1 for m, c in children if m == move)
            return twin.route(move, me, ended)
        return tuple(move)

    if rng is not None:
        rng.shuffle(children)
    _winner, turn, heights, workers = searcher._info(node)
    order = searcher._order(children, heights, workers, turn, None, 0)
    # A winning turn needs no search.
    for move, child in order:
        w = (
            child[4]
            if mortal or twin is not None
            else (child.winner if child.phase is Phase.OVER else -1)
        )
        if w == me:
            return SearchResult(route_of(move), WIN - 1, 1, 1)
    if len(order) == 1:
        return SearchResult(route_of(order[0][0]), 0, 0, 1)
    best_move, best_value, done = order[0][0], 0, 0
    iterations: list[tuple[int, int]] = []
    try:
        for depth in range(1, budget.max_depth + 1):
            move, value = searcher.root_search(node, depth, order)
            best_move, best_value, done = move, value, depth
            iterations.append((depth, value))
            if abs(value) > _MATE:
                break  # a forced result: deeper will not change it
            if budget.expired(searcher.nodes) or (depth >= 2 and budget.elapsed_fraction() > 0.55):
                break  # the next depth would not finish in time (depth 2 is tried)
    except _Abort:
        # An iteration cut short: a root move that beat the previous best (searched
        # first, with the full window) is a better move all the same.
        partial = searcher.partial
        if partial is not None and done:
            best_move, best_value = partial
    return SearchResult(route_of(best_move), best_value, done, searcher.nodes, iterations)


# ---------------------------------------------------------------------------- player


EVALUATIONS = ("net", "table")
"""The evaluations a player can search with: ``net`` the network
(:mod:`meeple.ai.santorini_net`, games without gods searched by the compiled core; else
the table), ``table`` the table evaluation (:func:`~meeple.ai.santorini_eval.play_weights`)."""
PLAY_EVALUATION = "table"
"""The players' evaluation unless a level or a player names another (the network lost
its ablation at equal time, docs/santorini-engine.md)."""

_shipped_net: list[NetWeights | None] = []


def play_net() -> NetWeights | None:
    """The network meeple ships (read once), or None."""
    if not _shipped_net:
        _shipped_net.append(net_weights())
    return _shipped_net[0]


@dataclass(frozen=True, slots=True)
class Level:
    """A playing strength: seconds per turn, the deepest search (turns) and the
    evaluation (:data:`EVALUATIONS`)."""

    think_time: float
    max_depth: int | None
    evaluation: str = PLAY_EVALUATION


LEVELS: dict[str, Level] = {
    "easy": Level(0.1, 1),
    "medium": Level(0.5, 3),
    "hard": Level(DEFAULT_THINK_TIME, None),
}
"""``easy`` looks one turn ahead (its own turn, judged by the evaluation), ``medium``
up to three turns in at most half a second, ``hard`` as deep as a second allows."""


class AlphaBetaPlayer:
    """Plays every phase: set-up as :mod:`meeple.ai.santorini` does, turns by
    :func:`search_turn`. One search per turn; the later steps come from the plan.

    ``clock`` is injected (seconds, any origin); without one only ``max_nodes`` and
    ``max_depth`` bound the search (deterministic tests).
    """

    def __init__(
        self,
        *,
        think_time: float = DEFAULT_THINK_TIME,
        max_depth: int | None = None,
        max_nodes: int | None = None,
        clock: Callable[[], float] | None = None,
        weights: EvalWeights | None = None,
        name: str = "alphabeta",
        selective: int | None = None,
        evaluation: str = PLAY_EVALUATION,
    ) -> None:
        if evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation: one of {', '.join(EVALUATIONS)}")
        self.evaluation = evaluation
        # the network needs the compiled core (the Python search is its slow reference):
        # without it the player plays the table evaluation
        self.net = play_net() if evaluation == "net" and core_module() is not None else None
        self.think_time = think_time
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.clock = clock
        self.weights = weights if weights is not None else play_weights()
        self.name = name
        self.selective = selective
        self.table: dict[int, tuple[int, int, int, Any]] = {}
        self.history: dict[Any, int] = {}
        self.expanded: dict[int, tuple[GameState, list[tuple[Any, Any]]]] = {}
        self._plan: list[tuple[GameState, Action]] = []
        self.last: SearchResult | None = None
        self._core: NativeSearch | None = None

    def _native(self) -> NativeSearch | None:
        """This player's compiled search context (its table lives across turns), or
        None without the compiled core."""
        if self._core is None:
            mod = core_module()
            if mod is not None:
                self._core = NativeSearch(mod)
        return self._core

    @classmethod
    def at_level(
        cls,
        level: str,
        *,
        clock: Callable[[], float] | None = None,
        think_time: float | None = None,
        evaluation: str | None = None,
    ) -> AlphaBetaPlayer:
        """The player of a level (:data:`LEVELS`); ``think_time`` overrides its time,
        ``evaluation`` its evaluation (:data:`EVALUATIONS`)."""
        spec = LEVELS[level]
        return cls(
            think_time=spec.think_time if think_time is None else think_time,
            max_depth=spec.max_depth,
            clock=clock,
            name=level,
            evaluation=spec.evaluation if evaluation is None else evaluation,
        )

    def budget(self) -> SearchBudget:
        return SearchBudget(
            self.think_time if self.clock is not None else None,
            self.clock,
            max_nodes=self.max_nodes,
            max_depth=self.max_depth,
        )

    def choose(self, s: GameState, rng: Random) -> Action:
        """The next action for the seat on turn (any phase). ValueError once over."""
        if s.phase is Phase.OVER:
            raise ValueError("no legal action: the game is over")
        if s.phase is not Phase.PLAY:
            self._plan = []
            return _setup_action(s, rng)
        if self._plan and self._plan[0][0] == s:
            return self._plan.pop(0)[1]
        state = s
        if s.steps:
            # A turn begun elsewhere: plan its rest, never stepping back onto a cell
            # this worker left this turn (a Triton shuttle could go on for ever).
            left = {x.src for x in s.steps if isinstance(x, MoveStep)}
            result = search_turn(
                state,
                self.budget(),
                weights=self.weights,
                table=self.table,
                history=self.history,
                rng=rng,
                expanded=self.expanded,
                core=self._native(),
                selective=self.selective,
                net=self.net,
            )
            if any(isinstance(a, Move) and a.dst in left for a in result.route):
                onward = [
                    (route, after)
                    for route, after in turns(s)
                    if not any(isinstance(a, Move) and a.dst in left for a in route)
                ]
                if onward:
                    result = SearchResult(onward[0][0], 0, 0, result.nodes)
        else:
            result = search_turn(
                state,
                self.budget(),
                weights=self.weights,
                table=self.table,
                history=self.history,
                rng=rng,
                expanded=self.expanded,
                core=self._native(),
                selective=self.selective,
                net=self.net,
            )
        self.last = result
        plan: list[tuple[GameState, Action]] = []
        for action in result.route:
            plan.append((state, action))
            if isinstance(action, Lose):
                break
            state = advance(state, action)[0]
        self._plan = plan[1:]
        return plan[0][1]

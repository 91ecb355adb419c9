"""The evaluation the Santorini search (:mod:`meeple.ai.santorini_search`) uses.

A position is judged by features of each seat (:data:`FEATURES`), weighted and summed;
the root player's sum minus its strongest opponent's is the value. The weights are
fitted from self-play by ``scripts/train_santorini_eval.py`` (logistic regression of
the game's result on the feature differences, from the side to move's view) and kept
in ``data/santorini_eval.json`` with how they were made; :data:`HAND_WEIGHTS` are the
hand-written starting point the training's self-play used.

Features of one seat (``h`` is a cell's height, 4 a dome; "free" means no dome and no
worker):

- ``level1``, ``level2``: its workers standing on level 1, on level 2;
- ``mobility``: cells its workers could step to (free, at most one level up);
- ``climb``: of those, the ones one level up to level 1 or 2;
- ``threat_to_move``/``threat_waiting``: free level-3 cells next to its workers on
  level 2 — a win on its next move — counted apart when it is to move (it wins) or
  waiting (the opponent must block them all);
- ``setup``: free level-2 cells next to its workers on level 2 (a build there makes a
  threat);
- ``centre``: how central its workers stand (2 in the middle, 1 the ring, 0 the edge);
- ``guard``: cells where an opponent's level-2 worker could win or make a threat that
  one of its workers stands next to (and could dome or fill);
- ``tempo``: 1 for the side to move.

The learned evaluation (issue 36) adds :data:`LEARNED_FEATURES` to these in games of
two players: a weight vector of ``len(FEATURES) + len(LEARNED_FEATURES)`` integers
(:func:`learned_weights`, fitted by ``scripts/train_santorini_learned.py``) selects it
wherever a weight vector is taken, here and in the compiled core; the search plays
with it by default (:func:`play_weights`) unless the table evaluation ships: its
:data:`TABLE_FEATURES` come on top of those (44 weights, :func:`table_weights`, fitted by
``scripts/train_santorini_tables.py``) and it is then what the players use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from meeple.games.santorini.board import NEIGHBOURS

__all__ = [
    "FEATURES",
    "GOD_FEATURES",
    "HAND_WEIGHTS",
    "LEARNED_FEATURES",
    "TABLE_FEATURES",
    "EvalWeights",
    "GodWeights",
    "default_weights",
    "evaluate_board",
    "evaluate_gods",
    "evaluate_mortal",
    "god_seat_features",
    "god_threats",
    "god_weights",
    "learned_seat_features",
    "learned_weights",
    "play_weights",
    "seat_features",
    "table_seat_features",
    "table_weights",
]

FEATURES: tuple[str, ...] = (
    "level1",
    "level2",
    "mobility",
    "climb",
    "threat_to_move",
    "threat_waiting",
    "setup",
    "centre",
    "guard",
    "tempo",
)

HAND_WEIGHTS: tuple[float, ...] = (30, 90, 4, 8, 900, 150, 12, 3, 10, 10)
"""The hand-written weights (points; a level-2 worker is worth 90)."""

LEARNED_FEATURES: tuple[str, ...] = (
    "own_l1",
    "own_l2",
    "own_l3",
    "cramped",
    "apart",
    "dome_near",
)
"""The learned evaluation's features of a seat beyond :data:`FEATURES` (two players,
four workers; "free" as above):

- ``own_l1``, ``own_l2``, ``own_l3``: free cells of level 1, 2, 3 next to one of its
  workers and next to none of the opponent's (ground only it can use next turn);
- ``cramped``: its workers with at most one cell to step to;
- ``apart``: how far apart its two workers stand (king's moves, 1–4);
- ``dome_near``: domes next to its workers (each cell once).
"""

_CLASSES = ("corner", "edge1", "edge2", "diag", "orth", "mid")
TABLE_FEATURES: tuple[str, ...] = (
    *(f"w_{k}_{h}" for k in _CLASSES for h in range(3)),
    "nb_down",
    "nb_same",
    "nb_up",
    "nb_high",
    "nb_dome",
    "nb_worker",
    "pre_threat",
    "double_threat",
    "unguarded",
    "reach_l2",
)
"""The table evaluation's features of a seat beyond :data:`LEARNED_FEATURES` (issue 36,
after the losses to santorini-ai were found to be a positional drift; two players):

- ``w_{class}_{h}``: its workers standing on level ``h`` (0–2) on a cell of that class
  of the board's symmetry (``corner``; ``edge1`` an edge cell beside a corner;
  ``edge2`` an edge's middle; ``diag`` an inner cell on a diagonal; ``orth`` an inner
  cell beside the middle; ``mid`` the middle): a worker-on-cell table by height;
- ``nb_down``, ``nb_same``, ``nb_up``, ``nb_high``, ``nb_dome``, ``nb_worker``: the
  neighbours of its workers (each worker's counted) lower than it, as high, one level
  up, two or more up, domed, or holding a worker;
- ``pre_threat``: free level-2 cells next to its level-1 workers with a free level-3
  cell beside them (a step up there threatens to win);
- ``double_threat``: 1 when it has two or more level-3 threats (one block cannot stop
  both);
- ``unguarded``: its level-3 threats next to no opponent worker (they cannot be domed);
- ``reach_l2``: free level-2 cells next to its workers standing on level 1 or 2.
"""

_CENTRE = tuple(2 - max(abs(c // 5 - 2), abs(c % 5 - 2)) for c in range(25))
_CLASS = tuple(
    {(0, 0): 0, (0, 1): 1, (0, 2): 2, (1, 1): 3, (1, 2): 4, (2, 2): 5}[
        tuple(sorted((min(c // 5, 4 - c // 5), min(c % 5, 4 - c % 5))))  # type: ignore[index]
    ]
    for c in range(25)
)
_N = len(FEATURES)
_NL = _N + len(LEARNED_FEATURES)


@dataclass(frozen=True, slots=True)
class EvalWeights:
    """One integer weight per feature (:data:`FEATURES`; then one per
    :data:`LEARNED_FEATURES` for the learned evaluation), and where they came from."""

    weights: tuple[int, ...]
    provenance: str = "hand-written"


def _weights_file() -> dict[str, object] | None:
    try:
        text = resources.files("meeple.ai").joinpath("data/santorini_eval.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    data: dict[str, object] = json.loads(text)
    return data


@cache
def default_weights() -> EvalWeights:
    """The fitted weights shipped with meeple, or the hand-written ones without them."""
    data = _weights_file()
    if data is not None:
        weights = data.get("weights")
        if isinstance(weights, dict) and set(weights) == set(FEATURES):
            return EvalWeights(
                tuple(round(float(weights[f])) for f in FEATURES),
                str(data.get("provenance", "fitted")),
            )
    return EvalWeights(tuple(int(w) for w in HAND_WEIGHTS))


@cache
def learned_weights() -> EvalWeights | None:
    """The learned evaluation's weights (:data:`FEATURES` then
    :data:`LEARNED_FEATURES`) shipped with meeple, if they are."""
    try:
        text = resources.files("meeple.ai").joinpath("data/santorini_eval_learned.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    data = json.loads(text)
    weights = data.get("weights")
    names = (*FEATURES, *LEARNED_FEATURES)
    if not isinstance(weights, dict) or set(weights) != set(names):
        return None
    return EvalWeights(
        tuple(round(float(weights[f])) for f in names), str(data.get("provenance", "fitted"))
    )


@cache
def table_weights() -> EvalWeights | None:
    """The table evaluation's weights (:data:`FEATURES`, :data:`LEARNED_FEATURES`, then
    :data:`TABLE_FEATURES`) shipped with meeple, if they are."""
    try:
        text = resources.files("meeple.ai").joinpath("data/santorini_eval_tables.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    data = json.loads(text)
    weights = data.get("weights")
    names = (*FEATURES, *LEARNED_FEATURES, *TABLE_FEATURES)
    if not isinstance(weights, dict) or set(weights) != set(names):
        return None
    return EvalWeights(
        tuple(round(float(weights[f])) for f in names), str(data.get("provenance", "fitted"))
    )


def play_weights() -> EvalWeights:
    """The weights the search plays with when it is given none: the table evaluation
    when meeple ships it, else the learned one (each beat the one before at equal time,
    see ``docs/santorini-engine.md``), else :func:`default_weights`."""
    for found in (table_weights(), learned_weights()):
        if found is not None:
            return found
    return default_weights()


def table_seat_features(h: Sequence[int], wk: Sequence[int], seat: int) -> list[int]:
    """The :data:`TABLE_FEATURES` of ``seat`` in a two-player position with all four
    workers (``wk``) on the board; ``h`` heights, 4 or more a dome."""
    f = [0] * len(TABLE_FEATURES)
    mine = (wk[2 * seat], wk[2 * seat + 1])
    theirs = (wk[2 - 2 * seat], wk[3 - 2 * seat])
    nb = 18
    threats: set[int] = set()
    pre: set[int] = set()
    reach2: set[int] = set()
    for src in mine:
        hs = h[src]
        if hs < 3:
            f[3 * _CLASS[src] + hs] += 1
        for d in NEIGHBOURS[src]:
            hd = h[d]
            if d in wk:
                f[nb + 5] += 1
            elif hd >= 4:
                f[nb + 4] += 1
            elif hd < hs:
                f[nb] += 1
            elif hd == hs:
                f[nb + 1] += 1
            elif hd == hs + 1:
                f[nb + 2] += 1
            else:
                f[nb + 3] += 1
            if d in wk or hd >= 4:
                continue
            if hs == 2 and hd == 3:
                threats.add(d)
            if hd == 2 and hs >= 1:
                reach2.add(d)
                if hs == 1 and any(h[e] == 3 and e not in wk for e in NEIGHBOURS[d]):
                    pre.add(d)
    near_them = set(NEIGHBOURS[theirs[0]]) | set(NEIGHBOURS[theirs[1]])
    f[nb + 6] = len(pre)
    f[nb + 7] = 1 if len(threats) >= 2 else 0
    f[nb + 8] = len(threats - near_them)
    f[nb + 9] = len(reach2)
    return f


def learned_seat_features(h: Sequence[int], wk: Sequence[int], seat: int) -> list[int]:
    """The :data:`LEARNED_FEATURES` of ``seat`` in a two-player position with all four
    workers (``wk``) on the board; ``h`` heights, 4 or more a dome."""
    mine = (wk[2 * seat], wk[2 * seat + 1])
    theirs = (wk[2 - 2 * seat], wk[3 - 2 * seat])
    near_them = set(NEIGHBOURS[theirs[0]]) | set(NEIGHBOURS[theirs[1]])
    own = [0, 0, 0]
    cramped = 0
    domes: set[int] = set()
    seen: set[int] = set()
    for src in mine:
        top = h[src] + 1
        steps = 0
        for d in NEIGHBOURS[src]:
            hd = h[d]
            if hd >= 4:
                domes.add(d)
                continue
            if d in wk:
                continue
            if hd <= top:
                steps += 1
            if 1 <= hd <= 3 and d not in near_them and d not in seen:
                own[hd - 1] += 1
            seen.add(d)
        if steps <= 1:
            cramped += 1
    a, b = mine
    apart = max(abs(a // 5 - b // 5), abs(a % 5 - b % 5))
    return [*own, cramped, apart, len(domes)]


def seat_features(
    h: Sequence[int], workers: Sequence[int | None], seat: int, turn: int
) -> list[int]:
    """The features of ``seat`` (see :data:`FEATURES`), ``turn`` the side to move."""
    f = [0] * _N
    mine = (workers[2 * seat], workers[2 * seat + 1])
    threats: set[int] = set()
    setups: set[int] = set()
    for src in mine:
        if src is None:
            continue
        hs = h[src]
        if hs == 1:
            f[0] += 1
        elif hs == 2:
            f[1] += 1
        f[7] += _CENTRE[src]
        top = hs + 1
        for d in NEIGHBOURS[src]:
            hd = h[d]
            if hd > top or hd == 4 or d in workers:
                continue
            f[2] += 1
            if hd == top and hd < 3:
                f[3] += 1
            if hs == 2:
                if hd == 3:
                    threats.add(d)
                elif hd == 2:
                    setups.add(d)
    if threats:
        f[4 if seat == turn else 5] = len(threats)
    f[6] = len(setups)
    # guard: the opponents' level-2 workers' hot cells next to our workers
    guarded: set[int] = set()
    for w, at in enumerate(workers):
        if at is None or w // 2 == seat or h[at] != 2:
            continue
        for d in NEIGHBOURS[at]:
            if h[d] in (2, 3) and d not in workers:
                for src in mine:
                    if src is not None and d in NEIGHBOURS[src]:
                        guarded.add(d)
    f[8] = len(guarded)
    f[9] = 1 if seat == turn else 0
    return f


def evaluate_mortal(
    h: Sequence[int], wk: Sequence[int], root: int, turn: int, wt: Sequence[int]
) -> int:
    """:func:`evaluate_board` for two players with all four workers on the board, in
    one pass (the fast twin's leaves); the agreement is tested."""
    w_l1, w_l2, w_mob, w_climb, w_tm, w_tw, w_setup, w_centre, w_guard, w_tempo = wt[:_N]
    total = 0
    if len(wt) > _N:
        ext = wt[_N:_NL]
        tab = wt[_NL:]
        for seat in (0, 1):
            v = sum(a * b for a, b in zip(ext, learned_seat_features(h, wk, seat), strict=True))
            if tab:
                v += sum(a * b for a, b in zip(tab, table_seat_features(h, wk, seat), strict=True))
            total += v if seat == root else -v
    for seat in (0, 1):
        a, b = wk[2 * seat], wk[2 * seat + 1]
        v = 0
        threats: set[int] = set()
        setups: set[int] = set()
        for src in (a, b):
            hs = h[src]
            v += _CENTRE[src] * w_centre
            if hs == 1:
                v += w_l1
            elif hs == 2:
                v += w_l2
            top = hs + 1
            for d in NEIGHBOURS[src]:
                hd = h[d]
                if hd > top or hd == 4 or d in wk:
                    continue
                v += w_mob
                if hd == top and hd < 3:
                    v += w_climb
                if hs == 2:
                    if hd == 3:
                        threats.add(d)
                    elif hd == 2:
                        setups.add(d)
        if threats:
            v += len(threats) * (w_tm if seat == turn else w_tw)
        v += len(setups) * w_setup
        na, nb = NEIGHBOURS[a], NEIGHBOURS[b]
        guarded = 0
        for o in (wk[2 - 2 * seat], wk[3 - 2 * seat]):
            if h[o] != 2:
                continue
            for d in NEIGHBOURS[o]:
                if (h[d] == 2 or h[d] == 3) and d not in wk and (d in na or d in nb):
                    guarded += 1
        if guarded:
            # a cell next to both opponent workers counts once
            o1, o2 = wk[2 - 2 * seat], wk[3 - 2 * seat]
            if h[o1] == 2 and h[o2] == 2:
                guarded -= sum(
                    1
                    for d in NEIGHBOURS[o1]
                    if d in NEIGHBOURS[o2]
                    and (h[d] == 2 or h[d] == 3)
                    and d not in wk
                    and (d in na or d in nb)
                )
            v += guarded * w_guard
        if seat == turn:
            v += w_tempo
        total += v if seat == root else -v
    return total


def evaluate_board(
    h: Sequence[int],
    workers: Sequence[int | None],
    root: int,
    turn: int,
    players: int,
    weights: EvalWeights,
    alive: Sequence[bool] | None = None,
) -> int:
    """The value of a position for ``root``: its weighted features minus those of its
    strongest living opponent. ``h`` heights (4 a dome), ``workers`` by worker number.
    The learned evaluation's terms count between two players with four workers."""
    wt = weights.weights[:_N]
    if len(weights.weights) > _N and players == 2 and None not in workers[:4]:
        wk = [w for w in workers[:4] if w is not None]
        return evaluate_mortal(h, wk, root, turn, weights.weights)
    mine = sum(a * b for a, b in zip(wt, seat_features(h, workers, root, turn), strict=True))
    best_other: int | None = None
    for seat in range(players):
        if seat == root or (alive is not None and not alive[seat]):
            continue
        v = sum(a * b for a, b in zip(wt, seat_features(h, workers, seat, turn), strict=True))
        if best_other is None or v > best_other:
            best_other = v
    return mine - (best_other or 0)


# ---------------------------------------------------------------- games with gods

GOD_FEATURES: tuple[str, ...] = (*FEATURES, "locked_up", "chronus_towers", "double_move")
"""The features of a seat in a game with gods (two players, the god twin's nodes):
:data:`FEATURES`, with ``threat_to_move``/``threat_waiting`` counting the cells the
seat's god wins on (Pan's drops, Apollo's and Minotaur's steps through an opponent; not
where Hera, Hypnus, Hades or Athena's flag forbid it), and:

- ``locked_up``: the opponent is Athena and moved up last turn (this seat cannot climb);
- ``chronus_towers``: complete towers on the board when the seat is Chronus;
- ``double_move``: free level-3 cells an Artemis or Triton worker could reach by a
  second move through a level-2 cell (a win the single-step threats do not count).
"""

_NG = len(GOD_FEATURES)
_THREAT_TO_MOVE, _THREAT_WAITING = 4, 5


def god_threats(
    h: Sequence[int], wk: Sequence[int], seat: int, mu: int, gods: Sequence[str | None]
) -> tuple[int, int]:
    """The cells ``seat`` could win on by moving one worker (its god and its opponent's
    counted, Athena's flag as it stands), and the level-3 cells an Artemis or Triton
    worker reaches by a second move through a level-2 cell."""
    god, ogod = gods[seat], gods[1 - seat]
    no_up = ogod == "Athena" and bool(mu >> (1 - seat) & 1)
    pan = god == "Pan" and ogod != "Hades"
    hera = ogod == "Hera"
    force = 1 if god == "Apollo" else 2 if god == "Minotaur" else 0
    double = god in ("Artemis", "Triton") and not no_up
    wins: set[int] = set()
    twice: set[int] = set()
    for i in (2 * seat, 2 * seat + 1):
        src = wk[i]
        hs = h[src]
        if ogod == "Hypnus" and hs > h[wk[i ^ 1]]:
            continue
        for d in NEIGHBOURS[src]:
            hd = h[d]
            if hd >= 4:
                continue
            if (hd == 3 and hs == 2 and not no_up) or (pan and hs - hd >= 2):
                if hera and d in _EDGE:
                    continue
                if d in wk:
                    v = wk.index(d)
                    if v >> 1 == seat or not force:
                        continue
                    if force == 2:
                        to = _behind(src, d)
                        if to < 0 or h[to] >= 4 or to in wk:
                            continue
                wins.add(d)
            elif double and hd == 2 and hs >= 1 and d not in wk:
                if god == "Triton" and d not in _EDGE:
                    continue
                for e in NEIGHBOURS[d]:
                    if e != src and h[e] == 3 and e not in wk and not (hera and e in _EDGE):
                        twice.add(e)
    return len(wins), len(twice - wins)


def _behind(src: int, dst: int) -> int:
    r3, k3 = 2 * (dst // 5) - src // 5, 2 * (dst % 5) - src % 5
    return r3 * 5 + k3 if 0 <= r3 < 5 and 0 <= k3 < 5 else -1


_EDGE = frozenset(c for c in range(25) if c // 5 in (0, 4) or c % 5 in (0, 4))


def god_seat_features(
    h: Sequence[int],
    wk: Sequence[int],
    seat: int,
    turn: int,
    mu: int,
    gods: Sequence[str | None],
) -> list[int]:
    """The features of ``seat`` (:data:`GOD_FEATURES`) in a two-player game with gods;
    ``h`` the god twin's cell codes (≥ 4 a dome), ``mu`` its moved-up bits."""
    base = seat_features(h, wk, seat, turn)
    wins, twice = god_threats(h, wk, seat, mu, gods)
    base[_THREAT_TO_MOVE] = wins if seat == turn else 0
    base[_THREAT_WAITING] = wins if seat != turn else 0
    locked = 1 if gods[1 - seat] == "Athena" and mu >> (1 - seat) & 1 else 0
    towers = sum(1 for x in h if x == 4) if gods[seat] == "Chronus" else 0
    return [*base, locked, towers, twice]


@dataclass(frozen=True, slots=True)
class GodWeights:
    """One integer weight per feature of :data:`GOD_FEATURES`, and where they came from."""

    weights: tuple[int, ...]
    provenance: str


@cache
def god_weights() -> GodWeights | None:
    """The weights fitted on games with gods, if meeple ships them."""
    try:
        text = resources.files("meeple.ai").joinpath("data/santorini_eval_gods.json").read_text()
    except (FileNotFoundError, OSError):
        return None
    data = json.loads(text)
    weights = data.get("weights")
    if not isinstance(weights, dict) or set(weights) != set(GOD_FEATURES):
        return None
    return GodWeights(
        tuple(round(float(weights[f])) for f in GOD_FEATURES), str(data.get("provenance"))
    )


def evaluate_gods(
    h: Sequence[int],
    wk: Sequence[int],
    root: int,
    turn: int,
    mu: int,
    gods: Sequence[str | None],
    wt: Sequence[int],
) -> int:
    """The value for ``root`` of a god-twin position: the weighted :data:`GOD_FEATURES`
    of ``root`` minus its opponent's."""
    base = list(wt[:_N])
    w_tm, w_tw = base[_THREAT_TO_MOVE], base[_THREAT_WAITING]
    base[_THREAT_TO_MOVE] = base[_THREAT_WAITING] = 0
    total = evaluate_mortal(h, wk, root, turn, base)
    w_lock, w_towers, w_twice = wt[_N], wt[_N + 1], wt[_N + 2]
    for seat in (0, 1):
        wins, twice = god_threats(h, wk, seat, mu, gods)
        v = wins * (w_tm if seat == turn else w_tw) + twice * w_twice
        if gods[1 - seat] == "Athena" and mu >> (1 - seat) & 1:
            v += w_lock
        if gods[seat] == "Chronus":
            v += w_towers * sum(1 for x in h if x == 4)
        total += v if seat == root else -v
    return total

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
    "HAND_WEIGHTS",
    "EvalWeights",
    "default_weights",
    "evaluate_board",
    "evaluate_mortal",
    "seat_features",
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

_CENTRE = tuple(2 - max(abs(c // 5 - 2), abs(c % 5 - 2)) for c in range(25))
_N = len(FEATURES)


@dataclass(frozen=True, slots=True)
class EvalWeights:
    """One integer weight per feature (:data:`FEATURES`), and where they came from."""

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
    w_l1, w_l2, w_mob, w_climb, w_tm, w_tw, w_setup, w_centre, w_guard, w_tempo = wt
    total = 0
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
    strongest living opponent. ``h`` heights (4 a dome), ``workers`` by worker number."""
    wt = weights.weights
    mine = sum(a * b for a, b in zip(wt, seat_features(h, workers, root, turn), strict=True))
    best_other: int | None = None
    for seat in range(players):
        if seat == root or (alive is not None and not alive[seat]):
            continue
        v = sum(a * b for a, b in zip(wt, seat_features(h, workers, seat, turn), strict=True))
        if best_other is None or v > best_other:
            best_other = v
    return mine - (best_other or 0)

"""Santorini players: a two-ply search player and a random player, for every phase.

Both are pure functions of a :class:`~meeple.games.santorini.GameState` (plus an
injected ``random.Random``) to the next action for the seat on turn, so a bot calls
them once per step: mid-turn the search plans the rest of the turn again from the
current state and returns its first step.

The search (:func:`search_action`):

- set-up: offers and takes gods by a fixed preference (:data:`GOD_PREFERENCE`), names
  itself the starter, and places its workers on free cells nearest the centre;
- play: expands every way to complete its turn (:func:`~meeple.games.santorini.turns`,
  gods included); takes a winning turn at once; otherwise ranks the turns by the static
  evaluation, keeps the best ``width`` and for each searches every reply of the next
  player (the second ply), choosing the turn whose worst reply is best (alpha-beta on
  the second ply). With three players the reply is the next player's (paranoid).

The evaluation (:func:`evaluate`, from one seat's view): worker heights (level 2
counts a lot more than 1), mobility (neighbouring cells a worker could step to),
threats (a worker on level 2 next to a free level-3 cell wins on its next move — a
large bonus when that player moves next, a smaller one otherwise), closeness to the
centre. Everything else the gods do is seen through the turns the engine generates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from meeple.games.santorini import (
    CELLS,
    NEIGHBOURS,
    Action,
    ChooseGod,
    ChooseStarter,
    GameState,
    Move,
    MoveStep,
    OfferGod,
    Phase,
    PlaceWorker,
    available_gods,
    legal_actions,
    turns,
)

if TYPE_CHECKING:
    from random import Random

__all__ = [
    "GOD_PREFERENCE",
    "SearchStats",
    "evaluate",
    "random_action",
    "search_action",
]

WIN = 1_000_000

GOD_PREFERENCE: tuple[str, ...] = (
    "Athena",
    "Minotaur",
    "Artemis",
    "Apollo",
    "Pan",
    "Prometheus",
    "Demeter",
    "Atlas",
    "Hephaestus",
    "Triton",
    "Hestia",
    "Zeus",
    "Limus",
    "Hypnus",
    "Hera",
    "Hades",
    "Chronus",
)
"""The order in which the search player offers and takes gods (strongest first)."""

_HEIGHT = (0, 30, 90, 0)  # a worker standing on level 3 has won already
_CENTRE = tuple(4 - max(abs(c // 5 - 2), abs(c % 5 - 2)) * 2 for c in CELLS)


@dataclass
class SearchStats:
    """Counters a search fills in, for benchmarks: states evaluated and turns expanded."""

    nodes: int = 0
    evaluations: int = 0


def random_action(s: GameState, rng: Random) -> Action:
    """A uniformly random legal action for the seat on turn (any phase)."""
    actions = legal_actions(s)
    if not actions:
        raise ValueError("no legal action: the game is over")
    return rng.choice(actions)


def _seat_score(s: GameState, seat: int, occ: list[int | None], to_move: int) -> int:
    levels, domes = s.levels, s.domes
    score = 0
    for w in (2 * seat, 2 * seat + 1):
        at = s.workers[w]
        if at is None:
            continue
        here = levels[at]
        score += _HEIGHT[here] + _CENTRE[at]
        top = here + 1
        for d in NEIGHBOURS[at]:
            if domes[d] or occ[d] is not None:
                continue
            lv = levels[d]
            if lv <= top:
                score += 4 + 3 * lv
                if here == 2 and lv == 3:
                    score += 600 if seat == to_move else 120
    return score


def evaluate(s: GameState, seat: int) -> int:
    """How good ``s`` is for ``seat``: ±WIN when over, else its score minus the best
    opponent's (see the module docstring)."""
    if s.phase is Phase.OVER:
        return WIN if s.winner == seat else -WIN
    if not s.alive[seat]:
        return -WIN
    occ = s.occupancy()
    to_move = s.turn
    mine = _seat_score(s, seat, occ, to_move)
    others = [
        _seat_score(s, other, occ, to_move)
        for other in range(s.players)
        if other != seat and s.alive[other]
    ]
    return mine - max(others, default=0)


def _setup_action(s: GameState, rng: Random) -> Action:
    me = s.turn
    if s.phase in (Phase.POOL, Phase.GODS):
        options = available_gods(s)
        ranked = sorted(
            options,
            key=lambda g: GOD_PREFERENCE.index(g) if g in GOD_PREFERENCE else len(GOD_PREFERENCE),
        )
        god = ranked[0]
        return OfferGod(me, god) if s.phase is Phase.POOL else ChooseGod(me, god)
    if s.phase is Phase.STARTER:
        return ChooseStarter(me, me)
    occ = s.occupancy()
    free = [c for c in CELLS if occ[c] is None]
    best = max(_CENTRE[c] for c in free)
    choices = [c for c in free if _CENTRE[c] == best]
    actions = legal_actions(s)
    assert isinstance(actions[0], PlaceWorker)
    return PlaceWorker(me, rng.choice(choices), actions[0].sex)


def search_action(
    s: GameState, rng: Random, *, width: int = 8, stats: SearchStats | None = None
) -> Action:
    """The search player's next action for the seat on turn (any phase).

    ``width`` is how many of its own turns (best first by the evaluation) get the
    second ply; ``rng`` only breaks ties. Raises ValueError when the game is over."""
    if s.phase is Phase.OVER:
        raise ValueError("no legal action: the game is over")
    if s.phase is not Phase.PLAY:
        return _setup_action(s, rng)
    me = s.turn
    stats = stats if stats is not None else SearchStats()
    mine = list(turns(s))
    if s.steps:
        # Mid-turn: never plan a move back onto a cell this worker left this turn, so a
        # bot that asks again after each step always makes progress (Triton could
        # otherwise shuttle between two perimeter cells for ever).
        left = {x.src for x in s.steps if isinstance(x, MoveStep)}
        onward = [t for t in mine if not any(isinstance(a, Move) and a.dst in left for a in t[0])]
        mine = onward or mine
    stats.nodes += len(mine)
    if not mine:
        actions = legal_actions(s)
        if not actions:
            raise ValueError("no legal action")
        return actions[0]
    rng.shuffle(mine)  # ties go to a random turn, not always the first generated
    scored = []
    for route, after in mine:
        value = evaluate(after, me)
        stats.evaluations += 1
        if value >= WIN:
            return route[0]
        scored.append((value, route, after))
    scored.sort(key=lambda x: x[0], reverse=True)
    best_value = -WIN - 1
    best_route = scored[0][1]
    for _static, route, after in scored[:width]:
        if after.phase is Phase.OVER:
            value = evaluate(after, me)
        else:
            value = WIN
            for _reply, reply_state in turns(after):
                stats.nodes += 1
                v = evaluate(reply_state, me)
                stats.evaluations += 1
                if v < value:
                    value = v
                    if value <= best_value:
                        break  # alpha cut: this turn is no better than one we have
        if value > best_value:
            best_value, best_route = value, route
    return best_route[0]

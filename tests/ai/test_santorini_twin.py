"""The fast twin of the rules with gods gives exactly the engine's turns (and its
"can win at once" is never wrong).

Positions come two ways: random boards drawn by hypothesis (any heights, domes on any
level as Atlas leaves them, complete towers for Chronus, workers anywhere, Athena's
flags either way) and positions reached by random whole turns of a random god pair.
For each, the twin's turns and the engine's :func:`turns` must end in the same set of
positions (workers, heights, domes, winner, who moved up); every twin route replays
through the engine's checked :func:`advance` to its end; the incremental key is the
key computed afresh. A turn already begun is checked too: the engine's ways to finish
it are among the twin's ends, and every twin turn that begins with those steps ends
where the engine says it can.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.santorini_eval import GOD_FEATURES, evaluate_gods, god_seat_features, god_threats
from meeple.ai.santorini_twin import GodTwin, height_codes
from meeple.games.santorini import (
    CELLS,
    GODS,
    Build,
    ChooseGod,
    ChooseStarter,
    GameState,
    Move,
    OfferGod,
    Phase,
    PlaceWorker,
    Rules,
    advance,
    new_game,
    turns,
)

GOD_NAMES = sorted(GODS)
SCALE = int(os.environ.get("MEEPLE_TWIN_SCALE", "1"))
"""Examples times this: ``MEEPLE_TWIN_SCALE=30 pytest --timeout 0 -n 0 tests/ai/
test_santorini_twin.py`` is a long run for a change to the twin."""

End = tuple[tuple[int, ...], tuple[int | None, ...], int, int]


def _mu(moved_up: tuple[bool, ...]) -> int:
    return (1 if moved_up[0] else 0) | (2 if moved_up[1] else 0)


def _engine_end(after: GameState) -> End:
    winner = after.winner if after.phase is Phase.OVER else -1
    assert winner is not None
    return (height_codes(after), after.workers, winner, _mu(after.moved_up))


def _twin_end(twin: GodTwin, child: tuple) -> End:  # type: ignore[type-arg]
    """A twin child as the engine would end it: a child whose side to move has no turn
    is the engine's elimination (that player's workers leave, the mover wins)."""
    _k, h, wk, turn, winner, mu = child
    if winner == -1 and not twin.children(child):
        gone = tuple(None if w // 2 == turn else at for w, at in enumerate(wk))
        return (h, gone, 1 - turn, mu)
    return (h, tuple(wk), winner, mu)


def _state(
    levels: list[int],
    domes: list[bool],
    workers: tuple[int, ...],
    gods: tuple[str, str],
    turn: int,
    moved_up: tuple[bool, bool],
) -> GameState:
    return GameState(
        rules=Rules(players=2, gods=True),
        challenger=1,
        phase=Phase.PLAY,
        turn=turn,
        gods=gods,
        starter=0,
        levels=tuple(levels),
        domes=tuple(domes),
        workers=workers,
        alive=(True, True),
        moved_up=moved_up,
    )


@st.composite
def boards(draw: st.DrawFn) -> GameState:
    """A random position: heights, domes (on any level), four workers, a god pair."""
    gods = tuple(draw(st.lists(st.sampled_from(GOD_NAMES), min_size=2, max_size=2, unique=True)))
    cells = draw(st.lists(st.integers(0, 24), min_size=4, max_size=4, unique=True))
    levels = draw(st.lists(st.integers(0, 3), min_size=25, max_size=25))
    domes = draw(st.lists(st.integers(0, 9).map(lambda x: x == 0), min_size=25, max_size=25))
    towers = draw(st.integers(0, 5))  # Chronus: complete towers, up to his win
    free = [c for c in CELLS if c not in cells]
    for c in draw(st.permutations(free))[:towers]:
        levels[c], domes[c] = 3, True
    for c in cells:
        domes[c] = False
    return _state(
        levels,
        domes,
        tuple(cells),
        (gods[0], gods[1]),
        draw(st.integers(0, 1)),
        (draw(st.booleans()), draw(st.booleans())),
    )


def _played(seed: int, gods: tuple[str, str]) -> GameState | None:
    """A position reached by random whole turns from random placements (None if the
    game ended on the way)."""
    rng = random.Random(seed)
    s = new_game(Rules(players=2, gods=True), challenger=1)
    for g in gods:
        s = advance(s, OfferGod(1, g))[0]
    for seat in range(2):
        s = advance(s, ChooseGod(seat, gods[seat]))[0]
    s = advance(s, ChooseStarter(1, rng.randrange(2)))[0]
    while s.phase is Phase.PLACE:
        occ = s.occupancy()
        s = advance(s, PlaceWorker(s.turn, rng.choice([c for c in CELLS if occ[c] is None])))[0]
    for _ in range(rng.randrange(0, 16)):
        options = list(turns(s))
        if not options:
            return None
        _route, after = rng.choice(options)
        if after.phase is not Phase.PLAY:
            return None
        s = after
    return s


def _check(s: GameState, replays: int = 12) -> None:
    assert GodTwin.covers(s)
    twin = GodTwin(s.gods)
    node = twin.node(s)
    assert node[0] == twin.key(node[1], node[2], node[3], node[5])
    children = twin.children(node)
    ends = [_twin_end(twin, child) for _move, child in children]
    engine = {_engine_end(after) for _route, after in turns(s)}
    assert len(ends) == len(set(ends)), "the twin gives a position twice"
    me = s.turn
    # (The mover's moved-up flag is its route's for a Triton walk: only Athena's power
    # reads the flag, of Athena's own turn.)
    assert _strip(engine, s) == _strip(set(ends), s)
    # The search's shortcut: "the side to move wins at once" only when it does.
    if twin.can_win(node[1], node[2], me, node[5]):
        assert any(child[4] == me for _m, child in children)
    for move, child in children[:replays]:
        route = twin.route(move, me, child[4] != -1)
        after = s
        for action in route:
            after = advance(after, action)[0]
        assert _engine_end(after) == _twin_end(twin, child)
        if child[4] == -1:
            assert child[0] == twin.key(child[1], child[2], child[3], child[5])


@settings(max_examples=40 * SCALE, deadline=None)
@given(boards())
def test_twin_gives_the_engines_turns_on_random_boards(s: GameState) -> None:
    _check(s)


@settings(max_examples=12 * SCALE, deadline=None)
@given(
    st.integers(0, 10**9),
    st.lists(st.sampled_from(GOD_NAMES), min_size=2, max_size=2, unique=True),
    st.booleans(),
)
def test_twin_gives_the_engines_turns_in_played_positions(
    seed: int, gods: list[str], athena_flag: bool
) -> None:
    s = _played(seed, (gods[0], gods[1]))
    if s is None:
        return
    if athena_flag:
        s = replace(s, moved_up=(True, True))
    _check(s)


@settings(max_examples=20 * SCALE, deadline=None)
@given(boards(), st.integers(0, 10**6))
def test_a_turn_begun_ends_where_the_twin_says(s: GameState, pick: int) -> None:
    twin = GodTwin(s.gods)
    children = twin.children(twin.node(s))
    if not children:
        return
    move, child = children[pick % len(children)]
    route = twin.route(move, s.turn, child[4] != -1)
    steps = [a for a in route if isinstance(a, Move | Build)]
    cut = 1 + pick % max(1, len(steps) - 1) if len(steps) > 1 else 0
    if cut == 0:
        return
    mid = s
    for action in route[:cut]:
        mid = advance(mid, action)[0]
    if mid.phase is not Phase.PLAY or mid.turn != s.turn:
        return
    prefix = route[:cut]
    all_ends = {_twin_end(twin, c) for _m, c in children}
    by_prefix = {
        _twin_end(twin, c) for m, c in children if twin.route(m, s.turn, c[4] != -1)[:cut] == prefix
    }
    from_mid = {_engine_end(after) for _route, after in turns(mid)}
    assert _strip(by_prefix, s) <= _strip(from_mid, s)
    assert _strip(from_mid, s) <= _strip(all_ends, s)


def _strip(ends: set[End], s: GameState) -> set[End]:
    """Ends with the mover's moved-up flag dropped when the mover is Triton (a walk that
    goes up and down again reaches the same position with either flag; the engine and
    the twin each keep one route's)."""
    if s.gods[s.turn] != "Triton":
        return ends
    bit = 1 << s.turn
    return {(h, w, win, mu & ~bit) for h, w, win, mu in ends}


@settings(max_examples=25 * SCALE, deadline=None)
@given(boards(), st.lists(st.integers(-300, 300), min_size=13, max_size=13))
def test_the_god_evaluation_is_its_weighted_features(s: GameState, weights: list[int]) -> None:
    twin = GodTwin(s.gods)
    _k, h, wk, turn, _w, mu = twin.node(s)
    assert len(weights) == len(GOD_FEATURES)
    for root in (0, 1):
        mine = god_seat_features(h, wk, root, turn, mu, s.gods)
        theirs = god_seat_features(h, wk, 1 - root, turn, mu, s.gods)
        expected = sum(w * (a - b) for w, a, b in zip(weights, mine, theirs, strict=True))
        assert evaluate_gods(h, wk, root, turn, mu, s.gods, weights) == expected


@settings(max_examples=25 * SCALE, deadline=None)
@given(boards())
def test_god_threats_are_wins_on_the_next_move(s: GameState) -> None:
    """The evaluation's threats of the side to move are the cells it wins on at once
    (Artemis and Triton may also win on a second move: at least as many then)."""
    twin = GodTwin(s.gods)
    node = twin.node(s)
    wins, _twice = god_threats(node[1], node[2], s.turn, node[5], s.gods)
    routes = [twin.route(m, s.turn, True) for m, c in twin.children(node) if c[4] == s.turn]
    won_on = {r[-1].dst for r in routes if isinstance(r[-1], Move)}  # not Chronus' towers
    if s.gods[s.turn] in ("Artemis", "Triton"):
        assert wins <= len(won_on)
    else:
        assert wins == len(won_on)

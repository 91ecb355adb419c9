"""Property tests: random games with random gods end, stay legal, undo and replay exactly."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.santorini import (
    CELLS,
    MAX_LEVEL,
    Build,
    Game,
    GameState,
    Move,
    Phase,
    Rules,
    Undo,
    advance,
    buildable_cells,
    reachable_cells,
    replay,
    turns,
)

MAX_ACTIONS = 1500


def _check_invariants(s: GameState) -> None:
    assert all(0 <= lv <= MAX_LEVEL for lv in s.levels)
    placed = [c for c in s.workers if c is not None]
    assert len(placed) == len(set(placed)), "two workers on one cell"
    assert not any(s.domes[c] for c in placed), "a worker on a dome"
    for seat in range(s.players):
        if not s.alive[seat]:
            assert s.workers[2 * seat] is None
            assert s.workers[2 * seat + 1] is None
    if s.phase is Phase.OVER:
        assert s.winner is not None
        assert s.alive[s.winner]


def _check_queries(s: GameState, offered: list[object]) -> None:
    """reachable/buildable cells are exactly the offered moves and builds."""
    me = s.turn
    moves = {(a.src, a.dst) for a in offered if isinstance(a, Move)}
    builds = {(a.src, a.dst, a.level) for a in offered if isinstance(a, Build)}
    assert moves == {(w, d) for w, ds in reachable_cells(s, me).items() for d in ds}
    assert builds == {
        (w, c, lv)
        for w, cells in buildable_cells(s, me).items()
        for c, lvs in cells.items()
        for lv in lvs
    }


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.sampled_from([2, 3]),
    gods=st.booleans(),
    pool=st.booleans(),
)
def test_random_games_end_legally_and_undo_and_replay_exactly(
    seed: int, players: int, gods: bool, pool: bool
) -> None:
    """Random play with random gods always ends; every state is legal; every offered
    action is accepted; undo restores the state exactly; the log replays the game."""
    rng = random.Random(seed)
    game = Game(
        Rules(players=players, gods=gods, challenger_picks_pool=pool),
        challenger=rng.randrange(players),
    )
    turn_start = game.state
    for _ in range(MAX_ACTIONS):
        if game.is_over:
            break
        s = game.state
        if not s.steps:
            turn_start = s
        actions = game.legal_actions()
        assert actions, f"nothing to do in {s.phase}"
        if s.phase is Phase.PLAY:
            _check_queries(s, list(actions))
        action = rng.choice(actions)
        game.apply(action)
        _check_invariants(game.state)
        if isinstance(action, Move | Build) and game.can_undo(action.player) and rng.random() < 0.3:
            after = game.state
            if rng.random() < 0.3:
                game.apply(Undo(action.player, all=True))
                assert game.state == turn_start
                assert not game.can_undo(action.player)
            else:
                game.apply(Undo(action.player))
                assert game.state == s
                game.apply(action)
                assert game.state == after
    assert game.is_over, "the game did not end"
    again = replay(game.record())
    assert again.state == game.state
    assert again.log == game.log


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gods=st.booleans())
def test_every_generated_turn_replays_through_advance(seed: int, gods: bool) -> None:
    """turns() yields routes that advance() accepts step by step, ending in its state."""
    rng = random.Random(seed)
    game = Game(Rules(gods=gods), challenger=0)
    while not game.is_over and game.phase is not Phase.PLAY:
        game.apply(rng.choice(game.legal_actions()))
    for _ in range(rng.randrange(1, 12)):
        if game.is_over:
            break
        s = game.state
        generated = list(turns(s))
        assert generated
        for route, end in rng.sample(generated, min(5, len(generated))):
            cur = s
            for step in route:
                cur, _ = advance(cur, step)
            assert cur == end
        route, _ = rng.choice(generated)
        for step in route:
            game.apply(step)


def test_undo_all_returns_to_the_start_of_the_turn() -> None:
    """Undo with all=True after several steps restores the turn's first state."""
    rng = random.Random(7)
    game = Game(Rules(gods=False))
    while game.phase is not Phase.PLAY:
        game.apply(rng.choice(game.legal_actions()))
    start = game.state
    assert not game.can_undo(start.turn)
    move = next(a for a in game.legal_actions() if isinstance(a, Move))
    game.apply(move)
    build = next(a for a in game.legal_actions() if isinstance(a, Build))
    game.apply(build)
    events = game.apply(Undo(start.turn, all=True))
    assert game.state == start
    assert set(events[0].cells) >= {move.src, move.dst, build.dst}  # type: ignore[union-attr]
    assert len(CELLS) == 25

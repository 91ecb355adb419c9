"""The JSON record: random games (gods, undos, resignations, disconnects) replay exactly,
step by step; malformed or tampered records raise RecordError and nothing else."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games import records
from meeple.games.santorini import Build, Game, GameState, Lose, Move, Phase, Rules, Undo
from meeple.games.santorini.record import RecordError, cell_label, replay, to_record

MAX_ACTIONS = 600


def _live_game(
    seed: int, players: int, gods: bool, pool: bool, auto: bool, stop: int | None
) -> tuple[Game, list[GameState], int | None]:
    """A random game (undos included) and its state after each action; it may end in a
    resignation, or be cut short by a disconnect after ``stop`` actions."""
    rng = random.Random(seed)
    rules = Rules(players=players, gods=gods, challenger_picks_pool=pool, auto_eliminate=auto)
    game = Game(rules, challenger=rng.randrange(players))
    states = [game.state]
    for n in range(MAX_ACTIONS):
        if game.is_over:
            break
        if stop is not None and n >= stop:
            return game, states, game.turn
        actions = game.legal_actions()
        turn = game.turn
        assert turn is not None
        if game.phase is Phase.PLAY and (not actions or rng.random() < 0.02):
            # Lose is always open in play, and the only way on for a player who cannot
            # complete a turn at a table without auto-elimination (legal_actions: []).
            action: Any = Lose(turn)
        elif game.can_undo(turn) and rng.random() < 0.15:
            action = Undo(turn, all=rng.random() < 0.3)
        else:
            action = rng.choice(actions)
        game.apply(action)
        states.append(game.state)
    return game, states, None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.sampled_from([2, 3]),
    gods=st.booleans(),
    pool=st.booleans(),
    auto=st.booleans(),
    stop=st.none() | st.integers(0, 80),
)
def test_random_games_replay_exactly_after_a_json_round_trip(
    seed: int, players: int, gods: bool, pool: bool, auto: bool, stop: int | None
) -> None:
    """Every step's game equals the live game at that point; the result is the live one."""
    game, states, dropped = _live_game(seed, players, gods, pool, auto, stop)
    names = [f"p{i}" for i in range(players)]
    record = json.loads(json.dumps(to_record(game, players=names, disconnected=dropped)))
    assert record["players"] == names
    steps = 0
    for step in replay(record):
        assert step.game.state == states[min(step.index, len(states) - 1)]
        assert step.text
        steps += 1
    assert steps == len(game.log) + 1 + (dropped is not None)
    assert step.game.state == game.state
    result = record["result"]
    if game.winner is not None:
        assert result["winners"] == [game.winner]
    elif dropped is not None:
        assert result["reason"] == "disconnect"
        assert dropped not in result["winners"]
    else:
        assert result is None


def test_an_abort_in_the_set_up_replays_with_no_winner() -> None:
    """Issue 34.4: a game aborted during the workers' placement is recorded with an
    ``abort`` last, replays, and has no winner (nothing may follow it either)."""
    game = Game(Rules(gods=False), challenger=0)
    rng = random.Random(3)
    while game.phase is not Phase.PLAY:
        game.apply(rng.choice(game.legal_actions()))
    record = json.loads(
        json.dumps(to_record(game, players=["a", "b"], disconnected=1, aborted=True))
    )
    assert record["actions"][-1] == {"type": "abort", "player": 1}
    assert record["result"] == {"reason": "aborted", "player": 1, "scores": [0, 0], "winners": []}
    steps = list(replay(record))
    assert steps[-1].text == "b aborted the game"
    record["actions"].append({"type": "pass", "player": 0})
    with pytest.raises(RecordError, match="disconnect"):
        replay(record)


def test_labels_read_like_a_move_list() -> None:
    """Moves and builds are labelled with A–E columns and 1–5 rows."""
    game = Game(Rules(gods=False), challenger=0)
    rng = random.Random(4)
    while not isinstance(game.log[-1] if game.log else None, Build):
        game.apply(rng.choice(game.legal_actions()))
    texts = [s.text for s in replay(to_record(game, players=["ann", "bob"]))]
    move = next(a for a in game.log if isinstance(a, Move))
    assert f"moves {cell_label(move.src)}→{cell_label(move.dst)}" in " ".join(texts)
    assert texts[-1].startswith(("ann builds", "bob builds"))
    assert cell_label(6) == "b2"


def test_nothing_may_follow_a_disconnect_and_versions_are_checked() -> None:
    game, _, dropped = _live_game(1, 2, True, True, False, 10)
    record = to_record(game, disconnected=dropped)
    record["actions"].append({"type": "pass", "player": 0})
    with pytest.raises(RecordError, match="disconnect"):
        replay(record)
    with pytest.raises(RecordError, match="version"):
        replay({**to_record(game), "version": 99})


def test_an_illegal_action_names_its_index() -> None:
    game, _, _ = _live_game(2, 2, False, False, False, None)
    record = to_record(game)
    record["actions"][3] = {"type": "move", "player": 0, "src": 0, "dst": 24}
    with pytest.raises(RecordError) as caught:
        list(replay(record))
    assert caught.value.index == 4


@pytest.fixture(scope="module")
def sample_records() -> list[dict[str, Any]]:
    out = []
    for seed, (players, gods, stop) in enumerate(
        [(2, True, None), (3, True, 40), (2, False, None)]
    ):
        game, _, dropped = _live_game(seed, players, gods, True, False, stop)
        out.append(json.loads(json.dumps(to_record(game, disconnected=dropped))))
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_records_raise_record_error_only(
    sample_records: list[dict[str, Any]], mutate: Any, data: st.DataObject
) -> None:
    """Any change to a record either still replays or raises RecordError."""
    record = mutate(data.draw(st.sampled_from(sample_records)), data)
    try:
        for _step in records.replay(record):
            pass
    except RecordError:
        pass

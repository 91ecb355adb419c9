"""The JSON record: random games (exchanges, skips, abandons) replay exactly, step by step;
malformed or tampered records raise RecordError and nothing else."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games import records
from meeple.games.spectrangle import ABANDON_REASONS, Abandon, Game, GameState, Place, Rules
from meeple.games.spectrangle.record import RecordError, replay, to_record


def _live_game(
    seed: int, players: int, abandon_at: int | None, limit: int | None
) -> tuple[Game, list[GameState]]:
    rng = random.Random(seed)
    game = Game([f"p{i}" for i in range(players)], rng, rules=Rules(skip_rounds_limit=limit))
    states = [game.state()]
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        if abandon_at is not None and len(game.log) >= abandon_at:
            # Issue 34.4, 34.9: a player leaves, resigns or aborts.
            game.apply(Abandon(rng.randrange(players), rng.choice(ABANDON_REASONS)))
        else:
            game.apply(rng.choice(game.legal_actions(turn)))
        states.append(game.state())
    return game, states


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(2, 4),
    abandon_at=st.none() | st.integers(0, 40),
    limit=st.none() | st.integers(1, 3),
)
def test_random_games_replay_exactly_after_a_json_round_trip(
    seed: int, players: int, abandon_at: int | None, limit: int | None
) -> None:
    """Every step's game equals the live game at that point; the result is the live one."""
    game, states = _live_game(seed, players, abandon_at, limit)
    record = json.loads(json.dumps(to_record(game, room=7)))
    assert record["room"] == 7
    for step in replay(record):
        assert step.game.state() == states[step.index]
        assert step.text
    assert step.index == len(game.log)
    assert step.game.result == game.result
    if game.result is not None:
        assert record["result"]["scores"] == list(game.result.scores)
        assert record["result"]["winners"] == list(game.result.winners)
    else:
        end = game.abandoned
        assert end is not None
        reason = {"left": "player-left"}.get(end.reason, end.reason)
        assert record["result"]["reason"] == reason
        assert record["result"]["player"] == end.player
        if end.reason == "resigned":  # the best of the others win
            others = [s for i, s in enumerate(game.scores) if i != end.player]
            winners = record["result"]["winners"]
            assert winners
            assert end.player not in winners
            assert all(game.scores[w] == max(others) for w in winners)
        else:
            assert record["result"]["winners"] == []


def test_labels_name_tile_field_and_points() -> None:
    game, _ = _live_game(5, 2, None, None)
    steps = list(replay(to_record(game)))
    place = next(i for i, a in enumerate(game.log, 1) if isinstance(a, Place))
    assert steps[place].text.startswith(f"p{game.log[place - 1].player} places ")
    assert " on " in steps[place].text
    assert steps[0].text == "deal"


def test_a_bag_that_is_not_the_tile_set_is_refused() -> None:
    game, _ = _live_game(6, 2, None, None)
    record = to_record(game)
    record["setup"]["bag"][0] = record["setup"]["bag"][1]
    with pytest.raises(RecordError, match="bag"):
        replay(record)


@pytest.fixture(scope="module")
def sample_records() -> list[dict[str, Any]]:
    return [
        json.loads(json.dumps(to_record(_live_game(seed, n, stop, None)[0])))
        for seed, (n, stop) in enumerate([(2, None), (3, 12), (4, None)])
    ]


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

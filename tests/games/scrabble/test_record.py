"""The JSON record: random games replay exactly, step by step, with or without the lexicon;
malformed or tampered records raise RecordError and nothing else."""

from __future__ import annotations

import json
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games import records
from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.game import (
    CLARKSON_VARIANT,
    CMPN402_VARIANT,
    STANDARD_VARIANT,
    TWENTE_VARIANT,
    ChallengeRule,
    Exchange,
    Game,
    GameState,
    Pass,
    Play,
    Variant,
)
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.record import RECORD_VERSION, RecordError, replay, resume, to_record
from meeple.games.scrabble.tiles import ENGLISH

VARIANTS = [
    STANDARD_VARIANT,
    TWENTE_VARIANT,
    CLARKSON_VARIANT,
    CMPN402_VARIANT,
    STANDARD_VARIANT.but(name="five", challenge=ChallengeRule.FIVE_POINT),
]


def _live_game(
    helpers: Any, seed: int, variant: Variant, players: int, moves: int
) -> tuple[Game, list[GameState]]:
    """A random game and its state after each action (index 0: the start)."""
    players = max(variant.min_players, min(players, variant.max_players))
    game = Game(
        [f"p{i}" for i in range(players)],
        Random(seed),
        variant=variant,
        lexicon=helpers.ParityLexicon(),
        first_player=seed % players,
    )
    states = [game.state()]

    def check(g: Game) -> None:
        assert len(g.log) == len(states)
        states.append(g.state())

    helpers.play_random_game(game, [seed * 1000 + i for i in range(moves)], check)
    return game, states


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    variant=st.sampled_from(VARIANTS),
    players=st.integers(1, 4),
    moves=st.integers(0, 150),
    with_lexicon=st.booleans(),
)
def test_random_games_replay_exactly_after_a_json_round_trip(
    helpers: Any, seed: int, variant: Variant, players: int, moves: int, with_lexicon: bool
) -> None:
    """Every step of the replay equals the live game at that point, the end included."""
    game, states = _live_game(helpers, seed, variant, players, moves)
    record = json.loads(json.dumps(to_record(game, id=seed)))
    assert record["id"] == seed
    assert record["version"] == RECORD_VERSION
    lexicon = helpers.ParityLexicon() if with_lexicon else None
    seen = 0
    for step in replay(record, lexicon=lexicon):
        assert step.game.state() == states[step.index]
        assert step.action == (None if step.index == 0 else record["actions"][step.index - 1])
        assert step.text
        seen += 1
    assert seen == len(game.log) + 1
    assert step.game.result == game.result
    assert step.game.events == game.events
    assert to_gcg(step.game) == to_gcg(game)
    assert to_record(step.game, id=seed) == record


def test_dispatch_and_load_read_the_record(helpers: Any) -> None:
    """records.load parses the JSON text; records.replay sends it to the Scrabble replay."""
    game, _ = _live_game(helpers, 3, STANDARD_VARIANT, 2, 60)
    text = json.dumps(to_record(game))
    steps = list(records.replay(records.load(text)))
    assert steps[-1].game.state() == game.state()
    assert steps[0].index == 0
    assert steps[0].action is None


def test_move_list_labels_hide_the_racks() -> None:
    """A play reads like a move list ("p0 8H CAT +10"); an exchange gives only the count."""
    game = Game(["ann", "bob"], Random(1), lexicon={"CAT"})
    rack = game.rack(0)
    game.apply(Exchange(0, rack[:3]))
    game.apply(Pass(1))
    texts = [s.text for s in replay(json.loads(json.dumps(to_record(game))))]
    assert texts == ["start", "ann exchanges 3", "bob passes"]
    assert rack[:3] not in " ".join(texts)


def test_play_text_names_square_word_and_score() -> None:
    """The label of a play is '<name> <GCG position> <word> +<score>'."""
    tiles = [t for t, n in sorted(ENGLISH.counts.items()) for _ in range(n)]
    for t in "CAT":
        tiles.remove(t)
    bag = [*tiles, "T", "A", "C"]  # drawn from the end: ann's rack starts C, A, T
    game = Game(["ann", "bob"], Random(1), lexicon={"CAT"}, bag=bag)
    game.apply(Play.from_word(game.board, 0, 7, 7, Direction.ACROSS, "CAT"))
    texts = [s.text for s in replay(to_record(game))]
    assert texts[1] == "ann 8H CAT +10"


def _a_record(helpers: Any) -> dict[str, Any]:
    game, _ = _live_game(helpers, 7, CMPN402_VARIANT, 2, 120)
    return json.loads(json.dumps(to_record(game)))


def test_unknown_version_and_wrong_game_are_refused(helpers: Any) -> None:
    """Version 2 is not read by this code; a Santorini record is not a Scrabble one."""
    record = _a_record(helpers)
    with pytest.raises(RecordError, match="version"):
        replay({**record, "version": 2})
    with pytest.raises(RecordError, match="scrabble"):
        replay({**record, "game": "santorini"})


def test_a_tampered_exchange_bag_names_the_action(helpers: Any) -> None:
    """An exchange whose recorded bag is not the bag's tiles fails at that action."""
    record = _a_record(helpers)
    i = next(i for i, a in enumerate(record["actions"]) if a["type"] == "exchange")
    record["actions"][i]["bag"] = "Z" + record["actions"][i]["bag"][1:]
    with pytest.raises(RecordError) as caught:
        list(replay(record))
    assert caught.value.index == i + 1


def test_a_different_lexicon_disagrees_with_the_recorded_verdict(helpers: Any) -> None:
    """Replayed with a lexicon that rules otherwise, a challenge is an error, not a new game."""
    record = _a_record(helpers)
    assert any(a["type"] == "challenge" for a in record["actions"])
    with pytest.raises(RecordError, match="challenge"):
        list(replay(record, lexicon=frozenset()))


def test_a_wrong_result_is_refused(helpers: Any) -> None:
    record = _a_record(helpers)
    record["result"]["scores"][0] += 1
    with pytest.raises(RecordError, match="result"):
        list(replay(record))


@pytest.fixture(scope="module")
def sample_records(helpers: Any) -> list[dict[str, Any]]:
    out = []
    for seed, variant in enumerate([CMPN402_VARIANT, CLARKSON_VARIANT, STANDARD_VARIANT]):
        game, _ = _live_game(helpers, seed + 20, variant, 3, 90)
        out.append(json.loads(json.dumps(to_record(game))))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_records_raise_record_error_only(
    sample_records: list[dict[str, Any]], mutate: Any, data: st.DataObject
) -> None:
    """Any one change to a record either still replays or raises RecordError."""
    record = mutate(data.draw(st.sampled_from(sample_records)), data)
    try:
        for _step in records.replay(record):
            pass
        for _step in records.replay(record, lexicon=frozenset()):
            pass
    except RecordError:
        pass


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), moves=st.integers(0, 80))
def test_a_resumed_game_goes_on_as_the_live_game(helpers: Any, seed: int, moves: int) -> None:
    """resume: a record cut anywhere gives the live game at that point, and with the
    live game's RNG state the rest of the game (exchanges included) plays the same."""
    game, states = _live_game(helpers, seed, CMPN402_VARIANT, 2, moves)
    record = to_record(game)
    cut = len(record["actions"]) // 2
    head = {**record, "actions": record["actions"][:cut], "result": None}
    rng = Random(seed + 1)
    resumed = resume(head, rng, lexicon=helpers.ParityLexicon())
    assert resumed.state() == states[cut]
    assert resumed.players == game.players
    # Nothing random is left in the replay: going on, the resumed game draws on ``rng``.
    if resumed.turn is not None and resumed.pending is None and len(resumed.bag) >= 7:
        player = resumed.turn
        tiles = resumed.rack(player)[:2]
        before = rng.getstate()
        resumed.apply(Exchange(player, tiles))
        assert rng.getstate() != before  # the shuffle drew on rng
        assert to_record(resumed)["actions"][-1]["bag"] == "".join(resumed.bag)


def test_resume_refuses_a_record_that_does_not_replay(helpers: Any) -> None:
    """A tampered record is a RecordError, as for replay."""
    game, _ = _live_game(helpers, 5, CMPN402_VARIANT, 2, 10)
    record = to_record(game)
    record["setup"]["bag"] = record["setup"]["bag"][1:]
    with pytest.raises(RecordError):
        resume(record, Random(1))

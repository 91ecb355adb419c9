"""Any action at all, in any phase: applied, or refused with a RuleError and no change."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.santorini import (
    GODS,
    Action,
    Build,
    ChooseGod,
    ChooseStarter,
    Game,
    Lose,
    Move,
    OfferGod,
    Pass,
    PlaceWorker,
    RuleError,
    Rules,
    Sex,
    Undo,
)

seats = st.integers(-1, 3)
cells = st.integers(-2, 27)
god_names = st.sampled_from([*GODS, "Zorro", "", "apollo"])
actions: st.SearchStrategy[Action] = st.one_of(
    st.builds(OfferGod, seats, god_names),
    st.builds(ChooseGod, seats, god_names),
    st.builds(ChooseStarter, seats, seats),
    st.builds(PlaceWorker, seats, cells, st.sampled_from([None, Sex.MALE, Sex.FEMALE])),
    st.builds(Move, seats, cells, cells),
    st.builds(Build, seats, cells, cells, st.integers(-1, 6)),
    st.builds(Pass, seats),
    st.builds(Undo, seats, st.booleans()),
    st.builds(Lose, seats),
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.sampled_from([2, 3]),
    gods=st.booleans(),
    warmup=st.integers(0, 60),
    attempts=st.lists(actions, min_size=1, max_size=20),
)
def test_arbitrary_actions_never_crash_or_corrupt(
    seed: int, players: int, gods: bool, warmup: int, attempts: list[Action]
) -> None:
    """After some random legal play, arbitrary actions either apply or raise a RuleError
    that leaves the game exactly as it was."""
    rng = random.Random(seed)
    game = Game(Rules(players=players, gods=gods), challenger=rng.randrange(players))
    for _ in range(warmup):
        if game.is_over:
            break
        game.apply(rng.choice(game.legal_actions()))
    for action in attempts:
        before, log = game.state, game.log
        try:
            game.apply(action)
        except RuleError:
            assert game.state == before
            assert game.log == log

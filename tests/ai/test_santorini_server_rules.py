"""The server's Santorini games (``Rules(auto_eliminate=False)``: a stuck player sends
LOSE, spec §4.2.6) are searched by the compiled core, gods or not, as games that
eliminate a stuck player by themselves are; the turns it plays are legal there and end
the turn (a Pass last, unless the game ended during it)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.santorini_native import core_module
from meeple.ai.santorini_positions import placed
from meeple.ai.santorini_search import AlphaBetaPlayer, SearchBudget, search_turn
from meeple.ai.santorini_twin import GODS as TWIN_GODS
from meeple.games.santorini import GameState, Lose, Phase, advance, turns

mod = core_module()
pytestmark = pytest.mark.skipif(
    mod is None, reason="the compiled Santorini core is not built (MEEPLE_NO_NATIVE set?)"
)

PAIRS = st.lists(st.sampled_from(sorted(TWIN_GODS)), min_size=2, max_size=2, unique=True)


def _server_rules(s: GameState) -> GameState:
    return replace(s, rules=replace(s.rules, auto_eliminate=False))


def _midgame(seed: int, pair: list[str], plies: int) -> GameState | None:
    rng = random.Random(seed)
    s = _server_rules(placed(rng, (pair[0], pair[1])))
    for _ in range(plies):
        options = list(turns(s))
        if s.phase is not Phase.PLAY or not options:
            return None
        s = rng.choice(options)[1]
    return s if s.phase is Phase.PLAY and not s.steps else None


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), PAIRS, st.integers(0, 14))
def test_the_core_searches_server_games_with_gods(seed: int, pair: list[str], plies: int) -> None:
    s = _midgame(seed, pair, plies)
    if s is None:
        return
    me = s.turn
    found = search_turn(s, SearchBudget(max_depth=2), native=True)
    after = s
    for action in found.route:
        after = advance(after, action)[0]
        if isinstance(action, Lose):
            break
    # the turn is over: the game ended, or the next player is to move (or to LOSE)
    assert after.phase is Phase.OVER or after.turn != me or not after.alive[me]
    assert not after.steps


def test_server_games_with_gods_play_to_the_end_through_the_core() -> None:
    rng = random.Random(5)
    for pair in (("Apollo", "Minotaur"), ("Athena", "Hephaestus"), ("Pan", "Atlas")):
        if any(g not in TWIN_GODS for g in pair):
            continue
        s = _server_rules(placed(rng, pair))
        players = (AlphaBetaPlayer(max_nodes=3000), AlphaBetaPlayer(max_nodes=3000))
        for _ in range(600):
            if s.phase is Phase.OVER:
                break
            s = advance(s, players[s.turn].choose(s, rng))[0]
        assert s.phase is Phase.OVER

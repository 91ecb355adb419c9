"""The compiled search core agrees with the Python twin, which stays the reference.

On random boards (hypothesis: any heights, domes on any level, complete towers, workers
anywhere, Athena's flags either way, any god pair or none) and on positions reached by
random turns, the core's turns are the twin's (the same steps, the same positions
after them, the same keys and winners, in the same order), its "wins at once" is the
twin's, its evaluation is :mod:`meeple.ai.santorini_eval`'s; and at a fixed depth
without a time limit its search finds the value the Python search finds (both without
a transposition table, which makes values depend on the order nodes are visited).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.test_santorini_twin import _played, boards

from meeple.ai.santorini_eval import default_weights, evaluate_gods, evaluate_mortal, god_weights
from meeple.ai.santorini_native import NativeSearch, core_children, core_module, god_indices
from meeple.ai.santorini_search import SearchBudget, search_turn
from meeple.ai.santorini_twin import GodTwin
from meeple.games.santorini import GODS, GameState, Phase, Rules

mod = core_module()
pytestmark = pytest.mark.skipif(
    mod is None, reason="the compiled Santorini core is not built (MEEPLE_NO_NATIVE set?)"
)

GOD_NAMES = sorted(GODS)
PAIRS = st.one_of(
    st.just((None, None)),
    st.lists(st.sampled_from(GOD_NAMES), min_size=2, max_size=2, unique=True).map(tuple),
)
SCALE = int(os.environ.get("MEEPLE_TWIN_SCALE", "1"))


def _with_gods(s: GameState, gods: tuple[str | None, str | None]) -> GameState:
    from dataclasses import replace

    if gods == (None, None):
        return replace(s, rules=Rules(players=2, gods=False), gods=(None, None))
    return replace(s, gods=gods)


def _agree(s: GameState) -> None:
    assert mod is not None
    twin = GodTwin(s.gods)
    node = twin.node(s)
    gods = god_indices(mod, twin.gods)
    assert gods is not None
    _k, h, wk, turn, _w, mu = node
    assert mod.key(h, wk, turn, mu, gods, twin.zgods) == node[0]
    mine = core_children(mod, twin, node)
    theirs = twin.children(node)
    assert mine == theirs
    for seat in (0, 1):
        assert mod.can_win(h, wk, seat, mu, gods) == twin.can_win(h, wk, seat, mu)
    wt = default_weights().weights
    gw = god_weights()
    for root in (0, 1):
        assert mod.evaluate(h, wk, root, turn, mu, gods, wt, None) == evaluate_mortal(
            h, wk, root, turn, wt
        )
        if gw is not None:
            assert mod.evaluate(h, wk, root, turn, mu, gods, wt, gw.weights) == evaluate_gods(
                h, wk, root, turn, mu, twin.gods, gw.weights
            )


@settings(max_examples=150 * SCALE, deadline=None)
@given(boards(), PAIRS)
def test_the_core_gives_the_twins_turns_on_random_boards(
    s: GameState, gods: tuple[str | None, str | None]
) -> None:
    _agree(_with_gods(s, gods))


@settings(max_examples=40 * SCALE, deadline=None)
@given(st.integers(0, 10**9), PAIRS)
def test_the_core_gives_the_twins_turns_in_played_positions(
    seed: int, gods: tuple[str | None, str | None]
) -> None:
    pair = gods if gods != (None, None) else ("Apollo", "Artemis")
    s = _played(seed, (pair[0] or "", pair[1] or ""))
    if s is None:
        return
    _agree(_with_gods(s, gods))


class _NoTable(dict[int, Any]):
    """A transposition table that keeps nothing (the Python search without one)."""

    def __setitem__(self, key: int, value: Any) -> None:
        return None


@settings(max_examples=25 * SCALE, deadline=None)
@given(st.integers(0, 10**9), PAIRS, st.integers(1, 3))
def test_at_a_fixed_depth_the_core_finds_the_python_searchs_value(
    seed: int, gods: tuple[str | None, str | None], depth: int
) -> None:
    assert mod is not None
    pair = gods if gods != (None, None) else ("Apollo", "Artemis")
    s = _played(seed, (pair[0] or "", pair[1] or ""))
    if s is None:
        return
    s = _with_gods(s, gods)
    if s.phase is not Phase.PLAY:
        return
    if gods != (None, None) and depth > 2:
        depth = 2  # the god games' branching makes depth 3 in Python slow
    py = search_turn(s, SearchBudget(max_depth=depth), table=_NoTable(), native=False)
    twin = GodTwin(s.gods)
    gw = god_weights() if gods != (None, None) else None
    core = NativeSearch(mod)
    got = core.search(
        twin,
        twin.node(s),
        default_weights().weights,
        None if gw is None else gw.weights,
        max_depth=depth,
        max_nodes=None,
        clock=None,
        seconds=None,
        use_table=False,
    )
    assert got is not None
    assert got.value == py.value
    assert got.depth == py.depth

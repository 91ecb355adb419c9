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

import contextlib
import os
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.test_santorini_twin import _played, boards

from meeple.ai.santorini_eval import (
    LEARNED_FEATURES,
    TABLE_FEATURES,
    EvalWeights,
    default_weights,
    evaluate_gods,
    evaluate_mortal,
    god_weights,
    learned_weights,
    play_weights,
    table_seat_features,
    table_weights,
)
from meeple.ai.santorini_native import (
    SELECTIVE,
    NativeSearch,
    core_children,
    core_module,
    god_indices,
)
from meeple.ai.santorini_positions import random_position
from meeple.ai.santorini_search import PLAY_SELECTIVE, SearchBudget, search_turn
from meeple.ai.santorini_twin import GodTwin
from meeple.games.santorini import GODS, GameState, Phase, Rules, turns

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


def _fixed_search(
    s: GameState,
    depth: int,
    weights: Any = None,
    god_wt: Any = None,
    *,
    core: NativeSearch | None = None,
    use_table: bool = False,
    selective: int = 0,
    net: Any = None,
) -> Any:
    """The core's search of ``s`` to ``depth`` without a clock or node limit (the
    players' weights unless given; no table unless asked): its result, checked."""
    assert mod is not None
    twin = GodTwin(s.gods)
    found = (core or NativeSearch(mod)).search(
        twin,
        twin.node(s),
        play_weights().weights if weights is None else weights,
        god_wt,
        max_depth=depth,
        max_nodes=None,
        clock=None,
        seconds=None,
        use_table=use_table,
        selective=selective,
        net=net,
    )
    assert found is not None
    return found


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
        for w in (wt, play_weights().weights):
            assert mod.evaluate(h, wk, root, turn, mu, gods, w, None) == evaluate_mortal(
                h, wk, root, turn, w
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


_NW = 10 + len(LEARNED_FEATURES)
_NT = _NW + len(TABLE_FEATURES)
LEARNED = st.lists(st.integers(-5000, 5000), min_size=_NW, max_size=_NW).map(tuple)
TABLES = st.lists(st.integers(-5000, 5000), min_size=_NT, max_size=_NT).map(tuple)


@settings(max_examples=300 * SCALE, deadline=None)
@given(boards(), TABLES, st.integers(0, 1))
def test_the_core_evaluates_the_table_terms_as_python_does(
    s: GameState, wt: tuple[int, ...], root: int
) -> None:
    """The table evaluation (44 weights) in C is the Python twin's, on random boards."""
    assert mod is not None
    twin = GodTwin((None, None))
    _k, h, wk, turn, _w, mu = twin.node(_with_gods(s, (None, None)))
    assert mod.evaluate(h, wk, root, turn, mu, (0, 0), wt, None) == evaluate_mortal(
        h, wk, root, turn, wt
    )


@settings(max_examples=200 * SCALE, deadline=None)
@given(boards(), st.integers(0, len(TABLE_FEATURES) - 1), st.integers(0, 1))
def test_each_table_feature_is_counted_alike(s: GameState, j: int, root: int) -> None:
    """One table feature alone (weight 1, every other 0) is the same count in C and
    Python: the difference of the two seats' counts."""
    assert mod is not None
    twin = GodTwin((None, None))
    _k, h, wk, turn, _w, mu = twin.node(_with_gods(s, (None, None)))
    wt = [0] * _NT
    wt[_NW + j] = 1
    mine = table_seat_features(h, wk, root)[j]
    theirs = table_seat_features(h, wk, 1 - root)[j]
    assert mod.evaluate(h, wk, root, turn, mu, (0, 0), wt, None) == mine - theirs


def test_the_table_features_count_what_they_say() -> None:
    """By hand: seat 0's workers on the middle (level 2) and a corner (level 1)."""
    h = [0] * 25
    h[12] = 2  # the middle, seat 0's first worker
    h[13] = 3  # a free level-3 cell beside it: a threat
    h[11] = 3  # another: a double threat
    h[0] = 1  # a corner, seat 0's second worker
    h[1] = 2  # a level-2 cell beside it with a level-3 cell (none here) ...
    h[6] = 3  # ... now there is one: a threat in the making
    h[5] = 4  # a dome beside the corner worker
    wk = [12, 0, 24, 20]
    f = dict(zip(TABLE_FEATURES, table_seat_features(h, wk, 0), strict=True))
    assert f["w_mid_2"] == 1
    assert f["w_corner_1"] == 1
    assert sum(v for k, v in f.items() if k.startswith("w_")) == 2
    assert f["double_threat"] == 1
    assert f["unguarded"] == 3  # 6, 11 and 13 (next to the level-2 middle worker)
    assert f["pre_threat"] == 1  # cell 1: level 2, beside the level-1 corner worker and 6
    assert f["nb_dome"] == 1
    assert f["reach_l2"] == 1


@settings(max_examples=300 * SCALE, deadline=None)
@given(boards(), LEARNED, st.integers(0, 1))
def test_the_core_evaluates_the_learned_terms_as_python_does(
    s: GameState, wt: tuple[int, ...], root: int
) -> None:
    """The learned evaluation (16 weights) in C is the Python twin's, on random boards."""
    assert mod is not None
    twin = GodTwin((None, None))
    _k, h, wk, turn, _w, mu = twin.node(_with_gods(s, (None, None)))
    assert mod.evaluate(h, wk, root, turn, mu, (0, 0), wt, None) == evaluate_mortal(
        h, wk, root, turn, wt
    )


def test_the_shipped_learned_weights_are_the_learned_evaluation() -> None:
    learned = learned_weights()
    assert learned is not None
    assert len(learned.weights) == 10 + len(LEARNED_FEATURES)
    assert "train_santorini_learned.py" in learned.provenance


def test_the_shipped_table_weights_are_what_the_players_use() -> None:
    tables = table_weights()
    assert tables is not None
    assert len(tables.weights) == _NT
    assert "train_santorini_tables.py" in tables.provenance
    assert play_weights() == tables


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
    gw = god_weights() if gods != (None, None) else None
    got = _fixed_search(s, depth, None, None if gw is None else gw.weights)
    assert got.value == py.value
    assert got.depth == py.depth


@settings(max_examples=25 * SCALE, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 3), st.one_of(LEARNED, TABLES))
def test_with_learned_weights_the_core_finds_the_python_searchs_value(
    seed: int, depth: int, wt: tuple[int, ...]
) -> None:
    """At a fixed depth without a table, the learned (16 weights) or table (44)
    evaluation's search in C and in Python (the fast twin's leaves) find the same
    value."""
    assert mod is not None
    s = _played(seed, ("Apollo", "Artemis"))
    if s is None:
        return
    s = _with_gods(s, (None, None))
    if s.phase is not Phase.PLAY:
        return
    weights = EvalWeights(wt, "test")
    py = search_turn(
        s, SearchBudget(max_depth=depth), weights=weights, table=_NoTable(), native=False
    )
    got = _fixed_search(s, depth, wt)
    assert (got.value, got.depth) == (py.value, py.depth)


MATE = 1_000_000 - 1000


@settings(max_examples=30 * SCALE, deadline=None)
@given(
    st.integers(0, 10**9),
    PAIRS,
    st.integers(2, 4),
    st.one_of(st.just(PLAY_SELECTIVE), st.integers(1, sum(SELECTIVE.values()))),
)
def test_the_selective_search_proves_only_real_wins_and_losses(
    seed: int, gods: tuple[str | None, str | None], depth: int, mask: int
) -> None:
    """Issue 36: the selective search (the players' features or any mix of them:
    reductions, futility, null move, late moves left out, threats resolved to the end)
    may misjudge a quiet position, never a won or lost one: a win or loss it claims in
    k turns, the exact full-width search (no table) finds at depth k + 1 too, at least as
    soon (a win) or as late (a loss)."""
    assert mod is not None
    pair = gods if gods != (None, None) else ("Apollo", "Artemis")
    s = _played(seed, (pair[0] or "", pair[1] or ""))
    if s is None:
        return
    s = _with_gods(s, gods)
    # later in the game, where wins and losses are found (about half the positions)
    rng = random.Random(seed)
    for _ in range(rng.randrange(8, 20)):
        if s.phase is not Phase.PLAY:
            return
        options = list(turns(s))
        if not options:
            return
        s = rng.choice(options)[1]
    if s.phase is not Phase.PLAY:
        return
    gw = god_weights() if gods != (None, None) else None

    def search(depth: int, selective: int, use_table: bool) -> Any:
        return _fixed_search(
            s,
            depth,
            None,
            None if gw is None else gw.weights,
            use_table=use_table,
            selective=selective,
        )

    got = search(depth, mask, True)
    assert got.steps or got.value < -MATE
    if abs(got.value) <= MATE:
        return
    # k turns, and one more: a side left without a turn is seen to lose only inside
    # the tree (the exact search evaluates a stuck side at its horizon)
    horizon = 1_000_000 - abs(got.value) + 1
    if horizon > (5 if gods == (None, None) else 3):
        return  # the exact search would take too long
    exact = search(horizon, 0, False)
    if got.value > MATE:
        assert exact.value >= got.value
    else:
        assert -MATE > exact.value >= got.value


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(-(2**40), 2**40), st.none(), st.text(max_size=3)))
def test_the_core_refuses_a_bad_selective_mask(mask: Any) -> None:
    assert mod is not None
    h, wk = [0] * 25, [0, 1, 23, 24]
    core = mod.Core(10)
    wt = default_weights().weights
    ok = isinstance(mask, int) and 0 <= mask <= mod.SELECTIVE_ALL
    try:
        core.search(h, wk, 0, 0, (0, 0), 0, wt, None, max_depth=2, max_nodes=500, selective=mask)
    except (ValueError, OverflowError, TypeError):
        assert not ok
    else:
        assert ok
    assert sum(SELECTIVE.values()) == mod.SELECTIVE_ALL


JUNK = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.lists(st.integers(-3, 30), max_size=30),
    st.tuples(st.integers(-3, 30), st.integers(-3, 30)),
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.lists(st.integers(-2, 9), min_size=0, max_size=27), JUNK),
    st.one_of(st.lists(st.integers(-2, 26), min_size=0, max_size=5), JUNK),
    st.one_of(st.integers(-2, 3), JUNK),
    st.one_of(st.integers(-2, 5), JUNK),
    st.one_of(st.tuples(st.integers(-2, 20), st.integers(-2, 20)), JUNK),
)
def test_the_core_refuses_bad_positions_without_crashing(
    h: Any, wk: Any, turn: Any, mu: Any, gods: Any
) -> None:
    """Whatever it is handed, the core answers with a ValueError, TypeError or
    OverflowError, or (for a well-formed position) with turns and a search result."""
    assert mod is not None
    wt = default_weights().weights
    core = mod.Core(10)
    calls = (
        lambda: mod.children(h, wk, turn, mu, gods, 0),
        lambda: mod.key(h, wk, turn, mu, gods, 0),
        lambda: mod.can_win(h, wk, turn, mu, gods),
        lambda: mod.evaluate(h, wk, 0, turn, mu, gods, wt, None),
        lambda: core.search(h, wk, turn, mu, gods, 0, wt, None, max_depth=2, max_nodes=200),
    )
    for call in calls:
        with contextlib.suppress(ValueError, TypeError, OverflowError):
            call()


@settings(max_examples=50, deadline=None)
@given(
    st.one_of(
        st.lists(st.integers(-(2**40), 2**40), min_size=0, max_size=18),
        st.lists(st.integers(-(2**40), 2**40), min_size=42, max_size=46),
        st.lists(st.integers(-200_000, 200_000), min_size=44, max_size=44),
    ),
    st.one_of(st.none(), st.lists(st.integers(-(2**40), 2**40), min_size=0, max_size=18)),
)
def test_the_core_refuses_bad_weights(weights: list[int], god_weights: list[int] | None) -> None:
    assert mod is not None
    h, wk = [0] * 25, [0, 1, 23, 24]
    core = mod.Core(10)
    ok = len(weights) in (10, 16, 44) and all(abs(w) <= 100_000 for w in weights)
    ok = ok and (
        god_weights is None
        or (len(god_weights) == 13 and all(abs(w) <= 100_000 for w in god_weights))
    )
    try:
        core.search(h, wk, 0, 0, (0, 0), 0, weights, god_weights, max_depth=1, max_nodes=100)
    except (ValueError, OverflowError):
        assert not ok
    else:
        assert ok


def test_without_the_core_meeple_plays_the_python_search_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An install where the extension could not be built: the import fails, the log
    says once that the Python search plays, and every level still plays."""
    import logging
    import random
    import sys

    from meeple.ai import santorini_native, santorini_search
    from meeple.ai.santorini_search import AlphaBetaPlayer
    from meeple.games.santorini import new_game

    monkeypatch.setitem(sys.modules, "meeple.ai._santorini_core", None)  # import fails
    monkeypatch.setattr(santorini_native, "_state", {})
    monkeypatch.setattr(santorini_search, "_local", __import__("threading").local())
    with caplog.at_level(logging.INFO, logger="meeple.ai.santorini_native"):
        assert santorini_native.core_module() is None
        assert santorini_native.core_module() is None
    said = [r.getMessage() for r in caplog.records if "santorini search" in r.getMessage()]
    assert len(said) == 1
    assert said[0].startswith("santorini search: python")
    s = _played(5, ("Apollo", "Artemis"))
    assert s is not None
    result = search_turn(s, SearchBudget(max_depth=2))
    assert result.nodes > 1
    with pytest.raises(RuntimeError):
        search_turn(s, SearchBudget(max_depth=1), native=True)
    player = AlphaBetaPlayer(max_depth=1)
    rng = random.Random(1)
    state = new_game(Rules(players=2, gods=False))
    for _ in range(12):
        if state.phase is Phase.OVER:
            break
        from meeple.games.santorini import advance

        state = advance(state, player.choose(state, rng))[0]
    assert player._native() is None


def test_a_context_searching_in_one_thread_does_not_fail_another() -> None:
    """A bot's player asked again while it searches (two threads, one context): the
    second search takes its thread's own context and plays a legal turn; the first
    goes on undisturbed."""
    import threading

    from meeple.ai.santorini_native import CoreBusy
    from meeple.games.santorini import advance

    assert mod is not None
    s = _played(11, ("Apollo", "Artemis"))
    assert s is not None
    s = _with_gods(s, (None, None))
    shared = NativeSearch(mod)
    inside, release = threading.Event(), threading.Event()
    ticks = [0.0]

    def clock() -> float:  # the first search's clock: waits while the second runs
        if shared._lock.locked() and not inside.is_set():  # read from inside the core
            inside.set()
            assert release.wait(30)
        ticks[0] += 0.001
        return ticks[0]

    first: list[Any] = []
    worker = threading.Thread(
        target=lambda: first.append(search_turn(s, SearchBudget(0.05, clock), core=shared))
    )
    worker.start()
    try:
        assert inside.wait(30)
        twin = GodTwin((None, None))
        with pytest.raises(CoreBusy):
            shared.search(
                twin,
                twin.node(s),
                default_weights().weights,
                None,
                max_depth=1,
                max_nodes=None,
                clock=None,
                seconds=None,
            )
        second = search_turn(s, SearchBudget(max_depth=2), core=shared)
    finally:
        release.set()
        worker.join(30)
    for result in (second, first[0]):
        after = s
        for action in result.route:
            after = advance(after, action)[0]
        assert after.phase is Phase.OVER or after.turn != s.turn


def test_the_self_match_names_features_and_plays(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/santorini_selfmatch.py: feature names to masks, and a short match."""
    from tests.scripts import load_script

    selfmatch = load_script("benchmarks/santorini_selfmatch.py")
    assert selfmatch.mask_of("none") == 0
    assert selfmatch.mask_of("play") == PLAY_SELECTIVE
    assert selfmatch.mask_of("lmr,qs") == SELECTIVE["lmr"] | SELECTIVE["qs"]
    with pytest.raises(SystemExit):
        selfmatch.mask_of("lmr,nope")
    argv = "santorini_selfmatch.py --a lmr --b none --games 2 --think-time 0.01"
    monkeypatch.setattr("sys.argv", argv.split())
    selfmatch.main()
    out = capsys.readouterr().out
    assert "lmr v none: " in out
    assert "A score" in out
    assert "median depth" in out


@pytest.mark.parametrize("use_table", [True, False])
def test_the_core_counts_what_its_search_did(use_table: bool) -> None:
    """stats(): one node count per finished iteration, rising; nodes by ply from ply 1
    summing to at most the search's nodes; cuts, first-move cuts and table hits nested."""
    assert mod is not None
    s = random_position(random.Random(3), 12)
    core = NativeSearch(mod)
    found = _fixed_search(s, 6, core=core, use_table=use_table, selective=PLAY_SELECTIVE)
    st_ = core.stats()
    iters = st_["iteration_nodes"]
    assert len(iters) == found.depth == 6
    assert iters == sorted(iters)
    assert iters[-1] <= found.nodes
    assert st_["ply_nodes"][0] == 0  # the root is not a node of negamax
    assert found.nodes // 2 <= sum(st_["ply_nodes"]) <= found.nodes
    assert 0 < st_["first_cuts"] <= st_["cut_nodes"]
    assert st_["cut_index_sum"] >= st_["cut_nodes"] - st_["first_cuts"]
    assert 0 <= st_["tt_returns"] <= st_["tt_hits"] <= st_["tt_probes"]
    assert (st_["tt_probes"] > 0) == use_table


def test_the_gap_benchmark_reads_the_counters(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/santorini_gap.py: the minimal tree's depth, and a short run's report."""
    from tests.scripts import load_script

    gap = load_script("benchmarks/santorini_gap.py")
    assert gap.ideal_depth(45, 2 * 45**4) == pytest.approx(8.0)
    assert gap.ideal_depth(1, 10**6) == 0.0
    monkeypatch.setattr("sys.argv", ["santorini_gap.py", "--nodes", "3000"])
    gap.main()
    out = capsys.readouterr().out
    assert out.count("## ") == 8
    assert "effective branching factor" in out
    assert "first move cut" in out
    assert "table:" in out


@settings(max_examples=40 * SCALE, deadline=None)
@given(st.integers(0, 10**6), st.integers(4, 18), st.integers(2, 4), PAIRS)
def test_searching_only_the_blocks_of_a_win_keeps_the_value(
    seed: int, plies: int, depth: int, gods: tuple[str | None, str | None]
) -> None:
    """blk (a side facing a win searches only the turns that stop it) finds the exact
    search's value at a fixed depth without a table, with no more nodes; any god pair
    or none."""
    assert mod is not None
    pair = None if gods == (None, None) else (str(gods[0]), str(gods[1]))
    if depth > 3 and pair is not None:
        depth = 3  # a god pair's turns are many: depth 4 takes seconds
    s = random_position(random.Random(seed), plies, pair, nodes=300)
    exact = _fixed_search(s, depth)
    blk = _fixed_search(s, depth, selective=SELECTIVE["blk"])
    assert blk.value == exact.value
    assert blk.depth == exact.depth
    assert blk.nodes <= exact.nodes

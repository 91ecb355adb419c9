"""The network evaluation: the core's incremental accumulators and values are the Python
twin's (:mod:`meeple.ai.santorini_net`), and both searches find the same value with it
(a plain network, or a residual one added to the table evaluation).

On random boards (hypothesis: any heights, domes on any level, towers, any god pair or
none) and random networks, the core's value is the twin's from scratch; along random
sequences of turns made and unmade (any god pair, so Apollo's swaps, Minotaur's pushes,
Zeus' builds under himself and Atlas' low domes are among them) the accumulators the core
keeps by make and unmake equal ones computed afresh, and the twin's; at fixed depths
without a table the core's search with a network finds the Python search's value.
Malformed weights are refused (ValueError or TypeError, never a crash).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.test_santorini_core import PAIRS, _fixed_search, _NoTable, _with_gods
from tests.ai.test_santorini_twin import _played, boards

from meeple.ai.santorini_eval import play_weights
from meeple.ai.santorini_native import core_module, god_indices, native_net
from meeple.ai.santorini_net import (
    HIDDEN,
    INPUTS,
    MAX_FILE,
    QA,
    QB,
    NetWeights,
    accumulator,
    evaluate_net,
    features,
    net_weights,
    parse_net,
)
from meeple.ai.santorini_positions import placed
from meeple.ai.santorini_search import (
    EVALUATIONS,
    LEVELS,
    AlphaBetaPlayer,
    SearchBudget,
    play_net,
    search_turn,
)
from meeple.ai.santorini_twin import GodTwin
from meeple.games.santorini import (
    GameState,
    Phase,
    advance,
)

mod = core_module()
pytestmark = pytest.mark.skipif(
    mod is None, reason="the compiled Santorini core is not built (MEEPLE_NO_NATIVE set?)"
)


def _random_net(seed: int, spread: int = 400) -> NetWeights:
    r = random.Random(seed)
    return NetWeights(
        tuple(r.randint(-spread, spread) for _ in range(INPUTS * HIDDEN)),
        tuple(r.randint(-spread, spread) for _ in range(HIDDEN)),
        tuple(r.randint(-5000, 5000) for _ in range(2 * HIDDEN)),
        r.randint(-(10**6), 10**6),
        r.randint(1, 300),
        residual=r.random() < 0.5,
    )


NETS = st.integers(0, 10**9).map(_random_net)


def test_the_inputs_are_one_per_cell_and_worker() -> None:
    """From a side's view: 25 height inputs, that side's two workers by cell and height,
    the other side's two."""
    h = [0] * 25
    h[6], h[7], h[12] = 2, 4, 7
    wk = [6, 0, 24, 12]
    assert features(h, wk, 0) == [
        *(c * 5 + min(h[c], 4) for c in range(25)),
        125 + 6 * 4 + 2,
        125 + 0 * 4 + 0,
        225 + 24 * 4 + 0,
        225 + 12 * 4 + 3,
    ]
    assert features(h, wk, 1)[25:] == [225 + 26, 225 + 0, 125 + 96, 125 + 51]
    assert max(features(h, wk, 0)) < INPUTS


@settings(max_examples=200, deadline=None)
@given(boards(), NETS, st.integers(0, 1))
def test_the_core_evaluates_the_network_as_the_twin_does(
    s: GameState, net: NetWeights, root: int
) -> None:
    assert mod is not None
    twin = GodTwin(s.gods)
    _k, h, wk, turn, _w, mu = twin.node(s)
    gods = god_indices(mod, twin.gods)
    value = evaluate_net(net, h, wk, turn)
    wt = play_weights().weights
    got = mod.evaluate(h, wk, root, turn, mu, gods, wt, None, native_net(mod, net))
    expected = value if root == turn else -value
    if net.residual:
        expected += mod.evaluate(h, wk, root, turn, mu, gods, wt, None)
    assert got == expected


@settings(max_examples=150, deadline=None)
@given(boards(), NETS, st.lists(st.integers(0, 10**6), min_size=1, max_size=24))
def test_make_and_unmake_keep_the_accumulators_exact(
    s: GameState, net: NetWeights, choices: list[int]
) -> None:
    """Along random turns made and then unmade, the core's accumulators (kept by make
    and unmake) equal fresh ones and the twin's, and its value is the twin's."""
    assert mod is not None
    twin = GodTwin(s.gods)
    _k, h, wk, turn, _w, mu = twin.node(s)
    gods = god_indices(mod, twin.gods)
    walk = mod.net_walk(native_net(mod, net), h, wk, turn, mu, gods, twin.zgods, choices)
    made = len(walk) // 2
    assert len(walk) == 2 * made
    for kept, fresh, value, node in walk:
        _key, nh, nwk, nturn, _winner, _mu = node
        assert kept == fresh
        assert list(fresh) == accumulator(net, nh, nwk, 0) + accumulator(net, nh, nwk, 1)
        assert value == evaluate_net(net, nh, nwk, nturn)
    if made:
        # back where it started
        assert walk[-1][3][1:4] == (tuple(h), tuple(wk), turn)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**9), PAIRS, NETS)
def test_the_accumulators_stay_exact_in_played_positions(
    seed: int, gods: tuple[str | None, str | None], net: NetWeights
) -> None:
    assert mod is not None
    s = _played(seed, ("Apollo", "Zeus") if gods == (None, None) else gods)  # type: ignore[arg-type]
    if s is None or s.phase is not Phase.PLAY:
        return
    twin = GodTwin(s.gods)
    _k, h, wk, turn, _w, mu = twin.node(s)
    r = random.Random(seed)
    walk = mod.net_walk(
        native_net(mod, net),
        h,
        wk,
        turn,
        mu,
        god_indices(mod, twin.gods),
        twin.zgods,
        [r.randrange(10**6) for _ in range(30)],
    )
    for kept, fresh, _value, _node in walk:
        assert kept == fresh


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 3), NETS)
def test_with_a_network_the_core_finds_the_python_searchs_value(
    seed: int, depth: int, net: NetWeights
) -> None:
    """At a fixed depth without a table, the network's search in C (incremental) and in
    Python (from scratch at every leaf) find the same value."""
    assert mod is not None
    s = _played(seed, ("Apollo", "Artemis"))
    if s is None:
        return
    s = _with_gods(s, (None, None))
    if s.phase is not Phase.PLAY:
        return
    py = search_turn(s, SearchBudget(max_depth=depth), table=_NoTable(), native=False, net=net)
    got = _fixed_search(s, depth, net=net)
    assert (got.value, got.depth) == (py.value, py.depth)


def test_with_gods_the_network_is_not_used() -> None:
    """The network knows no gods: a god game searches with the god weights whatever
    network is given."""
    assert mod is not None
    s = _played(7, ("Apollo", "Athena"))
    assert s is not None
    assert s.phase is Phase.PLAY
    plain = search_turn(s, SearchBudget(max_depth=2), table=_NoTable(), selective=0)
    with_net = search_turn(
        s, SearchBudget(max_depth=2), table=_NoTable(), selective=0, net=_random_net(3)
    )
    assert (plain.value, plain.route) == (with_net.value, with_net.route)


JUNK = st.one_of(st.none(), st.text(max_size=3), st.floats(), st.lists(st.text(), max_size=3))


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(st.lists(st.integers(-40000, 40000), min_size=0, max_size=40), JUNK),
    st.one_of(st.lists(st.integers(-40000, 40000), min_size=30, max_size=66), JUNK),
    st.one_of(st.integers(-(2**40), 2**40), JUNK),
    st.one_of(st.integers(-5, 20000), JUNK),
)
def test_the_core_refuses_bad_networks(b1: Any, w2: Any, b2: Any, scale: Any) -> None:
    assert mod is not None
    w1 = [0] * (INPUTS * HIDDEN)
    ok = (
        isinstance(b1, list)
        and len(b1) == HIDDEN
        and all(abs(x) <= 32767 for x in b1)
        and isinstance(w2, list)
        and len(w2) == 2 * HIDDEN
        and all(abs(x) <= 32767 for x in w2)
        and isinstance(b2, int)
        and abs(b2) <= 2**30
        and isinstance(scale, int)
        and 1 <= scale <= 10000
    )
    try:
        mod.Net(w1, b1, w2, b2, scale)
    except (ValueError, TypeError, OverflowError):
        assert not ok
    else:
        assert ok


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.text(max_size=5), st.floats(), st.integers(), st.lists(st.integers())))
def test_the_core_refuses_a_net_that_is_not_one(net: Any) -> None:
    assert mod is not None
    h, wk = [0] * 25, [0, 1, 23, 24]
    core = mod.Core(10)
    wt = play_weights().weights
    for call in (
        lambda: core.search(h, wk, 0, 0, (0, 0), 0, wt, None, max_depth=1, net=net),
        lambda: mod.evaluate(h, wk, 0, 0, 0, (0, 0), wt, None, net),
        lambda: mod.net_walk(net, h, wk, 0, 0, (0, 0), 0, [1]),
    ):
        with pytest.raises(TypeError):
            call()


def _file(**change: Any) -> str:
    net = _random_net(5)
    data: dict[str, Any] = {
        "inputs": INPUTS,
        "hidden": HIDDEN,
        "qa": QA,
        "qb": QB,
        "scale": net.scale,
        "w1": [list(net.w1[r * HIDDEN : (r + 1) * HIDDEN]) for r in range(INPUTS)],
        "b1": list(net.b1),
        "w2": list(net.w2),
        "b2": net.b2,
        "residual": False,
        "provenance": "test",
    }
    data.update(change)
    return json.dumps(data)


def test_a_weights_file_reads_back_as_its_network() -> None:
    net = _random_net(5)
    assert parse_net(_file()) == NetWeights(net.w1, net.b1, net.w2, net.b2, net.scale, "test")
    assert parse_net(_file(residual=True)).residual


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["inputs", "hidden", "qa", "qb", "scale", "w1", "b1", "w2", "b2", "residual"]),
    st.one_of(
        JUNK,
        st.integers(-(2**40), 2**40),
        st.lists(st.integers(-(2**17), 2**17), max_size=70),
        st.lists(st.lists(st.integers(-5, 5), max_size=33), max_size=3),
        st.booleans(),
    ),
)
def test_a_bad_weights_file_is_refused(field: str, value: Any) -> None:
    """Any field wrong gives ValueError (or the file parses, when the value happens to
    fit)."""
    text = _file(**{field: value})
    try:
        net = parse_net(text)
    except ValueError:
        return
    assert len(net.w1) == INPUTS * HIDDEN
    assert len(net.b1) == HIDDEN
    assert len(net.w2) == 2 * HIDDEN


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200))
def test_junk_is_not_a_weights_file(text: str) -> None:
    with pytest.raises(ValueError, match=r"(?s)."):
        parse_net(text)


def test_a_weights_file_has_a_size_limit() -> None:
    with pytest.raises(ValueError, match="too large"):
        parse_net(" " * (MAX_FILE + 1))


def test_the_shipped_network_is_complete_and_says_how_it_was_made() -> None:
    net = net_weights()
    assert net is not None
    assert net == play_net()
    assert "scripts/train_santorini_net.py" in net.provenance
    assert "self-play" in net.provenance


def test_a_level_plays_with_the_evaluation_it_names() -> None:
    assert set(EVALUATIONS) == {"net", "table"}
    for level in LEVELS.values():
        assert level.evaluation in EVALUATIONS
    net = AlphaBetaPlayer.at_level("easy", evaluation="net")
    assert net.net is not None
    assert net.net == play_net()
    assert AlphaBetaPlayer.at_level("easy", evaluation="table").net is None
    with pytest.raises(ValueError, match="evaluation"):
        AlphaBetaPlayer(evaluation="neural")


def test_a_network_player_plays_a_whole_game() -> None:
    rng = random.Random(4)
    players = (
        AlphaBetaPlayer(max_nodes=3000, evaluation="net"),
        AlphaBetaPlayer(max_nodes=3000, evaluation="table"),
    )
    s = placed(rng)
    for _ in range(400):
        if s.phase is Phase.OVER:
            break
        s = advance(s, players[s.turn].choose(s, rng))[0]
    assert s.phase is Phase.OVER
    assert players[0].last is not None
    assert players[0].last.nodes > 0

"""The win-probability table and the strong player's simulation by chance to win, with
its stopping rule (issue 37)."""

from __future__ import annotations

import json
import math
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.words import small_lexicon

from meeple.ai.leaves import default_leaves
from meeple.ai.scrabble import (
    WIN_BAG,
    Budget,
    GreedyPlayer,
    Position,
    StrongPlayer,
    _Candidate,
    _drop,
    _pick,
    choose,
)
from meeple.ai.scrabble_winprob import (
    MAX_TABLE_BYTES,
    WinTable,
    WinTableError,
    default_win_table,
    fit_curve,
)
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.moves import Move

# --- the table ---


def test_shipped_table_has_its_provenance_and_makes_sense() -> None:
    """The shipped table says how it was made, and a lead is worth more the fewer tiles
    are left: more lead, more wins, at every count of tiles unseen."""
    table = default_win_table()
    info = table.info
    assert info["script"] == "scripts/fit_winprob.py"
    assert info["command"].startswith("python scripts/fit_winprob.py")
    assert int(info["figures"]["games"]) >= 1000
    assert info["figures"]["heldout_log_loss_table"] < info["figures"]["heldout_log_loss_coin"]
    for u in range(94):
        assert table.win(-40, u) < table.win(0, u) < table.win(40, u)
    assert table.win(30, 7) > table.win(30, 60) > 0.5
    assert table.win(-30, 7) < table.win(-30, 60) < 0.5
    assert table.after_line(25, 7) == pytest.approx(1 - table.win(-25, 7))


def test_fit_curve_finds_a_known_curve() -> None:
    """Samples drawn from a known logistic curve give back its slope and bias."""
    rng = Random(5)
    slope, bias = 0.04, 0.3
    leads = [rng.uniform(-120, 120) for _ in range(6000)]
    wins = [1.0 if rng.random() < 1 / (1 + math.exp(-(slope * x + bias))) else 0.0 for x in leads]
    a, b = fit_curve(leads, wins)
    assert a == pytest.approx(slope, rel=0.15)
    assert b == pytest.approx(bias, abs=0.12)


def test_round_trip() -> None:
    table = WinTable((0.05, 0.03), (0.4, 0.1), {"seed": 1})
    back = WinTable.from_json(table.to_json())
    assert (back.slope, back.bias) == (table.slope, table.bias)
    assert back.info == {"seed": 1}
    assert back.win(10, 99) == table.win(10, 1)  # past the end: the last curve


def test_too_big_a_file_is_refused() -> None:
    with pytest.raises(WinTableError):
        WinTable.from_json(" " * (MAX_TABLE_BYTES + 1))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@settings(max_examples=300)
@given(
    raw=st.binary(max_size=200)
    | st.builds(
        lambda s, b, i: json.dumps(
            {"format": "meeple-winprob-1", "slope": s, "bias": b, "info": i}
        ),
        _json,
        _json,
        _json,
    )
    | st.builds(
        lambda s, b: json.dumps({"format": "meeple-winprob-1", "slope": s, "bias": b}),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=120),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=120),
    )
)
def test_a_bad_file_is_a_win_table_error(raw: str | bytes) -> None:
    """Any bytes or JSON either decode to a usable table or raise WinTableError."""
    try:
        table = WinTable.from_json(raw)
    except WinTableError:
        return
    for u in (0, 7, 50, 200):
        p = table.win(25.0, u)
        assert 0.0 <= p <= 1.0


# --- the stopping rule and the choice ---


def _sim(name: str, values: list[float], wins: list[float], equity: float = 0.0) -> _Candidate:
    c = _Candidate(Move((), 7, 7, Direction.ACROSS, name, 0), equity, "")
    for v, w in zip(values, wins, strict=True):
        c.add(v, w)
    return c


def test_stopping_rule_drops_only_candidates_far_behind() -> None:
    """A candidate behind by many standard errors is dropped, a close one is not."""
    rng = Random(2)
    best = _sim("best", [rng.gauss(20, 10) for _ in range(30)], [0.6] * 30)
    close = _sim("close", [rng.gauss(18, 10) for _ in range(30)], [0.6] * 30)
    far = _sim("far", [rng.gauss(-10, 10) for _ in range(30)], [0.6] * 30)
    assert _drop([best, close, far], by_wins=False) == 1
    assert far.dropped
    assert not close.dropped
    assert not best.dropped
    assert _pick([far, close, best], by_wins=False) is best


def test_by_wins_the_choice_is_the_likelier_win_not_the_bigger_spread() -> None:
    """Behind late: the candidate that wins more often is played although another
    gives more spread on average; by spread, the other one."""
    safe = _sim("safe", [12.0, 10.0, 11.0, 13.0] * 10, [0.05, 0.02, 0.04, 0.05] * 10, 12)
    swing = _sim("swing", [-20.0, 40.0, -25.0, 35.0] * 10, [0.0, 0.6, 0.0, 0.5] * 10, 8)
    assert _pick([safe, swing], by_wins=True) is swing
    assert _pick([safe, swing], by_wins=False) is safe


def _late_position(seed: int, lead: int) -> Position | None:
    """A position from a greedy game on the small list with 8-25 tiles in the bag."""
    lexicon = small_lexicon()
    game = SimGame.new(Random(seed))
    greedy = GreedyPlayer(lexicon)
    while not game.over and len(game.bag) > WIN_BAG:
        p = game.turn
        pos = Position(game.board, game.racks[p], len(game.bag), unseen=game.unseen(p))
        choice = greedy.choose(pos, Budget(0.0))
        if isinstance(choice, Move):
            game.play(choice)
        elif game.can_exchange(len(getattr(choice, "tiles", ""))):
            game.exchange(choice.tiles, Random(seed))  # type: ignore[union-attr]
        else:
            game.pass_()
    if game.over or len(game.bag) <= 7:
        return None
    p = game.turn
    return Position(
        game.board, game.racks[p], len(game.bag), unseen=game.unseen(p), scores=(300 + lead, 300)
    )


def test_close_late_positions_are_played_for_the_win_and_decided_ones_for_spread() -> None:
    """With a close lead near the end the simulation chooses by the chance to win (and
    plays a candidate the stopping rule kept); far ahead, or with the scores unknown,
    by spread; far from the end, by spread."""
    lexicon = small_lexicon()
    seen_win = 0
    for seed in range(12):
        close = _late_position(seed, 5)
        if close is None:
            continue
        strong = StrongPlayer(lexicon, default_leaves())
        choice = strong.choose(close, Budget(1.0, None, max_rounds=24), Random(1))
        if strong.last_method == "simulation-win":
            seen_win += 1
            kept = [c for c in strong.last_candidates if not c.dropped]
            assert any(c.choice == choice for c in kept)
        far = Position(
            close.board, close.rack, close.bag_count, unseen=close.unseen, scores=(900, 100)
        )
        strong.choose(far, Budget(1.0, None, max_rounds=24), Random(1))
        assert strong.last_method in ("simulation", "static")
        unknown = Position(
            close.board,
            close.rack,
            close.bag_count,
            unseen=close.unseen,
            scores=close.scores,
            scores_known=False,
        )
        strong.choose(unknown, Budget(1.0, None, max_rounds=24), Random(1))
        assert strong.last_method in ("simulation", "static")
    assert seen_win >= 3


def test_choose_passes_the_scores_on() -> None:
    """The bots' one-call ``choose`` plays for the win only when told the scores."""
    lexicon = small_lexicon()
    close = None
    for seed in range(12):
        close = _late_position(seed, 0)
        if close is not None:
            break
    assert close is not None
    strong = StrongPlayer(lexicon, default_leaves())
    budget = Budget(1.0, None, max_rounds=24)
    choose(
        close.board,
        close.rack,
        lexicon,
        bag_count=close.bag_count,
        player=strong,
        budget=budget,
        rng=Random(1),
        scores=close.scores,
    )
    with_scores = strong.last_method
    choose(
        close.board,
        close.rack,
        lexicon,
        bag_count=close.bag_count,
        player=strong,
        budget=Budget(1.0, None, max_rounds=24),
        rng=Random(1),
    )
    assert strong.last_method in ("simulation", "static")
    assert with_scores in ("simulation-win", "static")


def test_the_stopping_rule_spends_the_rounds_on_the_candidates_kept() -> None:
    """In real positions the stopping rule drops some candidates, which then stop
    being simulated, and never the one played."""
    lexicon = small_lexicon()
    dropped = 0
    for seed in range(8):
        pos = _late_position(seed, 200)
        if pos is None:
            continue
        strong = StrongPlayer(lexicon, default_leaves())
        choice = strong.choose(pos, Budget(1.0, None, max_rounds=42), Random(3))
        dropped += strong.last_dropped
        runs = {c.runs for c in strong.last_candidates if not c.dropped}
        assert runs == {42} or not strong.last_candidates
        for c in strong.last_candidates:
            if c.dropped:
                assert c.runs < 42
                assert c.choice != choice
    assert dropped >= 1

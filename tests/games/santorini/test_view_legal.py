"""The seat view's ``legal``: exactly the steps the engine accepts, for any gods."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.games.santorini import (
    CELLS,
    DOME,
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
    Phase,
    PlaceWorker,
    RuleError,
    Rules,
    Sex,
    Undo,
    advance,
    legal_actions,
)
from meeple.games.santorini.view import legal_view, seat_view

from .positions import at, play

OPEN = """
0  0  0  0  0
0  A  B  0  0
0  0  0  0  0
0  0  0  0  0
0  a  0  0  b
"""


def _accepted(game: Game, action: Action) -> bool:
    """Whether the engine takes ``action`` now (the game is left as it was)."""
    try:
        if isinstance(action, Undo):
            copy.deepcopy(game).apply(action)
        else:
            advance(game.state, action)
    except RuleError:
        return False
    return True


def _universe(game: Game, p: int) -> list[Action]:
    """Every action of seat ``p`` worth trying: all gods, seats, cells and levels. A
    move or build starts from a cell holding a worker (any seat's) or from one of two
    empty cells: the engine refuses every other start the same way (no worker there)."""
    state = game.state
    n = state.players
    starts = [c for c in state.workers if c is not None]
    starts += [c for c in CELLS if c not in starts][:2]
    out: list[Action] = []
    out += [OfferGod(p, g) for g in GODS] + [ChooseGod(p, g) for g in GODS]
    out += [ChooseStarter(p, k) for k in range(-1, n + 1)]
    out += [PlaceWorker(p, c, sex) for c in CELLS for sex in (None, Sex.MALE, Sex.FEMALE)]
    out += [Move(p, a, b) for a in starts for b in CELLS]
    out += [Build(p, a, b, level) for a in starts for b in CELLS for level in range(1, DOME + 1)]
    out += [Pass(p), Undo(p), Undo(p, all=True), Lose(p)]
    return out


def _readdressed(actions: list[Action], p: int) -> list[Action]:
    """The same actions sent by seat ``p``."""
    return [replace(a, player=p) for a in actions]


def _listed(legal: dict[str, Any] | None, phase: Phase, p: int) -> set[Action]:
    """The actions a ``legal`` entry names (placements by cell, with any sex)."""
    if legal is None:
        return set()
    god = OfferGod if phase is Phase.POOL else ChooseGod
    out: set[Action] = {god(p, g) for g in legal["gods"]}
    out |= {ChooseStarter(p, k) for k in legal["starters"]}
    out |= {PlaceWorker(p, c, None) for c in legal["place"]}
    out |= {Move(p, a, b) for a, b in legal["moves"]}
    out |= {Build(p, a, b, level) for a, b, level in legal["builds"]}
    if legal["pass"]:
        out.add(Pass(p))
    if legal["undo"]:
        out |= {Undo(p), Undo(p, all=True)}
    if legal["lose"]:
        out.add(Lose(p))
    return out


def _check_seat(game: Game, p: int) -> None:
    """Seat ``p``'s ``legal`` against the engine: the seat on turn over the whole
    universe; a seat off turn (None) over everything the seat on turn may do."""
    view = seat_view(game, p)
    assert json.loads(json.dumps(view)) == view
    legal = view["legal"]
    if legal is None and not game.is_over and game.state.turn != p:
        me = game.state.turn
        tried = _readdressed([*legal_actions(game.state), Undo(me), Pass(me), Lose(me)], p)
        assert not any(_accepted(game, a) for a in tried)
        return
    accepted = {a for a in _universe(game, p) if _accepted(game, a)}
    # A worker placed with its sex named is the same cell as one placed without.
    placed = {a for a in accepted if isinstance(a, PlaceWorker)}
    accepted -= placed
    accepted |= {PlaceWorker(p, a.cell, None) for a in placed}
    assert _listed(legal, game.state.phase, p) == accepted
    if legal is not None:
        for name in legal["gods"]:
            assert view["powers"][name] == GODS[name].description


@st.composite
def _rules(draw: st.DrawFn) -> tuple[Rules, int]:
    players = draw(st.integers(2, 3))
    gods = draw(st.lists(st.sampled_from(sorted(GODS)), min_size=players, max_size=5, unique=True))
    rules = Rules(
        players=players,
        gods=draw(st.booleans()),
        god_set=tuple(gods),
        challenger_picks_pool=draw(st.booleans()),
        auto_eliminate=draw(st.booleans()),
    )
    return rules, draw(st.integers(0, players - 1))


@settings(max_examples=10, deadline=None)
@given(setup=_rules(), data=st.data())
def test_legal_is_what_the_engine_accepts_in_random_games_with_random_gods(
    setup: tuple[Rules, int], data: st.DataObject
) -> None:
    """Through a random playout (undos and giving up included), for every seat at
    every state: each action ``legal`` lists is accepted by the engine, and each action
    the engine accepts — tried over every god, seat, cell pair and level — is listed."""
    rules, challenger = setup
    game = Game(rules, challenger)
    for _ in range(40):
        for p in range(rules.players):
            _check_seat(game, p)
        if game.is_over:
            break
        me = game.state.turn
        options: list[Action] = list(legal_actions(game.state))
        if game.can_undo(me):
            options.append(Undo(me))
        if game.phase is Phase.PLAY:
            options.append(Lose(me))
        if not options:
            break
        # Giving up ends a 2-player game at once: keep it rare.
        weights = [0 if isinstance(a, Lose) and len(options) > 1 else 1 for a in options]
        choices = [a for a, w in zip(options, weights, strict=True) if w] or options
        game.apply(data.draw(st.sampled_from(choices)))


def test_atlas_may_dome_every_cell_it_may_build_on() -> None:
    """Atlas: each buildable cell is listed with its block and with a dome."""
    s, _ = play(OPEN, ("Atlas", None), [Move(0, at(1, 1), at(2, 1))])
    legal = legal_view(s, 0)
    assert legal is not None
    builds = {(b, level) for a, b, level in legal["builds"] if a == at(2, 1)}
    cells = {b for b, _ in builds}
    assert at(1, 1) in cells
    assert builds == {(c, 1) for c in cells} | {(c, DOME) for c in cells}
    assert legal["moves"] == []
    assert not legal["pass"]


def test_artemis_after_a_move_may_move_the_same_worker_again_or_build() -> None:
    """Artemis: after a move the same worker's moves (not back) and builds are listed."""
    s, _ = play(OPEN, ("Artemis", None), [Move(0, at(1, 1), at(2, 1))])
    legal = legal_view(s, 0)
    assert legal is not None
    assert {a for a, _ in legal["moves"]} == {at(2, 1)}
    assert at(1, 1) not in {b for _, b in legal["moves"]}
    assert at(3, 1) in {b for _, b in legal["moves"]}
    assert {a for a, _, _ in legal["builds"]} == {at(2, 1)}


def test_prometheus_may_build_first_on_a_cell_it_may_also_move_to() -> None:
    """Prometheus: before moving, a cell may be both a move and a build target; after
    building first, the worker that built may not move up."""
    s, _ = play(OPEN, ("Prometheus", None))
    legal = legal_view(s, 0)
    assert legal is not None
    assert [at(1, 1), at(2, 2)] in legal["moves"]
    assert [at(1, 1), at(2, 2), 1] in legal["builds"]
    s, _ = advance(s, Build(0, at(1, 1), at(2, 2), 1))
    after = legal_view(s, 0)
    assert after is not None
    assert {a for a, _ in after["moves"]} == {at(1, 1)}
    assert at(2, 2) not in {b for _, b in after["moves"]}
    assert after["builds"] == []


def test_mortals_have_one_move_then_one_build_then_pass() -> None:
    """Without a god: moves first, then only builds by the moved worker, then pass."""
    s, _ = play(OPEN, (None, None))
    legal = legal_view(s, 0)
    assert legal is not None
    assert legal["builds"] == []
    assert not legal["pass"]
    assert legal["lose"]
    assert {a for a, _ in legal["moves"]} == {at(1, 1), at(4, 1)}
    s, _ = advance(s, Move(0, at(1, 1), at(2, 1)))
    legal = legal_view(s, 0, undo=True)
    assert legal is not None
    assert legal["undo"]
    assert legal["moves"] == []
    assert {a for a, _, _ in legal["builds"]} == {at(2, 1)}
    s, _ = advance(s, Build(0, at(2, 1), at(3, 1), 1))
    legal = legal_view(s, 0)
    assert legal is not None
    assert legal["pass"]
    assert not legal["moves"]
    assert not legal["builds"]


def test_nobody_off_turn_has_anything_legal() -> None:
    """The seat not on turn, and everybody once the game is over, get None."""
    s, _ = play(OPEN, (None, None))
    assert legal_view(s, 1) is None
    assert legal_view(s, 0) is not None


def test_the_set_up_lists_gods_starters_and_free_cells() -> None:
    """Pool, gods, starter and placement phases name what the seat on turn may pick."""
    game = Game(Rules(players=2, gods=True, god_set=("Atlas", "Pan", "Zeus")), challenger=0)
    legal = seat_view(game, 0)["legal"]
    assert legal["gods"] == ["Atlas", "Pan", "Zeus"]
    assert not legal["lose"]
    assert seat_view(game, 1)["legal"] is None
    game.apply_all([OfferGod(0, "Atlas"), OfferGod(0, "Zeus")])
    view = seat_view(game, 1)
    assert view["legal"]["gods"] == ["Atlas", "Zeus"]
    assert set(view["powers"]) == {"Atlas", "Zeus"}
    game.apply_all([ChooseGod(1, "Zeus"), ChooseGod(0, "Atlas")])
    assert seat_view(game, 0)["legal"]["starters"] == [0, 1]
    game.apply(ChooseStarter(0, 1))
    assert seat_view(game, 1)["legal"]["place"] == list(CELLS)
    game.apply(PlaceWorker(1, at(2, 2)))
    assert at(2, 2) not in seat_view(game, 1)["legal"]["place"]

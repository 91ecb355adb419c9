"""The alpha-beta Santorini player: its fast twin agrees with the engine, it plays only
legal turns with every god, wins in one, blocks in one, and keeps to its budget."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.santorini_match import (
    RandomPlayer,
    make_player,
    play_game,
    run_match,
)
from meeple.ai.santorini_native import core_module
from meeple.ai.santorini_search import (
    CLOCK_EVERY,
    LEVELS,
    WIN,
    AlphaBetaPlayer,
    SearchBudget,
    engine_key,
    mortal_children,
    mortal_node,
    search_turn,
)
from meeple.cli.main import main
from meeple.games.santorini import (
    CELLS,
    GODS,
    Build,
    ChooseGod,
    ChooseStarter,
    GameState,
    Move,
    OfferGod,
    Pass,
    Phase,
    PlaceWorker,
    Rules,
    advance,
    cell,
    from_diagram,
    new_game,
    turns,
)


def _random_position(seed: int, gods: tuple[str, ...] | None = None, players: int = 2) -> GameState:
    """A position reached by random whole turns from random placements (not over)."""
    rng = random.Random(seed)
    rules = Rules(players=players, gods=gods is not None)
    s = new_game(rules, challenger=players - 1)
    if gods is not None:
        for g in gods:
            s = advance(s, OfferGod(players - 1, g))[0]
        for seat in range(players):
            s = advance(s, ChooseGod(seat, gods[seat]))[0]
    s = advance(s, ChooseStarter(players - 1, 0))[0]
    while s.phase is Phase.PLACE:
        occ = s.occupancy()
        s = advance(s, PlaceWorker(s.turn, rng.choice([c for c in CELLS if occ[c] is None])))[0]
    for _ in range(rng.randrange(0, 10)):
        options = list(turns(s))
        if not options:
            break
        _route, after = rng.choice(options)
        if after.phase is not Phase.PLAY:
            break
        s = after
    return s


def _play_route(s: GameState, route: tuple[object, ...]) -> GameState:
    """Apply a route with the engine's checks (RuleError if a step is illegal)."""
    for action in route:
        s = advance(s, action)[0]  # type: ignore[arg-type]
    return s


# ------------------------------------------------------------------- the fast twin


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**9))
def test_fast_twin_yields_exactly_the_engines_turns(seed: int) -> None:
    s = _random_position(seed)
    node = mortal_node(s)
    assert node is not None
    engine = {
        (
            after.workers,
            tuple(4 if d else lv for lv, d in zip(after.levels, after.domes, strict=False)),
            after.winner if after.phase is Phase.OVER else -1,
        )
        for _route, after in turns(s)
    }
    twin = [(child[2], child[1], child[4]) for _move, child in mortal_children(node)]
    assert len(twin) == len(set(twin))
    assert set(twin) == engine
    # The incremental Zobrist key is the key computed from scratch.
    for _move, child in mortal_children(node)[:20]:
        if child[4] < 0:
            rebuilt = GameState(
                rules=s.rules,
                challenger=s.challenger,
                phase=Phase.PLAY,
                turn=child[3],
                gods=s.gods,
                starter=s.starter,
                levels=tuple(min(h, 3) if h < 4 else 0 for h in child[1]),
                domes=tuple(h == 4 for h in child[1]),
                workers=child[2],
                alive=s.alive,
                moved_up=s.moved_up,
            )
            again = mortal_node(rebuilt)
            assert again is not None
            assert again[0] == child[0]


BARE = "A a 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 B b"


def test_the_engine_key_tells_gods_and_sides_apart() -> None:
    a = from_diagram(BARE, gods=("Pan", "Atlas"))
    b = from_diagram(BARE, gods=("Atlas", "Pan"))
    assert engine_key(a) != engine_key(b)
    assert engine_key(a) == engine_key(from_diagram(BARE, gods=("Pan", "Atlas")))


# ------------------------------------------------------------ legal, every god


NATIVE = [
    False,
    pytest.param(
        True, marks=pytest.mark.skipif(core_module() is None, reason="no compiled core built")
    ),
]
"""The searches: the Python one, and the compiled core (where it is built)."""


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize("god", sorted(GODS))
def test_search_plays_legal_turns_with_every_god(god: str, native: bool) -> None:
    """Each god against a random other, on random positions, both seats to move."""
    rng = random.Random(god)
    others = [g for g in sorted(GODS) if g != god]
    for k in range(2):
        other = rng.choice(others)
        pair = (god, other) if k == 0 else (other, god)
        s = _random_position(rng.randrange(10**9), pair)
        if s.phase is not Phase.PLAY:
            continue
        result = search_turn(s, SearchBudget(max_nodes=40, max_depth=2), rng=rng, native=native)
        after = _play_route(s, result.route)
        assert after.phase is Phase.OVER or (after.turn != s.turn and not after.steps)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10**9))
def test_search_plays_legal_turns_with_three_players(seed: int) -> None:
    rng = random.Random(seed)
    gods = tuple(rng.sample(sorted(GODS), 3)) if seed % 2 else None
    s = _random_position(seed, gods, players=3)
    if s.phase is not Phase.PLAY:
        return
    result = search_turn(s, SearchBudget(max_nodes=25, max_depth=2), rng=rng)
    after = _play_route(s, result.route)
    assert after.phase is Phase.OVER or after.turn != s.turn


def test_player_plays_whole_games_with_gods_step_by_step() -> None:
    """A one-turn-deep player against a random one: the engine checks every step."""
    rng = random.Random(7)
    for g, gods in enumerate((("Triton", "Prometheus"),)):
        player = AlphaBetaPlayer(max_depth=1, clock=None)
        seats = (player, RandomPlayer()) if g % 2 == 0 else (RandomPlayer(), player)
        _winner, plies = play_game(seats, rng, gods=gods)  # raises on an illegal step
        assert plies > 0


# ------------------------------------------------------------------ tactics


@pytest.mark.parametrize("native", NATIVE)
def test_search_finds_the_win_in_one(native: bool) -> None:
    s = from_diagram(
        """
        0  0  0  0  0
        0  2A 3  0  0
        0  0  0  0  0
        0  1b 0  0  0
        a  0  0  0  B
        """
    )
    for engine_only in (False, True):
        result = search_turn(
            s, SearchBudget(max_depth=3), engine_only=engine_only, native=native and not engine_only
        )
        assert result.route == (Move(0, cell(1, 1), cell(1, 2)),)
        assert result.value >= WIN - 2


@pytest.mark.parametrize("native", NATIVE)
def test_search_finds_a_gods_win_in_one(native: bool) -> None:
    """Pan wins by moving down two levels: nothing but the engine's rules say so."""
    s = from_diagram(
        """
        0  0  0  0  0
        0  2A 0  0  0
        0  0  0  0  0
        0  0  0  0  b
        a  0  0  0  B
        """,
        gods=("Pan", "Atlas"),
    )
    result = search_turn(s, SearchBudget(max_depth=2), native=native)
    after = _play_route(s, result.route)
    assert after.phase is Phase.OVER
    assert after.winner == 0


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize("gods", [None, ("Atlas", "Athena"), ("Hephaestus", "Apollo")])
def test_search_blocks_the_opponents_win_in_one(gods: tuple[str, str] | None, native: bool) -> None:
    """The opponent stands on level 2 next to the one level-3 cell: it must be domed
    (or stood on) or the game is lost next turn."""
    s = from_diagram(
        """
        0  0  0  0  0
        0  A  0  0  0
        0  0  3  2B 0
        0  0  0  0  1
        a  0  0  1  1b
        """,
        gods=gods,
    )
    result = search_turn(s, SearchBudget(max_depth=2), native=native)
    after = _play_route(s, result.route)
    assert after.domes[cell(2, 2)] or after.occupant(cell(2, 2)) is not None
    assert result.value > -WIN + 100  # not resigned to a loss: the block holds


@pytest.mark.parametrize("native", NATIVE)
def test_search_sees_a_double_threat_coming(native: bool) -> None:
    """B on level 2 with two level-3 cells beside it (12 and 14) wins next turn unless
    the side to move wins first: the search knows it is lost (or wins)."""
    s = from_diagram(
        """
        0  0  0  0  0
        0  0  0  0  0
        0  0  3  2B 3
        A  0  0  0  0
        a  0  0  0  b
        """
    )
    result = search_turn(s, SearchBudget(max_depth=3), native=native)
    assert result.value <= -(WIN - 10)


# ------------------------------------------------------------------ budgets


class FakeClock:
    """Seconds that advance by ``step`` each time the clock is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


OPEN = """
0  1  0  2  0
1  A  2  1  0
0  1  a  0  1
0  2  B  1  0
1  0  0  b  0
"""


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize("gods", [None, ("Artemis", "Minotaur")])
def test_search_keeps_to_its_time_on_an_injected_clock(
    gods: tuple[str, str] | None, native: bool
) -> None:
    """With the clock advancing 5 ms a read (one read per CLOCK_EVERY nodes, the
    compiled core's own CLOCK_EVERY), a 20 ms budget stops within one read after the
    deadline."""
    s = from_diagram(OPEN, gods=gods)
    clock = FakeClock(0.005)
    budget = SearchBudget(0.02, clock)
    result = search_turn(s, budget, native=native)
    mod = core_module()
    every = mod.CLOCK_EVERY if native and mod is not None else CLOCK_EVERY
    assert clock.now <= 0.02 + 0.005 * 3
    assert result.nodes <= (clock.reads + 1) * every
    _play_route(s, result.route)


@pytest.mark.parametrize("native", NATIVE)
def test_search_keeps_to_its_node_budget_and_is_deterministic(native: bool) -> None:
    s = from_diagram(OPEN)
    first = search_turn(s, SearchBudget(max_nodes=500), native=native)
    assert first.nodes <= 500
    assert first.depth >= 1
    again = search_turn(s, SearchBudget(max_nodes=500), native=native)
    assert (again.route, again.value, again.nodes) == (first.route, first.value, first.nodes)
    deeper = search_turn(s, SearchBudget(max_nodes=20_000), native=native)
    assert deeper.depth > first.depth


def test_player_searches_once_a_turn_then_follows_its_plan() -> None:
    s = from_diagram(OPEN)
    player = AlphaBetaPlayer(max_nodes=300, clock=None)
    rng = random.Random(0)
    first = player.choose(s, rng)
    searched = player.last
    s = advance(s, first)[0]
    second = player.choose(s, rng)
    assert player.last is searched  # no second search
    assert isinstance(second, Build)
    s = advance(s, second)[0]
    assert player.choose(s, rng) == Pass(0)


def test_levels_are_think_time_and_depth() -> None:
    assert [LEVELS[n].max_depth for n in ("easy", "medium")] == [1, 3]
    assert LEVELS["hard"].think_time >= LEVELS["medium"].think_time > LEVELS["easy"].think_time
    easy = AlphaBetaPlayer.at_level("easy", clock=FakeClock(0.0001))
    easy.choose(from_diagram(OPEN), random.Random(0))
    assert easy.last is not None
    assert easy.last.depth == 1


# ------------------------------------------------------------------ matches


def test_match_summary_has_the_scrabble_shape() -> None:
    players = (AlphaBetaPlayer(max_depth=1, clock=None, name="ab"), RandomPlayer())
    result = run_match(players, 4, lambda g: random.Random(g), gods=True)
    assert result.games == 4
    assert result.wins >= 3
    line = result.summary()
    assert line.startswith(f"ab v random: {result.wins}-{result.losses}-{result.draws}, win rate ")
    assert "95 % CI" in line
    assert "mean plies" in line
    assert "s per move" in line


def test_match_command_prints_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["santorini", "match", "easy", "random", "--games", "2", "--think-time", "0.01"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("easy v random: ")
    assert "mean plies" in out
    assert make_player("classic").name == "classic"


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**9))
def test_the_fast_evaluation_is_the_evaluation(seed: int) -> None:
    from meeple.ai.santorini_eval import default_weights, evaluate_board, evaluate_mortal

    s = _random_position(seed)
    node = mortal_node(s)
    assert node is not None
    weights = default_weights()
    for _move, child in [(None, node), *mortal_children(node)[:10]]:
        h, wk = child[1], child[2]
        for root in (0, 1):
            for turn in (0, 1):
                assert evaluate_mortal(h, wk, root, turn, weights.weights) == evaluate_board(
                    h, wk, root, turn, 2, weights
                )

"""Scrabble players: greedy, strong (equity, exchanges, simulation, endgame), budgets, matches."""

from __future__ import annotations

from random import Random

import pytest
from tests.ai.words import small_lexicon

from meeple.ai.leaves import LeaveValues, SuperLeaves, default_leaves, features, leaves_for
from meeple.ai.match import MatchResult, play_game, run_match, wilson_interval
from meeple.ai.scrabble import (
    BotSettings,
    Budget,
    ExchangeChoice,
    GreedyPlayer,
    PassChoice,
    Position,
    StrongPlayer,
    choose,
    make_player,
    unseen_tiles,
)
from meeple.ai.selfplay import SimGame
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import get_generator, leave_of
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return small_lexicon()


class FakeClock:
    """A clock that moves ``step`` seconds each time it is read: deterministic budgets."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def test_budget_reads_the_injected_clock() -> None:
    """A budget expires when its clock passes the deadline; without a clock it never does."""
    clock = FakeClock(0.25)
    budget = Budget(1.0, clock)
    assert not budget.expired()  # reads 0.5, deadline 1.25
    assert budget.left() == pytest.approx(0.5)  # reads 0.75
    assert not budget.expired()  # 1.0
    assert budget.expired()  # 1.25
    assert Budget(0.0, None).expired()  # no clock, no time: spent at once
    clockless = Budget(2.0, None)
    assert not clockless.expired()
    assert clockless.max_rounds == 32  # bounded by rounds instead


def test_greedy_plays_the_best_score_and_skips_refused_plays(lexicon: Lexicon) -> None:
    """Greedy takes the top-scoring play; skip=1 takes the second; same as the ranking."""
    board = Board()
    ranked = get_generator("python").best(board, "RETAINS", lexicon, n=3)
    player = GreedyPlayer(lexicon)
    position = Position(board, "RETAINS", 80)
    assert player.choose(position, Budget(0.0)) == ranked[0]
    assert player.choose(position, Budget(0.0), skip=1) == ranked[1]
    assert ranked[0].score >= 50  # a bingo


def test_no_play_means_exchange_then_pass(lexicon: Lexicon) -> None:
    """With nothing playable: exchange when the bag allows, else pass."""
    for player in (GreedyPlayer(lexicon), StrongPlayer(lexicon, LeaveValues({}))):
        choice = player.choose(Position(Board(), "QVVWWJK", 50), Budget(0.0))
        assert isinstance(choice, ExchangeChoice)
        assert isinstance(player.choose(Position(Board(), "QVVWWJK", 3), Budget(0.0)), PassChoice)


def test_strong_ranks_by_equity_and_keeps_good_tiles(lexicon: Lexicon) -> None:
    """With no time, strong picks the best score + leave: here keeping the blank pays."""
    leaves = LeaveValues({"tile:?": 30.0})
    strong = StrongPlayer(lexicon, leaves)
    greedy = GreedyPlayer(lexicon)
    position = Position(Board(), "CAT?QVV", 80)
    g = greedy.choose(position, Budget(0.0))
    s = strong.choose(position, Budget(0.0))
    assert isinstance(g, Move)
    assert isinstance(s, Move)
    assert "?" in g.rack_tiles  # greedy spends the blank for points
    assert "?" not in s.rack_tiles  # strong keeps it
    assert strong.last_method == "static"


def test_strong_exchanges_by_equity(lexicon: Lexicon) -> None:
    """A rack whose every play leaves junk is exchanged when the leave values say so."""
    leaves = LeaveValues({"tile:V": -20.0, "tile:W": -20.0, "tile:E": 5.0, "tile:S": 5.0})
    strong = StrongPlayer(lexicon, leaves)
    choice = strong.choose(Position(Board(), "VVWWEAT", 80), Budget(0.0))
    assert isinstance(choice, ExchangeChoice)
    assert sorted(choice.tiles) == sorted("VVWWAT")  # keeps E, the only good tile


def test_simulation_is_deterministic_with_a_seed_and_fake_clock(lexicon: Lexicon) -> None:
    """Same seed and budget (fake clock) -> same choice and rounds; the clock bounds the work."""
    game = SimGame.new(Random(3))
    game.play(GreedyPlayer(lexicon).choose(_position(game), Budget(0.0)))  # type: ignore[arg-type]
    results = []
    for _ in range(2):
        strong = StrongPlayer(lexicon, default_leaves())
        clock = FakeClock(0.001)
        choice = strong.choose(_position(game), Budget(0.3, clock), Random(9))
        results.append((choice, strong.last_rounds, strong.last_method))
        assert clock.now <= 0.3 + 0.01  # stopped at the deadline
    assert results[0] == results[1]
    assert results[0][2] == "simulation"
    assert results[0][1] >= 1


def _position(game: SimGame) -> Position:
    p = game.turn
    return Position(game.board, game.racks[p], len(game.bag), unseen=game.unseen(p))


def _exact(board: Board, me: str, opp: str, lexicon: Lexicon, passed: bool = False) -> float:
    """Brute-force endgame value for the side to move (no pruning, full depth)."""
    gen = get_generator("python")
    best = float("-inf")
    for m in gen.plays(board, me, lexicon):
        left = leave_of(me, m)
        if not left:
            value = m.score + 2.0 * sum(ENGLISH.value(t) for t in opp)
        else:
            after = board.copy()
            for t in m.tiles:
                after.place(t.x, t.y, t.tile)
            value = m.score - _exact(after, opp, left, lexicon)
        best = max(best, value)
    if passed:
        pass_value = float(sum(ENGLISH.value(t) for t in opp) - sum(ENGLISH.value(t) for t in me))
    else:
        pass_value = -_exact(board, opp, me, lexicon, passed=True)
    return max(best, pass_value)


def _value_of(board: Board, m: Move, me: str, opp: str, lexicon: Lexicon) -> float:
    left = leave_of(me, m)
    if not left:
        return m.score + 2.0 * sum(ENGLISH.value(t) for t in opp)
    after = board.copy()
    for t in m.tiles:
        after.place(t.x, t.y, t.tile)
    return m.score - _exact(after, opp, left, lexicon)


@pytest.mark.parametrize(("mine", "theirs"), [("AT", "S"), ("SE", "T"), ("RE", "NI"), ("OX", "EA")])
def test_endgame_search_matches_brute_force(lexicon: Lexicon, mine: str, theirs: str) -> None:
    """Bag empty: the search's play has the brute-force optimum value, and says it is exact."""
    board = Board()
    for i, c in enumerate("CATS"):
        board.place(6 + i, 7, c)
    strong = StrongPlayer(lexicon, LeaveValues({}))
    choice = strong.choose(Position(board, mine, 0, unseen=theirs), Budget(5.0, None), Random(1))
    assert strong.last_method == "endgame-exact"
    assert isinstance(choice, Move)
    plays = get_generator("python").plays(board, mine, lexicon)
    best = max(_value_of(board, m, mine, theirs, lexicon) for m in plays)
    assert _value_of(board, choice, mine, theirs, lexicon) == pytest.approx(best)


def test_endgame_stops_at_the_budget(lexicon: Lexicon) -> None:
    """With almost no time the endgame still answers (a legal play), within the budget."""
    board = Board()
    for i, c in enumerate("CATS"):
        board.place(6 + i, 7, c)
    strong = StrongPlayer(lexicon, LeaveValues({}))
    clock = FakeClock(0.01)
    choice = strong.choose(Position(board, "RETAINS", 0, unseen="AEIORST"), Budget(0.05, clock))
    assert isinstance(choice, (Move, ExchangeChoice, PassChoice))
    assert clock.now < 0.5


def test_unseen_tiles_are_the_set_minus_board_and_rack() -> None:
    """100 tiles - board - rack; a blank on the board counts as ?."""
    board = Board()
    board.place(7, 7, "a")
    board.place(8, 7, "T")
    unseen = unseen_tiles(board, "EEQ")
    assert len(unseen) == 100 - 2 - 3
    assert unseen.count("?") == 1
    assert unseen.count("Q") == 0


def test_leave_features_and_values() -> None:
    """Features count tiles, duplicates, vowel/consonant mix and a lone Q; values add them."""
    f = features("EEQ?")
    assert f["tile:E"] == 2
    assert f["dup:E"] == 1
    assert f["mix:2/1"] == 1
    assert f["q-no-u"] == 1
    leaves = LeaveValues({"tile:E": 1.5, "dup:E": -2.0, "q-no-u": -5.0})
    assert leaves.value("EEQ?") == pytest.approx(1.5 * 2 - 2.0 - 5.0)
    assert leaves.get("", 0.0) == 0.0
    assert LeaveValues.from_json(leaves.to_json()).weights == leaves.weights


def test_committed_leave_table_is_sensible() -> None:
    """The derived table values a blank above a Q and an empty leave at 0."""
    leaves = default_leaves()
    assert leaves.info["script"] == "scripts/derive_leaves.py"
    assert leaves.value("?") > leaves.value("Q")
    assert leaves.value("") == 0.0


def test_choose_uses_the_installed_bot_settings(lexicon: Lexicon) -> None:
    """choose() without a player plays at the installed level; the clock bounds it."""
    from meeple.ai import scrabble

    old = scrabble.bot_settings()
    try:
        scrabble.set_bot_settings(BotSettings("strong", 0.05, FakeClock(0.01), Random(2)))
        choice = choose(Board(), "RETAINS", lexicon, bag_count=80)
        assert isinstance(choice, Move)
        assert choice.score >= 50
    finally:
        scrabble.set_bot_settings(old)


def test_budget_never_exceeds_the_game_clock() -> None:
    """With a game clock, the budget is a share of the time left, never all of it."""
    settings = BotSettings("strong", 1.0, FakeClock(0.0))
    assert settings.budget(80, None).left() == pytest.approx(1.0)
    assert settings.budget(80, 5.0).left() < 5.0 / 3
    assert settings.budget(0, 0.5).left() == 0.0


def test_match_alternates_and_reports(lexicon: Lexicon) -> None:
    """A short match: games add up, spreads are recorded, the summary has the issue's shape."""
    players = (make_player("greedy", lexicon), make_player("greedy", lexicon))
    result = run_match(players, 4, lambda g: Random(g), think_time=0.0)
    assert result.games == 4
    assert len(result.spreads) == 4
    line = result.summary()
    assert line.startswith("greedy v greedy: ")
    assert "win rate" in line
    assert "95 % CI" in line
    assert line.endswith(" s per move")


def test_a_game_ends_with_tiles_conserved(lexicon: Lexicon) -> None:
    """A played-out game: the board, racks and bag hold exactly the 100 tiles."""
    game = play_game((GreedyPlayer(lexicon), GreedyPlayer(lexicon)), Random(4), think_time=0.0)
    assert game.over
    tiles = "".join(t for _, _, t in game.board.tiles())
    blanks = sum(1 for t in tiles if t.islower())
    total = len(tiles) + sum(len(r) for r in game.racks) + len(game.bag)
    assert total == 100
    assert blanks <= 2


def test_wilson_interval_and_summary_format() -> None:
    """The issue's example line: 312-180-8 is 63.2 % with a CI around it."""
    result = MatchResult("strong", "greedy", 312, 180, 8, 11550, 500, 420.0)
    assert result.summary() == (
        "strong v greedy: 312-180-8, win rate 63.2 % (95 % CI 58.9–67.3), "
        "mean spread +23.1, 0.84 s per move"
    )
    lo, hi = wilson_interval(0.5, 100)
    assert lo < 0.5 < hi


def test_enable_is_played_with_its_own_self_play_table() -> None:
    """ENABLE (the benchmark's list and a table option) gets its self-play leave table
    (issue 37), not the GCIDE feature model that valued S below nothing: on a list with
    plurals an S kept is worth points."""
    table = leaves_for("enable")
    assert isinstance(table, SuperLeaves)
    assert table.info["lexicon"] == "enable"
    assert str(table.info["command"]).startswith("python scripts/fit_superleaves.py")
    assert table.value("?") > table.value("S") > 0 > table.value("Q")
    assert default_leaves().value("S") < 0  # what ENABLE was played with before

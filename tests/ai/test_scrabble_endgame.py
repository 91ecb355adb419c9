"""Scrabble endgame (bag empty): the strong player's exact search against brute force."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from meeple.ai.leaves import LeaveValues
from meeple.ai.scrabble import Budget, Choice, PassChoice, Position, StrongPlayer, _Candidate
from meeple.ai.scrabble_endgame import EndgameSolver, PreendgameResult, draws, preendgame
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import get_generator, leave_of
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH

WORDS = """
AA AB AD AE AG AH AI AL AM AN AR AS AT AW AX AY BA BE BI BO BY DA DE DO ED EF EH EL EM
EN ER ES EX FA FE GO HA HE HI HM HO ID IF IN IS IT JO KA KI LA LI LO MA ME MI MO MU MY
NA NE NO NU OD OE OF OH OI OM ON OP OR OS OW OX OY PA PE PI QI RE SH SI SO TA TI TO UH
UM UN UP US UT WE WO XI XU YA YE YO ZA
ACE ACT ADO AGE AID AIL AIM AIR ALE ANT ANE ANY APE ARE ARM ART ATE BAD BAT BED BET BIT
CAT COT DOE DOT EAR EAT EEL END ERA ETA HAT HEN HER HIT ICE ION IRE ITS LET LIE LIT MAT
NET NIT NOR NOT OAR OAT ODE ONE ORE OUR OUT PAT PEN PET PIE PIN PIT RAN RAT RED RET RID
ROE ROT SAT SEA SET SIN SIR SIT SON TAN TAR TEA TEN TIE TIN TOE TON TOR USE CATS RATS
ARTS ATES EARN EAST EATS IONS IRES NEAR NEST NETS NOTE RAIN RANT RATE REST RIOT RISE
"""
LEXICON = Lexicon.from_words(WORDS.split(), name="small")
LETTERS = "AAEEIOSTRNQZXJ"
BOARDS = ["CATS", "QI", "ZA", "OX", "JO"]


def _points(rack: str) -> int:
    return sum(ENGLISH.value(t) for t in rack)


def _exact(board: Board, me: str, opp: str, passed: bool = False) -> float:
    """The side to move's best final spread from here: every line, no pruning.

    Rules: going out gains twice the other rack; two passes in a row end the game and
    each side loses its own rack.
    """
    best = -1e9
    for m in get_generator("python").plays(board, me, LEXICON):
        best = max(best, _after(board, m, me, opp))
    if passed:
        return max(best, float(_points(opp) - _points(me)))
    return max(best, -_exact(board, opp, me, passed=True))


def _after(board: Board, m: Move, me: str, opp: str) -> float:
    left = leave_of(me, m)
    if not left:
        return m.score + 2.0 * _points(opp)
    after = board.copy()
    for t in m.tiles:
        after.place(t.x, t.y, t.tile)
    return m.score - _exact(after, opp, left)


def _value(board: Board, choice: Choice, me: str, opp: str) -> float:
    if isinstance(choice, Move):
        return _after(board, choice, me, opp)
    assert isinstance(choice, PassChoice)
    return -_exact(board, opp, me, passed=True)


racks = st.text(alphabet=LETTERS, min_size=1, max_size=3)


@settings(max_examples=60)
@given(word=st.sampled_from(BOARDS), mine=racks, theirs=racks)
# Found by make test: a play's reply was searched in the play's window unshifted by its
# score (the child's window is the parent's less the score), so a cut-off reply read 6.
@example(word="OX", mine="ARS", theirs="ARS")
def test_endgame_choice_is_the_brute_force_optimum(word: str, mine: str, theirs: str) -> None:
    """Bag empty: the strong player's choice (a play or a pass) has the brute-force value."""
    board = Board()
    for i, c in enumerate(word):
        board.place(6 + i, 7, c)
    strong = StrongPlayer(LEXICON, LeaveValues({}))
    position = Position(board, mine, 0, unseen=theirs)
    choice = strong.choose(position, Budget(5.0, None), Random(1))
    if strong.last_method != "endgame-exact":  # no play at all: a pass
        assert isinstance(choice, PassChoice)
        assert not get_generator("python").plays(board, mine, LEXICON)
        return
    best = _exact(board, mine, theirs)
    assert _value(board, choice, mine, theirs) == best
    assert strong.last_value == best
    assert strong.last_line[0] == choice
    assert _line_value(strong.last_line, mine, theirs) == best


def _line_value(line: list[Choice], me: str, opp: str) -> float:
    """The spread for the first mover when both sides play ``line`` out."""
    total = 0.0
    sign = 1.0
    passed = False
    for action in line:
        if isinstance(action, PassChoice):
            if passed:
                return total + sign * (_points(opp) - _points(me))
            passed = True
        else:
            assert isinstance(action, Move)
            passed = False
            total += sign * action.score
            me = leave_of(me, action)
            if not me:
                return total + sign * 2 * _points(opp)
        me, opp, sign = opp, me, -sign
    raise AssertionError(f"the line does not end the game: {line}")


# --- the solver on its own: narrow search labelled, full width exact ---


@settings(max_examples=20)
@given(word=st.sampled_from(BOARDS), mine=racks, theirs=racks, passed=st.booleans())
def test_solver_value_is_the_brute_force_value(
    word: str, mine: str, theirs: str, passed: bool
) -> None:
    """With time to finish, the solver's value is exact and equals the full tree's, also
    when a pass now ends the game (five scoreless turns behind the root)."""
    board = _board(word)
    solver = EndgameSolver(get_generator(), LEXICON, expired=lambda: False)
    result = solver.solve(board, mine, theirs, passed=passed)
    assert result is not None
    assert result.exact
    assert result.value == _exact(board, mine, theirs, passed=passed)
    if result.move is not None:
        assert _after(board, result.move, mine, theirs) == result.value


@settings(max_examples=30)
@given(word=st.sampled_from(BOARDS), mine=racks, theirs=racks)
# Found by the suite: a narrowed subtree's table entry, reused by the next iteration,
# let the narrow search call 11 exact where the game is worth 3.
@example(word="QI", mine="AIO", theirs="AIO")
def test_narrow_search_is_never_labelled_exact_when_it_left_plays_out(
    word: str, mine: str, theirs: str
) -> None:
    """A width-limited search that dropped plays anywhere says so (``exact`` is False);
    when it kept every play it is the full search, and exact."""
    board = _board(word)
    solver = EndgameSolver(get_generator(), LEXICON, width=1, root_width=1)
    result = solver.solve(board, mine, theirs, full=False)
    assert result is not None
    assert result.narrow
    if len(get_generator().plays(board, mine, LEXICON)) > 1:
        assert not result.exact
    if result.exact:
        assert result.value == _exact(board, mine, theirs)
    # The bots' widths: a subtree narrowed in one iteration and reused from the table
    # in the next still marks the result not exact.
    result = EndgameSolver(get_generator(), LEXICON).solve(board, mine, theirs, full=False)
    assert result is not None
    if result.exact:
        assert result.value == _exact(board, mine, theirs)


def test_a_search_out_of_time_before_its_first_iteration_gives_nothing() -> None:
    """Time spent before the first node: no result (the player falls back on equity)."""
    solver = EndgameSolver(get_generator(), LEXICON, expired=lambda: True)
    # The clock is read every 16 nodes: a position with plays reaches the 16th at once.
    assert solver.solve(_board("CATS"), "AERST", "EINOT") is None


# --- pre-endgame: one tile in the bag ---


def _pre_value(board: Board, m: Move, mine: str, unseen: str) -> float:
    """A play's expected final spread with one tile in the bag, by the full tree."""
    left = leave_of(mine, m)
    after = board.copy()
    for t in m.tiles:
        after.place(t.x, t.y, t.tile)
    total = 0.0
    for i, tile in enumerate(unseen):
        if tile in unseen[:i]:
            continue
        weight = unseen.count(tile) / len(unseen)
        opp = unseen.replace(tile, "", 1)
        total += weight * (m.score - _exact(after, opp, left + tile))
    return total


pre_racks = st.text(alphabet=LETTERS, min_size=1, max_size=2)


@settings(max_examples=30)
@given(
    word=st.sampled_from(BOARDS), mine=pre_racks, unseen=st.text(LETTERS, min_size=2, max_size=3)
)
def test_preendgame_values_are_the_brute_force_expectations(
    word: str, mine: str, unseen: str
) -> None:
    """Each candidate's value is its expected final spread over the tile the bag holds."""
    board = _board(word)
    plays = list(get_generator().best(board, mine, LEXICON, n=3))
    result = preendgame(get_generator(), LEXICON, board, mine, unseen, plays)
    if not plays:
        return
    assert result is not None
    assert result.exact
    for m, value in zip(plays, result.values, strict=True):
        assert value == pytest.approx(_pre_value(board, m, mine, unseen))


@settings(max_examples=20)
@given(
    word=st.sampled_from(BOARDS), mine=pre_racks, unseen=st.text(LETTERS, min_size=2, max_size=3)
)
def test_strong_player_with_one_tile_in_the_bag_plays_the_best_expectation(
    word: str, mine: str, unseen: str
) -> None:
    """Bag of one: the strong player's play has the best expected spread of its candidates
    (far ahead, so the spread decides, not the chance to win)."""
    board = _board(word)
    strong = StrongPlayer(LEXICON, LeaveValues({}), candidates=20)
    position = Position(board, mine, 1, unseen=unseen, scores=(400, 100))
    choice = strong.choose(position, Budget(5.0, None), Random(1))
    plays = get_generator().best(board, mine, LEXICON, n=20, leave=LeaveValues({}))
    if not plays:
        return
    assert strong.last_method == "preendgame-exact"
    assert isinstance(choice, Move)
    best = max(_pre_value(board, m, mine, unseen) for m in plays)
    assert _pre_value(board, choice, mine, unseen) == pytest.approx(best)
    assert strong.last_value == pytest.approx(best)


def test_preendgame_plays_to_win_when_the_game_is_close() -> None:
    """Close game: the candidate with the better chance to win beats a higher mean."""
    result = PreendgameResult(values=(10.0, 4.0), wins=(0.5, 0.75), depth=1, exact=True)
    assert result.best(by_wins=True) == 1
    assert result.best(by_wins=False) == 0


def test_draws_weigh_each_unseen_tile_by_its_count() -> None:
    """One tile in the bag: each distinct unseen tile, its share, the opponent's rack."""
    got = draws("AAB?")
    assert [(d.tile, d.weight, sorted(d.opp)) for d in got] == [
        ("A", 0.5, sorted("AB?")),
        ("B", 0.25, sorted("AA?")),
        ("?", 0.25, sorted("AAB")),
    ]


def _board(word: str) -> Board:
    board = Board()
    for i, c in enumerate(word):
        board.place(6 + i, 7, c)
    return board


@settings(max_examples=20)
@given(word=st.sampled_from(BOARDS), mine=racks, theirs=racks, behind=st.integers(0, 5))
@example(word="QI", mine="AIO", theirs="AIO", behind=2)
def test_strong_player_knows_when_a_pass_ends_the_game(
    word: str, mine: str, theirs: str, behind: int
) -> None:
    """After five scoreless turns a pass ends the game at once (the standard variant's
    six); before that, the search's two-passes end gives the same value."""
    board = _board(word)
    strong = StrongPlayer(LEXICON, LeaveValues({}))
    position = Position(board, mine, 0, unseen=theirs, scoreless_turns=behind)
    choice = strong.choose(position, Budget(5.0, None), Random(1))
    passed = behind == 5
    best = _exact(board, mine, theirs, passed=passed)
    assert strong.last_value == best
    if isinstance(choice, PassChoice) and passed:  # the pass ends the game
        assert best == _points(theirs) - _points(mine)
    else:
        assert _value(board, choice, mine, theirs) == best


@settings(max_examples=60)
@given(
    word=st.sampled_from(BOARDS),
    mine=st.text(alphabet=LETTERS, min_size=2, max_size=4),
    theirs=st.sampled_from("AEIOST"),
    bag=st.text(alphabet="QZXJKV", min_size=1, max_size=2),
    pick=st.integers(0, 7),
)
@example(word="CATS", mine="QEA", theirs="O", bag="Z", pick=0)
def test_simulation_scores_an_emptied_bag_as_an_endgame(
    word: str, mine: str, theirs: str, bag: str, pick: int
) -> None:
    """A simulated play that empties the bag hands the opponent the first move of the
    endgame: an opponent who goes out then takes twice our rack (issue 37). Before, the
    simulation scored the line as if the game went on (our next play plus a leave value)."""
    board = _board(word)
    plays = sorted(
        (
            m
            for m in get_generator("python").plays(board, mine, LEXICON)
            if len(m.tiles) >= len(bag)
        ),
        key=lambda m: (-m.score, str(m)),
    )
    assume(plays)
    m = plays[pick % len(plays)]
    after = board.copy()
    for t in m.tiles:
        after.place(t.x, t.y, t.tile)
    replies = [r.score for r in get_generator("python").plays(after, theirs, LEXICON)]
    assume(replies)  # a one-tile rack that can play goes out
    leave = leave_of(mine, m)
    held = leave + bag  # we drew the whole bag
    strong = StrongPlayer(LEXICON, LeaveValues({"tile:Q": 9.0}))
    value = strong._run_once(
        Position(board, mine, len(bag)),
        _Candidate(m, float(m.score), leave),
        theirs,
        list(bag),
    )[0]
    assert value == m.score - max(replies) - 2 * _points(held)


@settings(max_examples=60)
@given(
    word=st.sampled_from(BOARDS),
    mine=st.text(alphabet=LETTERS, min_size=3, max_size=7),
    bag=st.integers(2, 7),
)
@example(word="CATS", mine="AEIRST", bag=2)
def test_candidates_near_the_end_include_a_play_that_keeps_the_bag(
    word: str, mine: str, bag: int
) -> None:
    """With 2-7 tiles in the bag, when every candidate by equity would empty it, the
    best play that leaves tiles in it is simulated too (issue 37): emptying the bag
    hands the opponent the endgame's first move."""
    board = _board(word)
    plays = list(get_generator("python").plays(board, mine, LEXICON))
    keepers = [m for m in plays if len(m.tiles) < bag]
    assume(keepers and len(plays) <= 50)  # all within the look past the candidates
    strong = StrongPlayer(LEXICON, LeaveValues({}), candidates=2)
    candidates = strong._candidates(Position(board, mine, bag), 0)
    assert any(isinstance(c.choice, Move) and len(c.choice.tiles) < bag for c in candidates)


def test_simulation_from_a_fuller_bag_keeps_leave_values() -> None:
    """From a root with more than 7 tiles in the bag the simulation scores every line
    by leave values, also one whose reply empties the bag: the example above's play,
    draw and reply give 8 - 3 + 9 here (we cannot play QZ, whose leave value is 9),
    not 8 - 3 - 2 * 20 (their going out)."""
    board = _board("CATS")
    mine = "QEA"
    m = max(get_generator("python").plays(board, mine, LEXICON), key=lambda p: (p.score, str(p)))
    strong = StrongPlayer(LEXICON, LeaveValues({"tile:Q": 9.0}))
    leave = leave_of(mine, m)
    value = strong._run_once(
        Position(board, mine, 8), _Candidate(m, float(m.score), leave), "O", ["Z"]
    )[0]
    assert value != m.score - 3 - 2 * _points(leave + "Z")  # not the endgame's
    assert value == 14.0

"""benchmarks/scrabble_external.py plays meeple against an external Scrabble engine with
meeple's Game as referee: here the engine is a meeple player behind the same interface
(in process, and as a ``serve-meeple`` process over the line protocol), never Quackle.

Two identical deterministic players make the two games of a pair the same game with
the names swapped, so the pair's spreads cancel exactly: that checks the pairing (one
bag, one reshuffle seed, the seats swapped, the same player first), the scoring from
meeple's side, and that the engine's mirror of the game (bag, unseen tiles, scores)
stays the referee's through plays, exchanges and passes."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ai.words import WORDS, small_lexicon
from tests.scripts import ROOT, load_script

from meeple.ai.match import wilson_interval
from meeple.ai.scrabble import Choice, ExchangeChoice, GreedyPlayer, PassChoice
from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.moves import Move, Placement

DRIVER = ROOT / "benchmarks/scrabble_external.py"


ext = load_script("benchmarks/scrabble_external.py")


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return small_lexicon()


class Counting:
    """An engine wrapper that counts the commands of each kind it is sent."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.name = "counting"
        self.counts: dict[str, int] = {}

    def __getattr__(self, attr: str) -> object:
        method = getattr(self.inner, attr)

        def call(*args: object) -> object:
            self.counts[attr] = self.counts.get(attr, 0) + 1
            return method(*args)

        return call


def test_a_pair_of_mirror_games_cancels_out(lexicon: Lexicon) -> None:
    """Greedy v greedy: the two games of each pair are one game with the seats
    swapped, so their spreads are opposite and the pair's wins and losses even."""
    engine = Counting(ext.MeepleEngine(GreedyPlayer(lexicon), lexicon))
    seen: list[tuple[int, int, int]] = []
    emptied: list[int | None] = []

    def progress(g: int, outcome: object, tally: object) -> None:
        seen.append((g, outcome.meeple_score, outcome.engine_score))  # type: ignore[attr-defined]
        emptied.append(outcome.bag_empty_spread)  # type: ignore[attr-defined]

    tally = ext.run_match(
        engine, GreedyPlayer(lexicon), lexicon, 6, seed=3, think_time=0.0, progress=progress
    )
    assert tally.games == 6
    assert [g for g, _, _ in seen] == list(range(6))
    for k in range(3):
        _, m1, e1 = seen[2 * k]
        _, m2, e2 = seen[2 * k + 1]
        assert (m1, e1) == (e2, m2)  # the same game, names swapped
        assert tally.spreads[2 * k] == -tally.spreads[2 * k + 1]
        # meeple's lead when the bag ran empty is the engine's in the other game
        lead = emptied[2 * k]
        assert emptied[2 * k + 1] == (None if lead is None else -lead)
    assert sum(tally.spreads) == 0
    assert tally.wins == tally.losses
    assert tally.win_rate == pytest.approx(0.5)
    assert tally.refused == []
    assert sum(tally.endgame_gains) == 0
    # Every engine move was preceded by its rack and a check that passed; both sides
    # passed or exchanged at least once on this small word list.
    assert engine.counts["go"] == engine.counts["check"] == engine.counts["set_rack"]
    assert engine.counts["new_game"] == 6
    assert engine.counts.get("exchange", 0) + engine.counts.get("pass_", 0) > 0
    assert tally.engine_moves == engine.counts["go"]


def test_a_match_split_at_a_pair_plays_the_same_games(lexicon: Lexicon) -> None:
    """``start`` (``--start``) plays the games of the whole match from that one on: two
    halves give the same games and spreads as one run, so a match can be split over
    processes."""
    engine = ext.MeepleEngine(GreedyPlayer(lexicon), lexicon)

    def run(games: int, start: int) -> list[int]:
        return ext.run_match(
            engine, GreedyPlayer(lexicon), lexicon, games, seed=4, think_time=0.0, start=start
        ).spreads

    assert run(2, 0) + run(2, 2) == run(4, 0)


def test_on_enable_the_endgame_is_measured_and_mirrored() -> None:
    """On ENABLE (the match's word list) the bag runs empty: meeple's lead then and
    what the endgame added mirror between the games of a pair."""
    enable = load_lexicon("enable")
    tally = ext.run_match(
        ext.MeepleEngine(GreedyPlayer(enable), enable),
        GreedyPlayer(enable),
        enable,
        2,
        seed=0,
        think_time=0.0,
    )
    assert len(tally.endgame_gains) == 2
    assert tally.endgame_gains[0] == -tally.endgame_gains[1]
    assert tally.spreads[0] == -tally.spreads[1]
    assert "over 2 games" in tally.endgame_line()
    # The same side emptied the bag in both games, meeple in one and the engine in the
    # other; the endgame's gain is split by it (the side that did not move first).
    assert len(tally.endgame_gains_meeple_emptied) == 1
    assert len(tally.endgame_gains_engine_emptied) == 1
    assert tally.endgame_gains_meeple_emptied[0] == -tally.endgame_gains_engine_emptied[0]
    assert "meeple emptied it in 1" in tally.endgame_line()
    # From the first turn with <= 7 tiles in the bag: one game's gain is the other's loss.
    assert len(tally.late_gains) == 2
    assert tally.late_gains[0] == -tally.late_gains[1]
    assert "to the end: mean +0.0 over 2 games" in tally.endgame_line()


def test_pairs_share_the_bag_and_swap_who_starts(lexicon: Lexicon) -> None:
    """Game 2k has meeple first and game 2k+1 the engine, both with pair k's bag, so the
    player who moves first gets the same rack in both games."""
    firsts: list[tuple[bool, str]] = []
    original = ext.play_game

    def spy(engine, meeple, lex, bag, *, seed, engine_first, **kw):  # type: ignore[no-untyped-def]
        firsts.append((engine_first, "".join(bag)))
        return original(engine, meeple, lex, bag, seed=seed, engine_first=engine_first, **kw)

    ext.play_game = spy
    try:
        ext.run_match(
            ext.MeepleEngine(GreedyPlayer(lexicon), lexicon),
            GreedyPlayer(lexicon),
            lexicon,
            4,
            seed=1,
            think_time=0.0,
        )
    finally:
        ext.play_game = original
    assert [f for f, _ in firsts] == [False, True, False, True]
    assert firsts[0][1] == firsts[1][1] != firsts[2][1] == firsts[3][1]
    assert sorted(firsts[0][1]) == sorted(ext.bag_for_pair(0))


class Scorer(ext.MeepleEngine):  # type: ignore[misc, name-defined]
    """An engine that scores every play one point more than the rules do."""

    def play(self, move: Move) -> int:
        return int(super().play(move)) + 1


def test_an_engine_that_scores_differently_stops_the_game(lexicon: Lexicon) -> None:
    """The engine's score for every play is compared with the referee's."""
    with pytest.raises(ext.EngineError, match="engine scores"):
        ext.play_game(
            Scorer(GreedyPlayer(lexicon), lexicon),
            GreedyPlayer(lexicon),
            lexicon,
            ext.bag_for_pair(0),
            seed=0,
            engine_first=False,
            think_time=0.0,
        )


class Cheat(ext.MeepleEngine):  # type: ignore[misc, name-defined]
    """An engine that answers a play of tiles it does not hold."""

    def go(self, board: Board) -> tuple[Choice, float]:
        tiles = (Placement(7, 7, "Z"), Placement(7, 8, "A"))
        return Move(tiles, 7, 7, Direction.ACROSS, "ZA", 11), 0.0


def test_a_refused_engine_move_is_its_loss(lexicon: Lexicon) -> None:
    """A move the referee refuses ends the game as the engine's loss, counted apart."""
    bag = list(ext.bag_for_pair(0))
    bag.remove("Z")  # the engine (first, so it draws the last 7 tiles) has no Z
    bag.insert(0, "Z")
    outcome = ext.play_game(
        Cheat(GreedyPlayer(lexicon), lexicon),
        GreedyPlayer(lexicon),
        lexicon,
        tuple(bag),
        seed=0,
        engine_first=True,
        think_time=0.0,
    )
    assert outcome.refused is not None
    assert outcome.spread > 0
    tally = ext.MatchTally()
    tally.add(outcome)
    assert (tally.wins, tally.losses, len(tally.refused)) == (1, 0, 1)


def test_summary_line() -> None:
    """W-L-D, the win rate with draws counted half, Wilson's interval, the mean spread,
    each side's CPU a move and the median simulation rounds of meeple's moves."""
    tally = ext.MatchTally()
    for spread in (30, -10, 0, 20):
        rounds = [spread + 40, 50] if spread else []
        tally.add(ext.GameOutcome(spread, 0, 0, 10, 10, 2.0, 0.5, sim_rounds=rounds))
    lo, hi = wilson_interval(2.5 / 4, 4)
    assert tally.summary("a", "b") == (
        f"a v b: 2-1-1, win rate 62.5 % (95 % CI {100 * lo:.1f}–{100 * hi:.1f}), "
        "mean spread +10.0, CPU s/move 0.200 / 0.050, engine moves refused 0, "
        "simulation rounds a move: median 50 over 6 moves"
    )


def test_over_the_line_protocol(lexicon: Lexicon, tmp_path: Path) -> None:
    """The driver's LineEngine against ``serve-meeple`` (greedy) in another process: the
    same mirror pairs as in process, every check passed over the pipe."""
    words = tmp_path / "small.txt"
    words.write_text("\n".join(WORDS.split()) + "\n")
    env = {**os.environ, "MEEPLE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, str(DRIVER), "serve-meeple", "--lexicon", str(words)]
    engine = ext.LineEngine(argv, "served", env=env)
    try:
        assert engine.hello == ["meeple-greedy"]
        tally = ext.run_match(engine, GreedyPlayer(lexicon), lexicon, 2, seed=5, think_time=0.0)
    finally:
        engine.close()
    assert engine.proc.returncode == 0
    assert tally.spreads[0] == -tally.spreads[1]
    assert tally.engine_moves > 0


def test_parse_choice_reads_the_answers() -> None:
    """A play is read against the board (letters on it played through, blanks in lower
    case), an exchange and a pass with their CPU seconds."""
    board = Board()
    board.place(7, 7, "A")
    move, cpu = ext.parse_choice(["play", "7", "6", "h", "bAT", "4", "0.25"], board)
    assert isinstance(move, Move)
    assert move.tiles == (Placement(7, 6, "b"), Placement(7, 8, "T"))
    assert (move.direction, move.score, cpu) == (Direction.ACROSS, 4, 0.25)
    assert ext.parse_choice(["exchange", "qu", "0.1"], board) == (ExchangeChoice("QU"), 0.1)
    assert ext.parse_choice(["pass", "0"], board) == (PassChoice(), 0.0)
    assert ext.play_line(move) == "play 7 6 h bAT"


@settings(max_examples=200)
@given(st.lists(st.text(max_size=12), max_size=8))
def test_parse_choice_refuses_anything_else(words: list[str]) -> None:
    """Whatever an engine answers, parse_choice returns a choice or raises EngineError."""
    board = Board()
    board.place(7, 7, "A")
    with contextlib.suppress(ext.EngineError):
        ext.parse_choice(words, board)


COMMAND = st.one_of(
    st.sampled_from(["go", "pass", "quit", "new 0", "new 1", "rack AEINRST", "rack ?", "rack -"]),
    st.builds(
        "play {} {} {} {}".format,
        st.integers(-1, 15),
        st.integers(-1, 15),
        st.sampled_from("hvx"),
        st.text("ABEINRSTab", min_size=1, max_size=8),
    ),
    st.builds("exchange {}".format, st.text("AEIOU0123?", min_size=1, max_size=8)),
    st.builds(
        "check {} {} {} {}".format,
        st.integers(-2, 100),
        st.sampled_from(["-", "AB", "x"]),
        st.integers(),
        st.integers(),
    ),
    st.text(max_size=30).filter(lambda s: "\n" not in s and "\r" not in s),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(COMMAND, max_size=12))
def test_serve_meeple_answers_every_command_once(lexicon: Lexicon, lines: list[str]) -> None:
    """The protocol's reference side answers each command line with one ``ok`` or
    ``err`` line, whatever the commands, and stops at ``quit``."""
    engine = ext.MeepleEngine(GreedyPlayer(lexicon), lexicon)
    out = io.StringIO()
    ext.serve_meeple(engine, io.StringIO("".join(line + "\n" for line in lines)), out)
    replies = out.getvalue().splitlines()
    assert replies[0] == "ok meeple-greedy"
    expected = []
    for line in lines:
        if not line.split():
            continue
        expected.append(line)
        if line.split()[0] == "quit":
            break
    assert len(replies) == 1 + len(expected)
    assert all(r.split()[0] in ("ok", "err") for r in replies[1:])


def _outcome(at7: int, at0: int, final: int, refused: bool = False) -> object:
    out = ext.GameOutcome(final, 0, 0)
    out.low_bag_spread, out.bag_empty_spread = at7, at0
    out.meeple_emptied_bag = True
    if refused:
        out.refused = "X: refused"
    return out


def test_phase_table_counts_each_game_where_it_turned() -> None:
    """Issue 37.1: a loss counts in the last phase that took the lead below zero, a win
    in the last that took it above; the gains are the leads' differences."""
    tally = ext.MatchTally()
    tally.add(_outcome(-30, -40, -50))  # lost in the mid-game
    tally.add(_outcome(20, -5, -10))  # lost from <= 7 tiles to the empty bag
    tally.add(_outcome(20, 15, -6))  # lost in the endgame
    tally.add(_outcome(-20, 10, -4))  # back ahead, then lost in the endgame
    tally.add(_outcome(-10, 5, 12))  # won from <= 7 tiles to the empty bag
    tally.add(_outcome(50, 50, 50, refused=True))  # left out
    table = tally.phase_table()
    assert [table[p]["lost_here"] for p in ("mid", "pre", "end")] == [1, 1, 2]
    assert [table[p]["won_here"] for p in ("mid", "pre", "end")] == [0, 1, 0]
    assert table["mid"]["games"] == 5
    assert table["mid"]["mean"] == pytest.approx((-30 + 20 + 20 - 20 - 10) / 5)
    assert table["end"]["mean_lost"] == pytest.approx((-10 - 5 - 21 - 14) / 4)
    assert "lost here 2" in tally.phase_line()


@settings(max_examples=200)
@given(st.lists(st.tuples(*(st.integers(-150, 150),) * 3), max_size=30))
def test_phase_table_splits_every_loss_and_win_once(games: list[tuple[int, int, int]]) -> None:
    """Over any games, the losses (wins) counted per phase add up to the losses (wins)."""
    tally = ext.MatchTally()
    for at7, at0, final in games:
        tally.add(_outcome(at7, at0, final))
    table = tally.phase_table()
    assert sum(v["lost_here"] for v in table.values()) == sum(f < 0 for _, _, f in games)
    assert sum(v["won_here"] for v in table.values()) == sum(f > 0 for _, _, f in games)
    total = sum(v["mean"] for v in table.values()) * len(games)
    assert total == pytest.approx(sum(f for _, _, f in games))

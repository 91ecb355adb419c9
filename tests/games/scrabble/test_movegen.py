"""Move generation: hand-checked positions, counting conventions, and a brute-force oracle."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games.scrabble.board import Board, Direction, Layout, parse_gcg_position
from meeple.games.scrabble.cgp import parse_cgp
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.movegen import exchanges, legal_moves
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import ENGLISH

# A small lexicon for the oracle: the two-letter words and a few hundred short ones, so
# random racks find plays and the brute force stays fast.
SMALL_WORDS = """
AA AB AD AE AG AH AI AL AM AN AR AS AT AW AX AY BA BE BI BO BY DA DE DO ED EF EH EL EM
EN ER ES EX FA FE GO HA HE HI HM HO ID IF IN IS IT JO KA KI LA LI LO MA ME MI MO MU MY
NA NE NO NU OD OE OF OH OI OM ON OP OR OS OW OX OY PA PE PI QI RE SH SI SO TA TI TO UH
UM UN UP US UT WE WO XI XU YA YE YO ZA
ACE ACT ADO AGE AID AIL AIM AIR ALE ANT ANE ANY APE ARE ARM ART ATE BAD BAT BED BET BIT
CAT COT DOE DOT EAR EAT EEL END ERA ETA HAT HEN HER HIT ICE ION IRE ITS LET LIE LIT MAT
NET NIT NOR NOT OAR OAT ODE ONE ORE OUR OUT PAT PEN PET PIE PIN PIT RAN RAT RED RET RID
ROE ROT SAT SEA SET SIN SIR SIT SON TAN TAR TEA TEN TIE TIN TOE TON TOR TOE USE
ARTS ATES EARN EAST EATS IONS IRES NEAR NEST NETS NOTE RAIN RANT RATE REST RIOT RISE
ROTE SANE SEAT SENT SITE SNOT SORE SORT STAR TAIL TALE TEAR TERN TIER TIES TINE TOES
TONE TORE TRIO SNORE STONE STARE RATES ASTER TEARS TONES NOTES RAINS STAIN SATIN
TRAIN TRAINS RETAIN RETAINS NASTIER STAINER ORIENTS STONIER ATONERS SENATOR TREASON
"""
SMALL = Lexicon.from_words(SMALL_WORDS.split(), name="small")

# A game after eight plays of GCIDE words, two blanks on the rack (benchmarks/movegen.py).
MIDGAME_CGP = (
    "15/15/15/15/15/15/8P6/7BATIK2F/8Q2EH1A/8U2SOWN/8E1CAGE1/10ER1A1/10L2N1/9XL4/9IO4"
    " AENRS??/ 144/100 0"
)

PlayKey = tuple[Direction, int, int, str, int, tuple[tuple[int, int, str], ...]]


# --- An independent validator and scorer, written from the rules, not from movegen ---


def _word_at(
    cells: dict[tuple[int, int], str], x: int, y: int, dx: int, dy: int, size: int
) -> tuple[int, int, list[tuple[int, int]]]:
    """The maximal run of occupied squares through (x, y) along (dx, dy)."""
    sx, sy = x, y
    while 0 <= sx - dx < size and 0 <= sy - dy < size and (sx - dx, sy - dy) in cells:
        sx, sy = sx - dx, sy - dy
    squares = []
    cx, cy = sx, sy
    while 0 <= cx < size and 0 <= cy < size and (cx, cy) in cells:
        squares.append((cx, cy))
        cx, cy = cx + dx, cy + dy
    return sx, sy, squares


def check_play(
    board: Board, tiles: dict[tuple[int, int], str], words: frozenset[str]
) -> PlayKey | None:
    """The play's (direction, x, y, word, score, tiles) if legal, else None."""
    size = board.size
    layout = board.layout
    old = {(x, y): t for x, y, t in board.tiles()}
    if not tiles or any(sq in old for sq in tiles):
        return None
    cells = {**old, **tiles}
    xs = {x for x, _ in tiles}
    ys = {y for _, y in tiles}
    (fx, fy) = min(tiles)
    if len(tiles) == 1:
        _, _, run = _word_at(cells, fx, fy, 1, 0, size)
        direction = Direction.ACROSS if len(run) >= 2 else Direction.DOWN
    elif len(ys) == 1:
        direction = Direction.ACROSS
    elif len(xs) == 1:
        direction = Direction.DOWN
    else:
        return None
    dx, dy = direction.step
    first = min(tiles, key=lambda sq: (sq[1], sq[0]))
    sx, sy, main = _word_at(cells, first[0], first[1], dx, dy, size)
    if not all(sq in main for sq in tiles) or len(main) < 2:
        return None  # a gap, or a lone tile
    if board.is_empty:
        if layout.centre not in tiles or len(tiles) < 2:
            return None
    elif not any(
        (x + ex, y + ey) in old for x, y in tiles for ex, ey in ((1, 0), (-1, 0), (0, 1), (0, -1))
    ):
        return None
    formed = [main]
    for x, y in tiles:
        _, _, cross = _word_at(cells, x, y, dy, dx, size)
        if len(cross) >= 2:
            formed.append(cross)
    score = 0
    for squares in formed:
        if "".join(cells[sq].upper() for sq in squares) not in words:
            return None
        total, mult = 0, 1
        for sq in squares:
            value = ENGLISH.value(cells[sq])
            if sq in tiles:
                premium = layout.premium(*sq)
                value *= premium.letter_multiplier
                mult *= premium.word_multiplier
            total += value
        score += total * mult
    if len(tiles) == 7:
        score += 50
    word = "".join(cells[sq] for sq in main)
    placed = tuple(sorted((x, y, t) for (x, y), t in tiles.items()))
    return (direction, sx, sy, word, score, placed)


def oracle(board: Board, rack: str, words: frozenset[str]) -> set[PlayKey]:
    """Every legal play by brute force: each run of empty squares in each line, and each
    word of the lexicon that fits there, with every way of paying for it from the rack."""
    size = board.size
    old = {(x, y): t for x, y, t in board.tiles()}
    have = Counter(rack)
    by_length: dict[int, list[str]] = {}
    for w in words:
        by_length.setdefault(len(w), []).append(w)
    found: set[PlayKey] = set()
    directions = [Direction.ACROSS] if not old else [Direction.ACROSS, Direction.DOWN]
    for direction in directions:
        for line in range(size):
            squares = [
                (p, line) if direction is Direction.ACROSS else (line, p) for p in range(size)
            ]
            empties = [p for p in range(size) if squares[p] not in old]
            for i, s in enumerate(empties):
                for e in empties[i : i + len(rack)]:
                    lo, hi = s, e
                    while lo > 0 and squares[lo - 1] in old:
                        lo -= 1
                    while hi + 1 < size and squares[hi + 1] in old:
                        hi += 1
                    if not _connected(board, squares[s : e + 1], hi - lo > e - s):
                        continue  # cheap pre-check; check_play decides for real
                    for word in by_length.get(hi - lo + 1, ()):
                        new: list[tuple[tuple[int, int], str]] = []
                        for p, letter in zip(range(lo, hi + 1), word, strict=True):
                            there = old.get(squares[p])
                            if there is None:
                                new.append((squares[p], letter))
                            elif there.upper() != letter:
                                break
                        else:
                            for tiles in _payments(new, have):
                                play = check_play(board, tiles, words)
                                if play is not None and play[0] is direction:
                                    found.add(play)
    return found


def _connected(board: Board, span: list[tuple[int, int]], through: bool) -> bool:
    """Whether new tiles on the empty squares of ``span`` could touch the board at all."""
    if board.is_empty:
        return board.layout.centre in span
    if through:
        return True
    size = board.size
    return any(
        0 <= x + ex < size and 0 <= y + ey < size and not board.is_empty_at(x + ex, y + ey)
        for x, y in span
        for ex, ey in ((1, 0), (-1, 0), (0, 1), (0, -1))
    )


def _payments(
    new: list[tuple[tuple[int, int], str]], have: Counter[str]
) -> Iterator[dict[tuple[int, int], str]]:
    """Each way to lay ``new`` letters from the rack: a letter tile or a blank per square.

    The squares paid by a blank are each subset of at most as many squares as the rack
    has blanks (every other choice of letter-or-blank per square needs a blank the rack
    lacks): the same payments as trying all 2**n choices, without the 2**n."""
    letters = [letter for _, letter in new]
    for count in range(min(have["?"], len(new)) + 1):
        for blanks in combinations(range(len(new)), count):
            need = Counter(c for i, c in enumerate(letters) if i not in blanks)
            if all(have[c] >= n for c, n in need.items()):
                yield {
                    sq: letter.lower() if i in blanks else letter
                    for i, (sq, letter) in enumerate(new)
                }


def key(move: Move) -> PlayKey:
    return (
        move.direction,
        move.x,
        move.y,
        move.word,
        move.score,
        tuple(sorted((p.x, p.y, p.tile) for p in move.tiles)),
    )


def generated(board: Board, rack: str, lexicon: Lexicon) -> set[PlayKey]:
    moves = legal_moves(board, rack, lexicon)
    keys = [key(m) for m in moves]
    assert len(keys) == len(set(keys)), "a play was listed twice"
    return set(keys)


def board_with(*words: tuple[str, str]) -> Board:
    """A board with words written at GCG positions, e.g. ("8G", "AT")."""
    board = Board()
    for pos, word in words:
        x, y, direction = parse_gcg_position(pos)
        dx, dy = direction.step
        for i, c in enumerate(word):
            board.place(x + dx * i, y + dy * i, c)
    return board


# --- Hand-checked positions with the small lexicon ---


def test_first_play_covers_centre_and_lists_across_plays_only() -> None:
    """CAT and AT on an empty board: every across placement over H8, double word, no downs."""
    lex = Lexicon.from_words(["CAT", "AT"])
    moves = {(m.position, m.word, m.score) for m in legal_moves(Board(), "CAT", lex)}
    assert moves == {
        ("8F", "CAT", 10),
        ("8G", "CAT", 10),
        ("8H", "CAT", 10),
        ("8G", "AT", 4),
        ("8H", "AT", 4),
    }


def test_first_move_bingo_scores() -> None:
    """RETAINS from each start on row 8: 66 over a double letter, 64 from 8E (none covered)."""
    lex = Lexicon.from_words(["RETAINS"])
    moves = {(m.position, m.score) for m in legal_moves(Board(), "RETAINS", lex)}
    assert moves == {
        ("8B", 66),
        ("8C", 66),
        ("8D", 66),
        ("8E", 64),
        ("8F", 66),
        ("8G", 66),
        ("8H", 66),
    }


def test_single_tile_making_an_across_word_is_the_across_play() -> None:
    """C before AT makes CAT across: listed once, as 8F, scored without old premiums."""
    board = board_with(("8G", "AT"))
    lex = Lexicon.from_words(["AT", "CAT", "TA"])
    moves = legal_moves(board, "C", lex)
    assert [(m.position, m.word, m.score, m.rack_tiles) for m in moves] == [("8F", "CAT", 5, "C")]


def test_single_tile_making_only_a_down_word_is_the_down_play() -> None:
    """A under the T of AT makes TA down and no across word: listed as H8 down."""
    board = board_with(("8G", "AT"))
    lex = Lexicon.from_words(["AT", "TA"])
    moves = legal_moves(board, "A", lex)
    # A at H9 (TA down; H9 is a double letter? no: row 9 col H is plain) and A at H7 (AT
    # down from H7): both single tiles without an across word.
    assert sorted((m.position, m.word, m.score, m.direction.value) for m in moves) == [
        ("H7", "AT", 2, "down"),
        ("H8", "TA", 2, "down"),
    ]


def test_a_single_tile_making_both_words_is_listed_once() -> None:
    """A tile that makes an across and a down word is one play, listed across."""
    board = board_with(("8G", "AT"), ("G9", "T"))  # A at G8, T at H8, T at G9
    lex = Lexicon.from_words(["AT", "TA", "ATE", "TAE"])
    moves = legal_moves(board, "E", lex)
    plays = sorted((m.position, m.word, m.direction.value) for m in moves)
    assert ("9G", "TE", "across") not in plays  # TE is not a word here
    assert ("8G", "ATE", "across") in plays
    assert len({tuple(sorted((p.x, p.y) for p in m.tiles)) for m in moves}) == len(moves)


def test_blank_scores_zero_and_is_lower_case() -> None:
    """A blank scores 0 and shows in lower case: cAT for 2, At and aT down for 1."""
    board = board_with(("8G", "AT"))
    lex = Lexicon.from_words(["AT", "CAT"])
    moves = {(m.position, m.word, m.score, m.rack_tiles) for m in legal_moves(board, "?", lex)}
    assert moves == {("8F", "cAT", 2, "?"), ("G8", "At", 1, "?"), ("H7", "aT", 1, "?")}


def test_blank_and_letter_are_different_plays() -> None:
    """With a C and a blank, CAT and cAT are both listed."""
    board = board_with(("8G", "AT"))
    lex = Lexicon.from_words(["AT", "CAT"])
    moves = legal_moves(board, "C?", lex)
    assert sorted(m.word for m in moves if m.direction is Direction.ACROSS) == ["CAT", "cAT"]
    # Down: CAt from G7 and CaT from H6 (C tile and blank), At from G8 and aT from H7.
    downs = sorted(m.word for m in moves if m.direction is Direction.DOWN)
    assert downs == ["At", "CAt", "CaT", "aT"]


def test_play_through_scores_old_tiles_at_face_value() -> None:
    """STAIN down through the A of AT: S on a double word square? worked out by hand."""
    board = board_with(("8G", "AT"))  # A on G8, T on H8
    lex = Lexicon.from_words(["AT", "STAIN"])
    moves = {(m.position, m.word, m.score) for m in legal_moves(board, "SINT", lex)}
    # STAIN down from G6: S G6 (DL, row 7 col G: "..l...l.l...l.." -> G7 is DL, G6 plain),
    # T G7 (DL: 2*1), A G8 (old, 1), I G9 (DL: 2*1), N G10 (plain 1): 1+2+1+2+1 = 7.
    assert ("G6", "STAIN", 7) in moves


def test_cross_words_are_checked_and_scored() -> None:
    """A play parallel to a word scores each two-letter cross word."""
    board = board_with(("8G", "AT"))
    lex = Lexicon.from_words(["AT", "AN", "TO", "NO"])
    moves = {(m.position, m.word, m.score) for m in legal_moves(board, "NO", lex)}
    # NO across on row 9 under AT: G9 N (DL) makes AN down, H9 O makes TO down.
    # Main NO: 2*1 + 1 = 3; AN: 1 + 2 = 3; TO: 1 + 1 = 2. Total 8.
    assert ("9G", "NO", 8) in moves


def test_rack_with_bad_tiles_is_refused() -> None:
    """A rack with a digit is a NotationError."""
    with pytest.raises(NotationError):
        legal_moves(Board(), "AB1", SMALL)


def test_no_moves_with_empty_rack() -> None:
    """An empty rack plays nothing."""
    assert legal_moves(board_with(("8G", "AT")), "", SMALL) == []


def test_exchanges_are_distinct() -> None:
    """AAB can exchange A, B, AA, AB, AAB."""
    assert exchanges("AAB") == ["A", "B", "AA", "AB", "AAB"]


def test_small_board_layout() -> None:
    """Move generation follows the layout: a 5x5 board with its own centre."""
    layout = Layout.from_rows(["W...W", ".....", "..w..", ".....", "W...W"])
    board = Board(layout)
    lex = Lexicon.from_words(["CAT", "AT"])
    moves = {(m.position, m.word, m.score) for m in legal_moves(board, "CAT", lex)}
    assert moves == {
        ("3A", "CAT", 10),
        ("3B", "CAT", 10),
        ("3C", "CAT", 10),
        ("3B", "AT", 4),
        ("3C", "AT", 4),
    }


# --- The oracle on random positions ---

_LETTERS = "AAAEEEIIOONRSTTLDHMPCBY"
racks = st.lists(st.sampled_from(_LETTERS + "?"), min_size=1, max_size=7).map("".join)


def _apply(board: Board, move: Move) -> None:
    for p in move.tiles:
        board.place(p.x, p.y, p.tile)


@st.composite
def positions(draw: st.DrawFn) -> Board:
    """A board after up to four plays chosen among the generator's own moves."""
    board = Board()
    for _ in range(draw(st.integers(0, 4))):
        rack = draw(st.lists(st.sampled_from(_LETTERS), min_size=2, max_size=7).map("".join))
        moves = sorted(legal_moves(board, rack, SMALL), key=lambda m: str(key(m)))
        if moves:
            _apply(board, draw(st.sampled_from(moves)))
    return board


def test_oracle_agrees_on_a_fixed_position() -> None:
    """The oracle and the generator agree on a hand-built board with a blank on the rack."""
    board = board_with(("8D", "STONE"), ("E6", "RAT"), ("H7", "ANT"))
    assert generated(board, "TAE?", SMALL) == oracle(board, "TAE?", SMALL.words)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(board=positions(), rack=racks)
def test_generator_matches_brute_force_oracle(board: Board, rack: str) -> None:
    """On random positions the generator finds exactly the oracle's plays and scores."""
    assert generated(board, rack, SMALL) == oracle(board, rack, SMALL.words)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=positions(), rack=racks)
def test_every_generated_move_rescored_independently(board: Board, rack: str) -> None:
    """Each generated play is legal and scores the same under the independent scorer."""
    for move in legal_moves(board, rack, SMALL):
        tiles = {(p.x, p.y): p.tile for p in move.tiles}
        assert check_play(board, tiles, SMALL.words) == key(move)


# --- The default lexicon on fixed positions ---


# `gcide` is the session fixture in tests/conftest.py (the default lexicon, user cache).


def test_gcide_empty_board_aeinrst(gcide: Lexicon) -> None:
    """AEINRST on an empty board: the best plays are seven-letter bingos for 66."""
    moves = legal_moves(Board(), "AEINRST", gcide)
    best = max(m.score for m in moves)
    assert best == 66
    tops = {m.word for m in moves if m.score == 66}
    assert {"STAINER", "STEARIN"} <= tops
    assert len(moves) == 864  # regression figure for this word list (wolges: 1,487 on CSW)


def test_gcide_blank_on_empty_board(gcide: Lexicon) -> None:
    """?SATIRE on an empty board: plays with a blank are scored as 0 for it."""
    moves = legal_moves(Board(), "?SATIRE", gcide)
    for m in moves:
        tiles = {(p.x, p.y): p.tile for p in m.tiles}
        assert check_play(Board(), tiles, gcide.words) == key(m)
    assert len(moves) == 8164


def test_gcide_midgame_moves_rescored(gcide: Lexicon) -> None:
    """Every play in a mid-game position is legal and scored as the independent scorer says."""
    position = parse_cgp(MIDGAME_CGP)
    for m in legal_moves(position.board, position.rack, gcide):
        tiles = {(p.x, p.y): p.tile for p in m.tiles}
        assert check_play(position.board, tiles, gcide.words) == key(m)

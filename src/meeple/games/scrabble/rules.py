"""Play validation and scoring, as a pure function over a board.

:func:`validate_play` is the one place that decides whether new tiles make a legal
play and what it scores. The game engine calls it on every play, protocols call it
to check a client's move (and a claimed score, CMPN402), and the move generator's
property tests check that every move it generates passes it with the same score.

Checks run from the most specific to the most general, so the error raised names the
first rule a play breaks in this order:

1. :class:`EmptyPlay` — no tiles;
2. :class:`BlankWithoutLetter` — a ``?`` tile; :class:`NotationError` for a tile that
   is not a single letter;
3. :class:`OffBoard`, then :class:`SquareOccupied` (two new tiles on one square, or a
   new tile on a taken square, which is also how a letter clash shows);
4. :class:`NotInLine`, then :class:`Gap`;
5. :class:`TilesNotOnRack` (only when a rack is given; a blank in a tile set without
   blanks is always refused);
6. :class:`NotThroughCentre` and :class:`NoWordFormed` for the first play,
   :class:`NotConnected` for later ones;
7. :class:`WordsNotInLexicon` (only when a lexicon is given), naming every bad word.

Scoring follows the standard rules: letter and word premiums count only under the
tiles this play puts down; every word the play forms scores (the main word and each
cross word); a blank is worth 0 but a word premium under it still multiplies; using
``bingo_size`` tiles at once earns ``bingo_bonus`` (7 and 50 in standard Scrabble).
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from meeple.games.scrabble.board import Board, Direction, format_gcg_position
from meeple.games.scrabble.errors import (
    BlankWithoutLetter,
    EmptyPlay,
    Gap,
    NotationError,
    NotConnected,
    NotInLine,
    NotThroughCentre,
    NoWordFormed,
    OffBoard,
    SquareOccupied,
    TilesNotOnRack,
    WordsNotInLexicon,
)
from meeple.games.scrabble.moves import Move, Placement
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = [
    "BINGO_BONUS",
    "BINGO_SIZE",
    "PlayResult",
    "Word",
    "missing_tiles",
    "phonies",
    "validate_play",
]

BINGO_SIZE = 7
BINGO_BONUS = 50


@dataclass(frozen=True, slots=True)
class Word:
    """One word a play forms: where it lies, its tiles as on the board, and its score.

    ``text`` has blanks in lower case (GCG style); :attr:`letters` is the word to look up.
    """

    text: str
    x: int
    y: int
    direction: Direction
    squares: tuple[tuple[int, int], ...]
    score: int

    @property
    def letters(self) -> str:
        """The word in upper case, as a lexicon holds it."""
        return self.text.upper()

    @property
    def position(self) -> str:
        """GCG position of the word's first square (``8D`` across, ``D8`` down)."""
        return format_gcg_position(self.x, self.y, self.direction)


@dataclass(frozen=True, slots=True)
class PlayResult:
    """A legal play: its new tiles, the words it forms (main word first) and its score.

    ``score`` is the whole score of the play, the bingo bonus included. Call
    :meth:`to_move` for the :class:`Move` value protocols and GCG write.
    """

    tiles: tuple[Placement, ...]
    words: tuple[Word, ...]
    score: int
    bingo: bool

    @property
    def main_word(self) -> Word:
        """The word along the line of the play (for a single tile: across if it makes one)."""
        return self.words[0]

    @property
    def rack_tiles(self) -> str:
        """The tiles the play takes from the rack, ``?`` for blanks, in board order."""
        return "".join(p.rack_tile for p in self.tiles)

    def to_move(self) -> Move:
        main = self.main_word
        return Move(self.tiles, main.x, main.y, main.direction, main.text, self.score)


def missing_tiles(rack: Iterable[str], needed: Iterable[str]) -> str:
    """The tiles of ``needed`` that ``rack`` cannot supply (``""`` when it holds them all)."""
    # A rack holds at most a few tiles: list removal beats two Counters (every play).
    pool = list(rack)
    short: list[str] = []
    for tile in needed:
        try:
            pool.remove(tile)
        except ValueError:
            short.append(tile)
    return "".join(sorted(short))


def phonies(words: Iterable[Word], lexicon: Container[str]) -> tuple[str, ...]:
    """The distinct words (upper case, in play order) that ``lexicon`` does not hold."""
    bad: list[str] = []
    for word in words:
        letters = word.letters
        if letters not in lexicon and letters not in bad:
            bad.append(letters)
    return tuple(bad)


def validate_play(
    board: Board,
    tiles: Iterable[Placement],
    *,
    tile_set: TileSet = ENGLISH,
    rack: Iterable[str] | None = None,
    lexicon: Container[str] | None = None,
    bingo_size: int = BINGO_SIZE,
    bingo_bonus: int = BINGO_BONUS,
) -> PlayResult:
    """Check that ``tiles`` make a legal play on ``board`` and score it.

    ``board`` is not changed. ``rack`` (tiles with ``?`` for blanks) is checked only
    when given, and words only when ``lexicon`` is given (challengeable variants check
    words later, on a challenge). Raises the :class:`RuleError` subclass for the first
    rule broken, in the order the module docstring lists.
    """
    placed = tuple(sorted(tiles))
    if not placed:
        raise EmptyPlay("a play must place at least one tile")
    _check_tiles(placed)
    _check_squares(board, placed)
    direction = _line_direction(placed)
    new = {(p.x, p.y): p.tile for p in placed}
    if direction is not None:
        _check_no_gap(board, placed, direction, new)
    _check_rack(placed, tile_set, rack)

    first_play = board.is_empty
    if first_play:
        if board.layout.centre not in new:
            raise NotThroughCentre("the first play must cover the centre square")
        if len(placed) == 1:
            raise NoWordFormed("the first play must form a word of two letters or more")
    elif not any(_touches_board(board, x, y) for x, y in new):
        raise NotConnected("the play must touch a tile already on the board")

    words = _words(board, placed, direction, new, tile_set)
    if not words:  # unreachable after the checks above; kept as the rule's own guard
        raise NoWordFormed("the play forms no word of two letters or more")
    if lexicon is not None:
        bad = phonies(words, lexicon)
        if bad:
            raise WordsNotInLexicon(bad)
    bingo = len(placed) == bingo_size
    score = sum(w.score for w in words) + (bingo_bonus if bingo else 0)
    return PlayResult(placed, words, score, bingo)


def _check_tiles(placed: tuple[Placement, ...]) -> None:
    for p in placed:
        if p.tile == BLANK:
            raise BlankWithoutLetter(f"the blank at ({p.x}, {p.y}) needs the letter it stands for")
        if len(p.tile) != 1 or not (p.tile.isascii() and p.tile.isalpha()):
            raise NotationError(f"not a tile: {p.tile!r}")


def _check_squares(board: Board, placed: tuple[Placement, ...]) -> None:
    for p in placed:
        if not board.on_board(p.x, p.y):
            raise OffBoard(f"({p.x}, {p.y}) is off the board")
    seen: set[tuple[int, int]] = set()
    for p in placed:
        if (p.x, p.y) in seen:
            raise SquareOccupied(p.x, p.y, f"two new tiles on ({p.x}, {p.y})")
        seen.add((p.x, p.y))
        there = board.tile(p.x, p.y)
        if there is not None:
            raise SquareOccupied(
                p.x, p.y, f"{p.letter} on ({p.x}, {p.y}), which holds {there.upper()}"
            )


def _line_direction(placed: tuple[Placement, ...]) -> Direction | None:
    """ACROSS or DOWN for two tiles or more in one line; None for a single tile."""
    if len(placed) == 1:
        return None
    if all(p.y == placed[0].y for p in placed):
        return Direction.ACROSS
    if all(p.x == placed[0].x for p in placed):
        return Direction.DOWN
    raise NotInLine("the new tiles must all be in one row or one column")


def _check_no_gap(
    board: Board,
    placed: tuple[Placement, ...],
    direction: Direction,
    new: dict[tuple[int, int], str],
) -> None:
    # `placed` is sorted by (y, x), so first and last are the ends of the line.
    dx, dy = direction.step
    x, y = placed[0].x, placed[0].y
    end = (placed[-1].x, placed[-1].y)
    while (x, y) != end:
        x, y = x + dx, y + dy
        if (x, y) not in new and board.is_empty_at(x, y):
            raise Gap(f"the square ({x}, {y}) between the new tiles is empty")


def _check_rack(
    placed: tuple[Placement, ...], tile_set: TileSet, rack: Iterable[str] | None
) -> None:
    needed = [p.rack_tile for p in placed]
    if not tile_set.has_blanks and BLANK in needed:
        raise TilesNotOnRack(BLANK * needed.count(BLANK))
    if rack is not None:
        missing = missing_tiles(rack, needed)
        if missing:
            raise TilesNotOnRack(missing)


def _touches_board(board: Board, x: int, y: int) -> bool:
    for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
        if board.on_board(nx, ny) and not board.is_empty_at(nx, ny):
            return True
    return False


def _words(
    board: Board,
    placed: tuple[Placement, ...],
    direction: Direction | None,
    new: dict[tuple[int, int], str],
    tile_set: TileSet,
) -> tuple[Word, ...]:
    first = placed[0]
    if direction is None:
        # A single tile: its main word is the across word if there is one (the GCG
        # convention of Quackle and Macondo), the down word otherwise.
        across = _word_at(board, first.x, first.y, Direction.ACROSS, new, tile_set)
        down = _word_at(board, first.x, first.y, Direction.DOWN, new, tile_set)
        return tuple(w for w in (across, down) if w is not None)
    main = _word_at(board, first.x, first.y, direction, new, tile_set)
    words = [main] if main is not None else []
    for p in placed:
        cross = _word_at(board, p.x, p.y, direction.other, new, tile_set)
        if cross is not None:
            words.append(cross)
    return tuple(words)


def _word_at(
    board: Board,
    x: int,
    y: int,
    direction: Direction,
    new: dict[tuple[int, int], str],
    tile_set: TileSet,
) -> Word | None:
    """The word through ``(x, y)`` along ``direction``, scored; None if it is one letter."""
    # On the server's turn path (every play, every cross word): plain loops over the
    # board's public accessors, bounds inline, and the common case of a tile with no
    # neighbour along ``direction`` answered before any list is built.
    dx, dy = direction.step
    size = board.layout.size
    placed = new.get
    on_board = board.tile

    def tile_at(sx: int, sy: int) -> str | None:
        if 0 <= sx < size and 0 <= sy < size:
            return placed((sx, sy)) or on_board(sx, sy)
        return None

    if tile_at(x - dx, y - dy) is None and tile_at(x + dx, y + dy) is None:
        return None
    sx, sy = x, y
    while tile_at(sx - dx, sy - dy) is not None:
        sx, sy = sx - dx, sy - dy
    start = (sx, sy)
    squares: list[tuple[int, int]] = []
    text: list[str] = []
    letter_sum = 0
    word_multiplier = 1
    premium_at = board.layout.premium
    value_of = tile_set.value
    while (tile := tile_at(sx, sy)) is not None:
        squares.append((sx, sy))
        text.append(tile)
        value = value_of(tile)
        if (sx, sy) in new:
            # Premiums count only under the tiles this play puts down.
            premium = premium_at(sx, sy)
            value *= premium.letter_multiplier
            word_multiplier *= premium.word_multiplier
        letter_sum += value
        sx, sy = sx + dx, sy + dy
    if len(squares) < 2:
        return None
    return Word(
        "".join(text), start[0], start[1], direction, tuple(squares), letter_sum * word_multiplier
    )

"""Move generators by name: the compiled core and the pure-Python reference, one API.

Call :func:`get_generator` (``"native"``, ``"python"`` or ``"auto"``) and ask it for
what you need, and no more:

- :meth:`MoveGenerator.count` — how many plays; builds nothing;
- :meth:`MoveGenerator.best` — the ``n`` best plays as :class:`Move`, by score or by
  *equity* (score + the value of the tiles kept, from a ``leave`` table mapping a
  sorted leave such as ``"EIS?"`` to points); only those ``n`` are built;
- :meth:`MoveGenerator.plays` — every play, as a sequence whose :class:`Move` values
  are built when indexed.

The compiled generator also plays a whole simulated line for the strong player
(:meth:`NativeGenerator.line`: the opponent's best reply, then ours, their value) without
building a :class:`Move` (issue 37).

Ranking, for both engines: higher score (or equity) first, then across before down,
then row, column and word (the order ``meeple scrabble moves`` prints).

``"native"`` is :mod:`meeple.games.scrabble._movegen` (``_movegen.c``), built at
install time when a C compiler is there; ``"auto"`` picks it when it imports and
otherwise the Python generator (:func:`meeple.games.scrabble.movegen.legal_moves`),
and logs once which one is in use. Both list exactly the same plays with the same
scores; ``tests/games/scrabble/test_engine_agreement.py`` checks it.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, overload

from meeple.games.scrabble.board import Board, Direction, Layout
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.movegen import BINGO_BONUS, BINGO_TILES, legal_moves, parse_rack
from meeple.games.scrabble.moves import Move, Placement
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = [
    "ENGINES",
    "EngineUnavailable",
    "LeaveTable",
    "MoveGenerator",
    "NativeGenerator",
    "PythonGenerator",
    "get_generator",
    "leave_of",
    "native_available",
    "rank_key",
    "sort_leave",
]

logger = logging.getLogger(__name__)

ENGINES = ("native", "python")


class LeaveTable(Protocol):
    """Leave values for equity: a ``dict[str, float]`` fits, as does ``ai.leaves.LeaveValues``.

    Keys are leaves in :func:`sort_leave` order (letters A–Z, then ``?``); ``""`` is
    the empty leave.
    """

    def get(self, leave: str, default: float, /) -> float: ...


class EngineUnavailable(Exception):
    """The compiled generator was asked for by name but is not built on this machine."""


def sort_leave(tiles: str) -> str:
    """Tiles in leave-table order: letters A–Z, then ``?`` (blanks)."""
    return "".join(sorted(tiles, key=lambda c: (c == BLANK, c)))


def leave_of(rack: str, move: Move) -> str:
    """The tiles ``rack`` keeps after ``move``, in leave-table order."""
    left = list(rack.upper())
    for tile in move.rack_tiles:
        left.remove(tile)
    return sort_leave("".join(left))


def rank_key(move: Move, equity: float | None = None) -> tuple[float, bool, int, int, str]:
    """Sort key, best first: score (or ``equity``), across before down, row, column, word."""
    value = float(move.score) if equity is None else equity
    return (-value, move.direction is not Direction.ACROSS, move.y, move.x, move.word)


class MoveGenerator(Protocol):
    """What both engines offer; see the module docstring."""

    name: str

    def count(self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ...) -> int: ...

    def best(
        self,
        board: Board,
        rack: str,
        lexicon: Lexicon,
        tile_set: TileSet = ...,
        *,
        n: int = 1,
        leave: LeaveTable | None = None,
    ) -> list[Move]: ...

    def plays(
        self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ...
    ) -> Sequence[Move]: ...


class PythonGenerator:
    """The reference: :func:`~meeple.games.scrabble.movegen.legal_moves`, then rank."""

    name = "python"

    def count(self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ENGLISH) -> int:
        return len(legal_moves(board, rack, lexicon, tile_set))

    def best(
        self,
        board: Board,
        rack: str,
        lexicon: Lexicon,
        tile_set: TileSet = ENGLISH,
        *,
        n: int = 1,
        leave: LeaveTable | None = None,
    ) -> list[Move]:
        moves = legal_moves(board, rack, lexicon, tile_set)
        if leave is None:
            moves.sort(key=rank_key)
        else:
            moves.sort(key=lambda m: rank_key(m, m.score + leave.get(leave_of(rack, m), 0.0)))
        return moves[: max(n, 0)]

    def plays(
        self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ENGLISH
    ) -> Sequence[Move]:
        return legal_moves(board, rack, lexicon, tile_set)


# One play as _movegen.c writes it (struct Record there).
_RECORD = struct.Struct("<iiBBBBI32s")
_MODE_COUNT, _MODE_ALL, _MODE_TOP_SCORE, _MODE_TOP_EQUITY = range(4)
_NO_STRIDES = bytes(27)


class _Records(Sequence[Move]):
    """Plays packed by the C core; a :class:`Move` is built only when indexed."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data) // _RECORD.size

    @overload
    def __getitem__(self, index: int) -> Move: ...

    @overload
    def __getitem__(self, index: slice) -> list[Move]: ...

    def __getitem__(self, index: int | slice) -> Move | list[Move]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("play index out of range")
        return _move(_RECORD.unpack_from(self._data, index * _RECORD.size))

    def __iter__(self) -> Iterator[Move]:
        for record in _RECORD.iter_unpack(self._data):
            yield _move(record)

    def scores(self) -> list[int]:
        """The scores of the plays, without building them."""
        return [r[0] for r in _RECORD.iter_unpack(self._data)]


def _move(record: tuple[int, int, int, int, int, int, int, bytes]) -> Move:
    score, _, x, y, down, length, newmask, raw = record
    word = raw[:length].decode("ascii")
    tiles = []
    for i in range(length):
        if newmask >> i & 1:
            tiles.append(Placement(y + i, x, word[i]) if down else Placement(y, x + i, word[i]))
    direction = Direction.DOWN if down else Direction.ACROSS
    return Move(tuple(tiles), x, y, direction, word, score)


class NativeGenerator:
    """The compiled core (``_movegen.c``) over the lexicon's memory-mapped flat GADDAG."""

    name = "native"

    def __init__(self) -> None:
        try:
            from meeple.games.scrabble import _movegen  # type: ignore[attr-defined]
        except ImportError as exc:
            raise EngineUnavailable(
                f"the compiled move generator is not built ({exc}); reinstall with a C "
                "compiler (pip install -e .) or use the python engine"
            ) from exc
        if _RECORD.size != _movegen.RECORD_SIZE:  # pragma: no cover - a stale build
            raise EngineUnavailable("the compiled move generator is out of date; rebuild it")
        self._c = _movegen
        self._checked: dict[int, tuple[object, bool]] = {}
        self._layouts: dict[int, tuple[Layout, bytes, bytes]] = {}
        self._values: dict[int, tuple[TileSet, bytes]] = {}
        self._leaves: dict[tuple[int, str], tuple[LeaveTable, bytes, bytes, int]] = {}
        self._caches: dict[int, tuple[LeaveTable, object]] = {}

    # --- inputs, cached per lexicon, layout, tile set and (leave table, rack) ---

    def _graph(self, lexicon: Lexicon) -> tuple[object, int]:
        g = lexicon.gaddag
        seen = self._checked.get(id(g))
        if seen is None or seen[0] is not g:
            seen = (g, bool(self._c.check_graph(g.flat, g.root)))
            self._checked[id(g)] = seen
        if not seen[1]:
            raise ValueError(f"lexicon {lexicon.name!r}: GADDAG fails the structure check")
        return g.flat, g.root

    def _premiums(self, layout: Layout) -> tuple[bytes, bytes]:
        hit = self._layouts.get(id(layout))
        if hit is None or hit[0] is not layout:
            cells = [layout.premium(x, y) for y in range(layout.size) for x in range(layout.size)]
            lm = bytes(p.letter_multiplier for p in cells)
            wm = bytes(p.word_multiplier for p in cells)
            hit = self._layouts[id(layout)] = (layout, lm, wm)
        return hit[1], hit[2]

    def _letter_values(self, tile_set: TileSet) -> bytes:
        hit = self._values.get(id(tile_set))
        if hit is None or hit[0] is not tile_set:
            values = bytes(tile_set.values.get(chr(65 + i), 0) for i in range(26))
            hit = self._values[id(tile_set)] = (tile_set, values)
        return hit[1]

    def _leave_table(self, leave: LeaveTable, rack: str) -> tuple[bytes, bytes, int]:
        """Leave values for every sub-multiset of ``rack``, indexed in mixed radix."""
        key = (id(leave), sort_leave(rack.upper()))
        hit = self._leaves.get(key)
        if hit is not None and hit[0] is leave:
            return hit[1], hit[2], hit[3]
        kinds = sorted(set(key[1]), key=lambda c: (c == BLANK, c))
        counts = [key[1].count(k) for k in kinds]
        strides = []
        size = 1
        for c in counts:
            strides.append(size)
            size *= c + 1
        values = []
        for index in range(size):
            kept = "".join(
                k * ((index // s) % (c + 1)) for k, c, s in zip(kinds, counts, strides, strict=True)
            )
            values.append(float(leave.get(kept, 0.0)))
        per_tile = bytearray(27)
        for k, s in zip(kinds, strides, strict=True):
            per_tile[26 if k == BLANK else ord(k) - 65] = s
        if len(self._leaves) > 4096:
            self._leaves.clear()
        table = struct.pack(f"<{size}d", *values)
        self._leaves[key] = (leave, table, bytes(per_tile), size - 1)
        return table, bytes(per_tile), size - 1

    def _run(
        self,
        board: Board,
        rack: str,
        lexicon: Lexicon,
        tile_set: TileSet,
        mode: int,
        top: int,
        leave: LeaveTable | None,
    ) -> int | bytes:
        counts, blanks = parse_rack(rack)
        table: bytes | None = None
        strides, start = _NO_STRIDES, 0
        if leave is not None:
            table, strides, start = self._leave_table(leave, rack)
        result: int | bytes = self._c.generate(
            *self._inputs(board, self.cells(board), lexicon, tile_set),
            bytes(counts),
            blanks,
            mode,
            top,
            table,
            strides,
            start,
            BINGO_TILES,
            BINGO_BONUS,
        )
        return result

    def _inputs(
        self, board: Board, cells: bytes, lexicon: Lexicon, tile_set: TileSet
    ) -> tuple[object, int, bytes, int, bytes, bytes, bytes]:
        """The arguments both C entry points start with: graph, root, board, size,
        premiums and letter values."""
        flat, root = self._graph(lexicon)
        lm, wm = self._premiums(board.layout)
        return flat, root, cells, board.size, lm, wm, self._letter_values(tile_set)

    # --- one simulated line (issue 37) ---

    def cells(self, board: Board) -> bytes:
        """The board as :meth:`line` takes it: row-major, ``.`` empty, blanks lower case."""
        try:
            return "".join(board.rows()).encode("ascii")
        except UnicodeEncodeError as exc:
            raise NotationError("a board tile is not an ASCII letter") from exc

    def line(
        self,
        board: Board,
        cells: bytes,
        lexicon: Lexicon,
        tile_set: TileSet,
        leave: LeaveTable,
        value: float,
        mine: str,
        theirs: str,
        bag: str,
        endgame_plies: bool,
    ) -> tuple[float, int, bool]:
        """The rest of one simulated line after our candidate, played in C.

        ``cells`` is :meth:`cells` of ``board`` with the candidate on it (``board`` gives
        the layout), ``value`` the candidate's score, ``mine`` our rack after it and the
        draw, ``theirs`` the opponent's rack, ``bag`` the tiles left to draw (from the
        end). The opponent answers with its best play by equity, then we do, as
        :meth:`meeple.ai.scrabble.StrongPlayer._run_once` does with :meth:`best`; returns
        its ``(value, unseen_after, final)``, the same numbers. Leave values are read
        through ``leave.get`` once per distinct leave and kept in C, per table.
        """
        hit = self._caches.get(id(leave))
        if hit is None or hit[0] is not leave:
            if len(self._caches) > 64:
                self._caches.clear()
            hit = self._caches[id(leave)] = (leave, self._c.leave_cache())
        result: tuple[float, int, bool] = self._c.sim_line(
            *self._inputs(board, cells, lexicon, tile_set),
            BINGO_TILES,
            BINGO_BONUS,
            hit[1],
            leave.get,
            value,
            mine,
            theirs,
            bag,
            endgame_plies,
            tile_set.value(BLANK),
        )
        return result

    # --- the API ---

    def count(self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ENGLISH) -> int:
        result = self._run(board, rack, lexicon, tile_set, _MODE_COUNT, 0, None)
        assert isinstance(result, int)
        return result

    def best(
        self,
        board: Board,
        rack: str,
        lexicon: Lexicon,
        tile_set: TileSet = ENGLISH,
        *,
        n: int = 1,
        leave: LeaveTable | None = None,
    ) -> list[Move]:
        mode = _MODE_TOP_SCORE if leave is None else _MODE_TOP_EQUITY
        data = self._run(board, rack, lexicon, tile_set, mode, max(n, 0), leave)
        assert isinstance(data, bytes)
        return list(_Records(data))

    def plays(
        self, board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ENGLISH
    ) -> _Records:
        data = self._run(board, rack, lexicon, tile_set, _MODE_ALL, 0, None)
        assert isinstance(data, bytes)
        return _Records(data)


_generators: dict[str, MoveGenerator] = {}
_native_error: EngineUnavailable | None = None  # remembered: a failed import is not cached
_announced = False


def native_available() -> bool:
    """Whether the compiled generator is built and imports."""
    try:
        get_generator("native")
    except EngineUnavailable:
        return False
    return True


def get_generator(name: Literal["auto", "native", "python"] | str = "auto") -> MoveGenerator:
    """The generator called ``name``; ``"auto"`` is native when built, else python.

    ``"native"`` raises :class:`EngineUnavailable` when the extension is not built;
    ``"auto"`` logs once (INFO) which engine it chose, and why when it is python.
    """
    global _announced, _native_error
    if name == "auto":
        try:
            chosen = get_generator("native")
            reason = ""
        except EngineUnavailable as exc:
            chosen = get_generator("python")
            reason = f" ({exc})"
        if not _announced:
            _announced = True
            logger.info("scrabble move generator: %s%s", chosen.name, reason)
        return chosen
    hit = _generators.get(name)
    if hit is not None:
        return hit
    generator: MoveGenerator
    if name == "native":
        if _native_error is not None:
            raise _native_error
        try:
            generator = NativeGenerator()
        except EngineUnavailable as exc:
            _native_error = exc
            raise
    elif name == "python":
        generator = PythonGenerator()
    else:
        raise ValueError(f"no move generator {name!r}; choose from {', '.join(ENGINES)}")
    _generators[name] = generator
    return generator

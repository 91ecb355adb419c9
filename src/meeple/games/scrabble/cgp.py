"""CGP, the one-line Scrabble position notation Macondo and wolges read and write.

A CGP line has four space-separated fields, then optional operations::

    15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0 lex CSW21;

1. the board: rows top to bottom separated by ``/``; in a row a number (one or two
   digits) is a run of empty squares, ``A``–``Z`` a tile, ``a``–``z`` a blank;
2. the racks: the player to move, ``/``, the opponent (either may be empty; ``?`` is
   a blank);
3. the scores, ``mine/theirs``;
4. how many scoreless turns in a row have just been played;
5. operations ``key value;`` (``lex CSW21;``), kept as text and otherwise ignored.

Call :func:`parse_cgp` to read one into a :class:`CgpPosition`, :func:`format_cgp` to
write one. Bad input raises :class:`NotationError` saying what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from meeple.games.scrabble.board import STANDARD_LAYOUT, Board, Layout
from meeple.games.scrabble.errors import NotationError

__all__ = ["MAX_CGP_LENGTH", "CgpPosition", "format_cgp", "parse_cgp"]

# A full 15x15 board is 225 characters plus separators; the rest is racks, scores and
# a few operations. Anything much longer is not a position.
MAX_CGP_LENGTH = 2048
MAX_RACK_LENGTH = 7

_RACK = re.compile(r"[A-Z?]*")
_INT = re.compile(r"-?[0-9]{1,6}")
_OPCODE = re.compile(r"\s*([A-Za-z][A-Za-z0-9_.-]*)(?:\s+([^;]*?))?\s*;")


@dataclass(frozen=True, slots=True, eq=False)
class CgpPosition:
    """A position read from CGP: board, both racks, scores, scoreless turns, operations.

    ``rack`` is the player to move's; ``scores`` is ``(mine, theirs)``. ``board`` is a
    fresh :class:`Board` the caller may change.
    """

    board: Board
    rack: str
    opponent_rack: str = ""
    scores: tuple[int, int] = (0, 0)
    zero_turns: int = 0
    opcodes: tuple[tuple[str, str], ...] = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CgpPosition):
            return NotImplemented
        return (
            self.board == other.board
            and self.rack == other.rack
            and self.opponent_rack == other.opponent_rack
            and self.scores == other.scores
            and self.zero_turns == other.zero_turns
            and self.opcodes == other.opcodes
        )

    __hash__ = None  # type: ignore[assignment]  # holds a mutable board


def _parse_row(text: str, y: int, size: int) -> str:
    cells: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if "0" <= c <= "9":
            j = i
            while j < len(text) and "0" <= text[j] <= "9":
                j += 1
            run = int(text[i:j])
            if run == 0 or j - i > 2:
                raise NotationError(f"CGP row {y + 1}: bad run of empty squares {text[i:j]!r}")
            cells.extend("." * run)
            i = j
        elif c.isascii() and c.isalpha():
            cells.append(c)
            i += 1
        else:
            raise NotationError(f"CGP row {y + 1}: unexpected character {c!r}")
        if len(cells) > size:
            break
    if len(cells) != size:
        raise NotationError(f"CGP row {y + 1} has {len(cells)} squares, expected {size}")
    return "".join(cells)


def _parse_rack(text: str, whose: str) -> str:
    if not _RACK.fullmatch(text):
        raise NotationError(f"CGP {whose} rack {text!r}: only A–Z and ? allowed")
    if len(text) > MAX_RACK_LENGTH:
        raise NotationError(f"CGP {whose} rack {text!r} has more than {MAX_RACK_LENGTH} tiles")
    return text


def parse_cgp(
    text: str, *, layout: Layout = STANDARD_LAYOUT, max_length: int = MAX_CGP_LENGTH
) -> CgpPosition:
    """Read a CGP line (see the module docstring); raise NotationError when it is not one."""
    if len(text) > max_length:
        raise NotationError(f"CGP longer than {max_length} characters")
    fields = text.split(None, 4)
    if len(fields) < 4:
        raise NotationError(
            "CGP needs board, racks, scores and scoreless-turn count separated by spaces"
        )
    board_text, racks_text, scores_text, zeros_text = fields[:4]
    rows = board_text.split("/")
    if len(rows) != layout.size:
        raise NotationError(f"CGP board has {len(rows)} rows, expected {layout.size}")
    board = Board.from_rows([_parse_row(row, y, layout.size) for y, row in enumerate(rows)], layout)
    rack, slash, opponent = racks_text.partition("/")
    if not slash:
        raise NotationError(f"CGP racks {racks_text!r}: expected RACK/OPPONENT (either empty)")
    rack = _parse_rack(rack, "player's")
    opponent = _parse_rack(opponent, "opponent's")
    score_parts = scores_text.split("/")
    if len(score_parts) != 2 or not all(_INT.fullmatch(s) for s in score_parts):
        raise NotationError(f"CGP scores {scores_text!r}: expected two integers as MINE/THEIRS")
    if not (zeros_text.isascii() and zeros_text.isdigit() and len(zeros_text) <= 3):
        raise NotationError(f"CGP scoreless-turn count {zeros_text!r} is not a small number")
    opcodes: list[tuple[str, str]] = []
    rest = fields[4] if len(fields) > 4 else ""
    pos = 0
    while rest[pos:].strip():
        match = _OPCODE.match(rest, pos)
        if match is None:
            raise NotationError(f"CGP operation {rest[pos:].strip()!r}: expected 'key value;'")
        opcodes.append((match.group(1), match.group(2) or ""))
        pos = match.end()
    return CgpPosition(
        board=board,
        rack=rack,
        opponent_rack=opponent,
        scores=(int(score_parts[0]), int(score_parts[1])),
        zero_turns=int(zeros_text),
        opcodes=tuple(opcodes),
    )


def _format_row(row: str) -> str:
    out: list[str] = []
    run = 0
    for c in row:
        if c == ".":
            run += 1
            continue
        if run:
            out.append(str(run))
            run = 0
        out.append(c)
    if run:
        out.append(str(run))
    return "".join(out)


def format_cgp(position: CgpPosition) -> str:
    """Write a position as one CGP line; :func:`parse_cgp` reads it back unchanged."""
    board = "/".join(_format_row(row) for row in position.board.rows())
    mine, theirs = position.scores
    text = f"{board} {position.rack}/{position.opponent_rack} {mine}/{theirs} {position.zero_turns}"
    for key, value in position.opcodes:
        text += f" {key} {value};" if value else f" {key};"
    return text

"""Full move generation: every legal tile play for a board and a rack, with its score.

Call :func:`legal_moves` with the board, the rack (``?`` for a blank) and a
:class:`~meeple.games.scrabble.lexicon.Lexicon`; it returns :class:`Move` values.
Exchanges and passes are not plays of tiles and are not listed; :func:`exchanges`
lists the distinct exchanges a rack allows.

The algorithm is Gordon's GADDAG search (1994), done line by line (rows for across
plays, columns for down plays):

1. *Anchors* are the empty squares next to a tile (the centre square on an empty
   board); every play covers one. A play is generated from the leftmost anchor it
   covers only: walking left from an anchor stops before the previous anchor.
2. *Cross checks*: for each empty square, the letters that make a valid word with
   the tiles above and below it (for across plays), as a 26-bit mask, and the face
   value of those tiles (the *cross score*), -1 when there are none.
3. From each anchor, walk the GADDAG left through the reversed prefix, cross the
   separator, walk right; at every empty square try the letters allowed by the
   automaton, the cross check and the rack at once (one AND of bitmasks).

Scores are accumulated on the way down (main word sum, word multiplier, cross words),
so nothing is allocated for a candidate until it is emitted as a :class:`Move`.

Which plays are listed follows Macondo and wolges, so counts compare: a play (a set of
tiles on squares) is listed once. A single tile is listed as the across play when it
makes an across word of two or more letters, else as the down play; on an empty board
only across plays are listed (the down ones are their mirror images). A blank standing
for a different letter is a different play.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

from meeple.games.scrabble.board import Board, Direction
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.gaddag import FINAL_BIT, LETTER_BITS, SEP, SEP_BIT, Gaddag, walk
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move, Placement
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = ["BINGO_BONUS", "BINGO_TILES", "exchanges", "legal_moves", "parse_rack"]

BINGO_BONUS = 50
BINGO_TILES = 7
MAX_RACK = 7

_ORD_A = ord("A")
_UPPER = [chr(_ORD_A + i) for i in range(26)]
_LOWER = [c.lower() for c in _UPPER]


def parse_rack(rack: str) -> tuple[list[int], int]:
    """``(counts per letter A–Z, number of blanks)`` for a rack such as ``AEINRS?``.

    Letters may be in either case; anything but A–Z and ``?`` raises NotationError, as
    does a rack of more than seven tiles.
    """
    if len(rack) > MAX_RACK:
        raise NotationError(f"a rack holds at most {MAX_RACK} tiles: {rack!r}")
    counts = [0] * 26
    blanks = 0
    for c in rack.upper():
        if c == BLANK:
            blanks += 1
        elif "A" <= c <= "Z":
            counts[ord(c) - _ORD_A] += 1
        else:
            raise NotationError(f"not a rack tile: {c!r} in {rack!r}")
    return counts, blanks


def exchanges(rack: str) -> list[str]:
    """Every distinct non-empty set of rack tiles one could exchange, sorted (``?`` last)."""
    tiles = sorted(rack.upper(), key=lambda c: (c == BLANK, c))
    found = {"".join(combo) for k in range(1, len(tiles) + 1) for combo in combinations(tiles, k)}
    return sorted(found, key=lambda s: (len(s), s))


def _cross_check(g: Gaddag, before: list[int], after: list[int]) -> int:
    """Letters L (as a bit mask) such that ``before + L + after`` is a word.

    Read in the GADDAG as ``reverse(before) SEP L after`` (or ``L SEP after`` when
    nothing is before), so the shared part is walked once and only the letters the
    automaton offers are tried.
    """
    nodes = g.nodes
    if before:
        node = walk(nodes, g.root, reversed(before))
        if node < 0:
            return 0
        node = walk(nodes, node, (SEP,))
        if node < 0:
            return 0
        then_sep = False
    else:
        node = g.root
        then_sep = True
    m = nodes[node]
    result = 0
    for bit in _bits(m & LETTER_BITS):
        n = nodes[node + 1 + (m & (bit - 1)).bit_count()]
        if then_sep:
            n = walk(nodes, n, (SEP,))
            if n < 0:
                continue
        n = walk(nodes, n, after)
        if n >= 0 and nodes[n] & FINAL_BIT:
            result |= bit
    return result


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def legal_moves(
    board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet = ENGLISH
) -> list[Move]:
    """Every legal tile play of ``rack`` on ``board``, scored, in no particular order.

    ``rack`` is up to seven tiles, ``?`` for a blank. Every word formed must be in
    ``lexicon``; the first play must cover the layout's centre and use two tiles or
    more. Letter and word premiums count under new tiles only, blanks score 0, and
    using seven tiles earns a 50-point bonus. Sort the result yourself (the CLI sorts
    by score, best first).
    """
    counts, blanks = parse_rack(rack)
    g = lexicon.gaddag
    size = board.size
    layout = board.layout
    values = [tile_set.value(c) for c in _UPPER]

    # The board as rows: letter codes (-1 empty), characters and face values.
    chars = board.rows()
    rows = [[(ord(c.upper()) - _ORD_A) if c != "." else -1 for c in row] for row in chars]
    empty_board = all(code < 0 for row in rows for code in row)

    anchor_rows = [[False] * size for _ in range(size)]
    if empty_board:
        cx, cy = layout.centre
        anchor_rows[cy][cx] = True
    else:
        for y in range(size):
            for x in range(size):
                if rows[y][x] < 0 and (
                    (x > 0 and rows[y][x - 1] >= 0)
                    or (x + 1 < size and rows[y][x + 1] >= 0)
                    or (y > 0 and rows[y - 1][x] >= 0)
                    or (y + 1 < size and rows[y + 1][x] >= 0)
                ):
                    anchor_rows[y][x] = True

    moves: list[Move] = []
    placements: dict[tuple[int, int, str], Placement] = {}

    def placement(x: int, y: int, tile: str) -> Placement:
        # Plays share squares; one Placement per (square, tile) saves allocations.
        key = (x, y, tile)
        p = placements.get(key)
        if p is None:
            p = placements[key] = Placement(y, x, tile)
        return p

    directions = [Direction.ACROSS] if empty_board else [Direction.ACROSS, Direction.DOWN]
    for direction in directions:
        across = direction is Direction.ACROSS
        if across:
            lines = rows
            line_chars = chars
            anchors = anchor_rows
        else:
            lines = [list(col) for col in zip(*rows, strict=True)]
            line_chars = ["".join(col) for col in zip(*chars, strict=True)]
            anchors = [list(col) for col in zip(*anchor_rows, strict=True)]
        perp = [list(col) for col in zip(*lines, strict=True)]  # perp[p][i] = lines[i][p]
        for i in range(size):
            if not any(anchors[i]):
                continue
            line = lines[i]
            # Per square of this line: premiums, face values, cross checks, cross scores.
            lm = [0] * size
            wm = [0] * size
            face = [0] * size
            cc = [LETTER_BITS] * size
            cs = [-1] * size
            for p in range(size):
                x, y = (p, i) if across else (i, p)
                prem = layout.premium(x, y)
                lm[p] = prem.letter_multiplier
                wm[p] = prem.word_multiplier
                if line[p] >= 0:
                    c = line_chars[i][p]
                    face[p] = 0 if c.islower() else values[line[p]]
                    continue
                column = perp[p]
                lo = i
                while lo > 0 and column[lo - 1] >= 0:
                    lo -= 1
                hi = i
                while hi + 1 < size and column[hi + 1] >= 0:
                    hi += 1
                if lo == i and hi == i:
                    continue
                pchars = line_chars  # characters of perpendicular neighbours, via lines
                total = 0
                for q in (*range(lo, i), *range(i + 1, hi + 1)):
                    ch = pchars[q][p]
                    total += 0 if ch.islower() else values[column[q]]
                cs[p] = total
                cc[p] = _cross_check(g, column[lo:i], column[i + 1 : hi + 1])
            _gen_line(
                g,
                line,
                line_chars[i],
                anchors[i],
                lm,
                wm,
                face,
                cc,
                cs,
                counts,
                blanks,
                values,
                i,
                across,
                moves,
                placement,
            )
    return moves


def _gen_line(
    g: Gaddag,
    line: list[int],
    chars: str,
    anchors: list[bool],
    lm: list[int],
    wm: list[int],
    face: list[int],
    cc: list[int],
    cs: list[int],
    rack: list[int],
    blanks: int,
    values: list[int],
    index: int,
    across: bool,
    moves: list[Move],
    placement: Callable[[int, int, str], Placement],
) -> None:
    """Generate the plays of one line (a row when ``across``, else a column)."""
    nodes = g.nodes
    size = len(line)
    direction = Direction.ACROSS if across else Direction.DOWN
    placed: list[str | None] = [None] * size  # the new tile on each square, this candidate
    rmask = 0
    for letter in range(26):
        if rack[letter]:
            rmask |= 1 << letter
    anchor = 0
    limit = 0
    right_free = True

    def emit(lo: int, hi: int, score: int, n: int) -> None:
        if n == 1 and not across and cs[anchor] >= 0:
            return  # a lone tile with an across word is listed as the across play
        if n == BINGO_TILES:
            score += BINGO_BONUS
        tiles = []
        word = []
        for p in range(lo, hi + 1):
            t = placed[p]
            if t is None:
                word.append(chars[p])
            else:
                word.append(t)
                tiles.append(placement(p, index, t) if across else placement(index, p, t))
        if across:
            moves.append(Move(tuple(tiles), lo, index, direction, "".join(word), score))
        else:
            moves.append(Move(tuple(tiles), index, lo, direction, "".join(word), score))

    # Letters a tile could be placed as right now: any with a blank left, else the rack's.
    avail = LETTER_BITS if blanks else rmask

    # The search is four mutually recursive functions: go_left / go_right place a tile on
    # an empty square; left_from / right_from take in the run of board tiles beyond the
    # square just covered and decide what may follow. A call is only made when the next
    # square can take at least one letter (automaton AND cross check AND rack), because
    # in CPython the calls that would find nothing are most of the cost.

    def go_left(pos: int, node: int, main: int, wmul: int, cross: int, n: int) -> None:
        nonlocal rmask, blanks, avail
        m = nodes[node]
        poss = m & cc[pos] & avail
        base = node + 1
        lmul = lm[pos]
        wsq = wm[pos]
        csq = cs[pos]
        n1 = n + 1
        wmul1 = wmul * wsq
        while poss:
            bit = poss & -poss
            poss ^= bit
            letter = bit.bit_length() - 1
            child = nodes[base + (m & (bit - 1)).bit_count()]
            count = rack[letter]
            if count:
                rack[letter] = count - 1
                if count == 1:
                    rmask ^= bit
                    if not blanks:
                        avail = rmask
                v = values[letter] * lmul
                placed[pos] = _UPPER[letter]
                left_from(
                    pos, child, main + v, wmul1, cross + (csq + v) * wsq if csq >= 0 else cross, n1
                )
                rack[letter] = count
                if count == 1:
                    rmask |= bit
                    if not blanks:
                        avail = rmask
            if blanks:
                blanks -= 1
                if not blanks:
                    avail = rmask
                placed[pos] = _LOWER[letter]
                left_from(pos, child, main, wmul1, cross + csq * wsq if csq >= 0 else cross, n1)
                blanks += 1
                avail = LETTER_BITS
        placed[pos] = None

    def left_from(pos: int, node: int, main: int, wmul: int, cross: int, n: int) -> None:
        # Take in the board tiles left of pos: the word cannot stop next to one.
        p = pos - 1
        while p >= 0 and line[p] >= 0:
            m = nodes[node]
            bit = 1 << line[p]
            if not m & bit:
                return
            node = nodes[node + 1 + (m & (bit - 1)).bit_count()]
            main += face[p]
            p -= 1
        m = nodes[node]
        if right_free and m & FINAL_BIT:
            emit(p + 1, anchor, main * wmul + cross, n)
        if m & SEP_BIT:
            sep = nodes[node + 1 + (m & (SEP_BIT - 1)).bit_count()]
            right_from(anchor, sep, p + 1, main, wmul, cross, n)
        if p >= limit and m & cc[p] & avail:
            go_left(p, node, main, wmul, cross, n)

    def go_right(pos: int, node: int, lo: int, main: int, wmul: int, cross: int, n: int) -> None:
        nonlocal rmask, blanks, avail
        m = nodes[node]
        poss = m & cc[pos] & avail
        base = node + 1
        lmul = lm[pos]
        wsq = wm[pos]
        csq = cs[pos]
        n1 = n + 1
        wmul1 = wmul * wsq
        while poss:
            bit = poss & -poss
            poss ^= bit
            letter = bit.bit_length() - 1
            child = nodes[base + (m & (bit - 1)).bit_count()]
            count = rack[letter]
            if count:
                rack[letter] = count - 1
                if count == 1:
                    rmask ^= bit
                    if not blanks:
                        avail = rmask
                v = values[letter] * lmul
                placed[pos] = _UPPER[letter]
                right_from(
                    pos,
                    child,
                    lo,
                    main + v,
                    wmul1,
                    cross + (csq + v) * wsq if csq >= 0 else cross,
                    n1,
                )
                rack[letter] = count
                if count == 1:
                    rmask |= bit
                    if not blanks:
                        avail = rmask
            if blanks:
                blanks -= 1
                if not blanks:
                    avail = rmask
                placed[pos] = _LOWER[letter]
                right_from(
                    pos, child, lo, main, wmul1, cross + csq * wsq if csq >= 0 else cross, n1
                )
                blanks += 1
                avail = LETTER_BITS
        placed[pos] = None

    def right_from(pos: int, node: int, lo: int, main: int, wmul: int, cross: int, n: int) -> None:
        # Take in the board tiles right of pos: the word cannot stop next to one.
        p = pos + 1
        while p < size and line[p] >= 0:
            m = nodes[node]
            bit = 1 << line[p]
            if not m & bit:
                return
            node = nodes[node + 1 + (m & (bit - 1)).bit_count()]
            main += face[p]
            p += 1
        m = nodes[node]
        if m & FINAL_BIT and p - 1 > anchor:
            emit(lo, p - 1, main * wmul + cross, n)
        if p < size and m & cc[p] & avail:
            go_right(p, node, lo, main, wmul, cross, n)

    for a in range(size):
        if not anchors[a]:
            continue
        anchor = a
        right_free = a + 1 == size or line[a + 1] < 0
        # Walk left over tiles and empty non-anchor squares: the leftmost anchor of a play
        # generates it, so the previous anchor (exclusive) bounds this one.
        limit = a
        while limit > 0 and (line[limit - 1] >= 0 or not anchors[limit - 1]):
            limit -= 1
        if nodes[g.root] & cc[a] & avail:
            go_left(a, g.root, 0, 1, 0, 0)

"""Positions as text: set up a game in the middle of play, and print one.

A diagram is five lines of five tokens, row 0 first. A token is the cell's level
(0–3), then ``X`` when a dome sits on it, then a worker letter (a letter alone stands
on the ground): ``A`` / ``a`` are seat 0's male / female worker, ``B`` / ``b``
seat 1's, ``C`` / ``c`` seat 2's. So ``2A`` is seat 0's male worker on
level 2, ``3X`` a complete tower, ``0`` an empty ground cell::

    0  0  1  0  0
    0  2A 3  0  0
    0  0  0X 1b 0
    0  0  0  0  0
    0  a  0  0  B

Tests, tools and documentation use it; play never needs it.
"""

from __future__ import annotations

from meeple.games.santorini.board import CELLS, SIZE
from meeple.games.santorini.gods import GODS
from meeple.games.santorini.state import MAX_PLAYERS, GameState, Phase, Rules, Step

__all__ = ["diagram", "from_diagram"]

_LETTERS = "AaBbCc"


def from_diagram(
    text: str,
    *,
    gods: tuple[str | None, ...] | None = None,
    turn: int = 0,
    steps: tuple[Step, ...] = (),
    moved_up: tuple[bool, ...] | None = None,
    players: int | None = None,
) -> GameState:
    """A state in phase PLAY with the diagram's board, ``turn`` on turn, ``steps`` taken
    this turn. ``gods`` per seat (None for no god; all None plays without gods);
    ``players`` defaults to ``len(gods)`` or the seats seen, at least 2."""
    rows = [line.split() for line in text.strip().splitlines()]
    if len(rows) != SIZE or any(len(r) != SIZE for r in rows):
        raise ValueError("a diagram has 5 rows of 5 tokens")
    levels: list[int] = []
    domes: list[bool] = []
    placed: dict[int, int] = {}
    for i, token in enumerate(t for row in rows for t in row):
        if token[0].isdigit():
            level, rest = int(token[0]), token[1:]
        else:
            level, rest = 0, token  # a bare worker letter stands on the ground
        if not 0 <= level <= 3:
            raise ValueError(f"bad level in {token!r}")
        dome = rest.startswith("X")
        if dome:
            rest = rest[1:]
        if rest:
            if len(rest) != 1 or rest not in _LETTERS:
                raise ValueError(f"bad token {token!r}")
            placed[_LETTERS.index(rest)] = i
        levels.append(level)
        domes.append(dome)
    seen = max(placed, default=0) // 2 + 1
    n = players or (len(gods) if gods is not None else max(2, seen))
    if not 2 <= n <= MAX_PLAYERS:
        raise ValueError("2 or 3 players")
    names = gods if gods is not None else (None,) * n
    if any(g is not None and g not in GODS for g in names):
        raise ValueError(f"unknown god in {names}")
    with_gods = any(g is not None for g in names)
    return GameState(
        rules=Rules(players=n, gods=with_gods),
        challenger=0,
        phase=Phase.PLAY,
        turn=turn,
        gods=tuple(names),
        starter=0,
        levels=tuple(levels),
        domes=tuple(domes),
        workers=tuple(placed.get(w) for w in range(2 * n)),
        alive=(True,) * n,
        steps=steps,
        moved_up=moved_up if moved_up is not None else (False,) * n,
    )


def diagram(s: GameState) -> str:
    """The board of ``s`` as a diagram (tokens padded to line up)."""
    occ = s.occupancy()
    tokens = []
    for c in CELLS:
        t = str(s.levels[c]) + ("X" if s.domes[c] else "")
        w = occ[c]
        if w is not None:
            t += _LETTERS[w]
        tokens.append(t.ljust(3))
    return "\n".join(" ".join(tokens[r * SIZE : (r + 1) * SIZE]).rstrip() for r in range(SIZE))

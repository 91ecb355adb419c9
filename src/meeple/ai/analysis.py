"""Analysis of a finished Scrabble game: each move against the engine's best (issue 24).

:func:`analyse` replays a stored record (``meeple.games.records``) and, before every
play, exchange and pass, asks the move generator for the best play of the mover's rack
by the strong player's static equity — score plus the value of the tiles kept
(:mod:`meeple.ai.leaves`), the ranking :class:`~meeple.ai.scrabble.StrongPlayer`
simulates from. Each analysed step gets that best play and the equity the move lost
against it (0 when the move was the best, or better: equity is an estimate).

Decision: static equity, not the strong player's simulation or endgame search. A
simulation costs seconds per move; the static ranking analyses a 25-move game in well
under the issue's 5 s (docs/benchmarks.md, "Replay analysis"). Pure computation over
the engine: no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from meeple.ai.leaves import LeaveValues, default_leaves
from meeple.games import records
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import MoveGenerator, get_generator, leave_of, sort_leave
from meeple.games.scrabble.game import Exchanged, Passed, PlayMade
from meeple.games.scrabble.lexicon import Lexicon

__all__ = ["analyse"]


def _minus(rack: str, tiles: str) -> str:
    left = Counter(rack.upper())
    left.subtract(tiles.upper())
    return sort_leave("".join(t * n for t, n in left.items() if n > 0))


def analyse(
    record: Mapping[str, Any],
    lexicon: Lexicon,
    *,
    leaves: LeaveValues | None = None,
    generator: MoveGenerator | None = None,
) -> list[dict[str, Any] | None]:
    """One entry per replay step (None where there is nothing to analyse): ``best``
    (the best play's position and word, or ``pass``), ``best_score``, ``equity_lost``
    (rounded to 0.1) and ``played`` (what was played, as the log writes it)."""
    leaves = leaves if leaves is not None else default_leaves()
    generator = generator if generator is not None else get_generator()
    out: list[dict[str, Any] | None] = []
    rows: list[str] = []
    seen = 0
    for step in records.replay(record):
        game = step.game
        events = game.events
        entry: dict[str, Any] | None = None
        for event in events[seen:]:
            if isinstance(event, PlayMade | Exchanged | Passed) and rows:
                entry = _judge(event, Board.from_rows(rows), game, lexicon, leaves, generator)
        seen = len(events)
        rows = game.board.rows()
        out.append(entry)
    return out


def _judge(
    event: PlayMade | Exchanged | Passed,
    board: Board,
    game: Any,
    lexicon: Lexicon,
    leaves: LeaveValues,
    generator: MoveGenerator,
) -> dict[str, Any]:
    rack = event.rack
    if isinstance(event, PlayMade):
        played = event.score + leaves.value(leave_of(rack, event.move))
        text = f"{event.move.position} {event.move.word}"
    elif isinstance(event, Exchanged):
        played = leaves.value(_minus(rack, event.tiles))
        text = f"exchange {len(event.tiles)}"
    else:
        played = leaves.value(sort_leave(rack.upper()))
        text = "pass"
    best = generator.best(board, rack, lexicon, game.variant.tile_set, n=1, leave=leaves)
    if best:
        move = best[0]
        top = move.score + leaves.value(leave_of(rack, move))
        name, score = f"{move.position} {move.word}", move.score
    else:
        top, name, score = leaves.value(sort_leave(rack.upper())), "pass", 0
    return {
        "played": text,
        "best": name,
        "best_score": score,
        "equity_lost": round(max(0.0, top - played), 1),
    }

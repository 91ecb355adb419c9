"""Analysis of a finished game: each move against the engine's best (issues 24, 34).

Scrabble (:func:`analyse`) below; Spectrangle (:func:`analyse_spectrangle`): each turn
against the placement of the mover's hand that scores most, which is exact for the
turn (a Spectrangle move's points are all scored at once; what it leaves the next
player is not weighed). :func:`analyse_game` picks by the record's game.

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

__all__ = ["ALTERNATIVES", "analyse", "analyse_game", "analyse_spectrangle"]

# How many of the engine's best moves a step lists beside the one played.
ALTERNATIVES = 5


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
    (rounded to 0.1), ``played`` (what was played, as the log writes it), ``rack`` (the
    mover's rack before it) and ``alternatives``: the engine's :data:`ALTERNATIVES` best
    by equity, each ``{"play", "score", "equity"}``."""
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
    best = generator.best(board, rack, lexicon, game.variant.tile_set, n=ALTERNATIVES, leave=leaves)
    ranked = [(move, move.score + leaves.value(leave_of(rack, move))) for move in best]
    alternatives = [
        {"play": f"{move.position} {move.word}", "score": move.score, "equity": round(eq, 1)}
        for move, eq in ranked
    ]
    if ranked:
        move, top = max(ranked, key=lambda pair: pair[1])  # the first of equal bests
        name, score = f"{move.position} {move.word}", move.score
    else:
        top, name, score = leaves.value(sort_leave(rack.upper())), "pass", 0
    return {
        "played": text,
        "rack": sort_leave(rack.upper()),
        "best": name,
        "best_score": score,
        "equity_lost": round(max(0.0, top - played), 1),
        "alternatives": alternatives,
    }


def analyse_spectrangle(record: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """One entry per replay step (None where there is nothing to analyse): for each
    placement, skip and exchange, ``best`` (the tile, as rotated, and its field: "RRG4
    on 12", or ``skip`` when nothing fitted), ``best_score``, ``equity_lost`` (the
    points the move scored less than the best; an exchange or a skip scores 0),
    ``played``, ``rack`` (the mover's hand) and ``alternatives`` (the best placements,
    one per tile and field)."""
    from meeple.games.spectrangle.game import Exchanged as SpExchanged
    from meeple.games.spectrangle.game import Skipped, TilePlaced

    out: list[dict[str, Any] | None] = []
    seen = 0
    before: tuple[int, list[Any], tuple[Any, ...]] | None = None
    for step in records.replay(record):
        game = step.game
        entry: dict[str, Any] | None = None
        for event in game.events[seen:]:
            if before is None or not isinstance(event, TilePlaced | Skipped | SpExchanged):
                continue
            mover, placements, hand = before
            if event.player != mover:
                continue
            if isinstance(event, TilePlaced):
                played, text = event.points, f"{event.tile} on {event.index}"
            elif isinstance(event, Skipped):
                played, text = 0, "skip"
            else:
                played, text = 0, f"exchange {event.tile}"
            entry = _spectrangle_entry(placements, hand, played, text)
        seen = len(game.events)
        turn = game.turn
        if turn is None or game.is_over:
            before = None
        else:
            before = (turn, game.legal_placements(turn), game.hand(turn))
        out.append(entry)
    return out


def _spectrangle_entry(
    placements: list[Any], hand: tuple[Any, ...], played: int, text: str
) -> dict[str, Any]:
    ranked = sorted(placements, key=lambda p: (-p.points, str(p.tile), p.index))
    alternatives = [
        {"play": f"{p.tile} on {p.index}", "score": p.points, "equity": float(p.points)}
        for p in ranked[:ALTERNATIVES]
    ]
    best = ranked[0] if ranked else None
    return {
        "played": text,
        "rack": " ".join(str(t) for t in hand),
        "best": f"{best.tile} on {best.index}" if best else "skip",
        "best_score": best.points if best else 0,
        "equity_lost": float(max(0, (best.points if best else 0) - played)),
        "alternatives": alternatives,
    }


def analyse_game(
    record: Mapping[str, Any], lexicon: Lexicon | None
) -> list[dict[str, Any] | None] | None:
    """The analysis of a record of any game that has one (None otherwise: Santorini,
    or Scrabble without its word list)."""
    game = record.get("game")
    if game == "scrabble":
        return None if lexicon is None else analyse(record, lexicon)
    if game == "spectrangle":
        return analyse_spectrangle(record)
    return None

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

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from meeple.ai.leaves import LeaveValues, default_leaves
from meeple.games import records
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import MoveGenerator, get_generator, leave_of, sort_leave
from meeple.games.scrabble.game import Exchanged, Passed, PlayMade
from meeple.games.scrabble.lexicon import Lexicon

__all__ = [
    "ALTERNATIVES",
    "SANTORINI_DEPTH",
    "VERSION",
    "WIN_SCALE",
    "analyse",
    "analyse_game",
    "analyse_santorini",
    "analyse_spectrangle",
]

# The analysis' version: the store keeps each game's analysis under it (meeple.web.app,
# WebContext.analysis), so one more when what analyse_game returns changes makes every
# replay compute its analysis again.
VERSION = 1

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
    """The analysis of a record of any game (None for Scrabble without its word list)."""
    game = record.get("game")
    if game == "scrabble":
        return None if lexicon is None else analyse(record, lexicon)
    if game == "spectrangle":
        return analyse_spectrangle(record)
    if game == "santorini":
        return analyse_santorini(record)
    return None


# --------------------------------------------------------------------------- Santorini

SANTORINI_DEPTH = 3
"""Turns the Santorini analysis looks ahead: the mover's turn, the reply, its own next
(each candidate turn is searched :data:`SANTORINI_DEPTH` - 1 turns deeper)."""

WIN_SCALE = 100.0
"""Engine units per logit: the evaluation was fitted as a logistic regression of the
result on it at this scale (``scripts/train_santorini_eval.py --scale 100``), so
``1 / (1 + exp(-value / WIN_SCALE))`` reads a value as the mover's chance to win."""

_SANTORINI_WIN = 1_000_000  # santorini_search.WIN: a value past WIN - 1000 is a forced result
_SANTORINI_MATE = _SANTORINI_WIN - 1000


def _win_chance(value: int) -> float:
    """The mover's chance to win, in per cent (0.1), of an engine value: 100 for a
    forced win, 0 for a forced loss."""
    if value > _SANTORINI_MATE:
        return 100.0
    if value < -_SANTORINI_MATE:
        return 0.0
    return round(100.0 / (1.0 + math.exp(-value / WIN_SCALE)), 1)


def _turn_text(route: Sequence[Any]) -> str:
    """A turn's steps as the board labels cells: ``c3→d4 build e5`` (``dome e5``);
    a Pass is left out."""
    from meeple.games.santorini import Build as SBuild
    from meeple.games.santorini import Move as SMove
    from meeple.games.santorini.record import cell_label

    parts: list[str] = []
    for a in route:
        if isinstance(a, SMove):
            parts.append(f"{cell_label(a.src)}→{cell_label(a.dst)}")
        elif isinstance(a, SBuild):
            parts.append(f"{'dome' if a.level == 4 else 'build'} {cell_label(a.dst)}")
    return " ".join(parts) or "pass"


def _forced(value: int) -> int | None:
    """Turns to a forced end (positive: a win, negative: a loss), None when the search
    found none."""
    if value > _SANTORINI_MATE:
        return (_SANTORINI_WIN - value + 1) // 2 or 1
    if value < -_SANTORINI_MATE:
        return -((_SANTORINI_WIN + value + 1) // 2 or 1)
    return None


def analyse_santorini(
    record: Mapping[str, Any], *, depth: int = SANTORINI_DEPTH
) -> list[dict[str, Any] | None]:
    """One entry per replay step (None where there is nothing to analyse: the set-up,
    a step inside a turn, a give-up, three-player games): at the step that completes a
    turn, every way the mover could have completed it is searched ``depth`` - 1 turns
    deeper by :func:`~meeple.ai.santorini_search.search_turn` (a depth budget, no
    clock: the same record gives the same analysis), which ranks them as a ``depth``
    turn search would. The entry: ``played`` and ``best`` (``c3→d4 build e5``),
    ``best_score`` and ``played_score`` (the mover's chance to win after them, per
    cent, from the evaluation's logistic scale :data:`WIN_SCALE`; 100 a forced win, 0 a
    forced loss), ``equity_lost`` (the difference, in points of that chance),
    ``best_value``/``played_value`` (engine units), ``verdict`` (None, or what went
    wrong in words: "winning move missed", "forced win missed", "walked into a forced
    loss"), ``depth`` and ``alternatives``: the :data:`ALTERNATIVES` best turns, each
    ``{"play", "score", "equity"}`` (chance per cent, engine value)."""
    from meeple.games.santorini import Phase, turns

    out: list[dict[str, Any] | None] = []
    start: Any = None  # the state at the start of the turn in progress (two players)
    for step in records.replay(record):
        s = step.game.state
        entry: dict[str, Any] | None = None
        if (
            start is not None
            and s != start
            and (s.phase is Phase.OVER or (s.phase is Phase.PLAY and not s.steps))
        ):
            entry = _santorini_entry(start, s, list(turns(start)), depth)
            start = None
        if s.phase is Phase.PLAY and not s.steps and s.players == 2:
            start = s
        elif s.phase is not Phase.PLAY:
            start = None
        out.append(entry)
    return out


def _santorini_value(after: Any, me: int, depth: int) -> int:
    """The value for ``me`` of the position after one of its turns: a finished game is
    won or lost; else the opponent's best reply searched ``depth`` - 1 turns, negated."""
    from meeple.ai.santorini_search import SearchBudget, search_turn
    from meeple.games.santorini import Phase

    if after.phase is Phase.OVER:
        return _SANTORINI_WIN - 1 if after.winner == me else -(_SANTORINI_WIN - 1)
    found = search_turn(after, SearchBudget(max_depth=max(depth - 1, 1)))
    value = found.value if after.turn == me else -found.value
    if abs(value) > _SANTORINI_MATE:
        # A forced result counted from the reply: one turn (this one) further away.
        value -= 1 if value > 0 else -1
    return value


def _santorini_entry(
    start: Any, after: Any, options: list[tuple[Any, Any]], depth: int
) -> dict[str, Any] | None:
    me = start.turn
    from meeple.games.santorini import same_turn_end

    played = next((i for i, (_r, s) in enumerate(options) if same_turn_end(s, after)), None)
    if played is None:
        return None  # a give-up, or a turn the engine does not list
    scored = [(_santorini_value(s, me, depth), i) for i, (_r, s) in enumerate(options)]
    # Best first; of equal values the turn the engine lists first.
    ranked = sorted(scored, key=lambda vi: (-vi[0], vi[1]))
    best_value, best_i = ranked[0]
    played_value = scored[played][0]
    if played_value >= best_value:
        best_value, best_i = played_value, played  # the move played was a best
    best_f, played_f = _forced(best_value), _forced(played_value)
    verdict: str | None = None
    if best_f == 1 and played_f != 1:
        verdict = "winning move missed"
    elif best_f is not None and best_f > 0 and (played_f is None or played_f <= 0):
        verdict = f"forced win in {best_f} missed"
    elif played_f is not None and played_f < 0 and (best_f is None or best_f > 0):
        verdict = "walked into a forced loss"
    return {
        "played": _turn_text(options[played][0]),
        "best": _turn_text(options[best_i][0]),
        "best_score": _win_chance(best_value),
        "played_score": _win_chance(played_value),
        "equity_lost": round(max(0.0, _win_chance(best_value) - _win_chance(played_value)), 1),
        "best_value": best_value,
        "played_value": played_value,
        "verdict": verdict,
        "depth": depth,
        "alternatives": [
            {"play": _turn_text(options[i][0]), "score": _win_chance(v), "equity": v}
            for v, i in ranked[:ALTERNATIVES]
        ],
    }

"""A Spectrangle game as a JSON record (:mod:`meeple.games.records`), and its replay.

The RNG only shuffles the bag before the deal, so the bag is the whole setup::

    "setup": {"rules": {"hand_size": 4, "skip_rounds_limit": null},
              "bag": ["RGB4", ...]}

``bag`` lists the 36 tiles in draw order from the end (hands are dealt in seat order,
each taking from the end). Actions:

- ``{"type": "place", "player": 0, "tile": "GBR4", "index": 12}`` — the tile as
  rotated on the board, field 0–35;
- ``{"type": "skip", "player": 0}``; ``{"type": "exchange", "player": 0, "tile": "RGB4"}``;
- ``{"type": "abandon", "player": 0}`` — the player left, ending the game (spec,
  "General information"); with ``"reason": "resigned"`` they resigned, with
  ``"reason": "aborted"`` they aborted it before their first move (issue 34.4, 34.9).

``result``: ``{"reason": "finished", "player": null, "scores": [final...],
"winners": [seat, ...]}``, or for an abandoned game ``{"reason": "player-left",
"player": seat, "scores": [scores when it stopped], "winners": []}``; ``"resigned"``
has the best of the others' scores as ``winners``, ``"aborted"`` none (never rated).
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meeple.games.records import (
    RecordError,
    Step,
    check_header,
    check_meta,
    check_result,
    int_field,
    list_field,
    mapping_field,
    optional_int_field,
    str_field,
)
from meeple.games.spectrangle.board import FIELD_COUNT
from meeple.games.spectrangle.errors import SpectrangleError
from meeple.games.spectrangle.game import (
    ABANDON_REASONS,
    LEFT,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Abandon,
    Action,
    Event,
    Exchange,
    Game,
    Place,
    Rules,
    Skip,
    TilePlaced,
)
from meeple.games.spectrangle.tiles import TILE_SET, Tile

__all__ = [
    "RECORD_VERSION",
    "RecordError",
    "Step",
    "record_actions",
    "replay",
    "result_of",
    "to_record",
]

RECORD_VERSION = 1
GAME = "spectrangle"
VARIANT = "standard"
REASON_FINISHED = "finished"
REASON_LEFT = "player-left"
_TILE_CODES = sorted(str(t) for t in TILE_SET)


def record_actions(game: Game, start: int = 0) -> list[dict[str, Any]]:
    """The record's actions from number ``start`` (0-based) on: what :func:`to_record`
    lists under ``actions``, cut; a room's log appends these as they come."""
    actions: list[dict[str, Any]] = []
    for a in game.log[start:]:
        if isinstance(a, Place):
            place = {"type": "place", "player": a.player, "tile": str(a.tile), "index": a.index}
            actions.append(place)
        elif isinstance(a, Exchange):
            actions.append({"type": "exchange", "player": a.player, "tile": str(a.tile)})
        elif isinstance(a, Skip):
            actions.append({"type": "skip", "player": a.player})
        else:
            end: dict[str, Any] = {"type": "abandon", "player": a.player}
            if a.reason != LEFT:
                end["reason"] = a.reason
            actions.append(end)
    return actions


def to_record(game: Game, **meta: Any) -> dict[str, Any]:
    """The game so far as a JSON-safe record (``result`` None while it runs)."""
    record = game.record()
    actions = record_actions(game)
    return {
        "format": "meeple.record",
        "game": GAME,
        "version": RECORD_VERSION,
        "variant": VARIANT,
        "players": list(game.players),
        "setup": {
            "rules": {
                "hand_size": record.rules.hand_size,
                "skip_rounds_limit": record.rules.skip_rounds_limit,
            },
            "bag": [str(t) for t in record.bag],
        },
        "actions": actions,
        "result": result_of(game),
        **check_meta(meta),
    }


def result_of(game: Game) -> dict[str, Any] | None:
    """The record's ``result``: None while the game runs."""
    end = game.abandoned
    if end is not None:
        reason = REASON_LEFT if end.reason == LEFT else end.reason
        winners = list(game.abandon_winners())
        return {
            "reason": reason,
            "player": end.player,
            "scores": list(game.scores),
            "winners": winners,
        }
    result = game.result
    if result is None:
        return None
    return {
        "reason": REASON_FINISHED,
        "player": None,
        "scores": list(result.scores),
        "winners": list(result.winners),
    }


@dataclass(frozen=True, slots=True)
class _Parsed:
    players: tuple[str, ...]
    rules: Rules
    bag: tuple[Tile, ...]
    actions: tuple[tuple[Mapping[str, Any], Action], ...]
    result: Mapping[str, Any] | None


def replay(
    record: Mapping[str, Any], *, lexicon: Container[str] | None = None
) -> Iterator[Step[Game]]:
    """Step through a record: the deal, then the game after each action.

    ``lexicon`` is accepted (and ignored) so every game's replay takes the same
    arguments. A malformed record raises :class:`RecordError` here; an action that
    does not replay raises it with its index when reached, as does a final result
    other than the recorded one. Steps share one :class:`Game`, valid until the next.
    """
    return _steps(_parse(record))


def _tile(text: str, index: int | None) -> Tile:
    try:
        return Tile.parse(text)
    except SpectrangleError as e:
        raise RecordError(str(e), index=index) from None


def _parse(record: Mapping[str, Any]) -> _Parsed:
    header = check_header(record, GAME)
    if header.variant != VARIANT:
        raise RecordError(f"unknown variant {header.variant!r}")
    n = len(header.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise RecordError(f"{n} players in a Spectrangle game")
    rules_data = mapping_field(header.setup, "rules")
    rules = Rules(
        hand_size=int_field(rules_data, "hand_size", lo=1, hi=len(_TILE_CODES) // n),
        skip_rounds_limit=optional_int_field(rules_data, "skip_rounds_limit", lo=1, hi=1000),
    )
    codes = list_field(header.setup, "bag", str, max_len=len(_TILE_CODES))
    if sorted(c.upper() for c in codes) != _TILE_CODES:
        raise RecordError("the bag is not the 36 Spectrangle tiles")
    bag = tuple(_tile(c, None) for c in codes)
    actions: list[tuple[Mapping[str, Any], Action]] = []
    for i, d in enumerate(header.actions, 1):
        kind = d.get("type")
        player = int_field(d, "player", lo=0, hi=n - 1, index=i)
        action: Action
        if kind == "place":
            tile = _tile(str_field(d, "tile", max_len=8, index=i), i)
            action = Place(player, tile, int_field(d, "index", lo=0, hi=FIELD_COUNT - 1, index=i))
        elif kind == "exchange":
            action = Exchange(player, _tile(str_field(d, "tile", max_len=8, index=i), i))
        elif kind == "skip":
            action = Skip(player)
        elif kind == "abandon":
            why = d.get("reason", LEFT)
            if why not in ABANDON_REASONS:
                raise RecordError(f"not a way to abandon a game: {str(why)[:20]!r}", index=i)
            action = Abandon(player, why)
        else:
            raise RecordError(f"unknown action type {kind!r}", index=i)
        actions.append((d, action))
    return _Parsed(header.players, rules, bag, tuple(actions), header.result)


def _steps(p: _Parsed) -> Iterator[Step[Game]]:
    try:
        game = Game(p.players, bag=p.bag, rules=p.rules)
    except ValueError as e:
        raise RecordError(f"cannot deal: {e}") from None
    yield Step(0, None, "deal", game)
    for i, (raw, action) in enumerate(p.actions, 1):
        try:
            events = game.apply(action)
        except SpectrangleError as e:
            raise RecordError(f"{raw.get('type')} does not replay: {e}", index=i) from None
        yield Step(i, raw, _text(game, action, events), game)
    check_result(p.result, result_of(game))


def _text(game: Game, action: Action, events: Sequence[Event]) -> str:
    name = game.players[action.player]
    if isinstance(action, Place):
        placed = next(e for e in events if isinstance(e, TilePlaced))
        return f"{name} places {placed.tile} on {placed.index} +{placed.points}"
    if isinstance(action, Exchange):
        return f"{name} exchanges {action.tile}"
    if isinstance(action, Skip):
        return f"{name} skips"
    return f"{name} left: game abandoned"

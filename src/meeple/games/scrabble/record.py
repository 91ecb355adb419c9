"""A Scrabble game as a JSON record (:mod:`meeple.games.records`), and its replay.

``setup`` holds what makes the start exact, and nothing random is left to replay::

    "setup": {"rules": {...the Variant...}, "bag": "EAT?...", "first_player": 0}

``bag`` is the bag before the deal, in draw order from the end (the last tile is
drawn first: seat 0's rack is the last seven, reversed). The actions, one object each:

- ``{"type": "play", "player": 0, "tiles": [[x, y, "A"], ...]}`` — new tiles, columns
  and rows from 0, a blank as its letter in lower case;
- ``{"type": "exchange", "player": 0, "tiles": "AB?", "bag": "..."}`` — ``bag`` is the
  bag's order after the exchanged tiles went back and it was shuffled (the RNG's
  draw, as consumed);
- ``{"type": "pass" | "accept" | "leave", "player": 0}``;
- ``{"type": "challenge", "player": 1, "phonies": ["QZX"]}`` — the words found not to be
  in the lexicon (empty: the challenge failed); a replay without the lexicon takes
  the verdict from here, one with a lexicon checks it;
- ``{"type": "end", "reason": "time" | "admin" | "disconnect", "player": 0 | null}`` —
  the game stopped from outside (a clock, the referee's admin, a dropped connection);
- ``{"type": "time-penalty", "player": 0, "points": 20}`` — after the end, points off a
  player's final score for overtime on a clock (:class:`TimePenalty`).

``result``: ``{"reason": "went-out" | ..., "player": seat | null, "scores": [...],
"winners": [seat, ...]}`` as the engine's :class:`GameResult` says.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Container, Iterator, Mapping, MutableSequence, Sequence
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
from meeple.games.rng import Random
from meeple.games.scrabble.board import Layout
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.game import (
    Accept,
    Action,
    Challenge,
    ChallengeFailed,
    ChallengeRule,
    ChallengeUpheld,
    End,
    EndReason,
    Event,
    Exchange,
    Game,
    GameResult,
    Leave,
    Pass,
    Play,
    PlayMade,
    TimePenalty,
    Variant,
    variant_to_dict,
)
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.tiles import TILE_SETS

__all__ = [
    "RECORD_VERSION",
    "RecordError",
    "Step",
    "record_actions",
    "replay",
    "result_of",
    "resume",
    "to_record",
]

RECORD_VERSION = 1
GAME = "scrabble"
_MAX_BOARD = 25
_MAX_BAG = 500
_PREMIUMS = frozenset(".lLwW")  # Layout.rows()


# --- writing ------------------------------------------------------------------------


def to_record(game: Game, **meta: Any) -> dict[str, Any]:
    """The game so far as a JSON-safe record (``result`` None while it runs).

    ``meta`` adds keys of the writer's own (e.g. ``lexicon="CSW21"``, ``id=12``).
    """
    record = game.record()
    actions = record_actions(game)
    return {
        "format": "meeple.record",
        "game": GAME,
        "version": RECORD_VERSION,
        "variant": game.variant.name,
        "players": list(game.players),
        "setup": {
            "rules": variant_to_dict(game.variant),
            "bag": "".join(record.bag),
            "first_player": record.first_player,
        },
        "actions": actions,
        "result": result_of(game.result),
        **check_meta(meta),
    }


def record_actions(game: Game, start: int = 0) -> list[dict[str, Any]]:
    """The record's actions from number ``start`` (0-based) on: what :func:`to_record`
    lists under ``actions``, cut; a room's log appends these as they come."""
    new = game.log_since(start)
    reshuffles: Iterator[str] = iter(())
    verdicts: Iterator[tuple[str, ...]] = iter(())
    # The exchanges' bags and the challenges' verdicts are looked up only when needed:
    # most actions are plays, and a room asks after every one.
    if any(isinstance(a, Exchange) for a in new):
        before = sum(isinstance(a, Exchange) for a in game.log[:start])
        reshuffles = iter(game.reshuffles[before:])
    if any(isinstance(a, Challenge) for a in new):
        before = sum(isinstance(a, Challenge) for a in game.log[:start])
        found = [
            e.words if isinstance(e, ChallengeUpheld) else ()
            for e in game.events
            if isinstance(e, ChallengeUpheld | ChallengeFailed)
        ]
        verdicts = iter(found[before:])
    actions: list[dict[str, Any]] = []
    for action in new:
        if isinstance(action, Play):
            tiles = [[t.x, t.y, t.tile] for t in action.tiles]
            actions.append({"type": "play", "player": action.player, "tiles": tiles})
        elif isinstance(action, Exchange):
            actions.append(
                {
                    "type": "exchange",
                    "player": action.player,
                    "tiles": action.tiles,
                    "bag": next(reshuffles),
                }
            )
        elif isinstance(action, Challenge):
            phonies = list(next(verdicts))
            actions.append({"type": "challenge", "player": action.player, "phonies": phonies})
        elif isinstance(action, End):
            actions.append({"type": "end", "reason": action.reason.value, "player": action.player})
        elif isinstance(action, TimePenalty):
            actions.append(
                {"type": "time-penalty", "player": action.player, "points": action.points}
            )
        else:
            actions.append({"type": _SIMPLE_NAMES[type(action)], "player": action.player})
    return actions


def result_of(result: GameResult | None) -> dict[str, Any] | None:
    """The record's ``result`` for an engine result."""
    if result is None:
        return None
    return {
        "reason": result.reason.value,
        "player": result.player,
        "scores": list(result.scores),
        "winners": list(result.winners),
    }


_SIMPLE: Mapping[str, type[Pass | Accept | Leave]] = {
    "pass": Pass,
    "accept": Accept,
    "leave": Leave,
}
_SIMPLE_NAMES = {cls: name for name, cls in _SIMPLE.items()}
_EXTERNAL = {r.value: r for r in EndReason if r.is_external}


# --- reading ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A checked record: the engine's actions, each with its raw form and recorded extras."""

    players: tuple[str, ...]
    variant: Variant
    bag: str
    first_player: int
    actions: tuple[tuple[Mapping[str, Any], Action, str | tuple[str, ...] | None], ...]
    result: Mapping[str, Any] | None


def replay(
    record: Mapping[str, Any], *, lexicon: Container[str] | None = None
) -> Iterator[Step[Game]]:
    """Step through a record: the start, then the game after each action.

    Without ``lexicon`` a challenge's verdict is the recorded one; with it, the
    lexicon decides and must agree with the record. A malformed record raises
    :class:`RecordError` here; an action that does not replay raises it (with its
    index) when the iterator reaches it, as does a final result other than the
    recorded one. Steps share one :class:`Game`, valid until the next step.
    """
    parsed = _parse(record)
    return _steps(parsed, lexicon)


def resume(
    record: Mapping[str, Any], rng: Random, *, lexicon: Container[str] | None = None
) -> Game:
    """The game a record holds so far, ready to go on (a room resumed from its log).

    The actions replay as in :func:`replay` (each exchange puts the bag in its recorded
    order; with ``lexicon`` a challenge's verdict must agree with the record's), then
    the game draws on ``rng`` for every shuffle after them. A record that does not
    replay raises :class:`RecordError`.
    """
    parsed = _parse(record)
    script = _ScriptedRandom()
    game: Game | None = None
    # Every step, not the end of the iterator: a log holds no result to check.
    for step in itertools.islice(_steps(parsed, lexicon, script), len(parsed.actions) + 1):
        game = step.game
    assert game is not None
    script.then = rng
    return game


def _parse(record: Mapping[str, Any]) -> _Parsed:
    header = check_header(record, GAME)
    setup = header.setup
    variant = _variant(mapping_field(setup, "rules"))
    if header.variant != variant.name:
        raise RecordError(f"variant {header.variant!r} but rules {variant.name!r}")
    n = len(header.players)
    if not variant.min_players <= n <= variant.max_players:
        raise RecordError(f"{n} players in a {variant.name} game")
    bag = str_field(setup, "bag", max_len=_MAX_BAG)
    _check_bag(bag, variant)
    first = int_field(setup, "first_player", lo=0, hi=n - 1)
    size = variant.layout.size
    actions = tuple(
        _action(a, i, n, size, variant.rack_size) for i, a in enumerate(header.actions, 1)
    )
    return _Parsed(header.players, variant, bag, first, actions, header.result)


def _check_bag(bag: str, variant: Variant) -> None:
    tile_set = variant.tile_set
    extra = Counter(bag)
    extra.subtract(tile_set.counts)
    if any(v < 0 for v in extra.values()) or sum(extra.values()) != tile_set.random_letters:
        raise RecordError("the bag is not the variant's tile set")
    if any(t not in tile_set.letters for t, v in extra.items() if v > 0):
        raise RecordError("the bag holds tiles that are not in the tile set")


def _variant(d: Mapping[str, Any]) -> Variant:
    layout = mapping_field(d, "layout")
    rows = list_field(layout, "rows", str, max_len=_MAX_BOARD)
    centre = list_field(layout, "centre", int, max_len=2)
    if len(centre) != 2 or any(len(r) != len(rows) or set(r) - _PREMIUMS for r in rows):
        raise RecordError("the layout must be square rows of .lLwW and a centre [x, y]")
    if not rows or not all(0 <= c < len(rows) for c in centre):
        raise RecordError("the layout's centre is off the board")
    tile_set = TILE_SETS.get(str_field(d, "tile_set"))
    if tile_set is None:
        raise RecordError(f"unknown tile set {d.get('tile_set')!r}")
    try:
        challenge = ChallengeRule(str_field(d, "challenge"))
        grid = Layout.from_rows(rows, (centre[0], centre[1]))
    except ValueError as e:
        raise RecordError(f"bad rules: {e}") from None
    lexicon = d.get("lexicon")
    if lexicon is not None and not isinstance(lexicon, str):
        raise RecordError("'lexicon' must be a string or null")
    lo_players = int_field(d, "min_players", lo=1, hi=4)
    return Variant(
        name=str_field(d, "name"),
        tile_set=tile_set,
        layout=grid,
        rack_size=int_field(d, "rack_size", lo=1, hi=20),
        bingo_size=int_field(d, "bingo_size", lo=1, hi=20),
        bingo_bonus=int_field(d, "bingo_bonus", lo=0, hi=1000),
        challenge=challenge,
        exchange_minimum=int_field(d, "exchange_minimum", lo=0, hi=100),
        scoreless_turns=optional_int_field(d, "scoreless_turns", lo=1, hi=1000),
        passes_in_a_row=optional_int_field(d, "passes_in_a_row", lo=1, hi=1000),
        min_players=lo_players,
        max_players=int_field(d, "max_players", lo=lo_players, hi=4),
        lexicon=lexicon,
    )


def _action(
    d: Mapping[str, Any], i: int, n: int, size: int, rack_size: int
) -> tuple[Mapping[str, Any], Action, str | tuple[str, ...] | None]:
    kind = d.get("type")
    if kind == "end":
        reason = _EXTERNAL.get(str_field(d, "reason", index=i))
        if reason is None:
            raise RecordError(f"not an end from outside the rules: {d.get('reason')!r}", index=i)
        return d, End(reason, optional_int_field(d, "player", lo=0, hi=n - 1, index=i)), None
    player = int_field(d, "player", lo=0, hi=n - 1, index=i)
    if kind == "play":
        raw = list_field(d, "tiles", list, max_len=rack_size, index=i)
        tiles = []
        for t in raw:
            if not (
                len(t) == 3
                and all(isinstance(c, int) and not isinstance(c, bool) for c in t[:2])
                and 0 <= t[0] < size
                and 0 <= t[1] < size
                and isinstance(t[2], str)
                and len(t[2]) == 1
            ):
                raise RecordError(f"a tile is [x, y, letter] on the board, not {t!r}", index=i)
            tiles.append(Placement(t[1], t[0], t[2]))
        return d, Play(player, tuple(tiles)), None
    if kind == "exchange":
        letters = str_field(d, "tiles", max_len=rack_size, index=i)
        return d, Exchange(player, letters), str_field(d, "bag", max_len=_MAX_BAG, index=i)
    if kind == "time-penalty":
        return d, TimePenalty(player, int_field(d, "points", lo=0, hi=100_000, index=i)), None
    if kind == "challenge":
        phonies = list_field(d, "phonies", str, max_len=64, index=i)
        if any(len(w) > _MAX_BOARD for w in phonies):
            raise RecordError("a phony longer than the board", index=i)
        return d, Challenge(player), tuple(phonies)
    simple = _SIMPLE.get(kind) if isinstance(kind, str) else None
    if simple is None:
        raise RecordError(f"unknown action type {kind!r}", index=i)
    return d, simple(player), None


class _Unscripted(Exception):
    """The engine asked for randomness the record does not hold."""


class _ScriptedRandom:
    """The RNG a replay hands the engine: the next shuffle puts the bag in the recorded
    order. Once the record is replayed, a resumed game's own RNG (``then``) takes over."""

    def __init__(self) -> None:
        self.next_order: str | None = None
        self.then: Random | None = None

    def shuffle(self, x: MutableSequence[Any]) -> None:
        if self.then is not None:
            self.then.shuffle(x)
            return
        order, self.next_order = self.next_order, None
        if order is None or sorted(order) != sorted(x):
            raise _Unscripted("the recorded bag is not the bag's tiles")
        x[:] = list(order)

    def choice(self, seq: Sequence[Any]) -> Any:
        if self.then is not None:
            return self.then.choice(seq)
        raise _Unscripted("no random choice in a replay")

    def getstate(self) -> tuple[Any, ...]:
        return () if self.then is None else self.then.getstate()

    def setstate(self, state: tuple[Any, ...]) -> None:
        return None


class _RecordedVerdicts:
    """A lexicon standing in for the real one: every word is good except the phonies of
    the challenge being replayed (so void-challenge plays, checked on play, pass)."""

    def __init__(self) -> None:
        self.phonies: frozenset[str] = frozenset()

    def __contains__(self, word: object) -> bool:
        return word not in self.phonies


def _steps(
    p: _Parsed, lexicon: Container[str] | None, rng: _ScriptedRandom | None = None
) -> Iterator[Step[Game]]:
    rng = rng or _ScriptedRandom()
    verdicts = _RecordedVerdicts()
    try:
        game = Game(
            p.players,
            rng,
            variant=p.variant,
            lexicon=lexicon if lexicon is not None else verdicts,
            bag=p.bag,
            first_player=p.first_player,
        )
    except ValueError as e:
        raise RecordError(f"cannot set up the game: {e}") from None
    yield Step(0, None, "start", game)
    for i, (raw, action, extra) in enumerate(p.actions, 1):
        if isinstance(action, Exchange):
            assert isinstance(extra, str)
            rng.next_order = extra
        if isinstance(action, Challenge):
            assert isinstance(extra, tuple)
            verdicts.phonies = frozenset(extra)
        try:
            events = game.apply(action)
        except (ScrabbleError, ValueError, _Unscripted) as e:
            raise RecordError(f"{raw.get('type')} does not replay: {e}", index=i) from None
        if isinstance(action, Challenge):
            found = next((e.words for e in events if isinstance(e, ChallengeUpheld)), ())
            if tuple(found) != extra:
                raise RecordError(f"the challenge found {list(found)}, not {extra}", index=i)
        yield Step(i, raw, _text(game, action, events), game)
    check_result(p.result, result_of(game.result))


def _text(game: Game, action: Action, events: Sequence[Event]) -> str:
    """A short label for the move list; never a rack's letters."""
    names = game.players
    if isinstance(action, Play):
        made = next(e for e in events if isinstance(e, PlayMade))
        return f"{names[action.player]} {made.move.position} {made.move.word} +{made.score}"
    if isinstance(action, Exchange):
        return f"{names[action.player]} exchanges {len(action.tiles)}"
    if isinstance(action, Challenge):
        upheld = next((e for e in events if isinstance(e, ChallengeUpheld)), None)
        if upheld is not None:
            words = ", ".join(upheld.words)
            return f"{names[action.player]} challenges {names[upheld.player]}: {words} off"
        failed = next(e for e in events if isinstance(e, ChallengeFailed))
        text = f"{names[action.player]} challenges {names[failed.player]}: the play stands"
        return text + (f" +{failed.bonus}" if failed.bonus else "")
    if isinstance(action, End):
        who = "" if action.player is None else f" ({names[action.player]})"
        return f"game stopped: {action.reason.value}{who}"
    if isinstance(action, TimePenalty):
        return f"{names[action.player]} loses {action.points} for overtime"
    verb = {Pass: "passes", Accept: "accepts the play", Leave: "leaves"}[type(action)]
    return f"{names[action.player]} {verb}"

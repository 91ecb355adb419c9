"""A Santorini game as a JSON record (:mod:`meeple.games.records`), and its replay.

The engine draws nothing at random (the room draws the challenger), so the setup is
the rules and the challenger::

    "setup": {"rules": {"players": 2, "gods": true, "god_set": null,
                        "challenger_picks_pool": true, "auto_eliminate": false},
              "challenger": 1}

Cells are ints ``row * 5 + column`` (0–24), as in the engine; labels in ``text`` are
column A–E and row 1–5 (``B2``). Actions, one object each:

- ``{"type": "offer_god" | "choose_god", "player": 1, "god": "Apollo"}``;
- ``{"type": "choose_starter", "player": 1, "starter": 0}``;
- ``{"type": "place_worker", "player": 0, "cell": 12, "sex": "M" | "F" | null}``;
- ``{"type": "move", "player": 0, "src": 12, "dst": 13}``;
- ``{"type": "build", "player": 0, "src": 13, "dst": 14, "level": 1}`` (4: a dome);
- ``{"type": "pass" | "lose", "player": 0}``; ``{"type": "undo", "player": 0, "all": false}``;
- ``{"type": "abort", "player": 0}`` — last, when the player aborted the game before
  their first move (issue 34.4): no winner, never rated;
- ``{"type": "resign", "player": 0}`` — last, when the player resigned out of turn (the
  rules' give-up, ``lose``, is theirs only on their own turn in play): the game is over,
  the others win, and it is rated as the resigner's loss;
- ``{"type": "disconnect", "player": 0}`` — last, when a dropped connection ended the
  game (AM27 rooms end the game then; the engine has no such action).

``result``: ``{"reason": "win", "player": winner, "scores": [1, 0], "winners": [winner]}``,
or after a disconnect ``{"reason": "disconnect", "player": who, "scores": [...],
"winners": [the players still in the game]}`` (after a resignation out of turn the
same with ``"reason": "resigned"``) — scores are 1 for a winner, else 0.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meeple.games.records import (
    RecordError,
    Step,
    bool_field,
    check_header,
    check_meta,
    check_result,
    int_field,
    list_field,
    mapping_field,
    str_field,
)
from meeple.games.santorini.board import CELLS, DOME, coordinates
from meeple.games.santorini.errors import SantoriniError
from meeple.games.santorini.game import (
    Action,
    Build,
    ChooseGod,
    ChooseStarter,
    Game,
    Lose,
    Move,
    OfferGod,
    Pass,
    PlaceWorker,
    Undo,
)
from meeple.games.santorini.gods import GODS
from meeple.games.santorini.state import MAX_PLAYERS, MIN_PLAYERS, Rules, Sex
from meeple.games.santorini.view import action_text

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
GAME = "santorini"
REASON_WIN = "win"
REASON_DISCONNECT = "disconnect"
REASON_ABORTED = "aborted"
REASON_RESIGNED = "resigned"
# The record's last action when the room, not the engine, ended the game: a dropped
# connection, an abort, a resignation out of turn.
_ENDINGS = ("disconnect", "abort", "resign")  # a tuple: a hostile type may be a list
_MAX_CELL = len(CELLS) - 1


def variant_name(rules: Rules) -> str:
    """The variant as the server's lobby names it."""
    return "gods" if rules.gods else "standard"


def record_actions(
    game: Game,
    start: int = 0,
    *,
    disconnected: int | None = None,
    aborted: bool = False,
    resigned: bool = False,
) -> list[dict[str, Any]]:
    """The record's actions from number ``start`` (0-based) on: what :func:`to_record`
    lists under ``actions``, cut; a room's log appends these as they come. ``aborted``:
    ``disconnected`` is the seat that aborted the game; ``resigned``: the seat that
    resigned out of turn (issue 34.9)."""
    actions = [_action_dict(a) for a in game.log[start:]]
    if disconnected is not None and start <= len(game.log):
        kind = "abort" if aborted else "resign" if resigned else "disconnect"
        actions.append({"type": kind, "player": disconnected})
    return actions


def to_record(
    game: Game,
    *,
    players: Sequence[str] | None = None,
    disconnected: int | None = None,
    aborted: bool = False,
    resigned: bool = False,
    **meta: Any,
) -> dict[str, Any]:
    """The game so far as a JSON-safe record (``result`` None while it runs).

    ``players`` are the names by seat (the engine knows only seats; default
    ``player 1``, ``player 2``, ...). ``disconnected``: the seat whose dropped
    connection ended the game, which the engine does not model (AM27 rooms end the
    game then); it becomes the last action. ``aborted``: that seat aborted the game
    instead (issue 34.4); ``resigned``: that seat resigned out of turn (issue 34.9).
    """
    record = game.record()
    actions = record_actions(game, disconnected=disconnected, aborted=aborted, resigned=resigned)
    r = record.rules
    return {
        "format": "meeple.record",
        "game": GAME,
        "version": RECORD_VERSION,
        "variant": variant_name(r),
        "players": list(players or [f"player {i + 1}" for i in range(r.players)]),
        "setup": {
            "rules": {
                "players": r.players,
                "gods": r.gods,
                "god_set": None if r.god_set is None else list(r.god_set),
                "challenger_picks_pool": r.challenger_picks_pool,
                "auto_eliminate": r.auto_eliminate,
            },
            "challenger": record.challenger,
        },
        "actions": actions,
        "result": result_of(game, disconnected, aborted, resigned),
        **check_meta(meta),
    }


def result_of(
    game: Game, disconnected: int | None = None, aborted: bool = False, resigned: bool = False
) -> dict[str, Any] | None:
    """The record's ``result``: None while the game runs."""
    n = game.rules.players
    if aborted and disconnected is not None and game.winner is None:
        # Nobody wins an aborted game, and it is not rated (meeple.ratings.rated).
        return {"reason": REASON_ABORTED, "player": disconnected, "scores": [0] * n, "winners": []}
    if game.winner is not None:
        winners = [game.winner]
        reason, player = REASON_WIN, game.winner
    elif disconnected is not None:
        alive = game.state.alive
        winners = [i for i in range(n) if alive[i] and i != disconnected]
        reason, player = (REASON_RESIGNED if resigned else REASON_DISCONNECT), disconnected
    else:
        return None
    return {
        "reason": reason,
        "player": player,
        "scores": [1 if i in winners else 0 for i in range(n)],
        "winners": winners,
    }


def _action_dict(a: Action) -> dict[str, Any]:
    if isinstance(a, OfferGod | ChooseGod):
        kind = "offer_god" if isinstance(a, OfferGod) else "choose_god"
        return {"type": kind, "player": a.player, "god": a.god}
    if isinstance(a, ChooseStarter):
        return {"type": "choose_starter", "player": a.player, "starter": a.starter}
    if isinstance(a, PlaceWorker):
        sex = None if a.sex is None else a.sex.value
        return {"type": "place_worker", "player": a.player, "cell": a.cell, "sex": sex}
    if isinstance(a, Move):
        return {"type": "move", "player": a.player, "src": a.src, "dst": a.dst}
    if isinstance(a, Build):
        return {"type": "build", "player": a.player, "src": a.src, "dst": a.dst, "level": a.level}
    if isinstance(a, Undo):
        return {"type": "undo", "player": a.player, "all": a.all}
    return {"type": "pass" if isinstance(a, Pass) else "lose", "player": a.player}


@dataclass(frozen=True, slots=True)
class _Parsed:
    players: tuple[str, ...]
    rules: Rules
    challenger: int
    actions: tuple[tuple[Mapping[str, Any], Action | None], ...]  # None: disconnect
    result: Mapping[str, Any] | None


def replay(
    record: Mapping[str, Any], *, lexicon: Container[str] | None = None
) -> Iterator[Step[Game]]:
    """Step through a record: the empty board, then the game after each action.

    ``lexicon`` is accepted (and ignored) so every game's replay takes the same
    arguments. A malformed record raises :class:`RecordError` here; an action that
    does not replay raises it with its index when reached, as does a final result
    other than the recorded one. Steps share one :class:`Game`, valid until the next.
    """
    return _steps(_parse(record))


def _parse(record: Mapping[str, Any]) -> _Parsed:
    header = check_header(record, GAME)
    n = len(header.players)
    d = mapping_field(header.setup, "rules")
    god_set = d.get("god_set")
    if god_set is not None:
        names = list_field(d, "god_set", str, max_len=len(GODS))
        if set(names) - GODS.keys():
            raise RecordError(f"unknown gods in the god set: {sorted(set(names) - GODS.keys())}")
        god_set = tuple(names)
    rules = Rules(
        players=int_field(d, "players", lo=MIN_PLAYERS, hi=MAX_PLAYERS),
        gods=bool_field(d, "gods"),
        god_set=god_set,
        challenger_picks_pool=bool_field(d, "challenger_picks_pool"),
        auto_eliminate=bool_field(d, "auto_eliminate"),
    )
    if rules.players != n:
        raise RecordError(f"{n} players named for a {rules.players}-player game")
    if header.variant != variant_name(rules):
        raise RecordError(f"variant {header.variant!r} does not match the rules")
    challenger = int_field(header.setup, "challenger", lo=0, hi=n - 1)
    actions: list[tuple[Mapping[str, Any], Action | None]] = []
    for i, a in enumerate(header.actions, 1):
        action = _action(a, i, n)
        if actions and actions[-1][1] is None:
            raise RecordError("nothing may follow a disconnect", index=i)
        actions.append((a, action))
    return _Parsed(header.players, rules, challenger, tuple(actions), header.result)


def _action(d: Mapping[str, Any], i: int, n: int) -> Action | None:
    kind = d.get("type")
    p = int_field(d, "player", lo=0, hi=n - 1, index=i)

    def cell(key: str) -> int:
        return int_field(d, key, lo=0, hi=_MAX_CELL, index=i)

    if kind in ("offer_god", "choose_god"):
        god = str_field(d, "god", max_len=40, index=i)
        return OfferGod(p, god) if kind == "offer_god" else ChooseGod(p, god)
    if kind == "choose_starter":
        return ChooseStarter(p, int_field(d, "starter", lo=0, hi=n - 1, index=i))
    if kind == "place_worker":
        sex = d.get("sex")
        if sex not in (None, "M", "F"):
            raise RecordError(f"a worker's sex is M, F or null, not {sex!r}", index=i)
        return PlaceWorker(p, cell("cell"), None if sex is None else Sex(sex))
    if kind == "move":
        return Move(p, cell("src"), cell("dst"))
    if kind == "build":
        return Build(p, cell("src"), cell("dst"), int_field(d, "level", lo=1, hi=DOME, index=i))
    if kind == "undo":
        return Undo(p, bool_field(d, "all", index=i))
    if kind == "pass":
        return Pass(p)
    if kind == "lose":
        return Lose(p)
    if kind in _ENDINGS:
        return None
    raise RecordError(f"unknown action type {kind!r}", index=i)


def _steps(p: _Parsed) -> Iterator[Step[Game]]:
    try:
        game = Game(p.rules, p.challenger)
    except ValueError as e:
        raise RecordError(f"cannot set up the game: {e}") from None
    yield Step(0, None, "start", game)
    disconnected: int | None = None
    aborted = resigned = False
    for i, (raw, action) in enumerate(p.actions, 1):
        if action is None:
            if game.is_over:
                raise RecordError("a disconnect after the game was over", index=i)
            disconnected = int(raw["player"])
            aborted = raw.get("type") == "abort"
            resigned = raw.get("type") == "resign"
            what = (
                "aborted the game"
                if aborted
                else "resigned: game over"
                if resigned
                else "disconnected: game over"
            )
            yield Step(i, raw, f"{p.players[disconnected]} {what}", game)
            continue
        try:
            game.apply(action)
        except SantoriniError as e:
            raise RecordError(f"{raw.get('type')} does not replay: {e}", index=i) from None
        yield Step(i, raw, _text(p.players, action), game)
    check_result(p.result, result_of(game, disconnected, aborted, resigned))


def cell_label(c: int) -> str:
    """``b2`` for row 1, column 1 (columns a–e, rows 1–5), as the board labels it."""
    row, column = coordinates(c)
    return f"{'abcde'[column]}{row + 1}"


def _text(names: tuple[str, ...], a: Action) -> str:
    # The live log's words (view.action_text), so a replay reads like the game did.
    return f"{names[a.player]} {action_text(a, names)}"

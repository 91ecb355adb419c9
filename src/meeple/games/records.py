"""Game records for every game: one versioned JSON format, replayed through the engines.

A record is a JSON object (ARCHITECTURE.md, "Records")::

    {"format": "meeple.record", "game": "scrabble" | "santorini" | "spectrangle",
     "version": 1, "variant": "<name>", "players": ["alice", "bob"],
     "setup": {...},        # what makes the start exact: bag order, rules, challenger
     "actions": [{"type": "...", "player": 0, ...}, ...],
     "result": {"scores": [...], "winners": [seat, ...], "reason": "...",
                "player": seat | null} | null,
     ...}                   # plus whatever the writer added (``**meta``)

Each game's module writes and reads its own ``setup`` and actions:
:mod:`meeple.games.scrabble.record`, :mod:`meeple.games.santorini.record`,
:mod:`meeple.games.spectrangle.record` (``to_record(game, **meta)`` and
``replay(record)``). This module holds what they share — :class:`RecordError`,
:class:`Step`, the field readers — and dispatches on ``record["game"]``:
:func:`load` parses JSON text with a size limit, :func:`replay` steps through any
game's record.

A record holds what the players could not see during the game (the bag order):
show it only once the game is over.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = [
    "FORMAT",
    "GAMES",
    "MAX_ACTIONS",
    "MAX_RECORD_SIZE",
    "RESERVED_KEYS",
    "Header",
    "RecordError",
    "Step",
    "bool_field",
    "check_header",
    "check_meta",
    "check_result",
    "int_field",
    "list_field",
    "load",
    "mapping_field",
    "optional_int_field",
    "replay",
    "str_field",
]

FORMAT = "meeple.record"
GAMES = ("scrabble", "santorini", "spectrangle")
MAX_RECORD_SIZE = 2_000_000  # bytes of JSON: a long Scrabble game with exchanges is ~20 kB
MAX_ACTIONS = 20_000
MAX_PLAYERS = 8
MAX_NAME = 200
RESERVED_KEYS = frozenset(
    {"format", "game", "version", "variant", "players", "setup", "actions", "result"}
)

G = TypeVar("G")
T = TypeVar("T")


class RecordError(ValueError):
    """A record that cannot be replayed: malformed, of an unknown version, or with an
    action the engine refuses (or that does not lead where the record says).

    ``index`` is the step of the failing action (1 for the first action; None when
    the record as a whole is wrong).
    """

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message if index is None else f"action {index}: {message}")
        self.index = index


@dataclass(frozen=True, slots=True)
class Step(Generic[G]):
    """One point of a replay: ``index`` 0 is the start (``action`` None), then one step
    per action; ``text`` labels it for a move list; ``game`` is the engine game after it.

    Replays advance one game object in place: ``game`` is valid until the iterator
    moves on (copy what you need to keep, e.g. ``game.state()``).
    """

    index: int
    action: Mapping[str, Any] | None
    text: str
    game: G


# --- field readers: a wrong type or value is a RecordError, never another exception ----


def mapping_field(data: object, key: str, *, index: int | None = None) -> Mapping[str, Any]:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, Mapping):
        raise RecordError(f"{key!r} must be an object", index=index)
    return value


def int_field(
    data: Mapping[str, Any],
    key: str,
    *,
    lo: int | None = None,
    hi: int | None = None,
    index: int | None = None,
) -> int:
    """``data[key]`` as an int (not a bool) in ``lo..hi`` inclusive."""
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{key!r} must be an integer", index=index)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise RecordError(f"{key!r} out of range: {value}", index=index)
    return value


def optional_int_field(
    data: Mapping[str, Any],
    key: str,
    *,
    lo: int | None = None,
    hi: int | None = None,
    index: int | None = None,
) -> int | None:
    if data.get(key) is None:
        return None
    return int_field(data, key, lo=lo, hi=hi, index=index)


def str_field(
    data: Mapping[str, Any], key: str, *, max_len: int = MAX_NAME, index: int | None = None
) -> str:
    value = data.get(key)
    if not isinstance(value, str) or len(value) > max_len:
        raise RecordError(f"{key!r} must be a string of at most {max_len}", index=index)
    return value


def bool_field(data: Mapping[str, Any], key: str, *, index: int | None = None) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise RecordError(f"{key!r} must be true or false", index=index)
    return value


def list_field(
    data: Mapping[str, Any],
    key: str,
    kind: type[T],
    *,
    max_len: int,
    index: int | None = None,
) -> list[T]:
    """``data[key]`` as a list of at most ``max_len`` items, each of type ``kind``."""
    value = data.get(key)
    if not isinstance(value, list) or len(value) > max_len:
        raise RecordError(f"{key!r} must be a list of at most {max_len}", index=index)
    for item in value:
        if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
            raise RecordError(f"{key!r} must hold only {kind.__name__} values", index=index)
    return value


@dataclass(frozen=True, slots=True)
class Header:
    """The parts of a record every game reads the same way (see :func:`check_header`)."""

    players: tuple[str, ...]
    variant: str
    setup: Mapping[str, Any]
    actions: Sequence[Mapping[str, Any]]
    result: Mapping[str, Any] | None


def check_header(record: object, game: str) -> Header:
    """Check the format, game and version, and read players, setup, actions and result."""
    if not isinstance(record, Mapping):
        raise RecordError("a record is a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"not a {FORMAT} record")
    if record.get("game") != game:
        raise RecordError(f"not a {game} record: {record.get('game')!r}")
    version = int_field(record, "version")
    if version != 1:
        raise RecordError(f"unknown record version {version} (this meeple reads version 1)")
    players = list_field(record, "players", str, max_len=MAX_PLAYERS)
    if any(len(p) > MAX_NAME for p in players):
        raise RecordError("a player name is too long")
    variant = str_field(record, "variant")
    setup = mapping_field(record, "setup")
    actions = list_field(record, "actions", dict, max_len=MAX_ACTIONS)
    result = record.get("result")
    if result is not None and not isinstance(result, Mapping):
        raise RecordError("'result' must be an object or null")
    return Header(tuple(players), variant, setup, actions, result)


def check_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The writer's extra keys, refused if they would overwrite the format's own."""
    clash = RESERVED_KEYS & meta.keys()
    if clash:
        raise ValueError(f"meta keys clash with the record format: {sorted(clash)}")
    return dict(meta)


def check_result(recorded: Mapping[str, Any] | None, replayed: Mapping[str, Any] | None) -> None:
    """The replay must end where the record says it ended."""
    if recorded != replayed:
        raise RecordError(f"the replay's result {replayed} is not the recorded result {recorded}")


# --- JSON and dispatch ----------------------------------------------------------------


def load(text: str | bytes) -> dict[str, Any]:
    """Parse a record from JSON, refusing more than :data:`MAX_RECORD_SIZE` bytes.

    Only the envelope is checked here (an object with a known ``game``); :func:`replay`
    checks the rest.
    """
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_RECORD_SIZE:
        raise RecordError(f"record of {size} bytes (limit {MAX_RECORD_SIZE})")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError
        raise RecordError(f"not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"not a {FORMAT} record")
    if data.get("game") not in GAMES:
        raise RecordError(f"unknown game {data.get('game')!r}")
    return data


def replay(record: Mapping[str, Any], **kw: Any) -> Iterator[Step[Any]]:
    """Step through any game's record (see the game's ``record.replay`` for ``kw``)."""
    game = record.get("game") if isinstance(record, Mapping) else None
    if game not in GAMES:
        raise RecordError(f"unknown game {game!r}")
    module = importlib.import_module(f"meeple.games.{game}.record")
    steps: Iterator[Step[Any]] = module.replay(record, **kw)
    return steps

"""Finished games for the pages: summaries for lists, and replays step by step.

A replay runs the stored record (``meeple.games.records``) through its engine and
keeps, for every step, the spectator view the live page would have shown then
(the same ``games/<game>/view.py``), so a replay never shows more than watching did.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from meeple.games import records
from meeple.games.santorini import record as santorini_record
from meeple.games.santorini import view as santorini_view
from meeple.games.scrabble import record as scrabble_record
from meeple.games.scrabble import view as scrabble_view
from meeple.games.spectrangle import record as spectrangle_record
from meeple.games.spectrangle import view as spectrangle_view
from meeple.server.store.database import GameRecord

__all__ = ["MAX_STEPS", "build", "live_steps", "summary", "view_of"]

# A replay page carries every step; no real game comes near this many actions.
MAX_STEPS = 2000


def summary(record: GameRecord) -> dict[str, Any]:
    """One line of a list of finished games."""
    result = record.result
    scores = result.get("scores")
    if isinstance(scores, dict):
        score_list: list[Any] | None = [scores.get(p) for p in record.players]
    elif isinstance(scores, list):
        score_list = scores
    else:
        score_list = None
    winners = result.get("winners")
    if winners is None and result.get("winner") is not None:
        winners = [result["winner"]]
    return {
        "id": record.id,
        "uid": record.data.get("uid") if record.data else None,
        "game": record.game,
        "variant": record.variant,
        "players": list(record.players),
        "protocols": list(record.protocols),
        "scores": score_list,
        "winners": [w if isinstance(w, str) else record.players[w] for w in winners or []],
        "end_reason": record.end_reason,
        "ended_at": record.ended_at,
        "replayable": record.replayable,
        "lexicon": record.data.get("lexicon") if record.data else None,
    }


def view_of(game_name: str, game: Any, players: tuple[str, ...]) -> dict[str, Any]:
    """The spectator view of an engine object of ``game_name``."""
    if game_name == "scrabble":
        return scrabble_view.spectator_view(game)
    if game_name == "santorini":
        return santorini_view.spectator_view(game, players)
    if game_name == "spectrangle":
        return spectrangle_view.spectator_view(game)
    raise ValueError(f"no view for {game_name!r}")


def build(record: GameRecord, lexicon: Container[str] | None = None) -> dict[str, Any]:
    """Everything a replay page needs; ``steps`` is empty when the game cannot be replayed.

    Each step has its label and the view without the move log (the labels are the
    log); ``error`` says why a record did not replay.
    """
    out: dict[str, Any] = {"summary": summary(record), "steps": [], "error": None}
    if not record.replayable or record.data is None:
        out["error"] = "This game was stored before records could be replayed."
        return out
    steps: list[dict[str, Any]] = []
    try:
        for step in records.replay(record.data, lexicon=lexicon):
            if len(steps) >= MAX_STEPS:
                break
            view = view_of(record.game, step.game, record.players)
            view.pop("moves", None)
            steps.append({"index": step.index, "text": step.text, "view": view})
    except records.RecordError as e:
        out["error"] = f"The record does not replay: {e}"
        return out
    out["steps"] = steps
    return out


def live_steps(room: Any) -> list[dict[str, Any]] | None:
    """A running game's steps so far, each with its label and its spectator view: the
    history a player steps through during the game (issue 24), as a replay would show
    it. Only spectator views leave here (never a rack or the bag: the record's setup
    holds them, and it stays on the server). None for a room of no known game."""
    game = getattr(room, "game", None)
    name = getattr(room, "game_name", None)
    if game is None:
        return None
    if name == "scrabble":
        record = scrabble_record.to_record(game, uid=room.uid)
    elif name == "santorini":
        record = santorini_record.to_record(game, players=room.names, uid=room.uid)
    elif name == "spectrangle":
        record = spectrangle_record.to_record(game, uid=room.uid)
    else:
        return None
    players = tuple(record["players"])
    steps: list[dict[str, Any]] = []
    for step in records.replay(record):
        if len(steps) >= MAX_STEPS:
            break
        view = view_of(name, step.game, players)
        view.pop("moves", None)
        steps.append({"index": step.index, "text": step.text, "view": view})
    return steps

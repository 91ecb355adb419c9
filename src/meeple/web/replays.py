"""Finished games for the pages: summaries for lists, and replays step by step.

A replay runs the stored record (``meeple.games.records``) through its engine and
keeps, for every step, the spectator view the live page would have shown then
(the same ``games/<game>/view.py``), so a replay never shows more than watching did.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from meeple.games import records
from meeple.games.santorini import view as santorini_view
from meeple.games.scrabble import view as scrabble_view
from meeple.games.spectrangle import view as spectrangle_view
from meeple.server.store import GameRecord, Store

__all__ = ["MAX_STEPS", "build", "find", "summary", "view_of"]

# A replay page carries every step; no real game comes near this many actions.
MAX_STEPS = 2000


def find(store: Store, uid: str) -> GameRecord | None:
    """The stored game with this uid (the URL it had while running), if any."""
    return store.game_by_uid(uid)


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

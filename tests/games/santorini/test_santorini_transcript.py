"""The reference AM27 game (Java server, two bots, no gods) replayed through the engine:
every action is legal, and every update's reachable and buildable cells match."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from meeple.games.santorini import (
    Action,
    Build,
    ChooseStarter,
    Game,
    GameWon,
    Move,
    Pass,
    PlaceWorker,
    Rules,
    Sex,
    cell,
)

# The copy of shared/transcripts/santorini-am27-reference-2p.log kept with the tests.
TRANSCRIPT = (
    Path(__file__).resolve().parents[2]
    / "protocols"
    / "santorini"
    / "data"
    / "santorini-am27-reference-2p.log"
)
SEATS = {"botA": 0, "botB": 1}  # botB joined last: the challenger


def _messages() -> list[tuple[int, bool, dict[str, Any]]]:
    """(connection, from client, envelope with the inner message decoded), in log order,
    up to the end of the first game."""
    out: list[tuple[int, bool, dict[str, Any]]] = []
    decoder = json.JSONDecoder()
    for raw in TRANSCRIPT.read_text(encoding="utf-8").splitlines():
        parts = raw.split(" ", 3)
        if len(parts) < 4 or parts[2] not in ("C>S", "S>C"):
            continue
        data = ast.literal_eval(parts[3]).decode("utf-8", "replace")
        i = data.find('{"type"')
        while i != -1:
            envelope, end = decoder.raw_decode(data, i)
            inner = envelope["message"]
            envelope["message"] = json.loads(inner) if isinstance(inner, str) else inner
            out.append((int(parts[1]), parts[2] == "C>S", envelope))
            if envelope["type"] == "ENDGAME":
                return out
            i = data.find('{"type"', end)
    return out


def _cell(c: dict[str, int]) -> int:
    return cell(c["row"], c["column"])


def _action(msg: dict[str, Any], kind: str) -> Action | None:
    if kind not in ("CHOSESTARTER", "WORKERINIT", "MOVE", "BUILD", "PASS"):
        return None
    seat = SEATS[msg["player"]]
    if kind == "CHOSESTARTER":
        return ChooseStarter(seat, SEATS[msg["starter"]])
    if kind == "WORKERINIT":
        return PlaceWorker(seat, _cell(msg["coordinates"]), Sex(msg["sex"]))
    if kind == "MOVE":
        return Move(seat, _cell(msg["source"]), _cell(msg["destination"]))
    if kind == "BUILD":
        return Build(seat, _cell(msg["source"]), _cell(msg["destination"]), msg["level"])
    if kind == "PASS":
        return Pass(seat)
    return None


def _pairs(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []  # {} is AM27's empty map


def test_reference_game_replays_with_the_same_queries() -> None:
    """Java's reachable/buildable cells equal the engine's after every action."""
    game = Game(Rules(gods=False), challenger=1)
    compared = 0
    events: list[object] = []
    for _conn, from_client, env in _messages():
        msg = env["message"]
        if from_client:
            action = _action(msg, env["type"])
            if action is not None:
                events = list(game.apply(action))
            continue
        if env["type"] != "UPDATE" or not isinstance(msg["reachableCells"], list):
            continue
        if game.is_over:
            continue
        seat = SEATS[msg["player"]]
        reach = {_cell(w): {_cell(c) for c in cells} for w, cells in msg["reachableCells"]}
        build = {
            _cell(w): {(_cell(c), lv) for c, lvs in _pairs(cells) for lv in lvs}
            for w, cells in msg["buildableCells"]
        }
        assert {w: set(cs) for w, cs in game.reachable_cells(seat).items()} == reach
        assert {
            w: {(c, lv) for c, lvs in cells.items() for lv in lvs}
            for w, cells in game.buildable_cells(seat).items()
        } == build
        assert game.can_pass(seat) is msg["canPass"]
        assert game.can_undo(seat) is msg["canUndo"]
        compared += 1
    assert compared > 50
    assert game.is_over
    assert game.winner == SEATS["botB"]
    assert isinstance(events[-1], GameWon)

"""benchmarks/santorini_external.py plays whole games against a UCI-like engine over
pipes, meeple's engine refereeing: here against a stand-in engine (a small script that
speaks the protocol and plays random legal turns), and one that answers an illegal
move (refused, scored as its loss)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.scripts import ROOT, load_script

from meeple.games.santorini import CELLS

DRIVER = ROOT / "benchmarks/santorini_external.py"


ext = load_script("benchmarks/santorini_external.py")
losses = load_script("benchmarks/santorini_losses.py")

FAKE = """#!{python}
import importlib.util, json, random, sys
spec = importlib.util.spec_from_file_location("ext", {driver!r})
ext = importlib.util.module_from_spec(spec)
sys.modules["ext"] = ext
spec.loader.exec_module(ext)
from meeple.games.santorini import GameState, Phase, Rules, turns

def from_fen(fen):
    heights, turn, *sides = fen.split("/")
    gods, workers, moved = [], [], []
    for section in sides:
        head, _, tail = section.partition(":")
        name = head.split("[")[0].replace("#", "")
        gods.append(None if name == "mortal" else name.capitalize())
        workers += [ext.cell(x) for x in tail.split(",") if x]
        moved.append("[^]" in head)
    with_gods = gods != [None, None]
    return GameState(
        rules=Rules(players=2, gods=with_gods), challenger=1, phase=Phase.PLAY,
        turn=int(turn) - 1, gods=tuple(gods) if with_gods else (None, None), starter=0,
        levels=tuple(min(int(h), 3) for h in heights),
        domes=tuple(h == "4" for h in heights), workers=tuple(workers),
        alive=(True, True), moved_up=tuple(moved),
    )

rng = random.Random(7)
print(json.dumps({{"type": "started"}}), flush=True)
for line in sys.stdin:
    cmd, _, arg = line.strip().partition(" ")
    if cmd == "quit":
        break
    if cmd == "set_position":
        s = from_fen(arg)
        options = list(turns(s))
        _route, after = rng.choice(options)
        nxt = arg if {bad} else ext.to_fen(after)
        print(json.dumps({{"type": "best_move", "original_str": arg, "next_state": nxt,
                          "meta": {{"calculated_depth": 1, "nodes_visited": len(options)}}}}),
              flush=True)
"""


def _fake(tmp_path: Path, bad: bool) -> str:
    path = tmp_path / ("bad_engine" if bad else "engine")
    path.write_text(FAKE.format(python=sys.executable, driver=str(DRIVER), bad=bad))
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("gods", [False, True])
def test_the_driver_plays_whole_games_against_an_engine(tmp_path: Path, gods: bool) -> None:
    args = ["--engine", _fake(tmp_path, False), "--games", "2", "--think-time", "0.05"]
    tally = ext.main([*args, "--gods"] if gods else args)
    assert tally.wins + tally.losses + tally.draws == 2
    assert tally.refused == 0
    assert tally.depth_meeple
    assert tally.depth_engine
    assert tally.wins == 2  # random turns lose to the search


def test_an_illegal_engine_move_is_refused_and_lost(tmp_path: Path) -> None:
    tally = ext.main(["--engine", _fake(tmp_path, True), "--games", "2", "--think-time", "0.02"])
    assert tally.refused == 2
    assert tally.wins == 2


def test_a_move_that_leaves_the_opponent_stuck_is_the_engines_win() -> None:
    """santorini-ai's Athena climbs and walls Demeter in: its position marks no winner,
    meeple's engine ends the game there (Demeter is stuck); the move is accepted (it
    was refused, and scored as meeple's win, in a real match)."""
    from meeple.games.santorini import Phase, advance
    from meeple.games.santorini.diagram import from_diagram

    s = from_diagram(
        "1 1 1 0 0\n0b 0 1A 2 2\n3X 2 2a 0 1\n0 3X 1 1 1\n0 1 0B 1 0",
        gods=("Athena", "Demeter"),
        turn=0,
    )
    assert ext.to_fen(s) == "1110000122422010411101010/1/athena:C4,C3/demeter:C1,A4"
    route = ext.route_for(s, "1110001122422010411101010/2/athena[^]:B3,C3/demeter:A4,C1")
    assert route is not None
    for action in route:
        s = advance(s, action)[0]
    assert s.phase is Phase.OVER
    assert s.winner == 0
    assert ext.route_for(s, "1110001122422010411101010/2/athena:B2,C3/demeter:A4,C1") is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(CELLS), min_size=4, max_size=4, unique=True), st.booleans())
def test_positions_go_to_fen_and_back(placements: list[int], gods: bool) -> None:
    s = ext.start(("Athena", "Atlas") if gods else None, placements)
    fen = ext.to_fen(s)
    assert ext.signature_of_fen(fen) == ext.signature_of_state(s)
    assert [ext.cell(ext.square(c)) for c in CELLS] == list(CELLS)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_a_malformed_engine_position_is_a_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        ext.signature_of_fen(text)


def test_the_move_log_has_every_move_and_each_games_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--log`` (issue 36.1) writes one line a move with the mover's score and one a
    game's end; ``santorini_losses.py --summary`` reads it."""
    import json

    log = tmp_path / "moves.jsonl"
    args = ["--engine", _fake(tmp_path, False), "--games", "2", "--think-time", "0.02"]
    tally = ext.main([*args, "--log", str(log)])
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    ends = [r for r in rows if r.get("end")]
    moves = [r for r in rows if not r.get("end")]
    assert [e["game"] for e in ends] == [0, 1]
    assert sum(1 for e in ends if e["winner"] == e["meeple_seat"]) == tally.wins
    assert {r["side"] for r in moves} == {"meeple", "engine"}
    assert len(moves) == len(tally.depth_meeple) + len(tally.depth_engine)
    for r in moves:
        assert ext.signature_of_fen(r["fen"])
        assert ext.signature_of_fen(r["next"])
        # the stand-in engine sends no score; meeple always has its value
        assert isinstance(r["score"], int) or (r["side"] == "engine" and r["score"] is None)
    losses.main([str(log), "--engine", "unused", "--summary"])
    assert "moves: correlation" in capsys.readouterr().out or len(moves) < 4


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6))
def test_the_losses_tool_reads_the_engines_positions(seed: int) -> None:
    """A position without gods goes to the engine's FEN and back unchanged (heights,
    each side's workers, the side to move)."""
    import random

    from meeple.games.santorini import Phase, advance, turns

    rng = random.Random(seed)
    s = ext.start(None, rng.sample(list(CELLS), 4))
    for _ in range(rng.randint(0, 30)):
        options = list(turns(s))
        if s.phase is not Phase.PLAY or not options:
            break
        for action in rng.choice(options)[0]:
            s = advance(s, action)[0]
    if s.phase is not Phase.PLAY:
        return
    back = losses.state_of_fen(ext.to_fen(s))
    assert ext.signature_of_state(back) == ext.signature_of_state(s)
    assert back.turn == s.turn

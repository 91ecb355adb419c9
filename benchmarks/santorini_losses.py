"""Where meeple loses to an external engine: ``python benchmarks/santorini_losses.py
LOG --engine PATH [--meeple-time T] [--engine-time T] [--pin]``.

``LOG`` is the move log of ``benchmarks/santorini_external.py --log`` (games without
gods). For each game meeple lost it prints the engine's score after every move (its
``best_move`` score, from the engine's side: about 100 a pawn of advantage, 9,990 and
more a proved win, 10,000 minus the plies to the end), meeple's own value, and then the turning
point: meeple's last move before the engine's score first reached ``--swing``
(default 1,000). That position is searched again, by meeple for ``--meeple-time``
seconds (ten times its match time, say) and by the engine for ``--engine-time``; the
engine also judges the position after meeple's match move and after its deeper move.

The reading: when the deeper meeple search keeps its move (or one the engine judges as
bad) and still values the position about even, meeple's evaluation does not see what
the engine sees (a positional drift); when it changes its move to one the engine judges
better, or finds the loss, the match move was a tactic beyond its horizon.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

from meeple.ai.santorini_search import AlphaBetaPlayer
from meeple.games.santorini import GameState, Phase, advance, from_diagram
from santorini_external import Engine, route_for, to_fen


def state_of_fen(fen: str) -> GameState:
    """A position without gods from the engine's FEN (a dome is a complete tower)."""
    fields = fen.strip().split("/")
    heights = fields[0]
    tokens = ["3X" if ch == "4" else ch for ch in heights]
    letters = ("A", "a", "B", "b")
    for seat, section in enumerate(fields[2:4]):
        squares = [x for x in section.partition(":")[2].split(",") if x]
        for k, sq in enumerate(squares):
            c = (5 - int(sq[1:])) * 5 + "ABCDE".index(sq[0].upper())
            tokens[c] += letters[2 * seat + k]
    text = "\n".join(" ".join(tokens[r * 5 : r * 5 + 5]) for r in range(5))
    return from_diagram(text, turn=int(fields[1]) - 1)


def after(s: GameState, route: tuple[Any, ...]) -> GameState:
    for action in route:
        s = advance(s, action)[0]
    return s


def engine_score(path: str, fen: str, seconds: float, pin: bool) -> int | None:
    engine = Engine(path, 1 if pin else None)
    try:
        msg, _late = engine.best_move(fen, seconds)
    finally:
        engine.close()
    if msg is None:
        return None
    return int(msg.get("meta", {}).get("score", 0))


def summary(games: dict[int, list[dict[str, Any]]]) -> None:
    """How well meeple's value follows the engine's score: each meeple move's value
    beside the engine's next score negated (both from meeple's side), over moves where
    neither has proved a result; their correlation, and how often meeple's value is
    negative once the engine's reached 300 and 1,000."""
    pairs: list[tuple[float, float]] = []
    for rows in games.values():
        moves = [r for r in rows if not r.get("end")]
        for a, b in itertools.pairwise(moves):
            if a["side"] != "meeple" or b["side"] != "engine" or b["score"] is None:
                continue
            if abs(a["score"]) >= 900000 or abs(b["score"]) >= 9900:
                continue
            pairs.append((float(a["score"]), -float(b["score"])))
    n = len(pairs)
    if n < 2:
        print("too few moves")
        return
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    r = sxy / (sxx * syy) ** 0.5 if sxx and syy else float("nan")
    line = f"{n} moves: correlation of meeple's value with the engine's score {r:.2f}"
    for cut in (300, 1000):
        behind = [x for x, y in pairs if y <= -cut]
        if behind:
            neg = sum(1 for x in behind if x < 0)
            mean = sum(behind) / len(behind)
            line += (
                f"; engine ahead by {cut}+: {len(behind)} moves, meeple's value below 0 in "
                f"{neg} (mean {mean:.0f})"
            )
    print(line)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--swing", type=int, default=1000)
    parser.add_argument("--meeple-time", type=float, default=3.0)
    parser.add_argument("--engine-time", type=float, default=2.0)
    parser.add_argument("--pin", action="store_true")
    parser.add_argument(
        "--summary", action="store_true", help="only the agreement of the two sides' scores"
    )
    args = parser.parse_args(argv)
    if args.pin:
        os.sched_setaffinity(0, {0})
    games: dict[int, list[dict[str, Any]]] = {}
    with open(args.log) as f:
        for line in f:
            row = json.loads(line)
            if not row.get("end") and row.get("score") is None:
                row["score"] = 0  # an engine that sends no score
            games.setdefault(row["game"], []).append(row)
    if args.summary:
        summary(games)
        return
    for g, rows in sorted(games.items()):
        end = rows[-1]
        if not end.get("end") or end["winner"] == end["meeple_seat"]:
            continue
        moves = rows[:-1]
        proof = next((r for r in moves if r["side"] == "engine" and r["score"] >= 9900), None)
        seen = next((r for r in moves if r["side"] == "meeple" and r["score"] <= -900000), None)
        swing = next((r for r in moves if r["side"] == "engine" and r["score"] >= args.swing), None)
        turning = None
        if swing is not None:
            turning = next(
                (r for r in reversed(moves) if r["side"] == "meeple" and r["ply"] < swing["ply"]),
                None,
            )
        print(
            f"game {g}: {end['plies']} plies; engine >= {args.swing} at ply "
            f"{swing and swing['ply']}, proves its win at ply {proof and proof['ply']} "
            f"({proof and 10000 - proof['score']} plies to the end), meeple sees its loss "
            f"at ply {seen and seen['ply']}",
            flush=True,
        )
        if turning is None:
            continue
        before = [r["score"] for r in moves if r["side"] == "engine" and r["ply"] < turning["ply"]]
        s = state_of_fen(turning["fen"])
        player = AlphaBetaPlayer(think_time=args.meeple_time, clock=time.monotonic)
        rng = random.Random(g)
        seat = s.turn
        t = s
        while t.phase is Phase.PLAY and t.turn == seat:
            t = advance(t, player.choose(t, rng))[0]
        deep = player.last
        played = route_for(s, turning["next"])
        fen_deep = to_fen(t)
        same = fen_deep == turning["next"]
        e_played = engine_score(args.engine, turning["next"], args.engine_time, args.pin)
        e_deep = (
            e_played if same else engine_score(args.engine, fen_deep, args.engine_time, args.pin)
        )
        e_best = engine_score(args.engine, turning["fen"], args.engine_time, args.pin)
        assert played is not None
        print(
            f"  turning move at ply {turning['ply']}: engine's score before "
            f"{before[-1] if before else None}, after it {swing['score']}; meeple in the "
            f"match: value {turning['score']} at depth {turning['depth']}; meeple at "
            f"{args.meeple_time:g} s: value {deep and deep.value} at depth "
            f"{deep and deep.depth}, {'the same move' if same else 'another move'}; "
            f"engine at {args.engine_time:g} s: its best there {e_best} (its view as "
            f"mover), after the match move {e_played}, after the deeper move {e_deep} "
            f"(opponent's view)",
            flush=True,
        )


if __name__ == "__main__":
    main()

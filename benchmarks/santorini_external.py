"""meeple against an external Santorini engine: ``python benchmarks/santorini_external.py
--engine PATH [--games N] [--think-time T] [--gods] [--seed S] [--pin]``.

The engine is a UCI-like process as JPricey/santorini-ai's ``uci`` binary speaks it
(its ``uci/README.md``): one JSON object a line on stdout; ``set_position <fen>``
starts a search and streams ``{"type": "best_move", ...}`` lines (each a better move,
with ``meta.calculated_depth``, ``meta.nodes_visited``) until ``stop``; ``quit`` ends
it. A position is ``<25 heights>/<1|2>/<god>[data]:<sq>,<sq>/<god>[data]:<sq>,<sq>``:
heights row by row from ``A5`` (a dome is ``4`` whatever is under it), squares a file
``A``–``E`` and a rank ``1``–``5``, the god in lower case (``mortal`` without gods),
``athena[^]`` while Athena's last move went up.

meeple's engine is the referee: the external engine's move is the ``next_state`` of its
last ``best_move`` line, matched against meeple's :func:`~meeple.games.santorini.turns`
of the position (heights with any dome as 4, each side's workers, the winner, which
is left out when only it differs: a turn that leaves the opponent stuck ends the game
in meeple's engine, not yet in the engine's position); a move that matches none is
refused and the game is scored as the external engine's loss
(counted apart). A fresh engine process and a fresh meeple player (``hard``, the
compiled core when built) play each game; in each pair of games the same random worker
placements (and god pair, from those both support, Pan v Hades redrawn) are played
with the seats swapped; seat 0 starts. Each side gets ``--think-time`` seconds a move
on the wall clock (the engine is stopped then; if it has sent no move yet, the first
it sends is taken and the wait counted). ``--pin`` pins meeple to one core and the
engine to another (``os.sched_setaffinity``).

It prints meeple's wins, losses and draws with a 95 % (Wilson) interval, both sides'
median depth and nodes per move, and the engine's refused moves (each also with its
position as it happens).

santorini-ai's ``uci`` binary is built outside this repository, offline, as
``docs/santorini-engine.md`` ("Building santorini-ai here") describes: its source at
6807a80, Debian's ``librust-*-dev`` crates and six upstream ones as a cargo directory
source, the workspace cut to ``santorini_core`` and ``uci``, then
``RUSTC_BOOTSTRAP=1 cargo build --release -p uci``; then::

    nice -n 19 .venv/bin/python benchmarks/santorini_external.py \
        --engine /tmp/santorini-ai/target/release/uci --games 20 --think-time 1 --pin [--gods]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from meeple.ai.match import wilson_interval
from meeple.ai.santorini_search import EVALUATIONS, PLAY_EVALUATION, AlphaBetaPlayer
from meeple.games.santorini import (
    CELLS,
    ChooseGod,
    ChooseStarter,
    GameState,
    OfferGod,
    Phase,
    PlaceWorker,
    Rules,
    advance,
    new_game,
    turns,
)

# meeple's gods the external engine knows by the same name: santorini-ai at 6807a80
# has neither Triton nor Chronus (its FEN parser refuses "chronus"), which leaves the
# issue's 15; --gods-list overrides.
COMMON_GODS = (
    "Apollo",
    "Artemis",
    "Athena",
    "Atlas",
    "Demeter",
    "Hades",
    "Hephaestus",
    "Hera",
    "Hestia",
    "Hypnus",
    "Limus",
    "Minotaur",
    "Pan",
    "Prometheus",
    "Zeus",
)
MAX_PLIES = 400  # a game this long is a draw
FILES = "ABCDE"


def square(c: int) -> str:
    """meeple's cell ``row * 5 + column`` as a square: row 0 is rank 5."""
    return f"{FILES[c % 5]}{5 - c // 5}"


def cell(sq: str) -> int:
    f, r = sq[0].upper(), int(sq[1:])
    if f not in FILES or not 1 <= r <= 5:
        raise ValueError(f"no such square {sq!r}")
    return (5 - r) * 5 + FILES.index(f)


def to_fen(s: GameState) -> str:
    heights = "".join(
        "4" if dome else str(level) for level, dome in zip(s.levels, s.domes, strict=True)
    )
    parts = [heights, str(s.turn + 1)]
    for seat in (0, 1):
        god = (s.gods[seat] or "mortal").lower() if s.rules.gods else "mortal"
        won = "#" if s.phase is Phase.OVER and s.winner == seat else ""
        data = "[^]" if god == "athena" and s.moved_up[seat] else ""
        workers = [square(at) for at in s.workers[2 * seat : 2 * seat + 2] if at is not None]
        parts.append(f"{god}{won}{data}:{','.join(workers)}")
    return "/".join(parts)


Signature = tuple[str, frozenset[int], frozenset[int], int]


def signature_of_fen(fen: str) -> Signature:
    """What the referee compares: heights (dome 4), each side's workers, the winner."""
    fields = fen.strip().split("/")
    if len(fields) != 4:
        raise ValueError(f"not a position: {fen!r}")
    heights = "".join(ch for ch in fields[0] if ch in "01234")
    if len(heights) != 25:
        raise ValueError(f"not 25 heights: {fen!r}")
    sides: list[frozenset[int]] = []
    winner = -1
    for seat, section in enumerate(fields[2:]):
        head, _, tail = section.partition(":")
        if "#" in head:
            winner = seat
        sides.append(frozenset(cell(x) for x in tail.split(",") if x))
    return (heights, sides[0], sides[1], winner)


def signature_of_state(s: GameState) -> Signature:
    sig = signature_of_fen(to_fen(s))
    return (sig[0], sig[1], sig[2], s.winner if s.phase is Phase.OVER else -1)


def route_for(s: GameState, fen: str) -> tuple[Any, ...] | None:
    """meeple's route from ``s`` to the engine's ``next_state`` ``fen``, or None when no
    turn of ``s`` ends there. A turn after which the opponent is stuck ends the game in
    meeple's engine (the stuck player loses at once) while the engine's position marks
    no winner yet (and meeple's has taken the loser's workers off): when no turn matches
    exactly, a turn that ends the game so, with the engine's heights and the winner's
    workers where the engine put them, is the one."""
    want = signature_of_fen(fen)
    loose: tuple[Any, ...] | None = None
    for route, after in turns(s):
        got = signature_of_state(after)
        if got == want:
            return tuple(route)
        winner = got[3]
        if (
            loose is None
            and want[3] == -1
            and winner in (0, 1)
            and got[0] == want[0]
            and got[1 + winner] == want[1 + winner]
        ):
            loose = tuple(route)
    return loose


class Engine:
    """One external engine process; lines read by a thread into a queue."""

    def __init__(self, path: str, core: int | None) -> None:
        def pin() -> None:  # in the child, before exec
            if core is not None:
                os.sched_setaffinity(0, {core})

        self.proc = subprocess.Popen(
            [path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            preexec_fn=pin,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def best_move(self, fen: str, seconds: float) -> tuple[dict[str, Any] | None, float]:
        """The last best move for ``fen`` within ``seconds`` (or the first after them),
        and the seconds waited past the budget."""
        self.send(f"set_position {fen}")
        start = time.monotonic()
        deadline = start + seconds
        best: dict[str, Any] | None = None
        stopped = False
        while True:
            now = time.monotonic()
            if now >= deadline and not stopped:
                self.send("stop")
                stopped = True
            if stopped and best is not None:
                break
            timeout = max(0.0, deadline - now) if not stopped else 30.0
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                if stopped:
                    break  # 30 s past the budget without a move
                continue
            if line is None:
                break  # the engine exited
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("type") == "best_move" and msg.get("original_str") == fen:
                best = msg
        # drop what the stopped search still sends
        while True:
            try:
                self.lines.get_nowait()
            except queue.Empty:
                break
        return best, max(0.0, time.monotonic() - deadline)

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send("quit")
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)  # it ends at the pipe's end of file
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@dataclass
class Tally:
    wins: int = 0
    losses: int = 0
    draws: int = 0
    refused: int = 0
    late: list[float] = field(default_factory=list)
    depth_meeple: list[int] = field(default_factory=list)
    depth_engine: list[int] = field(default_factory=list)
    nodes_meeple: list[int] = field(default_factory=list)
    nodes_engine: list[int] = field(default_factory=list)


def start(gods: tuple[str, str] | None, placements: list[int]) -> GameState:
    """A two-player game with its workers placed (seat 0 to start)."""
    if gods is None:
        s = new_game(Rules(players=2, gods=False), challenger=1)
    else:
        s = new_game(Rules(players=2, gods=True), challenger=1)
        for action in (OfferGod(1, gods[0]), OfferGod(1, gods[1])):
            s = advance(s, action)[0]
        s = advance(s, ChooseGod(0, gods[0]))[0]
        s = advance(s, ChooseGod(1, gods[1]))[0]
    s = advance(s, ChooseStarter(1, 0))[0]
    for at in placements:
        s = advance(s, PlaceWorker(s.turn, at))[0]
    return s


def play(
    engine_path: str,
    meeple_seat: int,
    gods: tuple[str, str] | None,
    placements: list[int],
    think: float,
    tally: Tally,
    rng: random.Random,
    pin: bool,
    log: Any = None,
    game: int = 0,
    evaluation: str = PLAY_EVALUATION,
) -> None:
    s = start(gods, placements)
    player = AlphaBetaPlayer(
        think_time=think, clock=time.monotonic, name="meeple", evaluation=evaluation
    )
    engine = Engine(engine_path, 1 if pin else None)
    try:
        plies = 0
        while s.phase is Phase.PLAY and plies < MAX_PLIES:
            plies += 1
            fen_before = to_fen(s)
            if s.turn == meeple_seat:
                while s.phase is Phase.PLAY and s.turn == meeple_seat:
                    before = s.turn
                    s = advance(s, player.choose(s, rng))[0]
                    if s.turn != before:
                        break
                if player.last is not None:
                    tally.depth_meeple.append(player.last.depth)
                    tally.nodes_meeple.append(player.last.nodes)
                    if log is not None:
                        log.write(
                            json.dumps(
                                {
                                    "game": game,
                                    "ply": plies,
                                    "side": "meeple",
                                    "fen": fen_before,
                                    "next": to_fen(s),
                                    "score": player.last.value,
                                    "depth": player.last.depth,
                                    "nodes": player.last.nodes,
                                }
                            )
                            + "\n"
                        )
                continue
            if next(iter(turns(s)), None) is None:
                break  # stuck: the engine's rules end the game (auto-elimination)
            msg, late = engine.best_move(to_fen(s), think)
            tally.late.append(late)
            if msg is None:
                print(f"  refused: no move for {to_fen(s)}", flush=True)
                tally.refused += 1
                tally.wins += 1
                return
            meta = msg.get("meta", {})
            tally.depth_engine.append(int(meta.get("calculated_depth") or 0))
            tally.nodes_engine.append(int(meta.get("nodes_visited") or 0))
            if log is not None:
                log.write(
                    json.dumps(
                        {
                            "game": game,
                            "ply": plies,
                            "side": "engine",
                            "fen": fen_before,
                            "next": msg.get("next_state"),
                            "score": meta.get("score"),
                            "depth": meta.get("calculated_depth"),
                            "nodes": meta.get("nodes_visited"),
                        }
                    )
                    + "\n"
                )
            try:
                route = route_for(s, str(msg["next_state"]))
            except (KeyError, ValueError):
                route = None
            if route is None:
                print(f"  refused: {to_fen(s)} -> {msg.get('next_state')}", flush=True)
                tally.refused += 1
                tally.wins += 1
                return
            for action in route:
                s = advance(s, action)[0]
        if log is not None:
            won = s.winner if s.phase is Phase.OVER else -1
            log.write(
                json.dumps(
                    {
                        "game": game,
                        "end": True,
                        "meeple_seat": meeple_seat,
                        "winner": won,
                        "plies": plies,
                    }
                )
                + "\n"
            )
            log.flush()
        if s.phase is not Phase.OVER:
            tally.draws += 1
        elif s.winner == meeple_seat:
            tally.wins += 1
        else:
            tally.losses += 1
    finally:
        engine.close()


def _median(xs: list[int] | list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main(argv: list[str] | None = None) -> Tally:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True, help="the engine's executable")
    parser.add_argument("--games", type=int, default=20, help="games (pairs, seats swapped)")
    parser.add_argument("--think-time", type=float, default=1.0, help="seconds a move")
    parser.add_argument("--gods", action="store_true", help="a random god pair a game pair")
    parser.add_argument("--gods-list", default=",".join(COMMON_GODS), help="the gods to draw from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pin", action="store_true", help="meeple on core 0, engine on 1")
    parser.add_argument(
        "--log", default=None, help="write every move (position, score, depth) as JSON lines"
    )
    parser.add_argument(
        "--evaluation",
        choices=EVALUATIONS,
        default=PLAY_EVALUATION,
        help="meeple's evaluation (the network applies to games without gods)",
    )
    args = parser.parse_args(argv)
    log = open(args.log, "w") if args.log else None  # noqa: SIM115 (closed below)
    if args.pin:
        os.sched_setaffinity(0, {0})
    pool = [g for g in args.gods_list.split(",") if g]
    rng = random.Random(args.seed)
    tally = Tally()
    for g in range(args.games):
        if g % 2 == 0:
            placements = rng.sample(list(CELLS), 4)
            pair: tuple[str, str] | None = None
            if args.gods:
                while True:
                    a, b = rng.sample(pool, 2)
                    if {a, b} != {"Pan", "Hades"}:
                        break
                pair = (a, b)
        play(
            args.engine,
            g % 2,
            pair,
            placements,
            args.think_time,
            tally,
            random.Random(args.seed * 1000 + g),
            args.pin,
            log,
            g,
            args.evaluation,
        )
        print(
            f"game {g + 1}: meeple seat {g % 2}, gods {pair}: "
            f"{tally.wins}-{tally.losses}-{tally.draws}",
            flush=True,
        )
    if log is not None:
        log.close()
    n = tally.wins + tally.losses + tally.draws
    rate = (tally.wins + 0.5 * tally.draws) / n if n else 0.0
    lo, hi = wilson_interval(rate, n)
    print(
        f"meeple v engine: {tally.wins}-{tally.losses}-{tally.draws}, "
        f"score {100 * rate:.1f} % (95 % CI {100 * lo:.1f}–{100 * hi:.1f}), "
        f"{args.think_time:g} s a move, {'gods' if args.gods else 'no gods'}, "
        f"meeple's evaluation {args.evaluation}"
    )
    print(
        f"median depth meeple {_median(tally.depth_meeple):g}, "
        f"engine {_median(tally.depth_engine):g}; median nodes a move meeple "
        f"{_median(tally.nodes_meeple):g}, engine {_median(tally.nodes_engine):g}; "
        f"engine moves refused {tally.refused}; engine moves past the budget "
        f"{sum(1 for x in tally.late if x > 0.05)} of {len(tally.late)}"
    )
    return tally


if __name__ == "__main__":
    main()

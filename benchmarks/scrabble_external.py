"""meeple's strong Scrabble player against Quackle (issue 37):
``python benchmarks/scrabble_external.py {build,match,serve-meeple} ...``.

meeple's :class:`~meeple.games.scrabble.game.Game` is the referee (standard rules, words
checked on play, so no challenges); the other side is an *engine*, a process that
speaks a line protocol over its standard input and output (``quackle_bridge.cpp`` beside
this file documents it): the referee tells it every play, exchange and pass of both
sides, gives it its own rack and checks its bag count, unseen tiles and scores before
each ``go``; it never learns the other rack. Its answer is checked by the referee like
any player's; a move the referee refuses ends the game as the engine's loss (counted
apart). The engine's score for every play is compared with the referee's.

Games come in pairs: one bag order (and one seed for the reshuffles after exchanges)
with the seats swapped, so the player who moves first draws the same tiles in both
games. meeple thinks within ``--think-time`` seconds of its process CPU time a move
(its :class:`~meeple.ai.scrabble.Budget` reads ``time.process_time``); the engine
reports the CPU time of each of its moves. It prints meeple's W-L-D with a 95 %
(Wilson) interval, as ``meeple scrabble match`` does (draws count half), the mean
spread, and the CPU seconds per move of each side (again after every pair, so a
stopped match keeps its figures); and, for where the games are won or lost, meeple's
lead when the bag ran empty in each game and what the endgame added to it on average,
split by who emptied the bag (the other side moves first in the endgame), and what
meeple gained from its first turn with at most 7 tiles in the bag to the end; and the
phase split (:meth:`MatchTally.phase_table`): the mean gain in the mid-game (to the first
turn with at most 7 tiles in the bag), from there to the empty bag, and in the endgame,
with each loss (win) counted in the last phase that took meeple's lead below (above)
zero; and the median of meeple's simulation rounds over the moves it simulated.
``--record FILE`` appends each game's leads at those turns as a JSON line. ``--start N``
plays the match's games from game N (even) on, so that one match can be split over
processes (``--start 0 --games 50`` and ``--start 50 --games 50`` are the 100 games).
``--leaves wordnik`` plays the strong player with another lexicon's leave table
(on ENABLE the bots get the GCIDE feature model: no ENABLE table ships).

Building Quackle (GPL v3; never committed here) in a scratch directory, on Debian 12
with ``qtbase5-dev``, cmake and g++ (``apt-get install -y --no-install-recommends
qtbase5-dev cmake g++``)::

    git clone https://github.com/quackle/quackle /tmp/quackle   # tried at 87ffbe5
    nice -n 19 .venv/bin/python benchmarks/scrabble_external.py build \\
        --quackle /tmp/quackle [--lexicon enable]

``build`` runs ``cmake -S quacker -B build -DQT_VERSION=5 -DCMAKE_BUILD_TYPE=Release``
and builds the ``makeminidawg`` and ``makegaddag`` tools and ``libquackle`` (skipping
the Qt GUI); writes meeple's word list (``load_lexicon``, upper case, one a line) to
``<quackle>/lexwork/`` and compiles it with both tools (they read the English alphabet
from ``../data/alphabets``); copies ``<lexicon>.dawg`` and ``<lexicon>.gaddag`` to
``<quackle>/work/``; and compiles ``quackle_bridge.cpp`` there against
``build/libquackle/libquackle.a``. Then::

    nice -n 19 .venv/bin/python benchmarks/scrabble_external.py match \\
        --quackle /tmp/quackle --player speedy --games 200 --think-time 0.2
    nice -n 19 .venv/bin/python benchmarks/scrabble_external.py match \\
        --quackle /tmp/quackle --player championship --games 100 --think-time 1 \\
        --quackle-seconds 12

``--player speedy`` is Quackle's Speedy Player (static equity; its endgame solver once
the bag is empty), ``championship`` its Championship Player (simulation; a pre-endgame
search with 1–2 tiles in the bag; the endgame solver). Quackle's own time control is
``secondsPerTurn`` (``--quackle-seconds``, a whole number): it simulates each of ~14
candidates 2–5 times that many iterations and stops after the candidate that passes
that many wall-clock seconds; the bridge also stops it once it has used
``--think-time`` CPU seconds (its dispatch's abort), so the CPU per move stays equal.
The strategy files are Quackle's English ones (``data/strategy/default_english``:
``syn2``, ``worths``, ``vcplace``; ``default/bogowin``); its ``superleaves`` are not in
the fetched copy, so its leaves are the worths + synergy + vowel/consonant heuristic.

``serve-meeple --level greedy|strong`` speaks the engine's protocol with a meeple
player behind it: a stand-in engine for the driver's tests and a reference for the
protocol.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TextIO

from meeple.ai.leaves import leaves_for
from meeple.ai.match import wilson_interval
from meeple.ai.scrabble import (
    Budget,
    Choice,
    ExchangeChoice,
    PassChoice,
    Player,
    Position,
    StrongPlayer,
    make_player,
    unseen_tiles,
)
from meeple.games.scrabble.bag import RACK_SIZE
from meeple.games.scrabble.board import STANDARD_LAYOUT, Board, Direction, Layout
from meeple.games.scrabble.errors import ScrabbleError
from meeple.games.scrabble.game import (
    STANDARD_VARIANT,
    Exchange,
    Exchanged,
    Game,
    Pass,
    Passed,
    Play,
    PlayMade,
)
from meeple.games.scrabble.lexicon import Lexicon, load_lexicon
from meeple.games.scrabble.moves import Move, tiles_from_word
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import ENGLISH

__all__ = [
    "Engine",
    "EngineError",
    "GameOutcome",
    "LineEngine",
    "MatchTally",
    "MeepleEngine",
    "bag_for_pair",
    "main",
    "play_game",
    "run_match",
]

MAX_LINE = 4096  # an engine's reply longer than this is refused (the protocol's own limit)
REPLY_TIMEOUT = 600.0  # seconds to wait for one reply: an engine that hangs ends the match
MAX_TURNS = 200  # a game this long is a bug (six scoreless turns end any game)
HERE = Path(__file__).resolve().parent


class EngineError(Exception):
    """The engine broke the protocol, refused a command, or disagrees with the referee."""


# ---------------------------------------------------------------- notation


def layout_line(layout: Layout) -> str:
    """``layout <size> <centre row> <centre col> <rows>``: meeple's Layout.from_rows codes."""
    cx, cy = layout.centre
    return f"layout {layout.size} {cy} {cx} {'/'.join(layout.rows())}"


def play_line(move: Move) -> str:
    """``play <row> <col> <h|v> <word>``: the whole main word, blanks in lower case."""
    d = "h" if move.direction is Direction.ACROSS else "v"
    return f"play {move.y} {move.x} {d} {move.word}"


def parse_choice(words: Sequence[str], board: Board) -> tuple[Choice, float]:
    """An engine's ``go`` answer (after ``ok``) as meeple's choice, and its CPU seconds.

    A play comes as ``play <row> <col> <h|v> <word> <score> <cpu>``; its tiles are read
    against ``board`` (:func:`tiles_from_word`), its score is the engine's claim, which
    the referee scores anew.
    """
    if not words:
        raise EngineError("empty answer")
    kind = words[0]
    try:
        if kind == "play" and len(words) == 7:
            y, x = int(words[1]), int(words[2])
            if words[3] not in ("h", "v"):
                raise EngineError(f"bad direction {words[3]!r}")
            direction = Direction.ACROSS if words[3] == "h" else Direction.DOWN
            word = words[4]
            tiles = tiles_from_word(board, x, y, direction, word)
            return Move(tiles, x, y, direction, word, int(words[5])), float(words[6])
        if kind == "exchange" and len(words) == 3:
            return ExchangeChoice(words[1].upper()), float(words[2])
        if kind == "pass" and len(words) == 2:
            return PassChoice(), float(words[1])
    except (ValueError, ScrabbleError) as e:
        raise EngineError(f"cannot read {' '.join(words)!r}: {e}") from e
    raise EngineError(f"cannot read {' '.join(words)!r}")


# ---------------------------------------------------------------- engines


class Engine(Protocol):
    """The other side of the table, seat 0 of its own game (the protocol's commands)."""

    name: str

    def new_game(self, first: int) -> None:
        """A new game; ``first`` is 0 when the engine starts, 1 when its opponent does."""

    def set_rack(self, rack: str) -> None: ...

    def play(self, move: Move) -> int:
        """The player on turn plays ``move``; returns the engine's score for it."""

    def exchange(self, tiles: str | int) -> None:
        """The engine exchanges ``tiles``, or its opponent exchanges that many (unseen)."""

    def pass_(self) -> None: ...

    def check(self, bag: int, unseen: str, scores: tuple[int, int]) -> None:
        """Raise :class:`EngineError` unless the engine's game agrees (scores: its own
        first)."""

    def go(self, board: Board) -> tuple[Choice, float]:
        """The engine's move (not committed) and the CPU seconds it took."""

    def close(self) -> None: ...


class LineEngine:
    """An engine process speaking the line protocol; replies read by a thread."""

    def __init__(
        self,
        argv: Sequence[str],
        name: str,
        *,
        layout: Layout = STANDARD_LAYOUT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=None if env is None else dict(env),
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.hello = self._reply()  # "quackle-bridge speedy syn2=1 ..."
        self._ask(layout_line(layout))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline(MAX_LINE + 1)
            if not line:
                break
            if len(line) > MAX_LINE:
                self._lines.put("err reply too long")
                break
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(None)

    def _reply(self) -> list[str]:
        try:
            line = self._lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise EngineError("no reply") from None
        if line is None:
            raise EngineError("the engine exited")
        words = line.split()
        if not words or words[0] != "ok":
            raise EngineError(line)
        return words[1:]

    def _ask(self, line: str) -> list[str]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise EngineError(f"cannot write to the engine: {e}") from e
        return self._reply()

    def new_game(self, first: int) -> None:
        self._ask(f"new {first}")

    def set_rack(self, rack: str) -> None:
        self._ask(f"rack {rack or '-'}")

    def play(self, move: Move) -> int:
        words = self._ask(play_line(move))
        try:
            return int(words[0])
        except (IndexError, ValueError):
            raise EngineError(f"no score in {words!r}") from None

    def exchange(self, tiles: str | int) -> None:
        self._ask(f"exchange {tiles}")

    def pass_(self) -> None:
        self._ask("pass")

    def check(self, bag: int, unseen: str, scores: tuple[int, int]) -> None:
        self._ask(f"check {bag} {unseen or '-'} {scores[0]} {scores[1]}")

    def go(self, board: Board) -> tuple[Choice, float]:
        return parse_choice(self._ask("go"), board)

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self._ask("quit")
        except EngineError:
            pass
        finally:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._reader.join(timeout=10)


class MeepleEngine:
    """A meeple player behind the engine's interface: it mirrors the game from the
    commands alone (board, its rack, both scores, the bag's count) as the bridge does."""

    def __init__(
        self,
        player: Player,
        lexicon: Lexicon,
        *,
        think_time: float = 0.0,
        clock: Callable[[], float] | None = None,
        rng: random.Random | None = None,
        layout: Layout = STANDARD_LAYOUT,
    ) -> None:
        self.name = f"meeple-{player.name}"
        self.player = player
        self.lexicon = lexicon
        self.think_time = think_time
        self.clock = clock
        self.rng = rng or random.Random(0)
        self.layout = layout
        self.board = Board(layout)
        self.rack = ""
        self.scores = [0, 0]
        self.bag = 0
        self.turn = 0
        self.racks = [RACK_SIZE, RACK_SIZE]  # tiles on each rack (the other's unseen)

    def new_game(self, first: int) -> None:
        if first not in (0, 1):
            raise EngineError("new <0|1>")
        self.board = Board(self.layout)
        self.rack = ""
        self.scores = [0, 0]
        self.bag = sum(ENGLISH.counts.values()) - 2 * RACK_SIZE
        self.turn = first
        self.racks = [RACK_SIZE, RACK_SIZE]

    def set_rack(self, rack: str) -> None:
        if len(rack) > RACK_SIZE or any(t not in ENGLISH.counts for t in rack):
            raise EngineError(f"not a rack: {rack!r}")
        self.rack = rack

    def _next(self) -> None:
        self.turn = 1 - self.turn

    def play(self, move: Move) -> int:
        try:
            result = validate_play(self.board, move.tiles, lexicon=self.lexicon)
        except ScrabbleError as e:
            raise EngineError(f"refused play {move}: {e}") from e
        if self.turn == 0:
            left = Counter(self.rack)
            left.subtract(p.rack_tile for p in move.tiles)
            if any(n < 0 for n in left.values()):
                raise EngineError(f"the engine does not hold the tiles of {move}")
            self.rack = "".join(left.elements())
        for p in move.tiles:
            self.board.place(p.x, p.y, p.tile)
        used = len(move.tiles)
        drawn = min(used, self.bag)
        self.bag -= drawn
        self.racks[self.turn] += drawn - used
        self.scores[self.turn] += result.score
        self._next()
        return result.score

    def exchange(self, tiles: str | int) -> None:
        self._next()

    def pass_(self) -> None:
        self._next()

    def check(self, bag: int, unseen: str, scores: tuple[int, int]) -> None:
        mine = unseen_tiles(self.board, self.rack)
        if self.bag != bag or sorted(mine) != sorted(unseen) or tuple(self.scores) != scores:
            raise EngineError(
                f"mismatch: bag {self.bag} v {bag}, unseen {mine!r} v {unseen!r}, "
                f"scores {self.scores} v {list(scores)}"
            )

    def go(self, board: Board) -> tuple[Choice, float]:
        if self.turn != 0:
            raise EngineError("not the engine's turn")
        start = time.process_time()
        position = Position(
            self.board,
            self.rack,
            self.bag,
            scores=(self.scores[0], self.scores[1]),
        )
        clock = self.clock if self.clock is not None else time.process_time
        budget = Budget(self.think_time, clock) if self.think_time > 0 else Budget(0.0)
        choice = self.player.choose(position, budget, self.rng)
        return choice, time.process_time() - start

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- referee


@dataclass(slots=True)
class GameOutcome:
    """One game from meeple's side."""

    spread: int
    meeple_score: int
    engine_score: int
    meeple_moves: int = 0
    engine_moves: int = 0
    meeple_cpu: float = 0.0
    engine_cpu: float = 0.0
    refused: str | None = None  # the engine's move the referee refused (its loss)
    # meeple's lead when the bag first ran empty (None: it never did): what the
    # endgame then added or lost is spread - bag_empty_spread.
    bag_empty_spread: int | None = None
    # Whether meeple's move emptied the bag (None: it never ran empty). The other side
    # then moves first in the endgame and may go out first, which gains it twice the
    # rack left: the endgame's gain is mostly who emptied the bag, not how well each
    # side searched (issue 37, first item).
    meeple_emptied_bag: bool | None = None
    # meeple's lead at the first turn with at most a rack's worth of tiles in the bag
    # (None: never): what the pre-endgame and the endgame together added is
    # spread - low_bag_spread, free of who made the play that emptied the bag.
    low_bag_spread: int | None = None
    # the tiles in the bag at that first turn (1-7; 0 when a play emptied a fuller bag)
    tiles_in_bag_at_low: int | None = None
    # the simulation rounds of each of meeple's moves that chose by simulation (issue 37)
    sim_rounds: list[int] = field(default_factory=list)

    def phases(self) -> dict[str, int | bool | None]:
        """The game's lead at each phase boundary, from meeple's side (a JSON line)."""
        return {
            "spread": self.spread,
            "lead_at_7": self.low_bag_spread,
            "bag_at_7": self.tiles_in_bag_at_low,
            "lead_at_empty": self.bag_empty_spread,
            "meeple_emptied": self.meeple_emptied_bag,
            "refused": self.refused is not None,
        }


def bag_for_pair(seed: int) -> tuple[str, ...]:
    """The bag order both games of a pair are played with (``tiles[-1]`` drawn first)."""
    tiles = [t for t, n in sorted(ENGLISH.counts.items()) for _ in range(n)]
    random.Random(seed).shuffle(tiles)
    return tuple(tiles)


def _action(seat: int, choice: Choice) -> Play | Exchange | Pass:
    if isinstance(choice, Move):
        return Play.from_move(seat, choice)
    if isinstance(choice, ExchangeChoice):
        return Exchange(seat, choice.tiles)
    return Pass(seat)


def play_game(
    engine: Engine,
    meeple: Player,
    lexicon: Lexicon,
    bag: Sequence[str],
    *,
    seed: int,
    engine_first: bool,
    think_time: float,
    clock: Callable[[], float] = time.process_time,
    max_rounds: int | None = None,
) -> GameOutcome:
    """One game refereed by meeple's Game; the player to move first is seat 0."""
    engine_seat = 0 if engine_first else 1
    names = ("engine", "meeple") if engine_first else ("meeple", "engine")
    game = Game(
        names,
        random.Random(seed),
        variant=STANDARD_VARIANT.but(lexicon=lexicon.name),
        lexicon=lexicon,
        bag=bag,
    )
    engine.new_game(0 if engine_first else 1)
    rng = random.Random(seed + 1)
    out = GameOutcome(0, 0, 0)
    turns = 0
    engine_play: Move | None = None  # the engine's last turn, when a play (inference)
    while not game.is_over and turns < MAX_TURNS:
        turns += 1
        lead = game.scores[1 - engine_seat] - game.scores[engine_seat]
        if out.low_bag_spread is None and len(game.bag) <= RACK_SIZE:
            out.low_bag_spread = lead
            out.tiles_in_bag_at_low = len(game.bag)
        if out.bag_empty_spread is None and len(game.bag) == 0:
            out.bag_empty_spread = lead
        seat = game.turn
        assert seat is not None
        if seat == engine_seat:
            rack = game.rack(seat)
            engine.set_rack(rack)
            engine.check(
                len(game.bag),
                unseen_tiles(game.board, rack),
                (game.scores[seat], game.scores[1 - seat]),
            )
            choice, cpu = engine.go(game.board)
            out.engine_cpu += cpu
            out.engine_moves += 1
        else:
            position = Position(
                game.board,
                game.rack(seat),
                len(game.bag),
                exchange_minimum=game.variant.exchange_minimum,
                scores=(game.scores[seat], game.scores[1 - seat]),
                unseen=unseen_tiles(game.board, game.rack(seat)),
                scoreless_turns=game.scoreless_turns,
                scoreless_limit=game.variant.scoreless_turns,
                last_play=engine_play,
            )
            start = clock()
            budget = Budget(think_time, clock, max_rounds=max_rounds)
            choice = meeple.choose(position, budget, rng)
            out.meeple_cpu += clock() - start
            if str(getattr(meeple, "last_method", "")).startswith("simulation"):
                out.sim_rounds.append(int(getattr(meeple, "last_rounds", 0)))
            out.meeple_moves += 1
        action = _action(seat, choice)
        bag_before = len(game.bag)
        try:
            events = game.apply(action)
        except ScrabbleError as e:
            if seat != engine_seat:
                raise  # meeple's own move refused: a bug to see, not a result
            # The engine's move is refused: the game is its loss, whatever the scores.
            out.refused = f"{choice}: {e}"
            out.meeple_score, out.engine_score = game.scores[1 - seat], game.scores[seat]
            out.spread = max(1, out.meeple_score - out.engine_score)
            return out
        if bag_before > 0 and len(game.bag) == 0:
            out.meeple_emptied_bag = seat != engine_seat
        if seat == engine_seat:
            played = [e.move for e in events if isinstance(e, PlayMade)]
            engine_play = played[0] if played else None
        for event in events:
            if isinstance(event, PlayMade):
                score = engine.play(event.move)
                if score != event.score:
                    raise EngineError(f"{event.move}: engine scores {score}, referee {event.score}")
            elif isinstance(event, Exchanged):
                engine.exchange(event.tiles if event.player == engine_seat else event.count)
            elif isinstance(event, Passed):
                engine.pass_()
    scores = game.result.scores if game.result is not None else game.scores
    out.meeple_score = scores[1 - engine_seat]
    out.engine_score = scores[engine_seat]
    out.spread = out.meeple_score - out.engine_score
    return out


@dataclass(slots=True)
class MatchTally:
    """Games from meeple's side, with the CPU each side spent."""

    wins: int = 0
    losses: int = 0
    draws: int = 0
    spreads: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    meeple_moves: int = 0
    engine_moves: int = 0
    meeple_cpu: float = 0.0
    engine_cpu: float = 0.0
    endgame_gains: list[int] = field(default_factory=list)
    # the same gains, split by who emptied the bag: meeple, the engine
    endgame_gains_meeple_emptied: list[int] = field(default_factory=list)
    endgame_gains_engine_emptied: list[int] = field(default_factory=list)
    # what meeple's spread gained from the first turn with <= 7 tiles in the bag
    late_gains: list[int] = field(default_factory=list)
    # every game's lead at the phase boundaries (GameOutcome.phases), for phase_line
    phases: list[dict[str, int | bool | None]] = field(default_factory=list)
    # the simulation rounds of every move meeple chose by simulation
    sim_rounds: list[int] = field(default_factory=list)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def win_rate(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    def add(self, outcome: GameOutcome) -> None:
        if outcome.spread > 0:
            self.wins += 1
        elif outcome.spread < 0:
            self.losses += 1
        else:
            self.draws += 1
        self.spreads.append(outcome.spread)
        self.phases.append(outcome.phases())
        if outcome.refused is not None:
            self.refused.append(outcome.refused)
        else:
            if outcome.low_bag_spread is not None:
                self.late_gains.append(outcome.spread - outcome.low_bag_spread)
            if outcome.bag_empty_spread is not None:
                gain = outcome.spread - outcome.bag_empty_spread
                self.endgame_gains.append(gain)
                if outcome.meeple_emptied_bag:
                    self.endgame_gains_meeple_emptied.append(gain)
                else:
                    self.endgame_gains_engine_emptied.append(gain)
        self.sim_rounds.extend(outcome.sim_rounds)
        self.meeple_moves += outcome.meeple_moves
        self.engine_moves += outcome.engine_moves
        self.meeple_cpu += outcome.meeple_cpu
        self.engine_cpu += outcome.engine_cpu

    def summary(self, name_a: str, name_b: str) -> str:
        lo, hi = wilson_interval(self.win_rate, self.games)
        mean = sum(self.spreads) / self.games if self.games else 0.0
        a = self.meeple_cpu / self.meeple_moves if self.meeple_moves else 0.0
        b = self.engine_cpu / self.engine_moves if self.engine_moves else 0.0
        return (
            f"{name_a} v {name_b}: {self.wins}-{self.losses}-{self.draws}, "
            f"win rate {100 * self.win_rate:.1f} % (95 % CI {100 * lo:.1f}–{100 * hi:.1f}), "
            f"mean spread {mean:+.1f}, CPU s/move {a:.3f} / {b:.3f}, "
            f"engine moves refused {len(self.refused)}, simulation rounds a move: "
            f"median {self.median_rounds():g} over {len(self.sim_rounds)} moves"
        )

    def median_rounds(self) -> float:
        """The median of meeple's simulation rounds over the moves it simulated (0: none)."""
        return float(statistics.median(self.sim_rounds)) if self.sim_rounds else 0.0

    def endgame_line(self) -> str:
        """What meeple's spread gained from the bag's emptying to the end, on average,
        in all and split by who emptied the bag (the other side moves first after it)."""

        def mean(gains: list[int]) -> str:
            return f"{sum(gains) / len(gains):+.1f}" if gains else "-"

        return (
            f"from an empty bag to the end: mean {mean(self.endgame_gains)} for meeple over "
            f"{len(self.endgame_gains)} games; meeple emptied it in "
            f"{len(self.endgame_gains_meeple_emptied)} "
            f"({mean(self.endgame_gains_meeple_emptied)}), the engine in "
            f"{len(self.endgame_gains_engine_emptied)} "
            f"({mean(self.endgame_gains_engine_emptied)}); from <= {RACK_SIZE} tiles in the "
            f"bag to the end: mean {mean(self.late_gains)} over {len(self.late_gains)} games"
        )

    def phase_table(self) -> dict[str, dict[str, float]]:
        """Where the games are won and lost (issue 37.1). Three phases, from meeple's
        side, between the leads L0 = 0 (the start), L1 (the first turn with at most 7
        tiles in the bag), L2 (the first turn with the bag empty) and L3 (the final
        spread): *mid* gains L1 - L0, *pre* L2 - L1, *end* L3 - L2. Per phase: the mean
        gain over all games and over the lost ones, half a 95 % interval of the mean,
        and the games *lost there*: a lost game counts in the last phase that took the
        lead from >= 0 to < 0 (so the losses split over the three phases exactly), a
        won game in the last phase that took it from <= 0 to > 0. Games whose bag never
        ran empty or that an engine's refused move ended are left out."""
        rows = [
            p
            for p in self.phases
            if not p["refused"] and p["lead_at_7"] is not None and p["lead_at_empty"] is not None
        ]
        names = ("mid", "pre", "end")
        gains: dict[str, list[float]] = {n: [] for n in names}
        lost: dict[str, list[float]] = {n: [] for n in names}
        lost_in = dict.fromkeys(names, 0)
        won_in = dict.fromkeys(names, 0)
        for p in rows:
            leads = (
                0,
                int(p["lead_at_7"] or 0),
                int(p["lead_at_empty"] or 0),
                int(p["spread"] or 0),
            )
            for k, name in enumerate(names):
                gains[name].append(leads[k + 1] - leads[k])
                if leads[3] < 0:
                    lost[name].append(leads[k + 1] - leads[k])
            if leads[3] < 0:
                k = max(k for k in range(3) if leads[k] >= 0 > leads[k + 1])
                lost_in[names[k]] += 1
            elif leads[3] > 0:
                k = max(k for k in range(3) if leads[k] <= 0 < leads[k + 1])
                won_in[names[k]] += 1
        return {
            name: {
                "games": len(gains[name]),
                "mean": _mean(gains[name]),
                "ci": _half_ci(gains[name]),
                "mean_lost": _mean(lost[name]),
                "lost_here": lost_in[name],
                "won_here": won_in[name],
            }
            for name in names
        }

    def phase_line(self) -> str:
        table = self.phase_table()
        labels = {"mid": "to <= 7 in the bag", "pre": "<= 7 to empty", "end": "empty to end"}
        return (
            "phases: "
            + "; ".join(
                f"{labels[k]} {v['mean']:+.1f} ± {v['ci']:.1f} (lost games {v['mean_lost']:+.1f}, "
                f"lost here {v['lost_here']:.0f}, won here {v['won_here']:.0f})"
                for k, v in table.items()
            )
            + f" over {table['mid']['games']:.0f} games"
        )


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _half_ci(xs: Sequence[float]) -> float:
    """Half a 95 % normal interval of the mean."""
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return 1.96 * (var / len(xs)) ** 0.5


def run_match(
    engine: Engine,
    meeple: Player,
    lexicon: Lexicon,
    games: int,
    *,
    seed: int = 0,
    think_time: float = 0.2,
    clock: Callable[[], float] = time.process_time,
    max_rounds: int | None = None,
    progress: Callable[[int, GameOutcome, MatchTally], None] | None = None,
    start: int = 0,
) -> MatchTally:
    """``games`` games in pairs: game ``2k`` with meeple first, ``2k + 1`` with the
    engine first, both with the bag and reshuffle seed of pair ``k``; from game
    ``start`` (even), so that one match can be split over processes."""
    tally = MatchTally()
    for g in range(start, start + games):
        pair = seed * 100_000 + g // 2
        outcome = play_game(
            engine,
            meeple,
            lexicon,
            bag_for_pair(pair),
            seed=pair,
            engine_first=g % 2 == 1,
            think_time=think_time,
            clock=clock,
            max_rounds=max_rounds,
        )
        tally.add(outcome)
        if progress is not None:
            progress(g, outcome, tally)
    return tally


# ---------------------------------------------------------------- the steps


def _run(argv: Sequence[str], cwd: Path, log: TextIO) -> None:
    print("$", " ".join(argv), f"(in {cwd})", file=log, flush=True)
    subprocess.run(list(argv), cwd=cwd, check=True, stdout=log, stderr=subprocess.STDOUT)


def build(quackle: Path, lexicon_name: str, jobs: int, log: TextIO) -> None:
    """Build Quackle's tools and library, compile the word list, compile the bridge."""
    build_dir = quackle / "build"
    if not (build_dir / "libquackle" / "libquackle.a").exists():
        _run(
            [
                "cmake",
                "-S",
                "quacker",
                "-B",
                "build",
                "-DQT_VERSION=5",
                "-DCMAKE_BUILD_TYPE=Release",
            ],
            quackle,
            log,
        )
        _run(
            ["cmake", "--build", "build", f"-j{jobs}", "--target", "makegaddag", "makeminidawg"],
            quackle,
            log,
        )
    lexwork = quackle / "lexwork"  # ../data/alphabets is where the tools look
    lexwork.mkdir(exist_ok=True)
    lexicon = load_lexicon(lexicon_name)
    text = "".join(w.upper() + "\n" for w in sorted(lexicon))
    for raw in ("dawginput.raw", "gaddaginput.raw", "smaller.raw"):
        (lexwork / raw).write_text(text, encoding="ascii")
    (lexwork / "playabilities.raw").write_text("", encoding="ascii")
    _run([str(build_dir / "makeminidawg" / "makeminidawg")], lexwork, log)
    _run([str(build_dir / "makegaddag" / "makegaddag")], lexwork, log)
    work = quackle / "work"
    work.mkdir(exist_ok=True)
    shutil.copy(lexwork / "output.dawg", work / f"{lexicon_name}.dawg")
    shutil.copy(lexwork / "output.gaddag", work / f"{lexicon_name}.gaddag")
    _run(
        [
            "g++",
            "-O2",
            "-std=c++17",
            f"-I{quackle}",
            str(HERE / "quackle_bridge.cpp"),
            str(build_dir / "libquackle" / "libquackle.a"),
            "-lpthread",
            "-o",
            str(work / "quackle_bridge"),
        ],
        work,
        log,
    )
    print(f"built {work / 'quackle_bridge'}; {len(lexicon)} words of {lexicon_name}", file=log)


def bridge_argv(args: argparse.Namespace) -> list[str]:
    quackle = Path(args.quackle)
    work = quackle / "work"
    return [
        str(work / "quackle_bridge"),
        "--data",
        str(quackle / "data"),
        "--dawg",
        str(work / f"{args.lexicon}.dawg"),
        "--gaddag",
        str(work / f"{args.lexicon}.gaddag"),
        "--strategy",
        args.lexicon,
        "--player",
        args.player,
        "--seconds",
        str(args.quackle_seconds),
        "--cpu-limit",
        str(args.think_time if args.cpu_limit is None else args.cpu_limit),
        "--seed",
        str(args.seed + 1),
    ]


def serve_meeple(engine: MeepleEngine, stdin: TextIO, stdout: TextIO) -> None:
    """Speak the engine's protocol on ``stdin``/``stdout`` with a meeple player: one
    reply line (``ok ...`` or ``err ...``) for each command line."""

    def say(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    say(f"ok {engine.name}")
    for raw in stdin:
        if len(raw) > MAX_LINE:
            say("err line too long")
            continue
        words = raw.split()
        if not words:
            continue
        cmd, rest = words[0], words[1:]
        try:
            if cmd == "quit":
                say("ok bye")
                return
            if cmd == "layout":
                say("ok")
            elif cmd == "new" and len(rest) == 1:
                engine.new_game(int(rest[0]))
                say("ok")
            elif cmd == "rack" and len(rest) == 1:
                engine.set_rack("" if rest[0] == "-" else rest[0].upper())
                say("ok")
            elif cmd == "play" and len(rest) == 4:
                choice, _ = parse_choice(["play", *rest, "0", "0"], engine.board)
                assert isinstance(choice, Move)
                say(f"ok {engine.play(choice)}")
            elif cmd == "exchange" and len(rest) == 1:
                engine.exchange(rest[0])
                say("ok")
            elif cmd == "pass":
                engine.pass_()
                say("ok")
            elif cmd == "check" and len(rest) == 4:
                unseen = "" if rest[1] == "-" else rest[1]
                engine.check(int(rest[0]), unseen, (int(rest[2]), int(rest[3])))
                say("ok")
            elif cmd == "go":
                choice, cpu = engine.go(engine.board)
                if isinstance(choice, Move):
                    say(f"ok {play_line(choice)} {choice.score} {cpu:.6f}")
                elif isinstance(choice, ExchangeChoice):
                    say(f"ok exchange {choice.tiles} {cpu:.6f}")
                else:
                    say(f"ok pass {cpu:.6f}")
            else:
                say(f"err cannot do {raw.strip()[:80]!r}")
        except (EngineError, ScrabbleError, ValueError) as e:
            say(f"err {e}")


def main(argv: list[str] | None = None) -> MatchTally | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build Quackle's tools, the word list and the bridge")
    b.add_argument("--quackle", required=True, help="Quackle's source directory (a scratch copy)")
    b.add_argument("--lexicon", default="enable")
    b.add_argument("--jobs", type=int, default=2)
    m = sub.add_parser("match", help="meeple strong v Quackle")
    m.add_argument("--quackle", required=True, help="the directory `build` built in")
    m.add_argument("--lexicon", default="enable")
    m.add_argument("--player", choices=("speedy", "championship"), default="speedy")
    m.add_argument("--games", type=int, default=20, help="games (pairs, seats swapped)")
    m.add_argument("--think-time", type=float, default=0.2, help="meeple's CPU seconds a move")
    m.add_argument("--quackle-seconds", type=int, default=1, help="Quackle's secondsPerTurn")
    m.add_argument(
        "--cpu-limit", type=float, default=None, help="Quackle's CPU cap (default: --think-time)"
    )
    m.add_argument("--level", default="strong", help="meeple's player level")
    m.add_argument(
        "--leaves",
        default=None,
        help="the strong player's leave values: another lexicon's (e.g. wordnik); "
        "default: the played lexicon's, as the bots get them (leaves_for)",
    )
    m.add_argument("--seed", type=int, default=0)
    m.add_argument(
        "--start", type=int, default=0, help="the first game (even): split a match over processes"
    )
    m.add_argument(
        "--record", default=None, help="append each game's phase leads to this file (JSON lines)"
    )
    s = sub.add_parser("serve-meeple", help="speak the engine's protocol with a meeple player")
    s.add_argument("--level", default="greedy")
    s.add_argument("--lexicon", default="enable")
    s.add_argument("--think-time", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.command == "build":
        build(Path(args.quackle), args.lexicon, args.jobs, sys.stdout)
        return None
    if args.command == "serve-meeple":
        served = load_lexicon(args.lexicon)
        player = make_player(args.level, served)
        engine_ = MeepleEngine(player, served, think_time=args.think_time)
        serve_meeple(engine_, sys.stdin, sys.stdout)
        return None
    lexicon = load_lexicon(args.lexicon)
    meeple = make_player(args.level, lexicon)
    if args.leaves is not None:
        if args.level != "strong":
            parser.error("--leaves is for the strong player")
        meeple = StrongPlayer(lexicon, leaves_for(args.leaves))
    leaves = getattr(meeple, "leaves", None)
    engine = LineEngine(bridge_argv(args), f"quackle-{args.player}")
    print(
        f"engine: {' '.join(engine.hello)}; meeple {args.level}, leaves "
        f"{type(leaves).__name__} ({args.leaves or args.lexicon}); "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    started = time.monotonic()

    name_a = f"meeple {args.level} {args.think_time:g} s"

    def progress(g: int, outcome: GameOutcome, tally: MatchTally) -> None:
        first = "quackle" if g % 2 else "meeple"
        print(
            f"game {g + 1} ({first} first): {outcome.meeple_score}-{outcome.engine_score}"
            f" (bag emptied at {outcome.bag_empty_spread})"
            f"{' refused ' + outcome.refused if outcome.refused else ''}; "
            f"{tally.wins}-{tally.losses}-{tally.draws}, "
            f"{time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if args.record is not None:
            with open(args.record, "a", encoding="utf-8") as f:
                row = {"seed": args.seed, "game": g, "meeple_first": g % 2 == 0}
                f.write(json.dumps(row | outcome.phases()) + "\n")
        if g % 2 == 1:  # a running summary after each pair: a stopped match keeps its figures
            print(f"  after {g + 1}: {tally.summary(name_a, engine.name)}", flush=True)
            print(f"  {tally.phase_line()}", flush=True)

    try:
        tally = run_match(
            engine,
            meeple,
            lexicon,
            args.games,
            seed=args.seed,
            think_time=args.think_time,
            progress=progress,
            start=args.start,
        )
    finally:
        engine.close()
    print(tally.summary(name_a, engine.name), flush=True)
    print(tally.endgame_line(), flush=True)
    print(tally.phase_line(), flush=True)
    return tally


if __name__ == "__main__":
    main()

"""Scrabble players: ``greedy`` (best score) and ``strong`` (equity, simulation, endgame).

Pure computation over the engine's move generator, usable by any bot runner on any
protocol: give it what the player can see (:class:`Position`), a time
:class:`Budget` (its clock is injected, so tests are deterministic) and an RNG.

- **greedy**: the highest-scoring play; with none, an exchange of the tiles least
  likely to help (blanks and S kept) when the bag allows it, else a pass.
- **strong**:

  1. candidates: the best plays by *equity* (score + the value of the tiles kept,
     :mod:`meeple.ai.leaves`) and the best exchange by the same measure;
  2. with the bag not empty, a Monte Carlo simulation of the candidates two plies
     deep: the opponent's rack is drawn from the unseen tiles (bag + their rack),
     or, when its last play is known, from the leaves that play makes likely
     (:mod:`meeple.ai.scrabble_infer`) plus tiles from the rest,
     the opponent answers with its best-equity play, then we answer with ours; a
     candidate's value is its score minus the reply, plus our next score and the
     value of our leave then. Every candidate sees the same draws in a round (common random
     numbers); rounds go on until the budget is spent; the best mean wins, each
     mean shrunk toward the static equity by a prior worth 12 rounds;
  3. with one tile in the bag, a pre-endgame: each candidate play weighed over the
     tile it may draw, each case an endgame (:func:`~meeple.ai.scrabble_endgame.preendgame`);
     by the chance to win when the game is close, else by the expected spread;
  4. with the bag empty, the opponent's rack is known: the endgame solver
     (:class:`~meeple.ai.scrabble_endgame.EndgameSolver`), a narrow alpha-beta search
     deepened while the budget lasts, then full width, exact when an iteration
     finishes with every line played out.

:func:`choose` is the one-call form the protocol bots use.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

from meeple.ai.leaves import LeaveModel, leaves_for
from meeple.ai.scrabble_endgame import EndgameLeave, EndgameSolver, preendgame
from meeple.ai.scrabble_infer import Inference, draw_rack, infer
from meeple.ai.scrabble_winprob import WinTable, default_win_table
from meeple.games.rng import Random
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.engine import (
    MoveGenerator,
    NativeGenerator,
    get_generator,
    leave_of,
    rank_key,
    sort_leave,
)
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = [
    "LEVELS",
    "BotSettings",
    "Budget",
    "Choice",
    "ExchangeChoice",
    "GreedyPlayer",
    "PassChoice",
    "Player",
    "Position",
    "StrongPlayer",
    "bot_settings",
    "choose",
    "make_player",
    "ranked_moves",
    "set_bot_settings",
    "unseen_tiles",
]

LEVELS = ("greedy", "strong")
Level = Literal["greedy", "strong"]
DEFAULT_THINK_TIME = 1.0
CLOCKLESS_ROUNDS = 32
PRIOR_RUNS = 12
CLOSE_GAME = 30  # |expected final lead| within which the pre-endgame plays to win
RACK_SIZE = 7
KEEP_BAG_SEARCH = 56  # plays looked at past the candidates for one that keeps the bag
# Win probability (issue 37): with at most WIN_BAG tiles in the bag the simulation
# chooses by the mean chance to win of its lines (the win table), unless the game is
# already decided either way (every candidate's chance below WIN_DECIDED or above
# 1 - WIN_DECIDED), where the spread is the better guide.
WIN_BAG = 25
WIN_DECIDED = 0.02
# The stopping rule: after PRUNE_ROUNDS rounds (and every PRUNE_EVERY after), a
# candidate whose mean is below the best's by more than PRUNE_Z standard errors of the
# difference is dropped and simulated no more; its rounds go to the others.
PRUNE_ROUNDS = 16
PRUNE_EVERY = 4
PRUNE_Z = 2.6


@dataclass(frozen=True, slots=True)
class ExchangeChoice:
    tiles: str


@dataclass(frozen=True, slots=True)
class PassChoice:
    pass


Choice = Move | ExchangeChoice | PassChoice


class Budget:
    """Time left to think, read from an injected clock (seconds, any origin).

    Without a clock, time cannot be read: a budget of 0 seconds is spent at once,
    any other lasts until ``max_rounds`` simulation rounds are done (default
    :data:`CLOCKLESS_ROUNDS`), which is what deterministic tests use.
    """

    __slots__ = ("_clock", "_deadline", "max_rounds", "seconds")

    def __init__(
        self,
        seconds: float,
        clock: Callable[[], float] | None = None,
        *,
        max_rounds: int | None = None,
    ) -> None:
        self._clock = clock
        self.seconds = max(seconds, 0.0)
        self._deadline = clock() + self.seconds if clock is not None else 0.0
        if clock is None and max_rounds is None:
            max_rounds = CLOCKLESS_ROUNDS
        self.max_rounds = max_rounds

    def expired(self) -> bool:
        if self._clock is None:
            return self.seconds <= 0
        return self._clock() >= self._deadline

    def left(self) -> float:
        if self._clock is None:
            return self.seconds
        return max(0.0, self._deadline - self._clock())


@dataclass(frozen=True, slots=True)
class Position:
    """What the player to move can see.

    ``unseen`` is the tiles it cannot see (bag + opponent's rack); left ``None`` it is
    worked out from the tile set, the board and the rack. ``scoreless_turns`` is how
    many scoreless turns in a row came before this one, ``scoreless_limit`` how many
    end the game (the variant's; ``None``: no such end): the endgame search needs to
    know when a pass ends the game at once.
    """

    board: Board
    rack: str
    bag_count: int
    tile_set: TileSet = ENGLISH
    exchange_minimum: int = 7
    scores: tuple[int, int] = (0, 0)
    unseen: str | None = None
    scoreless_turns: int = 0
    scoreless_limit: int | None = 6
    # False when the caller did not say the scores (``choose`` without ``scores``): the
    # lead is then unknown and the simulation does not choose by the chance to win.
    scores_known: bool = True
    # The opponent's last turn when it was a play, as it lies on ``board`` (issue 37:
    # the simulation infers from it the tiles the opponent kept); ``None``: unknown, or
    # an exchange or a pass.
    last_play: Move | None = None

    def pass_ends_game(self) -> bool:
        """Whether a pass now is the scoreless turn that ends the game."""
        limit = self.scoreless_limit
        return limit is not None and self.scoreless_turns >= limit - 1

    def unseen_tiles(self) -> str:
        if self.unseen is not None:
            return self.unseen
        return unseen_tiles(self.board, self.rack, self.tile_set)


def unseen_tiles(board: Board, rack: str, tile_set: TileSet = ENGLISH) -> str:
    """The tile set minus the board and the rack (blanks on the board count as ``?``)."""
    counts = Counter(tile_set.counts)
    for _, _, tile in board.tiles():
        counts[BLANK if tile.islower() else tile] -= 1
    for tile in rack:
        counts[tile] -= 1
    return "".join(t * n for t, n in sorted(counts.items()) if n > 0)


def ranked_moves(board: Board, rack: str, lexicon: Lexicon, tile_set: TileSet) -> list[Move]:
    """Every legal play, best score first, ties in the generator's fixed order."""
    return sorted(get_generator().plays(board, rack, lexicon, tile_set), key=rank_key)


class Player:
    """A Scrabble player: :meth:`choose` a move for a position within a budget."""

    name = "player"

    def choose(
        self, position: Position, budget: Budget, rng: Random | None = None, *, skip: int = 0
    ) -> Choice:
        raise NotImplementedError


def _fallback_exchange(position: Position) -> Choice:
    rack = position.rack
    keep = {BLANK, "S"}
    give = "".join(t for t in rack if t not in keep) or rack
    if give and position.bag_count >= max(position.exchange_minimum, len(give)):
        return ExchangeChoice(give)
    if rack and position.bag_count >= max(position.exchange_minimum, 1):
        return ExchangeChoice(rack[: max(1, min(len(rack), position.bag_count))])
    return PassChoice()


class GreedyPlayer(Player):
    """The highest-scoring play; else an exchange (blanks and S kept) or a pass."""

    name = "greedy"

    def __init__(self, lexicon: Lexicon, generator: MoveGenerator | None = None) -> None:
        self.lexicon = lexicon
        self.generator = generator or get_generator()

    def choose(
        self, position: Position, budget: Budget, rng: Random | None = None, *, skip: int = 0
    ) -> Choice:
        moves = self.generator.best(
            position.board, position.rack, self.lexicon, position.tile_set, n=skip + 1
        )
        if skip < len(moves):
            return moves[skip]
        return _fallback_exchange(position)


@dataclass(slots=True)
class _Candidate:
    choice: Move | ExchangeChoice
    equity: float
    leave: str
    total: float = 0.0
    runs: int = 0
    mean: float = 0.0
    offset: float = 0.0  # mean (simulated - static) over the candidates simulated
    squares: float = 0.0  # sum of the squared line values (for the stopping rule)
    wins: float = 0.0  # sum of the lines' chances to win
    win_squares: float = 0.0
    dropped: bool = False  # the stopping rule ruled it out
    # The board with the candidate on it, as the compiled line takes it (None: the
    # Python line is used; see StrongPlayer._run_once).
    cells: bytes | None = None

    def add(self, value: float, win: float) -> None:
        self.total += value
        self.squares += value * value
        self.wins += win
        self.win_squares += win * win
        self.runs += 1
        self.mean = self.total / self.runs

    @property
    def win_mean(self) -> float:
        return self.wins / self.runs if self.runs else 0.0

    def stats(self, by_wins: bool) -> tuple[float, float]:
        """(mean, variance of the mean) of the line values or of the chances to win."""
        n = self.runs
        total, squares = (self.wins, self.win_squares) if by_wins else (self.total, self.squares)
        mean = total / n
        var = max(0.0, squares / n - mean * mean) * n / (n - 1) if n > 1 else math.inf
        return mean, var / n


class StrongPlayer(Player):
    """Equity, two-ply Monte Carlo simulation, and an endgame search; see the module doc."""

    name = "strong"

    def __init__(
        self,
        lexicon: Lexicon,
        leaves: LeaveModel | None = None,
        generator: MoveGenerator | None = None,
        *,
        candidates: int = 8,
        exchange_margin: float = 10.0,
        win_table: WinTable | None = None,
        by_wins: bool = True,
        prune: bool = True,
        inference: bool = True,
    ) -> None:
        self.lexicon = lexicon
        self.win_table = win_table if win_table is not None else default_win_table()
        self.by_wins = by_wins  # choose by the chance to win near the end of close games
        self.prune = prune  # the stopping rule
        self.inference = inference  # draw the opponent's racks from what it kept
        self.leaves = leaves if leaves is not None else leaves_for(lexicon.name)
        self.generator = generator or get_generator()
        self.candidates = candidates
        self.exchange_margin = exchange_margin
        # What the last choose() did, for tests and logs: "static", "simulation",
        # "simulation-win" (chosen by the chance to win), "preendgame[-exact]",
        # "endgame" or "endgame-exact"; how many simulation rounds it ran and how many
        # candidates the stopping rule dropped.
        self.last_method = ""
        self.last_rounds = 0
        self.last_dropped = 0
        # The candidates of the last simulation (for tests and logs).
        self.last_candidates: list[_Candidate] = []
        # The inference of the last simulation (None: none made, or too little kept).
        self.last_inference: Inference | None = None
        # After an endgame search: the value of the position for the side to move (final
        # spread from here when exact) and the best sequence found, both sides in turn.
        self.last_value = 0.0
        self.last_depth = 0
        self.last_line: list[Choice] = []

    # --- candidates by equity ---

    def _candidates(self, position: Position, skip: int) -> list[_Candidate]:
        rack = position.rack
        plays = self.generator.best(
            position.board,
            rack,
            self.lexicon,
            position.tile_set,
            n=self.candidates + skip,
            leave=self.leaves,
        )[skip:]
        bag = position.bag_count
        if 1 < bag <= RACK_SIZE and plays and all(len(m.tiles) >= bag for m in plays):
            # Every candidate empties the bag and hands the opponent the endgame's first
            # move: the simulation also weighs the best play that keeps tiles in it.
            wider = self.generator.best(
                position.board,
                rack,
                self.lexicon,
                position.tile_set,
                n=self.candidates + skip + KEEP_BAG_SEARCH,
                leave=self.leaves,
            )[skip:]
            keeper = next((m for m in wider if len(m.tiles) < bag), None)
            if keeper is not None:
                plays = [*plays, keeper]
        out = []
        for m in plays:
            kept = leave_of(rack, m)
            out.append(_Candidate(m, m.score + self.leaves.value(kept), kept))
        exchange = self._best_exchange(position)
        if exchange is not None:
            best_play = out[0].equity if out else None
            if best_play is None or exchange.equity > best_play - self.exchange_margin:
                out.append(exchange)
        out.sort(key=lambda c: -c.equity)
        return out

    def _best_exchange(self, position: Position) -> _Candidate | None:
        rack = sort_leave(position.rack)
        if not rack:
            return None
        best: _Candidate | None = None
        seen = set()
        for k in range(len(rack)):  # keep k tiles, give the rest
            for kept_tiles in combinations(rack, k):
                kept = "".join(kept_tiles)
                if kept in seen:
                    continue
                seen.add(kept)
                given = _minus(rack, kept)
                if position.bag_count < max(position.exchange_minimum, len(given)):
                    continue
                value = self.leaves.value(kept)
                if best is None or value > best.equity:
                    best = _Candidate(ExchangeChoice(given), value, kept)
        return best

    # --- the choice ---

    def choose(
        self, position: Position, budget: Budget, rng: Random | None = None, *, skip: int = 0
    ) -> Choice:
        self.last_rounds = 0
        self.last_dropped = 0
        self.last_candidates = []
        self.last_inference = None
        unseen = position.unseen_tiles()
        endgame = position.bag_count == 0 and 0 < len(unseen) <= RACK_SIZE
        if endgame and skip == 0 and not budget.expired():
            action = self._endgame(position, unseen, budget)
            if action is not None:
                return action
        candidates = self._candidates(position, skip)
        if not candidates:
            self.last_method = "static"
            return _fallback_exchange(position) if skip == 0 else PassChoice()
        if position.bag_count == 1 and skip == 0 and not budget.expired():
            action = self._preendgame(position, candidates, unseen, budget)
            if action is not None:
                return action
        if len(candidates) == 1 or rng is None or position.bag_count == 0 or budget.expired():
            self.last_method = "static"
            return candidates[0].choice
        by_wins = self._simulate(position, candidates, unseen, budget, rng)
        self.last_method = "simulation-win" if by_wins else "simulation"
        return _pick(candidates, by_wins).choice

    # --- simulation ---

    def _simulate(
        self,
        position: Position,
        candidates: list[_Candidate],
        unseen: str,
        budget: Budget,
        rng: Random,
    ) -> bool:
        """Simulate until the budget is spent; whether to choose by the chance to win.

        Each line's value is also turned into our chance to win (:class:`WinTable`, from
        the lead at the line's end and the tiles the opponent cannot see then; a line
        that ends the game is a win, a draw or a loss). With at most :data:`WIN_BAG`
        tiles in the bag and a game not yet decided, the candidates are compared by
        that chance, else by the value. Every :data:`PRUNE_EVERY` rounds past
        :data:`PRUNE_ROUNDS`, the stopping rule drops the candidates that are behind
        the best by more than :data:`PRUNE_Z` standard errors on the measure in use.
        """
        tiles = list(unseen)
        lead = position.scores[0] - position.scores[1]
        near_end = self.by_wins and position.scores_known and position.bag_count <= WIN_BAG
        self.last_candidates = candidates
        inferred = self._infer(position, unseen, budget, rng)
        if isinstance(self.generator, NativeGenerator):
            for c in candidates:
                c.cells = self._cells_after(position, c, self.generator)
        rounds = 0
        by_wins = False
        while not budget.expired():
            if budget.max_rounds is not None and rounds >= budget.max_rounds:
                break
            if inferred is not None:
                opp_rack, bag = draw_rack(inferred, unseen, rng)
            else:
                rng.shuffle(tiles)
                opp_rack = "".join(tiles[:RACK_SIZE])
                bag = tiles[RACK_SIZE:]
            for c in candidates:
                if c.dropped:
                    continue
                if budget.expired():
                    break
                value, unseen_after, final = self._run_once(position, c, opp_rack, bag, c.cells)
                c.add(value, self._line_win(lead + value, unseen_after, final))
            rounds += 1
            by_wins = near_end and _undecided(candidates)
            if self.prune and rounds >= PRUNE_ROUNDS and rounds % PRUNE_EVERY == 0:
                self.last_dropped += _drop(candidates, by_wins)
        self.last_rounds = rounds
        done = [c for c in candidates if c.runs]
        if done:
            offset = sum(c.mean - c.equity for c in done) / len(done)
            for c in candidates:
                c.offset = offset
        return near_end and _undecided(candidates)

    def _infer(
        self, position: Position, unseen: str, budget: Budget, rng: Random
    ) -> Inference | None:
        """The leaves the opponent may have kept (:mod:`meeple.ai.scrabble_infer`).

        Spends at most a quarter of the budget (all :data:`~meeple.ai.scrabble_infer.
        INFER_TRIES` without a clock); ``None`` when there is no last play to infer
        from or too few leaves were kept to draw from.
        """
        play = position.last_play
        if not self.inference or play is None:
            return None
        stop = budget.seconds * 0.75

        def expired() -> bool:
            return budget.expired() or budget.left() < stop

        found = infer(
            self.generator,
            self.lexicon,
            self.leaves,
            position.board,
            play,
            unseen,
            rng,
            tile_set=position.tile_set,
            expired=expired,
        )
        self.last_inference = found
        return found if found.usable else None

    def _line_win(self, lead: float, unseen_by_opponent: int, final: bool) -> float:
        """Our chance to win when a line stops at ``lead`` with the opponent to move."""
        if final:
            return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0
        return self.win_table.after_line(lead, unseen_by_opponent)

    @staticmethod
    def _cells_after(position: Position, c: _Candidate, native: NativeGenerator) -> bytes:
        """The board with candidate ``c`` on it, as :meth:`NativeGenerator.line` takes it."""
        if not isinstance(c.choice, Move):
            return native.cells(position.board)
        board = position.board.copy()
        for t in c.choice.tiles:
            board.place(t.x, t.y, t.tile)
        return native.cells(board)

    def _run_once(
        self,
        position: Position,
        c: _Candidate,
        opp_rack: str,
        bag: list[str],
        cells: bytes | None = None,
    ) -> tuple[float, int, bool]:
        """One simulated continuation of ``c``: the opponent's reply, then our answer.

        Returns the line's value (our spread gain, plus our leave's value when the game
        goes on), the tiles the opponent cannot see when it stops (the bag and our
        rack, for the chance to win) and whether the game ended in it (someone went out).

        From a root with at most 7 tiles in the bag, a ply played with the bag empty is
        an endgame ply (issue 37): the side chooses
        by score plus :class:`~meeple.ai.scrabble_endgame.EndgameLeave` (going out wins
        twice the other rack, tiles kept cost their points) instead of leave values,
        a reply that goes out ends the line with twice our rack against us, and a line
        that ends in the endgame is scored by the racks' points (what each would lose),
        not by the leave values of a game that goes on. Without this, a play that
        empties the bag was valued as if the game went on after it, though it hands the
        opponent the first move of the endgame and the chance to go out first.

        With ``cells`` (the board with ``c`` on it, :meth:`_cells_after`) and the
        compiled generator, the two replies are played in C
        (:meth:`NativeGenerator.line`), which returns the same numbers without a board
        copy or a :class:`Move`; this Python body is the reference it is tested against.
        """
        ts = position.tile_set
        draw = list(bag)  # drawn from the end, like SimGame
        value = 0.0
        if isinstance(c.choice, Move):
            value += c.choice.score
            mine = c.leave + _take(draw, RACK_SIZE - len(c.leave))
            if not mine:  # went out
                return value + 2 * _rack_points(opp_rack, ts), 0, True
        else:
            got = _take(draw, len(c.choice.tiles))
            draw[:0] = list(c.choice.tiles)  # given tiles go back under the others
            mine = c.leave + got
        gen, lex, leaves = self.generator, self.lexicon, self.leaves
        theirs = opp_rack
        # Only from a root with at most a rack's worth in the bag: from a fuller bag the
        # lines that reach the endgame are the minority, and scoring them by the racks'
        # points beside leave values favoured the plays that use more tiles (v Speedy,
        # 80 games: 22 points of spread a game lost before the last 7 tiles, ~2 SE).
        endgame_plies = position.bag_count <= RACK_SIZE
        if cells is not None and isinstance(gen, NativeGenerator):
            return gen.line(
                position.board,
                cells,
                lex,
                ts,
                leaves,
                value,
                mine,
                theirs,
                "".join(draw),
                endgame_plies,
            )
        board = position.board.copy()
        if isinstance(c.choice, Move):
            for t in c.choice.tiles:
                board.place(t.x, t.y, t.tile)
        end = endgame_plies and not draw  # the opponent moves first in an endgame
        reply = gen.best(
            board,
            theirs,
            lex,
            ts,
            n=1,
            leave=EndgameLeave(_rack_points(mine, ts), ts) if end else leaves,
        )
        if reply:
            r = reply[0]
            value -= r.score
            for t in r.tiles:
                board.place(t.x, t.y, t.tile)
            theirs = _minus(theirs, r.rack_tiles)
            if end and not theirs:  # they went out: our rack counts twice against us
                return value - 2 * _rack_points(mine, ts), 0, True
            theirs += _take(draw, len(r.rack_tiles))
        end = endgame_plies and not draw
        ours = gen.best(
            board,
            mine,
            lex,
            ts,
            n=1,
            leave=EndgameLeave(_rack_points(theirs, ts), ts) if end else leaves,
        )
        kept = mine
        if ours:
            m = ours[0]
            value += m.score
            kept = leave_of(mine, m)
            if end and not kept:  # we went out
                return value + 2 * _rack_points(theirs, ts), 0, True
        unseen_after = len(draw) + len(kept)  # we draw from the bag: the same count
        if end:  # the line stops in the endgame: the racks as they stand
            return value + _rack_points(theirs, ts) - _rack_points(kept, ts), unseen_after, False
        return value + leaves.value(sort_leave(kept)), unseen_after, False

    # --- endgame ---

    def _endgame(self, position: Position, opp_rack: str, budget: Budget) -> Choice | None:
        solver = EndgameSolver(
            self.generator, self.lexicon, position.tile_set, expired=budget.expired
        )
        result = solver.solve(
            position.board, position.rack, opp_rack, passed=position.pass_ends_game()
        )
        if result is None:  # not even one iteration in the time: equity decides
            return None
        self.last_method = "endgame-exact" if result.exact else "endgame"
        self.last_value = result.value
        self.last_depth = result.depth
        self.last_line = [m if m is not None else PassChoice() for m in result.line]
        return result.move if result.move is not None else PassChoice()

    # --- pre-endgame ---

    def _preendgame(
        self, position: Position, candidates: list[_Candidate], unseen: str, budget: Budget
    ) -> Choice | None:
        plays = [c.choice for c in candidates if isinstance(c.choice, Move)]
        if not plays:
            return None
        lead = position.scores[0] - position.scores[1]
        result = preendgame(
            self.generator,
            self.lexicon,
            position.board,
            position.rack,
            unseen,
            plays,
            tile_set=position.tile_set,
            lead=lead,
            expired=budget.expired,
        )
        if result is None:
            return None
        # Close games are decided by the chance to win, the others by the spread.
        by_wins = abs(lead + max(result.values)) <= CLOSE_GAME
        best = result.best(by_wins=by_wins)
        self.last_method = "preendgame-exact" if result.exact else "preendgame"
        self.last_value = result.values[best]
        self.last_depth = result.depth
        return plays[best]


def _undecided(candidates: list[_Candidate]) -> bool:
    """Whether some simulated candidate's mean chance to win is neither ~0 nor ~1."""
    return any(
        WIN_DECIDED < c.win_mean < 1.0 - WIN_DECIDED for c in candidates if c.runs and not c.dropped
    )


def _drop(candidates: list[_Candidate], by_wins: bool) -> int:
    """The stopping rule: drop every candidate behind the best one (by its mean) by more
    than :data:`PRUNE_Z` standard errors of the difference. Returns how many it dropped."""
    live = [c for c in candidates if not c.dropped and c.runs > 1]
    if len(live) < 2:
        return 0
    best = max(live, key=lambda c: c.stats(by_wins)[0])
    top, top_var = best.stats(by_wins)
    dropped = 0
    for c in live:
        if c is best:
            continue
        mean, var = c.stats(by_wins)
        if top - mean > PRUNE_Z * math.sqrt(top_var + var):
            c.dropped = True
            dropped += 1
    return dropped


def _pick(candidates: list[_Candidate], by_wins: bool) -> _Candidate:
    """The candidate to play after a simulation: among those not dropped, the best mean
    chance to win (shrunk like the values, ties by value) or the best value."""
    live = [c for c in candidates if not c.dropped] or candidates
    if not by_wins:
        return max(live, key=_posterior)
    simulated = [c for c in live if c.runs]
    prior = sum(c.win_mean for c in simulated) / len(simulated) if simulated else 0.5

    def key(c: _Candidate) -> tuple[float, float, float]:
        win = (c.wins + PRIOR_RUNS * prior) / (c.runs + PRIOR_RUNS)
        return (win, *_posterior(c))

    return max(live, key=key)


def _posterior(c: _Candidate) -> tuple[float, float]:
    """A candidate's simulated value, shrunk toward its static equity.

    With a few dozen rounds the sampling error of a mean (the spread of a two-ply
    outcome is ~30 points) is larger than the gaps between good candidates, so each
    mean is blended with a prior worth :data:`PRIOR_RUNS` rounds: the static equity
    plus the average gap between simulated and static values over the candidates.
    """
    prior = c.equity + c.offset
    value = (c.runs * c.mean + PRIOR_RUNS * prior) / (c.runs + PRIOR_RUNS)
    return value, c.equity


def _minus(rack: str, tiles: str) -> str:
    left = list(rack)
    for t in tiles:
        left.remove(t)
    return "".join(left)


def _take(bag: list[str], n: int) -> str:
    n = max(0, min(n, len(bag)))
    if not n:
        return ""
    got = bag[-n:]
    del bag[-n:]
    return "".join(got)


def _rack_points(rack: str, tile_set: TileSet) -> int:
    return sum(tile_set.value(t) for t in rack)


def make_player(level: str, lexicon: Lexicon, *, generator: MoveGenerator | None = None) -> Player:
    """The player called ``level`` (:data:`LEVELS`)."""
    if level == "greedy":
        return GreedyPlayer(lexicon, generator)
    if level == "strong":
        return StrongPlayer(lexicon, generator=generator)
    raise ValueError(f"no player level {level!r}; choose from {', '.join(LEVELS)}")


@dataclass(slots=True)
class BotSettings:
    """How a protocol bot plays: the level, the time per move, and the clock and RNG.

    The bot runner (``meeple bot``) installs one with :func:`set_bot_settings`; then
    :func:`choose` without an explicit ``player`` plays at that level. The clock and
    RNG come from the runner, which may read the real time (this layer may not).
    """

    level: str = "greedy"
    think_time: float = DEFAULT_THINK_TIME
    clock: Callable[[], float] | None = None
    rng: Random | None = None
    players: dict[int, tuple[Lexicon, Player]] = field(default_factory=dict)

    def player_for(self, lexicon: Lexicon) -> Player:
        hit = self.players.get(id(lexicon))
        if hit is None or hit[0] is not lexicon:
            hit = self.players[id(lexicon)] = (lexicon, make_player(self.level, lexicon))
        return hit[1]

    def budget(self, bag_count: int, time_left: float | None = None) -> Budget:
        """``think_time``, cut to a share of ``time_left`` (the game clock) when given.

        The share keeps time for the moves still to come (about one per eight tiles
        in the bag and racks, at least three) and a safety margin, so a contest
        clock (CMPN402) never runs out because of thinking.
        """
        seconds = self.think_time
        if time_left is not None:
            moves_left = max(3, (bag_count + 14) // 8)
            seconds = min(seconds, max(0.0, 0.8 * (time_left - 1.0) / moves_left))
        return Budget(seconds, self.clock)


_bot_settings = BotSettings()


def set_bot_settings(settings: BotSettings) -> None:
    """Install how :func:`choose` plays when not given a player (the bot runner calls it)."""
    global _bot_settings
    _bot_settings = settings


def bot_settings() -> BotSettings:
    return _bot_settings


def choose(
    board: Board,
    rack: str,
    lexicon: Lexicon,
    *,
    tile_set: TileSet = ENGLISH,
    bag_count: int,
    exchange_minimum: int = 7,
    skip: int = 0,
    player: Player | None = None,
    budget: Budget | None = None,
    rng: Random | None = None,
    time_left: float | None = None,
    scores: tuple[int, int] | None = None,
    last_play: Move | None = None,
) -> Choice:
    """The move to make. ``skip`` passes over the best plays (after the server refused them).

    ``scores`` (the player's, then the opponent's) lets the strong player play for the
    win near the end of a close game; without them it plays for spread. ``last_play``,
    the opponent's last turn when it was a play (as on ``board``), lets it infer the
    tiles the opponent kept.

    Without ``player``, the installed :class:`BotSettings` decide (greedy unless the
    bot runner chose otherwise), with their budget cut to ``time_left`` seconds of
    game clock when given. A given ``player`` with no ``budget`` gets no time (a
    strong player then ranks by equity without simulating).
    """
    position = Position(
        board,
        rack,
        bag_count,
        tile_set=tile_set,
        exchange_minimum=exchange_minimum,
        scores=scores if scores is not None else (0, 0),
        scores_known=scores is not None,
        last_play=last_play,
    )
    if player is None:
        settings = _bot_settings
        return settings.player_for(lexicon).choose(
            position,
            budget or settings.budget(bag_count, time_left),
            rng if rng is not None else settings.rng,
            skip=skip,
        )
    return player.choose(position, budget or Budget(0.0, lambda: 0.0), rng, skip=skip)

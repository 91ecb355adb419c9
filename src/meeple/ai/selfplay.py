"""A lean two-player Scrabble game for simulation: self-play, leave derivation, matches.

:class:`meeple.games.scrabble.game.Game` is the referee: it validates every action,
keeps a log, supports challenges and replays. Simulation needs none of that (its
plays come from the move generator, so they are legal), and it needs to be fast
and cheap to copy: the strong player copies a position hundreds of times per move.
:class:`SimGame` is that: a board, two racks, a bag, scores, the turn, and the
standard end rules (going out: the player out gains the others' rack values and
each other player loses their own; six scoreless turns: each loses their own).

Pure: the caller passes the RNG that shuffles the bag and exchanges.
"""

from __future__ import annotations

from dataclasses import dataclass

from meeple.games.rng import Random
from meeple.games.scrabble.board import Board
from meeple.games.scrabble.moves import Move
from meeple.games.scrabble.tiles import BLANK, ENGLISH, TileSet

__all__ = ["RACK_SIZE", "SCORELESS_TURNS", "SimGame", "rack_value"]

RACK_SIZE = 7
SCORELESS_TURNS = 6


def rack_value(rack: str, tile_set: TileSet = ENGLISH) -> int:
    return sum(0 if t == BLANK else tile_set.values[t] for t in rack)


@dataclass(slots=True, eq=False)
class SimGame:
    """A two-player game in progress: :meth:`play`, :meth:`exchange` and :meth:`pass_` change it."""

    board: Board
    racks: list[str]
    bag: list[str]
    scores: list[int]
    turn: int = 0
    scoreless: int = 0
    over: bool = False
    tile_set: TileSet = ENGLISH
    exchange_minimum: int = 7
    moves: int = 0

    @classmethod
    def new(cls, rng: Random, tile_set: TileSet = ENGLISH, *, first: int = 0) -> SimGame:
        """A fresh game: the tile set's bag shuffled with ``rng``, seven tiles each."""
        bag = [tile for tile, n in sorted(tile_set.counts.items()) for _ in range(n)]
        bag.extend(rng.choice(tile_set.letters) for _ in range(tile_set.random_letters))
        rng.shuffle(bag)
        game = cls(Board(), ["", ""], bag, [0, 0], first, tile_set=tile_set)
        for p in (first, 1 - first):
            game.racks[p] = game._draw(RACK_SIZE)
        return game

    def copy(self) -> SimGame:
        return SimGame(
            self.board.copy(),
            list(self.racks),
            list(self.bag),
            list(self.scores),
            self.turn,
            self.scoreless,
            self.over,
            self.tile_set,
            self.exchange_minimum,
            self.moves,
        )

    def _draw(self, n: int) -> str:
        n = min(n, len(self.bag))
        if n <= 0:
            return ""
        drawn = self.bag[-n:]
        del self.bag[-n:]
        return "".join(drawn)

    def unseen(self, player: int) -> str:
        """The tiles ``player`` cannot see: the bag and the opponent's rack."""
        return "".join(self.bag) + self.racks[1 - player]

    def play(self, move: Move) -> None:
        """Put ``move`` (from the move generator, so legal) down for the player on turn."""
        p = self.turn
        rack = list(self.racks[p])
        for tile in move.tiles:
            self.board.place(tile.x, tile.y, tile.tile)
            rack.remove(BLANK if tile.tile.islower() else tile.tile)
        self.scores[p] += move.score
        self.racks[p] = "".join(rack) + self._draw(RACK_SIZE - len(rack))
        self.scoreless = 0
        self.moves += 1
        if not self.racks[p]:
            other = 1 - p
            value = rack_value(self.racks[other], self.tile_set)
            self.scores[p] += value
            self.scores[other] -= value
            self.over = True
            return
        self.turn = 1 - p

    def can_exchange(self, n: int) -> bool:
        return 0 < n <= len(self.racks[self.turn]) and len(self.bag) >= max(
            self.exchange_minimum, n
        )

    def exchange(self, tiles: str, rng: Random) -> None:
        """Swap ``tiles`` (on the rack; the bag must allow it) for new ones."""
        p = self.turn
        rack = list(self.racks[p])
        for t in tiles:
            rack.remove(t)
        drawn = self._draw(len(tiles))
        self.bag.extend(tiles)
        rng.shuffle(self.bag)
        self.racks[p] = "".join(rack) + drawn
        self._scoreless()

    def pass_(self) -> None:
        self._scoreless()

    def _scoreless(self) -> None:
        self.scoreless += 1
        self.moves += 1
        if self.scoreless >= SCORELESS_TURNS:
            for p in (0, 1):
                self.scores[p] -= rack_value(self.racks[p], self.tile_set)
            self.over = True
            return
        self.turn = 1 - self.turn

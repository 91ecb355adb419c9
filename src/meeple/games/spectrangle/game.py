"""A game of Spectrangle: hands, bag, turns, scores, the end, and replay from a log.

Create a :class:`Game` with the players' names in seat order and an injected
``random.Random`` (it only shuffles the bag); read :attr:`Game.turn`,
:meth:`Game.must_skip` and :meth:`Game.legal_actions`; change it only through
:meth:`Game.apply`, which returns the events to announce or raises a
:class:`~meeple.games.spectrangle.errors.RuleError` naming the broken rule.
:meth:`Game.record` and :func:`replay` rebuild a game exactly.

Rules (ERRATA, Spectrangle, with meeple's decisions where it is silent):

- 2–4 players, 4 tiles in hand. Hands are dealt in seat order from the shuffled bag.
- The player drawing the highest tile starts: the hand whose highest tile is highest;
  a tie goes to the hand whose values, highest first, are higher (compared one by
  one), and a remaining tie to the earlier seat. Play then goes round in seat order
  from the starter (the 1.4 ``order`` line).
- A placement puts any rotation of a held tile on an empty field (see
  :mod:`meeple.games.spectrangle.board` for the matching and scoring rules); the player
  then draws one tile while the bag has any.
- A player with no legal placement must skip, or exchange one tile while the bag has
  tiles; a player with a placement may do neither. The exchanged tile leaves the game
  (it is set aside, not put back): the spec is silent, and this is what the reference
  server of the transcript does — it guarantees that a blocked game reaches its end.
- The game ends when the bag is empty and no player can place a tile. The values of
  the tiles left in each hand are subtracted from that player's score.
- Optionally (:attr:`Rules.skip_rounds_limit`) it also ends after that many full rounds
  of plain skips; off by default, as the ERRATA know no such rule.
- A player leaving ends the game at once without a result (spec, "General
  information"): :class:`Abandon`.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from meeple.games.rng import Random
from meeple.games.spectrangle.board import Board, Placement
from meeple.games.spectrangle.errors import (
    BagEmpty,
    GameIsOver,
    MustPlace,
    NotYourTurn,
    TileNotInHand,
)
from meeple.games.spectrangle.tiles import TILE_SET, Tile

__all__ = [
    "ABANDON_REASONS",
    "ABORTED",
    "DEFAULT_RULES",
    "HAND_SIZE",
    "LEFT",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RESIGNED",
    "Abandon",
    "Action",
    "Event",
    "Exchange",
    "Exchanged",
    "Game",
    "GameAbandoned",
    "GameEnded",
    "GameRecord",
    "GameResult",
    "GameState",
    "GameStatus",
    "Place",
    "Rules",
    "Skip",
    "Skipped",
    "TilePlaced",
    "TilesDrawn",
    "TurnStarted",
    "final_scores",
    "replay",
    "starting_player",
]

HAND_SIZE = 4
MIN_PLAYERS = 2
MAX_PLAYERS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """The knobs of a game, as data. The defaults are the ERRATA's game."""

    hand_size: int = HAND_SIZE
    skip_rounds_limit: int | None = None  # end after this many rounds of plain skips


DEFAULT_RULES = Rules()


# ---------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Place:
    """Put ``tile`` (in the rotation given) on field ``index``."""

    player: int
    tile: Tile
    index: int


@dataclass(frozen=True, slots=True)
class Skip:
    """Pass the turn (only without a legal placement)."""

    player: int


@dataclass(frozen=True, slots=True)
class Exchange:
    """Swap one held tile (any rotation names it) for one from the bag, ending the turn."""

    player: int
    tile: Tile


# Why a player ended the game early (:class:`Abandon`): they left (the spec's only
# early end), resigned, or aborted it before their first move (issue 34.4, 34.9).
LEFT = "left"
RESIGNED = "resigned"
ABORTED = "aborted"
ABANDON_REASONS = (LEFT, RESIGNED, ABORTED)


@dataclass(frozen=True, slots=True)
class Abandon:
    """A player left: the game ends at once with no points (spec, "General information").

    ``reason`` says how: :data:`LEFT` (the spec's disconnect), :data:`RESIGNED` (the
    others win on the scores so far) or :data:`ABORTED` (nobody wins; not rated).
    """

    player: int
    reason: str = LEFT


Action = Place | Skip | Exchange | Abandon


# ----------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class TilesDrawn:
    """``player`` drew ``tiles`` from the bag; ``bag_left`` remain. Hands are public."""

    player: int
    tiles: tuple[Tile, ...]
    bag_left: int


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """It is ``player``'s turn; ``must_skip`` when they have no legal placement."""

    player: int
    must_skip: bool


@dataclass(frozen=True, slots=True)
class TilePlaced:
    """``player`` put ``tile`` (as rotated) on ``index`` for ``points``; ``total`` after it.

    ``held`` is the tile as it was in the hand (the unrotated form).
    """

    player: int
    tile: Tile
    index: int
    points: int
    total: int
    held: Tile


@dataclass(frozen=True, slots=True)
class Skipped:
    """``player`` skipped the turn without exchanging."""

    player: int


@dataclass(frozen=True, slots=True)
class Exchanged:
    """``player`` gave up ``tile`` (set aside) and drew ``new_tile``."""

    player: int
    tile: Tile
    new_tile: Tile
    bag_left: int


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended.

    ``scores`` are final (after deductions), ``deductions[i]`` the value of the tiles
    left in player i's hand, ``hands`` those tiles; ``ranking`` lists seats by final
    score, highest first, ties in turn order; ``winners`` hold the highest score.
    """

    scores: tuple[int, ...]
    deductions: tuple[int, ...]
    hands: tuple[tuple[Tile, ...], ...]
    ranking: tuple[int, ...]
    winners: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over (bag empty and nobody can place, or the skip limit)."""

    result: GameResult


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """``player`` left (or resigned, or aborted: ``reason``); the game ended without the
    rules' result."""

    player: int
    reason: str = LEFT


Event = TilesDrawn | TurnStarted | TilePlaced | Skipped | Exchanged | GameEnded | GameAbandoned


class GameStatus(enum.Enum):
    """Where a game is in its life."""

    PLAYING = "playing"
    FINISHED = "finished"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything that makes two games the same game, as one comparable value."""

    board: tuple[str | None, ...]
    hands: tuple[tuple[Tile, ...], ...]
    bag: tuple[Tile, ...]
    set_aside: tuple[Tile, ...]
    scores: tuple[int, ...]
    turn: int | None
    status: GameStatus
    skips_in_a_row: int
    result: GameResult | None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """What replays a game exactly: players, rules, the bag before dealing (drawn from
    the end), and the actions in order. Pass it to :func:`replay`."""

    players: tuple[str, ...]
    bag: tuple[Tile, ...]
    rules: Rules = DEFAULT_RULES
    actions: tuple[Action, ...] = field(default=())


def starting_player(hands: Sequence[Sequence[Tile]]) -> int:
    """The seat that starts: highest tile, then the next highest, ..., then earliest seat."""

    def key(seat: int) -> tuple[tuple[int, ...], int]:
        return tuple(sorted((t.value for t in hands[seat]), reverse=True)), -seat

    return max(range(len(hands)), key=key)


def final_scores(
    scores: Sequence[int], hands: Sequence[Sequence[Tile]], order: Sequence[int]
) -> GameResult:
    """The result from the placement scores and the hands left (ERRATA: tiles left in
    hand are subtracted). ``order`` is the turn order, which breaks ranking ties."""
    deductions = tuple(sum(t.value for t in hand) for hand in hands)
    final = tuple(s - d for s, d in zip(scores, deductions, strict=True))
    position = {seat: i for i, seat in enumerate(order)}
    ranking = tuple(sorted(range(len(final)), key=lambda p: (-final[p], position[p])))
    best = max(final)
    return GameResult(
        final,
        deductions,
        tuple(tuple(h) for h in hands),
        ranking,
        tuple(p for p in ranking if final[p] == best),
    )


# What a seat's view holds for each tile still in the bag (Game.seat_view).
_HIDDEN = None


class Game:
    """One game of Spectrangle: board, bag, hands, scores, turn, and the log of actions.

    Read-only views: :attr:`board`, :meth:`hand`, :attr:`scores`, :attr:`turn`,
    :attr:`order`, :attr:`status`, :attr:`result`. Change it only through :meth:`apply`.
    Players are seat numbers (0-based, in the order of ``players``).
    """

    def __init__(
        self,
        players: Sequence[str],
        rng: Random | None = None,
        *,
        bag: Sequence[Tile] | None = None,
        rules: Rules = DEFAULT_RULES,
    ) -> None:
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise ValueError(f"Spectrangle takes {MIN_PLAYERS}–{MAX_PLAYERS} players")
        if bag is None:
            if rng is None:
                raise ValueError("give an rng to shuffle the bag, or the bag itself")
            tiles = list(TILE_SET)
            rng.shuffle(tiles)
            bag = tiles
        if len(bag) < rules.hand_size * len(players):
            raise ValueError("the bag is too small to deal the hands")
        self.players = tuple(players)
        self.rules = rules
        self._initial_bag = tuple(bag)
        self._bag = list(bag)
        self._set_aside: list[Tile] = []
        self._board = Board()
        self._hands: list[list[Tile]] = []
        self._events: list[Event] = []
        for seat in range(len(players)):
            drawn = [self._bag.pop() for _ in range(rules.hand_size)]
            self._hands.append(drawn)
            self._events.append(TilesDrawn(seat, tuple(drawn), len(self._bag)))
        starter = starting_player(self._hands)
        n = len(players)
        self.order: tuple[int, ...] = tuple((starter + i) % n for i in range(n))
        self._turn = starter
        self._scores = [0] * n
        self._status = GameStatus.PLAYING
        self._skips = 0
        self._result: GameResult | None = None
        self._log: list[Action] = []
        self._events.append(TurnStarted(starter, self.must_skip()))

    # -- views

    @property
    def board(self) -> Board:
        """The board. Read it; do not change it."""
        return self._board

    def hand(self, player: int) -> tuple[Tile, ...]:
        return tuple(self._hands[player])

    @property
    def hands(self) -> tuple[tuple[Tile, ...], ...]:
        return tuple(tuple(h) for h in self._hands)

    @property
    def scores(self) -> tuple[int, ...]:
        """Scores so far (before the end-of-game deductions)."""
        return tuple(self._scores)

    @property
    def abandoned(self) -> Abandon | None:
        """How the game ended early (its last action), None if it did not."""
        last = self._log[-1] if self._log else None
        if self._status is GameStatus.ABANDONED and isinstance(last, Abandon):
            return last
        return None

    def abandon_winners(self) -> tuple[int, ...]:
        """Who won a game that ended early: after a resignation the best score so far
        among the others (with two players, the other one); nobody after a leave (the
        spec's "no points") or an abort."""
        end = self.abandoned
        if end is None or end.reason != RESIGNED:
            return ()
        others = [i for i in range(len(self.players)) if i != end.player]
        best = max(self._scores[i] for i in others)
        return tuple(i for i in others if self._scores[i] == best)

    @property
    def bag_size(self) -> int:
        return len(self._bag)

    @property
    def turn(self) -> int | None:
        """The seat on turn, or None once the game is over."""
        return self._turn if self._status is GameStatus.PLAYING else None

    @property
    def status(self) -> GameStatus:
        return self._status

    @property
    def is_over(self) -> bool:
        return self._status is not GameStatus.PLAYING

    @property
    def result(self) -> GameResult | None:
        return self._result

    @property
    def log(self) -> tuple[Action, ...]:
        return tuple(self._log)

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event so far, the deal and first turn included."""
        return tuple(self._events)

    @property
    def opening_events(self) -> tuple[Event, ...]:
        """The events of the deal: hands drawn and the first turn."""
        return tuple(self._events[: len(self.players) + 1])

    def can_place(self, player: int) -> bool:
        return self._board.has_placement(self._hands[player])

    def must_skip(self) -> bool:
        """True when the player on turn has no legal placement (1.4 ``skip <name>``)."""
        return not self.is_over and not self.can_place(self._turn)

    def legal_placements(self, player: int) -> list[Placement]:
        """Every legal placement of the player's hand (whoever is on turn)."""
        return self._board.placements(self._hands[player])

    def legal_actions(self, player: int) -> list[Action]:
        """What ``player`` may do now: placements, else skip and exchanges; [] off turn."""
        if self.is_over or player != self._turn:
            return []
        places: list[Action] = [
            Place(player, p.tile, p.index) for p in self.legal_placements(player)
        ]
        if places:
            return places
        actions: list[Action] = [Skip(player)]
        if self._bag:
            actions.extend(Exchange(player, t) for t in dict.fromkeys(self._hands[player]))
        return actions

    def state(self) -> GameState:
        return GameState(
            self._board.state(),
            self.hands,
            tuple(self._bag),
            tuple(self._set_aside),
            self.scores,
            self.turn,
            self._status,
            self._skips,
            self._result,
        )

    def record(self) -> GameRecord:
        return GameRecord(self.players, self._initial_bag, self.rules, tuple(self._log))

    def seat_view(self, player: int) -> Game:
        """A copy of the game as ``player`` may know it, to send to that player's
        connection (a cluster's seat subject). Hands, the board, the tiles set aside and
        every event are public (the 1.4 ``tiles`` line shows every hand; ``replace``
        names both tiles of an exchange), so all of them stay; the bag keeps its size but
        not its tiles or their order, and the record's bag (the deal order) is gone.
        ``player`` is for the symmetry with the other games' views: every seat sees the
        same. It shares the board and the like with the game: serialise it at once (as
        the cluster does), do not keep it."""
        seen = copy.copy(self)
        # Placeholders of the bag's size: bag_size, the exchange rule (a tile in the
        # bag) and must_skip read the same on the view; no tile is named.
        seen._bag = [_HIDDEN] * len(self._bag)  # type: ignore[list-item]
        seen._initial_bag = ()
        return seen

    # -- changes

    def apply(self, action: Action) -> list[Event]:
        """Carry out ``action`` and return what happened, or raise a RuleError and change
        nothing."""
        if self.is_over:
            raise GameIsOver("the game is over")
        if isinstance(action, Abandon):
            if action.reason not in ABANDON_REASONS:
                raise ValueError(f"no way to abandon a game: {action.reason!r}")
            self._status = GameStatus.ABANDONED
            events: list[Event] = [GameAbandoned(action.player, action.reason)]
        else:
            if action.player != self._turn:
                raise NotYourTurn(action.player, self._turn)
            if isinstance(action, Place):
                events = self._place(action)
            elif isinstance(action, Skip):
                events = self._skip(action)
            else:
                events = self._exchange(action)
            events.extend(self._next_turn())
        self._log.append(action)
        self._events.extend(events)
        return events

    def _held(self, player: int, tile: Tile) -> int:
        for i, held in enumerate(self._hands[player]):
            if held.same_piece(tile):
                return i
        raise TileNotInHand(tile.code)

    def _place(self, action: Place) -> list[Event]:
        slot = self._held(action.player, action.tile)
        points = self._board.place(action.tile, action.index)
        hand = self._hands[action.player]
        held = hand.pop(slot)
        self._scores[action.player] += points
        self._skips = 0
        events: list[Event] = [
            TilePlaced(
                action.player,
                action.tile,
                action.index,
                points,
                self._scores[action.player],
                held,
            )
        ]
        if self._bag:
            drawn = self._bag.pop()
            hand.append(drawn)
            events.append(TilesDrawn(action.player, (drawn,), len(self._bag)))
        return events

    def _skip(self, action: Skip) -> list[Event]:
        if self.can_place(action.player):
            raise MustPlace("a player with a legal placement may not skip")
        self._skips += 1
        return [Skipped(action.player)]

    def _exchange(self, action: Exchange) -> list[Event]:
        if self.can_place(action.player):
            raise MustPlace("a player with a legal placement may not exchange")
        slot = self._held(action.player, action.tile)
        if not self._bag:
            raise BagEmpty("the bag is empty")
        hand = self._hands[action.player]
        given = hand.pop(slot)
        drawn = self._bag.pop()
        hand.append(drawn)
        self._set_aside.append(given)
        self._skips = 0
        return [Exchanged(action.player, given, drawn, len(self._bag))]

    def _next_turn(self) -> list[Event]:
        n = len(self.players)
        limit = self.rules.skip_rounds_limit
        blocked = not self._bag and not any(self.can_place(p) for p in range(n))
        if blocked or (limit is not None and self._skips >= limit * n):
            self._status = GameStatus.FINISHED
            self._result = final_scores(self._scores, self._hands, self.order)
            return [GameEnded(self._result)]
        self._turn = (self._turn + 1) % n
        return [TurnStarted(self._turn, not self.can_place(self._turn))]


def replay(record: GameRecord) -> Game:
    """Rebuild a game from its record; ``replay(g.record()).state() == g.state()``."""
    game = Game(record.players, bag=record.bag, rules=record.rules)
    for action in record.actions:
        game.apply(action)
    return game

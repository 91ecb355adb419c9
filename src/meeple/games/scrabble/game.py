"""A game of Scrabble: state, actions in, events out, an action log that replays it.

Make a :class:`Game` with the players' names, a seeded ``random.Random`` and a
:class:`Variant`; read :meth:`Game.opening_events` for the first racks and the first
turn; then feed actions to :meth:`Game.apply`, which returns the events the server
turns into protocol messages, or raises the :class:`RuleError` that names the rule
broken (the game is then unchanged). :meth:`Game.record` gives a :class:`GameRecord`
from which :func:`replay` rebuilds the same game.

Turn flow (the allowed actions per status are one table, ``_ALLOWED``):

- ``PLAYING``: the player on turn may Play, Exchange or Pass; End may come any time.
- ``CHALLENGE_WINDOW`` (challengeable variants only): the last play stands
  provisionally in :attr:`Game.pending` — its tiles are on the board and its score is
  counted, but its player has not drawn yet. Any opponent of that player may
  Challenge; the player now on turn may Accept, or simply act (Play, Exchange or Pass
  accept the play first). The replacement tiles are drawn when the play is accepted.
  A play that empties the rack with the bag empty must be accepted or challenged
  explicitly (:class:`AwaitingChallenge`), since accepting it ends the game.
- Leave may come any time before the end: the player's turns are skipped from then
  on (Clarkson: the others play on); End stops the whole game (Twente: a disconnect
  ends it).
- ``OVER``: nothing more is allowed (:class:`GameIsOver`) but a :class:`TimePenalty`,
  the clock's overtime penalty, which the rules take off the final score;
  :attr:`Game.result` says why it ended (its scores after any penalty).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from meeple.games.rng import Random
from meeple.games.scrabble.bag import RACK_SIZE, Bag, Rack
from meeple.games.scrabble.board import STANDARD_LAYOUT, Board, Direction, Layout
from meeple.games.scrabble.errors import (
    AwaitingChallenge,
    ChallengeError,
    EmptyPlay,
    ExchangeNotAllowed,
    GameIsOver,
    NotYourTurn,
    TilesNotOnRack,
)
from meeple.games.scrabble.moves import Move, Placement, tiles_from_word
from meeple.games.scrabble.rules import BINGO_BONUS, BINGO_SIZE, PlayResult, phonies, validate_play
from meeple.games.scrabble.tiles import CLARKSON, ENGLISH, TILE_SETS, TileSet

__all__ = [
    "CLARKSON_VARIANT",
    "CMPN402_VARIANT",
    "STANDARD_VARIANT",
    "TWENTE_VARIANT",
    "VARIANTS",
    "Accept",
    "Action",
    "Challenge",
    "ChallengeFailed",
    "ChallengeRule",
    "ChallengeUpheld",
    "End",
    "EndReason",
    "Event",
    "Exchange",
    "Exchanged",
    "Game",
    "GameEnded",
    "GameRecord",
    "GameResult",
    "GameState",
    "GameStatus",
    "Leave",
    "Pass",
    "Passed",
    "PendingPlay",
    "Play",
    "PlayAccepted",
    "PlayMade",
    "PlayWithdrawn",
    "PlayerDropped",
    "TilesDrawn",
    "TimePenalized",
    "TimePenalty",
    "TurnLost",
    "TurnPassedTo",
    "Variant",
    "replay",
    "variant_to_dict",
]


# --------------------------------------------------------------------------- variants


class ChallengeRule(enum.Enum):
    """How phonies are caught.

    VOID checks every word when it is played (a phony is refused with
    WordsNotInLexicon). The others accept a play unchecked and let an opponent
    challenge it: a phony is withdrawn and its player loses the turn; a wrong
    challenge costs nothing (SINGLE), the challenger's turn (DOUBLE), or gives the
    challenged player 5 or 10 points (FIVE_POINT, TEN_POINT).
    """

    VOID = "void"
    SINGLE = "single"
    DOUBLE = "double"
    FIVE_POINT = "five-point"
    TEN_POINT = "ten-point"

    @property
    def checks_on_play(self) -> bool:
        return self is ChallengeRule.VOID

    @property
    def wrong_challenge_bonus(self) -> int:
        """Points the challenged player gets when a challenge fails."""
        return {ChallengeRule.FIVE_POINT: 5, ChallengeRule.TEN_POINT: 10}.get(self, 0)

    @property
    def wrong_challenge_loses_turn(self) -> bool:
        return self is ChallengeRule.DOUBLE


@dataclass(frozen=True, slots=True)
class Variant:
    """The rules a game is played by, as data.

    ``exchange_minimum``: an exchange needs at least ``max(exchange_minimum, tiles
    exchanged)`` tiles in the bag — 7 in standard play, 1 for Twente's "no more tiles
    than are in the bag" (its E007). ``scoreless_turns``: that many consecutive
    scoreless turns by anyone end the game, each player losing their rack's value
    (None: never). ``passes_in_a_row``: one player passing that many turns in a row
    ends the game with no rack adjustment (Clarkson RFC §3.15: 2; None: never).
    ``lexicon`` only names the word list (GCG ``#lexicon``); the word list itself is
    passed to :class:`Game`.
    """

    name: str = "standard"
    tile_set: TileSet = ENGLISH
    layout: Layout = STANDARD_LAYOUT
    rack_size: int = RACK_SIZE
    bingo_size: int = BINGO_SIZE
    bingo_bonus: int = BINGO_BONUS
    challenge: ChallengeRule = ChallengeRule.VOID
    exchange_minimum: int = 7
    scoreless_turns: int | None = 6
    passes_in_a_row: int | None = None
    min_players: int = 2
    max_players: int = 4
    lexicon: str | None = None

    def __hash__(self) -> int:
        # TileSet holds mapping proxies, which do not hash; its name stands for it.
        return hash(
            (
                self.name,
                self.tile_set.name,
                self.layout,
                self.rack_size,
                self.bingo_size,
                self.bingo_bonus,
                self.challenge,
                self.exchange_minimum,
                self.scoreless_turns,
                self.passes_in_a_row,
                self.min_players,
                self.max_players,
                self.lexicon,
            )
        )

    def but(self, **changes: Any) -> Variant:
        """A copy with some fields changed: ``STANDARD_VARIANT.but(challenge=...)``."""
        return replace(self, **changes)


STANDARD_VARIANT = Variant()
# Twente v2: 2–4 players (3–4 with TEAMPLAY), words checked on play (E006), a swap of
# no more tiles than the bag holds (E007).
TWENTE_VARIANT = Variant(name="twente", exchange_minimum=1)
# Clarkson RFC: no blanks but two random letters (§4.2), a lone player may play, and
# passing twice in a row ends the game (§3.15).
CLARKSON_VARIANT = Variant(
    name="clarkson", tile_set=CLARKSON, min_players=1, passes_in_a_row=2, exchange_minimum=1
)
# CMPN402: two agents, double challenge (words checked only on CHALLENGE), exchange
# with at least 7 tiles in the bag (ERRATA).
CMPN402_VARIANT = Variant(
    name="cmpn402", challenge=ChallengeRule.DOUBLE, min_players=2, max_players=2
)
VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {v.name: v for v in (STANDARD_VARIANT, TWENTE_VARIANT, CLARKSON_VARIANT, CMPN402_VARIANT)}
)


# ---------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Play:
    """Put tiles on the board (``?`` tiles are refused: a blank needs its letter)."""

    player: int
    tiles: tuple[Placement, ...]

    @classmethod
    def from_word(
        cls, board: Board, player: int, x: int, y: int, direction: Direction, word: str
    ) -> Play:
        """The play that writes the whole ``word`` from ``(x, y)``, playing through the board."""
        return cls(player, tiles_from_word(board, x, y, direction, word))

    @classmethod
    def from_move(cls, player: int, move: Move) -> Play:
        return cls(player, move.tiles)


@dataclass(frozen=True, slots=True)
class Exchange:
    """Swap tiles (``?`` for a blank) with tiles from the bag."""

    player: int
    tiles: str


@dataclass(frozen=True, slots=True)
class Pass:
    """End the turn doing nothing."""

    player: int


@dataclass(frozen=True, slots=True)
class Challenge:
    """Challenge the pending play (any opponent of the player who made it)."""

    player: int


@dataclass(frozen=True, slots=True)
class Accept:
    """Let the pending play stand (the player on turn; CMPN402 NO_CHALLENGE)."""

    player: int


class EndReason(enum.Enum):
    """Why a game ended. The last five come from outside the rules, through :class:`End`."""

    WENT_OUT = "went-out"
    SCORELESS_TURNS = "scoreless-turns"
    PASSES = "passes"
    TIME = "time"
    ADMIN = "admin"
    DISCONNECT = "disconnect"
    # A player gave up (the others win, as after a disconnect) or, before their first
    # move, called the game off (nobody wins; not rated): issue 34.4, 34.9.
    RESIGNED = "resigned"
    ABORTED = "aborted"

    @property
    def is_external(self) -> bool:
        return self in (
            EndReason.TIME,
            EndReason.ADMIN,
            EndReason.DISCONNECT,
            EndReason.RESIGNED,
            EndReason.ABORTED,
        )


@dataclass(frozen=True, slots=True)
class End:
    """Stop the game from outside: time ran out, an admin stopped it, a player disconnected.

    ``player`` is the player concerned (the one who disconnected or ran out of time).
    """

    reason: EndReason
    player: int | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    """A player leaves for good and the others play on (Clarkson RFC §4, ERRATA).

    Their turns are skipped from now on, their rack stays out of play, they cannot
    win while anyone remains, and the game ends (DISCONNECT) when nobody is left.
    Protocols where a disconnect ends the game (Twente) send :class:`End` instead.
    """

    player: int


@dataclass(frozen=True, slots=True)
class TimePenalty:
    """Take ``points`` off ``player``'s final score: the overtime penalty of a game
    played on a clock (WESPA and NASPA rules: 10 points per minute or part of one over
    the player's time). Allowed only once the game is over, since the rule applies to
    the final score; the winners are decided again."""

    player: int
    points: int


Action = Play | Exchange | Pass | Challenge | Accept | End | Leave | TimePenalty


# ----------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended: final scores, the rack adjustments in them, and the winners.

    ``player`` is the one who went out, passed too often, or whom an external end
    concerns. ``adjustments[i]`` is what the end-of-game rack rule added to player i's
    score (negative for a penalty); ``racks`` are the racks left at the end. Winners are
    the players with the highest score — after a disconnect, among those still there.
    """

    reason: EndReason
    player: int | None
    scores: tuple[int, ...]
    adjustments: tuple[int, ...]
    racks: tuple[str, ...]
    winners: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TilesDrawn:
    """``player`` drew ``tiles`` (maybe none); ``bag_left`` tiles remain. Private to the player."""

    player: int
    tiles: str
    bag_left: int


@dataclass(frozen=True, slots=True)
class PlayMade:
    """``player`` played ``move``; ``pending`` when it still awaits a challenge.

    ``words`` are all the words formed (main word first, upper case), ``total`` the
    player's score after the play, ``rack`` the rack held before it (for GCG).
    """

    player: int
    move: Move
    words: tuple[str, ...]
    score: int
    bingo: bool
    total: int
    rack: str
    pending: bool


@dataclass(frozen=True, slots=True)
class PlayAccepted:
    """The pending play of ``player`` stands (accepted, or challenged in vain)."""

    player: int
    score: int


@dataclass(frozen=True, slots=True)
class Exchanged:
    """``player`` put ``tiles`` back in the bag (private: others learn only the count)."""

    player: int
    tiles: str
    total: int
    rack: str

    @property
    def count(self) -> int:
        return len(self.tiles)


@dataclass(frozen=True, slots=True)
class Passed:
    player: int
    total: int
    rack: str


@dataclass(frozen=True, slots=True)
class ChallengeUpheld:
    """``challenger`` was right: ``words`` of ``player``'s play are not in the lexicon."""

    challenger: int
    player: int
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlayWithdrawn:
    """The phony is off the board and back on ``player``'s rack; ``score`` taken back."""

    player: int
    tiles: tuple[Placement, ...]
    score: int
    total: int
    rack: str


@dataclass(frozen=True, slots=True)
class ChallengeFailed:
    """A wrong challenge: ``player`` gets ``bonus``; ``turn_lost``: the challenger loses a turn."""

    challenger: int
    player: int
    words: tuple[str, ...]
    bonus: int
    turn_lost: bool
    total: int
    rack: str


@dataclass(frozen=True, slots=True)
class TurnLost:
    """``player`` loses a turn (a wrong challenge under the double-challenge rule)."""

    player: int
    total: int
    rack: str


@dataclass(frozen=True, slots=True)
class TurnPassedTo:
    """It is now ``player``'s turn."""

    player: int


@dataclass(frozen=True, slots=True)
class PlayerDropped:
    """``player`` left the game; their turns are skipped from now on."""

    player: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    result: GameResult


@dataclass(frozen=True, slots=True)
class TimePenalized:
    """``points`` were taken off ``player``'s final score for overtime; ``result`` is
    the game's result after it."""

    player: int
    points: int
    total: int
    result: GameResult


Event = (
    TilesDrawn
    | PlayMade
    | PlayAccepted
    | Exchanged
    | Passed
    | ChallengeUpheld
    | PlayWithdrawn
    | ChallengeFailed
    | TurnLost
    | TurnPassedTo
    | PlayerDropped
    | GameEnded
    | TimePenalized
)


# ------------------------------------------------------------------------------ state


class GameStatus(enum.Enum):
    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, run several times per message sent).
    __hash__ = object.__hash__

    PLAYING = "playing"
    CHALLENGE_WINDOW = "challenge-window"
    OVER = "over"


# The one transition table: which actions each status allows. Turn and challenger
# checks come after it, in Game.apply.
_ALLOWED: Mapping[GameStatus, frozenset[type]] = MappingProxyType(
    {
        GameStatus.PLAYING: frozenset({Play, Exchange, Pass, End, Leave}),
        GameStatus.CHALLENGE_WINDOW: frozenset(
            {Play, Exchange, Pass, Challenge, Accept, End, Leave}
        ),
        GameStatus.OVER: frozenset({TimePenalty}),
    }
)


@dataclass(frozen=True, slots=True)
class PendingPlay:
    """A play awaiting a challenge: who made it, what it was, and the rack before it."""

    player: int
    result: PlayResult
    rack_before: str
    going_out: bool

    @property
    def score(self) -> int:
        return self.result.score


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything that makes two games the same game, as one comparable value."""

    board: tuple[str, ...]
    racks: tuple[str, ...]
    bag: tuple[str, ...]
    scores: tuple[int, ...]
    turn: int | None
    status: GameStatus
    pending: PendingPlay | None
    scoreless_turns: int
    passes_in_a_row: tuple[int, ...]
    skip: frozenset[int]
    left: frozenset[int]
    result: GameResult | None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """What replays a game exactly: the setup (bag order, RNG state after the bag was made)
    and the actions in order. Pass it to :func:`replay` with any ``random.Random``."""

    players: tuple[str, ...]
    variant: Variant
    bag: tuple[str, ...]
    rng_state: tuple[Any, ...]
    first_player: int
    actions: tuple[Action, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (lists, strings, ints, None), for a store or checkpoint."""
        version, internal, gauss = self.rng_state
        return {
            "players": list(self.players),
            "variant": variant_to_dict(self.variant),
            "bag": "".join(self.bag),
            "rng_state": [version, list(internal), gauss],
            "first_player": self.first_player,
            "actions": [_action_to_dict(a) for a in self.actions],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameRecord:
        """The inverse of :meth:`to_dict`; raise ValueError for data it did not write."""
        try:
            version, internal, gauss = data["rng_state"]
            return cls(
                players=tuple(data["players"]),
                variant=_variant_from_dict(data["variant"]),
                bag=tuple(data["bag"]),
                rng_state=(version, tuple(internal), gauss),
                first_player=int(data["first_player"]),
                actions=tuple(_action_from_dict(a) for a in data["actions"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a game record: {e}") from e


class Game:
    """One game of Scrabble: board, bag, racks, scores, turn, and the log of actions.

    Read-only views: :attr:`board`, :meth:`rack`, :attr:`scores`, :attr:`turn`,
    :attr:`pending`, :attr:`status`, :attr:`result`. Change it only through
    :meth:`apply`. ``lexicon`` is any container of upper-case words; None checks no words.
    """

    def __init__(
        self,
        players: Sequence[str],
        rng: Random,
        *,
        variant: Variant = STANDARD_VARIANT,
        lexicon: Container[str] | None = None,
        bag: Iterable[str] | None = None,
        first_player: int = 0,
    ) -> None:
        if not variant.min_players <= len(players) <= variant.max_players:
            raise ValueError(
                f"{variant.name} takes {variant.min_players}–{variant.max_players} players"
            )
        if not 0 <= first_player < len(players):
            raise ValueError(f"no player {first_player}")
        self.players = tuple(players)
        self.variant = variant
        self.lexicon = lexicon
        self._rng = rng
        self._bag = Bag(bag) if bag is not None else Bag.from_tile_set(variant.tile_set, rng)
        self._initial_bag = self._bag.tiles
        self._initial_rng_state: tuple[Any, ...] = rng.getstate()
        self._first_player = first_player
        self._board = Board(variant.layout)
        self._racks = [Rack() for _ in players]
        self._opening: list[Event] = []
        for i, rack in enumerate(self._racks):
            rack.add(self._bag.draw(variant.rack_size))
            self._opening.append(TilesDrawn(i, rack.tiles, len(self._bag)))
        self._opening.append(TurnPassedTo(first_player))
        self._scores = [0] * len(players)
        self._turn = first_player
        self._status = GameStatus.PLAYING
        self._pending: PendingPlay | None = None
        self._scoreless = 0
        self._passes = [0] * len(players)
        self._skip: set[int] = set()
        self._left: set[int] = set()
        self._result: GameResult | None = None
        self._log: list[Action] = []
        self._events: list[Event] = list(self._opening)
        self._reshuffles: list[str] = []

    # -- views

    def seat_view(self, player: int) -> Game:
        """A copy of the game as ``player`` may know it, to send to that player's
        connection (a cluster's seat subject): the bag's size but not its order, the
        other racks' sizes but not their tiles (nor the rack another player's pending
        play was made from), no RNG, no lexicon, no log of actions or events (the
        exchanged tiles are in it). It shares the board, the scores and the
        like with the game: serialise it at once (as the cluster does), do not keep it."""
        # A plain copy of the attributes (copy.copy's reduce protocol costs several times
        # as much, and a room makes one per seat per event: issue 32.3).
        seen = Game.__new__(Game)
        seen.__dict__.update(self.__dict__)
        seen.lexicon = None
        seen._rng = None  # type: ignore[assignment]
        seen._bag = Bag("?" * len(self._bag))
        seen._initial_bag = ()
        seen._initial_rng_state = ()
        seen._racks = [
            Rack(r.tiles) if i == player else Rack("?" * len(r.tiles))
            for i, r in enumerate(self._racks)
        ]
        pending = self._pending
        if pending is not None and pending.player != player:
            # The rack the play was made from (to put the tiles back on a challenge).
            hidden = "?" * len(pending.rack_before)
            seen._pending = dataclasses.replace(pending, rack_before=hidden)
        seen._opening = []
        seen._log = []
        seen._events = []
        seen._reshuffles = []
        return seen

    @property
    def board(self) -> Board:
        """The board (pending tiles included). Read it; do not change it."""
        return self._board

    def rack(self, player: int) -> str:
        return self._racks[player].tiles

    @property
    def racks(self) -> tuple[str, ...]:
        return tuple(r.tiles for r in self._racks)

    @property
    def bag(self) -> Bag:
        """The bag. Read it; do not change it (its order is secret from the players)."""
        return self._bag

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(self._scores)

    @property
    def turn(self) -> int | None:
        """Whose turn it is; None once the game is over."""
        return None if self._status is GameStatus.OVER else self._turn

    @property
    def status(self) -> GameStatus:
        return self._status

    @property
    def is_over(self) -> bool:
        return self._status is GameStatus.OVER

    @property
    def pending(self) -> PendingPlay | None:
        """The play awaiting a challenge, if any."""
        return self._pending

    @property
    def result(self) -> GameResult | None:
        return self._result

    @property
    def scoreless_turns(self) -> int:
        return self._scoreless

    @property
    def log(self) -> tuple[Action, ...]:
        """Every action applied, in order; with :meth:`record` it replays the game."""
        return tuple(self._log)

    def log_since(self, start: int) -> tuple[Action, ...]:
        """The actions from number ``start`` (0-based) on: :attr:`log` cut, without
        copying the whole of it (a room asks after every command)."""
        return tuple(self._log[start:])

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event so far, the opening events first."""
        return tuple(self._events)

    @property
    def reshuffles(self) -> tuple[str, ...]:
        """The bag's order after each exchange shuffled tiles back in, in game order.

        With the initial bag this replays the game without the RNG (the JSON record,
        :mod:`meeple.games.scrabble.record`). Secret while the game runs, like the bag.
        """
        return tuple(self._reshuffles)

    def resume(self, rng: Random, lexicon: Container[str] | None) -> None:
        """Go on with a game rebuilt from its record (a room's log after a restart):
        later shuffles come from ``rng``, words are checked against ``lexicon``."""
        self._rng = rng
        self.lexicon = lexicon

    def opening_events(self) -> list[Event]:
        """The first racks (one TilesDrawn per player) and the first TurnPassedTo."""
        return list(self._opening)

    def state(self) -> GameState:
        return GameState(
            board=tuple(self._board.rows()),
            racks=self.racks,
            bag=self._bag.tiles,
            scores=self.scores,
            turn=self.turn,
            status=self._status,
            pending=self._pending,
            scoreless_turns=self._scoreless,
            passes_in_a_row=tuple(self._passes),
            skip=frozenset(self._skip),
            left=frozenset(self._left),
            result=self._result,
        )

    def record(self) -> GameRecord:
        return GameRecord(
            self.players,
            self.variant,
            self._initial_bag,
            self._initial_rng_state,
            self._first_player,
            tuple(self._log),
        )

    def validate(
        self,
        tiles: Iterable[Placement],
        player: int | None = None,
        *,
        lexicon: Container[str] | None = None,
    ) -> PlayResult:
        """Check a play for ``player`` (default: the player on turn) without making it.

        Words are checked only in the void-challenge variant, as :meth:`apply` does,
        against ``lexicon`` if given (a seat's view has none: :meth:`seat_view`), else
        the game's own.
        """
        p = self._turn if player is None else player
        v = self.variant
        words = self.lexicon if lexicon is None else lexicon
        return validate_play(
            self._board,
            tiles,
            tile_set=v.tile_set,
            rack=self._racks[p],
            lexicon=words if v.challenge.checks_on_play else None,
            bingo_size=v.bingo_size,
            bingo_bonus=v.bingo_bonus,
        )

    # -- actions

    def apply(self, action: Action) -> list[Event]:
        """Apply one action and return its events; raise a RuleError (game unchanged) if illegal."""
        if self._status is GameStatus.OVER and not isinstance(action, TimePenalty):
            raise GameIsOver("the game is over")
        if type(action) not in _ALLOWED[self._status]:
            raise ChallengeError(f"no play to {type(action).__name__.lower()}")
        if isinstance(action, Play | Exchange | Pass | Accept) and action.player != self._turn:
            raise NotYourTurn(f"it is {self.players[self._turn]}'s turn")
        events = _CARRY_OUT[type(action)](self, action)
        self._log.append(action)
        self._events.extend(events)
        return events

    def _check_turn_action(self) -> None:
        if self._pending is not None and self._pending.going_out:
            raise AwaitingChallenge("the last play ends the game: accept or challenge it first")

    def _play(self, action: Play) -> list[Event]:
        self._check_turn_action()
        result = self.validate(action.tiles, action.player)
        events = self._settle_pending()
        p = action.player
        rack = self._racks[p]
        rack_before = rack.tiles
        rack.take(result.rack_tiles)
        for t in result.tiles:
            self._board.place(t.x, t.y, t.tile)
        self._scores[p] += result.score
        self._passes[p] = 0
        going_out = len(rack) == 0 and len(self._bag) == 0
        checked = self.variant.challenge.checks_on_play
        events.append(
            PlayMade(
                p,
                result.to_move(),
                tuple(w.letters for w in result.words),
                result.score,
                result.bingo,
                self._scores[p],
                rack_before,
                pending=not checked,
            )
        )
        if checked:
            events += self._draw_after_play(p)
            if self._status is not GameStatus.OVER:
                events += self._next_turn()
        else:
            self._pending = PendingPlay(p, result, rack_before, going_out)
            self._status = GameStatus.CHALLENGE_WINDOW
            events += self._next_turn()
        return events

    def _exchange(self, action: Exchange) -> list[Event]:
        self._check_turn_action()
        p, tiles = action.player, action.tiles
        if not tiles:
            raise EmptyPlay("an exchange needs at least one tile")
        rack = self._racks[p]
        missing = rack.missing(tiles)
        if missing:
            raise TilesNotOnRack(missing)
        needed = max(self.variant.exchange_minimum, len(tiles))
        in_bag = self._bag_after_pending()
        if in_bag < needed:
            raise ExchangeNotAllowed(in_bag, needed)
        events = self._settle_pending()
        rack_before = rack.tiles
        rack.take(tiles)
        drawn = self._bag.draw(len(tiles))
        self._bag.put_back(tiles, self._rng)
        self._reshuffles.append("".join(self._bag))
        rack.add(drawn)
        self._passes[p] = 0
        events.append(Exchanged(p, tiles, self._scores[p], rack_before))
        events.append(TilesDrawn(p, drawn, len(self._bag)))
        return events + self._scoreless_turn()

    def _pass(self, action: Pass) -> list[Event]:
        self._check_turn_action()
        p = action.player
        events = self._settle_pending()
        events.append(Passed(p, self._scores[p], self._racks[p].tiles))
        self._passes[p] += 1
        limit = self.variant.passes_in_a_row
        if limit is not None and self._passes[p] >= limit:
            # Clarkson RFC §3.15: the server decides the winner by the highest score.
            self._scoreless += 1
            return events + self._finish(EndReason.PASSES, p)
        return events + self._scoreless_turn()

    def _challenge(self, action: Challenge) -> list[Event]:
        pending = self._pending
        assert pending is not None  # the status table allows Challenge only in the window
        c = action.player
        if not 0 <= c < len(self.players) or c == pending.player or c in self._left:
            raise ChallengeError("only an opponent of the player who made the play may challenge")
        p = pending.player
        bad = phonies(pending.result.words, self.lexicon) if self.lexicon is not None else ()
        events: list[Event] = []
        if bad:
            self._pending = None
            self._status = GameStatus.PLAYING
            for t in pending.result.tiles:
                self._board.remove(t.x, t.y)
            self._racks[p] = Rack(pending.rack_before)
            self._scores[p] -= pending.score
            events.append(ChallengeUpheld(c, p, bad))
            events.append(
                PlayWithdrawn(
                    p, pending.result.tiles, pending.score, self._scores[p], pending.rack_before
                )
            )
            # The player who made the phony has lost their turn, which already passed on.
            self._scoreless += 1
            return events + self._check_scoreless_end()
        rule = self.variant.challenge
        self._scores[p] += rule.wrong_challenge_bonus
        events.append(
            ChallengeFailed(
                c,
                p,
                tuple(w.letters for w in pending.result.words),
                rule.wrong_challenge_bonus,
                rule.wrong_challenge_loses_turn,
                self._scores[p],
                pending.rack_before,
            )
        )
        events += self._settle_pending()
        if self._status is GameStatus.OVER or not rule.wrong_challenge_loses_turn:
            return events
        if c != self._turn:
            # An opponent other than the player on turn loses their next turn.
            self._skip.add(c)
            return events
        events.append(TurnLost(c, self._scores[c], self._racks[c].tiles))
        return events + self._scoreless_turn()

    def _accept(self, action: Accept) -> list[Event]:
        return self._settle_pending()

    def _end_externally(self, action: End) -> list[Event]:
        if not action.reason.is_external:
            raise ValueError(f"{action.reason} is decided by the rules, not by End")
        if action.player is not None and not 0 <= action.player < len(self.players):
            raise ValueError(f"no player {action.player}")
        # A pending play stands when the game is stopped from outside.
        events = self._settle_pending(end_if_out=False)
        return events + self._finish(action.reason, action.player)

    def _time_penalty(self, action: TimePenalty) -> list[Event]:
        result = self._result
        p = action.player
        if result is None or not 0 <= p < len(self.players) or action.points < 0:
            raise ValueError(f"no time penalty of {action.points} for player {p}")
        self._scores[p] -= action.points
        scores = tuple(self._scores)
        self._result = replace(
            result, scores=scores, winners=self._winners(result.reason, result.player)
        )
        return [TimePenalized(p, action.points, scores[p], self._result)]

    def _winners(self, reason: EndReason, player: int | None) -> tuple[int, ...]:
        # Players who left, or whose disconnect or resignation ended the game, win only if
        # nobody remains; an aborted game has no winner.
        n = len(self.players)
        if reason is EndReason.ABORTED:
            return ()
        quit_ = reason in (EndReason.DISCONNECT, EndReason.RESIGNED)
        gone = self._left | ({player} if quit_ else set())
        eligible = [i for i in range(n) if i not in gone] or list(range(n))
        best = max(self._scores[i] for i in eligible)
        return tuple(i for i in eligible if self._scores[i] == best)

    def _leave(self, action: Leave) -> list[Event]:
        p = action.player
        if not 0 <= p < len(self.players) or p in self._left:
            raise ValueError(f"player {p} is not in the game")
        # Whoever leaves can no longer challenge: a pending play stands.
        events = self._settle_pending()
        self._left.add(p)
        self._skip.discard(p)
        events.append(PlayerDropped(p))
        if self._status is GameStatus.OVER:
            return events
        if len(self._left) == len(self.players):
            return events + self._finish(EndReason.DISCONNECT, p)
        if p == self._turn:
            events += self._next_turn()
        return events

    def drop_player(self, player: int) -> list[Event]:
        """Shorthand for ``apply(Leave(player))``."""
        return self.apply(Leave(player))

    # -- turn machinery

    def _bag_after_pending(self) -> int:
        if self._pending is None:
            return len(self._bag)
        want = self.variant.rack_size - len(self._racks[self._pending.player])
        return max(0, len(self._bag) - want)

    def _draw_after_play(self, p: int, *, end_if_out: bool = True) -> list[Event]:
        rack = self._racks[p]
        drawn = self._bag.draw(self.variant.rack_size - len(rack))
        rack.add(drawn)
        self._scoreless = 0
        events: list[Event] = [TilesDrawn(p, drawn, len(self._bag))]
        if end_if_out and len(rack) == 0:
            events += self._finish(EndReason.WENT_OUT, p)
        return events

    def _settle_pending(self, *, end_if_out: bool = True) -> list[Event]:
        """Accept the pending play, if any: its player draws; the game ends if they went out."""
        pending = self._pending
        if pending is None:
            return []
        self._pending = None
        self._status = GameStatus.PLAYING
        accepted: list[Event] = [PlayAccepted(pending.player, pending.score)]
        return accepted + self._draw_after_play(pending.player, end_if_out=end_if_out)

    def _scoreless_turn(self) -> list[Event]:
        self._scoreless += 1
        events = self._check_scoreless_end()
        if self._status is not GameStatus.OVER:
            events += self._next_turn()
        return events

    def _check_scoreless_end(self) -> list[Event]:
        limit = self.variant.scoreless_turns
        if limit is not None and self._scoreless >= limit:
            return self._finish(EndReason.SCORELESS_TURNS, None)
        return []

    def _next_turn(self) -> list[Event]:
        events: list[Event] = []
        n = len(self.players)
        nxt = (self._turn + 1) % n
        while nxt in self._left or nxt in self._skip:
            if nxt in self._left:
                nxt = (nxt + 1) % n
                continue
            self._skip.discard(nxt)
            events.append(TurnLost(nxt, self._scores[nxt], self._racks[nxt].tiles))
            self._scoreless += 1
            events += self._check_scoreless_end()
            if self._status is GameStatus.OVER:
                return events
            nxt = (nxt + 1) % n
        self._turn = nxt
        events.append(TurnPassedTo(nxt))
        return events

    def _finish(self, reason: EndReason, player: int | None) -> list[Event]:
        n = len(self.players)
        values = [r.value(self.variant.tile_set) for r in self._racks]
        adjustments = [0] * n
        if reason is EndReason.WENT_OUT:
            assert player is not None
            # Others' racks go to the player who went out; each other player loses their own.
            for i in range(n):
                adjustments[i] = sum(values) if i == player else -values[i]
        elif reason is EndReason.SCORELESS_TURNS:
            adjustments = [-v for v in values]
        for i, a in enumerate(adjustments):
            self._scores[i] += a
        winners = self._winners(reason, player)
        self._status = GameStatus.OVER
        self._pending = None
        self._result = GameResult(
            reason,
            player,
            tuple(self._scores),
            tuple(adjustments),
            self.racks,
            winners,
        )
        return [GameEnded(self._result)]


# What each action does, by its type: apply() has checked that it may be done now
# (_ALLOWED holds the same types, matched exactly).
_CARRY_OUT: Mapping[type, Callable[[Game, Any], list[Event]]] = MappingProxyType(
    {
        Play: Game._play,
        Exchange: Game._exchange,
        Pass: Game._pass,
        Challenge: Game._challenge,
        Accept: Game._accept,
        End: Game._end_externally,
        Leave: Game._leave,
        TimePenalty: Game._time_penalty,
    }
)


def variant_to_dict(v: Variant) -> dict[str, Any]:
    """A variant as JSON-safe data (checkpoints, game records); ``_variant_from_dict``
    reads it back."""
    return {
        "name": v.name,
        "tile_set": v.tile_set.name,
        "layout": {
            "rows": v.layout.rows(),
            "centre": list(v.layout.centre),
        },
        "rack_size": v.rack_size,
        "bingo_size": v.bingo_size,
        "bingo_bonus": v.bingo_bonus,
        "challenge": v.challenge.value,
        "exchange_minimum": v.exchange_minimum,
        "scoreless_turns": v.scoreless_turns,
        "passes_in_a_row": v.passes_in_a_row,
        "min_players": v.min_players,
        "max_players": v.max_players,
        "lexicon": v.lexicon,
    }


def _variant_from_dict(d: Mapping[str, Any]) -> Variant:
    fields = dict(d)
    fields["tile_set"] = TILE_SETS[d["tile_set"]]
    cx, cy = d["layout"]["centre"]
    fields["layout"] = Layout.from_rows(d["layout"]["rows"], (int(cx), int(cy)))
    fields["challenge"] = ChallengeRule(d["challenge"])
    return Variant(**fields)


def _action_to_dict(a: Action) -> dict[str, Any]:
    if isinstance(a, Play):
        return {"type": "play", "player": a.player, "tiles": [[t.x, t.y, t.tile] for t in a.tiles]}
    if isinstance(a, Exchange):
        return {"type": "exchange", "player": a.player, "tiles": a.tiles}
    if isinstance(a, End):
        return {"type": "end", "reason": a.reason.value, "player": a.player}
    if isinstance(a, TimePenalty):
        return {"type": "time-penalty", "player": a.player, "points": a.points}
    return {"type": _SIMPLE_NAMES[type(a)], "player": a.player}


_SIMPLE_ACTIONS: Mapping[str, type[Pass | Challenge | Accept | Leave]] = MappingProxyType(
    {"pass": Pass, "challenge": Challenge, "accept": Accept, "leave": Leave}
)
_SIMPLE_NAMES = {cls: name for name, cls in _SIMPLE_ACTIONS.items()}


def _action_from_dict(d: Mapping[str, Any]) -> Action:
    kind = d["type"]
    if kind == "play":
        return Play(int(d["player"]), tuple(Placement(int(y), int(x), t) for x, y, t in d["tiles"]))
    if kind == "exchange":
        return Exchange(int(d["player"]), str(d["tiles"]))
    if kind == "end":
        player = d.get("player")
        return End(EndReason(d["reason"]), None if player is None else int(player))
    if kind == "time-penalty":
        return TimePenalty(int(d["player"]), int(d["points"]))
    return _SIMPLE_ACTIONS[kind](int(d["player"]))


def replay(record: GameRecord, rng: Random, *, lexicon: Container[str] | None = None) -> Game:
    """Rebuild a game from its record; ``rng`` is reset to the recorded state first.

    The result equals the original (``game.state() == original.state()``) as long as
    the same lexicon is given.
    """
    rng.setstate(record.rng_state)
    game = Game(
        record.players,
        rng,
        variant=record.variant,
        lexicon=lexicon,
        bag=record.bag,
        first_player=record.first_player,
    )
    for action in record.actions:
        game.apply(action)
    return game

"""What a Spectrangle player knows at the table, kept up to date from connection events.

:class:`Table` is the app's view model, free of Textual: call :meth:`Table.apply` with
each :mod:`~meeple.tui.spectrangle.events` event. Scores are the sum of the points
each ``move`` line announced (what the server says, not recomputed) until the
leaderboard replaces them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meeple.clients.spectrangle import swap_tile
from meeple.games.spectrangle.board import Board
from meeple.games.spectrangle.tiles import Tile
from meeple.tui.spectrangle.events import (
    ChatReceived,
    ConnectionLost,
    Exchanged,
    GameEnded,
    HandsDealt,
    Placed,
    PlayerLeft,
    Queued,
    Refused,
    SkipAnnounced,
    Skipped,
    SpectrangleEvent,
    Started,
    Welcomed,
)
from meeple.tui.table import BaseTable, Phase, standings

__all__ = ["Phase", "Table"]


@dataclass
class Table(BaseTable[SpectrangleEvent]):
    """One player's view of one Spectrangle game (and of the lobby before it)."""

    queue: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    hands: dict[str, tuple[Tile, ...]] = field(default_factory=dict)
    must_skip: bool = False
    board: Board = field(default_factory=Board)
    scores: dict[str, int] = field(default_factory=dict)
    result: GameEnded | None = None

    @property
    def hand(self) -> tuple[Tile, ...]:
        """Our own tiles."""
        return self.hands.get(self.name, ())

    def apply(self, event: SpectrangleEvent) -> None:
        """Take one event into account."""
        if isinstance(event, Welcomed):
            self.apply_shared(event)
        elif isinstance(event, Queued):
            self.queue = event.names
            self.phase = Phase.QUEUED
        elif isinstance(event, Started):
            self.players, self.order = event.players, event.order
            self.scores = dict.fromkeys(event.order, 0)
            self.board = Board()
            self.hands, self.turn, self.my_turn = {}, None, False
            self.result, self.refusal = None, None
            self.phase = Phase.PLAYING
            self._log(f"Game on; order of play: {', '.join(event.order)}")
        elif isinstance(event, HandsDealt):
            self.hands = dict(event.hands)
            self.turn, self.must_skip, self.my_turn = event.player, event.must_skip, event.mine
            if event.must_skip:
                self._log(f"{event.player} cannot place a tile: skip or exchange")
        elif isinstance(event, Placed):
            self.board.put(event.tile, event.index)
            self.scores[event.player] = self.scores.get(event.player, 0) + event.points
            if event.player == self.name:
                self.refusal = None
            self._log(f"{event.player}: {event.tile} on {event.index}, {event.points} points")
        elif isinstance(event, SkipAnnounced):
            self.turn, self.must_skip, self.my_turn = event.player, True, event.mine
            self._log(f"{event.player} cannot place a tile: skip or exchange")
        elif isinstance(event, Skipped):
            self._pass_turn(event.player)
            self._log(f"{event.player} skips")
        elif isinstance(event, Exchanged):
            # Some servers send no tiles line after "replace": the line itself says
            # which tile the player gave back and which one came in.
            self.hands[event.player] = swap_tile(
                self.hands.get(event.player, ()), event.tile, event.new_tile
            )
            self._pass_turn(event.player)
            self._log(f"{event.player} exchanges {event.tile} for {event.new_tile}")
        elif isinstance(event, Refused | ChatReceived | ConnectionLost):
            self.apply_shared(event)
        elif isinstance(event, PlayerLeft):
            self._log(f"{event.player} left: the game is over, no scores (spec)")
            self.turn, self.my_turn = None, False
            self.phase = Phase.OVER
        elif isinstance(event, GameEnded):
            self.result = event
            self.scores = dict(event.leaderboard)
            self.turn, self.my_turn = None, False
            self.phase = Phase.OVER
            self._log(f"Game over: {self.result_line()}")

    def _pass_turn(self, player: str) -> None:
        """``player``'s turn is over: the next in order is on turn until a tiles line
        says otherwise (and may act only once the server's tiles line says so)."""
        if player in self.order:
            self.turn = self.order[(self.order.index(player) + 1) % len(self.order)]
        self.must_skip = self.my_turn = False

    def result_line(self) -> str:
        """``ann 40, bob 31: ann wins`` from the leaderboard (or "a tie")."""
        return "" if self.result is None else standings(self.result.leaderboard)

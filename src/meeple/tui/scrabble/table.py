"""What a Scrabble player knows at the table, kept up to date from connection events.

:class:`Table` is the app's view model, free of Textual so it can be tested alone:
call :meth:`Table.apply` with each :mod:`~meeple.tui.scrabble.events` event; read the
board, rack, scores, whose turn it is, the move log and the chat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meeple.games.scrabble.board import Board, format_gcg_position
from meeple.tui.scrabble.events import (
    BagCount,
    ChallengeClosed,
    ChallengeOffered,
    ChatReceived,
    Clocks,
    ConnectionLost,
    GameEnded,
    Noted,
    PlayerLeft,
    Queued,
    RackChanged,
    Refused,
    ScrabbleEvent,
    Started,
    Swapped,
    TurnChanged,
    Welcomed,
    WordPlayed,
)
from meeple.tui.table import BaseTable, Phase, standings

__all__ = ["Phase", "Table"]


@dataclass
class Table(BaseTable[ScrabbleEvent]):
    """One player's view of one Scrabble game (and of the lobby before it)."""

    scores: dict[str, int] = field(default_factory=dict)
    rack: str = ""
    board: Board = field(default_factory=Board)
    queue: tuple[int, int] = (0, 0)
    bag: int | None = None  # tiles left in the bag, when the protocol lets us know
    result: GameEnded | None = None
    left: set[str] = field(default_factory=set)
    clocks: Clocks | None = None  # when the protocol has clocks (CMPN402)
    challenge: ChallengeOffered | None = None  # a play awaiting our verdict

    def apply(self, event: ScrabbleEvent) -> None:
        """Take one event into account."""
        if isinstance(event, Welcomed):
            self.apply_shared(event)
        elif isinstance(event, Queued):
            self.queue = (event.waiting, event.required)
            self.phase = Phase.QUEUED
        elif isinstance(event, Started):
            self.players = event.players
            self.scores = dict.fromkeys(event.players, 0) | dict(event.scores)
            self.board = Board.from_rows(event.board) if event.board else Board()
            self.rack, self.turn, self.my_turn, self.bag = "", None, False, None
            self.result, self.refusal, self.challenge = None, None, None
            self.left = set()
            self.phase = Phase.PLAYING
            self._log(f"Game on: {', '.join(event.players)}")
        elif isinstance(event, RackChanged):
            self.rack = event.rack
        elif isinstance(event, BagCount):
            self.bag = event.count
        elif isinstance(event, TurnChanged):
            self.turn, self.my_turn = event.player, event.mine
        elif isinstance(event, WordPlayed):
            self._word(event)
        elif isinstance(event, Swapped):
            if event.player == self.name:
                self.refusal = None
            what = "passes" if event.count == 0 else f"swaps {event.count} tiles"
            self._log(f"{event.player} {what}")
        elif isinstance(event, Refused | ChatReceived):
            self.apply_shared(event)
        elif isinstance(event, PlayerLeft):
            self.left.add(event.player)
            self._log(f"{event.player} left the game")
        elif isinstance(event, GameEnded):
            self.result = event
            self.scores = dict(event.scores)
            self.turn, self.my_turn, self.challenge = None, False, None
            self.phase = Phase.OVER
            self._log(f"Game over: {self.result_line()}")
        elif isinstance(event, Clocks):
            self.clocks = event
        elif isinstance(event, ChallengeOffered):
            self.challenge = event
            where = format_gcg_position(event.x, event.y, event.direction)
            word = event.words[0] if event.words else "?"
            self._log(f"{event.player}: {where} {word} {event.score}? (challenge window)")
        elif isinstance(event, ChallengeClosed):
            self.challenge = None
        elif isinstance(event, Noted):
            self._log(event.text)
        elif isinstance(event, ConnectionLost):
            self.apply_shared(event)
            self.challenge = None

    def _word(self, event: WordPlayed) -> None:
        dx, dy = event.direction.step
        for i, c in enumerate(event.word):
            x, y = event.x + dx * i, event.y + dy * i
            if self.board.on_board(x, y) and self.board.is_empty_at(x, y):
                self.board.place(x, y, c)
        self.scores[event.player] = self.scores.get(event.player, 0) + event.score
        if event.player == self.name:
            self.refusal = None
        where = format_gcg_position(event.x, event.y, event.direction)
        self._log(f"{event.player}: {where} {event.word} {event.score}")

    def result_line(self) -> str:
        """``Alice 312, Bob 280: Alice wins`` (or a tie), from the final scores."""
        return "" if self.result is None else standings(self.result.scores)

"""Time controls for lobby tables: what a table's clock is, and the clocks of a game.

A table may be opened with a :class:`TimeControl` (issue 24): each player starts with
``base`` seconds; ``increment`` seconds are added when the turn passes from the player
to another (Fischer: Santorini, Spectrangle); a Scrabble clock has ``overtime`` instead
(WESPA/NASPA: past zero a player plays on, ``penalty`` points off their final score per
minute or part of one, and the game ends when the overtime reaches its limit).
How each game treats a flag is its room's (``Room.on_flag``); docs/web.md, "Clocks".

:class:`Clocks` keeps the players' remaining times on the server's injectable
:class:`~meeple.server.clock.Clock` and calls back when the running one falls. A room's
log holds the time control in its genesis and the remaining times in every entry, so a
restarted room takes its clocks up from its log (the gap is charged to nobody).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meeple.server.clock import Clock, Timer

__all__ = ["LOW_TIME", "Clocks", "TimeControl", "parse_time_control"]

# A clock at or below this many seconds shows the low-time state on the pages.
LOW_TIME = 30.0
# What a table's ``clock`` setting may say: minutes, "+", increment seconds ("25+0").
_SPEC = re.compile(r"([1-9][0-9]?)\+([0-9]{1,2})")
# Bounds a browser may choose (the form offers a few): 1 to 90 minutes, 0 to 60 s a move.
MAX_MINUTES = 90
MAX_INCREMENT = 60
# Scrabble's overtime (issue 24): 10 points per started minute, the game ends after 10.
SCRABBLE_OVERTIME = 600.0
SCRABBLE_PENALTY = 10


@dataclass(frozen=True, slots=True)
class TimeControl:
    """One table's clock; see the module docstring. Times in seconds."""

    base: float
    increment: float = 0.0
    overtime: float = 0.0
    penalty: int = 0

    @property
    def spec(self) -> str:
        """The table setting this comes from: ``"25+0"`` (minutes + increment seconds)."""
        return f"{round(self.base / 60)}+{round(self.increment)}"

    def penalty_for(self, remaining: float) -> int:
        """The points a player at ``remaining`` seconds (below zero: overtime) loses."""
        if remaining >= 0 or not self.penalty:
            return 0
        return self.penalty * math.ceil(round(-remaining, 3) / 60)

    def to_json(self) -> dict[str, Any]:
        """The genesis's ``clocks`` (docs/durability.md)."""
        return {
            "base": self.base,
            "increment": self.increment,
            "overtime": self.overtime,
            "penalty": self.penalty,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimeControl:
        return cls(
            float(data["base"]),
            float(data.get("increment", 0.0)),
            float(data.get("overtime", 0.0)),
            int(data.get("penalty", 0)),
        )


def parse_time_control(game: str, spec: str) -> TimeControl:
    """The time control a table of ``game`` gets for the setting ``spec`` (``"25+0"``);
    ValueError for one out of bounds. Scrabble clocks have overtime and no increment."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ValueError(f"a clock is minutes+seconds (25+0, 5+3), not {spec!r}")
    minutes, increment = int(match[1]), int(match[2])
    if minutes > MAX_MINUTES or increment > MAX_INCREMENT:
        raise ValueError(f"a clock is 1 to {MAX_MINUTES} minutes + 0 to {MAX_INCREMENT} s")
    if game == "scrabble":
        if increment:
            raise ValueError("a Scrabble clock has no increment (it has overtime)")
        return TimeControl(minutes * 60.0, 0.0, SCRABBLE_OVERTIME, SCRABBLE_PENALTY)
    return TimeControl(minutes * 60.0, float(increment))


class Clocks:
    """The players' clocks of one game: at most one runs, the one of the player to move.

    :meth:`run` says whose turn it is now (None: nobody's, the game is over); it charges
    the time since the last call to the player whose clock ran, adds the increment if
    the turn passed to another player, and starts the new player's. When the running
    clock reaches its end (zero, or the overtime's limit) ``on_flag(player)`` is called
    from the clock's timer; the room then takes it up in its own task with :meth:`fall`.
    """

    def __init__(
        self,
        control: TimeControl,
        players: int,
        clock: Clock,
        on_flag: Callable[[int], object],
        remaining: Sequence[float] | None = None,
    ) -> None:
        self.control = control
        self.clock = clock
        self.remaining = (
            [float(r) for r in remaining] if remaining is not None else [control.base] * players
        )
        self.running: int | None = None
        self.flagged: list[int] = []  # whose clocks ran out, in order
        self._since = 0.0
        self._timer: Timer | None = None
        self._on_flag = on_flag

    def run(self, player: int | None) -> None:
        """The player to move is ``player`` now (None: stop every clock)."""
        if player == self.running:
            return
        before = self.running
        self._charge()
        if before is not None and player is not None:
            self.remaining[before] += self.control.increment
        self.running = player
        if player is not None and player not in self.flagged:
            self._since = self.clock.now()
            self._schedule()
        else:
            self.running = None

    def stop(self) -> None:
        """Stop the clocks for good (the game is over): the running one is charged."""
        self._charge()
        self.running = None

    def left(self, player: int) -> float:
        """``player``'s remaining time as of now."""
        if player == self.running:
            return self.remaining[player] - (self.clock.now() - self._since)
        return self.remaining[player]

    def now(self) -> list[float]:
        """Every player's remaining time as of now, in seconds (3 decimals)."""
        return [round(self.left(p), 3) for p in range(len(self.remaining))]

    def view(self) -> dict[str, Any]:
        """What the pages show: remaining times as of now, whose clock runs, the
        control, the low-time mark, and who fell (docs/protocols/web.md)."""
        return {
            "remaining": self.now(),
            "running": self.running,
            "control": self.control.to_json() | {"spec": self.control.spec},
            "low": LOW_TIME,
            "flagged": list(self.flagged),
        }

    def _charge(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.running is not None:
            self.remaining[self.running] = self.left(self.running)
            self._since = self.clock.now()

    def _schedule(self) -> None:
        player = self.running
        assert player is not None
        due = self.remaining[player] + self.control.overtime
        self._timer = self.clock.call_later(max(0.0, due), lambda: self._fell(player))

    def _fell(self, player: int) -> None:
        self._timer = None
        if self.running == player:
            self._on_flag(player)

    def fall(self, player: int) -> bool:
        """The room takes up a flag (``on_flag``): True if ``player``'s clock still runs
        and is at its end; it stops there and ``player`` joins :attr:`flagged` (its clock
        never runs again)."""
        if self.running != player:
            return False
        if self.left(player) > -self.control.overtime + 1e-6:
            self._charge()  # a move came first and time was given back meanwhile
            self._since = self.clock.now()
            self._schedule()
            return False
        self._charge()
        # Exactly at the limit (a timer that fired late does not charge more than it).
        self.remaining[player] = -self.control.overtime
        self.flagged.append(player)
        self.running = None
        return True

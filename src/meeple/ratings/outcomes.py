"""Who beat whom in a finished game, read from its JSON record (:mod:`meeple.games.records`).

A game of n players counts as the n(n-1)/2 pairwise results between them, each
weighted 1/(n-1) — so every player's game weighs as much in total as one two-player
game, whatever the table size. For each pair:

1. a player who forfeited (left, disconnected or resigned: Scrabble ``leave`` actions
   and a ``disconnect`` or ``resigned`` end, a Spectrangle ``player-left`` or
   ``resigned`` end, a Santorini ``disconnect`` or ``resigned``) loses to one who did not;
2. otherwise a winner (``result.winners``) beats a non-winner;
3. otherwise the higher final score wins and equal scores draw; with no winners at
   all (an abandoned Spectrangle game) the remaining players draw.

An aborted game (``result.reason`` ``aborted``: a player called it off before their
first move, issue 34.4) is not rated at all.

Santorini's scores are 1 for the winner and 0 for the others, so in a three-player
game the two losers draw with each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Pairing", "forfeits", "pairings", "rated"]

_FORFEIT_ENDS = frozenset({"disconnect", "player-left", "resigned"})
# Ends that leave the game unrated (issue 34.4).
_UNRATED_ENDS = frozenset({"aborted"})


@dataclass(frozen=True, slots=True)
class Pairing:
    """Seat ``a`` against seat ``b``: ``score`` is a's (1, 0.5, 0), ``weight`` the pair's."""

    a: int
    b: int
    score: float
    weight: float


def rated(record: Mapping[str, Any]) -> bool:
    """Whether a record counts: finished (not aborted), two or more distinct non-empty
    names."""
    players = record.get("players")
    result = record.get("result")
    return (
        isinstance(players, list)
        and len(players) >= 2
        and all(isinstance(p, str) and p.strip() for p in players)
        and len(set(players)) == len(players)
        and isinstance(result, Mapping)
        and result.get("reason") not in _UNRATED_ENDS
        and isinstance(result.get("scores"), list)
        and len(result["scores"]) == len(players)
        and isinstance(result.get("winners"), list)
    )


def forfeits(record: Mapping[str, Any]) -> frozenset[int]:
    """The seats that left the game before its end."""
    seats: set[int] = set()
    for action in record.get("actions") or ():
        if isinstance(action, Mapping) and action.get("type") == "leave":
            seats.add(action.get("player", -1))
    result = record["result"]
    if result.get("reason") in _FORFEIT_ENDS and isinstance(result.get("player"), int):
        seats.add(result["player"])
    return frozenset(s for s in seats if isinstance(s, int))


def _score(
    a: int, b: int, scores: Sequence[Any], winners: frozenset[int], gone: frozenset[int]
) -> float:
    if (a in gone) != (b in gone):
        return 0.0 if a in gone else 1.0
    if (a in winners) != (b in winners):
        return 1.0 if a in winners else 0.0
    if not winners:
        return 0.5
    sa, sb = scores[a], scores[b]
    return 1.0 if sa > sb else 0.0 if sa < sb else 0.5


def pairings(record: Mapping[str, Any]) -> list[Pairing]:
    """The pairwise results of a rated record (:func:`rated`), each pair once."""
    if not rated(record):
        return []
    players = record["players"]
    result = record["result"]
    scores = [s if isinstance(s, int | float) else 0 for s in result["scores"]]
    winners = frozenset(w for w in result["winners"] if isinstance(w, int))
    gone = forfeits(record)
    n = len(players)
    weight = 1.0 / (n - 1)
    return [
        Pairing(a, b, _score(a, b, scores, winners, gone), weight)
        for a in range(n)
        for b in range(a + 1, n)
    ]

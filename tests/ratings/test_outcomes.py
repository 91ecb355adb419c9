"""Pairwise results from records: forfeits, winners, scores, and the 1/(n-1) weight."""

from __future__ import annotations

from typing import Any

from meeple.ratings import Pairing, Rating, pairings, rate_game, rated


def _record(
    players: list[str],
    scores: list[int],
    winners: list[int],
    reason: str = "went-out",
    player: int | None = None,
    actions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "players": players,
        "actions": actions or [],
        "result": {"reason": reason, "player": player, "scores": scores, "winners": winners},
    }


def test_a_four_player_game_is_six_pairs_weighted_a_third() -> None:
    """Higher score wins, equal scores draw among the non-winners."""
    got = pairings(_record(["a", "b", "c", "d"], [300, 250, 250, 100], [0]))
    assert got == [
        Pairing(0, 1, 1.0, 1 / 3),
        Pairing(0, 2, 1.0, 1 / 3),
        Pairing(0, 3, 1.0, 1 / 3),
        Pairing(1, 2, 0.5, 1 / 3),
        Pairing(1, 3, 1.0, 1 / 3),
        Pairing(2, 3, 1.0, 1 / 3),
    ]


def test_a_player_who_left_loses_to_everyone_who_stayed() -> None:
    """Scrabble (Clarkson) leave: the leaver loses even with the highest score."""
    record = _record(["a", "b", "c"], [400, 100, 90], [1], actions=[{"type": "leave", "player": 0}])
    assert [(p.a, p.b, p.score) for p in pairings(record)] == [
        (0, 1, 0.0),
        (0, 2, 0.0),
        (1, 2, 1.0),
    ]


def test_disconnect_and_abandon_ends_forfeit_the_player_named() -> None:
    """Santorini disconnect, Spectrangle player-left (no winners): the others draw."""
    santorini = _record(["a", "b"], [0, 1], [1], "disconnect", 0)
    assert pairings(santorini) == [Pairing(0, 1, 0.0, 1.0)]
    abandoned = _record(["a", "b", "c"], [10, 30, 20], [], "player-left", 2)
    assert [(p.a, p.b, p.score) for p in pairings(abandoned)] == [
        (0, 1, 0.5),
        (0, 2, 1.0),
        (1, 2, 1.0),
    ]


def test_unrated_games() -> None:
    """A lone player, a repeated or empty name, or no result: not rated, ratings unchanged."""
    assert not rated(_record(["a"], [10], [0]))
    assert not rated(_record(["a", "a"], [10, 5], [0]))
    assert not rated(_record(["a", " "], [10, 5], [0]))
    assert not rated({"players": ["a", "b"], "actions": [], "result": None})
    before = [Rating(1600, 90), Rating(1400, 120)]
    assert rate_game({"players": ["a", "b"], "result": None}, before) == before


def test_an_aborted_game_is_not_rated_and_a_resignation_is_a_loss() -> None:
    """Issue 34.4: an abort leaves ratings as they were; issue 34.9: the one who resigned
    loses to everyone else, even ahead on points (a Spectrangle resignation mid-game)."""
    aborted = _record(["a", "b"], [0, 0], [], "aborted", 1)
    assert not rated(aborted)
    assert pairings(aborted) == []
    before = [Rating(1600, 90), Rating(1400, 120)]
    assert rate_game(aborted, before) == before
    resigned = _record(["a", "b", "c"], [40, 30, 35], [2], "resigned", 0)
    assert [(p.a, p.b, p.score) for p in pairings(resigned)] == [
        (0, 1, 0.0),
        (0, 2, 0.0),
        (1, 2, 0.0),
    ]
    after = rate_game(_record(["a", "b"], [40, 30], [1], "resigned", 0), before)
    assert after[0].rating < 1600
    assert after[1].rating > 1400

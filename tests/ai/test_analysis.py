"""The replays' analysis (issues 24, 34) against the engines: Spectrangle's best
placement is the most a hand could score at that turn, over random games; Scrabble's
rack is the mover's and its alternatives are the engine's best, ranked by equity."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.analysis import ALTERNATIVES, analyse, analyse_game, analyse_spectrangle
from meeple.ai.spectrangle import greedy_action, random_action
from meeple.games import records
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.spectrangle import record as spectrangle_record
from meeple.games.spectrangle.game import Game as SpectrangleGame
from meeple.games.spectrangle.game import TilePlaced


def _spectrangle(seed: int, players: int, greedy: bool) -> dict[str, Any]:
    rng = random.Random(seed)
    game = SpectrangleGame([f"p{i}" for i in range(players)], random.Random(seed))
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        action = greedy_action(game, turn) if greedy else random_action(game, turn, rng)
        game.apply(action)
    return spectrangle_record.to_record(game, uid="a1b2c3d4e5f6")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 4))
def test_spectrangle_best_is_the_most_the_hand_could_score(seed: int, players: int) -> None:
    """Random play: at each placement the analysis' best is the highest-scoring legal
    placement of the mover's hand at that moment (checked by the engine itself), the
    loss is best minus what was scored, and the alternatives are in falling order."""
    record = _spectrangle(seed, players, greedy=False)
    found = analyse_spectrangle(record)
    steps = list(records.replay(record))
    assert len(found) == len(steps)
    # Replay again, asking the engine before each move what the hand could score.
    most: list[int | None] = []
    played: list[int | None] = []
    seen = 0
    possible: int | None = None
    for step in records.replay(record):
        game = step.game
        placed = [e for e in game.events[seen:] if isinstance(e, TilePlaced)]
        most.append(possible if step.index else None)
        played.append(placed[0].points if placed else None)
        seen = len(game.events)
        turn = game.turn
        options = [] if turn is None or game.is_over else game.legal_placements(turn)
        possible = max((p.points for p in options), default=0)
    checked = 0
    for entry, best, points in zip(found, most, played, strict=True):
        if entry is None or points is None:
            continue
        assert entry["best_score"] == best, entry
        assert entry["equity_lost"] == best - points, entry
        scores = [a["score"] for a in entry["alternatives"]]
        assert scores == sorted(scores, reverse=True)
        assert len(scores) <= ALTERNATIVES
        assert entry["rack"]
        checked += 1
    assert checked > 0


def test_a_greedy_spectrangle_player_never_loses_points() -> None:
    """The greedy bot places the best-scoring tile every turn: no placement loses."""
    found = analyse_game(_spectrangle(7, 3, greedy=True), None)
    assert found is not None
    placements = [e for e in found if e and " on " in e["played"]]
    assert placements
    assert all(e["equity_lost"] == 0 for e in placements), placements


def test_scrabble_rack_and_alternatives(gcide: Lexicon) -> None:
    """A played Scrabble game: every analysed move names the mover's rack (7 tiles or
    fewer), lists up to five alternatives, the best first by equity, and the loss is
    measured against the best of them."""
    from tests.games.scrabble.test_view import _play_out

    from meeple.games.scrabble import record as scrabble_record
    from meeple.games.scrabble.game import Game as ScrabbleGame

    game = ScrabbleGame(["ann", "bob"], random.Random(5), lexicon=gcide)
    _play_out(game, gcide, limit=12)
    record = scrabble_record.to_record(game, uid="b1b2c3d4e5f6")
    found = [e for e in analyse(record, gcide) if e]
    assert found
    for entry in found:
        assert 0 < len(entry["rack"]) <= 7
        alternatives = entry["alternatives"]
        assert 0 < len(alternatives) <= ALTERNATIVES
        top = max(a["equity"] for a in alternatives)
        assert alternatives[0]["equity"] == top
        best = next(a for a in alternatives if a["equity"] == top)
        assert (entry["best"], entry["best_score"]) == (best["play"], best["score"])

"""What crosses the bus between nodes (meeple.node.wire): a seat's events carry that
seat's view only, and the unpickler builds nothing but meeple's own values."""

from __future__ import annotations

import os
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games.scrabble import game as g
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node import wire
from meeple.server.scrabble import GameStarted, Update


def _play(seed: int, lexicon: Lexicon, turns: int) -> tuple[g.Game, list[object]]:
    """A game of ``turns`` AI moves; the events a room would deliver for it."""
    game = g.Game(["ann", "bob"], random.Random(seed), variant=g.VARIANTS["twente"])
    told: list[object] = [GameStarted(game.players, 0, game, tuple(game.opening_events()))]
    for _ in range(turns):
        if game.is_over:
            break
        seat = game.turn
        assert seat is not None
        choice = choose(game.board, game.rack(seat), lexicon, bag_count=len(game.bag))
        if isinstance(choice, PassChoice):
            action: g.Action = g.Pass(seat)
        elif isinstance(choice, ExchangeChoice):
            action = g.Exchange(seat, choice.tiles)
        else:
            action = g.Play(seat, choice.tiles)
        told.append(Update(seat, tuple(game.apply(action)), game))
    return game, told


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), turns=st.integers(0, 12), seat=st.sampled_from([0, 1]))
def test_a_seat_hears_its_own_rack_and_nothing_else_hidden(
    gcide: Lexicon, seed: int, turns: int, seat: int
) -> None:
    game, told = _play(seed, gcide, turns)
    other = 1 - seat
    for event in told:
        heard = wire.loads(wire.dumps(wire.for_seat("scrabble", event, seat)))
        view = heard.game
        assert view.rack(seat) == game.rack(seat)
        assert set(view.rack(other)) <= {"?"}
        assert len(view.rack(other)) == len(game.rack(other))
        assert set(view.bag.tiles) <= {"?"}
        assert len(view.bag) == len(game.bag)
        assert view.lexicon is None
        assert view.events == ()
        assert view.log == ()
        assert view.reshuffles == ()
        assert view.record().bag == ()
        assert view.scores == game.scores
        assert view.players == game.players
        events = heard.opening if isinstance(heard, GameStarted) else heard.events
        for e in events:
            if isinstance(e, g.TilesDrawn | g.Exchanged) and e.player == other:
                assert set(e.tiles) <= {"?"}


def test_the_unpickler_builds_only_meeple_values() -> None:
    assert wire.loads(wire.dumps(wire.Leave())) == wire.Leave()
    with pytest.raises(pickle.UnpicklingError, match="may not cross the bus"):
        wire.loads(pickle.dumps(os.getcwd))
    evil = b"cos\nsystem\n(S'true'\ntR."
    with pytest.raises(pickle.UnpicklingError, match="may not cross the bus"):
        wire.loads(evil)

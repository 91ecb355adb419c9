"""Set-up as AM27 runs it: pool, gods in turn (challenger last), starter, worker placement."""

from __future__ import annotations

import pytest

from meeple.games.santorini import (
    CellOccupied,
    ChooseGod,
    ChooseStarter,
    Game,
    GodUnavailable,
    NotYourTurn,
    OfferGod,
    Phase,
    PlaceWorker,
    Rules,
    Sex,
    TurnStarted,
    UnknownGod,
    WorkerAlreadyPlaced,
    WrongPhase,
    cell,
)


def test_game_without_gods_starts_with_the_challenger_naming_the_starter() -> None:
    """No gods: the challenger names the starter, who places both workers first."""
    game = Game(Rules(gods=False), challenger=1)
    assert game.phase is Phase.STARTER
    assert game.turn == 1
    with pytest.raises(NotYourTurn):
        game.apply(ChooseStarter(0, 0))
    game.apply(ChooseStarter(1, 1))
    assert game.phase is Phase.PLACE
    assert game.can_place_worker(1)
    assert not game.can_place_worker(0)
    game.apply(PlaceWorker(1, cell(2, 0), Sex.MALE))
    game.apply(PlaceWorker(1, cell(0, 0), Sex.FEMALE))
    assert game.turn == 0
    game.apply(PlaceWorker(0, cell(1, 2)))
    events = game.apply(PlaceWorker(0, cell(0, 4)))
    assert game.phase is Phase.PLAY
    assert events[-1] == TurnStarted(1)
    assert game.turn == 1


def test_challenger_offers_the_pool_and_takes_the_last_god() -> None:
    """Three players: the challenger offers three gods; the others choose; it takes the last."""
    game = Game(Rules(players=3), challenger=1)
    assert game.phase is Phase.POOL
    with pytest.raises(UnknownGod):
        game.apply(OfferGod(1, "Zorro"))
    game.apply(OfferGod(1, "Apollo"))
    with pytest.raises(GodUnavailable):
        game.apply(OfferGod(1, "Apollo"))
    game.apply(OfferGod(1, "Pan"))
    game.apply(OfferGod(1, "Atlas"))
    assert game.phase is Phase.GODS
    assert game.turn == 2
    assert game.available_gods() == ("Apollo", "Pan", "Atlas")
    with pytest.raises(GodUnavailable):
        game.apply(ChooseGod(2, "Athena"))
    game.apply(ChooseGod(2, "Pan"))
    assert game.turn == 0
    game.apply(ChooseGod(0, "Atlas"))
    assert game.turn == 1
    assert game.available_gods() == ("Apollo",)
    game.apply(ChooseGod(1, "Apollo"))
    assert game.state.gods == ("Atlas", "Apollo", "Pan")
    assert game.phase is Phase.STARTER
    assert game.turn == 1


def test_players_may_choose_from_the_whole_set_without_a_pool() -> None:
    """challenger_picks_pool=False: the choosers see every god not taken yet."""
    game = Game(Rules(challenger_picks_pool=False, god_set=("Pan", "Atlas", "Hera")), challenger=0)
    assert game.phase is Phase.GODS
    assert game.turn == 1
    game.apply(ChooseGod(1, "Hera"))
    assert game.available_gods() == ("Pan", "Atlas")


def test_placement_rejects_taken_cells_and_placed_workers() -> None:
    """A worker goes on a free cell, each sex once."""
    game = Game(Rules(gods=False))
    game.apply(ChooseStarter(0, 0))
    game.apply(PlaceWorker(0, cell(2, 2), Sex.FEMALE))
    with pytest.raises(WorkerAlreadyPlaced):
        game.apply(PlaceWorker(0, cell(2, 3), Sex.FEMALE))
    with pytest.raises(CellOccupied):
        game.apply(PlaceWorker(0, cell(2, 2)))
    with pytest.raises(WrongPhase):
        game.apply(ChooseStarter(0, 1))

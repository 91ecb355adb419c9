"""The basic rules: moves, builds, winning, losing when stuck, errors naming the rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from meeple.games.santorini import (
    DOME,
    Build,
    ChooseStarter,
    DeadEnd,
    Domed,
    Game,
    GameWon,
    Lose,
    Move,
    MustLose,
    NotNeighbour,
    NoWorkerThere,
    Occupied,
    OutOfOrder,
    Pass,
    Phase,
    PlaceWorker,
    PlayerLost,
    Rules,
    TooHigh,
    TurnStarted,
    WrongLevel,
    WrongWorker,
    advance,
    can_pass,
    diagram,
    from_diagram,
    legal_steps,
    reachable_cells,
)

from .positions import at, builds, play, reach

BOARD = """
0  0  0  0  0
0  1  2  0  0
0  0A 3  0X 0
0  0  0  0  0
0  a  0  0  B
"""


def test_moves_go_one_level_up_at_most_never_onto_domes_or_workers() -> None:
    """A worker reaches its free neighbours no more than one level higher."""
    s, _ = play(BOARD)
    assert reach(s, at(2, 1)) == {at(1, 0), at(1, 1), at(2, 0), at(3, 0), at(3, 1), at(3, 2)}
    assert reach(s, at(4, 1)) == {at(3, 0), at(3, 1), at(3, 2), at(4, 0), at(4, 2)}


def test_reachable_cells_list_every_worker_and_are_empty_off_turn() -> None:
    """The AM27 map has an entry per worker; other players get {}."""
    s, _ = play(BOARD)
    assert set(reachable_cells(s, 0)) == {at(2, 1), at(4, 1)}
    assert reachable_cells(s, 1) == {}


def test_after_the_move_the_same_worker_builds_then_the_turn_may_end() -> None:
    """Move, then build with that worker (a dome on level 3), then pass."""
    s, _ = play(BOARD, actions=[Move(0, at(2, 1), at(1, 1))])
    assert reach(s, at(1, 1)) == set()
    assert builds(s, at(4, 1)) == set()
    assert builds(s, at(1, 1)) == {
        (at(0, 0), 1),
        (at(0, 1), 1),
        (at(0, 2), 1),
        (at(1, 0), 1),
        (at(1, 2), 3),
        (at(2, 0), 1),
        (at(2, 1), 1),
        (at(2, 2), DOME),
    }
    assert not can_pass(s, 0)
    s, _ = advance(s, Build(0, at(1, 1), at(2, 2), DOME))
    assert s.domes[at(2, 2)]
    assert legal_steps(s) == [Pass(0)]
    s, events = advance(s, Pass(0))
    assert events[-1] == TurnStarted(1)
    assert s.turn == 1
    assert s.steps == ()


@pytest.mark.parametrize(
    ("actions", "error"),
    [
        ([Move(0, at(0, 0), at(0, 1))], NoWorkerThere),
        ([Move(0, at(4, 4), at(3, 4))], NoWorkerThere),
        ([Move(0, at(2, 1), at(2, 3))], NotNeighbour),
        ([Move(0, at(2, 1), at(2, 2))], TooHigh),
        ([Move(0, at(2, 1), at(1, 2))], TooHigh),
        ([Build(0, at(2, 1), at(2, 0), 1)], OutOfOrder),
        ([Pass(0)], OutOfOrder),
        ([Move(0, at(2, 1), at(1, 1)), Move(0, at(1, 1), at(1, 0))], OutOfOrder),
        ([Move(0, at(2, 1), at(1, 1)), Build(0, at(4, 1), at(4, 0), 1)], WrongWorker),
        ([Move(0, at(2, 1), at(1, 1)), Build(0, at(1, 1), at(1, 2), 2)], WrongLevel),
        ([Move(0, at(2, 1), at(1, 1)), Build(0, at(1, 1), at(1, 3), 1)], NotNeighbour),
        ([Move(0, at(2, 1), at(3, 2)), Build(0, at(3, 2), at(2, 3), 1)], Domed),
        ([Move(0, at(4, 1), at(3, 2)), Build(0, at(3, 2), at(2, 1), 1)], Occupied),
    ],
)
def test_illegal_steps_raise_the_rule_they_break(
    actions: list[Move | Build | Pass], error: type[Exception]
) -> None:
    """Each broken rule has its own error; the state before stays as it was."""
    s, _ = play(BOARD, actions=actions[:-1])
    before = s
    with pytest.raises(error):
        advance(s, actions[-1])
    assert s == before


def test_moving_up_onto_level_three_wins_at_once() -> None:
    """From level 2 onto level 3 wins; the game is over before any build."""
    s, events = play(
        """
        0  0  0  0  0
        0  2A 3  0  0
        0  0  0  0  0
        0  0  0  0  0
        0  0  0  0  B
        """,
        actions=[Move(0, at(1, 1), at(1, 2))],
    )
    assert events[-1] == GameWon(0, "level3")
    assert s.phase is Phase.OVER
    assert s.winner == 0


def test_moving_across_level_three_does_not_win() -> None:
    """Level 3 to level 3 is not moving up."""
    s, events = play(
        """
        0  0  0  0  0
        0  3A 3  0  0
        0  0  0  0  0
        0  0  0  0  0
        0  0  0  0  B
        """,
        actions=[Move(0, at(1, 1), at(1, 2))],
    )
    assert s.phase is Phase.PLAY
    assert not any(isinstance(e, GameWon) for e in events)


def test_a_move_that_leaves_no_build_is_not_offered() -> None:
    """Steps are offered only when the turn can still be completed after them."""
    board = """
        0X 0X 0X 0X 0
        0X 0A 0X 0X 0
        0X 0X 0  0X 0
        0X 0X 0X 0X 0
        0  0  0  0  B
    """
    s, _ = play(board)
    # Moving to (2,2) leaves (1,1) to build on; no other cell is open.
    assert reach(s, at(1, 1)) == {at(2, 2)}
    s2 = from_diagram(board.replace("0  0X 0\n", "0X 0X 0\n", 1))
    assert reach(s2, at(1, 1)) == set()


def test_dead_end_step_is_refused() -> None:
    """A step that makes completing the turn impossible raises DeadEnd."""
    s, _ = play(
        """
        0  0X 0  0  0
        0X 0A 0X 0  0
        2X 2  0X 0  0
        0X 3X 0X 0  0
        0  0  0  0  B
        """
    )
    # (2,1) is level 2: too high from level 0. Every move is blocked but (2,1).
    assert reach(s, at(1, 1)) == {at(0, 0), at(0, 2)}
    s2, _ = play(
        """
        0X 0X 0  0  0
        0X 0A 1X 0  0
        0X 1  0X 0  0
        0X 0X 0X 0  0
        0  0  0  0  B
        """
    )
    # Moving to (0,2) leaves (1,1); moving to (2,1) leaves (1,1) too: both are fine.
    assert reach(s2, at(1, 1)) == {at(0, 2), at(2, 1)}
    # Prometheus building first on the one open cell could not move afterwards
    # (a build before the move forbids moving up): not offered, and refused.
    prometheus = """
        0X 0X 0X 0  0
        0X 0A 0X 0  0
        0X 0  0X 0  0
        0X 0X 0X 0  0
        0  0  0  0  B
    """
    s3, _ = play(prometheus, ("Prometheus", None))
    assert builds(s3, at(1, 1)) == set()
    assert reach(s3, at(1, 1)) == {at(2, 1)}
    with pytest.raises(DeadEnd):
        advance(s3, Build(0, at(1, 1), at(2, 1), 1))


def test_a_player_who_cannot_complete_a_turn_loses() -> None:
    """Two players: the stuck player loses at the start of the turn; the other wins."""
    s, events = play(
        """
        0  0  0  0  0
        0  0A 0  0  0
        0  0  0  2X 2X
        0  0  0  2X 0B
        0  0  0  2X 3
        """,
        actions=[Move(0, at(1, 1), at(1, 2)), Build(0, at(1, 2), at(1, 3), 1), Pass(0)],
    )
    assert PlayerLost(1, "stuck") in events
    assert events[-1] == GameWon(0, "last")
    assert s.winner == 0


def test_with_three_players_the_game_goes_on_without_the_stuck_one() -> None:
    """The stuck player's workers leave the board; play passes to the next seat."""
    s, events = play(
        """
        0  0  0  0  C
        0  0A 0  0  0
        0  0  0  2X 2X
        0  0  0  2X 0B
        0  0  0  2X 3
        """,
        actions=[Move(0, at(1, 1), at(1, 2)), Build(0, at(1, 2), at(1, 3), 1), Pass(0)],
    )
    assert PlayerLost(1, "stuck") in events
    assert events[-1] == TurnStarted(2)
    assert s.phase is Phase.PLAY
    assert s.alive == (True, False, True)
    assert s.workers[2] is None
    assert "B" not in diagram(s)


def test_without_auto_elimination_the_stuck_player_must_lose() -> None:
    """auto_eliminate=False: a stuck player is offered nothing and may only Lose."""
    stuck = replace(
        from_diagram(
            """
            b  B  1X 0  0
            A  a  1X 0  0
            1X 1X 0  0  0
            0  0  0  0  0
            0  0  0  0  0
            """,
            turn=1,
        ),
        rules=Rules(gods=False, auto_eliminate=False),
    )
    assert legal_steps(stuck) == []
    assert not can_pass(stuck, 1)
    with pytest.raises(MustLose):
        advance(stuck, Move(1, at(0, 1), at(0, 2)))
    after, events = advance(stuck, Lose(1))
    assert events == [PlayerLost(1, "resigned"), GameWon(0, "last")]
    assert after.winner == 0


def test_game_must_lose_query_follows_the_state() -> None:
    """Game.must_lose is False while the player on turn can play."""
    game = Game(Rules(gods=False, auto_eliminate=False))
    game.apply(ChooseStarter(0, 1))
    for action in [
        PlaceWorker(1, at(0, 0)),
        PlaceWorker(1, at(0, 1)),
        PlaceWorker(0, at(1, 0)),
        PlaceWorker(0, at(1, 1)),
    ]:
        game.apply(action)
    assert game.turn == 1
    assert not game.must_lose(1)
    assert game.legal_actions()

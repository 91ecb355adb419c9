"""Every god's power and how it meets the basic rules, as table-driven cases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from meeple.games.santorini import (
    DOME,
    GODS,
    Build,
    GameWon,
    GodForbids,
    Move,
    Pass,
    Phase,
    WorkerForced,
    advance,
    can_pass,
    same_turn_end,
    turns,
)

from .positions import at, builds, play, reach

OPEN = """
0  0  0  0  0
0  A  B  0  0
0  0  0  0  0
0  0  0  0  0
0  0  0  0  0
"""


@pytest.mark.parametrize(
    ("case", "gods", "board", "actions", "worker", "expected"),
    [
        (
            "basic: no moving onto an opponent",
            (None, None),
            OPEN,
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Apollo: into the opponent's cell",
            ("Apollo", None),
            OPEN,
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(1, 2), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Minotaur: push to a free cell behind",
            ("Minotaur", None),
            OPEN,
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(1, 2), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Minotaur: not when a dome is behind",
            ("Minotaur", None),
            OPEN.replace("0  A  B  0", "0  A  B  0X"),
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Minotaur: not off the board",
            ("Minotaur", None),
            "0 0 0 0 0\n0 0 0 A B\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0",
            [],
            (1, 3),
            {at(0, 2), at(0, 3), at(0, 4), at(1, 2), at(2, 2), at(2, 3), at(2, 4)},
        ),
        (
            "Artemis: a second move, not back",
            ("Artemis", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {at(1, 0), at(2, 0), at(2, 2), at(3, 0), at(3, 1), at(3, 2)},
        ),
        (
            "Athena moved up: no moving up",
            ("Athena", None),
            OPEN.replace("0  0  0  0  0\n0  A", "1  1  1  0  0\n0  A"),
            [],
            (1, 2),
            {at(0, 3), at(1, 3), at(2, 1), at(2, 2), at(2, 3)},
        ),
        (
            "Hades: opponents do not move down",
            (None, "Hades"),
            "1 1 0 0 0\n1 1A 0 0 0\n0 1 2 0 0\n0 0 0 0 0\n0 0 0 0 B",
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(1, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Hypnus: the higher worker cannot move",
            (None, "Hypnus"),
            "0 0 0 0 0\n0 1A 0 0 0\n0 0 0 0 0\n0 0 0 0 0\na 0 0 0 B",
            [],
            (1, 1),
            set(),
        ),
        (
            "Hypnus: equal heights move freely",
            (None, "Hypnus"),
            "0 0 0 0 0\n0 1A 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n1a 0 0 0 B",
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(1, 2), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Prometheus: no moving up after building first",
            ("Prometheus", None),
            "0 0 0 0 0\n0 A 1 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 B",
            [Build(0, at(1, 1), at(0, 0), 1)],
            (1, 1),
            {at(0, 1), at(0, 2), at(1, 0), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Prometheus: moving up without building first",
            ("Prometheus", None),
            "0 0 0 0 0\n0 A 1 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 B",
            [],
            (1, 1),
            {at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(1, 2), at(2, 0), at(2, 1), at(2, 2)},
        ),
        (
            "Triton: on the perimeter, move again",
            ("Triton", None),
            OPEN,
            [Move(0, at(1, 1), at(0, 0))],
            (0, 0),
            {at(0, 1), at(1, 0), at(1, 1)},
        ),
        (
            "Triton: inside, no second move",
            ("Triton", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 2))],
            (2, 2),
            set(),
        ),
    ],
)
def test_moves(
    case: str,
    gods: tuple[str | None, ...],
    board: str,
    actions: list[Move | Build],
    worker: tuple[int, int],
    expected: set[int],
) -> None:
    """Where a worker may move under each god."""
    moved_up = (True, False) if case.startswith("Athena") else None
    turn = 1 if case.startswith("Athena") else 0
    s, _ = play(board, gods, actions, turn=turn, moved_up=moved_up)
    assert reach(s, at(*worker)) == expected, case


AROUND_21 = {at(1, 0), at(1, 1), at(2, 0), at(2, 2), at(3, 0), at(3, 1), at(3, 2)}


@pytest.mark.parametrize(
    ("case", "gods", "board", "actions", "worker", "expected"),
    [
        (
            "basic",
            (None, None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {(c, 1) for c in AROUND_21},
        ),
        (
            "Atlas: a dome at any level",
            ("Atlas", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {(c, 1) for c in AROUND_21} | {(c, DOME) for c in AROUND_21},
        ),
        (
            "Demeter: second build elsewhere",
            ("Demeter", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1)), Build(0, at(2, 1), at(3, 1), 1)],
            (2, 1),
            {(c, 1) for c in AROUND_21 - {at(3, 1)}},
        ),
        (
            "Hephaestus: second block on the first",
            ("Hephaestus", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1)), Build(0, at(2, 1), at(3, 1), 1)],
            (2, 1),
            {(at(3, 1), 2)},
        ),
        (
            "Hephaestus: no dome as the second",
            ("Hephaestus", None),
            "0 0 0 0 0\n0 A B 0 0\n0 0 0 0 0\n0 2 0 0 0\n0 0 0 0 0",
            [Move(0, at(1, 1), at(2, 1)), Build(0, at(2, 1), at(3, 1), 3)],
            (2, 1),
            set(),
        ),
        (
            "Hestia: second build not on the perimeter",
            ("Hestia", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1)), Build(0, at(2, 1), at(3, 1), 1)],
            (2, 1),
            {(at(1, 1), 1), (at(2, 2), 1), (at(3, 1), 2), (at(3, 2), 1)},
        ),
        (
            "Zeus: under itself",
            ("Zeus", None),
            OPEN,
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {(c, 1) for c in AROUND_21 | {at(2, 1)}},
        ),
        (
            "Limus: not next to Limus' workers",
            (None, "Limus"),
            OPEN,
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {(c, 1) for c in AROUND_21 - {at(1, 1), at(2, 2)}},
        ),
        (
            "Limus: a dome on level 3 next to them is allowed",
            (None, "Limus"),
            "0 0 0 0 0\n0 A B 0 0\n0 0 3 0 0\n0 0 0 0 0\n0 0 0 0 0",
            [Move(0, at(1, 1), at(2, 1))],
            (2, 1),
            {(c, 1) for c in AROUND_21 - {at(1, 1), at(2, 2)}} | {(at(2, 2), DOME)},
        ),
        (
            "Prometheus: may build before moving",
            ("Prometheus", None),
            OPEN,
            [],
            (1, 1),
            {
                (c, 1)
                for c in (at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(2, 0), at(2, 1), at(2, 2))
            },
        ),
    ],
)
def test_builds(
    case: str,
    gods: tuple[str | None, ...],
    board: str,
    actions: list[Move | Build],
    worker: tuple[int, int],
    expected: set[tuple[int, int]],
) -> None:
    """Where and what a worker may build under each god."""
    s, _ = play(board, gods, actions)
    assert builds(s, at(*worker)) == expected, case


def test_optional_steps_may_be_declined_by_passing() -> None:
    """Demeter, Hestia, Hephaestus, Artemis and Triton may end the turn without their extra."""
    for god in ("Demeter", "Hestia", "Hephaestus"):
        s, _ = play(
            OPEN, (god, None), [Move(0, at(1, 1), at(2, 1)), Build(0, at(2, 1), at(3, 1), 1)]
        )
        assert can_pass(s, 0), god
    s, _ = play(OPEN, ("Artemis", None), [Move(0, at(1, 1), at(2, 1))])
    assert not can_pass(s, 0)
    assert builds(s, at(2, 1))


def test_apollo_swaps_and_minotaur_pushes() -> None:
    """The forced worker goes to Apollo's old cell, or one cell straight back."""
    s, events = play(OPEN, ("Apollo", None), [Move(0, at(1, 1), at(1, 2))])
    assert s.workers[0] == at(1, 2)
    assert s.workers[2] == at(1, 1)
    assert WorkerForced(1, 2, at(1, 2), at(1, 1), "Apollo") in events
    s, events = play(OPEN, ("Minotaur", None), [Move(0, at(1, 1), at(1, 2))])
    assert s.workers[2] == at(1, 3)
    assert WorkerForced(1, 2, at(1, 2), at(1, 3), "Minotaur") in events


WIN_BOARD = """
0  0  0  0  0
0  2A 3  0  0
0  0  0  0  0
0  0  0  0  0
0  0  0  0  B
"""


@pytest.mark.parametrize(
    ("case", "gods", "board", "move", "wins"),
    [
        ("basic: up onto 3", (None, None), WIN_BOARD, Move(0, at(1, 1), at(1, 2)), True),
        (
            "Hera: not on the perimeter",
            (None, "Hera"),
            WIN_BOARD.replace("0  2A 3", "3  2A 0"),
            Move(0, at(1, 1), at(1, 0)),
            False,
        ),
        ("Hera: inside still wins", (None, "Hera"), WIN_BOARD, Move(0, at(1, 1), at(1, 2)), True),
        ("Pan: down two levels", ("Pan", None), WIN_BOARD, Move(0, at(1, 1), at(2, 1)), True),
        (
            "Pan: down one level is no win",
            ("Pan", None),
            WIN_BOARD.replace("0  2A", "1  2A"),
            Move(0, at(1, 1), at(1, 0)),
            False,
        ),
        (
            "basic: down two levels is no win",
            (None, None),
            WIN_BOARD,
            Move(0, at(1, 1), at(2, 1)),
            False,
        ),
    ],
)
def test_wins(case: str, gods: tuple[str | None, ...], board: str, move: Move, wins: bool) -> None:
    """Which moves win under which gods."""
    s, events = play(board, gods, [move])
    assert (s.phase is Phase.OVER and s.winner == 0) is wins, case
    assert any(isinstance(e, GameWon) for e in events) is wins


def test_chronus_wins_with_the_fifth_complete_tower() -> None:
    """Chronus wins as soon as five level-3 towers carry domes, whoever builds the fifth."""
    board = """
        3X 3X 3X 3X 0
        0  0  0  0  0
        0  A  3  0  0
        0  0  0  0  0
        0  0  0  0  B
    """
    s, events = play(board, (None, "Chronus"), [Move(0, at(2, 1), at(3, 1))])
    s, events = advance(s, Build(0, at(3, 1), at(2, 2), DOME))
    assert events[-1] == GameWon(1, "god", "Chronus")
    assert s.winner == 1


def test_zeus_rising_onto_level_three_does_not_win() -> None:
    """Building under oneself is not a move: no win, even onto level 3."""
    s, _ = play(
        "0 0 0 0 0\n0 2A 0 0 0\n0 0 2 0 0\n0 0 0 0 0\n0 0 0 0 B",
        ("Zeus", None),
        [Move(0, at(1, 1), at(2, 2)), Build(0, at(2, 2), at(2, 2), 3)],
    )
    assert s.levels[at(2, 2)] == 3
    assert s.workers[0] == at(2, 2)
    assert s.phase is Phase.PLAY
    s, _ = advance(s, Pass(0))
    assert s.turn == 1


def test_a_god_forbidding_a_step_is_named() -> None:
    """GodForbids carries the god and its owner."""
    s, _ = play(OPEN, (None, "Limus"), [Move(0, at(1, 1), at(2, 1))])
    with pytest.raises(GodForbids) as info:
        advance(s, Build(0, at(2, 1), at(2, 2), 1))
    assert (info.value.god, info.value.player) == ("Limus", 1)


def test_athena_only_restricts_after_moving_up() -> None:
    """Athena's flag is set by her own turn's moves and read on the opponent's."""
    s, _ = play(
        "0 0 0 0 0\n0 A 1 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 1 B",
        ("Athena", None),
        [Move(0, at(1, 1), at(1, 2)), Build(0, at(1, 2), at(1, 1), 1), Pass(0)],
    )
    assert s.moved_up == (True, False)
    assert reach(s, at(4, 4)) == {at(3, 3), at(3, 4)}
    with pytest.raises(GodForbids):
        advance(s, Move(1, at(4, 4), at(4, 3)))


def test_a_triton_walking_up_and_down_again_ends_where_the_shortest_route_does() -> None:
    """Triton on the perimeter steps up onto a block and down again: the game keeps
    the flag that it moved up, which only Athena reads, so the end is the same turn
    end as that of the route :func:`turns` gives (straight along the edge). Athena's
    own flag is never ignored."""
    board = "0 1 0 0 0\n0 0 0 0 0\nA 0 0 0 0\n0 0 0 0 0\n0 0 0 0 B"
    start, _ = play(board, ("Triton", None), [])
    s, _ = play(
        board,
        ("Triton", None),
        [
            Move(0, at(2, 0), at(1, 0)),
            Move(0, at(1, 0), at(0, 0)),
            Move(0, at(0, 0), at(0, 1)),
            Move(0, at(0, 1), at(0, 0)),
            Build(0, at(0, 0), at(1, 1), 1),
            Pass(0),
        ],
    )
    assert s.moved_up == (True, False)
    ends = [end for _route, end in turns(start)]
    assert s not in ends
    assert [end for end in ends if same_turn_end(end, s)] == [replace(s, moved_up=(False, False))]
    athena, _ = play(
        board,
        ("Athena", None),
        [Move(0, at(2, 0), at(1, 0)), Build(0, at(1, 0), at(2, 0), 1), Pass(0)],
    )
    assert not same_turn_end(athena, replace(athena, moved_up=(True, False)))


def test_every_god_has_a_description() -> None:
    """The AM27 god list sends name and description."""
    for name, power in GODS.items():
        assert power.name == name
        assert len(power.description) > 20

"""The reference game of spectrangle-3p-game.log, replayed through the engine.

The log's server has a bug: a tile placed in another rotation than the hand holds
stays in the hand (and nothing is drawn), so the same piece lands on the board up to
three times. The game as a whole is therefore not legal under the rules and cannot be
replayed through :class:`Game`; every placement is, however, legal on the board as it
stands, and its score is checked here move by move, as are the final leaderboard and
the opening turns (which stay within the rules).
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

import meeple.games.spectrangle.board as board_module
from meeple.games.spectrangle import (
    Board,
    ColourMismatch,
    Edge,
    Orientation,
    Tile,
    final_scores,
    starting_player,
)


def moves(lines: list[str]) -> list[tuple[str, Tile, int, int]]:
    """The ``move <name> <tile> <index> <points>`` announcements, in order."""
    found = []
    for line in lines:
        words = line.split()
        if words[0] == "move":
            found.append((words[1], Tile.parse(words[2]), int(words[3]), int(words[4])))
    return found


def test_the_transcript_has_a_whole_game(server_lines_to_p1: list[str]) -> None:
    """36 placements fill the board (a guard against a wrong parse)."""
    assert len(moves(server_lines_to_p1)) == 36
    assert sorted(index for _, _, index, _ in moves(server_lines_to_p1)) == list(range(36))


def test_every_announced_score_is_reproduced(server_lines_to_p1: list[str]) -> None:
    """Each placement is legal where it lies and scores what the server announced."""
    played = Board()
    for name, tile, index, points in moves(server_lines_to_p1):
        assert played.place(tile, index) == points, f"{name} {tile} on {index}"


def test_the_mirrored_side_mapping_contradicts_the_transcript(
    server_lines_to_p1: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Y and Z swapped on down fields the log's own moves would not match."""
    mirrored = {
        Orientation.UP: MappingProxyType({Edge.BASE: 0, Edge.LEFT: 1, Edge.RIGHT: 2}),
        Orientation.DOWN: MappingProxyType({Edge.BASE: 0, Edge.LEFT: 1, Edge.RIGHT: 2}),
    }
    monkeypatch.setattr(board_module, "SIDE_ON_EDGE", MappingProxyType(mirrored))
    played = Board()

    def replay_all() -> None:
        for _, tile, index, _ in moves(server_lines_to_p1):
            played.place(tile, index)

    with pytest.raises(ColourMismatch):
        replay_all()


def hands_of(line: str) -> dict[str, list[Tile]]:
    words = line.split()[1:-2]
    return {
        words[i]: [Tile.parse(w) for w in words[i + 1 : i + 5] if w != "null"]
        for i in range(0, len(words), 5)
    }


def test_leaderboard_is_scores_minus_tiles_in_hand(server_lines_to_p1: list[str]) -> None:
    """p3 97, p2 74, p1 55: placement points minus the values left in hand."""
    names = ("p1", "p2", "p3")
    scores = dict.fromkeys(names, 0)
    hands: dict[str, list[Tile]] = {}
    for line in server_lines_to_p1:
        words = line.split()
        if words[0] == "move":
            scores[words[1]] += int(words[4])
        elif words[0] == "tiles":
            hands = hands_of(line)
        elif words[0] == "replace":  # not always followed by a tiles line
            held = hands[words[1]]
            held.remove(Tile.parse(words[2]))
            held.append(Tile.parse(words[4]))
    result = final_scores([scores[n] for n in names], [hands[n] for n in names], order=(2, 0, 1))
    board_line = server_lines_to_p1[-1].split()[3:]
    announced = [(board_line[i], int(board_line[i + 1])) for i in range(0, len(board_line), 2)]
    assert [(names[p], result.scores[p]) for p in result.ranking] == announced
    assert announced == [("p3", 97), ("p2", 74), ("p1", 55)]


def test_the_starting_player_is_the_one_the_server_chose(server_lines_to_p1: list[str]) -> None:
    """The first tiles line gives the turn to p3, which starting_player agrees with."""
    first = next(line for line in server_lines_to_p1 if line.startswith("tiles"))
    hands = hands_of(first)
    assert first.split()[-2:] == ["turn", "p3"]
    assert starting_player([hands["p1"], hands["p2"], hands["p3"]]) == 2

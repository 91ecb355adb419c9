"""Exact replay: random games of all three games run in their real rooms (blanks,
exchanges, challenges at a double-challenge table, gods, undo, refused commands, a
player leaving), and the room's log replays to the very state the live room holds, and
holds exactly the game record's actions: no refused command. (Rooms restored from their
logs are tested end to end in test_recovery.py.)"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.ai import santorini as santorini_ai
from meeple.ai.scrabble import ranked_moves
from meeple.games import santorini as santorini_engine
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.server.rooms import santorini as santorini_room
from meeple.server.rooms import scrabble as scrabble_room
from meeple.server.rooms import spectrangle as spectrangle_room
from meeple.server.rooms.room import Room
from meeple.server.store.database import Store
from meeple.server.store.journal import Journal


class _Seat:
    def __init__(self, name: str) -> None:
        self.name = name
        self.protocol = "test"
        self.heard = 0

    def deliver(self, event: object) -> None:
        self.heard += 1


def _scrabble_command(room: Any, rng: random.Random, lexicon: Lexicon) -> tuple[int, object]:
    game = room.game
    turn = game.turn if game.turn is not None else 0
    if game.pending is not None:
        other = rng.choice([i for i in range(len(room.seats)) if i != game.pending.player])
        command = (
            scrabble_room.ChallengePlay() if rng.random() < 0.5 else scrabble_room.NoChallenge()
        )
        return other, command
    rack = game.racks[turn]
    roll = rng.random()
    if roll < 0.05:  # a stranger's move: refused, never logged
        return (turn + 1) % len(room.seats), scrabble_room.PassTurn()
    if roll < 0.15 and rack:
        return turn, scrabble_room.ExchangeTiles(
            "".join(rng.sample(rack, rng.randint(1, len(rack))))
        )
    if roll < 0.2:
        return turn, scrabble_room.PassTurn()
    moves = ranked_moves(game.board, rack, lexicon, ENGLISH)[:8]
    if not moves:
        return turn, scrabble_room.PassTurn()
    return turn, scrabble_room.PlaceTiles(tuple(rng.choice(moves).tiles))


def _santorini_command(room: Any, rng: random.Random) -> tuple[int, object]:
    game = room.game
    turn = game.turn if game.turn is not None else 0
    if not game.legal_actions():
        # Stuck: AM27's client says LOSE (§4.2.6); the server does not decide it.
        return turn, santorini_engine.Lose(turn)
    action = santorini_ai.random_action(game.state, rng)
    if rng.random() < 0.05:
        return (turn + 1) % len(room.seats), action
    return turn, replace(action, player=turn)  # type: ignore[type-var]


def _spectrangle_command(room: Any, rng: random.Random) -> tuple[int, object]:
    game = room.game
    turn = game.turn if game.turn is not None else 0
    actions = game.legal_actions(turn)
    if not actions or rng.random() < 0.05:
        return (turn + 1) % len(room.seats), actions[0] if actions else None
    return turn, rng.choice(actions)


def _room(kind: str, seats: list[_Seat], rng: random.Random, lexicon: Lexicon) -> Room:
    if kind == "scrabble":
        variant = scrabble_room.DOUBLE_VARIANT if rng.random() < 0.5 else None
        from meeple.games.scrabble.game import VARIANTS

        return scrabble_room.ScrabbleRoom(
            list(seats),
            variant=variant or VARIANTS["twente"],
            lexicon=lexicon,
            rng=random.Random(rng.getrandbits(32)),
        )
    if kind == "santorini":
        return santorini_room.SantoriniRoom(
            list(seats), gods=rng.random() < 0.7, rng=random.Random(rng.getrandbits(32))
        )
    return spectrangle_room.SpectrangleRoom(list(seats), rng=random.Random(rng.getrandbits(32)))


async def _play(kind: str, seed: int, steps: int, lexicon: Lexicon, path: Path) -> None:
    rng = random.Random(seed)
    store = Store(path)
    journal = Journal(store)
    try:
        players = (
            2 if kind == "scrabble" else rng.choice([2, 3] if kind == "santorini" else [2, 3, 4])
        )
        seats = [_Seat(f"p{i}") for i in range(players)]
        room = _room(kind, seats, rng, lexicon)
        room.journal = journal
        room.start()
        for _ in range(steps):
            await _idle(room)
            if room.finished or getattr(room.game, "is_over", False):
                break
            if kind == "scrabble":
                who, command = _scrabble_command(room, rng, lexicon)
            elif kind == "santorini":
                who, command = _santorini_command(room, rng)
            else:
                who, command = _spectrangle_command(room, rng)
            if command is not None:
                room.submit(seats[who], command)
        await _idle(room)  # the last command may end the game: a leave after it never runs
        if not room.finished and rng.random() < 0.3:
            room.leave(seats[rng.randrange(players)])
        await _idle(room)
        assert await journal.drain(10)
        log = store.action_log(room.uid)
        assert log is not None
        live = room.game
        replayed = log.replay(lexicon=lexicon) if kind == "scrabble" else log.replay()
        assert _state(kind, replayed) == _state(kind, live)
        assert [e.entry["action"] for e in log.entries] == list(room.log_actions())
    finally:
        journal.close()
        store.close()


def _state(kind: str, game: Any) -> Any:
    return game.state if kind == "santorini" else game.state()


async def _idle(room: Room) -> None:
    """Wait until the room has taken what it was sent and written its log."""
    for _ in range(5000):
        if room._task is not None and room._task.done():
            return  # the game ended: what is still queued is never taken
        if room._inbox.empty() and room._outbox is None:
            await asyncio.sleep(0)
            if room._inbox.empty() and room._outbox is None:
                return
        await asyncio.sleep(0.001)
    raise AssertionError("the room did not settle")


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(["scrabble", "santorini", "spectrangle"]),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 80),
)
def test_the_log_replays_to_the_live_rooms_state(
    kind: str, seed: int, steps: int, gcide: Lexicon, tmp_path: Path
) -> None:
    """Whatever the room was sent, replaying its log gives the live room's state."""
    path = tmp_path / f"{kind}-{seed}-{steps}.sqlite3"
    asyncio.run(_play(kind, seed, steps, gcide, path))

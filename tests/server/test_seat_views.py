"""One rule for hidden information on both transports (issue 32.3): whatever a Scrabble
room hands a seat, in ``meeple serve`` (the seat object itself) and on a cluster (a
:class:`~meeple.node.rooms.RemoteSeat`'s delivery, as the edge decodes it), carries no
other seat's rack, no tile another seat drew or put back, and no bag order."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.bus.base import Payload, as_bytes
from meeple.bus.subjects import Namespace
from meeple.games.scrabble import game as g
from meeple.games.scrabble.lexicon import Lexicon
from meeple.node import wire
from meeple.node.rooms import RemoteSeat
from meeple.server.rooms.scrabble import (
    ChallengePlay,
    ExchangeTiles,
    NoChallenge,
    PassTurn,
    PlaceTiles,
    ScrabbleRoom,
)

PLAYERS = ("ann", "bob", "cat")


class _Heard:
    """A seat of ``meeple serve``: what the room hands it, as it is handed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.heard: list[object] = []

    def deliver(self, event: object) -> None:
        self.heard.append(event)


class _Publisher:
    """What a rooms node's RemoteSeat publishes through (RoomsRole.ns and .send): the
    payloads, as an edge would receive them from the bus."""

    def __init__(self) -> None:
        self.ns = Namespace("t")
        self.sent: list[tuple[str, Payload]] = []

    def send(self, subject: str, payload: Payload) -> None:
        self.sent.append((subject, payload))


class _Owned:
    """The part of a rooms node's owned room a RemoteSeat reads."""

    def __init__(self) -> None:
        self.room: ScrabbleRoom | None = None
        self.fenced = False
        self.replaying = False


def _walk(value: object) -> Iterator[object]:
    """``value`` and every value inside it: fields, items, an engine game's parts."""
    yield value
    if isinstance(value, g.Game):
        yield from _walk(value.pending)
        yield from _walk(tuple(value.events))
        return
    if isinstance(value, tuple | list):
        for item in value:
            yield from _walk(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name))


def _hidden(text: str) -> bool:
    return set(text) <= {"?"}


def _assert_private(event: object, seat: int) -> None:
    """``event``, as seat ``seat`` has it, names no tile that seat may not know."""
    for value in _walk(event):
        if isinstance(value, g.Game):
            assert value.lexicon is None
            assert _hidden("".join(value.bag.tiles))
            for other, rack in enumerate(value.racks):
                if other != seat:
                    assert _hidden(rack), (seat, other, rack)
        elif isinstance(value, g.PendingPlay) and value.player != seat:
            assert _hidden(value.rack_before)
        elif isinstance(value, g.Event) and getattr(value, "player", seat) != seat:
            for name in ("tiles", "rack"):
                text = getattr(value, name, None)
                if isinstance(text, str):
                    assert _hidden(text), (seat, value)


def _command(room: ScrabbleRoom, lexicon: Lexicon, rng: random.Random) -> tuple[int, object]:
    """A command of the game's state: a challenge now and then, else the AI's move."""
    game = room.game
    pending = game.pending
    if pending is not None:
        other = next(i for i in range(len(PLAYERS)) if i != pending.player)
        return other, ChallengePlay() if rng.random() < 0.5 else NoChallenge()
    seat = game.turn
    assert seat is not None
    choice = choose(game.board, game.rack(seat), lexicon, bag_count=len(game.bag))
    if isinstance(choice, PassChoice):
        return seat, PassTurn()
    if isinstance(choice, ExchangeChoice):
        return seat, ExchangeTiles(choice.tiles)
    return seat, PlaceTiles(tuple(choice.tiles))


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    turns=st.integers(0, 14),
    variant=st.sampled_from(["twente", "clarkson", "double"]),
    leaves=st.booleans(),
)
def test_a_seat_is_handed_no_other_seat_s_tiles_in_serve_and_on_a_cluster(
    gcide: Lexicon, seed: int, turns: int, variant: str, leaves: bool
) -> None:
    rng = random.Random(seed)
    rules = g.VARIANTS.get(variant) or g.VARIANTS["twente"].but(
        name="double", challenge=g.ChallengeRule.DOUBLE
    )
    # Seats 0 and 1 as meeple serve holds them; seat 2 on another node (a cluster edge).
    served = [_Heard(PLAYERS[0]), _Heard(PLAYERS[1])]
    publisher, owned = _Publisher(), _Owned()
    remote = RemoteSeat(
        publisher,  # type: ignore[arg-type]  # what RemoteSeat reads of its role
        owned,  # type: ignore[arg-type]
        2,
        {"route": "e1-1", "name": PLAYERS[2], "protocol": "twente"},
    )
    room = ScrabbleRoom([*served, remote], variant=rules, lexicon=gcide, rng=rng)
    owned.room = room
    room.on_start()
    for _ in range(turns):
        if room.game.is_over:
            break
        seat, command = _command(room, gcide, rng)
        room.handle(room.seats[seat], command)
    if leaves and not room.game.is_over:
        room.on_seat_left(room.seats[0])
    for i, seat in enumerate(served):
        assert seat.heard
        for event in seat.heard:
            _assert_private(event, i)
    assert publisher.sent
    for _subject, payload in publisher.sent:
        # What crosses to another node: the bytes a sealed delivery is encoded as.
        delivery = wire.loads(as_bytes(payload), wire.Delivery)
        assert delivery.seat == 2
        _assert_private(delivery.event, 2)

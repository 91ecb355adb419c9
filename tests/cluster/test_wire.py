"""What crosses the bus between nodes (meeple.node.wire): a seat's events carry that
seat's view only, and a payload is decoded by the bus's schema, never unpickled."""

from __future__ import annotations

import dataclasses
import enum
import os
import pickle
import random
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.ai.scrabble import ExchangeChoice, PassChoice, choose
from meeple.games import santorini as sa
from meeple.games import spectrangle as st_
from meeple.games.santorini import view as santorini_view
from meeple.games.scrabble import game as g
from meeple.games.scrabble import view as scrabble_view
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.spectrangle import view as spectrangle_view
from meeple.node import wire
from meeple.server.rooms.santorini import Changed, SantoriniRoom
from meeple.server.rooms.santorini import Dropped as SantoriniDropped
from meeple.server.rooms.santorini import GameStarted as SantoriniStarted
from meeple.server.rooms.scrabble import GameStarted, Update
from meeple.server.rooms.spectrangle import GameStarted as SpectrangleStarted
from meeple.server.rooms.spectrangle import SpectrangleRoom
from meeple.server.rooms.spectrangle import Update as SpectrangleUpdate
from meeple.server.store.database import ActionLog, LogEntry


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
        heard = wire.loads(wire.dumps(scrabble_view.event_for_seat(event, seat)))
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


def test_the_bus_decodes_only_its_schema_and_never_a_pickle(tmp_path: Path) -> None:
    """A pickle (the 60-byte one that ran a shell command on the lobby, issue 30.1) is
    refused as any other bytes that are not the schema, and runs nothing."""
    assert wire.loads(wire.dumps(wire.Leave())) == wire.Leave()
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    for payload in (
        pickle.dumps(Evil()),
        pickle.dumps(os.getcwd),
        b"cos\nsystem\n(S'true'\ntR.",
        b"\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x12meeple.node.launch"
        b"\x8c\tos.system\x93\x8c\x04true\x85R.",
    ):
        with pytest.raises(wire.WireError):
            wire.loads(payload)
    assert not marker.exists()


def _types(value: object, seen: set[str] | None = None) -> set[str]:
    """The qualified names of every type in ``value`` (its fields and attributes too)."""
    seen = set() if seen is None else seen
    name = f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, str | bytes | int | float | type(None)):
        return seen
    seen.add(name)
    if isinstance(value, dict | types.MappingProxyType):
        for k, v in value.items():
            _types(k, seen)
            _types(v, seen)
    elif isinstance(value, tuple | list | set | frozenset):
        for v in value:
            _types(v, seen)
    elif not isinstance(value, enum.Enum):
        slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ())]
        for attr in [*getattr(value, "__dict__", {}), *slots]:
            if hasattr(value, attr):
                _types(getattr(value, attr), seen)
    return seen


def _named(payload: bytes) -> set[str]:
    return _types(wire.loads(payload))


def _spectrangle(game: st_.Game, actions: Iterable[st_.Action]) -> list[object]:
    """The events a room delivers for ``game`` as ``actions`` are applied: the start,
    then one Update per action, each while the game is at that point."""
    told: list[object] = [SpectrangleStarted(game)]
    for action in actions:
        told.append(SpectrangleUpdate(tuple(game.apply(action)), game))
    return told


def _random_actions(game: st_.Game, rng: random.Random, turns: int) -> Iterator[st_.Action]:
    for _ in range(turns):
        if game.is_over:
            return
        seat = game.turn
        assert seat is not None
        yield rng.choice(game.legal_actions(seat))


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    turns=st.integers(0, 40),
    seat=st.sampled_from([0, 1, 2]),
    shuffle=st.integers(0, 2**32),
)
def test_a_spectrangle_seat_hears_every_hand_and_not_the_bag(
    seed: int, turns: int, seat: int, shuffle: int
) -> None:
    """The bytes a seat gets are the same whatever order the undealt tiles are in: the
    bag's order never crosses (the hands, public in 1.4's ``tiles`` line, do)."""
    rng = random.Random(seed)
    game = st_.Game(["ann", "bob", "cy"], rng)
    heard: list[bytes] = []
    for event in _spectrangle(game, _random_actions(game, rng, turns)):
        heard.append(wire.dumps(spectrangle_view.event_for_seat(event, seat)))
        with pytest.raises(wire.EncodeError):  # the whole game, bag and all: never
            wire.dumps(event)
    # The same game with the tiles still in the bag shuffled: the same deal, the same
    # draws, the same public history (drawing takes from the bag's end).
    dealt = game.record().bag
    left = list(dealt[: game.bag_size])
    random.Random(shuffle).shuffle(left)
    twin = st_.Game(game.players, bag=(*left, *dealt[game.bag_size :]))
    twin_heard: list[bytes] = []
    for event in _spectrangle(twin, game.log):
        twin_heard.append(wire.dumps(spectrangle_view.event_for_seat(event, seat)))
    assert heard == twin_heard
    view = wire.loads(heard[-1]).game
    assert view.hands == game.hands
    assert view.board.state() == game.board.state()
    assert view.scores == game.scores
    assert view.bag_size == game.bag_size
    assert view.record().bag == ()
    assert view.turn == game.turn
    assert view.must_skip() == game.must_skip()
    assert not {n for n in _named(heard[-1]) if "andom" in n or "rng" in n}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60), gods=st.booleans())
def test_a_santorini_seat_hears_the_open_game_and_no_rng(seed: int, steps: int, gods: bool) -> None:
    """Santorini is open information: a seat's events carry the whole game as it is,
    and nothing random (the room's RNG drew the challenger; no RNG is in the game)."""
    rng = random.Random(seed)
    rules = sa.Rules(players=2, gods=gods, auto_eliminate=False)
    game = sa.Game(rules, rng.randrange(2))
    told: list[object] = [SantoriniStarted(("ann", "bob"), 0, game)]
    for _ in range(steps):
        if game.is_over:
            break
        before = game.state
        for action in rng.sample(game.legal_actions(), len(game.legal_actions())):
            try:
                events = game.apply(action)
                break
            except sa.RuleError:
                continue
        else:
            events = game.apply(sa.Lose(game.state.turn))
        told.append(Changed(game, before, tuple(events)))
        payload = wire.dumps(santorini_view.event_for_seat(told[-1], rng.randrange(2)))
        heard = wire.loads(payload)
        assert heard.game.state == game.state
        assert heard.game.log == game.log
        assert heard.before == before
        assert not {n for n in _named(payload) if "andom" in n or "rng" in n}


class _Heard:
    """A seat that keeps what its room tells it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.heard: list[object] = []

    def deliver(self, event: object) -> None:
        self.heard.append(event)


def _log_of(room: Any) -> ActionLog:
    """Room ``room``'s log as a rooms node reads it back: its header and its actions."""
    entries = tuple(
        LogEntry(i, 0.0, {"action": a}) for i, a in enumerate(room.log_actions(), start=1)
    )
    genesis = {"record": room.record_header()}
    return ActionLog(room.uid, room.game_name, genesis, 0.0, entries, None, None)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    steps=st.integers(1, 60),
    gods=st.booleans(),
    drop=st.booleans(),
)
def test_a_santorini_room_s_last_action_is_told_again_as_it_was(
    seed: int, steps: int, gods: bool, drop: bool
) -> None:
    """``Room.last_told`` rebuilds, from a Santorini room's log, what the room told its seats of
    the last action (a new owner tells it again after a takeover)."""
    rng = random.Random(seed)
    seats = [_Heard("ann"), _Heard("bob")]
    room = SantoriniRoom(list(seats), gods=gods, rng=rng)
    for _ in range(steps):
        game = room.game
        if game.is_over:
            break
        turn = game.state.turn
        logged = len(game.log)
        for action in rng.sample(game.legal_actions(), len(game.legal_actions())):
            room.handle(room.seats[turn], action)
            if len(game.log) > logged:
                break
        else:
            room.handle(room.seats[turn], sa.Lose(turn))
    if drop and not room.game.is_over:
        room.on_seat_left(room.seats[1])
    told = seats[0].heard[-1]
    log = _log_of(room)
    again = SantoriniRoom(
        list(seats), gods=gods, rng=random.Random(0), uid=room.uid, game=log.replay()
    ).last_told(log)
    if isinstance(told, SantoriniDropped):
        assert again == told
        return
    assert isinstance(told, Changed)
    assert isinstance(again, Changed)
    assert again.before == told.before
    assert again.events == told.events
    assert again.game.state == told.game.state


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(1, 60), leaves=st.booleans())
def test_a_spectrangle_room_s_last_action_is_told_again_as_it_was(
    seed: int, steps: int, leaves: bool
) -> None:
    """``Room.last_told`` rebuilds, from a Spectrangle room's log, the Update the room told its
    seats of the last action."""
    rng = random.Random(seed)
    seats = [_Heard("ann"), _Heard("bob"), _Heard("cy")]
    room = SpectrangleRoom(list(seats), rng=rng)
    for action in _random_actions(room.game, rng, steps):
        room.handle(room.seats[action.player], action)
    if leaves and not room.game.is_over:
        room.on_seat_left(room.seats[2])
    if not room.game.log:
        return
    told = seats[0].heard[-1]
    log = _log_of(room)
    restored = SpectrangleRoom(list(seats), rng=random.Random(0), game=log.replay())
    # What seat 0 heard is its view (Room.seat_event): the one told again goes the same way.
    again = restored.seat_event(restored.last_told(log), 0)
    assert isinstance(told, SpectrangleUpdate)
    assert isinstance(again, SpectrangleUpdate)
    assert again.events == told.events
    assert again.game.state() == told.game.state()


# --- every engine event through the seat filter (issue 30.4) ---------------------------

# A tile string no real event holds: what a seat must never hear of another's tiles.
_SECRET = "QZXJKV"
# Fields every seat may read whoever they belong to: the words a play formed, the
# tiles it put on the board (Placement.tile), and the racks left at the end (the end's
# scoring shows them: GameResult.racks). A new field holding text is private until
# named here.
_PUBLIC = {"words", "word", "tile", "racks", "name", "sender", "text"}


def _hints(cls: type) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def _make(hint: Any, name: str, other: int) -> Any:
    """A value of type ``hint`` for field ``name``, every text the secret, every seat
    ``other``."""
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _make(next(a for a in args if a is not type(None)), name, other)
    if origin is tuple and (not args or args[-1] is Ellipsis):
        item = args[0] if args else str
        return (_make(item, name, other), _make(item, name, other))
    if origin is tuple:
        return tuple(_make(a, name, other) for a in args)
    if hint is bool:
        return False
    if hint is int:
        return other if name in ("player", "challenger") else 3
    if hint is str:
        return _SECRET
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint(**{f: _make(h, f, other) for f, h in _hints(hint).items()})
    raise AssertionError(f"no value for {hint!r} ({name})")


def _private_texts(value: object, field: str = "") -> Iterator[str]:
    """Every text in ``value`` outside the public fields, with where it is."""
    if isinstance(value, str):
        if field not in _PUBLIC:
            yield f"{field}={value}"
    elif isinstance(value, tuple | list):
        for v in value:
            yield from _private_texts(v, field)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _private_texts(getattr(value, f.name), f.name)


def _events(module: Any) -> list[type]:
    """The engine's event types, from its ``Event`` union: a new one is walked too."""
    import typing

    return list(typing.get_args(module.Event))


@pytest.mark.parametrize("event_type", _events(g), ids=lambda t: t.__name__)
def test_a_scrabble_seat_hears_no_other_seat_s_tiles_in_any_event(event_type: type) -> None:
    """Each Scrabble engine event, made with another seat's tiles in every text field,
    reaches seat 0 without them (PlayMade, Passed, PlayWithdrawn, ChallengeFailed and
    TurnLost carried the rack: issue 30.4), in an Update and in a GameStarted, and the
    seat's game view holds no other rack or bag."""
    game = g.Game(["ann", "bob"], random.Random(3), variant=g.VARIANTS["twente"])
    event = _make(event_type, "", 1)
    for told in (
        Update(1, (event,), game),
        GameStarted(game.players, 0, game, (event,)),
    ):
        heard = wire.loads(wire.dumps(scrabble_view.event_for_seat(told, 0)))
        events = heard.events if isinstance(heard, Update) else heard.opening
        leaked = [t for t in _private_texts(events) if _SECRET in t]
        assert not leaked, leaked
        assert set(heard.game.rack(1)) <= {"?"}
        assert set(heard.game.bag.tiles) <= {"?"}
    # Its own tiles, the seat hears.
    own = scrabble_view.event_for_seat(Update(0, (_make(event_type, "", 0),), game), 0)
    assert own.events == (_make(event_type, "", 0),)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("view", "module"),
    [(santorini_view, sa.game), (spectrangle_view, st_.game)],
    ids=["santorini", "spectrangle"],
)
def test_every_santorini_and_spectrangle_event_type_crosses_as_it_is(
    view: Any, module: Any
) -> None:
    """Santorini (open information) and Spectrangle (every hand public in 1.4) events
    cross whole, each type of the engine's: the seat filter keeps what the spec shows,
    and the schema carries every one."""
    for event_type in _events(module):
        event = _make(event_type, "", 1)
        assert wire.loads(wire.dumps(view.event_for_seat(event, 0))) == event


def test_a_pending_play_s_rack_is_blanked_in_the_other_seat_s_view(gcide: Lexicon) -> None:
    """A play awaiting a challenge keeps the rack it was made from (to put the tiles
    back): the other seat's game view has as many ``?`` instead (issue 30.4)."""
    game = g.Game(["ann", "bob"], random.Random(5), variant=g.VARIANTS["cmpn402"])
    mover = game.turn
    assert mover is not None
    choice = choose(game.board, game.rack(mover), gcide, bag_count=len(game.bag))
    assert not isinstance(choice, PassChoice | ExchangeChoice)
    rack = game.rack(mover)
    game.apply(g.Play(mover, choice.tiles))
    assert game.pending is not None
    other = wire.loads(wire.dumps(Update(mover, (), game.seat_view(1 - mover)))).game
    assert other.pending.rack_before == "?" * len(rack)
    own = wire.loads(wire.dumps(Update(mover, (), game.seat_view(mover)))).game
    assert own.pending.rack_before == rack


def test_wire_knows_no_game_s_insides() -> None:
    """What a seat's copy of a game holds is declared by each game's view
    (games/<game>/view.py, issue 32.3): wire.py names no engine attribute."""
    source = Path(wire.__file__).read_text()
    for attribute in ("_rng", "_racks", "_bag", "_hands", "lexicon", "_initial_bag"):
        assert f'"{attribute}"' not in source, attribute


def test_each_game_s_seat_copy_is_what_its_view_declares() -> None:
    """A seat's copy of each engine game has exactly the attributes its view declares,
    each of the declared type, so it crosses; the whole game does not (its RNG)."""
    from meeple.bus.codec import _attributes, fits

    scrabble = g.Game(["ann", "bob"], random.Random(3), variant=g.VARIANTS["twente"])
    spectrangle = st_.Game(["ann", "bob"], random.Random(4))
    santorini = sa.Game(sa.Rules(players=2, gods=True, auto_eliminate=False), 0)
    for view, game, copy in (
        (scrabble_view, scrabble, scrabble.seat_view(0)),
        (spectrangle_view, spectrangle, spectrangle.seat_view(1)),
        (santorini_view, santorini, santorini),
    ):
        declared = view.seat_copy_fields()
        assert _attributes(copy) == set(declared[type(copy)])
        for name, hint in declared[type(copy)].items():
            assert fits(getattr(copy, name), hint), (type(copy).__name__, name)
        assert wire.loads(wire.dumps(copy)) is not None
        if game is not copy:
            with pytest.raises(wire.EncodeError):
                wire.dumps(game)

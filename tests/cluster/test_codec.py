"""The bus's schema codec (meeple.bus.codec) and its registry (meeple.node.wire): values
round-trip, anything else is a WireError, never an exception of another kind and never
an object the payload chose; the limits hold; refusals are logged once."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import random
import types
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meeple.bus.codec import Limits, Registry, WireError, decode_json, fits, refused
from meeple.games.scrabble import errors as sc_errors
from meeple.games.scrabble import game as g
from meeple.games.scrabble.board import Direction
from meeple.node import wire
from meeple.node.edge import LobbyCall
from meeple.server.lobby.tables import (
    BadTable,
    QueueKey,
    SeatInfo,
    StartRule,
    TableEvent,
    TableInfo,
)
from meeple.server.rooms.scrabble import GameStarted, PlaceWord

_TAGS = list(wire.registry().tags)


def _enc(tree: object) -> bytes:
    """``tree`` as a message of this schema (its version first)."""
    return msgspec.msgpack.encode(["V", wire.SCHEMA, tree])


def test_every_registered_type_has_its_field_types_resolved() -> None:
    """No field of a type that may cross is checked as ``object`` for want of its
    declared type (a name imported only for type checking, say)."""
    assert wire.registry().unchecked == []


@pytest.mark.parametrize(
    "value",
    [
        wire.Command(1, 3, PlaceWord(7, 7, Direction.ACROSS, "QUIZ")),
        wire.Leave(),
        wire.Rebind(0, "tok", {"route": "e-1", "name": "ann", "variants": None, "bot": False}),
        LobbyCall(
            "join", {"route": "e-1", "name": "ann"}, (QueueKey("scrabble", 2), StartRule.FULL)
        ),
        wire.TableNews(
            3,
            9,
            TableEvent(
                "opened",
                TableInfo(
                    "t", "scrabble", "twente", 2, StartRule.FULL, (SeatInfo("ann", "twente", True),)
                ),
            ),
        ),
        wire.RecordGame(
            "scrabble", "twente", ("twente",), ("ann", "bob"), 1.5, "done", {"a": [1, 2]}, "GCG"
        ),
        BadTable("no such variant"),
        sc_errors.TilesNotOnRack("QZ"),
        (frozenset({1, 2}), {3, 4}, {(1, 2): "x"}, types.MappingProxyType({"A": 9}), b"\x00", None),
        [1.5, True, -(2**63), 2**64 - 1, "é"],
    ],
    ids=lambda v: type(v).__name__,
)
def test_a_registered_value_round_trips(value: object) -> None:
    back = wire.loads(wire.dumps(value))
    if isinstance(value, Exception):
        assert type(back) is type(value)
        assert back.args == value.args
        assert vars(back) == vars(value)
    else:
        assert back == value
        assert type(back) is type(value)


def test_a_seat_s_game_view_round_trips_and_a_whole_game_does_not_encode() -> None:
    game = g.Game(["ann", "bob"], random.Random(2), variant=g.VARIANTS["twente"])
    started = GameStarted(game.players, 0, game.seat_view(1), tuple(game.opening_events()))
    back = wire.loads(wire.dumps(started))
    assert back.game.rack(1) == game.rack(1)
    assert back.game.board.rows() == game.board.rows()
    assert back.game.variant == game.variant
    with pytest.raises(wire.EncodeError, match="may not cross"):
        wire.dumps(GameStarted(game.players, 0, game, ()))  # its RNG, its bag
    with pytest.raises(wire.EncodeError, match="may not cross"):
        wire.dumps(os.system)
    with pytest.raises(wire.EncodeError, match="may not cross"):
        wire.dumps(object())


@pytest.mark.parametrize(
    ("tree", "kind"),
    [
        (["o", "node.wire.Command", {"seat": "0", "n": 1, "command": None}], "type"),
        (["o", "node.wire.Command", {"seat": 0, "n": 1, "command": None, "x": 1}], "shape"),
        (["o", "node.wire.Command", {"seat": 0}], "type"),  # n and command missing
        (["o", "node.launch.os.system", {}], "tag"),
        (["o", "builtins.eval", {}], "tag"),
        (["e", "server.lobby.tables.StartRule", "no such rule"], "type"),
        (["o", "server.lobby.tables.StartRule", {}], "shape"),
        (
            ["x", "server.lobby.tables.BadTable", {"args": ["t"], "attrs": {"__class__": 1}}],
            "shape",
        ),
        (["a", "games.scrabble.game.Game", {"players": ["a"]}], "shape"),
        (["d", 1], "shape"),
        (["f", ["l"]], "shape"),  # a list in a frozenset: unhashable
        (["z"], "format"),
        ([], "format"),
        ({"seat": 0}, "format"),
    ],
)
def test_a_payload_of_another_shape_is_refused_by_kind(tree: object, kind: str) -> None:
    with pytest.raises(WireError) as refused_:
        wire.loads(_enc(tree))
    assert refused_.value.kind == kind


def test_a_handler_s_type_is_checked() -> None:
    """``loads(payload, expect)``: a registered value of another type is refused."""
    with pytest.raises(WireError, match="where LobbyCall belongs"):
        wire.loads(wire.dumps(wire.Leave()), LobbyCall)
    with pytest.raises(WireError):
        wire.loads(wire.dumps("uid"), int)
    assert wire.loads(wire.dumps("uid"), str) == "uid"


def test_pickles_are_refused() -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(WireError, match="format"):
            wire.loads(pickle.dumps(wire.Leave(), protocol=protocol))


def test_the_limits_hold() -> None:
    registry = Registry([], limits=Limits(max_bytes=1000, max_depth=5, max_items=50))
    assert registry.decode(registry.encode(((((1,),),),))) == ((((1,),),),)
    with pytest.raises(WireError, match="depth"):
        registry.decode(registry.encode(((((((1,),),),),),)))
    with pytest.raises(WireError, match="items"):
        registry.decode(registry.encode(tuple(range(60))))
    with pytest.raises(WireError, match="size"):
        registry.decode(b"\xc0" * 1001)
    # The default: MessagePack nested far deeper than the stack is refused, not a crash.
    with pytest.raises(WireError):
        wire.loads(b"\x91" * 200_000 + b"\xc0")
    with pytest.raises(WireError, match="size"):
        wire.loads(_enc(["l", *range(wire.LIMITS.max_bytes)]))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_are_refused_or_a_registered_value(data: bytes) -> None:
    with contextlib.suppress(WireError):  # anything else fails the test
        wire.loads(data)


_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8)


def _grow(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    bodies = st.dictionaries(st.text(max_size=8), inner, max_size=4) | inner
    return (
        st.builds(lambda k, xs: [k, *xs], st.sampled_from("tlfsdm"), st.lists(inner, max_size=4))
        | st.builds(
            lambda k, t, b: [k, t, b], st.sampled_from("oeax"), st.sampled_from(_TAGS), bodies
        )
        | st.lists(inner, max_size=3)
    )


@settings(max_examples=300, deadline=None)
@given(st.recursive(_scalars, _grow, max_leaves=25))
def test_junk_in_the_schema_s_shape_is_refused_or_well_typed(tree: Any) -> None:
    """Trees in the codec's own shape, with real tags and bodies of any kind: each is a
    WireError or a value whose every field has its declared type."""
    try:
        value = wire.loads(_enc(tree))
    except WireError:
        return
    back = wire.loads(wire.dumps(value))  # what decodes also encodes, the same
    assert type(back) is type(value)


def test_fits_checks_the_declared_types() -> None:
    assert fits((1, 2), tuple[int, ...])
    assert not fits((1, "2"), tuple[int, ...])
    assert fits((), tuple[()])
    assert not fits((1,), tuple[()])
    assert fits(3, float)
    assert fits({"a": 1}, dict[str, int])
    assert not fits({"a": "1"}, dict[str, int])
    assert fits(None, int | None)
    assert not fits(print, object.__class__)
    assert not fits(len, type(len))  # a callable's type: nothing callable crosses


def test_json_between_nodes_is_decoded_by_its_struct() -> None:
    beat = decode_json(b'{"name": "n1", "rooms": [{"uid": "r", "game": "scrabble"}]}', wire.Beat)
    assert beat.rooms[0].uid == "r"
    for junk in (b"[]", b'{"name": 3}', b"\x80", b'{"rooms": []}', b"[" * 100_000):
        with pytest.raises(WireError):
            decode_json(junk, wire.Beat)


def test_a_refused_message_is_logged_once_per_subject_and_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="meeple.bus.codec"):
        for uid in ("r0a1", "r0b2", "r0c3"):  # every room's command subject counts as one
            for _ in range(50):
                refused(f"ns.room.{uid}.cmd", WireError("format", "junk"))
        refused("ns.room.r0a1.cmd", WireError("tag", "junk"))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "ns.room.*.cmd" in lines[0]

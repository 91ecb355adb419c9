"""Which referee game an organiser's ``/admin/<action>`` without ``?game=`` means, as the
edge's heartbeats show it (issue 21): the one running, and also the one whose owner's
beats stopped (a takeover under way, or an owner only late) rather than "no game runs"."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from meeple.bus.subjects import Namespace
from meeple.node import cmpn402_admin, wire
from meeple.node.cmpn402_admin import AdminError, ClusterAdmin
from meeple.server.config import ClusterConfig

SILENCE = ClusterConfig().node_silence


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(cmpn402_admin, "time", fake)
    return fake


def _beat(admin: ClusterAdmin, node: str, *uids: str) -> None:
    beat = wire.Beat(name=node, rooms=[wire.BeatRoom(uid=u, game="cmpn402") for u in uids])
    asyncio.run(admin._heard("meeple.node." + node, msgspec.json.encode(beat)))


def _admin() -> ClusterAdmin:
    bus: Any = None  # only the beats are read here; nothing is asked
    return ClusterAdmin(bus, Namespace(), "token")


def test_the_one_running_game(clock: _Clock) -> None:
    admin = _admin()
    _beat(admin, "rooms1", "a1b2c3d4e5f6")
    assert admin.only_game() == "a1b2c3d4e5f6"


def test_a_game_whose_owner_fell_silent_is_still_the_one(clock: _Clock) -> None:
    admin = _admin()
    _beat(admin, "rooms1", "a1b2c3d4e5f6")
    _beat(admin, "rooms2")
    clock.now += SILENCE + 0.5  # rooms1 was killed; rooms2 has not said it took the game
    assert admin.running() == {}
    assert admin.only_game() == "a1b2c3d4e5f6"


def test_none_or_two_need_the_game_named(clock: _Clock) -> None:
    admin = _admin()
    with pytest.raises(AdminError, match="no game runs: say which"):
        admin.only_game()
    _beat(admin, "rooms1", "a1b2c3d4e5f6")
    _beat(admin, "rooms2", "0a0b0c0d0e0f")
    clock.now += SILENCE + 0.5
    _beat(admin, "rooms2", "0a0b0c0d0e0f")
    with pytest.raises(AdminError, match="2 games run: say which"):
        admin.only_game()

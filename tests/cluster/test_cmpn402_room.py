"""The CMPN402 referee's room on a rooms node, without the bus: what a node that finishes
a room whose owner died after logging its end tells the agents again (``LAST_TOLD``):
each agent's END, byte for byte what the referee sent it; and nothing for a game still
open (a takeover resumes it with END 2 and START instead)."""

from __future__ import annotations

import random
from typing import Any

from tests.server.conftest import InlineJournal
from tests.server.test_cmpn402_referee import FakeLink, StepClock

from meeple.games.scrabble.lexicon import Lexicon
from meeple.node import wire
from meeple.node.cmpn402 import RefereeRoom, ToAgent
from meeple.protocols.cmpn402.messages import EndMessage, EndReason, PassMove, decode_server
from meeple.server.cmpn402_referee import Referee, RefereeSettings


class Agent:
    """A seat as a rooms node has it: a name (the room's deliveries are not used here)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def deliver(self, event: object) -> None:
        pass


def _make(lexicon: Lexicon, clock: StepClock) -> Any:
    def make_referee(**kwargs: Any) -> Referee:
        settings = RefereeSettings(player_time=20_000, total_time=30_000, challenge_time=2_000)
        return Referee(
            clock=clock, lexicon=lexicon, rng=random.Random(5), settings=settings, **kwargs
        )

    return make_referee


def test_a_finished_game_s_end_is_told_again_as_each_agent_heard_it(gcide: Lexicon) -> None:
    clock = StepClock()
    journal = InlineJournal()
    make = _make(gcide, clock)
    referee = make(journal=journal)
    links = [FakeLink(0), FakeLink(1)]
    referee.seat(links[0], "ann")
    referee.seat(links[1], "ben")
    first = referee.seat_of[referee.game.turn]
    referee.receive(first, PassMove().encode())
    uid = referee.game_id
    open_log = journal.store.action_log(uid)
    assert open_log is not None
    room = RefereeRoom([Agent("ann"), Agent("ben")], make, recovered=open_log)
    assert wire.LAST_TOLD["cmpn402"](room, open_log) is None  # resumed by END 2 + START
    clock.step(20)  # the player on turn runs out of time: END reason 1, the game stored
    log = journal.store.action_log(uid)
    assert log is not None
    assert log.end_reason is not None
    room = RefereeRoom([Agent("ann"), Agent("ben")], make, recovered=log)
    told = wire.LAST_TOLD["cmpn402"](room, log)
    for i, link in enumerate(links):
        again = wire.for_seat("cmpn402", told, i)
        assert isinstance(again, ToAgent)
        assert again.data == link.sent[-1]
        end = decode_server(again.data)
        assert isinstance(end, EndMessage)
        assert end.reason is EndReason.TIME_ENDED
    assert len(room.logged_actions) == len(log.entries)

"""The CMPN402 referee's room on a rooms node, without the bus: what a node that finishes
a room whose owner died after logging its end tells the agents again (``RefereeRoom.last_told``):
each agent's END, byte for byte what the referee sent it; and nothing for a game still
open (a takeover resumes it with END 2 and START instead)."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.depth import heavy
from tests.server.conftest import InlineJournal
from tests.server.test_cmpn402_referee import FakeLink, StepClock, _move_bytes, _opening_play

from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.record import to_record
from meeple.node import wire
from meeple.node.cmpn402 import AdminRefused, AgentMessage, RefereeRoom, ToAgent
from meeple.protocols.cmpn402.messages import (
    ChallengeMove,
    EndMessage,
    EndReason,
    NoChallenge,
    PassMove,
    PassNotice,
    Start,
    decode_server,
)
from meeple.server.feed import Feed, Subscription, game_topic
from meeple.server.metrics import METRICS
from meeple.server.rooms.cmpn402 import Referee, RefereeSettings


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
    assert room.last_told(open_log) is None  # resumed by END 2 + START
    clock.step(20)  # the player on turn runs out of time: END reason 1, the game stored
    log = journal.store.action_log(uid)
    assert log is not None
    assert log.end_reason is not None
    room = RefereeRoom([Agent("ann"), Agent("ben")], make, recovered=log)
    told = room.last_told(log)
    for i, link in enumerate(links):
        again = room.seat_event(told, i)
        assert isinstance(again, ToAgent)
        assert again.data == link.sent[-1]
        end = decode_server(again.data)
        assert isinstance(end, EndMessage)
        assert end.reason is EndReason.TIME_ENDED
    assert len(room.logged_actions) == len(log.entries)


class Wired:
    """A seat as a rooms node has it (its edge route), keeping what it is told."""

    def __init__(self, name: str, route: str) -> None:
        self.name, self.route = name, route
        self.told: list[object] = []

    def deliver(self, event: object) -> None:
        self.told.append(event)

    def heard(self) -> list[object]:
        """The messages its agent heard, decoded, and forget them."""
        told, self.told = self.told, []
        return [decode_server(e.data) if isinstance(e, ToAgent) else e for e in told]

    def session(self) -> str:
        return next(e.session for e in reversed(self.told) if isinstance(e, ToAgent) and e.session)


async def _settle(room: RefereeRoom) -> None:
    """Let the room's task take what is in its inbox (the journal writes inline)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_stale_moves_are_dropped_and_a_seat_comes_back(gcide: Lexicon) -> None:
    """A message sent before the agent heard the current START does not reach the
    referee; a room rebuilt from the log resumes with END 2 then START to each; a seat
    that left is taken back by a Rejoin on a new route, and both hear START."""
    clock = StepClock()
    journal = InlineJournal()
    make = _make(gcide, clock)
    seats = [Wired("ann", "e1-1"), Wired("ben", "e2-1")]
    room = RefereeRoom(list(seats), make)
    room.journal = journal
    room.start()
    await _settle(room)
    starts = [s.session() for s in seats]
    assert [type(m) for s in seats for m in s.heard()] == [Start, Start]
    game = room.referee.game
    assert game is not None
    mover = room.referee.seat_of[game.turn]
    other = seats[1 - mover]
    room.submit(seats[mover], AgentMessage(PassMove().encode(), "stale"))
    await _settle(room)
    assert other.heard() == []  # sent before the START it heard: dropped
    room.submit(seats[mover], AgentMessage(PassMove().encode(), starts[mover]))
    await _settle(room)
    assert [type(m) for m in other.heard()] == [PassNotice]
    log = journal.store.action_log(room.uid)
    assert log is not None
    assert [e.entry["routes"] for e in log.entries] == [["e1-1", "e2-1"]]
    # The node dies; another rebuilds the room from the log, with the same seats.
    again = [Wired("ann", "e1-1"), Wired("ben", "e2-1")]
    restored = RefereeRoom(list(again), make, recovered=log)
    restored.uid, restored.journal = room.uid, journal
    restored.start()
    await _settle(restored)
    for seat in again:
        end, start = seat.heard()
        assert end == EndMessage(EndReason.CONNECTION_ERROR, *_scores(start))
        assert isinstance(start, Start)
    mover = restored.referee.seat_of[restored.referee.game.turn]
    restored.submit(again[mover], AgentMessage(PassMove().encode(), starts[mover]))
    await _settle(restored)
    assert again[1 - mover].heard() == []  # the old node's session: dropped
    # ben's edge says his connection is gone; he comes back through another edge.
    restored.leave(again[1])
    await _settle(restored)
    assert [type(m) for m in again[0].heard()] == [EndMessage]
    restored.submit(again[1], wire.Rejoin("e3-7", "ben"))
    await _settle(restored)
    assert again[1].route == "e3-7"
    assert [type(m) for s in again for m in s.heard()] == [Start, Start]
    log = journal.store.action_log(room.uid)
    assert log is not None
    assert [e.entry["present"] for e in log.entries[1:]] == [[True, False], [True, True]]
    assert log.entries[-1].entry["routes"] == ["e1-1", "e3-7"]


def _scores(start: object) -> tuple[int, int]:
    assert isinstance(start, Start)
    return start.score, start.opponent_score


def _finished(reason: str) -> float:
    value = METRICS.registry.get_sample_value(
        "meeple_games_finished_total", {"game": "cmpn402", "reason": reason}
    )
    return value or 0.0


async def test_a_room_s_end_is_counted_by_its_record_s_reason(gcide: Lexicon) -> None:
    """The admin stops the room's game: meeple_games_finished_total counts it by the end
    reason its record got, ``stopped``, as meeple serve's referee does (issue 35), not as
    a room that stopped with its game on ("unfinished")."""
    before = {reason: _finished(reason) for reason in ("stopped", "unfinished")}
    seats = [Wired("ann", "e1-1"), Wired("ben", "e2-1")]
    room = RefereeRoom(list(seats), _make(gcide, StepClock()))
    room.journal = InlineJournal()
    room.start()
    await _settle(room)
    assert await room.admin("stop") == "stopped"
    await _settle(room)
    assert room.finished
    assert _finished("stopped") == before["stopped"] + 1
    assert _finished("unfinished") == before["unfinished"]


async def test_a_challenge_window_that_runs_out_is_a_step_of_the_room(gcide: Lexicon) -> None:
    """The referee's timers are the room's commands: a play whose challenge window runs
    out stands in a step of the room's own task (nothing changes the game outside it),
    so spectators see the verdict at once and the room's watchers (a rooms node's
    ``on_committed``) hear of the step, as after any command."""
    clock = StepClock()
    seats = [Wired("ann", "e1-1"), Wired("ben", "e2-1")]
    room = RefereeRoom(list(seats), _make(gcide, clock))
    room.journal = journal = InlineJournal()
    room.feed = Feed()
    viewer = room.feed.subscribe(game_topic(room.uid))
    steps: list[object] = []
    room.on_committed.append(lambda _seat, command: steps.append(command))
    room.start()
    await _settle(room)
    mover, play = _opening_play(room.referee, gcide)  # room seat i is the referee's slot i
    room.submit(seats[mover], AgentMessage(play, seats[mover].session()))
    await _settle(room)
    assert _view(viewer)["pending"] is not None  # in its challenge window
    before = len(steps)
    clock.step(2)  # the window runs out: NO_CHALLENGE, the play stands
    await _settle(room)
    view = _view(viewer)
    assert view["pending"] is None
    assert view["scores"][room.referee.game.players.index(seats[mover].name)] > 0
    assert len(steps) == before + 1
    log = journal.store.action_log(room.uid)
    assert log is not None
    assert [e.entry["action"]["type"] for e in log.entries] == ["play", "accept"]
    assert await room.admin("stop") == "stopped"
    await room.wait_finished()


def _view(viewer: Subscription) -> dict[str, Any]:
    """The newest snapshot a viewer was handed (the game's spectator view)."""
    last = None
    while (item := viewer.get_nowait()) is not None:
        last = item
    assert last is not None, "no snapshot was handed out since the last look"
    view: dict[str, Any] = last.data["view"]
    return view


ROOM_STEP = st.one_of(
    st.tuples(
        st.sampled_from(["pass", "exchange", "play", "play", "wrong-score", "accept", "challenge"]),
        st.sampled_from([0, 1, 2, 2]),  # 2: the seat on turn
        st.none(),
    ),
    st.tuples(st.just("bytes"), st.integers(0, 1), st.binary(max_size=12)),
    st.tuples(st.just("time"), st.just(0), st.floats(0, 3)),
    st.tuples(st.sampled_from(["pause", "resume"]), st.just(0), st.none()),
)


# Random orders of moves, stray bytes, time (the clocks and challenge windows running
# out) and the admin's pause and resume, through a referee room's inbox.
@settings(max_examples=heavy(8, 80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ROOM_STEP, min_size=5, max_size=30))
@example(steps=[("pass", 2, None), ("play", 2, None), ("time", 0, 2.5)])  # a window runs out
def test_viewers_see_every_step_of_a_referee_room(gcide: Lexicon, steps: list[Any]) -> None:
    """Whatever its agents send and however time runs, a referee room's spectators are
    handed each step as it is made, the referee's timers' steps too: after every step
    the feed's last snapshot is the room's view now; the log the room wrote holds the
    game's settled actions."""
    asyncio.run(_drive_room(gcide, steps))


async def _drive_room(lexicon: Lexicon, steps: list[Any]) -> None:
    clock = StepClock()
    journal = InlineJournal()
    seats = [Wired("ann", "e1-1"), Wired("ben", "e2-1")]
    room = RefereeRoom(list(seats), _make(lexicon, clock))
    room.journal = journal
    room.feed = Feed()
    viewer = room.feed.subscribe(game_topic(room.uid))
    room.start()
    await _settle(room)
    referee = room.referee
    for kind, chosen, arg in steps:
        game = referee.game
        who = chosen
        if chosen == 2:
            who = referee.seat_of[game.turn] if game is not None and game.turn is not None else 0
        if kind == "time":
            clock.step(arg)
        elif kind in ("pause", "resume"):
            with contextlib.suppress(AdminRefused):
                await room.admin(kind)
        else:
            if kind == "bytes":
                data = arg
            elif kind == "accept":
                data = NoChallenge().encode()
            elif kind == "challenge":
                data = ChallengeMove().encode()
            elif kind == "pass":
                data = PassMove().encode()
            else:
                data = _move_bytes(referee, lexicon, kind)
            room.submit(seats[who], AgentMessage(data, seats[who].session()))
        await _settle(room)
        assert not journal.errors
        last = room.feed.last(game_topic(room.uid))
        assert last is not None
        assert last.data["view"] == room.spectator_view(), f"after {kind}"
        while viewer.get_nowait() is not None:
            pass
        log = journal.store.action_log(room.uid)
        assert log is not None
        logged = [e.entry["action"] for e in log.entries if e.entry.get("action") is not None]
        game = referee.game
        if game is not None:
            settled = to_record(game)["actions"]
            assert logged == settled[: len(settled) - (game.pending is not None)]
        if room.finished:
            break
    if not room.finished:
        await room.admin("stop")
    await room.wait_finished()
    viewer.close()

"""The CMPN402 referee without sockets: random bytes, random orders, drops and admin actions."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.ai.scrabble import ranked_moves
from meeple.games import records
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.tiles import ENGLISH
from meeple.protocols.cmpn402 import (
    ChallengeMove,
    EndMessage,
    EndReason,
    ExchangeMove,
    Invalid,
    Name,
    NoChallenge,
    PassMove,
    PassNotice,
    PlayMove,
    ServerState,
    Start,
    decode_server,
)
from meeple.server.clock import Timer
from meeple.server.rooms.cmpn402 import Referee, RefereeError, RefereeSettings
from meeple.server.store.database import ActionLog, Store
from meeple.server.store.journal import Journal


class StepClock:
    """A synchronous virtual clock: ``step(dt)`` fires what is due."""

    def __init__(self) -> None:
        self.t = 0.0
        self.timers: list[tuple[float, _T]] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - unused by the referee
        raise NotImplementedError

    def call_later(self, seconds: float, callback: Callable[[], object]) -> Timer:
        timer = _T(callback)
        self.timers.append((self.t + seconds, timer))
        return timer

    def step(self, dt: float) -> None:
        end = self.t + dt
        while True:
            due = sorted(
                ((w, t) for w, t in self.timers if w <= end and not t.cancelled),
                key=lambda x: x[0],
            )
            if not due:
                break
            when, timer = due[0]
            self.timers.remove((when, timer))
            self.t = max(self.t, when)
            timer.cancelled = True
            timer.callback()
        self.t = end


class _T:
    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLink:
    def __init__(self, n: int) -> None:
        self.id = f"fake-{n}"
        self.sent: list[bytes] = []
        self.closed: int | None = None

    def send(self, data: bytes) -> None:
        assert self.closed is None, "sent after close"
        self.sent.append(data)

    def close(self, code: int, reason: str) -> None:
        self.closed = code


def _referee(
    lexicon: Lexicon,
    journal: Any = None,
    recovered: ActionLog | None = None,
    clock: StepClock | None = None,
    seed: int = 3,
    **kw: Any,
) -> tuple[Referee, StepClock]:
    clock = clock or StepClock()
    referee = Referee(
        clock=clock,
        lexicon=lexicon,
        rng=random.Random(seed),
        settings=RefereeSettings(player_time=20_000, total_time=30_000, challenge_time=2_000, **kw),
        journal=journal,
        recovered=recovered,
    )
    return referee, clock


def _log_of(referee: Referee, store: Store) -> ActionLog:
    log = store.action_log(referee.game_id)
    assert log is not None
    return log


def _tiles_in_play(referee: Referee) -> int:
    game = referee.game
    assert game is not None
    on_board = sum(1 for _ in game.board.tiles())
    return on_board + sum(len(r) for r in game.racks) + len(game.bag)


def _check(referee: Referee, links: list[FakeLink]) -> None:
    """Invariants: state and game agree, 100 tiles, every byte sent is a server message."""
    in_game = referee.machine.state in (ServerState.IDLE, ServerState.AWAIT_CHALLENGE)
    assert in_game == (referee.game is not None)
    if referee.game is not None:
        assert _tiles_in_play(referee) == 100  # the English tile set
        assert (referee.machine.state is ServerState.AWAIT_CHALLENGE) == (
            referee.game.pending is not None
        )
    for link in links:
        for data in link.sent:
            decode_server(data)
        assert len(link.sent) < 10_000


def _move_bytes(referee: Referee, lexicon: Lexicon, kind: str, player: int | None = None) -> bytes:
    """The best move of the player on turn (or of ``player``), as the client's bytes."""
    game = referee.game
    if player is None and game is not None:
        player = game.turn
    if game is None or player is None:
        return PassMove().encode()
    rack = game.rack(player)
    if kind == "exchange":
        return ExchangeMove(rack[:3] or "A").encode()
    moves = ranked_moves(game.board, rack, lexicon, ENGLISH)[:1]
    if not moves:
        return PassMove().encode()
    tiles = sorted(moves[0].tiles, key=lambda p: (p.y, p.x))
    direction = 0 if tiles[0].y == tiles[-1].y and len(tiles) > 1 else 1
    if len(tiles) == 1:
        direction = 0 if moves[0].direction.value == "across" else 1
    score = moves[0].score + (1 if kind == "wrong-score" else 0)
    return PlayMove(
        tiles[0].x + 1, tiles[0].y + 1, direction, "".join(p.tile for p in tiles), score
    ).encode()


def _drive(
    referee: Referee,
    clock: StepClock,
    lexicon: Lexicon,
    steps: list[Any],
    after: Callable[[list[FakeLink]], None],
) -> None:
    """Two agents connect, then each of ``steps`` is played (bytes, moves, drops,
    reconnects, time, admin buttons) and ``after`` checks the referee."""
    links: list[FakeLink] = []
    seats: list[int | None] = [None, None]

    def connect(n: int) -> None:
        link = FakeLink(len(links))
        links.append(link)
        index = referee.connect(link)
        if index is not None:
            seats[index] = index
            referee.receive(index, Name(f"agent{n}").encode())

    connect(0)
    connect(1)
    for kind, chosen, arg in steps:
        who = chosen
        if chosen == 2:
            game = referee.game
            who = referee.seat_of[game.turn] if game is not None and game.turn is not None else 0
        if kind == "bytes" and seats[who] is not None:
            referee.receive(who, arg)
        elif kind in ("pass", "exchange", "play", "wrong-score") and seats[who] is not None:
            data = PassMove().encode() if kind == "pass" else _move_bytes(referee, lexicon, kind)
            referee.receive(who, data)
        elif kind == "accept" and seats[who] is not None:
            referee.receive(who, NoChallenge().encode())
        elif kind == "challenge" and seats[who] is not None:
            referee.receive(who, ChallengeMove().encode())
        elif kind == "drop" and seats[who] is not None:
            referee.disconnect(who)
            seats[who] = None
        elif kind == "connect" and seats[who] is None:
            connect(who)
        elif kind == "time":
            clock.step(arg)
        elif kind in ("start", "pause", "resume", "stop", "swap"):
            with contextlib.suppress(RefereeError):  # a button that does nothing now
                getattr(referee, kind)()
        after(links)


MOVE = st.tuples(
    st.sampled_from(["pass", "exchange", "play", "play", "wrong-score", "accept", "challenge"]),
    st.sampled_from([0, 1, 2, 2, 2]),  # 2: the player on turn
    st.none(),
)
STEP = st.one_of(
    MOVE,
    MOVE,
    MOVE,
    MOVE,
    st.tuples(st.just("bytes"), st.integers(0, 1), st.binary(max_size=20)),
    st.tuples(st.sampled_from(["drop", "connect"]), st.integers(0, 1), st.none()),
    st.tuples(st.just("time"), st.integers(0, 1), st.floats(0, 3)),
    st.tuples(st.sampled_from(["start", "pause", "resume", "stop", "swap"]), st.just(0), st.none()),
)


# 12 orders in make test (each a whole game, stored and replayed), 120 in make test-deep.
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=20, max_size=60))
def test_random_orders_never_break_the_referee(
    gcide: Lexicon, inline_journal: Any, steps: list[Any]
) -> None:
    """Random bytes, moves out of order, drops, reconnects, time and admin buttons:
    nothing raises, the state and the game agree, tiles are conserved; every write to
    the log fits it, and every game stored replays from its logged actions."""
    journal = inline_journal()
    referee, clock = _referee(gcide, journal)
    _drive(referee, clock, gcide, steps, lambda links: _check(referee, links))
    assert journal.errors == []
    for stored in journal.store.games():
        assert stored.data is not None
        log = journal.store.action_log(stored.data["uid"])
        assert log is not None
        assert log.game_id == stored.id
        logged = [e.entry["action"] for e in log.entries if e.entry["action"] is not None]
        assert stored.data["actions"] == logged
        *_, last = records.replay(stored.data, lexicon=gcide)
        assert last.game.is_over


def test_invalid_goes_only_to_the_mover(gcide: Lexicon) -> None:
    """A wrong score: INVALID with the mover's times; the other hears nothing."""
    referee, clock = _referee(gcide)
    a, b = FakeLink(0), FakeLink(1)
    for i, link in enumerate((a, b)):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    assert referee.game is not None
    mover = referee.seat_of[referee.game.turn or 0]
    links = (a, b)
    before = [len(x.sent) for x in links]
    clock.step(1.0)
    referee.receive(mover, _move_bytes(referee, gcide, "wrong-score"))
    assert links[mover].sent[-1] == Invalid(19_000, 29_000).encode()
    assert len(links[1 - mover].sent) == before[1 - mover]


@pytest.mark.parametrize("manual", [False, True])
def test_a_game_resumes_after_a_drop_even_with_manual_start(gcide: Lexicon, manual: bool) -> None:
    """Recovery from a connection error is not the Start button: it resumes by itself."""
    referee, _ = _referee(gcide, manual_start=manual)
    a, b = FakeLink(0), FakeLink(1)
    for i, link in enumerate((a, b)):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    if manual:
        assert referee.start() == "started"
    first = [decode_server(x.sent[1]) for x in (a, b)]
    referee.disconnect(0)
    assert decode_server(b.sent[-1]) == EndMessage(EndReason.CONNECTION_ERROR, 0, 0)
    c = FakeLink(2)
    referee.connect(c)
    referee.receive(0, Name("p0").encode())
    again = [decode_server(c.sent[-1]), decode_server(b.sent[-1])]
    assert all(isinstance(s, Start) for s in again)
    assert again == first


def _setup(lexicon: Lexicon, state: str) -> tuple[Referee, list[FakeLink]]:
    """A referee in the given server state (manual start), with both links."""
    referee, _ = _referee(lexicon, manual_start=True)
    links = [FakeLink(0), FakeLink(1)]
    referee.connect(links[0])
    referee.receive(0, Name("p0").encode())
    referee.connect(links[1])
    if state != "INIT":
        referee.receive(1, Name("p1").encode())
    if state in ("IDLE", "AWAIT_CHALLENGE"):
        referee.start()
    if state == "AWAIT_CHALLENGE":
        game = referee.game
        assert game is not None
        referee.receive(referee.seat_of[game.turn or 0], _move_bytes(referee, lexicon, "play"))
    assert referee.machine.state.value == state
    for link in links:
        link.sent.clear()
    return referee, links


KINDS = [
    "NAME",
    "PASS",
    "EXCHANGE",
    "PLAY",
    "NO_CHALLENGE",
    "CHALLENGE",
    "JUNK",
    "SERVER_TYPE",
    "BAD_PLAY",
    "WRONG_SCORE",
    "BAD_EXCHANGE",
]

# (state, kind, from the player on turn?) -> (state after, {who: [(type, length)]})
# "mover" is the sender, "peer" the other seat. Unlisted: nothing sent, state unchanged.
EXPECTED: dict[tuple[str, str, bool], tuple[str, dict[str, list[tuple[int, int]]]]] = {
    ("INIT", "NAME", False): ("READY", {}),
    ("IDLE", "PASS", True): ("IDLE", {"peer": [(2, 9)]}),
    ("IDLE", "EXCHANGE", True): ("IDLE", {"mover": [(3, 8)], "peer": [(3, 10)]}),
    ("IDLE", "PLAY", True): ("AWAIT_CHALLENGE", {"peer": [(4, 27)]}),
    ("IDLE", "BAD_PLAY", True): ("IDLE", {"mover": [(9, 9)]}),
    ("IDLE", "WRONG_SCORE", True): ("IDLE", {"mover": [(9, 9)]}),
    ("IDLE", "BAD_EXCHANGE", True): ("IDLE", {"mover": [(9, 9)]}),
    ("AWAIT_CHALLENGE", "NO_CHALLENGE", True): ("IDLE", {"peer": [(5, 8)]}),
    ("AWAIT_CHALLENGE", "CHALLENGE", True): ("IDLE", {"mover": [(8, 1)], "peer": [(8, 16)]}),
}


@pytest.mark.parametrize("state", ["INIT", "READY", "IDLE", "AWAIT_CHALLENGE"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("on_turn", [True, False])
def test_every_message_in_every_referee_state(
    gcide: Lexicon, state: str, kind: str, on_turn: bool
) -> None:
    """Raw bytes in, raw bytes out: each client message in each server state, from the
    player on turn or the other (in INIT: the named or the unnamed agent)."""
    referee, links = _setup(gcide, state)
    game = referee.game
    if game is not None:
        on_turn_seat = referee.seat_of[game.turn or 0]
        sender = on_turn_seat if on_turn else 1 - on_turn_seat
    else:
        sender = 0 if on_turn else 1  # INIT: seat 0 named, seat 1 not; READY: both named
    rack = "" if game is None else game.rack(referee.seat_of.index(sender))
    data = {
        "NAME": Name("again").encode(),
        "PASS": PassMove().encode(),
        "EXCHANGE": ExchangeMove(rack[:2] or "AB").encode(),
        "PLAY": _move_bytes(referee, gcide, "play") if game is not None else b"\x04",
        "NO_CHALLENGE": NoChallenge().encode(),
        "CHALLENGE": ChallengeMove().encode(),
        "JUNK": b"\x0b\x01",
        "SERVER_TYPE": b"\x07",
        "BAD_PLAY": bytes.fromhex("04 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),
        "WRONG_SCORE": _move_bytes(referee, gcide, "wrong-score") if game else b"\x04",
        "BAD_EXCHANGE": ExchangeMove("ZZZZZZZ").encode(),
    }[kind]
    referee.receive(sender, data)
    after, sent = EXPECTED.get((state, kind, on_turn), (state, {}))
    assert referee.machine.state.value == after
    got = {
        who: [(d[0], len(d)) for d in links[seat].sent]
        for who, seat in (("mover", sender), ("peer", 1 - sender))
        if links[seat].sent
    }
    assert got == sent


def test_a_stale_move_between_series_games_is_ignored(gcide: Lexicon) -> None:
    """After END the next game of a series starts a second later, so a move sent just
    as the old game ended lands in READY and is ignored, not in the new game."""
    referee, clock = _referee(gcide, games=2)
    links = [FakeLink(0), FakeLink(1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    for _ in range(6):  # six scoreless turns end the game (END reason 0)
        game = referee.game
        assert game is not None
        referee.receive(referee.seat_of[game.turn or 0], PassMove().encode())
    assert referee.machine.state is ServerState.READY
    for link in links:
        end = decode_server(link.sent[-1])
        assert isinstance(end, EndMessage)
        assert end.reason is EndReason.ALL_TILES_USED
    for link in links:
        link.sent.clear()
    referee.receive(0, PassMove().encode())  # stale: sent before it read END
    referee.receive(1, PlayMove(8, 8, 0, "AB", 4).encode())
    assert all(not link.sent for link in links)
    clock.step(0.99)
    assert all(not link.sent for link in links)
    clock.step(0.02)
    starts = [decode_server(link.sent[0]) for link in links]
    assert all(isinstance(s, Start) for s in starts)
    assert referee.series.played == 1


def test_a_play_behind_the_game_ending_no_challenge_is_ignored(gcide: Lexicon) -> None:
    """Issue 31 (docs/protocols/cmpn402.md): the challenger answers the PLAY that used the
    last tiles with NO_CHALLENGE and, in the same write, plays (THINKING by the spec's
    client table). The game is over once the play stands: END reason 0 to both with the
    standard end's scores; the PLAY behind it is neither scored, echoed nor answered, and
    the series' next game starts at 0-0 on an empty board."""
    # A deal whose last play leaves the challenger a legal PLAY to send behind it.
    referee, clock = _referee(gcide, games=2, seed=5)
    links = [FakeLink(0), FakeLink(1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    for _ in range(300):
        game = referee.game
        assert game is not None, "the game ended before a play used the last tiles"
        player = game.turn
        assert player is not None
        rack = game.rack(player)
        moves = ranked_moves(game.board, rack, gcide, ENGLISH)[:1]
        mover, challenger = referee.seat_of[player], referee.seat_of[1 - player]
        referee.receive(mover, _move_bytes(referee, gcide, "play"))
        if not moves:
            continue  # passed
        if not game.bag and len(moves[0].tiles) == len(rack):
            break  # the PLAY that uses the last tiles, its window open
        referee.receive(challenger, NoChallenge().encode())
    else:
        raise AssertionError("no play used the last tiles")
    late = _move_bytes(referee, gcide, "play", 1 - player)  # the challenger's best PLAY
    assert late[:1] == b"\x04", game.rack(1 - player)
    for link in links:
        link.sent.clear()
    referee.receive(challenger, NoChallenge().encode())  # one write: both messages
    referee.receive(challenger, late)
    assert referee.machine.state is ServerState.READY
    told = {seat: [decode_server(d) for d in links[seat].sent] for seat in (mover, challenger)}
    assert [type(m).__name__ for m in told[mover]] == ["NoChallengeTiles", "EndMessage"]
    assert [type(m).__name__ for m in told[challenger]] == ["EndMessage"]
    end_mover, end_challenger = told[mover][-1], told[challenger][-1]
    assert isinstance(end_mover, EndMessage)
    assert isinstance(end_challenger, EndMessage)
    assert end_mover.reason is end_challenger.reason is EndReason.ALL_TILES_USED
    assert (end_mover.score, end_mover.opponent_score) == (
        end_challenger.opponent_score,
        end_challenger.score,
    )
    result = referee.series.results[-1]
    assert result["scores"][player] == end_mover.score
    assert result["scores"][1 - player] == end_challenger.score
    clock.step(1.01)  # the series' next game
    for link in links:
        start = decode_server(link.sent[-1])
        assert isinstance(start, Start)
        assert (start.score, start.opponent_score) == (0, 0)
        assert all(row == "." * 15 for row in start.board)


def test_a_client_without_a_name_is_closed_after_the_idle_timeout(gcide: Lexicon) -> None:
    """A connection that never sends NAME cannot hold a seat forever (closed with 1008)."""
    referee, clock = _referee(gcide, name_timeout=5_000)
    quiet, named = FakeLink(0), FakeLink(1)
    referee.connect(quiet)
    referee.connect(named)
    referee.receive(1, Name("p1").encode())
    clock.step(4.9)
    assert quiet.closed is None
    clock.step(0.2)
    assert quiet.closed == 1008
    assert named.closed is None


def test_an_unreadable_log_is_left_and_a_new_game_starts(
    gcide: Lexicon, inline_journal: Any
) -> None:
    """A log that does not replay does not stop the referee: a new game starts."""
    journal = inline_journal()
    journal.store.open_log("bad", "scrabble", {"record": {"players": 1}, "table": {}})
    recovered = journal.store.action_log("bad")
    referee, _ = _referee(gcide, journal, recovered)
    assert not referee.waiting
    links = [FakeLink(0), FakeLink(1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    assert all(isinstance(decode_server(link.sent[-1]), Start) for link in links)
    assert referee.game_id != "bad"


def test_seat_release_and_the_disconnect_end(gcide: Lexicon, inline_journal: Any) -> None:
    """Seated agents (named by the contest) start at once; a drop leaves the game
    waiting in its log; end_disconnected scores it without the absent agent winning,
    stores it and tells the watcher; release lets go silently."""
    journal = inline_journal()
    referee, _ = _referee(gcide, journal)
    changes: list[str] = []
    overs: list[dict[str, Any]] = []
    referee.on_change = lambda: changes.append(referee.machine.state.value)
    referee.on_game_over = overs.append
    a, b = FakeLink(0), FakeLink(1)
    assert referee.seat(a, "ann") == 0
    assert referee.seat(b, "ben") == 1
    assert referee.seat(FakeLink(2), "cat") is None
    assert changes[-1] == "IDLE"
    assert [type(decode_server(x.sent[0])) for x in (a, b)] == [Start, Start]
    assert referee.first == 0
    assert referee.game is not None
    referee.receive(0, PassMove().encode())  # ann moves first: logged
    referee.disconnect(1)
    assert referee.waiting
    assert decode_server(a.sent[-1]) == EndMessage(EndReason.CONNECTION_ERROR, 0, 0)
    sent = len(a.sent)
    assert referee.end_disconnected("ben") is True
    assert referee.end_disconnected("ben") is False
    [over] = overs
    assert (over["reason"], over["winner"], over["players"]) == (
        "CONNECTION_ERROR",
        "ann",
        ["ann", "ben"],
    )
    assert len(a.sent) == sent  # END 2 went out at the drop; nothing more
    log = _log_of(referee, journal.store)
    assert log.finished
    assert log.end_reason == "connection_error"
    assert [e.entry["action"] for e in log.entries] == [
        {"type": "pass", "player": 0},
        None,  # the clocks at the drop
        {"type": "end", "reason": "disconnect", "player": 1},
    ]
    assert not referee.waiting
    assert journal.errors == []
    referee.release()
    assert referee.seats == [None, None]
    assert referee.machine.state is ServerState.INIT


def test_board_view_and_moves_hide_the_racks(gcide: Lexicon) -> None:
    """The console's board: clocks as of now, the move list without tiles exchanged."""
    referee, clock = _referee(gcide)
    links = [FakeLink(0), FakeLink(1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    assert referee.board_view() is not None
    clock.step(1.5)
    game = referee.game
    assert game is not None
    mover = referee.seat_of[game.turn or 0]
    referee.receive(mover, ExchangeMove(game.rack(game.turn or 0)[:3]).encode())
    view = referee.board_view(3)
    assert view is not None
    assert view["board"] == 3
    assert view["clocks"]["players_ms"][1 - (view["turn"] or 0)] == 18_500
    assert view["moves"] == [{"player": 1 - view["turn"], "text": "exchange 3", "score": 0,
                              "total": 0}]  # fmt: skip
    assert view["challenge"] == {"open": False, "remaining_ms": 0}
    referee.stop()
    assert referee.board_view() is None


# --- the game's log ----------------------------------------------------------------------


class _GatedStore(Store):
    """A store whose log writes wait for ``gate`` (a disk that hangs)."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.gate = threading.Event()
        self.writes: list[str] = []

    def open_log(self, uid: str, game: str, genesis: Any) -> None:
        self.gate.wait(10)
        super().open_log(uid, game, genesis)
        self.writes.append("open")

    def append_log(self, uid: str, seq: int, entry: Any, *, at: float | None = None) -> None:
        self.gate.wait(10)
        super().append_log(uid, seq, entry, at=at)
        self.writes.append(f"append {seq}")

    def append_batch(self, appends: Any) -> None:
        # The journal's group commit writes its appends together: they wait too (and
        # are noted as append_log notes them: the single entries).
        self.gate.wait(10)
        super().append_batch(appends)
        self.writes.extend(f"append {a[1]}" for a in appends if len(a[2]) == 1)


async def test_nothing_reaches_an_agent_before_its_entry_is_written(gcide: Lexicon) -> None:
    """Write-ahead: START waits for the genesis, PASS's notice for its entry; while the
    store hangs the agents hear nothing, then everything, in order."""
    store = _GatedStore()
    journal = Journal(store)
    try:
        referee, _ = _referee(gcide, journal)
        a, b = FakeLink(0), FakeLink(1)
        for i, link in enumerate((a, b)):
            referee.connect(link)
            referee.receive(i, Name(f"p{i}").encode())
        assert [len(a.sent), len(b.sent)] == [1, 1]  # NAME only: nothing was waiting
        await asyncio.sleep(0.05)
        assert [len(a.sent), len(b.sent)] == [1, 1]  # START waits for the genesis
        store.gate.set()
        await referee.ahead.drain()
        assert store.writes == ["open"]
        assert isinstance(decode_server(a.sent[-1]), Start)
        assert isinstance(decode_server(b.sent[-1]), Start)
        store.gate.clear()
        game = referee.game
        assert game is not None
        mover = referee.seat_of[game.turn or 0]
        other = (a, b)[1 - mover]
        before = len(other.sent)
        referee.receive(mover, PassMove().encode())
        await asyncio.sleep(0.05)
        assert len(other.sent) == before  # the PASS is not written: nobody is told
        assert referee.ahead.waiting == 2  # the entry, and the notice behind it
        store.gate.set()
        await referee.ahead.drain()
        assert store.writes == ["open", "append 1"]
        assert isinstance(decode_server(other.sent[-1]), PassNotice)
    finally:
        store.gate.set()
        journal.close()
        store.close()


def test_a_new_referee_resumes_the_game_from_the_log(gcide: Lexicon, inline_journal: Any) -> None:
    """A restart (no goodbye): a new referee given the unfinished log waits for both
    agents, then STARTs them with the logged board, racks, scores and times; the PLAY
    that was in its challenge window is not in the log, so its player plays again."""
    journal = inline_journal()
    referee, clock = _referee(gcide, journal)
    links = [FakeLink(0), FakeLink(1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(f"p{i}").encode())
    game = referee.game
    assert game is not None

    def on_turn() -> int:
        assert game.turn is not None
        return referee.seat_of[game.turn]

    clock.step(1.25)
    referee.receive(on_turn(), _move_bytes(referee, gcide, "play"))
    clock.step(0.5)
    referee.receive(on_turn(), NoChallenge().encode())  # the play and its verdict: logged
    clock.step(2.0)
    referee.receive(on_turn(), ExchangeMove(game.rack(game.turn or 0)[:3]).encode())
    clock.step(0.75)
    before = game.state()
    # As the log has them: the first player thought 1.25 s, the other 2 s; the 0.75 s
    # before the crash are charged to nobody (ARCHITECTURE.md: the gap of a restart).
    times = [18_750, 18_000] if referee.first == 0 else [18_000, 18_750]
    total = 26_750
    referee.receive(on_turn(), _move_bytes(referee, gcide, "play"))  # pending at the crash
    assert game.pending is not None
    log = _log_of(referee, journal.store)
    assert [e.entry["action"]["type"] for e in log.entries] == ["play", "accept", "exchange"]
    assert not log.finished
    # The server dies here: the new one finds the log.
    again, _ = _referee(gcide, journal, journal.store.action_log(referee.game_id))
    assert again.waiting
    fresh = [FakeLink(2), FakeLink(3)]
    for i, link in enumerate(fresh):
        again.connect(link)
        again.receive(i, Name(f"p{1 - i}").encode())  # the other way round
    resumed = again.game
    assert resumed is not None
    assert again.game_id == referee.game_id
    assert resumed.racks == before.racks
    assert tuple(resumed.board.rows()) == before.board
    assert resumed.scores == before.scores
    assert resumed.turn == before.turn
    clocks = log.entries[-1].entry["clocks"]
    assert [round(c * 1000) for c in clocks] == [*times, total]
    for player, link in ((0, fresh[1]), (1, fresh[0])):
        start = decode_server(link.sent[-1])
        assert isinstance(start, Start)
        assert start.order == (1 if resumed.turn == player else 2)
        assert start.tiles == resumed.rack(player)
        assert (start.score, start.opponent_score) == (
            resumed.scores[player],
            resumed.scores[1 - player],
        )
        assert (start.player_time, start.total_time) == (times[player], total)
    # It goes on in the same log to the end, and the stored game replays.
    for _ in range(6):
        again.receive(again.seat_of[resumed.turn or 0], PassMove().encode())
    assert resumed.is_over
    log = _log_of(again, journal.store)
    assert log.finished
    assert journal.errors == []
    [stored] = journal.store.games()
    assert stored.data is not None
    assert stored.data["uid"] == referee.game_id
    *_, last = records.replay(stored.data, lexicon=gcide)
    assert last.game.result == resumed.result


def _opening_play(referee: Referee, gcide: Lexicon) -> tuple[int, bytes]:
    """The seat on turn and its best opening PLAY."""
    game = referee.game
    assert game is not None
    assert game.turn is not None
    return referee.seat_of[game.turn], _move_bytes(referee, gcide, "play")


def _seat_both(referee: Referee, names: tuple[str, str], first_link: int = 0) -> list[FakeLink]:
    links = [FakeLink(first_link), FakeLink(first_link + 1)]
    for i, link in enumerate(links):
        referee.connect(link)
        referee.receive(i, Name(names[i]).encode())
    return links


def test_a_play_and_its_verdict_are_one_write(
    gcide: Lexicon, inline_journal: Any, tmp_path: Any
) -> None:
    """A PLAY and its NO_CHALLENGE are two entries written at once: a database that fails
    on the second (a trigger that aborts it) keeps neither, so the log never holds a
    play without its verdict, and the game resumed from it has its player play again
    (found by the PostgreSQL crash test: a kill between the two writes left a log that
    resumed into a challenge window no START can say, and the game stalled)."""
    path = tmp_path / "meeple.sqlite3"
    journal = inline_journal(Store(str(path)))
    referee, _ = _referee(gcide, journal)
    _seat_both(referee, ("p0", "p1"))
    mover, play = _opening_play(referee, gcide)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TRIGGER lost AFTER INSERT ON room_log_entries"
            " WHEN json_extract(NEW.entry, '$.action.type') = 'accept'"
            " BEGIN SELECT RAISE(ABORT, 'the disk is gone'); END"
        )
        db.commit()
    referee.receive(mover, play)
    referee.receive(1 - mover, NoChallenge().encode())
    assert [str(e) for e in journal.errors] == ["the disk is gone"]
    log = _log_of(referee, journal.store)
    assert log.entries == ()  # neither the play nor its verdict
    again, _ = _referee(gcide, inline_journal(journal.store), log)
    assert again.waiting
    _seat_both(again, ("p0", "p1"), first_link=2)
    resumed = again.game
    assert resumed is not None
    assert resumed.pending is None
    assert resumed.scores == (0, 0)
    assert again.seat_of[resumed.turn or 0] == mover  # its player plays again


def test_a_log_that_ends_on_a_play_without_its_verdict_resumes(
    gcide: Lexicon, inline_journal: Any
) -> None:
    """A log written before plays and verdicts were one write may end on the play: the
    resumed game lets it stand (nobody heard its verdict), logs the NO_CHALLENGE, and
    goes on: the next PASS is answered, not lost in a challenge window."""
    journal = inline_journal()
    referee, _ = _referee(gcide, journal)
    _seat_both(referee, ("p0", "p1"))
    mover, play = _opening_play(referee, gcide)
    referee.receive(mover, play)
    referee.receive(1 - mover, NoChallenge().encode())
    log = _log_of(referee, journal.store)
    play_entry = log.entries[0].entry
    assert play_entry["action"]["type"] == "play"
    # The log as a crash between two writes left it: the genesis and the play.
    old = Store(":memory:")
    old.open_log(log.uid, log.game, log.genesis)
    old.append_log(log.uid, 1, play_entry)
    crashed = old.action_log(log.uid)
    assert crashed is not None
    old_journal = inline_journal(old)
    again, _ = _referee(gcide, old_journal, crashed)
    links = _seat_both(again, ("p0", "p1"), first_link=2)
    game = again.game
    assert game is not None
    assert game.pending is None
    assert referee.game is not None
    assert game.scores == referee.game.scores  # the play stands, as it did live
    resumed = old.action_log(log.uid)
    assert resumed is not None
    assert [e.entry["action"]["type"] for e in resumed.entries] == ["play", "accept"]
    on_turn = again.seat_of[game.turn or 0]
    assert on_turn == 1 - mover
    again.receive(on_turn, PassMove().encode())
    assert isinstance(decode_server(links[mover].sent[-1]), PassNotice)
    assert old_journal.errors == []


def _replayed(referee: Referee, store: Store, lexicon: Lexicon) -> tuple[Any, list[int], int]:
    """What a referee restarted now would fold the running game's log into: the game,
    both players' remaining times and the game clock (ms)."""
    again, _ = _referee(lexicon, None, store.action_log(referee.game_id))
    book = again._book
    assert book is not None, "the running game's log does not replay"
    return again._fold(book)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=20, max_size=60))
def test_the_referees_log_replays_to_its_live_game_and_clocks(
    gcide: Lexicon, inline_journal: Any, steps: list[Any]
) -> None:
    """Exact replay for the referee (docs/durability.md): random moves, refusals, drops,
    reconnects, time passing and admin buttons; whenever the running game has no play in
    its challenge window, its log replays to the live game (board, racks, bag, scores,
    turn) and to the live clocks as they stood at the last entry (both players' times
    and the game clock), so a restart now would resume exactly this game."""
    journal = inline_journal()
    referee, clock = _referee(gcide, journal)
    logged = [-1]

    def after(links: list[FakeLink]) -> None:
        game = referee.game
        if game is None or game.pending is not None or game.is_over:
            return
        log = _log_of(referee, journal.store)
        if log.finished:
            return
        replayed, times, total = _replayed(referee, journal.store, gcide)
        assert replayed.state() == game.state()
        if len(log.entries) != logged[0]:
            # A new entry: it holds the clocks as they stood when it was made, which are
            # the referee's settled clocks until the next move or drop.
            logged[0] = len(log.entries)
            assert (times, total) == (referee.times, referee.total)

    _drive(referee, clock, gcide, steps, after)
    assert journal.errors == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    names=st.lists(
        st.one_of(
            st.sampled_from(["alice", "bob", "Alice", "alice ", "mallory"]),
            st.text(min_size=1, max_size=20).filter(lambda t: 0 < len(t.encode()) <= 64),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_waiting_game_seats_only_its_own_names(gcide: Lexicon, names: list[str]) -> None:
    """Alice drops: whatever NAMEs come to her seat, none but ``alice`` hears a START or
    moves the game; each other one is closed (1013, or as a bad NAME); then alice's
    agent takes her seat and both get START (issue 30.6)."""
    referee, _clock = _referee(gcide)
    a, b = FakeLink(1), FakeLink(2)
    referee.receive(referee.connect(a), Name("alice").encode())
    referee.receive(referee.connect(b), Name("bob").encode())
    assert referee.game is not None
    racks = {"alice": decode_server(a.sent[-1]), "bob": decode_server(b.sent[-1])}
    referee.disconnect(0)
    b.sent.clear()
    for i, name in enumerate(names):
        if name == "alice":
            continue
        link = FakeLink(10 + i)
        index = referee.connect(link)
        assert index == 0
        with contextlib.suppress(UnicodeEncodeError):
            referee.receive(index, b"\x00" + name.encode())
        assert link.closed is not None, name
        assert not any(m[:1] == b"\x01" for m in link.sent)  # no START
        referee.disconnect(index)
        assert referee.waiting
        assert b.sent == []
    back = FakeLink(99)
    referee.receive(referee.connect(back), Name("alice").encode())
    started = decode_server(back.sent[-1])
    assert isinstance(started, Start)
    assert started.tiles == racks["alice"].tiles
    assert decode_server(b.sent[-1]) == racks["bob"]

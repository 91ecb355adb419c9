"""The CMPN402 contest scheduler without sockets: schedules, boards, drops, forfeits, admin,
restart, and hostile input, on a stepped clock with fake links."""

from __future__ import annotations

import contextlib
import itertools
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meeple.games import records
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.cmpn402 import (
    EndMessage,
    EndReason,
    Name,
    NameRequest,
    PassMove,
    Start,
    decode_server,
)
from meeple.server.clock import Timer
from meeple.server.config import ContestConfig
from meeple.server.edge.cmpn402 import referee_logs
from meeple.server.lobby.cmpn402_console import ConsoleError, public
from meeple.server.lobby.contest import Contest, ContestConsole, round_robin, swiss_pairs
from meeple.server.rooms.cmpn402 import Referee, RefereeSettings


class StepClock:
    """A synchronous virtual clock: ``step(dt)`` fires what is due, in order."""

    def __init__(self) -> None:
        self.t = 0.0
        self.timers: list[tuple[float, int, _T]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - unused here
        raise NotImplementedError

    def call_later(self, seconds: float, callback: Callable[[], object]) -> Timer:
        timer = _T(callback)
        self.timers.append((self.t + seconds, next(self._seq), timer))
        return timer

    def step(self, dt: float) -> None:
        end = self.t + dt
        while True:
            due = sorted(x for x in self.timers if x[0] <= end and not x[2].cancelled)
            if not due:
                break
            entry = due[0]
            self.timers.remove(entry)
            self.t = max(self.t, entry[0])
            entry[2].cancelled = True
            entry[2].callback()
        self.t = end


class _T:
    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def __lt__(self, other: _T) -> bool:
        return False


class FakeLink:
    _ids = itertools.count()

    def __init__(self) -> None:
        self.id = f"fake-{next(self._ids)}"
        self.address = f"127.0.0.1:{40000 + int(self.id[5:])}"
        self.sent: list[bytes] = []
        self.closed: tuple[int, str] | None = None

    def send(self, data: bytes) -> None:
        assert self.closed is None, "sent after close"
        self.sent.append(data)

    def close(self, code: int, reason: str) -> None:
        if self.closed is None:
            self.closed = (code, reason)

    def messages(self) -> list[Any]:
        return [decode_server(d) for d in self.sent]


class Rig:
    """A contest over fake links; ``store`` (the contest's checkpoint) and ``journal``
    (the games' logs, written inline) outlive it (a server restart)."""

    def __init__(
        self,
        lexicon: Lexicon,
        journal: Any,
        store: dict[str, Any] | None = None,
        clock: StepClock | None = None,
        **config: Any,
    ) -> None:
        self.lexicon = lexicon
        self.journal = journal
        self.store: dict[str, Any] = {} if store is None else store
        self.clock = clock or StepClock()
        settings = {"show_timeout": 30.0, "resume_window": 20.0, **config}
        self.contest = Contest(
            clock=self.clock,
            config=ContestConfig(**settings),
            make_referee=self._referee,
            save=lambda state: self._save("contest", state),
            load=lambda: self.store.get("contest"),
            name_timeout=100.0,
            between_games=1.0,
        )
        self.console = ContestConsole(self.contest, token="tok", log_dir=None)
        self.conns: dict[str, Any] = {}
        self.links: dict[str, FakeLink] = {}

    def _save(self, key: str, state: dict[str, Any] | None) -> None:
        if state is None:
            self.store.pop(key, None)
        else:
            self.store[key] = dict(state)

    def _referee(self, game_key: str) -> Referee:
        # As the listener does: the board's key, and its unfinished log if it left one.
        key = f"rig:{game_key}"
        uid = referee_logs(self.journal.store, "rig").get(key)
        log = None if uid is None else self.journal.store.action_log(uid)
        return Referee(
            clock=self.clock,
            lexicon=self.lexicon,
            rng=random.Random(len(key)),
            settings=RefereeSettings(
                player_time=50_000, total_time=100_000, challenge_time=2_000, games=1
            ),
            key=key,
            journal=self.journal,
            ahead=self.contest.ahead,
            recovered=None if log is None or log.finished else log,
        )

    @property
    def records(self) -> list[tuple[tuple[str, ...], tuple[int, ...], str]]:
        """The stored games, oldest first: players, scores, END reason."""
        games = reversed(self.journal.store.games(limit=10_000))
        return [
            (r.players, tuple(r.result["scores"][p] for p in r.players), r.end_reason.upper())
            for r in games
        ]

    def open_logs(self) -> dict[str, str]:
        return referee_logs(self.journal.store, "rig")

    def reap(self) -> None:
        """The listener's part: a closed connection is a disconnection (later, not inside)."""
        for name, link in list(self.links.items()):
            if link.closed is not None and name in self.conns:
                self.contest.disconnect(self.conns.pop(name))

    def join(self, name: str) -> FakeLink:
        self.reap()
        link = FakeLink()
        conn = self.contest.connect(link)
        assert conn is not None
        assert link.messages() == [NameRequest()]
        self.contest.receive(conn, Name(name).encode())
        self.conns[name], self.links[name] = conn, link
        return link

    def drop(self, name: str) -> None:
        self.reap()
        if name in self.conns:
            self.contest.disconnect(self.conns.pop(name))

    def play_out(self, limit: int = 2000) -> None:
        """Every agent on turn passes (six scoreless turns end a game), time goes by."""
        for _ in range(limit):
            self.reap()
            moved = False
            for table in list(self.contest.tables.values()):
                referee = table.referee
                if referee is None or referee.game is None or referee.game.turn is None:
                    continue
                if referee.mode.value == "paused":
                    continue
                name = referee.game.players[referee.game.turn]
                if name in self.conns:
                    self.contest.receive(self.conns[name], PassMove().encode())
                    moved = True
            if not moved:
                if self.contest.state != "running":
                    return
                self.clock.step(0.5)


@pytest.fixture(scope="session")
def make_rig(gcide: Lexicon, inline_journal: Any) -> Callable[..., Rig]:
    """``make_rig(store=None, journal=None, **contest_config)``: a Rig whose games are
    logged inline in a store of its own, unless ``journal`` is given."""

    def make(store: dict[str, Any] | None = None, journal: Any = None, **config: Any) -> Rig:
        return Rig(gcide, journal or inline_journal(), store, **config)

    return make


def _pairings(results: list[dict[str, Any]]) -> Counter[frozenset[str]]:
    return Counter(frozenset(r["players"]) for r in results if len(r["players"]) == 2)


# --- schedules ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8])
@pytest.mark.parametrize("games", [1, 2, 3])
def test_round_robin_meets_everyone_games_times_alternating(n: int, games: int) -> None:
    """Every pairing exactly ``games`` times, first player alternating, nobody twice a round."""
    names = [f"a{i}" for i in range(n)]
    schedule = round_robin(names, games)
    assert len(schedule) == n * (n - 1) // 2 * games
    by_pair: dict[frozenset[str], list[str]] = {}
    for first, second, _ in schedule:
        by_pair.setdefault(frozenset((first, second)), []).append(first)
    assert len(by_pair) == n * (n - 1) // 2
    for firsts in by_pair.values():
        assert len(firsts) == games
        assert all(x != y for x, y in itertools.pairwise(firsts))
    for _, group in itertools.groupby(schedule, key=lambda x: x[2]):
        seen = [p for first, second, _ in group for p in (first, second)]
        assert len(seen) == len(set(seen))


def test_swiss_pairs_avoid_repeats_then_allow_the_fewest() -> None:
    """The best-ranked opponent not met yet; repeats only when nothing else is possible."""
    ranked = ["a", "b", "c", "d"]
    assert swiss_pairs(ranked, {}) == [("a", "b"), ("c", "d")]
    met = {frozenset("ab"): 1, frozenset("cd"): 1}
    assert swiss_pairs(ranked, met) == [("a", "c"), ("b", "d")]
    met.update({frozenset("ac"): 1, frozenset("bd"): 1, frozenset("ad"): 1, frozenset("bc"): 1})
    pairs = swiss_pairs(ranked, met)
    assert sorted(p for pair in pairs for p in pair) == ranked


# --- a whole contest -------------------------------------------------------------------


def test_round_robin_on_two_boards_adds_up(make_rig: Any) -> None:
    """Five agents, two boards, two games a pairing: every pairing twice, W+D+L = games,
    points are the recorded scores, at most two games at once, the end closes with 1000."""
    rig = make_rig(games=2, boards=2, agents=5)
    for i in range(5):
        rig.join(f"agent{i}")
    assert rig.contest.state == "running"
    busiest = 0
    for _ in range(400):
        busiest = max(busiest, sum(t.referee is not None for t in rig.contest.tables.values()))
        rig.play_out(limit=1)
        if rig.contest.state == "finished":
            break
    rig.play_out()
    assert rig.contest.state == "finished"
    assert busiest == 2
    results = rig.contest.results()
    assert set(_pairings(results).values()) == {2}
    assert len(_pairings(results)) == 10
    table = {r["name"]: r for r in rig.console.snapshot()["standings"]}
    for name, row in table.items():
        played = sum(name in r["players"] for r in results)
        assert row["wins"] + row["draws"] + row["losses"] == played == 8
        assert row["games_left"] == 0
        points = sum(
            s
            for players, scores, _ in rig.records
            for p, s in zip(players, scores, strict=True)
            if p == name
        )
        assert row["points"] == points
    assert sum(r["spread"] for r in table.values()) == 0
    assert len(rig.records) == 20
    # Every game was a log, closed as the game was stored; each one replays.
    assert rig.open_logs() == {}
    assert rig.journal.errors == []
    for stored in rig.journal.store.games():
        assert stored.data is not None
        *_, last = records.replay(stored.data, lexicon=rig.lexicon)
        assert list(last.game.scores) == [stored.result["scores"][p] for p in stored.players]
    for link in rig.links.values():
        assert link.closed == (1000, "contest finished")
        starts = [m for m in link.messages() if isinstance(m, Start)]
        ends = [m for m in link.messages() if isinstance(m, EndMessage)]
        assert len(starts) == len(ends) == 8
    assert rig.console.snapshot()["series"] == {
        "games": 20,
        "played": 20,
        "results": [
            {k: r[k] for k in ("game_id", "players", "scores", "winner", "reason")}
            | {"game_id": r["game_id"] or None}
            for r in results
        ],
    }


def test_a_waiting_agent_hears_nothing_until_its_start(make_rig: Any) -> None:
    """Three agents, one board: the third hears only NAME until its game; its stray
    moves are ignored."""
    rig = make_rig(boards=1)
    links = [rig.join(n) for n in ("a", "b", "c")]
    assert rig.console.snapshot()["state"] == "waiting"
    assert rig.console.act("start") == "started"
    playing = [n for n in "abc" if rig.contest.agents[n].table and rig.contest.tables]
    busy = {n for n in "abc" if any(isinstance(m, Start) for m in rig.links[n].messages())}
    assert len(busy) == 2
    [idle] = set("abc") - busy
    rig.contest.receive(rig.conns[idle], PassMove().encode())
    rig.clock.step(5)
    assert rig.links[idle].messages() == [NameRequest()]
    assert playing
    rig.play_out()
    assert rig.contest.state == "finished"
    assert all(len([m for m in x.messages() if isinstance(m, Start)]) == 2 for x in links)


def test_late_and_unknown_names(make_rig: Any) -> None:
    """After the start an unknown name is closed 1008, a connected name 1013; a finished
    contest closes its agents with 1000 and a new start takes who is connected."""
    rig = make_rig(agents=2)
    rig.join("a")
    rig.join("b")
    assert rig.contest.state == "running"
    late = rig.join("c")
    assert late.closed is not None
    assert late.closed[0] == 1008
    twin = FakeLink()
    twin_conn = rig.contest.connect(twin)
    assert twin_conn is not None
    rig.contest.receive(twin_conn, Name("a").encode())
    assert twin.closed is not None
    assert twin.closed[0] == 1013
    rig.play_out()
    assert rig.contest.state == "finished"
    assert rig.links["a"].closed == (1000, "contest finished")
    again = rig.join("a")
    assert again.closed == (1000, "contest finished")
    rig.join("d")
    rig.join("e")
    assert rig.console.act("start") == "started"
    rig.play_out()
    assert [r["players"] for r in rig.contest.results()] == [["d", "e"]]


# --- drops, absentees, restart -------------------------------------------------------


def _game_of(rig: Rig, name: str) -> Referee:
    table = rig.contest.agents[name].table
    assert table is not None
    assert table.referee is not None
    return table.referee


def test_a_dropped_agent_resumes_within_the_window(make_rig: Any) -> None:
    """A drop mid-game: END 2 to the other; the agent is back in time and both get
    START from the checkpoint; the game goes on on the same board."""
    rig = make_rig(agents=2)
    rig.join("a")
    rig.join("b")
    referee = _game_of(rig, "a")
    game = referee.game
    assert game is not None
    mover = game.players[game.turn or 0]
    other = "b" if mover == "a" else "a"
    rig.contest.receive(rig.conns[mover], PassMove().encode())
    rig.drop(other)
    assert rig.links[mover].messages()[-1] == EndMessage(EndReason.CONNECTION_ERROR, 0, 0)
    assert rig.console.snapshot()["boards"] == []
    rig.clock.step(15)
    back = rig.join(other)
    assert isinstance(back.messages()[-1], Start)
    assert isinstance(rig.links[mover].messages()[-1], Start)
    rig.clock.step(30)  # the window's timer is off
    assert _game_of(rig, "a") is referee
    rig.play_out()
    [result] = rig.contest.results()
    assert result["reason"] == "ALL_TILES_USED"


def test_a_dropped_agent_that_stays_away_loses_by_disconnect(make_rig: Any) -> None:
    """After the resume window the game ends as the spec's disconnect end: the absent
    agent cannot win; the scores are the checkpoint's."""
    rig = make_rig(agents=2, games=2)
    rig.join("a")
    rig.join("b")
    rig.drop("b")
    rig.clock.step(19.9)
    assert rig.contest.results() == []
    rig.clock.step(0.2)
    [result] = rig.contest.results()
    assert (result["reason"], result["winner"]) == ("CONNECTION_ERROR", "a")
    assert rig.records[-1][2] == "CONNECTION_ERROR"
    # The second game: b never shows, a forfeit after show_timeout.
    rig.clock.step(29)
    assert len(rig.contest.results()) == 1
    rig.clock.step(2)
    results = rig.contest.results()
    assert results[-1]["reason"] == "FORFEIT"
    assert results[-1]["winner"] == "a"
    assert rig.contest.state == "finished"
    standings = {r["name"]: r for r in rig.contest.standings()}
    assert (standings["a"]["wins"], standings["b"]["losses"]) == (2, 2)


def test_restart_goes_on_where_it_was(make_rig: Any, inline_journal: Any) -> None:
    """The contest and its running game survive a restart: same schedule, the game
    resumes from its checkpoint when both are back, the rest is played."""
    store: dict[str, Any] = {}
    journal = inline_journal()
    rig = make_rig(store, journal, games=1, boards=1, agents=3)
    for n in "abc":
        rig.join(n)
    rig.play_out(limit=6)  # six passes: the first game is over
    first_results = rig.contest.results()
    assert len(first_results) == 1
    rig.clock.step(1.5)
    referee = next(t.referee for t in rig.contest.tables.values() if t.referee is not None)
    assert referee is not None
    game = referee.game
    assert game is not None
    players, racks = game.players, game.racks
    rig.contest.receive(rig.conns[players[game.turn or 0]], PassMove().encode())
    rig.contest.shutdown()
    for conn in list(rig.conns.values()):
        rig.contest.disconnect(conn)
    again = make_rig(store, journal, games=1, boards=1, agents=3)
    assert again.contest.state == "running"
    assert again.contest.results() == first_results
    for n in players:
        again.join(n)
    resumed = _game_of(again, players[0])
    assert resumed.game is not None
    assert resumed.game.racks == racks
    assert resumed.game.players == players
    assert resumed.game_id == referee.game_id  # the same game, in the same log
    again.join(next(n for n in "abc" if n not in players))
    again.play_out()
    assert again.contest.state == "finished"
    assert set(_pairings(again.contest.results()).values()) == {1}
    assert len(again.contest.results()) == 3


def test_restart_with_nobody_back_ends_the_game_by_the_window(
    make_rig: Any, inline_journal: Any
) -> None:
    """An interrupted game whose agents never return ends when the window is over."""
    store: dict[str, Any] = {}
    journal = inline_journal()
    rig = make_rig(store, journal, agents=2)
    rig.join("a")
    rig.join("b")
    rig.contest.shutdown()
    again = make_rig(store, journal, agents=2)
    again.clock.step(21)
    [result] = again.contest.results()
    assert result["reason"] == "CONNECTION_ERROR"
    assert again.contest.state == "finished"
    assert rig.open_logs() == {}  # the game's log is closed
    assert again.records[-1][2] == "CONNECTION_ERROR"


# --- admin ----------------------------------------------------------------------------


def test_pause_resume_withdraw_abort(make_rig: Any) -> None:
    """Pause stops every clock and new games; withdraw stops and loses the running game
    and forfeits the rest; abort stops everything and closes everyone."""
    rig = make_rig(boards=2, agents=4)
    for n in "abcd":
        rig.join(n)
    assert rig.console.act("pause") == "paused"
    with pytest.raises(ConsoleError):
        rig.console.act("pause")
    assert rig.console.snapshot()["state"] == "paused"
    assert all(not b["clocks"]["running"] for b in rig.console.snapshot()["boards"])
    rig.clock.step(500)  # no clock runs out while paused
    assert rig.contest.results() == []
    assert rig.console.act("resume") == "resumed"
    with pytest.raises(ConsoleError):
        rig.console.act("withdraw", name="nobody")
    with pytest.raises(ConsoleError):
        rig.console.act("withdraw")
    with pytest.raises(ConsoleError):
        rig.console.act("swap")
    assert rig.console.act("withdraw", name="a") == "a withdrawn"
    assert rig.links["a"].closed == (1008, "withdrawn by the admin")
    results = rig.contest.results()
    assert results[0]["reason"] == "WITHDRAWN"
    assert "a" not in results[0]["winner"]
    assert all(r["winner"] != "a" for r in results)
    assert sum("a" in r["players"] for r in results) == 3  # one stopped, two forfeited
    standings = {r["name"]: r for r in rig.console.snapshot()["standings"]}
    assert standings["a"]["losses"] == 3
    assert standings["a"]["withdrawn"] is True
    assert rig.console.act("abort") == "aborted"
    assert rig.contest.state == "aborted"
    for n in "bcd":
        assert rig.links[n].closed == (1000, "contest aborted")
    with pytest.raises(ConsoleError):
        rig.console.act("abort")
    assert rig.open_logs() == {}
    assert rig.journal.errors == []


def test_a_never_seen_agent_forfeits_each_game(make_rig: Any) -> None:
    """An agent in the roster that is gone when its games come forfeits them one by one."""
    rig = make_rig(boards=1)
    for n in "abc":
        rig.join(n)
    rig.drop("c")
    rig.console.act("start")  # c left before the start: not in the contest
    assert rig.contest.roster == ["a", "b"]
    rig2 = make_rig(boards=1, agents=3)
    for n in "abc":
        rig2.join(n)
    game = rig2.contest.games[0]
    idle = next(n for n in "abc" if n not in game.players)
    rig2.drop(idle)
    rig2.play_out()
    results = rig2.contest.results()
    forfeits = [r for r in results if r["reason"] == "FORFEIT"]
    assert len(forfeits) == 2
    assert all(idle not in r["winners"] for r in forfeits)
    assert rig2.contest.state == "finished"


# --- Swiss -----------------------------------------------------------------------------


def test_swiss_rounds_without_repeats_and_a_bye(make_rig: Any) -> None:
    """Five agents, three rounds: each round pairs by standings, nobody meets twice,
    one bye a round (never twice to the same agent)."""
    rig = make_rig(format="swiss", rounds=3, boards=2, agents=5)
    for i in range(5):
        rig.join(f"s{i}")
    rig.play_out()
    assert rig.contest.state == "finished"
    results = rig.contest.results()
    assert max(_pairings(results).values()) == 1
    byes = [r["players"][0] for r in results if r["reason"] == "BYE"]
    assert len(byes) == len(set(byes)) == 3
    assert len(results) == 3 * 3
    for row in rig.contest.standings():
        assert row["wins"] + row["draws"] + row["losses"] == 3


# --- the console over a contest -------------------------------------------------------


def test_contest_console_snapshot_is_json_and_notifies(make_rig: Any) -> None:
    """Boards, agents with addresses and boards, standings; subscribers hear the moves."""
    import json

    rig = make_rig(boards=2, agents=4)
    heard: list[int] = []
    rig.console.subscribe(lambda: heard.append(len(rig.console.snapshot()["boards"])))
    for n in "abcd":
        rig.join(n)
    assert heard[-1] == 2
    snap = rig.console.snapshot()
    assert snap["mode"] == "round-robin"
    assert snap["state"] == "running"
    assert {b["board"] for b in snap["boards"]} == {1, 2}
    assert all(a["connected"] and a["board"] in (1, 2) for a in snap["agents"])
    assert snap["series"]["games"] == 6
    json.dumps(public(snap))
    count = len(heard)
    rig.play_out(limit=1)
    assert len(heard) > count


# --- hostile input -----------------------------------------------------------------------

STEP = st.one_of(
    st.tuples(st.just("bytes"), st.integers(0, 4), st.binary(max_size=12)),
    st.tuples(st.just("pass"), st.integers(0, 4), st.none()),
    st.tuples(st.sampled_from(["drop", "join"]), st.integers(0, 4), st.none()),
    st.tuples(st.just("time"), st.integers(0, 4), st.floats(0, 25)),
    st.tuples(
        st.sampled_from(["pause", "resume", "abort", "withdraw", "start"]),
        st.integers(0, 4),
        st.none(),
    ),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=40))
def test_random_input_never_breaks_the_contest(make_rig: Any, steps: list[Any]) -> None:
    """Random bytes, drops, reconnects, time and admin actions: nothing raises, every
    byte sent decodes, an agent is on at most one board, boards ≤ B."""
    rig = make_rig(boards=2, agents=4)
    names = [f"x{i}" for i in range(5)]
    for n in names[:4]:
        rig.join(n)
    for kind, who, arg in steps:
        name = names[who]
        if kind == "bytes" and name in rig.conns:
            rig.contest.receive(rig.conns[name], arg)
        elif kind == "pass" and name in rig.conns:
            rig.contest.receive(rig.conns[name], PassMove().encode())
        elif kind == "drop" and name in rig.conns:
            rig.drop(name)
        elif kind == "join" and name not in rig.conns:
            rig.join(name)
        elif kind == "time":
            rig.clock.step(arg)
        elif kind in ("pause", "resume", "abort", "start"):
            with contextlib.suppress(ConsoleError):
                rig.console.act(kind)
        elif kind == "withdraw":
            with contextlib.suppress(ConsoleError):
                rig.console.act("withdraw", name=name)
        assert len(rig.contest.tables) <= 2
        seated = [p for t in rig.contest.tables.values() for p in t.game.players]
        assert len(seated) == len(set(seated))
        for link in rig.links.values():
            for data in link.sent:
                decode_server(data)
        public(rig.console.snapshot())

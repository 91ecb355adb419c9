"""Scrabble over CMPN402 in the terminal: a human at the keyboard as one of the two agents.

End to end against meeple's built-in agent on a real in-process referee (127.0.0.1,
port 0) whose clocks run on a virtual clock: moves typed, a phony that the agent
challenges, a good play we challenge, the challenge prompt answered by key and by
command, the clocks as the referee reports them, and the game cut short by the total
time running out; the app's final scores are the stored record's. Then the screen
with the clocks and the challenge prompt as a snapshot (scripted events, fixed time).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.patience import PATIENCE

from meeple.ai.scrabble import ranked_moves
from meeple.clients.cmpn402 import BuiltinAgent, play
from meeple.games.scrabble.board import Board, Direction, format_square
from meeple.games.scrabble.errors import ScrabbleError, WordsNotInLexicon
from meeple.games.scrabble.gcg import parse_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.games.scrabble.moves import Placement
from meeple.games.scrabble.rules import validate_play
from meeple.games.scrabble.tiles import ENGLISH
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import ListenerConfig, ServerConfig
from meeple.server.store.database import Store
from meeple.tui.connection import ConnectOptions, MoveError
from meeple.tui.scrabble.app import ScrabbleApp, format_ms
from meeple.tui.scrabble.cmpn402 import OPPONENT, connect
from meeple.tui.scrabble.events import (
    AnswerChallenge,
    BagCount,
    ChallengeOffered,
    Clocks,
    RackChanged,
    ScrabbleEvent,
    ScrabbleMove,
    Started,
    TurnChanged,
    Welcomed,
    WordPlayed,
)
from meeple.tui.scrabble.table import Phase

SIZE = (110, 34)
PLAYER_S, TOTAL_S, CHALLENGE_S = 600.0, 1200.0, 10.0
THINK_S = 20.0  # virtual seconds we let run on our clock before each move
SNAPSHOTS = Path(__file__).parent / "snapshots"


class Scripted:
    """A connection whose events the test pushes and whose sent moves it keeps."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[ScrabbleEvent] = asyncio.Queue()
        self.sent: list[ScrabbleMove] = []

    async def events(self) -> AsyncIterator[ScrabbleEvent]:
        while True:
            yield await self.queue.get()

    async def send(self, move: ScrabbleMove) -> None:
        if not isinstance(move, AnswerChallenge):
            raise MoveError("only challenge answers here")
        self.sent.append(move)

    async def close(self) -> None:
        return None

    def push(self, *events: ScrabbleEvent) -> None:
        for e in events:
            self.queue.put_nowait(e)


async def settle(pilot: Any) -> None:
    for _ in range(3):
        await pilot.pause()


def check_snapshot(app: ScrabbleApp, name: str) -> None:
    """The screen equals the stored SVG (written anew with MEEPLE_UPDATE_SNAPSHOTS=1)."""
    svg = app.export_screenshot(title=name)
    path = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("MEEPLE_UPDATE_SNAPSHOTS"):
        path.write_text(svg, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with MEEPLE_UPDATE_SNAPSHOTS=1"
    assert svg == path.read_text(encoding="utf-8"), f"screen differs from {path.name}"


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = PATIENCE) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out waiting for the app"
        await pilot.pause(0.01)


@pytest.fixture
async def referee(
    tmp_path: Path, gcide: Lexicon
) -> AsyncIterator[tuple[MeepleServer, VirtualClock]]:
    """A server with only the CMPN402 referee, on port 0, its clocks on a virtual clock."""
    base = ServerConfig(database=str(tmp_path / "meeple.sqlite3"))
    listeners = {name: ListenerConfig(0, enabled=(name == "cmpn402")) for name in base.listeners}
    settings = replace(
        base.cmpn402,
        admin_token="t0ken",
        player_time=PLAYER_S,
        total_time=TOTAL_S,
        challenge_time=CHALLENGE_S,
    )
    clock = VirtualClock()
    server = MeepleServer(
        replace(base, listeners=listeners, cmpn402=settings), clock=clock, rng=random.Random(11)
    )
    server.services.lexicon = gcide
    await server.start()
    yield server, clock
    await server.stop()


def phony_command(board: Board, rack: str, lexicon: Lexicon) -> str | None:
    """A play that breaks no rule but forms a word not in ``lexicon``: two tiles through
    the centre on an empty board, else one tile beside a tile on the board."""
    letters = sorted(set(rack) - {"?"})
    candidates: list[list[Placement]] = []
    if board.is_empty:
        candidates = [[Placement(7, 7, a), Placement(7, 8, b)] for a in letters for b in letters]
    else:
        for x, y, _ in board.tiles():
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if board.on_board(x + dx, y + dy) and board.is_empty_at(x + dx, y + dy):
                    candidates += [[Placement(y + dy, x + dx, a)] for a in letters]
    for tiles in candidates:
        if len(tiles) == 2 and tiles[0].tile == tiles[1].tile and rack.count(tiles[0].tile) < 2:
            continue
        try:
            validate_play(board, tiles, lexicon=lexicon)
        except WordsNotInLexicon:
            main = validate_play(board, tiles).main_word
            if main.text.isupper():
                return f"{format_square(main.x, main.y)} {main.direction.value} {main.text}"
        except ScrabbleError:
            continue
    return None


def best_command(app: ScrabbleApp, lexicon: Lexicon) -> str:
    moves = ranked_moves(app.table.board, app.table.rack, lexicon, ENGLISH)
    if not moves:
        return "pass"
    m = moves[0]
    return f"{format_square(m.x, m.y)} {m.direction.value} {m.word}"


@pytest.mark.parametrize("limit", [None, 6], ids=["whole-game", "time-runs-out"])
async def test_a_game_against_the_builtin_agent(
    referee: tuple[MeepleServer, VirtualClock], gcide: Lexicon, limit: int | None
) -> None:
    """To the end (limit None), or ``limit`` moves and then the clocks run out; either way
    the app's final scores and board are the referee's stored record."""
    server, clock = referee
    port = server.ports["cmpn402"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"), protocol="cmpn402")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.QUEUED)
        bot = asyncio.create_task(play(f"ws://127.0.0.1:{port}", "bot", BuiltinAgent(gcide)))
        await until(pilot, lambda: app.table.phase is Phase.PLAYING)
        assert set(app.table.players) == {"human", OPPONENT}
        t = app.table
        assert t.clocks is not None
        assert (t.clocks.player_ms, t.clocks.total_ms) == (PLAYER_S * 1000, TOTAL_S * 1000)
        assert t.clocks.total_running
        clocks_line = str(app.query_one("#clocks").render())
        assert re.fullmatch(r"your time (10:00|9:5\d) ▶   game (20:00|19:5\d) ▶\s*", clocks_line)

        moves = offers = 0
        phony_tried = challenged = False
        spent = 0.0  # virtual seconds we let run on our own clock
        while t.phase is Phase.PLAYING and (limit is None or moves < limit):
            await until(
                pilot, lambda: t.my_turn or t.challenge is not None or t.phase is not Phase.PLAYING
            )
            if t.phase is not Phase.PLAYING:
                break
            log_size = len(t.log)
            if t.challenge is not None:
                offer = t.challenge
                status = str(app.query_one("#status").render())
                assert f"{OPPONENT} plays" in status
                # The app counts down on the real clock: seconds may pass on a busy
                # machine before the status is read (6 of them at load 20, issue 33).
                shown = re.search(r"\b(\d+) s left", status)
                assert shown is not None, status
                assert 0 <= int(shown.group(1)) <= int(CHALLENGE_S), status
                assert offer.window_ms == CHALLENGE_S * 1000
                assert not t.clocks.player_running
                assert not t.clocks.total_running
                offers += 1
                if not challenged:  # the agent's word is good: we lose the turn
                    await pilot.press("f5")
                    challenged = True
                    await until(pilot, lambda: any("challenge lost" in x for x in t.log))
                else:
                    command = app.query_one("#command")
                    command.value = "accept"  # type: ignore[attr-defined]
                    await pilot.press("enter")
                    await until(pilot, lambda o=offer: t.challenge is not o)  # type: ignore[misc]
                # Either way the play stands: it is logged with its score.
                assert any(
                    x.startswith(f"{OPPONENT}:") and x.endswith(f" {offer.score}")
                    for x in t.log[log_size:]
                ), t.log[log_size:]
                continue
            # Our turn: 20 s go by on our clock first.
            before = t.clocks.player_ms
            await clock.advance(THINK_S)
            spent += THINK_S
            text = None if phony_tried else phony_command(t.board, t.rack, gcide)
            phony_tried = True
            command = app.query_one("#command")
            command.value = text or best_command(app, gcide)  # type: ignore[attr-defined]
            await pilot.press("enter")
            moves += 1
            await until(pilot, lambda n=log_size: len(t.log) > n)  # type: ignore[misc]
            assert not t.log[log_size].startswith("refused"), t.log
            if text is not None:
                await until(pilot, lambda: any("play withdrawn" in x for x in t.log))
            # The referee charged those seconds: every later report of our time is lower.
            await until(
                pilot,
                lambda b=before: (
                    t.clocks.player_ms <= b - THINK_S * 1000  # type: ignore[misc]
                    or t.phase is not Phase.PLAYING
                ),
            )

        assert offers >= 2
        assert any("play withdrawn" in line for line in t.log)  # the agent caught the phony
        if limit is not None:  # the clocks run out: END reason 1, scores as they stand
            assert t.clocks.player_ms <= PLAYER_S * 1000 - spent * 1000
            await until(pilot, lambda: t.my_turn or t.challenge is not None)
            await clock.advance(TOTAL_S)
        await until(pilot, lambda: t.phase is Phase.OVER)
        assert t.result is not None
        if limit is None:
            assert t.result.reason == "the game is over"
        else:
            assert t.result.reason == "the game ended: a clock ran out"
        assert "Game over" in str(app.query_one("#status").render())
        assert t.clocks is not None
        assert not t.clocks.player_running
        assert not t.clocks.total_running
        results = await asyncio.wait_for(bot, PATIENCE)
        assert results[0].score == t.scores[OPPONENT]
        assert results[0].opponent_score == t.scores["human"]
        [record] = Store(server.config.database).games()
        assert record.result["scores"] == {"human": t.scores["human"], "bot": t.scores[OPPONENT]}
        # Every play the referee stored is on our board, and nothing else.
        assert t.board.rows() == parse_gcg(record.record).board().rows()


async def test_a_move_out_of_turn_and_chat_are_refused_locally(
    referee: tuple[MeepleServer, VirtualClock], gcide: Lexicon
) -> None:
    """Nothing is sent that the state does not allow; F5 without a play offered says so."""
    server, _ = referee
    port = server.ports["cmpn402"]
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"), protocol="cmpn402")
    async with app.run_test(size=SIZE) as pilot:
        bot = asyncio.create_task(play(f"ws://127.0.0.1:{port}", "bot", BuiltinAgent(gcide)))
        await until(pilot, lambda: app.table.phase is Phase.PLAYING)
        command = app.query_one("#command")
        command.value = "say hello"  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert "CMPN402 has no chat" in str(app.query_one("#message").render())
        await pilot.press("f5")
        assert "no play to challenge" in str(app.query_one("#message").render())
        if not app.table.my_turn:
            command.value = "pass"  # type: ignore[attr-defined]
            await pilot.press("enter")
            assert "wait for your turn" in str(app.query_one("#message").render())
        bot.cancel()
        with pytest.raises(asyncio.CancelledError):
            await bot


async def test_a_full_referee_refuses_a_third_agent(
    referee: tuple[MeepleServer, VirtualClock], gcide: Lexicon
) -> None:
    server, _ = referee
    port = server.ports["cmpn402"]
    bots = [  # games=99: after their game they stay seated, waiting for a next START
        asyncio.create_task(
            play(f"ws://127.0.0.1:{port}", f"bot{i}", BuiltinAgent(gcide), games=99)
        )
        for i in range(2)
    ]
    referee_ = server.listeners["cmpn402"].referee  # type: ignore[attr-defined]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 15
    while sorted(filter(None, referee_.status()["seats"])) != ["bot0", "bot1"]:  # both named
        assert loop.time() < deadline, referee_.status()
        await asyncio.sleep(0.02)
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"), protocol="cmpn402")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.phase is Phase.CLOSED)
        assert "did not seat us" in app.table.closed_reason
    for b in bots:
        b.cancel()
    await asyncio.gather(*bots, return_exceptions=True)


async def test_clocks_and_challenge_prompt_screen() -> None:
    """The clocks (ours running, red under a minute) and the challenge prompt counting down."""
    conn = Scripted()
    now = [100.0]

    async def connector(options: ConnectOptions) -> Scripted:
        return conn

    app = ScrabbleApp(
        connector, ConnectOptions("127.0.0.1", 8765, "ann"), protocol="cmpn402", now=lambda: now[0]
    )
    async with app.run_test(size=(100, 32)) as pilot:
        conn.push(
            Welcomed("ann", chat=False),
            Started(("ann", OPPONENT)),
            RackChanged("AEIRST?"),
            BagCount(86),
            TurnChanged("ann", mine=True),
            Clocks(600_000, 1_200_000, True, True),
        )
        await settle(pilot)
        now[0] += 2.5
        app._tick()
        assert "your time 9:58" in str(app.query_one("#clocks").render())
        conn.push(
            WordPlayed("ann", 7, 7, Direction.ACROSS, "STAIR", 12),
            TurnChanged(OPPONENT, mine=False),
            Clocks(45_000, 1_100_000, False, True),
            Clocks(45_000, 1_100_000, False, False),
            ChallengeOffered(OPPONENT, 11, 5, Direction.DOWN, ("QRS", "RS"), 24, 10_000),
        )
        await settle(pilot)
        now[0] += 3.2
        app._tick()
        await settle(pilot)
        status = str(app.query_one("#status").render())
        assert "opponent plays L6 QRS for 24 (also RS)" in status
        assert "7 s left" in status
        assert "your time 0:45" in str(app.query_one("#clocks").render())
        check_snapshot(app, "scrabble_cmpn402_challenge")
        await pilot.press("f6")
        await settle(pilot)
        assert conn.sent == [AnswerChallenge(False)]


def test_format_ms() -> None:
    assert format_ms(600_000) == "10:00"
    assert format_ms(59_999) == "1:00"
    assert format_ms(59_000) == "0:59"
    assert format_ms(1) == "0:01"
    assert format_ms(-5) == "0:00"


async def test_the_window_runs_out_and_a_dropped_agent_resumes(
    referee: tuple[MeepleServer, VirtualClock], gcide: Lexicon
) -> None:
    """A prompt left unanswered until the window closes: the play stands and we move. The
    agent then drops: END reason 2 in words; it comes back and the game resumes from the
    checkpoint with the same board and scores on screen."""
    server, clock = referee
    port = server.ports["cmpn402"]
    uri = f"ws://127.0.0.1:{port}"
    app = ScrabbleApp(connect, ConnectOptions("127.0.0.1", port, "human"), protocol="cmpn402")
    async with app.run_test(size=SIZE) as pilot:
        t = app.table
        bot = asyncio.create_task(play(uri, "bot", BuiltinAgent(gcide)))
        await until(pilot, lambda: t.phase is Phase.PLAYING)
        if t.my_turn:  # let the agent play first
            app.query_one("#command").value = best_command(app, gcide)  # type: ignore[attr-defined]
            await pilot.press("enter")
        await until(pilot, lambda: t.challenge is not None)
        offer = t.challenge
        assert offer is not None
        await clock.advance(CHALLENGE_S + 0.1)
        await until(pilot, lambda: t.challenge is None and t.my_turn)
        assert "the challenge time ran out: the play stands" in t.log
        assert t.scores[OPPONENT] >= offer.score
        assert t.clocks is not None
        assert t.clocks.player_running
        # F6 now: no window is open, nothing is sent.
        await pilot.press("f6")
        assert "no play to challenge" in str(app.query_one("#message").render())

        board, scores = t.board.rows(), dict(t.scores)
        bot.cancel()
        with pytest.raises(asyncio.CancelledError):
            await bot
        await until(pilot, lambda: t.phase is Phase.OVER)
        assert t.result is not None
        assert "lost its connection" in t.result.reason
        bot = asyncio.create_task(play(uri, "bot", BuiltinAgent(gcide)))
        await until(pilot, lambda: t.phase is Phase.PLAYING)
        assert t.board.rows() == board
        assert t.scores == scores
        assert t.my_turn
        bot.cancel()
        with pytest.raises(asyncio.CancelledError):
            await bot

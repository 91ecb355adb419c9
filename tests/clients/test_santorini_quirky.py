"""The AM27 bot against quirky servers (issue 22, items 13 and 14): it moves only as the
server's update lists (Athena), never waits for ever for an answer the server does not
send, respects ``SERVERSTATE open: false`` and fails loudly when the server hangs up."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from tests.clients.peers import Chunking, chunkings, serve, write_in_pieces
from tests.patience import GAME_PATIENCE, PATIENCE

from meeple.clients.santorini import GameResult, SantoriniClientError, play_santorini
from meeple.clients.watch import Patience
from meeple.protocols.santorini.messages import (
    Build,
    Cell,
    CellState,
    EndGame,
    God,
    GodInit,
    GodList,
    Lose,
    Move,
    Pass,
    Players,
    Register,
    ServerMessage,
    ServerState,
    Update,
)
from meeple.protocols.santorini.session import ServerSession
from meeple.server.clock import VirtualClock

M, F = Cell(2, 2), Cell(0, 0)  # the bot's workers
TOWER = Cell(2, 3)  # level 3 next to M, which stands on level 2: a winning step up


def _board(tower: bool) -> tuple[tuple[Cell, CellState], ...]:
    board = [
        (M, CellState((2, 1, 0) if tower else (0,), "bot", "M")),
        (F, CellState((0,), "bot", "F")),
        (Cell(4, 4), CellState((0,), "rival", "M")),
        (Cell(4, 0), CellState((0,), "rival", "F")),
    ]
    if tower:
        board.append((TOWER, CellState((3, 2, 1, 0))))
    return tuple(board)


def _neighbours(c: Cell) -> tuple[Cell, ...]:
    return tuple(
        Cell(c.row + dr, c.column + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= c.row + dr < 5 and 0 <= c.column + dc < 5
    )


@dataclass
class Peer:
    scenario: str  # "athena" | "silent-first" | "god-ignored" | "closed" | "open-false"
    chunking: Chunking = ()
    heard: list[object] = field(default_factory=list)
    ignored: list[object] = field(default_factory=list)


async def quirky_am27(
    peer: Peer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    session = ServerSession(framing="lines")

    async def out(*messages: ServerMessage) -> None:
        data = b"".join(session.send(m) for m in messages)
        await write_in_pieces(writer, data, peer.chunking)

    async def commands() -> list[object]:
        data = await reader.read(65536)
        if not data:
            raise ConnectionResetError("the bot hung up")
        return [e for e in session.receive_data(data) if type(e).__name__ != "Ping"]

    if peer.scenario == "open-false":
        # This server gives a second connection open: false while a game is set up,
        # then closes it a moment later; it never reads a REGISTER from it.
        await out(ServerState(open=False, active=True))
        await asyncio.sleep(0.3)
        peer.heard += await _drain(session, reader)
        return
    await out(ServerState(open=True, active=False))
    while not any(isinstance(e, Register) for e in peer.heard):
        peer.heard += await commands()
    if peer.scenario == "god-ignored":
        # The bot picks a god; the server ignores its first pick without a word.
        await out(GodList("bot", (God("Apollo"), God("Athena"), God("Pan"))))
        while True:
            for command in await commands():
                peer.heard.append(command)
                if isinstance(command, GodInit) and not peer.ignored:
                    peer.ignored.append(command)
                elif isinstance(command, GodInit):
                    await out(EndGame("rival", True))
                    return
    await out(Players("rival", (("bot", "Apollo"), ("rival", "Athena"))))
    tower = peer.scenario == "athena"
    # Athena moved up last turn: the bot's worker may not move up, so the server leaves
    # the tower out of the cells it lists (ERRATA: it would ignore that move unanswered).
    reachable = (
        (F, (Cell(0, 1), Cell(1, 0), Cell(1, 1))),
        (M, tuple(c for c in _neighbours(M) if c != TOWER)),
    )
    await out(Update("bot", _board(tower), reachable, can_undo=False))
    if peer.scenario == "closed":
        return  # the server goes away in the middle of the game
    while True:
        for command in await commands():
            peer.heard.append(command)
            if isinstance(command, Move):
                listed = any(
                    w == command.source and command.destination in cells for w, cells in reachable
                )
                first = peer.scenario == "silent-first" and not peer.ignored
                if not listed or first:
                    peer.ignored.append(command)  # no answer at all, as ERRATA says
                    continue
                d = command.destination
                builds = ((d, tuple((c, (1,)) for c in _neighbours(d) if c not in (M, F))),)
                await out(
                    Update(
                        "bot",
                        ((d, CellState((0,), "bot", "M" if command.source == M else "F")),),
                        buildable=builds,
                    )
                )
            elif isinstance(command, Build):
                await out(Update("bot", (), can_pass=True))
            elif isinstance(command, Pass):
                await out(Update("rival", ()), EndGame("rival", True))
                return


async def _drain(session: ServerSession, reader: asyncio.StreamReader) -> list[object]:
    heard: list[object] = []
    while True:
        try:
            data = await asyncio.wait_for(reader.read(65536), 0.05)
        except TimeoutError:
            return heard
        if not data:
            return heard
        heard += [e for e in session.receive_data(data) if type(e).__name__ != "Ping"]


async def _play(peer: Peer, **options: object) -> list[GameResult]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await quirky_am27(peer, reader, writer)

    async with serve(handle) as port:
        return await asyncio.wait_for(
            play_santorini(
                "127.0.0.1", port, "bot", gods=True, seed=3, ping_interval=0.2, **options
            ),  # type: ignore[arg-type]
            GAME_PATIENCE,
        )


@pytest.mark.parametrize("search", [True, False])
def test_athena_moves_only_as_the_update_lists(search: bool) -> None:
    """The board shows a winning step up that the update does not list (Athena moved up):
    the bot never sends it, and plays its turn to the end."""
    peer = Peer("athena")
    results = asyncio.run(_play(peer, search=search))
    assert [r.winner for r in results] == ["rival"]
    assert peer.ignored == []
    assert not any(isinstance(c, Move) and c.destination == TOWER for c in peer.heard)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunking=chunkings())
def test_a_command_the_server_ignores_is_given_up(chunking: Chunking) -> None:
    """The server ignores the bot's first move without a word: after the answer timeout
    the bot re-reads the last update and moves otherwise; the game goes on to its end,
    however the server's bytes are cut."""
    peer = Peer("silent-first", chunking)
    results = asyncio.run(_play(peer, answer_timeout=0.2))
    assert len(results) == 1
    moves = [c for c in peer.heard if isinstance(c, Move)]
    assert len(moves) == 2
    assert moves[0] != moves[1]
    assert peer.ignored == moves[:1]


def test_an_ignored_god_choice_is_given_up() -> None:
    """The set-up too: a GODINIT the server never answers is taken back after the answer
    timeout, and the bot picks another god from the last GODLISTMESSAGE."""
    peer = Peer("god-ignored")
    results = asyncio.run(_play(peer, answer_timeout=0.2))
    assert len(results) == 1
    picks = [c for c in peer.heard if isinstance(c, GodInit)]
    assert len(picks) == 2
    assert picks[0] != picks[1]


def test_open_false_is_not_a_registration() -> None:
    """SERVERSTATE open: false: the bot does not register, and the close that follows is
    a failure that says why."""
    peer = Peer("open-false")
    with pytest.raises(SantoriniClientError, match="open: false"):
        asyncio.run(_play(peer))
    assert not any(isinstance(c, Register) for c in peer.heard)


def test_a_closed_connection_mid_game_is_a_failure() -> None:
    """The server hangs up in the middle of the game: an error, not an empty success."""
    peer = Peer("closed")
    with pytest.raises(SantoriniClientError, match="after 0 of 1 games"):
        asyncio.run(_play(peer))


def test_the_cli_exits_non_zero_with_a_message() -> None:
    """``meeple bot santorini`` against a server that is not open: exit 1, one line why."""
    peer = Peer("open-false")

    async def scenario() -> tuple[int, bytes]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await quirky_am27(peer, reader, writer)

        async with serve(handle) as port:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "meeple",
                "bot",
                "santorini",
                "--port",
                str(port),
                stderr=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(proc.communicate(), GAME_PATIENCE)
            assert proc.returncode is not None
            return proc.returncode, err

    code, err = asyncio.run(scenario())
    assert code == 1
    assert b"open: false" in err


# --- issue 31: a server that sends the loser no ENDGAME ----------------------------------


@dataclass
class Referee:
    """A server whose games end for the bot with its LOSE: it sends the loser nothing
    more (AM27 §4.2.6 does not ask it to) and keeps the connection open."""

    games: int = 0
    loses: list[Lose] = field(default_factory=list)
    lost: asyncio.Event = field(default_factory=asyncio.Event)


async def no_endgame_to_the_loser(
    referee: Referee, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    session = ServerSession(framing="lines")
    writer.write(session.send(ServerState(open=True, active=False)))
    heard: list[object] = []
    while not any(isinstance(e, Register) for e in heard):
        data = await reader.read(65536)
        if not data:
            return
        heard += session.receive_data(data)
    referee.games += 1
    # The bot's workers are walled in by domes: no move at all, so it must LOSE.
    walls = tuple(
        (c, CellState((4, 0))) for c in (*_neighbours(F), *_neighbours(Cell(4, 4))) if c != F
    )
    board = (
        (F, CellState((0,), "bot", "F")),
        (Cell(4, 4), CellState((0,), "bot", "M")),
        (Cell(2, 2), CellState((0,), "rival", "M")),
        (Cell(2, 0), CellState((0,), "rival", "F")),
        *walls,
    )
    writer.write(
        session.send(Players("rival", (("bot", "Atheist"), ("rival", "Atheist"))))
        + session.send(Update("bot", board))
    )
    while data := await reader.read(65536):
        for event in session.receive_data(data):
            if isinstance(event, Lose):
                referee.loses.append(event)
                referee.lost.set()  # and not a word more


@pytest.mark.parametrize("games", [1, 2])
async def test_no_endgame_after_our_lose(games: int, caplog: pytest.LogCaptureFixture) -> None:
    """The bot LOSEs and the server says nothing more: after the answer timeout (virtual
    time) the game is over for the bot, and a next game is played on a fresh connection
    (it used to wait until it was killed)."""
    clock = VirtualClock()
    referee = Referee()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await no_endgame_to_the_loser(referee, reader, writer)

    caplog.set_level(logging.WARNING, logger="meeple.clients.santorini")
    async with serve(handle) as port:
        bot = asyncio.create_task(
            play_santorini(
                "127.0.0.1",
                port,
                "bot",
                games=games,
                seed=3,
                answer_timeout=5,
                patience=Patience(10, 60, clock),
            )
        )
        for game in range(games):
            await asyncio.wait_for(referee.lost.wait(), PATIENCE)
            referee.lost.clear()
            await clock.advance(4.9)
            assert len(referee.loses) == game + 1
            assert not bot.done()
            await clock.advance(0.1)
        results = await asyncio.wait_for(bot, PATIENCE)
    assert [(r.winner, r.ended_by) for r in results] == [(None, "bot")] * games
    assert referee.games == games
    assert referee.loses == [Lose("bot")] * games
    assert "no ENDGAME in 5 s after our LOSE: the game is over for us" in caplog.text

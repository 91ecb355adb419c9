"""Rejoin after a dropped connection, and seats of different dialects sharing a room.

End to end on loopback with the server on a virtual clock: the grace period passes
only when the test advances it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.patience import GAME_PATIENCE, PATIENCE

from meeple.clients.scrabble_bot import play_twente
from meeple.clients.twente import TwenteClient
from meeple.games.scrabble.board import Direction
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.twente.messages import Error, InformSwap, NotifyTurn
from meeple.server.app import MeepleServer
from meeple.server.clock import VirtualClock
from meeple.server.config import ServerConfig
from meeple.server.lobby.bots import ScrabbleBot
from meeple.server.lobby.tables import Lobby, UnknownToken, server_lobby
from meeple.server.rooms.room import Resumed
from meeple.server.rooms.scrabble import PassTurn, PlaceWord, Rejected, Update


@pytest.fixture
async def vserver(tmp_path: Path, gcide: Lexicon) -> AsyncIterator[MeepleServer]:
    """A Twente-only server on a free port, its timers on a virtual clock."""
    # Bots think 0.05 s a move: the hard level's default second a move made a whole
    # game here 15 s of CPU (issue 33), and these tests are about the seat, not the play.
    config = ServerConfig(database=str(tmp_path / "meeple.sqlite3"), bot_think_time=0.05)
    config = config.only("twente")
    srv = MeepleServer(config, clock=VirtualClock(), rng=random.Random(99))
    srv.services.lexicon = gcide
    await srv.start()
    yield srv
    await srv.stop()


class DroppingBot(ScrabbleBot):
    """A bot on a dialect that carries rejoin tokens; its "connection" drops once, on
    its first turn after ``drop_after`` actions, as a browser's would."""

    rejoinable = True

    def __init__(self, *args: Any, drop_after: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.drop_after = drop_after
        self.dropped = asyncio.Event()

    def consider(self, game: Any) -> None:
        if (
            not self.dropped.is_set()
            and game.turn == self.you
            and not game.is_over
            # The seat's view of the game has no action log (issue 32.3): count the
            # game's changes this seat was told of.
            and self.moves >= self.drop_after
        ):
            self.dropped.set()
            self.room = None  # a dead connection says nothing more
            # What a dialect's connection_lost does: free the name, tell the lobby.
            self.names.release(self.name, self)
            asyncio.get_running_loop().call_soon(self.lobby.disconnect, self)
            return
        super().consider(game)


def _bot(
    server: MeepleServer, gcide: Lexicon, name: str, cls: type[ScrabbleBot] = ScrabbleBot, **kw: Any
) -> Any:
    names = server.services.names
    bot = cls(
        name,
        server_lobby(server.services),
        names,
        level="hard",
        think_time=server.services.config.bot_think_time,
        rng=random.Random(3),
        lexicon=gcide,
        **kw,
    )
    assert names.claim(name, bot)
    return bot


async def _dropped_mid_game(
    server: MeepleServer, gcide: Lexicon
) -> tuple[Lobby, DroppingBot, asyncio.Task[Any]]:
    lobby = server_lobby(server.services)
    table = lobby.create_table("scrabble", "twente", 2)
    bot = _bot(server, gcide, "web1", DroppingBot, drop_after=6)
    lobby.sit(table.id, bot)
    assert bot.token is not None
    ann = asyncio.create_task(
        play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2)
    )
    await asyncio.wait_for(bot.dropped.wait(), GAME_PATIENCE)
    await asyncio.sleep(0.05)
    assert lobby.held == 1
    assert lobby.room_of(bot) is not None
    assert "web1" in server.services.names  # held for the seat, not free to take
    assert server.services.names.holder("web1") is not bot
    return lobby, bot, ann


async def test_a_seat_back_within_the_grace_period_finishes_the_game(
    vserver: MeepleServer, gcide: Lexicon
) -> None:
    """Dropped mid-game, held 29 s of the 30, then a new connection presents the token:
    it is told the game as it is (Resumed), plays on, and the game ends normally."""
    clock = vserver.services.clock
    assert isinstance(clock, VirtualClock)
    lobby, old, ann = await _dropped_mid_game(vserver, gcide)
    await clock.advance(29)
    assert lobby.held == 1
    new = _bot(vserver, gcide, "tmp", ScrabbleBot)
    vserver.services.names.release("tmp", new)
    seen: list[object] = []
    deliver = new.deliver
    new.deliver = lambda e: (seen.append(e), deliver(e))  # type: ignore[method-assign]
    with pytest.raises(UnknownToken):
        lobby.rejoin("not-a-token", new)
    assert old.token is not None
    room = lobby.rejoin(old.token, new)
    assert new.name == "web1"
    assert lobby.held == 0
    [result] = await asyncio.wait_for(ann, GAME_PATIENCE)
    assert result.reason == "WIN"
    assert set(result.players) == {"web1", "ann"}
    resumed = [e for e in seen if isinstance(e, Resumed)]
    assert len(resumed) == 1
    assert resumed[0].room == room.id
    assert resumed[0].players == result.players
    assert room.finished
    with pytest.raises(UnknownToken):  # one use, and the game is over anyway
        lobby.rejoin(old.token, _bot(vserver, gcide, "late"))


async def test_a_seat_not_back_in_time_meets_the_leave_policy(
    vserver: MeepleServer, gcide: Lexicon
) -> None:
    """No rejoin within 30 s: the room applies Twente's policy (the game ends,
    GAMEOVER DISCONNECT to the other player); the token and the name are free."""
    clock = vserver.services.clock
    assert isinstance(clock, VirtualClock)
    lobby, old, ann = await _dropped_mid_game(vserver, gcide)
    await clock.advance(29.9)
    assert not ann.done()
    await clock.advance(0.2)
    [result] = await asyncio.wait_for(ann, PATIENCE)
    assert result.reason == "DISCONNECT"
    assert lobby.held == 0
    assert "web1" not in vserver.services.names
    assert old.token is not None
    with pytest.raises(UnknownToken):
        lobby.rejoin(old.token, _bot(vserver, gcide, "late"))


class Probe:
    """An in-process seat that only records what it is told."""

    protocol = "probe"

    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[object] = []

    def deliver(self, event: object) -> None:
        self.events.append(event)


async def test_a_refusal_goes_only_to_its_sender_across_dialects(vserver: MeepleServer) -> None:
    """A Twente client and an in-process seat share a room: each one's refused move is
    answered to it alone, in its own terms; the other only hears real moves."""
    lobby = server_lobby(vserver.services)
    table = lobby.create_table("scrabble", "twente", 2)
    probe = Probe("pia")
    lobby.sit(table.id, probe)
    ann = await TwenteClient.connect("127.0.0.1", vserver.ports["twente"], "ann")
    try:
        await ann.request_game(2)
        while not isinstance(message := await ann.receive(), NotifyTurn):
            pass
        assert not message.your_turn
        assert message.player == "pia"
        room = lobby.room_of(probe)
        assert room is not None
        room.submit(probe, PlaceWord(7, 7, Direction.ACROSS, "QZQZQ"))  # not its tiles
        room.submit(probe, PassTurn())
        assert await ann.receive() == InformSwap("pia", 0)  # no ERROR for pia's mistake
        assert await ann.receive() == NotifyTurn(True, "ann")
        rejected = [e for e in probe.events if isinstance(e, Rejected)]
        assert len(rejected) == 1
        before = len(probe.events)
        await ann.play_word(0, 0, Direction.ACROSS, "QZQZQ")  # off the centre, not its tiles
        assert isinstance(await ann.receive(), Error)
        await ann.pass_turn()
        assert await ann.receive() == InformSwap("ann", 0)
        await asyncio.sleep(0.05)
        after = probe.events[before:]
        assert not any(isinstance(e, Rejected) for e in after)
        assert [type(e) for e in after] == [Update]
    finally:
        await ann.close()

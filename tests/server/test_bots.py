"""Server-side bots at lobby tables with clients of every protocol, end to end on loopback."""

from __future__ import annotations

import asyncio

import pytest
from tests.patience import PATIENCE, eventually

from meeple.clients.clarkson import play_clarkson
from meeple.clients.santorini import SantoriniClient, play_santorini
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games.scrabble.lexicon import Lexicon
from meeple.protocols.santorini.messages import Players, ServerState
from meeple.server.app import MeepleServer
from meeple.server.lobby.bots import ScrabbleBot, add_bot
from meeple.server.lobby.tables import (
    NoSuchTable,
    StartRule,
    TableFull,
    VariantNotExpressible,
    server_lobby,
)
from meeple.server.store.database import Store


def _store(server: MeepleServer) -> Store:
    store: Store = server.services.store
    return store


async def _idle(server: MeepleServer) -> None:
    """Until the lobby has no running room (the last one recorded its game)."""
    lobby = server_lobby(server.services)
    await eventually(lambda: all(r.finished for r in lobby.rooms), "every room finishing")


async def test_twente_client_and_server_bot_play_scrabble_at_one_table(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """A table opened in the lobby takes a bot, then a Twente ENQUEUE 2 fills it; the
    game is played to its end and stored with both seats' protocols."""
    lobby = server_lobby(server.services)
    table = lobby.create_table("scrabble", "twente", 2)
    bot = add_bot(server.services, table.id)
    assert isinstance(bot, ScrabbleBot)
    [info] = lobby.tables("scrabble")
    assert [(s.name, s.protocol) for s in info.seats] == [(bot.name, "bot")]
    results = await asyncio.wait_for(
        play_twente("127.0.0.1", server.ports["twente"], "ann", gcide, players=2), 120
    )
    [result] = results
    assert result.players == (bot.name, "ann")
    assert result.reason == "WIN"
    await _idle(server)
    [record] = _store(server).games(game="scrabble")
    assert record.protocols == ("bot", "twente")
    assert record.variant == "twente"
    assert record.end_reason != "disconnect"
    assert record.record.count("\n>") >= 10  # a whole game's moves in the GCG
    assert bot.name not in server.services.names  # released with the game


async def test_clarkson_client_and_server_bot_play_at_a_clarkson_table(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """A bot at a Clarkson READY table is there when a Clarkson client says HELLO
    (USERJOIN), is ready at once, and the game starts on the client's READY."""
    lobby = server_lobby(server.services)
    table = lobby.create_table("scrabble", "clarkson", 4, StartRule.READY)
    bot = add_bot(server.services, table.id)
    assert lobby.is_ready(bot)
    assert lobby.table(table.id) is not None  # a bot alone never starts a game
    results = await asyncio.wait_for(
        play_clarkson("127.0.0.1", server.ports["clarkson"], "cat", gcide, players=2), 120
    )
    [result] = results
    assert set(result.players) == {bot.name, "cat"}
    await _idle(server)
    [record] = _store(server).games(game="scrabble")
    assert record.protocols == ("bot", "clarkson")
    assert record.variant == "clarkson"
    assert set(record.result["scores"]) == {bot.name, "cat"}


async def test_am27_client_and_server_bot_play_santorini_with_gods(server: MeepleServer) -> None:
    """A Santorini gods table with a bot is filled by an AM27 REGISTER for 2 with gods;
    the whole set-up (gods, starter, workers) and game run to a winner."""
    lobby = server_lobby(server.services)
    table = lobby.create_table("santorini", "gods", 2)
    bot = add_bot(server.services, table.id, level="medium")
    results = await asyncio.wait_for(
        play_santorini("127.0.0.1", server.ports["santorini"], "dan", players=2, gods=True, seed=7),
        120,
    )
    [result] = results
    assert result.winner in {bot.name, "dan"}
    assert set(result.gods) == {bot.name, "dan"}
    assert "Atheist" not in result.gods.values()
    await _idle(server)
    [record] = _store(server).games(game="santorini")
    assert record.protocols == ("bot", "santorini")
    assert record.end_reason == "win"


async def test_two_spectrangle_clients_and_a_server_bot_play_spectrangle(
    server: MeepleServer,
) -> None:
    """A 3-seat Spectrangle table: a bot, then two Spectrangle-protocol bots; the game
    ends with a leaderboard for all three."""
    lobby = server_lobby(server.services)
    table = lobby.create_table("spectrangle", "standard", 3)
    bot = add_bot(server.services, table.id)
    port = server.ports["spectrangle"]
    first = asyncio.create_task(play_spectrangle("127.0.0.1", port, "eve", players=3))
    second = asyncio.create_task(play_spectrangle("127.0.0.1", port, "fay", players=3))
    results = await asyncio.wait_for(asyncio.gather(first, second), 120)
    for [result] in results:
        assert result.players[0] == bot.name  # seated first
        assert set(result.players) == {bot.name, "eve", "fay"}
        assert result.leaderboard is not None
        assert {name for name, _ in result.leaderboard} == {bot.name, "eve", "fay"}
    await _idle(server)
    [record] = _store(server).games(game="spectrangle")
    assert record.end_reason == "finished"
    assert record.protocols == ("bot", "spectrangle")  # the store keeps the set


async def test_add_bot_refusals(server: MeepleServer) -> None:
    """No such table, a full table and an unknown level are refused; names stay unique."""
    lobby = server_lobby(server.services)
    with pytest.raises(NoSuchTable):
        add_bot(server.services, "table-none")
    table = lobby.create_table("santorini", "standard", 2, StartRule.READY)
    with pytest.raises(ValueError, match="level"):
        add_bot(server.services, table.id, level="godlike")
    one = add_bot(server.services, table.id, level="easy")
    two = add_bot(server.services, table.id)
    assert one.name != two.name
    with pytest.raises(TableFull):
        add_bot(server.services, table.id)
    assert lobby.table(table.id) is not None  # bots alone: all ready, still not started
    assert not lobby.rooms
    scrabble = lobby.create_table("scrabble", "twente", 2)
    with pytest.raises(VariantNotExpressible):  # a Santorini bot plays only Santorini
        lobby.sit(scrabble.id, one)
    one.leave()
    # The last one left is a bot alone: the lobby closes the table and frees its name.
    assert lobby.table(table.id) is None
    assert two.name not in server.services.names
    assert one.name not in server.services.names


async def test_am27_clients_hear_of_a_table_a_bot_opened(server: MeepleServer) -> None:
    """SERVERSTATE ``active`` follows tables opened in the lobby, not only AM27 queues:
    a bot waiting at a table makes it true for the next greeting (a client already
    greeted is not pushed a second SERVERSTATE: issue 22), and REGISTER (B) sits at
    that table."""
    client = await SantoriniClient.connect("127.0.0.1", server.ports["santorini"])
    newcomer = await SantoriniClient.connect("127.0.0.1", server.ports["santorini"])
    try:
        assert await asyncio.wait_for(client.receive(), 5) == ServerState(True, False)
        assert await asyncio.wait_for(newcomer.receive(), 5) == ServerState(True, False)
        await newcomer.close()
        lobby = server_lobby(server.services)
        table = lobby.create_table("santorini", "standard", 2)
        bot = add_bot(server.services, table.id, level="easy")
        newcomer = await SantoriniClient.connect("127.0.0.1", server.ports["santorini"])
        assert await asyncio.wait_for(newcomer.receive(), PATIENCE) == ServerState(True, True)
        await client.register("gus")  # (B): the fullest waiting game
        players = await asyncio.wait_for(client.receive(), PATIENCE)  # no SERVERSTATE before it
        assert isinstance(players, Players)
        assert [name for name, _ in players.players] == [bot.name, "gus"]
    finally:
        await newcomer.close()
        await client.close()

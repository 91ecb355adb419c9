"""End to end: bots play whole games over real sockets on every game's listener, and each
stored game carries a JSON record that replays to the stored final scores."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.patience import GAME_PATIENCE

from meeple.clients.clarkson import play_clarkson
from meeple.clients.cmpn402 import BuiltinAgent, play
from meeple.clients.santorini import SantoriniClient, play_santorini
from meeple.clients.scrabble_bot import play_twente
from meeple.clients.spectrangle import play_spectrangle
from meeple.games import records
from meeple.games.scrabble.gcg import to_gcg
from meeple.games.scrabble.lexicon import Lexicon
from meeple.server.app import MeepleServer
from meeple.server.store.database import GameRecord, Store


def _stored(server: MeepleServer, game: str) -> list[GameRecord]:
    """The stored games of ``game``; each one's record is its room's log (docs/durability.md):
    the log is closed on that very game and holds the record's actions, in order."""
    store = Store(server.config.database)
    try:
        games = store.games(game=game)
        for stored in games:
            if stored.protocols == ("cmpn402",):
                continue  # the referee's games are logged by its own module
            assert stored.data is not None
            log = store.action_log(stored.data["uid"])
            assert log is not None
            assert log.game_id == stored.id
            assert log.end_reason == stored.end_reason
            assert [e.entry["action"] for e in log.entries] == stored.data["actions"]
            assert [e.seq for e in log.entries] == list(range(1, len(log.entries) + 1))
            header = {k: v for k, v in stored.data.items() if k not in ("actions", "result")}
            assert {
                k: v for k, v in log.genesis["record"].items() if k not in ("actions", "result")
            } == header
            assert [s["name"] for s in log.genesis["seats"]] == list(stored.players)
        return games
    finally:
        store.close()


def _final(stored: GameRecord, **kw: Any) -> Any:
    """Replay the stored record to its last step; check the result against the row."""
    assert stored.replayable
    assert stored.data is not None
    data = records.load(records.json.dumps(stored.data))
    steps = list(records.replay(data, **kw))
    assert [s.index for s in steps] == list(range(len(data["actions"]) + 1))
    assert data["players"] == list(stored.players)
    return steps[-1].game


@pytest.mark.parametrize("protocol", ["twente", "clarkson"])
async def test_scrabble_bots_store_a_record_that_replays_to_the_stored_scores(
    server: MeepleServer, gcide: Lexicon, protocol: str
) -> None:
    """Twente and Clarkson bot games: the replay (with and without the lexicon) ends on
    the stored scores, and its GCG is the stored GCG."""
    port = server.ports[protocol]
    bot = play_twente if protocol == "twente" else play_clarkson
    await asyncio.wait_for(
        asyncio.gather(*(bot("127.0.0.1", port, n, gcide, players=2) for n in ("ann", "bob"))),
        GAME_PATIENCE,
    )
    [stored] = _stored(server, "scrabble")
    assert stored.variant == protocol
    game = _final(stored, lexicon=gcide)
    scores = dict(zip(game.players, game.result.scores, strict=True))
    assert scores == stored.result["scores"]
    assert to_gcg(game, lexicon=stored.data["lexicon"]) == stored.record
    assert _final(stored).state() == game.state()


async def test_cmpn402_agents_store_a_record_that_replays(
    server: MeepleServer, gcide: Lexicon
) -> None:
    """The referee's game (double challenge) replays to the stored scores and GCG."""
    uri = f"ws://127.0.0.1:{server.ports['cmpn402']}"
    await asyncio.wait_for(
        asyncio.gather(
            play(uri, "ann", BuiltinAgent(gcide)), play(uri, "bob", BuiltinAgent(gcide))
        ),
        GAME_PATIENCE,
    )
    [stored] = _stored(server, "scrabble")
    assert stored.variant == "cmpn402"
    game = _final(stored, lexicon=gcide)
    assert dict(zip(game.players, game.result.scores, strict=True)) == stored.result["scores"]
    assert to_gcg(game, lexicon=stored.data["lexicon"]) == stored.record


async def test_spectrangle_bots_store_a_record_that_replays(server: MeepleServer) -> None:
    port = server.ports["spectrangle"]
    await asyncio.wait_for(
        asyncio.gather(*(play_spectrangle("127.0.0.1", port, n) for n in ("ann", "bob"))), 60
    )
    [stored] = _stored(server, "spectrangle")
    game = _final(stored)
    assert dict(zip(game.players, game.result.scores, strict=True)) == stored.result["scores"]


async def test_santorini_bots_store_a_record_that_replays(server: MeepleServer) -> None:
    port = server.ports["santorini"]
    await asyncio.wait_for(
        asyncio.gather(
            *(
                play_santorini("127.0.0.1", port, n, gods=True, seed=i)
                for i, n in enumerate(("ann", "bob"))
            )
        ),
        60,
    )
    [stored] = _stored(server, "santorini")
    game = _final(stored)
    assert game.is_over
    assert stored.result["winner"] == stored.players[game.winner]
    assert stored.data["result"]["winners"] == [game.winner]


async def test_a_santorini_disconnect_is_the_last_action(server: MeepleServer) -> None:
    """A player dropping mid-game: the record ends with a disconnect, the other wins."""
    port = server.ports["santorini"]
    ann = asyncio.create_task(play_santorini("127.0.0.1", port, "ann", seed=1))
    await asyncio.sleep(0.05)
    bob = await SantoriniClient.connect("127.0.0.1", port)
    await bob.register("bob", 2, gods=False)
    await asyncio.sleep(0.3)
    await bob.close()
    await asyncio.wait_for(ann, GAME_PATIENCE)
    [stored] = _stored(server, "santorini")
    assert stored.end_reason == "disconnect"
    assert stored.data["actions"][-1] == {
        "type": "disconnect",
        "player": stored.players.index("bob"),
    }
    assert stored.data["result"]["winners"] == [stored.players.index("ann")]
    assert not _final(stored).is_over

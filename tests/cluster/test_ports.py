"""The ports (issue 32.1): a cluster edge's lobby answers what the dialects ask of the
lobby port as meeple serve's does. The typed check is mypy's (``_conforms`` in
meeple.node.edge and meeple.server.lobby.tables); here what it found at run time."""

from __future__ import annotations

import asyncio

from tests.patience import eventually

from meeple.bus.local import LocalBus
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.edge import TABLES, EdgeLobby
from meeple.server.lobby.tables import Lobby, StartRule, TableInfo


def _table(table_id: str, game: str, variant: str) -> TableInfo:
    return TableInfo(table_id, game, variant, 2, StartRule.FULL, ())


def test_an_edge_lists_one_game_s_open_tables_as_meeple_serve_s_lobby_does() -> None:
    """``tables(game)``, which the Twente dialect asks for E010's queue size: an edge's
    lobby took no game and raised TypeError (the port's signature found it)."""

    async def main() -> None:
        bus = LocalBus()
        ns = Namespace("t")
        held = (
            _table("t1", "santorini", "standard"),
            _table("t2", "scrabble", "twente"),
            _table("t3", "scrabble", "clarkson"),
        )

        async def leader(payload: bytes) -> bytes:
            return wire.dumps(wire.TableNews(1, 0, tables=held))

        await bus.serve(ns.lobby_requests(TABLES), leader)
        edge = EdgeLobby(bus, ns, "e1")
        await edge.start()
        await eventually(lambda: bool(edge.tables()), "the tables heard", every=0.01)
        assert [t.id for t in edge.tables()] == ["t1", "t2", "t3"]
        assert [t.id for t in edge.tables("scrabble")] == ["t2", "t3"]
        assert [t.id for t in edge.tables("spectrangle")] == []
        await edge.close()
        await bus.close()

        lobby = Lobby(grace=0)  # meeple serve's answers the same question the same way
        assert lobby.tables("scrabble") == []

    asyncio.run(main())

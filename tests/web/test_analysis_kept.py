"""A replay's analysis is computed once and kept beside the record (issue 34): the
replay after a restart reads it back, and an analysis of an older version is computed
again."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from meeple.ai import analysis
from meeple.ai.spectrangle import greedy_action
from meeple.games.spectrangle import record as spectrangle_record
from meeple.games.spectrangle.game import Game as SpectrangleGame
from meeple.server.app import MeepleServer
from meeple.server.config import ServerConfig
from meeple.server.store.database import Store

UID = "a7a7a7a7a7a7"


def _record() -> dict[str, Any]:
    game = SpectrangleGame(["ann", "bob"], random.Random(4))
    while not game.is_over:
        turn = game.turn
        assert turn is not None
        game.apply(greedy_action(game, turn))
    return spectrangle_record.to_record(game, uid=UID)


async def _replay(database: Path, store_first: dict[str, Any] | None = None) -> str:
    """Start meeple serve on ``database``, open the game's replay, stop."""
    config = ServerConfig(database=str(database)).only("spectrangle", "web")
    server = MeepleServer(config, rng=random.Random(1))
    await server.start()
    try:
        if store_first is not None:
            store: Store = server.services.store
            store.record_game(
                game="spectrangle", variant="standard", protocols=["web"],
                players=["ann", "bob"], started_at=0.0, end_reason="finished",
                result={}, record="", data=store_first,
            )  # fmt: skip
        async with httpx.AsyncClient(
            verify=False, base_url=f"http://127.0.0.1:{server.ports['web']}"
        ) as web:
            page = await web.get(f"/games/{UID}")
        assert page.status_code == 200
        return page.text
    finally:
        await server.stop()


async def test_the_replay_after_a_restart_reads_the_kept_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = analysis.analyse_game

    def counted(record: Any, lexicon: Any) -> Any:
        calls.append(str(record.get("uid")))
        return real(record, lexicon)

    monkeypatch.setattr(analysis, "analyse_game", counted)
    database = tmp_path / "meeple.sqlite3"
    data = _record()
    expected = real(data, None)
    assert expected is not None
    assert any(expected)
    await _replay(database, store_first=data)
    assert calls == [UID]
    await _replay(database)
    assert calls == [UID]  # read back from the store, not computed again
    store = Store(database)
    try:
        assert store.analysis(UID, analysis.VERSION) == {"steps": expected}
    finally:
        store.close()

    monkeypatch.setattr(analysis, "VERSION", analysis.VERSION + 1)
    await _replay(database)
    assert calls == [UID, UID]  # an older version's analysis is computed again
    await _replay(database)
    assert calls == [UID, UID]

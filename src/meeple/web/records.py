"""What the pages read of finished games and ratings: one small interface, two sources.

The replay, games-list, ratings and player pages (:mod:`meeple.web.app`,
:mod:`meeple.web.ratings`) read the store only through :class:`Records`. ``meeple
serve`` reads its own database (:class:`LocalRecords`: each read in a reader thread,
:func:`~meeple.server.store.database.stored`); a cluster edge, which has no database
connection, asks a ``store`` node over the bus
(:class:`meeple.node.store.BusRecords`). Either way a read that fails or gets no answer
in time raises :class:`~meeple.server.store.database.StoreUnavailable`, which the web app
answers with its 503 page. Only finished, public data comes through here: stored
records and ratings, never a running game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Unpack

from meeple.server.ports import GameSearch, RecordsPort
from meeple.server.store.database import (
    GameRecord,
    PlayerProfile,
    PlayerRating,
    RatingPoint,
    Store,
    stored,
)

__all__ = ["MAX_KEY", "LocalRecords", "Records", "findable"]

# No uid or name is longer (no listener takes a longer name: CMPN402 allows 64 bytes).
MAX_KEY = 256


def findable(key: str) -> bool:
    """Whether a uid or name from a URL can name a stored game or player: short, and
    without NUL (which PostgreSQL refuses in a text, so no stored value holds one). The
    reads of any other answer "none" without asking the database."""
    return len(key) <= MAX_KEY and "\x00" not in key


#: The store's reads the pages make: the records port (meeple.server.ports).
Records = RecordsPort


class LocalRecords:
    """:class:`Records` from this process's store (``meeple serve``)."""

    def __init__(self, store: Callable[[], Store]) -> None:
        self._store = store

    async def game_by_uid(self, uid: str) -> GameRecord | None:
        if not findable(uid):
            return None
        return await stored(self._store().game_by_uid, uid)

    async def game(self, game_id: int) -> GameRecord | None:
        return await stored(self._store().game, game_id)

    async def games(self, *, limit: int) -> list[GameRecord]:
        return await stored(self._store().games, limit=limit)

    async def search_games(self, **search: Unpack[GameSearch]) -> list[GameRecord]:
        player = search["player"]
        if player is not None and not findable(player):
            return []
        return await stored(self._store().search_games, **search)

    async def analysis(self, uid: str, version: int) -> dict[str, Any] | None:
        if not findable(uid):
            return None
        return await stored(self._store().analysis, uid, version)

    async def keep_analysis(self, uid: str, version: int, analysis: dict[str, Any]) -> None:
        if findable(uid):
            await stored(self._store().keep_analysis, uid, version, analysis)

    async def leaderboard(self, game: str, *, limit: int) -> list[PlayerRating]:
        return await stored(self._store().leaderboard, game, limit=limit)

    async def player(self, name: str, *, limit: int) -> PlayerProfile:
        if not findable(name):
            return PlayerProfile(name, (), ())
        return await stored(self._store().player, name, limit=limit)

    async def rating_history(self, game: str, name: str) -> list[RatingPoint]:
        return await stored(self._store().rating_history, game, name)


def _conforms(records: LocalRecords) -> RecordsPort:
    """What mypy checks and nothing calls: a local store's reads are the records port."""
    return records

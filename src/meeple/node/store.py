"""The ``store`` role: finished games and ratings in PostgreSQL, for the whole cluster.

A rooms node ends a room's log itself (the ``end`` message, fenced, carries the game:
:meth:`meeple.cluster.log.JetStreamLog.finish_log`) and then has the game stored once
per room uid. It does so through :class:`RemoteRecords`, the two store calls
``finish_log`` makes (``game_by_uid``, ``record_game``) as requests to the store role
(``<ns>.store.req.<op>``, queue group ``store``), which runs them on its
:class:`~meeple.server.store.database.Store` (``--database``: PostgreSQL in the cluster;
``record_game`` updates the players' ratings in the same transaction). Rooms nodes
need no database connection; any number of store nodes may serve.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from meeple.bus.base import Bus, BusError, Subscription
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.server.store.database import GameRecord, Store

__all__ = ["RemoteRecords", "StoreRole"]


class StoreRole:
    """Serves the store requests on ``store`` (the node's records and ratings)."""

    def __init__(self, bus: Bus, ns: Namespace, store: Store) -> None:
        self.bus = bus
        self.ns = ns
        self.store = store
        self._subs: list[Subscription] = []
        # One write at a time: "once per uid" is a read, then a write.
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        for op in ("game_by_uid", "record_game"):
            self._subs.append(
                await self.bus.serve(self.ns.store_request(op), self._handler(op), queue="store")
            )

    def _handler(self, op: str) -> Any:
        async def handle(payload: bytes) -> bytes:
            args = wire.loads(payload)
            async with self._lock:
                if op == "game_by_uid":
                    found = await asyncio.to_thread(self.store.game_by_uid, str(args))
                    return wire.dumps(found)
                uid = (args.get("data") or {}).get("uid")
                if isinstance(uid, str):
                    found = await asyncio.to_thread(self.store.game_by_uid, uid)
                    if found is not None:
                        return wire.dumps(found.id)
                return wire.dumps(await asyncio.to_thread(lambda: self.store.record_game(**args)))

        return handle

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(BusError):
                await sub.close()
        self._subs.clear()


class RemoteRecords:
    """The store calls of :meth:`~meeple.cluster.log.JetStreamLog.finish_log`, made to
    the store role; called from a thread (``asyncio.to_thread``), answered on ``loop``."""

    def __init__(self, bus: Bus, ns: Namespace, loop: asyncio.AbstractEventLoop) -> None:
        self.bus = bus
        self.ns = ns
        self.loop = loop

    def _ask(self, op: str, args: object) -> Any:
        future = asyncio.run_coroutine_threadsafe(
            self.bus.request(self.ns.store_request(op), wire.dumps(args), timeout=10.0),
            self.loop,
        )
        return wire.loads(future.result())

    def game_by_uid(self, uid: str) -> GameRecord | None:
        found: GameRecord | None = self._ask("game_by_uid", uid)
        return found

    def record_game(self, **game: Any) -> int:
        return int(self._ask("record_game", game))

"""The cluster's node roles over NATS (docs/cluster.md): ``edge`` (:mod:`.edge`),
``rooms`` (:mod:`.rooms`), ``lobby`` (:mod:`.lobby`), ``store`` (:mod:`.store`), what
crosses between them (:mod:`.wire`) and the node that runs any mix (:mod:`.node`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

__all__ = ["spawn"]


def spawn(tasks: set[asyncio.Task[Any]], coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
    """Run ``coro`` as a named task kept in ``tasks`` until it ends (a role's background
    work, cancelled together when the role stops)."""
    task: asyncio.Task[Any] = asyncio.ensure_future(coro)
    task.set_name(name)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task

"""Closing what a bare :class:`~meeple.server.app.Services` built, for tests that make one
without a :class:`~meeple.server.app.MeepleServer` (whose ``stop`` does the same)."""

from __future__ import annotations

import asyncio

from meeple.server.app import Services

__all__ = ["close_services"]


async def close_services(services: Services) -> None:
    """The journal first (its writer thread ends), then every resource, last built first."""
    journal = services.get("journal")
    if journal is not None:
        journal.close(5.0)
    for resource in reversed(list(services._resources.values())):
        if resource is journal:
            continue
        close = getattr(resource, "close", None)
        if callable(close):
            result = close()
            if asyncio.iscoroutine(result):
                await result

"""Closing what a bare :class:`~meeple.server.app.Services` built, for tests that make one
without a :class:`~meeple.server.app.MeepleServer` (whose ``stop`` does the same)."""

from __future__ import annotations

from meeple.server.app import Services

__all__ = ["close_services"]


async def close_services(services: Services) -> None:
    """The journal first (its writer thread ends), then the store and the claim."""
    services.close(5.0)

"""Player names, unique across the whole server and every protocol.

A dialect that can wait for the answer claims a name with :meth:`NameRegistry.claim_then`:
in one process the answer comes at once; on a cluster edge
(:class:`meeple.node.names.ClusterNames`) it comes once every edge's names were
consulted, a bus round trip later (the dialect holds the client's next messages
meanwhile, as Twente's ANNOUNCING state does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meeple.server.ports import NamesPort

from collections.abc import Callable

__all__ = ["NameRegistry"]


class NameRegistry:
    """Claims and releases player names. Case-insensitive, so ``Alice`` and ``alice``
    cannot both play: in a lobby list or a score line they would be confused."""

    def __init__(self) -> None:
        self._owners: dict[str, object] = {}

    def claim(self, name: str, owner: object) -> bool:
        """Give ``name`` to ``owner``; False when someone else holds it."""
        key = name.casefold()
        holder = self._owners.get(key)
        if holder is not None and holder is not owner:
            return False
        self._owners[key] = owner
        return True

    def claim_then(self, name: str, owner: object, then: Callable[[bool], None]) -> None:
        """Claim ``name`` for ``owner`` and call ``then`` with whether it was given:
        here at once; a registry shared with other processes calls it later."""
        then(self.claim(name, owner))

    def release(self, name: str, owner: object) -> None:
        """Free ``name`` if ``owner`` holds it (a no-op otherwise)."""
        key = name.casefold()
        if self._owners.get(key) is owner:
            del self._owners[key]

    def holder(self, name: str) -> object | None:
        return self._owners.get(name.casefold())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.casefold() in self._owners

    def __len__(self) -> int:
        return len(self._owners)


def _conforms(names: NameRegistry) -> NamesPort:
    """What mypy checks and nothing calls: the registry (and a cluster edge's, its
    subclass) is the names port (meeple.server.ports)."""
    return names

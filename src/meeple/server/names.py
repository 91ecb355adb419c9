"""Player names, unique across the whole server and every protocol."""

from __future__ import annotations

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

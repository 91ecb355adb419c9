"""Names and rejoin tokens, cluster-wide, in the namespace's KV buckets.

- :class:`Names`: who uses a name now (a player's, across every protocol and edge), so
  two connections on two edges cannot both be "ann". The key is the name's casefold
  (as :mod:`meeple.server.lobby.names` compares names), encoded for a KV key.
- :class:`RejoinTokens`: a browser seat's rejoin token, by its SHA-256 (the same hash
  the room's genesis keeps, docs/durability.md), to the room and seat it takes back; it
  lapses with a per-key TTL (the rejoin grace). The token itself is never stored.

Both are compare-and-set on the key's revision: a name is claimed by one holder; a
token is taken once. Only rooms, lobby and store nodes reach these buckets; edges ask
them over the bus (deploy/nats/meeple-auth.conf).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import TypeVar

from meeple.bus.schema import Message, NameValue, TokenValue, decode, encode
from meeple.bus.subjects import Namespace
from meeple.cluster.backplane import Backplane, Fenced, KeyValue

__all__ = ["Names", "RejoinSeat", "RejoinTokens", "name_key"]

_SHA256 = re.compile(r"[0-9a-f]{64}")
_V = TypeVar("_V", bound=Message)


def name_key(name: str) -> str:
    """The KV key of ``name``: its casefold in lowercase base32 (KV keys allow letters,
    digits and a few marks only)."""
    folded = name.casefold().encode()
    return "n" + base64.b32encode(folded).decode().rstrip("=").lower()


class _Bucket:
    """Compare-and-set writes of schema values on one KV bucket's keys, with TTLs."""

    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    async def get(self, key: str, kind: type[_V]) -> tuple[_V | None, int]:
        """The key's value, a ``kind`` (None: none, deleted or lapsed), and its revision
        (0: none)."""
        entry = await self._kv.get(key)
        if entry is None:
            return None, 0
        if entry.op != "put":
            return None, entry.revision
        return decode(entry.value or b"{}", kind), entry.revision

    async def put(
        self, key: str, value: Message | None, *, expect: int, ttl: int | None = None
    ) -> int | None:
        """Write ``value`` (None: a delete marker) if the key is at revision ``expect``;
        the new revision, or None when it is not."""
        try:
            if value is None:
                return await self._kv.delete(key, expect=expect)
            return await self._kv.put(
                key, encode(value), expect=expect, ttl=None if ttl is None else int(ttl)
            )
        except Fenced:
            return None


class Names:
    """The names in use now, cluster-wide; see the module doc. ``ttl`` (seconds) makes a
    claim lapse unless renewed (for holders that may die without releasing)."""

    def __init__(self, plane: Backplane, ns: Namespace, *, ttl: int | None = None) -> None:
        self._kv = _Bucket(plane.bucket(ns.names_bucket))
        self.ttl = ttl

    async def claim(self, name: str, holder: str, *, ttl: int | None = None) -> bool:
        """Take ``name`` (any casing of it) for ``holder``; False when someone else uses
        it. Claiming a name one already holds renews it. ``ttl``: this claim's, instead
        of the registry's."""
        key = name_key(name)
        value, revision = await self._kv.get(key, NameValue)
        if value is not None and value.holder != holder:
            return False
        written = await self._kv.put(
            key, NameValue(name=name, holder=holder), expect=revision, ttl=ttl or self.ttl
        )
        return written is not None

    async def holder(self, name: str) -> str | None:
        """Who uses ``name`` (compared by casefold) now."""
        value, _ = await self._kv.get(name_key(name), NameValue)
        return None if value is None else value.holder

    async def release(self, name: str, holder: str) -> bool:
        """Free ``name`` if ``holder`` has it; whether it did."""
        key = name_key(name)
        value, revision = await self._kv.get(key, NameValue)
        if value is None or value.holder != holder:
            return False
        return await self._kv.put(key, None, expect=revision) is not None


@dataclass(frozen=True, slots=True)
class RejoinSeat:
    """The seat a rejoin token takes back: a room and a seat number in it; ``route``,
    where the seat's connection is now (the edge seat it was last bound to: a new owner
    of the room sends its events there, not to the route in the room's genesis); ``held``:
    its connection is gone and the room holds it for its rejoin (a new owner holds it
    too)."""

    room: str
    seat: int
    route: str | None = None
    held: bool = False


def _seat(value: TokenValue) -> RejoinSeat:
    return RejoinSeat(value.room, value.seat, value.route, value.held)


class RejoinTokens:
    """Rejoin tokens by their SHA-256; see the module doc."""

    def __init__(self, plane: Backplane, ns: Namespace) -> None:
        self._kv = _Bucket(plane.bucket(ns.tokens_bucket))

    @staticmethod
    def _key(token_hash: str) -> str:
        if not _SHA256.fullmatch(token_hash):
            raise ValueError("a rejoin token is kept by its SHA-256, 64 lowercase hex digits")
        return f"t{token_hash}"

    async def put(self, token_hash: str, seat: RejoinSeat, *, ttl: int) -> None:
        """Let ``token_hash`` take ``seat`` back for ``ttl`` seconds (replacing what it
        took before)."""
        key = self._key(token_hash)
        for _attempt in range(5):
            _, revision = await self._kv.get(key, TokenValue)
            value = TokenValue(room=seat.room, seat=seat.seat, route=seat.route, held=seat.held)
            if await self._kv.put(key, value, expect=revision, ttl=ttl) is not None:
                return
        raise RuntimeError(f"rejoin token {token_hash[:8]}…: written concurrently")

    async def find(self, token_hash: str) -> RejoinSeat | None:
        """The seat ``token_hash`` takes back now, if any."""
        value, _ = await self._kv.get(self._key(token_hash), TokenValue)
        return None if value is None else _seat(value)

    async def take(self, token_hash: str) -> RejoinSeat | None:
        """The seat, and the token spent: of two takers of one token, one gets it."""
        key = self._key(token_hash)
        value, revision = await self._kv.get(key, TokenValue)
        if value is None:
            return None
        if await self._kv.put(key, None, expect=revision) is None:
            return None
        return _seat(value)

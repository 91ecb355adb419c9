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

import nats.js.errors
from nats.aio.client import Client

from meeple.bus.schema import Message, NameValue, TokenValue, decode, encode
from meeple.bus.subjects import Namespace
from meeple.server.config import ClusterConfig

__all__ = ["Names", "RejoinSeat", "RejoinTokens", "name_key"]

_EXPECT = "Nats-Expected-Last-Subject-Sequence"
_TTL = "Nats-TTL"
_KV_OP = "KV-Operation"
_WRONG_LAST = (10071, 10164)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_V = TypeVar("_V", bound=Message)

# One JetStream call's wait unless told (the node passes its config's).
_DEFAULT = ClusterConfig()


def name_key(name: str) -> str:
    """The KV key of ``name``: its casefold in lowercase base32 (KV keys allow letters,
    digits and a few marks only)."""
    folded = name.casefold().encode()
    return "n" + base64.b32encode(folded).decode().rstrip("=").lower()


class _Bucket:
    """Compare-and-set writes on one KV bucket's keys, with per-key TTLs."""

    def __init__(self, nc: Client, bucket: str, timeout: float) -> None:
        self._js = nc.jetstream(timeout=timeout)
        self._bucket = bucket
        self._stream = f"KV_{bucket}"

    def _subject(self, key: str) -> str:
        return f"$KV.{self._bucket}.{key}"

    async def get(self, key: str, kind: type[_V]) -> tuple[_V | None, int]:
        """The key's value, a ``kind`` (None: none, deleted or lapsed), and its revision
        (0: none)."""
        try:
            msg = await self._js.get_last_msg(self._stream, self._subject(key), direct=True)
        except nats.js.errors.NotFoundError:
            return None, 0
        assert msg.seq is not None
        if (msg.headers or {}).get(_KV_OP) in ("DEL", "PURGE"):
            return None, msg.seq
        return decode(msg.data or b"{}", kind), msg.seq

    async def put(
        self, key: str, value: Message | None, *, expect: int, ttl: int | None = None
    ) -> int | None:
        """Write ``value`` (None: a delete marker) if the key is at revision ``expect``;
        the new revision, or None when it is not."""
        headers = {_EXPECT: str(expect)}
        if ttl is not None:
            headers[_TTL] = f"{int(ttl)}s"
        if value is None:
            headers[_KV_OP] = "DEL"
        body = b"" if value is None else encode(value)
        try:
            ack = await self._js.publish(self._subject(key), body, headers=headers)
        except nats.js.errors.APIError as e:
            if e.err_code in _WRONG_LAST:
                return None
            raise
        return int(ack.seq)


class Names:
    """The names in use now, cluster-wide; see the module doc. ``ttl`` (seconds) makes a
    claim lapse unless renewed (for holders that may die without releasing)."""

    def __init__(
        self,
        nc: Client,
        ns: Namespace,
        *,
        ttl: int | None = None,
        timeout: float = _DEFAULT.jetstream_wait,
    ) -> None:
        self._kv = _Bucket(nc, ns.names_bucket, timeout)
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

    def __init__(
        self, nc: Client, ns: Namespace, *, timeout: float = _DEFAULT.jetstream_wait
    ) -> None:
        self._kv = _Bucket(nc, ns.tokens_bucket, timeout)

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
